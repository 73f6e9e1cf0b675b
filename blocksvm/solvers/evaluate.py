"""Exact evaluation of a fixed ``W`` on a block: losses, correct predictions, squared errors (regression)."""

from __future__ import annotations

import numpy as np

from blocksvm.decision import decision_values
from blocksvm.losses import CLASSIFICATION, MULTICLASS, REGRESSION
from blocksvm.solvers._common import loss_and_correct
from blocksvm.solvers.problem import Problem

NO_WEIGHTS = np.zeros(0)  # the kernels' rows without instance weights: every row weighs 1


def kernel_weights(rows) -> np.ndarray:
    """The rows' instance weights as the kernels take them (:data:`NO_WEIGHTS` when they have none)."""
    return NO_WEIGHTS if rows is None or rows.weights is None else rows.weights


def evaluate_block(problem: Problem, W: np.ndarray, block) -> tuple[np.ndarray, int | float, float]:
    """``sum C_i loss_i`` per problem (shape (n_problems,)), correctly predicted rows and (regression) the sum of
    squared errors, at ``W``; each row counted ``weight_i`` times when the block has instance weights (``C_i``
    includes the weight, and the correct rows are a sum of weights); Crammer and Singer's problem:
    :func:`multiclass_losses`."""
    if problem.loss.kind == MULTICLASS:
        return multiclass_losses(problem, W, block)
    targets = problem.targets(block.labels)
    losses = np.empty(problem.n_problems)
    correct, squared = 0, 0.0
    for k in range(problem.n_problems):
        losses[k], correct_k, squared = loss_and_correct(
            block.indptr,
            block.indices,
            block.data,
            targets[k],
            W[k],
            problem.bias,
            problem.loss.table,
            problem.costs[k],
            kernel_weights(block),
        )
        if problem.n_problems == 1:
            correct = correct_k
    if problem.n_problems > 1 or (problem.task == CLASSIFICATION and not knows_labels(problem, block)):
        correct = correct_predictions(problem, W, block)  # (a label not among the classes: never predicted right)
    return losses, counted(correct, block), float(squared)


def knows_labels(problem: Problem, rows) -> bool:
    """Every label of ``rows`` is one of the problem's classes (a validation store's may not be)."""
    return bool(np.isin(rows.labels, problem.classes).all())


def counted(correct: float, rows) -> int | float:
    """A count of rows as an int, or, for rows with instance weights, a sum of weights."""
    return int(correct) if rows.weights is None else float(correct)


def multiclass_losses(problem: Problem, W: np.ndarray, block) -> tuple[np.ndarray, int, float]:
    """Crammer and Singer's loss at ``W`` (one row per class): each class's ``sum C_i max(0, 1 + max_{m != y_i}
    w_m.x_i - w_{y_i}.x_i)`` over its rows, shape (n_classes,), the rows whose arg-max is their class, and 0."""
    values = decision_values(block.indptr, block.indices, block.data, W, problem.bias)  # (rows, classes)
    known = np.isin(block.labels, problem.classes)  # (a validation store's other labels: no loss, never right)
    y = np.minimum(np.searchsorted(problem.classes, block.labels), len(problem.classes) - 1)
    rows = np.arange(len(y))
    own = values[rows, y]
    others = values.copy()
    others[rows, y] = -np.inf
    slack = 1.0 + others.max(axis=1, initial=-np.inf) - own
    costs = problem.costs[y, 1] * known
    losses = np.bincount(y, costs * problem.loss.value(1.0 - slack), minlength=len(problem.classes))
    correct = int(np.count_nonzero((np.argmax(values, axis=1) == y) & known))
    return losses, correct, 0.0


def correct_predictions(problem: Problem, W: np.ndarray, block) -> int | float:
    """Rows of ``block`` whose predicted class (at ``W``) is their label (with instance weights: their weight)."""
    values = decision_values(block.indptr, block.indices, block.data, W, problem.bias)
    right = predicted_classes(problem.classes, values) == block.labels
    return int(np.count_nonzero(right)) if block.weights is None else float(np.dot(right, block.weights))


def predicted_classes(classes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The class each row's decision values (rows, problems) predict: one problem's sign (0 is the negative
    class), the arg-max of one-vs-rest."""
    if values.shape[1] == 1:
        return np.where(values[:, 0] > 0, classes[1], classes[0])
    return classes[np.argmax(values, axis=1)]


def evaluate_folds(problem: Problem, W: np.ndarray, block) -> tuple[np.ndarray, np.ndarray]:
    """Cross-validation at ``W`` (a folded problem's, :meth:`Problem.folded`) on ``block``.

    Returns each problem's ``sum C_i loss_i`` over its training rows, shape (n_problems,), and per fold its
    held-out rows, their correct predictions (each fold's own problems predict its rows: the sign of one, the
    arg-max of one-vs-rest) and their squared errors (regression), shape (folds, 3). With instance weights every
    row counts ``weight_i`` times: in ``C_i``, and in the held-out figures (sums of weights, as scikit-learn's
    ``LogisticRegressionCV`` scores its folds with their ``sample_weight``).
    """
    values = decision_values(block.indptr, block.indices, block.data, W, problem.bias)  # (rows, n_problems)
    folds = problem.row_folds(np.arange(block.row_offset, block.row_offset + block.n_rows))
    targets = problem.targets(block.labels)  # (n_problems, rows)
    training = folds[None, :] != problem.held_out[:, None]
    regression = problem.task == REGRESSION
    z = targets - values.T if regression else targets * values.T
    negative = problem.costs[:, 1:] if regression else problem.costs[:, :1]  # regression: one cost for every row
    costs = np.where(targets > 0, problem.costs[:, 1:], negative)
    if block.weights is not None:
        costs = costs * block.weights
    losses = np.sum(costs * problem.loss.value(z) * training, axis=1)
    held = np.zeros((problem.folds, 3))
    for f in range(problem.folds):
        rows = folds == f
        mine = values[rows][:, f * problem.per_fold : (f + 1) * problem.per_fold]
        labels = block.labels[rows]
        weights = None if block.weights is None else block.weights[rows]
        held[f, 0] = len(labels) if weights is None else weights.sum()
        if regression:
            squared = (mine[:, 0] - labels) ** 2
            held[f, 2] = float(np.sum(squared if weights is None else weights * squared))
            continue
        right = predicted_classes(problem.classes, mine) == labels
        held[f, 1] = np.count_nonzero(right) if weights is None else np.dot(right, weights)
    return losses, held
