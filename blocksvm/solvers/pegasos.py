"""Driver of mini-batch Pegasos over blocks (the math is in :mod:`._pegasos_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import AVERAGE, LOSS, C, Param, count
from blocksvm.solvers import _pegasos_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.solvers.base import BlockReport, BlockSolver, Resources
from blocksvm.solvers.evaluate import correct_predictions, counted, kernel_weights

SCHEDULE_HELP = (
    "steps 1 / (lambda t) (inverse, the paper's; lambda = 1 / (rows C)) or 1 / (lambda t + L) (smooth: L the "
    "curvature of the loss on the step's rows, 2 ||x||^2 for the squared hinge, ||x||^2 / 4 for the logistic loss, "
    "0 for the hinge; the first steps, 1 / lambda long with inverse, then never exceed 1 / L, and a squared-hinge "
    "iterate does not swing for tens of passes: docs/TUNING.md, Defaults)."
)


class PegasosSolver(BlockSolver):
    """Block-wise Pegasos with ``lambda = 1 / (l C)`` and a step counter that never restarts.

    State: ``v`` (n_problems, n_features + 1) with ``w = scale * v``, ``steps`` (n_problems, 3)
    holding ``[scale, ||w||^2, t]``, and the running sum of block-end iterates ``average_sum``
    (n_problems, n_features + 1) with its count ``average_count`` (1,), used when ``average``.
    """

    name = "pegasos"
    losses = ("hinge", "squared-hinge")  # its ball and sub-gradients are the hinge family's
    params = (
        C,
        LOSS,
        AVERAGE,
        Param("batch_size", 1, "Pegasos mini-batch size r.", count, "an integer >= 1", parse=int),
        Param(
            "pegasos_schedule",
            "smooth",
            "Pegasos's " + SCHEDULE_HELP,
            None,
            "one of inverse, smooth",
            choices=("inverse", "smooth"),
            parse=str,
        ),
    )
    state_names = ("v", "steps", "average_sum", "average_count")

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.batch_size = params.batch_size
        self.average = params.average
        self.lam = 1.0 / (problem.n_rows * problem.C)
        # the ball holds the optimum of lambda/2 ||w||^2 + 1/l sum_i weight_i loss_i, whose value at 0 grows with the
        # rows' mean weight (1 without instance weights)
        self.radius = problem.loss.pegasos_radius(self.lam / (problem.total_weight / problem.n_rows))
        self.curvature = problem.loss.curvature if params.pegasos_schedule == "smooth" else 0.0
        n_k = problem.n_problems
        self.v = np.zeros((n_k, problem.n_weights))
        self.steps = np.tile([1.0, 0.0, 1.0], (n_k, 1))
        self.average_sum = np.zeros((n_k, problem.n_weights))
        self.average_count = np.zeros(1)
        self.outer = 1

    def step(self, block, W, local, seeds) -> BlockReport:
        """One pass of Pegasos steps over ``block``; ``W`` is ``v``, the direction of ``w = scale v``."""
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        sq_norms = row_norms_squared(block.indptr, block.data)
        stats = np.empty((p.n_problems, 2))
        for k in range(p.n_problems):
            stats[k] = K.solve_block(
                (block.indptr, block.indices, block.data, sq_norms, kernel_weights(block)),
                targets[k],
                W[k],
                self.steps[k],
                np.array([self.lam, self.radius, self.batch_size, self.curvature]),
                (p.bias, p.loss.table, p.costs[k], p.class_weights[k]),
                int(seeds[k]),
            )
        if self.average and self.outer >= 2:
            self.average_sum += self.steps[:, K.SCALE, None] * self.v
            self.average_count += 1
        correct = counted(stats[0, K.CORRECT_SEEN], block) if seen_correct is None else seen_correct
        return BlockReport(loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=block.n_rows)

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.v, {}, seeds)

    def start_pass(self, outer: int) -> None:
        self.outer = outer  # averaging starts with the second pass

    def weights(self) -> np.ndarray:
        if self.average and self.average_count[0] > 0:
            return self.average_sum / self.average_count[0]
        return self.steps[:, K.SCALE, None] * self.v
