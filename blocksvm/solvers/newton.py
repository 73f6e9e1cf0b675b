"""Newton's method over blocks: LIBLINEAR's primal solver of -s 0, -s 2 and -s 11, whose passes are sums over rows.

The problem (Lin, Weng & Keerthi, JMLR 2008; LIBLINEAR 2.40+, Galli & Lin 2021), for each binary problem::

    min_w  f(w) = 1/2 ||w||^2 + sum_i C_i l(w.x_i)

with ``l`` the squared hinge (-s 2), the logistic loss (-s 0) or the squared epsilon-insensitive loss (-s 11),
the bias a feature of value B (regularized, as LIBLINEAR's default). Each iteration, as LIBLINEAR's
``newton.cpp``::

    g = grad f(w), H = the (generalized) Hessian, M = 0.99 + 0.01 diag(H)     (one pass: the sums at w)
    s ~ argmin g.s + 1/2 s.H s by preconditioned conjugate gradients,           (one pass per CG step: H d)
        stopped when j (Q_j - Q_{j-1}) >= cgtol Q_j (Q: the quadratic's value; cgtol = min(0.5, sqrt(||g||_M^-1)))
    w <- w + a s, the first a of 1, 1/2, 1/4, ... (at most 20) with f(w + a s) - f(w) <= 0.01 a g.s
                                                                              (one pass values four a at once, and
                                                                               the gradient at w + s)
    stop when ||g|| <= eps ||g(0)|| (classification: eps max(min(#pos, #neg), 1) / l), as LIBLINEAR's -e

Every pass is a sum over rows: :meth:`NewtonSolver.request` says what it sums, the kernel
(:mod:`._newton_kernels`) sums one piece of rows, and the engines add the pieces in a fixed tree
(:mod:`blocksvm.sums`), so the iterates are the same bits on any number of threads or workers. One-vs-rest
problems (and tune's folds) run side by side and in step: every problem's iteration starts together, a problem
that needs fewer CG steps waits (asking nothing of the passes); each pass reads the data once for all. A
record is written per iteration; ``max_outer`` counts iterations.
"""

from __future__ import annotations

import numpy as np

from blocksvm.losses import REGRESSION
from blocksvm.params import EPS, EPSILON, LOSS, THREADS, WORKERS, C
from blocksvm.solvers import _newton_kernels as K
from blocksvm.solvers.row_sums import PassRequest, PieceMapper, RowSumSolver
from blocksvm.solvers.staged import Stage

ETA = 0.01  # Armijo's sufficient decrease (LIBLINEAR's eta)
EPS_CG = 0.5  # LIBLINEAR's eps_cg
PRECONDITIONER = 0.01  # M = (1 - 0.01) + 0.01 diag(H) (LIBLINEAR's alpha_pcg)

# A problem's stage in its iteration (the checkpoint's numbers: append, never reorder).
STAGES = (
    Stage("START", "the gradient at the start"),
    Stage("CG", "CG"),
    Stage("LINE", "line search"),
    Stage("GRADIENT", "the gradient"),
    Stage("WAIT", asks=False),
    Stage("DONE", asks=False),
)
START, CG, LINE, GRADIENT, WAIT, DONE = range(len(STAGES))
# Its numbers, columns of ``numbers``.
(F, F_OLD, G_NORM, G0_NORM, TOL, ZTR, Q, CG_TOL, CG_STEPS, ALPHA, HALVINGS, G_S, STEP, CORRECT, SQUARED, WEIGHT) = (
    range(16)
)
N_NUMBERS = 16
CG_PASSES = 2  # the third entry of ``counts``: CG passes in the current iteration


class NewtonMapper(PieceMapper):
    """A piece of rows' sums of Newton's pass."""

    kernels = K


class NewtonSolver(RowSumSolver):
    """LIBLINEAR's Newton method (its -s 0, 2 and 11) as a staged pass learner; see the module docstring.

    State, per problem: ``w``, the gradient ``g`` and preconditioner ``precond`` at ``w``, CG's solution ``s``,
    residual ``r`` and direction ``d``, the ``numbers`` (objective, norms, CG's and the line search's scalars),
    the ``stage`` and the reason a problem is done (``why``); and ``counts``: the iteration, its passes, its CG
    passes.
    """

    name = "newton"
    weight_copies = 8  # w, the gradient and the conjugate-gradient vectors, each a problem
    params = (C, LOSS, EPS, EPSILON, WORKERS, THREADS)
    losses = ("squared-hinge", "logistic", "squared-epsilon-insensitive")
    stop_rules = frozenset({"solver"})
    weight_vectors = ("w", "g", "precond", "s", "r", "d")
    state_names = (*weight_vectors, "numbers", "stage", "why", "counts")
    STAGES = STAGES
    F, F_OLD, NORM, NORM0, TOL, STEP = F, F_OLD, G_NORM, G0_NORM, TOL, STEP
    ALPHA, HALVINGS = ALPHA, HALVINGS
    n_numbers, n_counts = N_NUMBERS, 3
    norm_figure, passes_figure = "gradient_norm", "newton_passes"
    norm_words, title = "gradient norm", "Newton"
    DEFAULT_EPS = {"classification": 0.01, "regression": 0.0001}  # LIBLINEAR's -e of -s 0/2 and of -s 11
    WHY = ("", "gradient norm met", "line search fails", "actred too small", "f < -1e32")
    shown = "|g|/|g0| {gradient_norm:.2e}  CG {cg_steps:3d}  step {step_size:.2g}  passes {newton_passes}"

    # ---- what a pass sums ----------------------------------------------------------------------------

    def mapper(self) -> NewtonMapper:
        return NewtonMapper(self.problem)

    def request(self) -> PassRequest:
        """Per problem by its stage: CG asks ``H d``; the start, the line search and the gradient ask values
        (along ``s`` from the search's step, or at ``w``); a waiting or done problem asks nothing."""
        kinds, slots, n_slots = self._plan()
        alphas = np.where(self.stage == LINE, self.numbers[:, ALPHA], 0.0)
        D = np.where((self.stage == CG)[:, None], self.d, np.where((self.stage == LINE)[:, None], self.s, 0.0))
        return PassRequest(kinds, alphas, slots, self.w, D, max(n_slots, 1))

    def _plan(self) -> tuple[np.ndarray, np.ndarray, int]:
        n_k = self.n_problems
        kinds, slots, n_slots = np.zeros(n_k, np.int64), np.full((n_k, 3), -1, np.int64), 0
        for k in range(n_k):
            if self.stage[k] == CG:
                kinds[k], slots[k, K.MAIN], n_slots = K.HV, n_slots, n_slots + 1
            elif self.stage[k] in (START, LINE, GRADIENT):
                kinds[k], slots[k, K.MAIN], slots[k, K.DIAGONAL], n_slots = K.VALUE, n_slots, n_slots + 1, n_slots + 2
                if self.stage[k] == START and self.at_zero:
                    slots[k, K.AT_ZERO], n_slots = n_slots, n_slots + 1
        return kinds, slots, n_slots

    # ---- the step at the end of a pass ----------------------------------------------------------------

    def _serve(self, k: int, total: dict, slots: np.ndarray) -> None:
        scalars, vectors, stage = total["scalars"], total["vectors"], self.stage[k]
        if stage == CG:
            self.counts[CG_PASSES] += 1
            self._cg_step(k, vectors[slots[K.MAIN]])
        elif stage == LINE:
            self._line_search(k, scalars[k], vectors, slots)
        else:  # START, GRADIENT
            self._at_w(k, scalars[k], vectors, slots, start=stage == START)

    def _at_w(self, k: int, sums: np.ndarray, vectors: np.ndarray, slots: np.ndarray, start: bool) -> None:
        """The sums at ``w``: ``g``, the preconditioner, and at the start ``f`` and the stopping tolerance."""
        n = self.numbers[k]
        w = self.w[k]
        self.g[k] = w + vectors[slots[K.MAIN]]
        self.precond[k] = (1 - PRECONDITIONER) + PRECONDITIONER * (1.0 + vectors[slots[K.DIAGONAL]])
        n[G_NORM] = np.sqrt(K.dot(self.g[k], self.g[k]))
        self._fit_figures(k, sums)
        if start:
            n[F] = sums[0] + 0.5 * K.dot(w, w)
            g0 = vectors[slots[K.AT_ZERO]] if slots[K.AT_ZERO] >= 0 else self.g[k]
            n[G0_NORM] = np.sqrt(K.dot(g0, g0))
            positive, rows = sums[K.POSITIVE], sums[K.ROWS]
            n[TOL] = self.tolerance(positive, rows)
        self.stage[k] = WAIT

    def _fit_figures(self, k: int, sums: np.ndarray) -> None:
        self.numbers[k, [CORRECT, SQUARED, WEIGHT]] = sums[[K.CORRECT, K.SQUARED, K.WEIGHT]]

    def _begin(self, k: int) -> None:
        """CG's start: ``s = 0``, ``r = -g``, ``d = M^-1 r`` (LIBLINEAR's ``pcg``)."""
        n = self.numbers[k]
        self.s[k] = 0.0
        self.r[k] = -self.g[k]
        self.d[k] = self.r[k] / self.precond[k]
        n[ZTR] = K.dot(self.d[k], self.r[k])
        n[CG_TOL] = min(EPS_CG, np.sqrt(np.sqrt(n[ZTR])))
        n[Q] = 0.0
        n[CG_STEPS] = 0
        self.stage[k] = CG

    def _cg_step(self, k: int, data_Hd: np.ndarray) -> None:
        """One CG step from ``H d`` (the data's part from the pass, plus ``d``)."""
        n, d = self.numbers[k], self.d[k]
        n[CG_STEPS] += 1
        Hd = d + data_Hd
        dHd = K.dot(d, Hd)
        if dHd <= 1.0e-16:  # avoid 0/0
            return self._end_cg(k)
        alpha = n[ZTR] / dHd
        self.s[k] += alpha * d
        self.r[k] -= alpha * Hd
        new_Q = -0.5 * (K.dot(self.s[k], self.r[k]) - K.dot(self.s[k], self.g[k]))
        Q_diff = new_Q - n[Q]
        if not (new_Q <= 0 and Q_diff <= 0) or n[CG_STEPS] * Q_diff >= n[CG_TOL] * new_Q:
            return self._end_cg(k)  # the quadratic stopped falling enough (or, in rounding, rose)
        n[Q] = new_Q
        z = self.r[k] / self.precond[k]
        zTr = K.dot(z, self.r[k])
        self.d[k] = z + (zTr / n[ZTR]) * d
        n[ZTR] = zTr
        if n[CG_STEPS] >= max(self.problem.n_weights, 5):
            self._end_cg(k)

    def _end_cg(self, k: int) -> None:
        """The line search's start: steps 1, 1/2, ... along ``s`` from ``f``."""
        n = self.numbers[k]
        n[F_OLD] = n[F]
        n[G_S] = K.dot(self.g[k], self.s[k])
        n[ALPHA], n[HALVINGS] = 1.0, 0
        self.stage[k] = LINE

    def _line_search(self, k: int, sums: np.ndarray, vectors: np.ndarray, slots: np.ndarray) -> None:
        """The first of the pass's steps ``a 2^-j`` with Armijo's decrease: at ``j = 0`` the pass also summed the
        gradient there; at another, a pass sums it next; with none, the next four steps."""
        n, w, s = self.numbers[k], self.w[k], self.s[k]
        wTw, wTs, sTs = K.dot(w, w), K.dot(w, s), K.dot(s, s)
        step = n[ALPHA]
        for j in range(K.N_CANDIDATES):
            if n[HALVINGS] + j >= self.MAX_HALVINGS:
                break
            f = sums[j] + (step * step * sTs + wTw) / 2.0 + step * wTs
            if f - n[F_OLD] <= ETA * step * n[G_S]:
                self.w[k] = w + step * s
                self._take_step(k, f, step, j == 0, lambda: self._at_w(k, sums, vectors, slots, start=False))
                return
            step *= 0.5
        self._no_step(k, step, K.N_CANDIDATES)

    # ---- records --------------------------------------------------------------------------------------

    def _more_figures(self) -> dict:
        n = self.numbers
        figures = {"cg_steps": int(n[:, CG_STEPS].max()) if self.counts[0] or self.counts[CG_PASSES] else 0}
        if self.problem.task == REGRESSION:
            figures["train_mse"] = float(n[0, SQUARED] / _at_least_one(n[0, WEIGHT]))
        else:  # (one-vs-rest predicts by the arg-max of every problem: an exact evaluation tells)
            one = self.n_problems == 1 and self.problem.folds == 1
            figures["train_accuracy"] = float(n[0, CORRECT] / _at_least_one(n[0, WEIGHT])) if one else None
        return figures

    def _rule_words(self) -> str:
        return f"<= eps {self.eps:g}" + ("" if self.problem.task == REGRESSION else " x max(min(#pos, #neg), 1) / l")


def _at_least_one(rows: float) -> float:
    """A denominator of rows (or of their weight): 1 when there are none."""
    return rows if rows > 0 else 1.0
