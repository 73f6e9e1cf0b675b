"""CDN: LIBLINEAR's coordinate descent for the L1-regularized L2-loss SVM (its -s 5) over the store's columns.

The problem (Yuan, Chang, Hsieh & Lin, JMLR 2010, Algorithm 2 with its Newton direction and line search;
LIBLINEAR's ``solve_l1r_l2_svc``), for each binary problem::

    min_w  ||w||_1 + sum_i C_i max(0, 1 - y_i w.x_i)^2

with ``C_i = C * class_weight(y_i) * weight_i`` and the bias a feature of value B, its weight inside ``||w||_1``
(LIBLINEAR's ``regularize_bias = 1``). The slacks ``b_i = 1 - y_i w.x_i`` stay in memory, one float a row. An
iteration is one sweep over the active features, each feature's column read to take a one-variable Newton step
with a line search (:mod:`._cdn_kernels`); a zero weight whose gradient stays inside ``(-1 + M/l, 1 - M/l)``
(``M``: the previous sweep's largest violation) leaves the active set (LIBLINEAR's shrinking)::

    stop when sum_j violation_j <= eps * (the same sum in the first sweep)
         (eps: -e times max(min(#pos, #neg), 1) / l, LIBLINEAR's -s 5 rule); with features shrunk, sweep once more
         over all of them first (LIBLINEAR's reactivation), so no weight is left at zero wrongly

A sweep is one round over the column pieces (:mod:`.by_columns`): with one piece, LIBLINEAR's sweep; with
``column_pieces`` P > 1 each piece sweeps its features against its own copy of ``b`` and the driver adds the
pieces' changes, scaled by the first of 1, 1/2, ... that lowers the objective (block Jacobi). A record is written
per sweep; ``max_outer`` counts sweeps (LIBLINEAR's max_iter: 1000).
"""

from __future__ import annotations

import numpy as np

from blocksvm.solvers import _cdn_kernels as K
from blocksvm.solvers.base import Resources
from blocksvm.solvers.by_columns import (
    F_OLD,
    GMAX,
    GMAX_OLD,
    GNORM1,
    GNORM1_INIT,
    NO_COLUMN,
    NONE,
    ROWS,
    STEP,
    TOL,
    ColumnSolver,
    ColumnWorker,
    F,
    bias_carriers,
    block_seed,
)
from blocksvm.solvers.staged import ITERATIONS, Stage

MAX_HALVINGS = 20  # the pieces' combined step: 1, 1/2, ... (P > 1)
SWEEP_KIND = 1

STAGES = (Stage("SWEEP", "coordinate descent"), Stage("WAIT", asks=False), Stage("DONE", asks=False))
SWEEP, WAIT, DONE = range(len(STAGES))


class CDNWorker(ColumnWorker):
    """A piece's sweep: its columns' coordinate steps against its own copy of the slacks."""

    def round(self, piece, request) -> dict:
        asking = np.flatnonzero(request.kinds != NONE)
        W, active = piece.scratch("w", request.W.shape), piece.scratch("active", request.W.shape, np.bool_)
        W[...], active[...] = request.W, request.features["active"]
        yb = piece.scratch("yb", (*request.yc.shape, 2))  # (n_problems, n_rows, 2): yc and b side by side
        yb[..., K.YC], yb[..., K.B] = request.yc, request.rows["b"]
        totals = np.zeros((len(request.kinds), K.N_TOTALS))
        thresholds = request.numbers[:, 0] / request.numbers[:, 1]  # LIBLINEAR's Gmax_old / l
        bias, carriers = piece.bias_column(), bias_carriers(piece, request.key, len(request.kinds))
        for at, block in enumerate(piece.blocks()):
            for k in asking:
                seed = block_seed(request.key, block.index, int(k))
                extra = bias.csc if carriers[k] == at else NO_COLUMN
                K.sweep(block.csc, extra, yb[k], W[k], active[k], thresholds[k], seed, totals[k])
        ix = piece.weights
        read = totals[:, K.READ].sum()
        return {"index": ix, "w": W[:, ix], "active": active[:, ix], "b": yb[..., K.B], "totals": totals, "read": read}


class CDNSolver(ColumnSolver):
    """LIBLINEAR's -s 5 over column blocks; see the module docstring.

    State, per problem: ``w``, the slacks ``b`` (one per row), the active features ``active``, the ``numbers``
    (objective, violations, tolerance), ``stage`` and ``why``; ``counts``: sweeps done, rounds and entries read in
    the current one.
    """

    name = "cdn"
    row_bytes, weight_copies = 8.0, 8  # a row's slack; a weight's statistics and shrinking
    losses = ("squared-hinge",)
    state_names = ("w", "b", "active", "numbers", "stage", "why", "counts")
    worker_class = CDNWorker
    STAGES = STAGES
    title = "CDN"
    WHY = ("", "subgradient norm met", "no step lowers the objective")
    shown = (
        "|pg|/|pg0| {subgradient_norm:.2e}  active {active_features}  passes {column_passes:.2f}  "
        "nonzeros {nonzero_weights}"
    )

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.b = np.ones((problem.n_problems, self.n_rows))
        self._start_numbers()

    # ---- rounds -------------------------------------------------------------------------------------

    def kinds(self) -> np.ndarray:
        return np.where(self.stage == SWEEP, SWEEP_KIND, NONE)

    def request_for(self, kinds: np.ndarray) -> dict:
        numbers = self.numbers[:, [GMAX_OLD, ROWS]]
        return {"rows": {"b": self.b}, "features": {"active": self.active}, "numbers": numbers}

    def _serve(self, k: int, total: dict, slots: np.ndarray) -> None:
        """Problem ``k``'s sweep: the pieces' weights and slacks (combined when there are several), its violations
        and objective."""
        pieces, n = total["pieces"], self.numbers[k]
        if len(pieces) == 1:
            self.w[k] = self.combined(pieces, "w", self.w, k)
            self.b[k] = pieces[0]["b"][k]
            n[STEP] = 1.0
        else:
            n[STEP] = self._combine(k, pieces)
        self.active[k] = self.combined(pieces, "active", self.active, k)
        totals = np.array([p["totals"][k] for p in pieces])
        n[GMAX], n[GNORM1] = totals[:, K.GMAX].max(), totals[:, K.GNORM1].sum()
        if self.counts[ITERATIONS] == 0:  # LIBLINEAR's Gnorm1_init: the first sweep's
            n[GNORM1_INIT] = n[GNORM1]
        n[F_OLD], n[F] = n[F], self._objective(k)
        self.stage[k] = WAIT

    def _combine(self, k: int, pieces: list) -> float:
        """Block Jacobi: the pieces' changes to ``w`` and ``b`` added in the pieces' order, scaled by the first of 1,
        1/2, ... that does not raise the objective (0: none; the step is dropped)."""
        w, b, yc = self.w[k], self.b[k], self.yc[k]
        dw = self.combined(pieces, "w", self.w, k) - w
        db = np.zeros_like(b)
        for piece in pieces:
            db += piece["b"][k] - b
        before = np.abs(w).sum() + K.objective_terms(b, yc)
        alpha = 1.0
        for _ in range(MAX_HALVINGS):
            if np.abs(w + alpha * dw).sum() + K.combined_loss(b, db, alpha, yc) <= before:
                self.w[k] = w + alpha * dw
                self.b[k] = b + alpha * db
                return alpha
            alpha *= 0.5
        return 0.0

    def _objective(self, k: int) -> float:
        return self.l1(self.w[k]) + K.objective_terms(self.b[k], self.yc[k])

    def _judge(self, k: int, started: bool) -> None:
        """LIBLINEAR's stopping rule, and its reactivation of the shrunk features before it stops."""
        n = self.numbers[k]
        if n[GNORM1] <= n[TOL] * n[GNORM1_INIT]:
            if self.active[k].all():
                self.stage[k], self.why[k] = DONE, 1
                return
            self.active[k] = True
            n[GMAX_OLD] = np.inf
            return
        n[GMAX_OLD] = n[GMAX]

    def _begin(self, k: int) -> None:
        self.stage[k] = SWEEP

    # ---- records --------------------------------------------------------------------------------------

    def _right(self, k: int) -> np.ndarray:
        return self.b[k] < 1.0

    def _rows_at(self, t) -> None:
        self.b[:] = 1.0 - np.sign(self.yc) * t
