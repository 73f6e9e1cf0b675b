"""Driver of dual coordinate descent over blocks (the math is in :mod:`._dual_cd_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.solvers.base import BlockReport, BlockSolver
from blocksvm.solvers.cache import RowCache
from blocksvm.solvers.evaluate import correct_predictions
from blocksvm.solvers.problem import Problem


class DualCDSolver(BlockSolver):
    """Block minimization with dual CD as the inner solver.

    State: ``w`` (n_problems, n_features + 1), ``alpha`` (n_problems, n_rows) and, per block,
    ``sum alpha_i`` and ``sum D_ii alpha_i^2`` (n_problems, n_blocks, 2), which make the dual
    objective exact at any time without touching the data; with ``working_set="cache"``, the
    :class:`~blocksvm.solvers.cache.RowCache` of support vectors.
    """

    name = "dual-cd"
    state_names = ("w", "alpha", "block_sums")
    has_dual = True

    def __init__(self, problem: Problem, params):
        self.problem = problem
        self.inner_passes = params.inner_passes
        self.inner_eps = params.inner_eps if params.inner_eps > 0 else -1.0
        n_k = problem.n_problems
        self.w = np.zeros((n_k, problem.n_weights))
        self.alpha = np.zeros((n_k, problem.n_rows))
        self.block_sums = np.zeros((n_k, problem.n_blocks, 2))
        self.tables = [K.loss_tables(problem.loss, *costs) for costs in problem.costs]
        self.cache = RowCache(params.cache_mb * 1e6, problem.dtype) if params.working_set == "cache" else None

    def solve(self, block, seeds: np.ndarray, companion=None) -> BlockReport:
        p = self.problem
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.w, block) if p.n_problems > 1 else None
        if self.cache is not None:  # the block's own rows are solved as the block's
            companion = self.cache.excluding(block.row_offset, block.row_offset + block.n_rows)
        a = _rows(p, block, block.data.dtype)
        b = _rows(p, companion, block.data.dtype)
        stats = np.empty((p.n_problems, K.N_STATS))
        for k in range(p.n_problems):
            upper, diag = self.tables[k]
            a_alpha, b_alpha = self.alpha[k, a["rows"]], self.alpha[k, b["rows"]]
            b_before = b_alpha.copy() if self.cache is not None else None
            stats[k] = K.solve_block(
                a["indptr"], a["indices"], a["data"], a["y"][k], a["sq_norms"], a_alpha,
                b["indptr"], b["indices"], b["data"], b["y"][k], b["sq_norms"], b_alpha,
                self.w[k], p.bias, upper, diag, p.costs[k], p.loss, self.inner_passes,
                self.inner_eps, int(seeds[k]),
            )  # fmt: skip
            self._update_sums(k, block.index, a["y"][k], a_alpha, diag)
            if self.cache is not None:  # cached rows: a gathered copy of alpha, scattered back
                self.alpha[k, b["rows"]] = b_alpha
                self._add_to_sums(k, companion.row_ids, b["y"][k], b_before, b_alpha, diag)
            elif companion is not None:
                self._update_sums(k, companion.index, b["y"][k], b_alpha, diag)
        if self.cache is not None:
            self.cache = companion
            self.cache.refill(block, self.alpha, self._upper_of, np.random.default_rng(int(seeds[0])))
        correct = int(stats[0, K.CORRECT_FIRST]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_FIRST], correct=correct,
            pg_max=stats[:, K.PG_MAX_FIRST], pg_min=stats[:, K.PG_MIN_FIRST],
            passes=float(stats[:, K.PASSES].mean()), updates=int(stats[:, K.UPDATES].sum()),
        )  # fmt: skip

    def _update_sums(self, k: int, index: int, y: np.ndarray, alpha: np.ndarray, diag) -> None:
        d = np.where(y > 0, diag[1], diag[0])
        self.block_sums[k, index] = alpha.sum(), np.dot(d * alpha, alpha)

    def _add_to_sums(self, k: int, rows: np.ndarray, y: np.ndarray, before: np.ndarray, after: np.ndarray,
                     diag) -> None:  # fmt: skip
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

    def state(self) -> dict[str, np.ndarray]:
        arrays = super().state()
        return {**arrays, **self.cache.state()} if self.cache is not None else arrays

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        if self.cache is not None:
            self.cache.load_state(arrays)

    def weights(self) -> np.ndarray:
        return self.w

    def dual_objectives(self) -> np.ndarray:
        """``sum alpha - 1/2 ||w||^2 - 1/2 sum D_ii alpha_i^2`` per problem."""
        sums = self.block_sums.sum(axis=1)
        return sums[:, 0] - 0.5 * np.einsum("kj,kj->k", self.w, self.w) - 0.5 * sums[:, 1]

    def support_vectors(self) -> int:
        return int(np.count_nonzero((self.alpha > 0).any(axis=0)))


def _rows(problem: Problem, block, dtype) -> dict:
    """What the kernel needs of a block: CSR arrays, targets, squared norms, its alpha slice.

    ``None`` gives the same for no rows at all.
    """
    if block is None:
        return {
            "indptr": np.zeros(1, np.int64), "indices": np.zeros(0, np.int32),
            "data": np.zeros(0, dtype), "y": np.zeros((problem.n_problems, 0)),
            "sq_norms": np.zeros(0), "rows": slice(0, 0),
        }  # fmt: skip
    rows = getattr(block, "row_ids", None)  # a RowCache: scattered rows
    return {
        "indptr": block.indptr, "indices": block.indices, "data": block.data,
        "y": problem.targets(block.labels),
        "sq_norms": row_norms_squared(block.indptr, block.data),
        "rows": rows if rows is not None else slice(block.row_offset, block.row_offset + block.n_rows),
    }  # fmt: skip
