"""OWL-QN over blocks: L1-regularized squared hinge and logistic regression (LIBLINEAR's -s 5 and -s 6) by passes
that are sums over rows.

The problem, for each binary problem (:mod:`blocksvm.penalties`; LIBLINEAR's -s 5 and 6 with ``l1 = 1, l2 = 0``)::

    min_w  F(w) = l1 ||w||_1 + l2/2 ||w||^2 + sum_i C_i l(w.x_i)

with ``l`` the squared hinge or the logistic loss, ``C_i = C * class_weight(y_i) * weight_i`` (the row's instance
weight, 1 without; Newton's costs) and the bias a feature of value B, its weight penalized as
LIBLINEAR's -s 5 and 6 penalize it by default (``regularize_bias = 1``). LIBLINEAR solves it by coordinate descent
over columns (-s 5: Yuan et al. 2010; -s 6: newGLMNET, Yuan, Ho & Lin 2012), which needs the data by column; here
the data comes by rows, block by block, and the method is the orthant-wise limited-memory quasi-Newton method
(Andrew & Gao, ICML 2007; Spark's), whose passes are sums::

    g = grad of the smooth part at w, pg = its pseudo-gradient (the minimum-norm subgradient of F)
    d = -H pg by L-BFGS's two-loop recursion over the m newest pairs (s, y), s = w' - w, y = g' - g,
        then d_i = 0 where d_i pg_i >= 0                                              (the driver, in memory)
    w' = pi(w + a d), pi: a weight that changes sign stops at zero (the orthant of w, or of -pg where w_i = 0),
        a the first of a0, a0/2, ... with F(w') <= F(w) + 1e-4 pg.(w' - w)     (one pass values four steps at once,
                                                                                 and the gradient at the first)
    stop when ||pg||_1 <= eps ||pg(0)||_1 (eps: -e times max(min(#pos, #neg), 1) / l), LIBLINEAR's rule of -s 5, 6

``a0`` is 1, and ``1 / ||pg||`` in the first iteration (no pairs yet). An iteration reads the data once when the
first step is taken (its gradient came with the line search), twice otherwise. Elastic net (``l1, l2 > 0``) is the
same method with ``l2 w`` in the smooth gradient; with ``l1 = 0`` (``--penalty l2``) it is L-BFGS, without the
orthants.

Why OWL-QN and not a proximal Newton method whose Hessian products are passes (docs/ALGORITHMS.md has the
figures): to a relative objective of 1e-3 it took 30 to 90 passes on a9a, w8a and a generated set, where an
orthant-wise Newton-CG took 2 to 10 times more (a pass per CG step) and a proximal Newton with an inner solver
over Hessian products more still.

Each pass is a sum over rows: :meth:`OWLQNSolver.request` says what it sums, the kernel
(:mod:`._owlqn_kernels`) sums one piece of rows, and the engines add the pieces in a fixed tree
(:mod:`blocksvm.sums`), so the iterates are the same bits on any number of threads or workers. One-vs-rest
problems (and tune's folds) run side by side and in step, as Newton's: every problem starts an iteration together;
one whose line search ends sooner waits. A record is written per iteration; ``max_outer`` counts iterations.
"""

from __future__ import annotations

import numpy as np

from blocksvm.params import EPS, LOSS, THREADS, WORKERS, C, Param, count
from blocksvm.solvers import _owlqn_kernels as K
from blocksvm.solvers.base import Resources
from blocksvm.solvers.row_sums import PassRequest, PieceMapper, RowSumSolver
from blocksvm.solvers.staged import Stage

ARMIJO = 1e-4  # sufficient decrease (Andrew & Gao's gamma)
CURVATURE = 1e-10  # a pair is kept when s.y > CURVATURE ||s|| ||y||

# A problem's stage in its iteration (the checkpoint's numbers: append, never reorder).
STAGES = (
    Stage("START", "the gradient at the start"),
    Stage("LINE", "line search"),
    Stage("GRADIENT", "the gradient"),
    Stage("WAIT", asks=False),
    Stage("DONE", asks=False),
)
START, LINE, GRADIENT, WAIT, DONE = range(len(STAGES))
# Its numbers, columns of ``numbers``.
F, F_OLD, G1, G1_ZERO, TOL, ALPHA, HALVINGS, SLOPE, STEP, PAIRS, NEWEST, CORRECT, WEIGHT = range(13)
N_NUMBERS = 13


class OWLQNMapper(PieceMapper):
    """A piece of rows' sums of OWL-QN's pass: Newton's constants and whether the penalty has an L1 term."""

    kernels = K

    def hyper(self) -> tuple:
        return (*super().hyper(), self.problem.penalty.l1 > 0)


class OWLQNSolver(RowSumSolver):
    """OWL-QN (Andrew & Gao 2007) as a pass learner: LIBLINEAR's -s 5 and 6; see the module docstring.

    State, per problem: ``w``, the smooth part's gradient ``g`` and the pseudo-gradient ``pg`` at ``w``, the direction
    ``d``, the L-BFGS memory ``S``, ``Y`` (``lbfgs_memory`` rows each, a ring) and ``rho`` (``1 / s.y``), the
    ``numbers`` (objective, norms, the line search's scalars, the ring's count and newest row), the ``stage`` and the
    reason a problem is done (``why``); and ``counts``: the iterations done, the passes in the current one.
    """

    name = "owl-qn"
    weight_copies = 26  # w, its gradient and step, and L-BFGS's pairs (10 of them by default)
    params = (
        C,
        LOSS,
        EPS,
        Param(
            "lbfgs_memory",
            10,
            "owl-qn: the (s, y) pairs its L-BFGS memory keeps (Andrew & Gao's m): 2 m vectors of the weights per "
            "problem, in memory and in each checkpoint.",
            count,
            "an integer >= 1",
            parse=int,
            metavar="M",
        ),
        WORKERS,
        THREADS,
    )
    losses = ("squared-hinge", "logistic")
    penalties = ("l1", "elasticnet", "l2")
    stop_rules = frozenset({"solver"})
    weight_vectors = ("w", "g", "pg", "d")
    state_names = (*weight_vectors, "S", "Y", "rho", "numbers", "stage", "why", "counts")
    STAGES = STAGES
    F, F_OLD, NORM, NORM0, TOL, STEP = F, F_OLD, G1, G1_ZERO, TOL, STEP
    ALPHA, HALVINGS = ALPHA, HALVINGS
    n_numbers = N_NUMBERS
    norm_figure, passes_figure = "subgradient_norm", "owlqn_passes"
    norm_words, title = "subgradient norm", "OWL-QN"
    WHY = ("", "subgradient norm met", "line search fails", "objective change too small", "f < -1e32")
    shown = "|pg|/|pg0| {subgradient_norm:.2e}  step {step_size:.2g}  passes {owlqn_passes}  nonzeros {nonzero_weights}"

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        n_k, n_w, m = problem.n_problems, problem.n_weights, params.lbfgs_memory
        self.S, self.Y = np.zeros((n_k, m, n_w)), np.zeros((n_k, m, n_w))
        self.rho = np.zeros((n_k, m))

    @property
    def project(self) -> bool:
        """Candidates are projected on the orthant: the penalty has an L1 term."""
        return self.problem.penalty.l1 > 0

    # ---- what a pass sums ----------------------------------------------------------------------------

    def mapper(self) -> OWLQNMapper:
        return OWLQNMapper(self.problem)

    def request(self) -> PassRequest:
        """Per problem by its stage: the line search values four steps along ``d``; the start and the gradient
        value ``w``; a waiting or done problem asks nothing."""
        kinds, slots, n_slots = self._plan()
        alphas = np.where(self.stage == LINE, self.numbers[:, ALPHA], 0.0)
        D = np.where((self.stage == LINE)[:, None], self.d, 0.0)
        return PassRequest(kinds, alphas, slots, self.w, D, max(n_slots, 1))

    def _plan(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Each problem's kind of sums and the rows of the pass's vectors that hold them."""
        n_k = self.n_problems
        kinds, slots, n_slots = np.zeros(n_k, np.int64), np.full((n_k, 2), -1, np.int64), 0
        for k in range(n_k):
            if self.stage[k] in (START, LINE, GRADIENT):
                kinds[k], slots[k, K.MAIN], n_slots = K.VALUE, n_slots, n_slots + 1
                if self.stage[k] == START and self.at_zero:
                    slots[k, K.AT_ZERO], n_slots = n_slots, n_slots + 1
        return kinds, slots, n_slots

    # ---- the step at the end of a pass ----------------------------------------------------------------

    def _serve(self, k: int, total: dict, slots: np.ndarray) -> None:
        scalars, vectors = total["scalars"], total["vectors"]
        if self.stage[k] == LINE:
            self._line_search(k, scalars[k], vectors[slots[K.MAIN]])
        else:  # START, GRADIENT
            self._at_w(k, scalars[k], vectors, slots, start=self.stage[k] == START)

    def _smooth_gradient(self, k: int, loss_gradient: np.ndarray) -> np.ndarray:
        """The smooth part's gradient at ``w``: the loss's, plus ``l2 w``."""
        l2 = self.problem.penalty.l2
        return loss_gradient + l2 * self.w[k] if l2 else loss_gradient.copy()

    def _penalty(self, norm1: float, norm2: float) -> float:
        penalty = self.problem.penalty
        return penalty.l1 * norm1 + 0.5 * penalty.l2 * norm2

    def _at_w(self, k: int, sums: np.ndarray, vectors: np.ndarray, slots: np.ndarray, start: bool) -> None:
        """The sums at ``w``: its gradient (a new pair for the memory after a step), and at the start ``F`` and the
        stopping tolerance."""
        n, w, l1 = self.numbers[k], self.w[k], self.problem.penalty.l1
        g = self._smooth_gradient(k, vectors[slots[K.MAIN]])
        if start:
            n[F] = sums[0] + self._penalty(np.abs(w).sum(), K.dot(w, w))
            self.g[k] = g
            n[G1] = K.pseudo_gradient(w, g, l1, self.pg[k])
            if slots[K.AT_ZERO] >= 0:
                zero = vectors[slots[K.AT_ZERO]]
                n[G1_ZERO] = K.pseudo_gradient(np.zeros_like(w), zero, l1, np.empty_like(w))
            else:
                n[G1_ZERO] = n[G1]
            positive, rows = sums[K.POSITIVE], sums[K.ROWS]
            n[TOL] = self.tolerance(positive, rows)
        else:
            self._remember(k, g)
        self.numbers[k, [CORRECT, WEIGHT]] = sums[[K.CORRECT, K.WEIGHT]]
        self.stage[k] = WAIT

    def _remember(self, k: int, g: np.ndarray) -> None:
        """After a step from ``w_old`` (``w - s``, ``s`` kept in ``d``'s place by :meth:`_line_search`): the pair
        ``(s, g - g_old)`` into the memory when its curvature is positive, and the new gradients."""
        n = self.numbers[k]
        s, y = self.d[k], g - self.g[k]
        sy = K.dot(s, y)
        if sy > CURVATURE * np.sqrt(K.dot(s, s) * K.dot(y, y)):
            newest = (int(n[NEWEST]) + 1) % self.S.shape[1] if n[PAIRS] else 0
            self.S[k, newest], self.Y[k, newest], self.rho[k, newest] = s, y, 1.0 / sy
            n[NEWEST], n[PAIRS] = newest, min(n[PAIRS] + 1, self.S.shape[1])
        self.g[k] = g
        n[G1] = K.pseudo_gradient(self.w[k], g, self.problem.penalty.l1, self.pg[k])

    def _begin(self, k: int) -> None:
        """The direction from the pseudo-gradient and the memory, and the line search's first step."""
        n = self.numbers[k]
        slope = K.direction(
            self.pg[k], self.S[k], self.Y[k], self.rho[k], int(n[PAIRS]), int(n[NEWEST]), self.project, self.d[k]
        )
        if slope >= 0.0 and n[PAIRS]:  # the memory's direction does not descend: forget it, and go down pg
            n[PAIRS] = 0
            slope = K.direction(self.pg[k], self.S[k], self.Y[k], self.rho[k], 0, 0, self.project, self.d[k])
        n[SLOPE] = slope
        n[ALPHA] = 1.0 if n[PAIRS] else 1.0 / max(np.sqrt(K.dot(self.pg[k], self.pg[k])), 1e-300)
        n[HALVINGS] = 0
        n[F_OLD] = n[F]
        self.stage[k] = LINE

    def _line_search(self, k: int, sums: np.ndarray, gradient: np.ndarray) -> None:
        """The first of the pass's four steps with Armijo's decrease: at the first, the pass also summed the
        gradient there; at another, a pass sums it next; with none, the next four steps."""
        n, w, d = self.numbers[k], self.w[k], self.d[k]
        steps = n[ALPHA] * 0.5 ** np.arange(K.N_CANDIDATES)
        terms = np.empty((K.N_CANDIDATES, 3))
        K.candidate_terms(w, d, self.pg[k], steps, self.project, terms)
        for j in range(K.N_CANDIDATES):
            if n[HALVINGS] + j >= self.MAX_HALVINGS:
                break
            f = sums[j] + self._penalty(terms[j, 1], terms[j, 2])
            if f - n[F_OLD] <= ARMIJO * terms[j, 0]:
                new = np.empty_like(w)
                K.candidate(w, d, steps[j], self.project, new)
                self.d[k] = new - w  # s, the step taken (kept in d's place until the pair is made)
                self.w[k] = new
                at_w = lambda: self._at_w(k, sums, gradient[None, :], np.array([0, -1]), start=False)  # noqa: E731
                self._take_step(k, f, steps[j], j == 0, at_w)
                return
        self._no_step(k, steps[-1] * 0.5, K.N_CANDIDATES)

    # ---- records --------------------------------------------------------------------------------------

    def _more_figures(self) -> dict:
        n = self.numbers
        one = self.n_problems == 1 and self.problem.folds == 1  # (one-vs-rest: an exact evaluation tells)
        return {
            "nonzero_weights": int(np.count_nonzero(self.w[:, :-1])),
            "train_accuracy": float(n[0, CORRECT] / n[0, WEIGHT]) if one and n[0, WEIGHT] > 0 else None,
        }
