"""Exact evaluation of a fixed ``W`` on a block: losses, correct predictions, squared errors (regression)."""

from __future__ import annotations

import numpy as np

from blocksvm.decision import decision_values
from blocksvm.solvers._common import loss_and_correct
from blocksvm.solvers.problem import Problem


def evaluate_block(problem: Problem, W: np.ndarray, block) -> tuple[np.ndarray, int, float]:
    """``sum C_i loss_i`` per problem (shape (n_problems,)), correctly predicted rows and (regression) the sum of
    squared errors, at ``W``."""
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
        )
        if problem.n_problems == 1:
            correct = correct_k
    if problem.n_problems > 1:
        correct = correct_predictions(problem, W, block)
    return losses, int(correct), float(squared)


def correct_predictions(problem: Problem, W: np.ndarray, block) -> int:
    """Rows of ``block`` whose predicted class (at ``W``) is their label."""
    values = decision_values(block.indptr, block.indices, block.data, W, problem.bias)
    if problem.n_problems == 1:
        predicted = np.where(values[:, 0] > 0, problem.classes[1], problem.classes[0])
    else:
        predicted = problem.classes[np.argmax(values, axis=1)]
    return int(np.count_nonzero(predicted == block.labels))
