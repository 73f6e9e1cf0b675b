"""Driver of projected online gradient descent on the SVM objective (the math is in :mod:`._ogd_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import AVERAGE, LOSS, C, Param, positive
from blocksvm.solvers import _ogd_kernels as K
from blocksvm.solvers.base import OnlineSolver, Resources, Solver, StateArray
from blocksvm.solvers.pegasos import SCHEDULE_HELP


class OGDSolver(OnlineSolver):
    """Projected online (sub)gradient descent on ``lambda/2 ||w||^2 + mean loss``, ``lambda = 1 / (l C)`` as
    Pegasos takes it (``l``: the store's rows), on the user's loss (hinge, squared hinge or logistic): one step per
    row, ``eta / sqrt(t)``, ``1 / (lambda t)`` or ``1 / (lambda t + L)`` long (``--ogd-schedule``), then a projection
    onto the ball that holds the optimum (radius ``1 / sqrt(lambda)`` for the hinge). ``average`` gives the
    online-to-batch average of the iterates, the model to take for the SVM. Class weights scale each row's loss
    gradient.
    Its objective is the SVM's (``1/2 ||w||^2 + sum_i C_i loss_i``; pass estimates take each row's loss, not
    C-weighted, as the row saw it); it stops after ``max_outer`` passes.

    State: ``v`` and ``total`` (n_problems, n_features + 1) with ``w = scale v`` and the sum of the iterates
    ``total + q v``, and ``steps`` (n_problems, 4) holding ``[scale, ||w||^2, t, q]``.
    """

    name = "ogd"
    params = (
        C,
        LOSS,
        AVERAGE,
        Param(
            "ogd_schedule",
            "smooth",
            "OGD's steps at the t-th row: ogd_eta / sqrt(t) (sqrt), or Pegasos's " + SCHEDULE_HELP,
            None,
            "one of sqrt, inverse, smooth",
            choices=("sqrt", "inverse", "smooth"),
            parse=str,
        ),
        Param(
            "ogd_eta",
            1.0,
            "OGD's eta: the steps are eta / sqrt(t) with --ogd-schedule sqrt (raise it when the SVM's weights are "
            "large: large C, many rows).",
            positive,
            "a positive finite number",
        ),
    )
    arrays = (
        StateArray("v", signed=True),
        StateArray("total", signed=True),
        StateArray("steps", K.N_STATE, (1.0, 0.0, 1.0, 0.0)),
    )
    kernel = staticmethod(K.ogd_block)
    objective_terms = Solver.objective_terms  # the SVM's objective
    warm_starts = False  # its step count and average are more than a model's weights

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.average = params.average

    def hyper_parameters(self, params, problem) -> tuple[float, float, float, float, float]:
        """``[lambda, R, rate, power, curvature]``: ``eta_t lambda = rate (t + curvature ||x_t||^2 / lambda)^-power``
        (``--ogd-schedule``: sqrt, inverse or smooth)."""
        lam = 1.0 / (problem.n_rows * problem.C)
        # the ball of lambda/2 ||w||^2 + 1/l sum_i weight_i loss_i grows with the rows' mean weight (1 without
        # instance weights, and in a stream, whose weights are still to come)
        radius = problem.loss.pegasos_radius(lam / (problem.total_weight / problem.n_rows))
        if params.ogd_schedule == "sqrt":
            return lam, radius, float(params.ogd_eta) * lam, 0.5, 0.0
        smooth = problem.loss.curvature if params.ogd_schedule == "smooth" else 0.0
        return lam, radius, 1.0, 1.0, smooth

    def weights(self) -> np.ndarray:
        if self.average:
            return np.stack([K.average(self.v[k], self.total[k], self.steps[k]) for k in range(len(self.v))])
        return self.steps[:, K.SCALE, None] * self.v
