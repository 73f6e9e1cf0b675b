"""Driver of projected online gradient descent on the SVM objective (the math is in :mod:`._ogd_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import Param, positive
from blocksvm.solvers import _ogd_kernels as K
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.evaluate import correct_predictions

UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


class OGDSolver(Solver):
    """Projected online (sub)gradient descent on ``lambda/2 ||w||^2 + mean loss``, ``lambda = 1 / (l C)`` as
    Pegasos takes it (``l``: the store's rows), on the user's loss (hinge or squared hinge): one step per row,
    ``eta / sqrt(t)`` or ``1 / (lambda t)`` long (``--ogd-schedule``), then a projection onto the ball that
    holds the optimum (radius ``1 / sqrt(lambda)`` for the hinge). ``average`` gives the online-to-batch
    average of the iterates, the model to take for the SVM. Class weights scale each row's loss gradient.
    Its objective is the SVM's (``1/2 ||w||^2 + sum_i C_i loss_i``; pass estimates take each row's loss, not
    C-weighted, as the row saw it); it stops after ``max_outer`` passes.

    State: ``v`` and ``total`` (n_problems, n_features + 1) with ``w = scale v`` and the sum of the iterates
    ``total + q v``, and ``steps`` (n_problems, 4) holding ``[scale, ||w||^2, t, q]``.
    """

    name = "ogd"
    online = True
    params = (
        Param(
            "ogd_schedule",
            "sqrt",
            "OGD's steps at the t-th row: ogd_eta / sqrt(t) (sqrt) or 1 / (lambda t) "
            "(inverse; lambda = 1 / (rows C): Pegasos's steps, no eta to tune, but huge first steps when lambda "
            "is small, which the average remembers for long).",
            None,
            "one of sqrt, inverse",
            choices=("sqrt", "inverse"),
            parse=str,
            solvers=("ogd",),
        ),
        Param(
            "ogd_eta",
            1.0,
            "OGD's eta: the steps are eta / sqrt(t) with --ogd-schedule sqrt (raise it when the "
            "SVM's weights are large: large C, many rows).",
            positive,
            "a positive finite number",
            solvers=("ogd",),
        ),
    )
    state_names = ("v", "total", "steps")

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.average = params.average
        self.lam = 1.0 / (problem.n_rows * problem.C)
        self.radius = problem.loss.pegasos_radius(self.lam)
        # eta_t lambda = rate * t^-power
        self.rate, self.power = (
            (1.0, 1.0) if params.ogd_schedule == "inverse" else (float(params.ogd_eta) * self.lam, 0.5)
        )
        n_k = problem.n_problems
        self.v = np.zeros((n_k, problem.n_weights))
        self.total = np.zeros((n_k, problem.n_weights))
        self.steps = np.tile([1.0, 0.0, 1.0, 0.0], (n_k, 1))

    def step(self, block, W, local, seeds) -> BlockReport:
        """One pass of OGD steps over ``block``; ``W`` is ``v``, the direction of ``w = scale v``."""
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        stats = np.empty((p.n_problems, 3))
        for k in range(p.n_problems):
            stats[k] = K.ogd_block(
                block.indptr,
                block.indices,
                block.data,
                targets[k],
                W[k],
                self.total[k],
                self.steps[k],
                p.bias,
                self.lam,
                self.radius,
                self.rate,
                self.power,
                p.loss.table,
                UNWEIGHTED,
                p.costs[k] / p.C,
                int(seeds[k]),
            )
        correct = int(stats[0, K.CORRECT_SEEN]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, K.UPDATES].sum())
        )

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.v, {}, seeds)

    def weights(self) -> np.ndarray:
        if self.average:
            return np.stack([K.average(self.v[k], self.total[k], self.steps[k]) for k in range(len(self.v))])
        return self.steps[:, K.SCALE, None] * self.v
