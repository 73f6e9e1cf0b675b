"""The penalties, each defined once, as data, and LIBLINEAR's solver types as (penalty, loss) pairs.

A problem is a loss (:mod:`blocksvm.losses`) beside a penalty of the weights::

    min_w  penalty(w) + sum_i C_i loss_i(w),    penalty(w) = l1 ||w||_1 + l2/2 ||w||^2

``l2`` is ``(0, 1)`` (LIBLINEAR's L2R problems), ``l1`` is ``(1, 0)`` (its L1R problems, -s 5 and 6), and
``elasticnet`` is ``(r, 1 - r)`` for ``r = l1_ratio`` (scikit-learn's ``LogisticRegression`` penalty; LIBLINEAR has
none). The bias feature's weight is a weight like the others, penalized, as LIBLINEAR penalizes it by default (its
``regularize_bias = 1``: without ``-R`` the bias weight is inside ``||w||_1`` of -s 5 and 6, and inside ``||w||^2``
of the others). The objective's regularizer term (:meth:`Penalty.value`), the solvers that minimize each penalty,
which solver ``--penalty`` chooses when ``--solver`` is not given, and LIBLINEAR's codes and solver types (the
``-s`` alias, model export and import) all come from these records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Penalty:
    """``l1 ||w||_1 + l2/2 ||w||^2`` (every weight, the bias feature's too).

    Attributes
    ----------
    name : str
        ``l2``, ``l1`` or ``elasticnet``.
    l1, l2 : float
        The weights of the two terms.
    solver : str
        The solver ``--penalty NAME`` chooses when ``--solver`` is not given and the loss has none of its own in
        ``by_loss``: the default solver for L2, OWL-QN for the elastic net.
    by_loss : tuple of (loss, solver)
        The solver it chooses for a loss: the L1 penalty's are LIBLINEAR's coordinate descent over columns, CDN
        for the squared hinge (-s 5) and newGLMNET for the logistic loss (-s 6).
    """

    name: str
    l1: float
    l2: float
    solver: str
    by_loss: tuple[tuple[str, str], ...] = ()

    def solver_for(self, loss: str) -> str:
        """The solver this penalty chooses with ``loss`` when ``--solver`` is not given."""
        return dict(self.by_loss).get(loss, self.solver)

    def value(self, W: np.ndarray) -> np.ndarray:
        """The penalty of each row of ``W`` (n_problems, n_weights): one number per problem."""
        terms = 0.5 * np.einsum("kj,kj->k", W, W) if self.l2 else np.zeros(W.shape[0])
        if self.l2 not in (0.0, 1.0):
            terms *= self.l2
        if self.l1:
            terms = terms + self.l1 * np.abs(W).sum(axis=1)
        return terms

    @property
    def sparse(self) -> bool:
        """An L1 term: weights exactly zero at the optimum, a model stored by its nonzero weights."""
        return self.l1 > 0


L2 = Penalty("l2", 0.0, 1.0, "dual-cd")
L1 = Penalty("l1", 1.0, 0.0, "owl-qn", (("squared-hinge", "cdn"), ("logistic", "glmnet")))
PENALTIES: dict[str, Penalty] = {p.name: p for p in (L2, L1, Penalty("elasticnet", 0.5, 0.5, "owl-qn"))}


def penalty_of(name: str, l1_ratio: float = 0.5) -> Penalty:
    """The penalty named ``name``; ``elasticnet`` with ``l1_ratio`` (its L1 term's weight; the L2's: 1 - l1_ratio)."""
    if name == "elasticnet":
        return Penalty("elasticnet", float(l1_ratio), 1.0 - float(l1_ratio), "owl-qn")
    return PENALTIES[name]


@dataclass(frozen=True)
class LiblinearSolver:
    """One of LIBLINEAR's solvers: its ``-s`` code, its ``solver_type`` (the model file's name), the problem it solves
    (penalty and loss) and blocksvm's solver of the same problem (its -s 0, 2 and 11 are Newton's, as in
    LIBLINEAR; -s 5 and 6 CDN's and newGLMNET's over the store's columns, as LIBLINEAR's; -s 4 and 21 the solvers of
    Crammer and Singer's loss and of the one-class loss).

    ``eps``: the ``-e`` that ``-s CODE`` sets, LIBLINEAR's default, where blocksvm's solver would otherwise stop on a
    rule of its own: its dual solvers' duality gap (1e-3), which can end several times (-s 7: thousands of times)
    further from the optimum than LIBLINEAR's projected-gradient rule at its default; given ``-e``, ``--tol``'s gap
    rule is off unless given too. None: the solver's own default stop is LIBLINEAR's (-s 0, 2, 5, 6, 11), or was
    chosen to match its model (-s 21's gap at 1e-6)."""

    code: int
    solver_type: str
    penalty: str
    loss: str
    solver: str
    eps: float | None = None


LIBLINEAR_SOLVERS: tuple[LiblinearSolver, ...] = tuple(
    LiblinearSolver(*row)
    for row in (
        (0, "L2R_LR", "l2", "logistic", "newton"),
        (1, "L2R_L2LOSS_SVC_DUAL", "l2", "squared-hinge", "dual-cd", 0.1),
        (2, "L2R_L2LOSS_SVC", "l2", "squared-hinge", "newton"),
        (3, "L2R_L1LOSS_SVC_DUAL", "l2", "hinge", "dual-cd", 0.1),
        (4, "MCSVM_CS", "l2", "crammer-singer", "crammer-singer", 0.1),
        (5, "L1R_L2LOSS_SVC", "l1", "squared-hinge", "cdn"),
        (6, "L1R_LR", "l1", "logistic", "glmnet"),
        (7, "L2R_LR_DUAL", "l2", "logistic", "dual-cd", 0.1),
        (11, "L2R_L2LOSS_SVR", "l2", "squared-epsilon-insensitive", "newton"),
        (12, "L2R_L2LOSS_SVR_DUAL", "l2", "squared-epsilon-insensitive", "dual-cd", 0.1),
        (13, "L2R_L1LOSS_SVR_DUAL", "l2", "epsilon-insensitive", "dual-cd", 0.1),
        (21, "ONECLASS_SVM", "l2", "one-class", "one-class"),
    )
)
LIBLINEAR_CODES: dict[int, LiblinearSolver] = {s.code: s for s in LIBLINEAR_SOLVERS}


def liblinear_code(loss: str, penalty: str = "l2") -> int | None:
    """LIBLINEAR's ``-s`` for ``loss`` with ``penalty``: its dual solver's where it has one (-s 1 for the squared hinge,
    7 for the logistic loss), else its first; None: it has none."""
    same = [s for s in LIBLINEAR_SOLVERS if (s.loss, s.penalty) == (loss, penalty)]
    return next((s.code for s in same if s.solver == "dual-cd"), same[0].code if same else None)


def liblinear_type(loss: str, penalty: str = "l2", solver: str = "") -> str:
    """The ``solver_type`` a LIBLINEAR model file names for a model of ``loss`` and ``penalty`` trained by blocksvm's
    ``solver``: the type of LIBLINEAR's solver of the same problem and method where there is one (a Newton model is
    L2R_L2LOSS_SVC, a dual CD one L2R_L2LOSS_SVC_DUAL), else the problem's first. Elastic net, which LIBLINEAR lacks,
    is written as its L1 problem (a model's predictions do not depend on the type); a loss LIBLINEAR has no solver
    for (the Perceptron's) as the L1-loss SVM's."""
    penalty = "l1" if penalty == "elasticnet" else penalty
    same = [s for s in LIBLINEAR_SOLVERS if (s.loss, s.penalty) == (loss, penalty)]
    if not same:
        return LIBLINEAR_CODES[3].solver_type
    return next((s.solver_type for s in same if s.solver == solver), same[0].solver_type)


def problem_of_type(solver_type: str) -> tuple[str, str] | None:
    """``(loss, penalty)`` of a LIBLINEAR ``solver_type``; None: unknown."""
    return next(((s.loss, s.penalty) for s in LIBLINEAR_SOLVERS if s.solver_type == solver_type), None)
