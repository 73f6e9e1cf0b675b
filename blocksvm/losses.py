"""The losses, each defined once, as data.

A loss is a function of one row's margin ``m = y w.x`` (classification) or residual ``r = y - w.x``
(regression), of one of three kinds:

    margin     loss(m) = s (linear + quadratic s),   s = max(0, threshold - m)     (the hinge family)
    logistic   loss(m) = log(1 + exp(-m))
    epsilon    loss(r) = s (linear + quadratic s),   s = max(0, |r| - threshold)   (threshold: epsilon)

hinge is the margin kind ``(1; 1, 0)``, squared hinge ``(1; 0, 1)``, the Perceptron's loss ``(0; 1, 0)``;
support vector regression's losses are the epsilon kind ``(eps; 1, 0)`` and ``(eps; 0, 1)``.

Two problems are not one loss per row and target, and have solvers of their own: Crammer and Singer's multiclass
SVM (the multiclass kind, LIBLINEAR's ``-s 4``: the hinge ``(1; 1, 0)`` of a row's multiclass margin ``w_y.x -
max_{m != y} w_m.x``) and the one-class SVM (the one-class kind, ``-s 21``: ``(0; 1, 0)`` of ``w.x - rho``, every
row a target of +1, labels unread). Their values are the margin kind's formula of those margins.
Kernels receive the four numbers as a table (:attr:`Loss.table`: ``[threshold, linear, quadratic, kind]``) and
read it through :func:`blocksvm.solvers._common.row_loss` and ``row_slope``; the dual box and diagonal of dual
CD, the dual's terms, Pegasos's ball and the numpy value used by evaluation and by the tests' oracle all come from
the same record. Adding a loss of these kinds is one entry in :data:`LOSSES`. The penalty beside it, and LIBLINEAR's
codes and solver types of each (penalty, loss) pair, are :mod:`blocksvm.penalties`'.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

MARGIN, LOGISTIC, EPSILON = 0, 1, 2  # the kinds, as kernels read them (table[3])
MULTICLASS, ONECLASS = 3, 4  # Crammer and Singer's problem, the one-class SVM's: their own solvers
CLASSIFICATION, REGRESSION, NOVELTY = "classification", "regression", "one-class"


@dataclass(frozen=True)
class Loss:
    """One loss (see the module's docstring for the kinds).

    Attributes
    ----------
    name : str
    kind : int
        MARGIN, LOGISTIC, EPSILON, MULTICLASS or ONECLASS.
    threshold : float
        The margin below which a row has a loss (1 for the SVM losses); epsilon for regression.
    linear, quadratic : float
        Coefficients of ``s`` and ``s^2`` (margin and epsilon kinds).
    bound : float
        ``lambda ||w*||^2 <= bound`` at the optimum of ``lambda/2 ||w||^2 + mean loss``: Pegasos and OGD project
        onto the ball of radius ``sqrt(bound / lambda)`` (from ``f(w*) <= f(0)``: 2 loss(0); 1 for the hinge
        loss, Shalev-Shwartz et al. 2011, Theorem 1).
    """

    name: str
    kind: int
    threshold: float
    linear: float
    quadratic: float
    bound: float

    @property
    def task(self) -> str:
        """``"classification"``, ``"regression"`` or ``"one-class"`` (novelty detection: the labels are not read)."""
        return REGRESSION if self.kind == EPSILON else NOVELTY if self.kind == ONECLASS else CLASSIFICATION

    @property
    def table(self) -> np.ndarray:
        """``[threshold, linear, quadratic, kind]``: the loss as the kernels read it."""
        return np.array([self.threshold, self.linear, self.quadratic, self.kind], dtype=np.float64)

    def with_epsilon(self, epsilon: float) -> Loss:
        """The same regression loss with ``epsilon`` (LIBLINEAR's ``-p``) as its threshold."""
        return dataclasses.replace(self, threshold=float(epsilon)) if self.kind == EPSILON else self

    def value(self, z: np.ndarray) -> np.ndarray:
        """The loss of each row's margin ``z = y w.x`` (classification) or residual ``z = y - w.x`` (regression)."""
        z = np.asarray(z, dtype=np.float64)
        if self.kind == LOGISTIC:
            return np.logaddexp(0.0, -z)
        slack = (
            np.maximum(0.0, np.abs(z) - self.threshold) if self.kind == EPSILON else np.maximum(0.0, self.threshold - z)
        )
        return slack * (self.linear + self.quadratic * slack)

    def derivative(self, margins: np.ndarray) -> np.ndarray:
        """``-d loss / d m`` of each margin (classification; a sub-gradient at the hinge's kink: 0 at ``m = 1``)."""
        m = np.asarray(margins, dtype=np.float64)
        if self.kind == LOGISTIC:
            return 0.5 * (1.0 - np.tanh(0.5 * m))  # 1 / (1 + exp(m)), without overflow
        slack = np.maximum(0.0, self.threshold - m)
        return np.where(slack > 0, self.linear + 2.0 * self.quadratic * slack, 0.0)

    def dual_box(self, C: float) -> tuple[float, float]:
        """Upper bound ``U`` of ``|alpha_i|`` and diagonal ``D_ii`` of dual CD for cost ``C``.

        Hsieh et al. 2008 (and Ho & Lin 2012 for regression): linear ``U = C, D = 0``; quadratic
        ``U = inf, D = 1 / (2C)``. Logistic: ``alpha_i`` in ``(0, C)`` (Yu, Huang & Lin 2011), ``D = 0``.
        """
        if self.kind == LOGISTIC or self.quadratic == 0:
            return C, 0.0
        return math.inf, 0.5 / (C * self.quadratic)

    def dual_tables(self, c_negative: float, c_positive: float) -> tuple[np.ndarray, np.ndarray]:
        """LIBLINEAR's ``upper_bound`` and ``diag`` tables of dual CD, index 0 for y = -1, 1 for y = +1 (one cost
        for both in regression)."""
        boxes = (self.dual_box(c_negative), self.dual_box(c_positive))
        return np.array([boxes[0][0], boxes[1][0]]), np.array([boxes[0][1], boxes[1][1]])

    def dual_terms(
        self, y: np.ndarray, alpha: np.ndarray, upper: np.ndarray, diag: np.ndarray, weights: np.ndarray | None = None
    ) -> np.ndarray:
        """Each row's two terms of the dual objective ``sum a_i - 1/2 ||w||^2 - 1/2 sum b_i``, shape (rows, 2).

        margin: ``a = alpha, b = D alpha^2``; logistic: ``a = -(alpha log alpha + (C - alpha) log(C - alpha) -
        C log C)``, ``b = 0``; epsilon (``alpha`` is beta, of either sign): ``a = y beta - eps |beta|``,
        ``b = D beta^2``. ``weights``: each row's instance weight (None: 1), which multiplies its C (so its upper
        bound, and divides its ``D``); a row of weight 0 has ``alpha = 0`` and no terms.
        """
        y, alpha = np.asarray(y, dtype=np.float64), np.asarray(alpha, dtype=np.float64)
        terms = np.empty((len(y), 2))  # (filled column by column: called for every problem at every pass)
        if self.kind == LOGISTIC:
            C = np.where(y > 0, upper[1], upper[0])
            if weights is not None:
                C = C * weights
            terms[:, 0] = -(_xlogx(alpha) + _xlogx(C - alpha) - _xlogx(C))
            terms[:, 1] = 0.0
            return terms
        d = diag[1] if self.kind == EPSILON else np.where(y > 0, diag[1], diag[0])  # (SVR: one D for every row)
        if weights is not None:  # C_i = C weight_i: D_ii = D / weight_i (0 for a row of weight 0: alpha_i = 0)
            d = np.divide(d, weights, out=np.zeros(len(y)), where=weights > 0)
        terms[:, 0] = y * alpha - self.threshold * np.abs(alpha) if self.kind == EPSILON else alpha
        terms[:, 1] = d * alpha * alpha
        return terms

    def pegasos_radius(self, lam: float) -> float:
        """Radius of the ball that holds the optimum of the ``lambda``-regularized problem."""
        return 1.0 / math.sqrt(lam / self.bound)

    @property
    def curvature(self) -> float:
        """The most a row's loss curves per unit of ``||x||^2``: ``loss''(m) <= curvature`` (2 for the squared
        hinge, 1/4 for the logistic loss, 0 for the hinge, which is not smooth): a row's loss is
        ``curvature ||x||^2``-smooth in ``w`` (the smooth step schedules of Pegasos and OGD)."""
        return 0.25 if self.kind == LOGISTIC else 2.0 * self.quadratic


def _xlogx(x: np.ndarray) -> np.ndarray:
    """``x log x``, 0 at 0."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


HINGE = Loss("hinge", MARGIN, 1.0, 1.0, 0.0, bound=1.0)
SQUARED_HINGE = Loss("squared-hinge", MARGIN, 1.0, 0.0, 1.0, bound=2.0)
LOGISTIC_LOSS = Loss("logistic", LOGISTIC, 0.0, 1.0, 0.0, bound=2.0 * math.log(2.0))
EPSILON_INSENSITIVE = Loss("epsilon-insensitive", EPSILON, 0.1, 1.0, 0.0, bound=math.inf)
SQUARED_EPSILON_INSENSITIVE = Loss("squared-epsilon-insensitive", EPSILON, 0.1, 0.0, 1.0, bound=math.inf)
PERCEPTRON = Loss("perceptron", MARGIN, 0.0, 1.0, 0.0, bound=math.inf)
CRAMMER_SINGER = Loss("crammer-singer", MULTICLASS, 1.0, 1.0, 0.0, bound=1.0)
ONE_CLASS = Loss("one-class", ONECLASS, 0.0, 1.0, 0.0, bound=math.inf)

# The losses a user chooses (``--loss``); a solver may fix its own (the Perceptron's) or offer a few (Solver.losses).
LOSSES: dict[str, Loss] = {
    loss.name: loss
    for loss in (
        HINGE,
        SQUARED_HINGE,
        LOGISTIC_LOSS,
        EPSILON_INSENSITIVE,
        SQUARED_EPSILON_INSENSITIVE,
        CRAMMER_SINGER,
        ONE_CLASS,
    )
}
# The losses of one target a row (binary problems, one-vs-rest, regression): those the general solvers minimize.
ROW_LOSSES: tuple[str, ...] = tuple(name for name, loss in LOSSES.items() if loss.kind in (MARGIN, LOGISTIC, EPSILON))
