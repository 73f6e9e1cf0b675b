"""Driver of dual coordinate descent over blocks (the math is in :mod:`._dual_cd_kernels`)."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from blocksvm.losses import REGRESSION
from blocksvm.params import (
    CACHE_MB,
    EPS,
    EPSILON,
    INNER_EPS,
    INNER_PASSES,
    LOSS,
    THREADS,
    TOL,
    WORKERS,
    WORKING_SET,
    C,
    Param,
    boolean,
    positive,
)
from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import dot, row_norms_squared
from blocksvm.solvers.base import BlockReport, BlockSolver, Resources
from blocksvm.solvers.cache import RowCache
from blocksvm.solvers.evaluate import NO_WEIGHTS, correct_predictions, counted, kernel_weights
from blocksvm.solvers.resident import RESIDENT_STATE, ResidentRows, violations
from blocksvm.solvers.working_set import WorkingSet

PARALLEL_MERGE = 1 << 20  # weights from which the replicas' steps are added in tasks of the engine's map


def at_least_one(x) -> bool:
    return positive(x) and x >= 1


class DualCDSolver(ResidentRows, WorkingSet, BlockSolver):
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
        WORKING_SET,
        CACHE_MB,
        INNER_PASSES,
        WORKERS,
        Param(
            "line_search",
            True,
            "CoCoA+ rounds (--workers > 1): scale the shards' summed update by the exact line search on the dual "
            "(capped where the first alpha leaves its box) instead of adding it as it is. The hinge losses only: the "
            "logistic and regression losses add it with sigma' = the shards.",
            boolean,
            "True or False",
            parse=bool,
            group="parallel",
        ),
        Param(
            "cocoa_sigma",
            None,
            "CoCoA+'s sigma': the curvature each shard's subproblem assumes for the others' updates; None: the "
            "number of shards (the safe bound of Ma et al. 2015). Below that only with --line-search.",
            at_least_one,
            "a number >= 1, or None",
            none_ok=True,
            metavar="SIGMA",
            group="parallel",
        ),
        THREADS,
        EPSILON,
        INNER_EPS,
    )
    stop_rules = frozenset({"gap", "pg"})
    state_names = ("w", "alpha", "block_sums", "previous", *RESIDENT_STATE)
    # alpha and a shrinking flag a row; w, its evaluation's copy (a certificate's) and the working rows' sums; of each
    # row kept, its target, 1 / Qbar_ii, its place in the pass's shares and its flags
    row_bytes, weight_copies, kept_row_bytes = 9.0, 3, 32.0
    # Sweeping streamed blocks one after another, one sweep each, stalls where rows are alike (a generated set of 8
    # blocks, 40 passes: a relative gap of 1e-13 with every block kept, 1e-5 with 2, 1.4e-3 with none;
    # docs/ALGORITHMS.md): the rows kept are swept where a tenth of them fit; with fewer, the older visits beside a
    # cache, or with --inner-passes 1 none kept and the streamed blocks swept in pairs drawn afresh every pass (the
    # engine's choice; docs/BENCHMARKS.md: each wins on some data)
    enough_kept = 0.1
    coordinator = "blocksvm.solvers.cocoa:CoCoASolver"  # its shards' coordinator (CoCoA+ rounds)

    @classmethod
    def own_defaults(cls, params, keeps_rows: bool):
        return own_defaults(params, keeps_rows)

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        kept = self.resources.kept
        params = self.own_defaults(params, kept is not None)
        self.inner_passes = params.inner_passes
        self.inner_eps = params.inner_eps if params.inner_eps > 0 else -1.0
        self.sigma = 1.0  # CoCoA+'s sigma' when this solver is one worker's of K (blocksvm.train.parallel)
        self.threads = params.threads
        n_k = problem.n_problems
        self.w = np.zeros((n_k, problem.n_weights))
        self.alpha = np.zeros((n_k, problem.n_rows))
        self.block_sums = np.zeros((n_k, problem.n_blocks, 2))
        self.tables = [problem.loss.dual_tables(*costs) for costs in problem.costs]
        self.start_working_set(params, problem)
        # one sweep a visit over the rows kept in memory and the blocks streamed in, in one random order a pass
        self.resident = params.working_set == "block" and self.inner_passes == 1 and kept is not None
        self.start_resident(problem, params, kept if self.resident else None)

    # ---- the per-block step ---------------------------------------------------------------

    def local_state(self, block) -> dict[str, np.ndarray]:
        """The block's dual variables (a view) and its two dual sums (a view)."""
        rows = slice(block.row_offset, block.row_offset + block.n_rows)
        return {"alpha": self.alpha[:, rows], "sums": self.block_sums[:, block.index]}

    def step(self, block, W, local, seeds, companion=None) -> BlockReport:
        """Dual CD on ``block`` (and ``companion`` rows: a RowCache or a block, whose alpha is
        the solver's own), updating ``W``, ``local["alpha"]`` and ``local["sums"]`` in place."""
        p = self.problem
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first (folds: tune counts)
        seen_correct = correct_predictions(p, W, block) if p.n_problems > 1 and p.folds == 1 else None
        cached = isinstance(companion, RowCache)
        a = _rows(p, block)
        b = _rows(p, companion.rows if cached else companion)
        b_rows = companion.row_ids if cached else _block_rows(companion)
        A = np.ascontiguousarray(local["alpha"])  # (n_problems, block rows): a view, or a copy written back
        B = np.ascontiguousarray(self.alpha[:, b_rows])  # the companion's, scattered back below (contiguous:
        # one array layout for the kernels, which numba would compile again for each layout)
        B_before = B.copy() if self.cache is not None else None
        row_folds, held = _working_folds(p, block, b_rows), p.held_out

        def solve(k: int) -> np.ndarray:
            upper, diag = self.tables[k]
            return self._solve(
                (a["indptr"], a["indices"], a["data"], a["y"][k], a["sq_norms"], A[k], a["weights"]),
                (b["indptr"], b["indices"], b["data"], b["y"][k], b["sq_norms"], B[k], b["weights"]),
                W[k],
                (upper, diag, p.costs[k]),
                int(seeds[k]),
                K.live_members(np.flatnonzero(row_folds != held[k]), a["weights"], b["weights"]),
            )

        # the problems (one-vs-rest, folds) as tasks of the engine's map: they share no state, so each takes the
        # path it takes alone, on any number of threads, bit for bit
        start = time.perf_counter()
        stats = np.array(self.map(solve, range(p.n_problems)))
        sweep_seconds = time.perf_counter() - start
        local["alpha"][...] = A
        a_weights, b_weights = a["row_weights"], b["row_weights"]  # (None: every row weighs 1)
        for k in range(p.n_problems):
            local["sums"][k] = self._terms(k, a["y"][k], A[k], a_weights).sum(axis=0)
            if self.cache is not None:  # cached rows: a gathered copy of alpha, scattered back
                self.alpha[k, b_rows] = B[k]
                self._add_to_sums(k, companion.row_ids, b["y"][k], B_before[k], B[k], b_weights)
            elif companion is not None:
                self.alpha[k, b_rows] = B[k]
                self.block_sums[k, companion.index] = self._terms(k, b["y"][k], B[k], b_weights).sum(axis=0)
        correct = counted(stats[0, K.CORRECT_FIRST], block) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_FIRST],
            correct=correct,
            passes=float(stats[:, K.PASSES].mean()),
            updates=int(stats[:, K.UPDATES].sum()),
            figures=violations(stats[:, K.PG_MAX_FIRST], stats[:, K.PG_MIN_FIRST], stats[:, K.PG_SUM_FIRST]),
            sweep_seconds=sweep_seconds,
        )

    def _solve(self, a: tuple, b: tuple, w: np.ndarray, box: tuple, seed: int, members: np.ndarray) -> np.ndarray:
        """Dual CD on the working rows ``a`` and ``b`` (kernel tuples) for one problem; its stats. ``members``: the
        working rows the problem may change (A's ``0 .. n_a - 1``, B's from ``n_a``: all but a held-out fold's and
        the rows of weight 0). One problem with ``threads > 1``: :meth:`_solve_in_replicas` (several problems are
        the threads' tasks themselves)."""
        hyper = np.array([self.problem.bias, self.inner_passes, self.inner_eps, self.sigma])
        loss = self.problem.loss.table
        if self.threads == 1 or self.problem.n_problems > 1:
            return K.solve_block(a, b, w, box, hyper, loss, seed, members)
        return self._solve_in_replicas(a, b, w, box, hyper, loss, seed, members)

    def _solve_in_replicas(self, a, b, w, box, hyper, loss, seed: int, members: np.ndarray) -> np.ndarray:
        """Dual CD in ``threads`` replicas, each a task of the engine's map on a contiguous share of the working rows
        (rows are stored in a random order: each share is a random set of rows, read as a stream) with its own copy
        of ``w`` (SySCD's replicas, Ioannou, Mendler-Duenner & Parnell, NeurIPS 2019), merged after every sweep: the
        replicas' steps of the alphas are added and scaled by the ``gamma`` that maximizes the dual along them
        (:func:`~._dual_cd_kernels.dual_line_search`; exact for the hinge family, Newton's on the logistic and SVR
        duals), and ``w`` moves with them, so ``w = sum_i alpha_i y_i x_i`` holds after every sweep and the dual
        never decreases. No task writes a cache line another reads, whatever the features' popularity; each keeps
        LIBLINEAR's shrinking from sweep to sweep. The model depends on ``threads`` (the replicas), not on where the
        tasks run. docs/PARALLEL.md has the measurements behind this choice."""
        threads, sigma = self.threads, self.sigma
        members, bounds = _shares(members, len(a[5]), threads)
        actives, counts = members.copy(), np.diff(bounds)
        pg_olds = np.tile(np.array([np.inf, -np.inf]), (threads, 1))
        replicas = np.empty((threads, len(w)))
        sweep_hyper = hyper.copy()
        sweep_hyper[1] = 1  # one pass a call: the merge comes between
        rows = K.working_rows(a, b, box, hyper)
        y, alpha = rows[0], rows[1]
        upper, diag = box[0], box[1]
        kind, epsilon = loss[3], loss[0]
        seeds = np.zeros(threads, np.int64)

        def sweep(t: int) -> np.ndarray:  # replica t: its share of the rows, its shrinking, its copy of w
            lo, hi = bounds[t], bounds[t + 1]
            replicas[t] = w
            shrink = (actives[lo:hi], counts[t : t + 1], pg_olds[t])
            return K.solve_rows(a, b, rows, replicas[t], box, sweep_hyper, loss, seeds[t], members[lo:hi], shrink)

        every = []
        for s in range(self.inner_passes):
            seeds[:] = [_thread_seed(seed, t, s) for t in range(threads)]
            alpha0 = alpha.copy()
            stats = np.array(self.map(sweep, range(threads)))
            u = self._replica_steps(w, replicas)  # sigma sum_i d_i y_i x_i
            every.append(stats)
            d = alpha - alpha0
            wu, uu = dot(w, u) / sigma, dot(u, u) / (sigma * sigma)
            gamma = K.dual_line_search(kind, alpha0, d, y, upper, diag, epsilon, wu, uu, sigma, rows[3])
            w += gamma * u
            alpha[...] = alpha0 + gamma * d
            violation = np.max(stats[:, K.PG_MAX_LAST]) - np.min(stats[:, K.PG_MIN_LAST])
            if violation <= self.inner_eps and np.array_equal(counts, np.diff(bounds)):
                break
        K.scatter_alpha(alpha, a[5], b[5], members)
        first, last = _combined(every[0]), _combined(every[-1])
        first[K.PG_MAX_LAST], first[K.PG_MIN_LAST] = last[K.PG_MAX_LAST], last[K.PG_MIN_LAST]
        first[K.PASSES] = len(every)
        first[K.UPDATES] = sum(float(stats[:, K.UPDATES].sum()) for stats in every)
        return first

    def _replica_steps(self, w: np.ndarray, replicas: np.ndarray) -> np.ndarray:
        """``u = sum_t (replicas[t] - w)`` (:func:`~._dual_cd_kernels.replica_steps`); a ``w`` long enough to pay for
        the tasks is cut among them, each feature's sum one task's: the same bits."""
        if len(w) < PARALLEL_MERGE:
            return K.replica_steps(w, replicas)
        cuts = np.linspace(0, len(w), self.threads + 1).astype(np.int64)
        parts = self.map(lambda t: K.replica_steps(w[cuts[t] : cuts[t + 1]], replicas[:, cuts[t] : cuts[t + 1]]),
                         range(self.threads))  # fmt: skip
        return np.concatenate(parts)

    def visit(self, block, seeds) -> BlockReport:
        """The step with this driver's working set (the resident rows' share: :meth:`visit_resident`)."""
        if self.resident:
            return self.visit_resident(block, seeds)
        companion = self.companion_of(block)
        report = self.step(block, self.w, self.local_state(block), seeds, companion)
        self.remember(block, companion, self.alpha, self._upper_of, seeds)
        return report

    def _terms(self, k: int, y: np.ndarray, alpha: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Each row's two terms of problem ``k``'s dual (:meth:`blocksvm.losses.Loss.dual_terms`), (rows, 2);
        ``weights``: the rows' instance weights (None: 1)."""
        upper, diag = self.tables[k]
        return self.problem.loss.dual_terms(y, alpha, upper, diag, weights)

    def _add_to_sums(
        self, k: int, rows: np.ndarray, y: np.ndarray, before: np.ndarray, after: np.ndarray, weights=None
    ) -> None:
        """Move the sums of the blocks that cached ``rows`` belong to (recomputed exactly at each visit)."""
        change = self._terms(k, y, after, weights) - self._terms(k, y, before, weights)
        blocks = self.problem.block_of(rows)
        np.add.at(self.block_sums[k, :, 0], blocks, change[:, 0])
        np.add.at(self.block_sums[k, :, 1], blocks, change[:, 1])

    def _upper_of(self, labels: np.ndarray) -> np.ndarray:
        """Upper bound of rows with these labels in each problem, shape (n_problems, len(labels))."""
        targets = self.problem.targets(labels)
        upper = np.array([table[0] for table in self.tables])  # (n_problems, 2): negative, positive
        return np.where(targets > 0, upper[:, 1, None], upper[:, 0, None])

    def move_to(self, C: float, warm: bool = True) -> None:
        """Solve the same problems at cost ``C`` next, from the current solution scaled by ``C / C_old`` (``warm``:
        Chu, Ho, Chen & Lin, "Warm Start for Parameter Selection of Linear Classifiers", KDD 2015, Section 3: the
        scaled alpha stays in its box, ``[0, C]``, ``(0, C)`` or ``[-C, C]``, and ``w = sum alpha_i y_i x_i``
        scales with it), or from zero (the cache emptied).

        The dual's per-block sums scale with alpha for the hinge family and SVR; the logistic dual's are made
        exact again as each block is visited, so they are exact at the end of the next pass, as every figure is.
        """
        ratio = C / self.problem.C if warm else 0.0
        self.alpha *= ratio
        self.w *= ratio
        self.block_sums *= ratio
        self.problem = self.problem.at(C)
        self.tables = [self.problem.loss.dual_tables(*costs) for costs in self.problem.costs]
        self.forget_shrinking()
        if not warm:
            self.forget_companions()

    def warm_state(self) -> dict[str, np.ndarray]:
        """The folds' solutions as a start on every row: each row is a training row of K - 1 folds, so the mean of
        its K - 1 alphas is in its box, and ``sum_f w_f / (K - 1)`` is their ``w``."""
        K, n_k = self.problem.folds, self.problem.per_fold
        return {
            "alpha": self.alpha.reshape(K, n_k, -1).sum(axis=0) / (K - 1),
            "w": self.w.reshape(K, n_k, -1).sum(axis=0) / (K - 1),
        }

    def start_from_state(self, arrays: dict[str, np.ndarray]) -> None:
        self.alpha[...] = arrays["alpha"]
        self.w[...] = arrays["w"]
        self.forget_shrinking()

    # ---- the run --------------------------------------------------------------------------

    def weights(self) -> np.ndarray:
        return self.w

    def dual_objectives(self) -> np.ndarray:
        """``sum a_i - 1/2 ||w||^2 - 1/2 sum b_i`` per problem, the rows' terms of the loss's dual
        (:meth:`blocksvm.losses.Loss.dual_terms`; the hinge family: ``a = alpha_i``, ``b = D_ii alpha_i^2``)."""
        self.refresh_resident_sums()
        sums = self.block_sums.sum(axis=1)
        return sums[:, 0] - 0.5 * np.einsum("kj,kj->k", self.w, self.w) - 0.5 * sums[:, 1]

    @staticmethod
    def combine(total: dict, figures: dict) -> dict:
        if not total:
            return dict(figures)
        combined = {
            "pg_max": np.fmax(total["pg_max"], figures["pg_max"]).tolist(),
            "pg_min": np.fmin(total["pg_min"], figures["pg_min"]).tolist(),
        }
        if "pg_sum" in total and "pg_sum" in figures:  # (a pass begun before the sums were kept has none)
            combined["pg_sum"] = np.add(total["pg_sum"], figures["pg_sum"]).tolist()
        return combined

    def pass_figures(self, total: dict) -> dict:
        """LIBLINEAR's PG violation over the first inner pass of every block, and the support vectors."""
        shrunk = {"rows_shrunk": self.rows_shrunk} if self.rows_shrunk else {}  # (LIBLINEAR's rule then waits)
        return {**pass_violation(total, self.problem.loss), "nsv": self.support_vectors(), **shrunk}

    def support_vectors(self) -> int:
        return int(np.count_nonzero((self.alpha != 0).any(axis=0)))


def own_defaults(params, keeps_rows: bool):
    """``params`` with dual CD's own working set and inner passes where they were left at None: one sweep a visit
    with no working set where the engine keeps rows in memory (``keeps_rows``: the resident rows and the blocks
    streamed in, one random order a pass), else, or with more inner passes, the cache of support vectors and 5 passes
    a visit (a CoCoA+ shard's)."""
    one = keeps_rows and params.inner_passes in (None, 1) and params.working_set in (None, "block")
    working_set = params.working_set or ("block" if one else "cache")
    inner_passes = params.inner_passes or (1 if one else 5)
    return dataclasses.replace(params, working_set=working_set, inner_passes=inner_passes)


def _thread_seed(seed: int, thread: int, sweep: int) -> int:
    """The row order's seed of a thread's sweep (-1, file order, stays -1)."""
    return -1 if seed < 0 else (seed + thread * 0x9E3779B1 + sweep * 0x85EBCA6B) % 2**62


def _shares(members: np.ndarray, n_a: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Each thread's working rows: a contiguous share of ``members``' rows of A and one of its rows of B (B's numbered
    from ``n_a``), as ``shares[bounds[t]:bounds[t + 1]]``, increasing."""
    members = np.asarray(members, np.int64)
    split = np.searchsorted(members, n_a)
    parts = []
    for rows in (members[:split], members[split:]):
        cuts = np.linspace(0, len(rows), threads + 1).astype(np.int64)
        parts.append([rows[cuts[t] : cuts[t + 1]] for t in range(threads)])
    shares = [np.concatenate((parts[0][t], parts[1][t])) for t in range(threads)]
    return np.concatenate(shares), np.cumsum([0] + [len(share) for share in shares]).astype(np.int64)


def _combined(stats: np.ndarray) -> np.ndarray:
    """One visit's stats from its threads': extreme PGs, summed loss, correct rows and updates, the most passes."""
    out = np.empty(K.N_STATS)
    for index, fold in (
        (K.PG_MAX_FIRST, np.max),
        (K.PG_MIN_FIRST, np.min),
        (K.LOSS_FIRST, np.sum),
        (K.CORRECT_FIRST, np.sum),
        (K.PG_MAX_LAST, np.max),
        (K.PG_MIN_LAST, np.min),
        (K.PASSES, np.max),
        (K.UPDATES, np.sum),
        (K.PG_SUM_FIRST, np.sum),
    ):
        out[index] = fold(stats[:, index])
    return out


def step_terms(start: np.ndarray, d: np.ndarray, D: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, float]:
    """What the line search needs of a step ``d`` of the alphas from ``start`` (rows with diagonal ``D`` and upper
    bound ``U``): each row's ``d_i``, ``D_ii start_i d_i`` and ``D_ii d_i^2`` (rows, 3), and the largest ``gamma``
    that keeps every ``start + gamma d`` in its box (at least 1: ``start + d`` is in it)."""
    terms = np.stack([d, D * start * d, D * d * d], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 0, (U - start) / d, np.where(d < 0, -start / d, np.inf))
    return terms, float(room.min(initial=np.inf))


def dual_step(W: np.ndarray, U: np.ndarray, sums: np.ndarray, limits: np.ndarray, sigma: float = 1.0) -> np.ndarray:
    """The step ``gamma`` of each problem that maximizes the dual along a step ``d`` of the alphas, ``u = sum_i d_i
    y_i x_i`` of it moving ``w`` by ``sigma u`` (sigma: CoCoA+'s sigma' of a shard's local subproblem; 1: the dual
    itself). Along ``gamma`` the dual is a concave quadratic (the hinge family)::

        gamma (sum d - w.u - sum D alpha d) - gamma^2 / 2 (sigma ||u||^2 + sum D d^2)

    maximized at its vertex, kept within ``[0, limit]`` (the box). ``W``, ``U``: (n_problems, n_weights);
    ``sums``: (n_problems, 3), the sums of :func:`step_terms`; ``limits``: (n_problems,)."""
    slope = sums[:, 0] - np.einsum("kj,kj->k", W, U) - sums[:, 1]
    curvature = sigma * np.einsum("kj,kj->k", U, U) + sums[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        best = np.where(curvature > 0, slope / curvature, 1.0)
    return np.clip(best, 0.0, limits)


def _working_folds(problem, block, b_rows) -> np.ndarray:
    """The cross-validation fold of each working row, the block's then the companion's (all 0 without folds)."""
    n_b = len(b_rows) if isinstance(b_rows, np.ndarray) else b_rows.stop - b_rows.start
    if problem.folds == 1:
        return np.zeros(block.n_rows + n_b, np.int64)
    ids = np.arange(block.row_offset, block.row_offset + block.n_rows)
    companion = b_rows if isinstance(b_rows, np.ndarray) else np.arange(b_rows.start, b_rows.stop)
    return problem.row_folds(np.concatenate((ids, companion)))


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
            "weights": NO_WEIGHTS,
            "row_weights": None,
        }
    return {
        "indptr": rows.indptr,
        "indices": rows.indices,
        "data": rows.data,
        "y": problem.targets(rows.labels),
        "sq_norms": row_norms_squared(rows.indptr, rows.data),
        "weights": kernel_weights(rows),  # (the kernels': empty without instance weights)
        "row_weights": rows.weights,
    }


def pass_violation(total: dict, loss) -> dict:
    """A pass's violation as LIBLINEAR's ``-e`` judges it: ``max PG - min PG`` (its rule for -s 1 and 3; for -s 7 it
    bounds ``max |PG|`` instead: on a9a and w8a the spread ends later, nearer the optimum), and for the regression
    losses also each problem's 1-norm of the violations, ``pg_norm1`` (its rule for -s 12 and 13 compares it with
    the first pass's: :func:`blocksvm.train.records.relative_violation`)."""
    if not total:
        return {"pg_violation": None}
    figures = {"pg_violation": float(np.max(np.subtract(total["pg_max"], total["pg_min"])))}
    if loss.task == REGRESSION and "pg_sum" in total:
        figures["pg_norm1"] = list(total["pg_sum"])
    return figures
