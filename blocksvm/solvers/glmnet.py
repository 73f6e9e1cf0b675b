"""newGLMNET: LIBLINEAR's solver of L1-regularized logistic regression (its -s 6) over the store's columns.

The problem (Yuan, Ho & Lin, JMLR 2012; LIBLINEAR's ``solve_l1r_lr``), for each binary problem::

    min_w  ||w||_1 + sum_i C_i l(y_i w.x_i)

with ``l`` the logistic loss (the squared hinge too, by its generalized Hessian), ``C_i = C * class_weight(y_i) *
weight_i`` and the bias a feature of value B whose weight is inside ``||w||_1`` (LIBLINEAR's ``regularize_bias =
1``). The decision values ``t_i = w.x_i`` stay in memory, one float a row, and with them ``tau_i = C_i l'`` and
``D_i = C_i l''``. An iteration (:mod:`._glmnet_kernels`)::

    the gradient and Hessian diagonal at w           one read of every column (START at the start, GRADIENT after
                                                     each step); a zero weight whose gradient stays inside
                                                     (-1 + M/l, 1 - M/l) (M: the last iteration's largest violation)
                                                     sits out this iteration's quadratic (LIBLINEAR's shrinking)
    d by cycles of coordinate descent on the quadratic model over the other columns (QP), until the cycle's
                                                     violations sum to at most inner_eps * Gnorm1(start), with
                                                     LIBLINEAR's inner shrinking and reactivation; inner_eps /= 4
                                                     when one cycle was enough
    the line search on the rows: w + d, w + d/2, ... until F falls by sigma times the model's decrease (no read)
    stop when the violations sum to at most eps * (the same sum at the start) (eps: -e times max(min(#pos,
    #neg), 1) / l, LIBLINEAR's -s 6 rule)

The quadratic's cycles read the active columns again: from memory when the columns fit in ``--cache-mb`` (after the
gradient's read), else its first cycle reads them from the store and keeps the columns not shrunk while they fit
(:meth:`blocksvm.store.ColumnPiece.narrowed`), and only where even those exceed it every cycle reads the store. An
iteration is two rounds over the column pieces (:mod:`.by_columns`): the gradient (separable: each piece's columns
on its threads, the same bits for any split) and the quadratic (each piece its own cycles on its features, its own
``X d``, summed in the pieces' order: with one piece, LIBLINEAR's; with ``column_pieces`` > 1, block Jacobi,
d-GLMNET). A record is written per iteration; ``max_outer`` counts iterations (LIBLINEAR's max_newton_iter: 100).
"""

from __future__ import annotations

import numpy as np

from blocksvm.solvers import _glmnet_kernels as K
from blocksvm.solvers._common import dot
from blocksvm.solvers.base import Resources
from blocksvm.solvers.by_columns import (
    F_OLD,
    GMAX,
    GMAX_OLD,
    GNORM1,
    GNORM1_INIT,
    N_SHARED,
    NO_COLUMN,
    ROWS,
    STEP,
    TOL,
    ColumnSolver,
    ColumnWorker,
    F,
    bias_carriers,
    block_seed,
    loss_at_zero,
)
from blocksvm.solvers.staged import Stage

SIGMA = 0.01  # the line search's sufficient decrease (LIBLINEAR's sigma)
MAX_HALVINGS = 20  # LIBLINEAR's max_num_linesearch
MAX_CYCLES = 1000  # the quadratic's cycles at most (LIBLINEAR's max_iter)
GRADIENT_KIND, QUADRATIC_KIND, CHECK_KIND = 1, 2, 3
# the loss's l'' at most, per unit of cost: the smoothness of C_i l, which sizes the gap-safe sphere
CURVATURE_BOUND = {"logistic": 0.25, "squared-hinge": 2.0}

STAGES = (
    Stage("START", "the gradient at the start"),
    Stage("QP", "coordinate descent on the quadratic"),
    Stage("GRADIENT", "the gradient"),
    Stage("WAIT", asks=False),
    Stage("DONE", asks=False),
    Stage("CHECK", "the screened features' gradient"),
)
START, QP, GRADIENT, WAIT, DONE, CHECK = range(len(STAGES))
# A problem's own numbers, after the column learners' (by_columns.F ... ROWS): the quadratic's tolerance factor, the
# loss at w, the quadratic's cycles in the last iteration.
INNER_EPS, LOSS_SUM, CYCLES = range(N_SHARED, N_SHARED + 3)


class GLMNETWorker(ColumnWorker):
    """A piece's round: the gradient of its columns, or its cycles of coordinate descent on the quadratic."""

    def round(self, piece, request) -> dict:
        kinds, W = request.kinds, request.W
        gradient_ks = np.flatnonzero((kinds == GRADIENT_KIND) | (kinds == CHECK_KIND))
        quadratic = _Quadratic(request, piece, np.flatnonzero(kinds == QUADRATIC_KIND))
        ix, out, read = piece.weights, {"index": piece.weights}, 0
        if len(gradient_ks):
            td = piece.scratch("td", (*request.rows["D"].shape, 2))  # tau and D side by side
            td[..., K.TAU], td[..., K.D] = request.rows["tau"], request.rows["D"]
            screened = request.features["screened"]
            wanted = piece.scratch("wanted", W.shape, np.bool_)  # the screened (a check), or the others
            np.logical_xor(screened, (kinds != CHECK_KIND)[:, None], out=wanted)
            grad, hdiag = piece.scratch("grad", W.shape, fill=0.0), piece.scratch("hdiag", W.shape, fill=0.0)
            norms = piece.scratch("norms", W.shape[1:], fill=-1.0)
            for block in piece.with_bias():
                for k in gradient_ks:
                    read += _gradient(piece, block.csc, td[k], wanted[k], (grad[k], hdiag[k], norms))
            out |= {"grad": grad[:, ix], "hdiag": hdiag[:, ix], "norms": norms[ix]}
        if quadratic.running():
            read += quadratic.cycles_over(piece, request)
            out |= {"wpd": quadratic.wpd[:, ix], "xTd": quadratic.dx[..., K.XD], "cycles": quadratic.cycles}
        return {**out, "read": read}


def _gradient(piece, columns: tuple, td, wanted, out: tuple) -> int:
    """The gradient of a block's ``wanted`` columns, split among the piece's threads (each column's sum is its own:
    the same bits for any split); entries read."""
    n = columns[0].shape[0]
    threads = max(1, min(piece.threads, n // 64))
    cuts = np.linspace(0, n, threads + 1).astype(np.int64)
    parts = piece.engine.map(
        lambda i: K.gradient(columns, td, (cuts[i], cuts[i + 1]), wanted, out), list(range(threads))
    )
    return int(sum(parts))


class _Quadratic:
    """The quadratic's cycles of one piece: which problems still cycle, their ``w + d`` and ``X d``, their inner
    shrinking and stopping rule (LIBLINEAR's, on the piece's features and its share of the tolerance)."""

    def __init__(self, request, piece, problems: np.ndarray):
        n_k = len(request.kinds)
        self.problems, self.ix = problems, piece.weights
        self.tolerance = request.numbers[:, 1 + piece.index] if request.numbers.shape[1] > 1 else np.zeros(n_k)
        self.done = np.zeros(n_k, np.bool_)
        self.cycles = np.zeros(n_k, np.int64)
        if len(problems):
            self.active = piece.scratch("active", request.W.shape, np.bool_)
            self.active[...] = request.features["active"]
            self.gmax_old = np.full(n_k, np.inf)
            self.wpd = piece.scratch("wpd", request.W.shape)
            self.wpd[...] = request.W
            self.dx = piece.scratch("dx", (*request.rows["D"].shape, 2), fill=0.0)  # X d and D side by side
            self.dx[..., K.D] = request.rows["D"]

    def running_problems(self) -> np.ndarray:
        return self.problems[~self.done[self.problems]]

    def running(self) -> bool:
        return len(self.running_problems()) > 0

    def cycles_over(self, piece, request) -> int:
        """The piece's cycles until each problem's inner stopping rule (or MAX_CYCLES); entries read."""
        read, cycle = 0, 0
        features = request.features
        rows = request.numbers[:, 0]  # each problem's l: the shrinking threshold is Gmax_old / l
        bias = piece.bias_column()
        blocks = piece.narrowed(self.active[self.running_problems()].any(axis=0))  # the columns not shrunk
        while self.running():
            totals = np.zeros((len(request.kinds), K.N_TOTALS))
            key = (*request.key, cycle)
            carriers = bias_carriers(piece, key, len(request.kinds))
            for at, block in enumerate(blocks):
                for k in self.running_problems():
                    seed = block_seed(key, block.index, int(k))
                    model = (features["grad"][k], features["hdiag"][k], request.W[k], self.wpd[k])
                    threshold = self.gmax_old[k] / rows[k]
                    extra = bias.csc if carriers[k] == at else NO_COLUMN
                    K.quadratic_cycle(block.csc, extra, self.dx[k], model, self.active[k], threshold, seed, totals[k])
            read += int(totals[:, K.READ].sum())
            self.end_cycle(totals, features["active"])
            cycle += 1
        return read

    def end_cycle(self, totals: np.ndarray, active: np.ndarray) -> None:
        for k in self.running_problems():
            self.cycles[k] += 1
            if totals[k, K.QP_GNORM1] <= self.tolerance[k]:
                if self.active[k, self.ix].sum() == active[k, self.ix].sum():
                    self.done[k] = True  # LIBLINEAR's inner stopping
                else:  # its reactivation: the features shrunk inside the quadratic come back
                    self.active[k, self.ix] = active[k, self.ix]
                    self.gmax_old[k] = np.inf
            else:
                self.gmax_old[k] = totals[k, K.QP_GMAX]
            if self.cycles[k] >= MAX_CYCLES:
                self.done[k] = True


class GLMNETSolver(ColumnSolver):
    """LIBLINEAR's -s 6 over column blocks; see the module docstring.

    State, per problem: ``w``, the decision values ``t`` (one per row), the gradient ``grad`` and Hessian diagonal
    ``hdiag`` at ``w``, the features in this iteration's quadratic (``active``), the ``numbers`` (objective,
    violations, tolerances), ``stage`` and ``why``; ``counts``: iterations done, rounds and entries read in the
    current one. ``tau`` and ``D`` follow from ``t``.
    """

    name = "glmnet"
    row_bytes, weight_copies = 24.0, 19  # a row's decision value and weights; a weight's
    losses = ("logistic", "squared-hinge")
    weight_vectors = ("w", "grad", "hdiag")  # the gradient and Hessian diagonal at w
    state_names = (*weight_vectors, "t", "active", "screened", "norms", "piece_norms")
    state_names += ("numbers", "stage", "why", "counts")
    worker_class = GLMNETWorker
    STAGES = STAGES
    n_numbers = N_SHARED + 3
    title = "newGLMNET"
    WHY = ("", "subgradient norm met", "line search fails")
    shown = (
        "|pg|/|pg0| {subgradient_norm:.2e}  #CD cycles {qp_cycles}  step {step_size:.2g}  passes {column_passes:.2f}  "
        "nonzeros {nonzero_weights}  screened {screened_features}"
    )

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        n_k, n_w = problem.n_problems, problem.n_weights
        self.screened = np.zeros((n_k, n_w), np.bool_)  # proven zero at the optimum (gap safe): not read again
        self.norms = np.full(n_w, -1.0)  # each feature's squared column norm, once read (-1: not yet)
        self.t = np.zeros((n_k, self.n_rows))
        self.tau, self.D = np.zeros((n_k, self.n_rows)), np.zeros((n_k, self.n_rows))
        self.piece_norms = np.zeros((n_k, self.n_pieces))
        self._start_numbers()

    def _start_numbers(self) -> None:
        """The column learners' (the tolerances), ``inner_eps = 1`` and the loss terms of the rows at ``t``."""
        super()._start_numbers()
        n = self.numbers
        n[:, INNER_EPS] = 1.0
        for k in range(self.n_problems):
            self._row_terms(k)
            n[k, F] = self.l1(self.w[k]) + n[k, LOSS_SUM]

    def _row_terms(self, k: int) -> None:
        self.numbers[k, LOSS_SUM] = K.row_terms(self.t[k], self.yc[k], self.problem.loss.table, self.tau[k], self.D[k])

    # ---- rounds -------------------------------------------------------------------------------------

    def kinds(self) -> np.ndarray:
        return np.select(
            [np.isin(self.stage, (START, GRADIENT)), self.stage == QP, self.stage == CHECK],
            [GRADIENT_KIND, QUADRATIC_KIND, CHECK_KIND],
        )

    def request_for(self, kinds: np.ndarray) -> dict:
        n = self.numbers
        tolerances = n[:, INNER_EPS, None] * n[:, GNORM1_INIT, None] * self._piece_shares()
        return {
            "rows": {"tau": self.tau, "D": self.D},
            "features": {"grad": self.grad, "hdiag": self.hdiag, "active": self.active, "screened": self.screened},
            "numbers": np.column_stack([n[:, ROWS], tolerances]),
        }

    def start_pass(self, outer: int) -> None:
        """At the start from ``w = 0``, the gradient and Hessian diagonal come from the column layout's statistics
        (each feature's sums by class): the first iteration reads no data (not with folds, whose rows the statistics
        do not split, nor from a warm start)."""
        if np.all(self.stage == START) and not np.any(self.w) and self.problem.folds == 1:
            total = at_zero_from_statistics(self)
            if total is not None:
                self.step(total)

    def _piece_shares(self) -> np.ndarray:
        """Each piece's share of a problem's violations at the last gradient (its part of the quadratic's
        tolerance); one piece: all of it."""
        total = self.piece_norms.sum(axis=1, keepdims=True)
        shares = np.divide(self.piece_norms, total, out=np.zeros_like(self.piece_norms), where=total > 0)
        return shares if self.n_pieces > 1 else np.ones_like(shares)

    def _serve(self, k: int, total: dict, slots: np.ndarray) -> None:
        pieces = total["pieces"]
        if self.stage[k] == QP:
            self._line_search(k, pieces)
        elif self.stage[k] == CHECK:
            self._check_screened(k, pieces)
        else:
            self._at_w(k, pieces, start=self.stage[k] == START)

    def _at_w(self, k: int, pieces: list, start: bool) -> None:
        """The gradient's round: the violations, the features shrunk for this iteration's quadratic, and at the
        start the stopping rule's reference."""
        n = self.numbers[k]
        self.grad[k] = self.combined(pieces, "grad", self.grad, k)
        self.hdiag[k] = self.combined(pieces, "hdiag", self.hdiag, k)
        if "norms" in pieces[0]:  # (from the statistics at the start: none yet)
            read = self.combined([{**p, "norms": p["norms"][None, :]} for p in pieces], "norms", self.norms[None, :], 0)
            np.copyto(self.norms, read, where=read >= 0)
        self._screen(k)
        kept = self._work  # each weight's violation, 0 where it sits out the quadratic
        K.violations(self.w[k], self.grad[k], n[GMAX_OLD] / n[ROWS], self.screened[k], self.active[k], kept)
        n[GNORM1], n[GMAX] = kept.sum(), kept.max(initial=0.0)
        self.piece_norms[k] = [kept[piece["index"]].sum() for piece in pieces]
        if start:
            n[GNORM1_INIT] = n[GNORM1]
        self.stage[k] = WAIT

    def _screen(self, k: int) -> None:
        """Gap-safe screening (Ndiaye, Fercoq, Gramfort & Salmon, JMLR 2017): the dual point ``theta = -tau / s``
        (``s = max(1, |X' tau|_inf)`` over the features not screened: the problem without the screened ones has the
        same optimum) and the duality gap ``G`` bound the optimal dual point in a sphere of radius ``sqrt(2 G L)``
        (``L``: the largest ``C_i l''``), and a zero weight whose column keeps ``|x_j' theta| + r ||x_j|| < 1`` over
        that sphere is zero at the optimum: it is not read again (until C moves)."""
        n, g = self.numbers[k], self.grad[k]
        scale = max(1.0, K.largest_unscreened(g, self.screened[k]))
        gap = max(n[F] - K.dual_value(self.t[k], self.yc[k], self.problem.loss.table, scale), 0.0)
        smooth = CURVATURE_BOUND[self.problem.loss.name] * float(np.abs(self.yc[k]).max(initial=0.0))
        radius = float(np.sqrt(2.0 * gap * smooth))
        K.screen(self.w[k], g, self.norms, scale, radius, self.screened[k])

    def _check_screened(self, k: int, pieces: list) -> None:
        """Before the stop, the screened features' gradient at ``w`` (one read of their columns): with their
        violations counted the stopping rule still holds (done), or those that violate come back."""
        n = self.numbers[k]
        g = self.combined(pieces, "grad", self.grad, k)
        violation = np.where(self.screened[k], np.maximum(np.abs(g) - 1.0, 0.0), 0.0)
        if n[GNORM1] + violation.sum() <= n[TOL] * n[GNORM1_INIT]:
            self.stage[k], self.why[k] = DONE, 1
            return
        self.screened[k] &= violation == 0.0
        self.stage[k] = GRADIENT

    def _line_search(self, k: int, pieces: list) -> None:
        """LIBLINEAR's line search on the rows along ``d = wpd - w``, halving ``d`` (and ``X d``) until the
        objective falls by ``sigma`` times the model's decrease."""
        n, w = self.numbers[k], self.w[k]
        wpd = self.combined(pieces, "wpd", self.w, k)
        xTd = pieces[0]["xTd"][k].copy()
        for piece in pieces[1:]:
            xTd += piece["xTd"][k]
        n[CYCLES] = max(int(piece["cycles"][k]) for piece in pieces)
        w_norm, w_norm_new = self.l1(w), self.l1(wpd)
        delta = dot(self.grad[k], wpd - w) + w_norm_new - w_norm
        loss_old, loss = n[LOSS_SUM], self.problem.loss.table
        step = 1.0
        for _ in range(MAX_HALVINGS):
            if w_norm_new - w_norm + K.loss_along(self.t[k], xTd, 1.0, self.yc[k], loss) - loss_old <= SIGMA * delta:
                self.w[k] = wpd
                K.move_rows(self.t[k], xTd, 1.0)
                self._row_terms(k)
                n[F_OLD], n[F], n[STEP] = n[F], w_norm_new + n[LOSS_SUM], step
                break
            wpd = (w + wpd) * 0.5
            w_norm_new = self.l1(wpd)
            delta *= 0.5
            xTd *= 0.5
            step *= 0.5
        else:
            n[STEP] = 0.0
            self.stage[k], self.why[k] = DONE, 2
            return
        if n[CYCLES] == 1:
            n[INNER_EPS] *= 0.25
        n[GMAX_OLD] = n[GMAX]
        self.stage[k] = GRADIENT

    def _judge(self, k: int, started: bool) -> None:
        """LIBLINEAR's stopping rule (the violations' sum against the start's), checked over the screened features
        too before the stop (no feature is left at zero wrongly)."""
        n = self.numbers[k]
        if n[GNORM1] <= n[TOL] * n[GNORM1_INIT]:
            self.stage[k], self.why[k] = (CHECK, 0) if self.screened[k].any() else (DONE, 1)

    def _begin(self, k: int) -> None:
        self.stage[k] = QP

    # ---- records --------------------------------------------------------------------------------------

    def _more_figures(self) -> dict:
        cycles, screened = int(self.numbers[:, CYCLES].max()), int(self.screened.sum())
        return {"qp_cycles": cycles, **super()._more_figures(), "screened_features": screened}

    def _right(self, k: int) -> np.ndarray:
        return self.yc[k] * self.t[k] > 0

    def _rows_at(self, t) -> None:
        self.t[:] = t
        self.screened[:] = False  # (a new start: what was screened at another C or w is not known to be zero)

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        for k in range(self.n_problems):
            self._row_terms(k)


def at_zero_from_statistics(learner: GLMNETSolver) -> dict | None:
    """The gradient's round at ``w = 0`` from the statistics of ``learner``'s column layout, as the pieces would give
    it (``{"pieces": [...]}``), or None when the statistics cannot give it (totals only: more classes than the
    layout keeps apart)."""
    found = loss_at_zero(learner.columns, learner.problem)
    if found is None:
        return None
    grad, hdiag = found
    hdiag += K.NU
    return {"pieces": [{"index": ix, "grad": grad[:, ix], "hdiag": hdiag[:, ix]} for ix in learner.piece_weights]}
