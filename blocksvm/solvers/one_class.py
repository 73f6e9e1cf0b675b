"""Driver of the one-class SVM over blocks, LIBLINEAR's ``-s 21`` (the math is in :mod:`._one_class_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.losses import ONE_CLASS
from blocksvm.params import CACHE_MB, EPS, INNER_EPS, INNER_PASSES, LOSS, TOL, WORKING_SET, Param
from blocksvm.solvers import _one_class_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.solvers.base import BlockReport, BlockSolver, Resources
from blocksvm.solvers.cache import RowCache
from blocksvm.solvers.working_set import WorkingSet


def _nu(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x <= 1


NU = Param(
    "nu",
    0.5,
    "The one-class SVM's nu (LIBLINEAR's -n, scikit-learn's nu): at most this share of the training rows fall "
    "outside (decision w.x - rho < 0), and at least this share are support vectors.",
    _nu,
    "a number in (0, 1]",
    flags=("--nu", "-n"),
    group="problem",
)

# The rho of LIBLINEAR's rule from one block's rows: sum of G_i over its free rows, their count, the largest G_i of
# its rows at 1, the smallest of its rows at 0 (RHO_SUMS' columns).
FREE_SUM, FREE_COUNT, AT_ONE, AT_ZERO = range(4)


class OneClassSolver(WorkingSet, BlockSolver):
    """Block minimization of the one-class SVM's dual, each visit solved by LIBLINEAR's two-level method.

    The labels are not read. Every ``alpha_i`` starts at ``nu``, which meets ``e^T alpha = nu l`` and gives each
    block its share of the sum; a block's rows enter ``w`` at its first visit (``counted``), so the first pass
    reads each block once, as every pass does. The sum moves between blocks through the working set, which must
    hold rows of other blocks: the cache (the default: rows with ``alpha_i > 0``) or the block visited before;
    "block" is refused. The offset ``rho`` is LIBLINEAR's: the mean of ``G_i = w.x_i`` over the free rows, else
    the midpoint of the largest ``G_i`` at 1 and the smallest at 0, from each block's rows at its last visit
    (``rho_sums``); it is the model's last weight, ``-rho``, kept out of the regularizer.

    State: ``w`` (1, n_features + 1), ``alpha`` (1, n_rows), ``counted`` and ``rho_sums`` per block, ``previous``
    ("pair") and the cache's rows. The dual objective ``-1/2 ||w||^2`` is exact at any time after the first pass.
    """

    name = "one-class"
    row_bytes = 9.0  # (its dual variables and shrinking flags; its working rows are its cache's)
    params = (LOSS, NU, TOL, EPS, WORKING_SET, CACHE_MB, INNER_PASSES, INNER_EPS)
    losses = (ONE_CLASS.name,)
    fixed_loss = ONE_CLASS
    stop_rules = frozenset({"gap", "pg"})
    state_names = ("w", "alpha", "counted", "rho_sums", "previous")
    ignores = {
        "bias": "its offset is rho, learned and not regularized; it has no bias feature (LIBLINEAR's -s 21 refuses -B)",
        "class_weight": "a one-class SVM reads no labels",
    }

    refuses_weights = "use data without weights"

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        if params.working_set == "block":
            raise ParameterError(
                "--working-set block cannot train a one-class SVM: its dual's sum (nu times the rows) moves between "
                "blocks only through rows of two blocks solved together: use cache (the default) or pair"
            )
        self.nu = float(params.nu)
        self.hyper = np.array([params.inner_passes, params.inner_eps if params.inner_eps > 0 else -1.0])
        self.w = np.zeros((1, problem.n_weights))
        self.alpha = np.full((1, problem.n_rows), self.nu)
        self.counted = np.zeros(problem.n_blocks, np.int8)
        self.rho_sums = np.zeros((problem.n_blocks, 4))
        self.rho_sums[:, AT_ONE], self.rho_sums[:, AT_ZERO] = -np.inf, np.inf
        self.start_working_set(params, problem)

    # ---- the per-block step ---------------------------------------------------------------

    def visit(self, block, seeds) -> BlockReport:
        """The two-level method on the block and the working set's rows; then ``rho`` and the working set."""
        w = self.w[0]
        a_rows = slice(block.row_offset, block.row_offset + block.n_rows)
        if not self.counted[block.index]:  # its first visit: its rows' alpha = nu enter w
            K.add_rows(w, block.indptr, block.indices, block.data, self.alpha[0, a_rows])
            self.counted[block.index] = 1
        companion = self.companion_of(block)
        if isinstance(companion, RowCache):
            ids, rows = companion.row_ids, companion.rows
        else:  # (pair: one-class refuses plain blocks)
            rows = companion
            ids = np.zeros(0, np.int64) if rows is None else np.arange(rows.row_offset, rows.row_offset + rows.n_rows)
        a = self._kernel_rows(block, self.alpha[0, a_rows])  # a view: updated in place
        b = self._kernel_rows(rows, np.ascontiguousarray(self.alpha[0, ids]))  # a copy, scattered back below
        G = np.empty(block.n_rows)
        stats = K.solve_block(a, b, w, self.hyper, G)
        self.alpha[0, ids] = b[4]
        self._offset(block.index, G, a[4])
        margins = G + w[-1]  # w.x - rho
        self.remember(block, companion, self.alpha, _upper_of, seeds)
        return BlockReport(
            loss=np.array([np.maximum(0.0, -margins).sum()]),
            correct=int(np.count_nonzero(margins > 0)),
            passes=float(stats[K.ITERATIONS]),
            updates=int(stats[K.UPDATES]),
            figures={"up": float(stats[K.UP_FIRST]), "low": float(stats[K.LOW_FIRST])},
        )

    def _offset(self, index: int, G: np.ndarray, alpha: np.ndarray) -> None:
        """The block's share of LIBLINEAR's rule for ``rho`` from its rows' ``G_i`` and ``alpha_i``, then ``rho``
        from every block's (``-rho``: the last weight)."""
        free, one, zero = (alpha > 0) & (alpha < 1), alpha == 1, alpha == 0
        sums = self.rho_sums[index]
        sums[FREE_SUM], sums[FREE_COUNT] = G[free].sum(), np.count_nonzero(free)
        sums[AT_ONE], sums[AT_ZERO] = G[one].max(initial=-np.inf), G[zero].min(initial=np.inf)
        self.w[0, -1] = -offset(self.rho_sums)

    def _kernel_rows(self, rows, alpha: np.ndarray) -> tuple:
        if rows is None:
            return np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, self.problem.dtype), np.zeros(0), alpha
        return rows.indptr, rows.indices, rows.data, row_norms_squared(rows.indptr, rows.data), alpha

    # ---- the run --------------------------------------------------------------------------

    @property
    def rho(self) -> float:
        return -float(self.w[0, -1])

    def weights(self) -> np.ndarray:
        """``(w, -rho)``, shape (1, n_features + 1)."""
        return self.w

    def objective_terms(self, W: np.ndarray, loss_sums: np.ndarray) -> dict[str, np.ndarray]:
        """``1/2 ||w||^2`` (the offset apart), ``-nu l rho`` and ``sum_i max(0, rho - w.x_i)``."""
        w = W[:, :-1]
        return {
            "regularizer": 0.5 * np.einsum("kj,kj->k", w, w),
            "offset": self.nu * self.problem.n_rows * W[:, -1],
            "loss": np.asarray(loss_sums, dtype=float),
        }

    def dual_objectives(self) -> np.ndarray:
        """``-1/2 ||w||^2`` (LIBLINEAR prints ``f(alpha) = 1/2 ||w||^2``, its negative), shape (1,)."""
        w = self.w[:, :-1]
        return -0.5 * np.einsum("kj,kj->k", w, w)

    @staticmethod
    def combine(total: dict, figures: dict) -> dict:
        if not total:
            return dict(figures)
        return {"up": max(total["up"], figures["up"]), "low": min(total["low"], figures["low"])}

    def pass_figures(self, total: dict) -> dict:
        """LIBLINEAR's stopping figure over the pass, ``max_{alpha_i < 1} -G_i - min_{alpha_j > 0} -G_j``, the
        support vectors (``alpha_i > 0``) and ``rho``."""
        violation = total["up"] - total["low"] if total else None
        violation = None if violation is None or not np.isfinite(violation) else violation
        return {"pg_violation": violation, "nsv": int(np.count_nonzero(self.alpha)), "rho": self.rho}


def offset(rho_sums: np.ndarray) -> float:
    """LIBLINEAR's ``rho`` from the blocks' shares (:data:`FREE_SUM` ...): the mean ``G_i`` of the free rows, or with
    none the midpoint of the largest ``G_i`` at 1 and the smallest at 0 (the one that exists, if only one does)."""
    free = rho_sums[:, FREE_COUNT].sum()
    if free > 0:
        return float(rho_sums[:, FREE_SUM].sum() / free)
    lb, ub = rho_sums[:, AT_ONE].max(), rho_sums[:, AT_ZERO].min()
    if np.isfinite(lb) and np.isfinite(ub):
        return float((lb + ub) / 2)
    return float(lb if np.isfinite(lb) else ub if np.isfinite(ub) else 0.0)


def _upper_of(labels: np.ndarray) -> np.ndarray:
    """Every alpha's bound, 1, shape (1, len(labels))."""
    return np.ones((1, len(labels)))
