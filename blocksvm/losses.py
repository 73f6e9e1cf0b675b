"""The losses, each defined once, as data.

Every loss here is a margin loss of the hinge family::

    loss(m) = s * (linear + quadratic * s),    s = max(0, threshold - m),   m = y w.x

hinge is ``(1; 1, 0)``, squared hinge ``(1; 0, 1)``, the Perceptron's loss ``(0; 1, 0)``.
Kernels receive the three numbers as a table (:attr:`Loss.table`) and compute ``s = t[0] - m``,
``s * (t[1] + t[2] * s)`` and the derivative ``t[1] + 2 t[2] s`` with no branch on the loss;
the dual box and diagonal of dual CD, Pegasos's ball, the LIBLINEAR names and the numpy value
used by evaluation and by the tests' oracle all come from the same
record. Adding a loss of this family is one entry in :data:`LOSSES`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Loss:
    """A loss ``s * (linear + quadratic * s)`` of the slack ``s = max(0, threshold - y w.x)``.

    Attributes
    ----------
    name : str
    threshold : float
        The margin below which a row has a loss (1 for the SVM losses).
    linear, quadratic : float
        Coefficients of ``s`` and ``s^2``.
    liblinear_code : int or None
        LIBLINEAR's ``-s`` for the dual solver of this loss (None: LIBLINEAR has none).
    liblinear_type : str
        ``solver_type`` written in LIBLINEAR model files.
    bound : float
        ``lambda ||w*||^2 <= bound`` at the optimum of ``lambda/2 ||w||^2 + mean loss``: Pegasos
        projects onto the ball of radius ``sqrt(bound / lambda)`` (1 for the hinge loss, Shalev-Shwartz
        et al. 2011, Theorem 1; 2 for the squared hinge, from ``f(w*) <= f(0) = 1``).
    """

    name: str
    threshold: float
    linear: float
    quadratic: float
    liblinear_code: int | None
    liblinear_type: str
    bound: float

    @property
    def table(self) -> np.ndarray:
        """``[threshold, linear, quadratic]``: the loss as the kernels read it."""
        return np.array([self.threshold, self.linear, self.quadratic])

    def value(self, margins: np.ndarray) -> np.ndarray:
        """``loss(m)`` of each margin ``m = y w.x``."""
        slack = np.maximum(0.0, self.threshold - np.asarray(margins, dtype=np.float64))
        return slack * (self.linear + self.quadratic * slack)

    def derivative(self, margins: np.ndarray) -> np.ndarray:
        """``-d loss / d m`` of each margin (a sub-gradient at the hinge's kink: 0 at ``m = 1``)."""
        slack = np.maximum(0.0, self.threshold - np.asarray(margins, dtype=np.float64))
        return np.where(slack > 0, self.linear + 2.0 * self.quadratic * slack, 0.0)

    def dual_box(self, C: float) -> tuple[float, float]:
        """Upper bound ``U`` of ``alpha_i`` and diagonal ``D_ii`` of dual CD for cost ``C``.

        Hsieh et al. 2008: hinge ``U = C, D = 0``; squared hinge ``U = inf, D = 1 / (2C)``.
        """
        if self.quadratic == 0:
            return C, 0.0
        return math.inf, 0.5 / (C * self.quadratic)

    def dual_tables(self, c_negative: float, c_positive: float) -> tuple[np.ndarray, np.ndarray]:
        """LIBLINEAR's ``upper_bound`` and ``diag`` tables of dual CD, index 0 for y = -1, 1 for y = +1."""
        boxes = (self.dual_box(c_negative), self.dual_box(c_positive))
        return np.array([boxes[0][0], boxes[1][0]]), np.array([boxes[0][1], boxes[1][1]])

    def pegasos_radius(self, lam: float) -> float:
        """Radius of the ball that holds the optimum of the ``lambda``-regularized problem."""
        return 1.0 / math.sqrt(lam / self.bound)


HINGE = Loss("hinge", 1.0, 1.0, 0.0, liblinear_code=3, liblinear_type="L2R_L1LOSS_SVC_DUAL", bound=1.0)
SQUARED_HINGE = Loss("squared-hinge", 1.0, 0.0, 1.0, liblinear_code=1, liblinear_type="L2R_L2LOSS_SVC_DUAL", bound=2.0)
PERCEPTRON = Loss(
    "perceptron", 0.0, 1.0, 0.0, liblinear_code=None, liblinear_type="L2R_L1LOSS_SVC_DUAL", bound=math.inf
)

# The losses a user chooses for the SVM solvers (``--loss``); a solver may fix its own (the Perceptron's).
LOSSES: dict[str, Loss] = {loss.name: loss for loss in (HINGE, SQUARED_HINGE)}
