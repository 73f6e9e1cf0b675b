"""Driver of Crammer and Singer's multiclass SVM over blocks, LIBLINEAR's ``-s 4`` (the math is in
:mod:`._crammer_singer_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.losses import CRAMMER_SINGER
from blocksvm.params import CACHE_MB, EPS, INNER_EPS, INNER_PASSES, LOSS, TOL, WORKING_SET, C
from blocksvm.solvers import _crammer_singer_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.solvers.base import BlockReport, BlockSolver, Resources
from blocksvm.solvers.cache import RowCache
from blocksvm.solvers.working_set import WorkingSet


class CrammerSingerSolver(WorkingSet, BlockSolver):
    """Block minimization of Crammer and Singer's dual, each visit solved by LIBLINEAR's sequential dual method.

    One problem over every class (``K`` weight vectors, two classes included), not ``K`` one-vs-rest problems:
    each row's ``K`` dual variables move together, so the classes cannot be split among threads; the rows are
    visited once a pass for all classes. State: ``w`` (n_features + 1, K), feature by feature; ``alpha``
    (n_rows, K); per block the sum of ``alpha_i^{y_i}`` (``block_sums``), which makes the dual objective
    ``sum_i alpha_i^{y_i} - 1/2 ||W||^2`` exact at any time; the working set as dual CD's: a
    :class:`~blocksvm.solvers.cache.RowCache` of rows with a nonzero alpha ("cache"), the block visited before
    ("pair", its index in ``previous``), or none ("block").
    """

    name = "crammer-singer"
    row_bytes = 9.0  # (its dual variables and shrinking flags; its working rows are its cache's)
    params = (C, LOSS, TOL, EPS, WORKING_SET, CACHE_MB, INNER_PASSES, INNER_EPS)
    losses = (CRAMMER_SINGER.name,)
    fixed_loss = CRAMMER_SINGER
    stop_rules = frozenset({"gap", "pg"})
    state_names = ("w", "alpha", "block_sums", "previous")
    refuses_weights = "use one-vs-rest (--loss squared-hinge, -s 2) or data without weights"

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        n_k = len(problem.classes)
        self.costs = np.ascontiguousarray(problem.costs[:, 1])  # C of each class's rows
        self.hyper = np.array([problem.bias, params.inner_passes, params.inner_eps if params.inner_eps > 0 else -1.0])
        self.w = np.zeros((problem.n_weights, n_k))
        self.alpha = np.zeros((problem.n_rows, n_k))
        self.block_sums = np.zeros(problem.n_blocks)
        self.start_working_set(params, problem)

    # ---- the per-block step ---------------------------------------------------------------

    def visit(self, block, seeds) -> BlockReport:
        """Dual CD on the block and the working set's rows, then the working set for the next visit."""
        companion = self.companion_of(block)
        if isinstance(companion, RowCache):
            ids, rows = companion.row_ids, companion.rows
        else:
            ids, rows = _block_rows(companion), companion
        a_rows = slice(block.row_offset, block.row_offset + block.n_rows)
        a = self._kernel_rows(block, self.alpha[a_rows])  # a view: updated in place
        b = self._kernel_rows(rows, np.ascontiguousarray(self.alpha[ids]))  # a copy, scattered back below
        b_before = b[5].copy()
        losses = np.zeros(len(self.costs))
        stats = K.solve_block(a, b, self.w, self.costs, self.hyper, int(seeds[0]), losses)
        self.alpha[ids] = b[5]
        self.block_sums[block.index] = K.own_alphas(a[5], a[3]).sum()
        if len(ids):  # the companion's rows belong to other blocks: move their sums by the change
            change = K.own_alphas(b[5], b[3]) - K.own_alphas(b_before, b[3])
            np.add.at(self.block_sums, self.problem.block_of(ids), change)
        self.remember(block, companion, self.alpha.T, self._upper_of, seeds)  # (alpha as (classes, rows))
        return BlockReport(
            loss=losses,
            correct=int(stats[K.CORRECT_FIRST]),
            passes=float(stats[K.PASSES]),
            updates=int(stats[K.UPDATES]),
            figures={"violation": float(stats[K.VIOLATION_FIRST])},
        )

    def _kernel_rows(self, rows, alpha: np.ndarray) -> tuple:
        """What the kernel needs of some rows (or of None): CSR arrays, each row's class, ``||x||^2`` and ``alpha``."""
        if rows is None:
            empty = (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, self.problem.dtype))
            return (*empty, np.zeros(0, np.int64), np.zeros(0), alpha)
        y = np.searchsorted(self.problem.classes, rows.labels).astype(np.int64)
        return rows.indptr, rows.indices, rows.data, y, row_norms_squared(rows.indptr, rows.data), alpha

    def _upper_of(self, labels: np.ndarray) -> np.ndarray:
        """The cache's bound of each variable, shape (classes, len(labels)): ``C`` of the row's own class (a row at
        it is a bound support vector), none for the others (any row with a nonzero alpha is kept)."""
        own = np.searchsorted(self.problem.classes, labels)[None, :] == np.arange(len(self.costs))[:, None]
        return np.where(own, self.costs[:, None], np.inf)

    # ---- the run --------------------------------------------------------------------------

    def weights(self) -> np.ndarray:
        """One row per class, shape (K, n_features + 1)."""
        return np.ascontiguousarray(self.w.T)

    def objective_terms(self, W: np.ndarray, loss_sums: np.ndarray) -> dict[str, np.ndarray]:
        """One problem: ``1/2 ||W||^2`` and the loss summed over the classes' rows (shape (1,) each)."""
        return {"regularizer": np.array([0.5 * np.sum(W * W)]), "loss": np.array([np.sum(loss_sums)])}

    def dual_objectives(self) -> np.ndarray:
        """``sum_i alpha_i^{y_i} - 1/2 ||W||^2`` (LIBLINEAR prints its negative, ``f(alpha)``), shape (1,)."""
        return np.array([self.block_sums.sum() - 0.5 * np.sum(self.w * self.w)])

    @staticmethod
    def combine(total: dict, figures: dict) -> dict:
        if not total:
            return dict(figures)
        return {"violation": max(total["violation"], figures["violation"])}

    def pass_figures(self, total: dict) -> dict:
        """LIBLINEAR's stopping figure, the largest row violation of the pass, and the support vectors (rows with a
        nonzero alpha)."""
        violation = total.get("violation") if total else None
        return {"pg_violation": violation, "nsv": int(np.count_nonzero((self.alpha != 0).any(axis=1)))}


def _block_rows(block) -> np.ndarray:
    """Where a block's rows sit in the store-wide alpha (none for no block)."""
    if block is None:
        return np.zeros(0, np.int64)
    return np.arange(block.row_offset, block.row_offset + block.n_rows)
