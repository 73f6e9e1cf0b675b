"""Driver of the (averaged) Perceptron over blocks (the math is in :mod:`._perceptron_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.losses import PERCEPTRON, Loss
from blocksvm.solvers import _perceptron_kernels as K
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.evaluate import correct_predictions

UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


class PerceptronSolver(Solver):
    """The Perceptron: ``w <- w + y_i x_i`` on every row with ``y_i w.x_i <= 0`` (times the row's class
    weight, as scikit-learn's ``Perceptron(class_weight=...)``; C itself plays no part); ``average`` gives the
    averaged Perceptron. It has no regularizer and no dual: its objective is the Perceptron loss
    ``sum_i max(0, -y_i w.x_i)`` of the pass (progressive), and it stops after ``max_outer`` passes.

    State: ``w`` and ``u`` (n_problems, n_features + 1) and the step counts ``count`` (n_problems, 1).
    """

    name = "perceptron"
    online = True
    state_names = ("w", "u", "count")

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.average = params.average
        n_k = problem.n_problems
        self.w = np.zeros((n_k, problem.n_weights))
        self.u = np.zeros((n_k, problem.n_weights))
        self.count = np.ones((n_k, 1))

    @classmethod
    def loss_of(cls, params) -> Loss:
        return PERCEPTRON

    def step(self, block, W, local, seeds) -> BlockReport:
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        stats = np.empty((p.n_problems, 3))
        for k in range(p.n_problems):
            stats[k] = K.perceptron_block(
                block.indptr,
                block.indices,
                block.data,
                targets[k],
                W[k],
                self.u[k],
                self.count[k],
                p.bias,
                p.loss.table,
                UNWEIGHTED,
                p.costs[k] / p.C,
                int(seeds[k]),
            )
        correct = int(stats[0, K.CORRECT_SEEN]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, K.MISTAKES].sum())
        )

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.w, {}, seeds)

    def start_from(self, W: np.ndarray) -> None:
        self.w[...] = W
        self.u[...] = 0.0
        self.count[...] = 1.0

    def weights(self) -> np.ndarray:
        if not self.average:
            return self.w
        # mean of w after each of the T = count - 1 rows seen: ((T + 1) w - u) / T
        return self.w + (self.w - self.u) / np.maximum(self.count - 1.0, 1.0)

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        return {"loss": np.asarray(loss_sums, dtype=float)}
