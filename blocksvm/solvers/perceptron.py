"""Driver of the (averaged) Perceptron over blocks (the math is in :mod:`._perceptron_kernels`)."""

from __future__ import annotations

from blocksvm.losses import PERCEPTRON
from blocksvm.params import AVERAGE
from blocksvm.solvers import _perceptron_kernels as K
from blocksvm.solvers.base import AVERAGING_ARRAYS, AveragingSolver, StateArray


class PerceptronSolver(AveragingSolver):
    """The Perceptron: ``w <- w + y_i x_i`` on every row with ``y_i w.x_i <= 0`` (times the row's class
    weight, as scikit-learn's ``Perceptron(class_weight=...)``; C itself plays no part); ``average`` gives the
    averaged Perceptron. It has no regularizer and no dual: its objective is the Perceptron loss
    ``sum_i max(0, -y_i w.x_i)`` of the pass (progressive), and it stops after ``max_outer`` passes.

    State: ``w`` and ``u`` (n_problems, n_features + 1) and the step counts ``count`` (n_problems, 1).
    """

    name = "perceptron"
    params = (AVERAGE,)
    fixed_loss = PERCEPTRON
    arrays = (StateArray("w", signed=True), *AVERAGING_ARRAYS)
    kernel = staticmethod(K.perceptron_block)
