"""Driver of dual coordinate descent over blocks (the math is in :mod:`._dual_cd_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import EPS, LOSS, TOL, C, Param, count, non_negative, positive
from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.cache import RowCache
from blocksvm.solvers.evaluate import correct_predictions

WORKING_SETS = ("cache", "pair", "block")


class DualCDSolver(Solver):
    """Block minimization with dual CD as the inner solver.

    State: ``w`` (n_problems, n_features + 1), ``alpha`` (n_problems, n_rows) and, per block,
    ``sum alpha_i`` and ``sum D_ii alpha_i^2`` (n_problems, n_blocks, 2), which make the dual
    objective exact at any time without touching the data. The working set — rows solved
    together with each loaded block — is this driver's own: a
    :class:`~blocksvm.solvers.cache.RowCache` of support vectors ("cache"), the block visited
    before ("pair", its index kept as ``previous``), or nothing ("block").
    """

    name = "dual-cd"
    params = (
        C,
        LOSS,
        TOL,
        EPS,
        Param(
            "working_set",
            "cache",
            "Rows solved together with each loaded block: a cache of support vectors "
            "kept from earlier blocks (cache: selective block minimization, Chang & Roth 2011), the block "
            "visited before it (pair), or none (block: plain block minimization). docs/ALGORITHMS.md compares "
            "them.",
            None,
            "one of cache, pair, block",
            choices=WORKING_SETS,
            parse=str,
        ),
        Param(
            "cache_mb",
            64.0,
            "Megabytes of rows the cache working set keeps in memory.",
            positive,
            "a positive number of megabytes",
            metavar="MB",
        ),
        Param(
            "inner_passes",
            5,
            "Passes of dual CD over its working set per visit at most.",
            count,
            "an integer >= 1",
            parse=int,
        ),
        Param(
            "workers",
            None,
            "Shards of the blocks solved at once by CoCoA+ rounds (docs/PARALLEL.md): on "
            "threads of this process, or one per worker of a dask cluster (--scheduler). None: 1, or with a "
            "cluster, one per worker. 1 is the serial trainer.",
            count,
            "an integer >= 1 or None",
            none_ok=True,
            parse=int,
            metavar="K",
        ),
        Param(
            "inner_eps",
            0.0,
            "Inner early stop: a visit ends after a pass whose PG violation is at most this "
            "(0: always make inner_passes passes).",
            non_negative,
            "a number >= 0",
        ),
    )
    stop_rules = frozenset({"gap", "pg"})
    state_names = ("w", "alpha", "block_sums", "previous")

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.inner_passes = params.inner_passes
        self.inner_eps = params.inner_eps if params.inner_eps > 0 else -1.0
        self.working_set = params.working_set
        self.sigma = 1.0  # CoCoA+'s sigma' when this solver is one worker's of K (blocksvm.train.parallel)
        n_k = problem.n_problems
        self.w = np.zeros((n_k, problem.n_weights))
        self.alpha = np.zeros((n_k, problem.n_rows))
        self.block_sums = np.zeros((n_k, problem.n_blocks, 2))
        self.previous = np.full(1, -1, np.int64)  # "pair": the block visited last (-1: none yet)
        self._previous_block = None  # ... and its rows, once in memory
        self.tables = [problem.loss.dual_tables(*costs) for costs in problem.costs]
        self.cache = RowCache(params.cache_mb * 1e6, problem.dtype) if self.working_set == "cache" else None

    # ---- the per-block step ---------------------------------------------------------------

    def local_state(self, block) -> dict[str, np.ndarray]:
        """The block's dual variables (a view) and its two dual sums (a view)."""
        rows = slice(block.row_offset, block.row_offset + block.n_rows)
        return {"alpha": self.alpha[:, rows], "sums": self.block_sums[:, block.index]}

    def step(self, block, W, local, seeds, companion=None) -> BlockReport:
        """Dual CD on ``block`` (and ``companion`` rows: a RowCache or a block, whose alpha is
        the solver's own), updating ``W``, ``local["alpha"]`` and ``local["sums"]`` in place."""
        p = self.problem
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, W, block) if p.n_problems > 1 else None
        cached = isinstance(companion, RowCache)
        a = _rows(p, block)
        b = _rows(p, companion.rows if cached else companion)
        b_rows = companion.row_ids if cached else _block_rows(companion)
        stats = np.empty((p.n_problems, K.N_STATS))
        for k in range(p.n_problems):
            upper, diag = self.tables[k]
            a_alpha = np.ascontiguousarray(local["alpha"][k])
            b_alpha = self.alpha[k, b_rows]
            b_before = b_alpha.copy() if self.cache is not None else None
            stats[k] = K.solve_block(
                (a["indptr"], a["indices"], a["data"], a["y"][k], a["sq_norms"], a_alpha),
                (b["indptr"], b["indices"], b["data"], b["y"][k], b["sq_norms"], b_alpha),
                W[k],
                (upper, diag, p.costs[k]),
                np.array([p.bias, self.inner_passes, self.inner_eps, self.sigma]),
                p.loss.table,
                int(seeds[k]),
            )
            local["alpha"][k] = a_alpha
            local["sums"][k] = _sums(a["y"][k], a_alpha, diag)
            if self.cache is not None:  # cached rows: a gathered copy of alpha, scattered back
                self.alpha[k, b_rows] = b_alpha
                self._add_to_sums(k, companion.row_ids, b["y"][k], b_before, b_alpha, diag)
            elif companion is not None:
                self.alpha[k, b_rows] = b_alpha
                self.block_sums[k, companion.index] = _sums(b["y"][k], b_alpha, diag)
        correct = int(stats[0, K.CORRECT_FIRST]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_FIRST],
            correct=correct,
            passes=float(stats[:, K.PASSES].mean()),
            updates=int(stats[:, K.UPDATES].sum()),
            figures={"pg_max": stats[:, K.PG_MAX_FIRST].tolist(), "pg_min": stats[:, K.PG_MIN_FIRST].tolist()},
        )

    def visit(self, block, seeds) -> BlockReport:
        """The step with this driver's working set."""
        if self.working_set == "cache":  # the block's own rows are solved as the block's
            companion = self.cache.excluding(block.row_offset, block.row_offset + block.n_rows)
        elif self.working_set == "pair":
            companion = self._previous_of(block)
        else:
            companion = None
        report = self.step(block, self.w, self.local_state(block), seeds, companion)
        if self.cache is not None:
            self.cache = companion
            # (file order: seed -1, and the refill's draws from seed 0)
            self.cache.refill(block, self.alpha, self._upper_of, np.random.default_rng(max(int(seeds[0]), 0)))
        if self.working_set == "pair":
            self.previous[0], self._previous_block = block.index, block
        return report

    def _previous_of(self, block):
        """The block visited just before ``block`` ("pair"); after a resume it is read again, so a
        resumed run pairs exactly the blocks an uninterrupted one did."""
        if self.previous[0] < 0 or self.store is None or self.store.n_blocks < 2:
            return None
        if self._previous_block is None or self._previous_block.index != self.previous[0]:
            self._previous_block = self.store.read_block(int(self.previous[0]))
        previous = self._previous_block
        return previous if previous.index != block.index else None

    def _add_to_sums(
        self, k: int, rows: np.ndarray, y: np.ndarray, before: np.ndarray, after: np.ndarray, diag
    ) -> None:
        """Move the sums of the blocks that cached ``rows`` belong to (recomputed exactly at each visit)."""
        d = np.where(y > 0, diag[1], diag[0])
        blocks = self.problem.block_of(rows)
        np.add.at(self.block_sums[k, :, 0], blocks, after - before)
        np.add.at(self.block_sums[k, :, 1], blocks, d * (after * after - before * before))

    def _upper_of(self, labels: np.ndarray) -> np.ndarray:
        """Upper bound of rows with these labels in each problem, shape (n_problems, len(labels))."""
        targets = self.problem.targets(labels)
        upper = np.array([table[0] for table in self.tables])  # (n_problems, 2): negative, positive
        return np.where(targets > 0, upper[:, 1, None], upper[:, 0, None])

    # ---- the run --------------------------------------------------------------------------

    def state(self) -> dict[str, np.ndarray]:
        arrays = super().state()
        return {**arrays, **self.cache.state()} if self.cache is not None else arrays

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        self._previous_block = None
        if self.cache is not None:
            self.cache.load_state(arrays)

    def weights(self) -> np.ndarray:
        return self.w

    def dual_objectives(self) -> np.ndarray:
        """``sum alpha - 1/2 ||w||^2 - 1/2 sum D_ii alpha_i^2`` per problem."""
        sums = self.block_sums.sum(axis=1)
        return sums[:, 0] - 0.5 * np.einsum("kj,kj->k", self.w, self.w) - 0.5 * sums[:, 1]

    @staticmethod
    def combine(total: dict, figures: dict) -> dict:
        if not total:
            return dict(figures)
        return {
            "pg_max": np.fmax(total["pg_max"], figures["pg_max"]).tolist(),
            "pg_min": np.fmin(total["pg_min"], figures["pg_min"]).tolist(),
        }

    def pass_figures(self, total: dict) -> dict:
        """LIBLINEAR's PG violation over the first inner pass of every block, and the support vectors."""
        violation = float(np.max(np.subtract(total["pg_max"], total["pg_min"]))) if total else None
        return {"pg_violation": violation, "nsv": self.support_vectors()}

    def support_vectors(self) -> int:
        return int(np.count_nonzero((self.alpha > 0).any(axis=0)))


def _sums(y: np.ndarray, alpha: np.ndarray, diag) -> tuple[float, float]:
    """``sum alpha_i`` and ``sum D_ii alpha_i^2`` of a block's rows."""
    d = np.where(y > 0, diag[1], diag[0])
    return alpha.sum(), np.dot(d * alpha, alpha)


def _block_rows(block) -> slice:
    """Where a block's dual variables sit in the store-wide alpha (nothing for no block)."""
    return slice(0, 0) if block is None else slice(block.row_offset, block.row_offset + block.n_rows)


def _rows(problem, rows) -> dict:
    """What the kernel needs of some Rows (or of None: no rows at all): CSR arrays, targets, squared norms."""
    if rows is None:
        return {
            "indptr": np.zeros(1, np.int64),
            "indices": np.zeros(0, np.int32),
            "data": np.zeros(0, problem.dtype),
            "y": np.zeros((problem.n_problems, 0)),
            "sq_norms": np.zeros(0),
        }
    return {
        "indptr": rows.indptr,
        "indices": rows.indices,
        "data": rows.data,
        "y": problem.targets(rows.labels),
        "sq_norms": row_norms_squared(rows.indptr, rows.data),
    }
