"""The Perceptron, and the averaged Perceptron, on one block.

Rosenblatt's rule (Rosenblatt 1958; Freund & Schapire, "Large Margin Classification Using the
Perceptron Algorithm", Machine Learning 1999, for the averaged variant)::

    for each row i, in a random order:
        if y_i w.x_i <= 0:   w <- w + eta_i y_i x_i      (eta_i: the class weight of y_i times the row's instance
                                                          weight, 1 without weights)

The averaged Perceptron returns ``1/T sum_t w_t``, the mean of ``w`` after each of the ``T`` rows
seen so far; it costs O(nnz) per update by Daumé's trick: ``u <- u + c y_i x_i`` on every update
made at step ``c`` (counted from 1), and the mean is ``((T + 1) w - u) / T``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, add_row, judge, online_pass, visited_row


@njit(cache=True, nogil=True)
def perceptron_block(rows, y, w, state, hyper, setup, seed):
    """One pass of Perceptron updates over a block (the online kernel contract: :mod:`._common`).

    ``w``: the weights. ``state``: ``u`` (n_features + 1,), ``sum c eta y_i x_i`` over the updates, and
    ``count`` (1,), ``c`` = 1 + rows seen so far. ``hyper``: empty. ``UPDATES`` counts the mistakes.
    """
    indptr, indices, data, weights = rows
    u, count = state
    bias, loss, cost, step = setup
    n_w = w.shape[0] - 1
    order, stats = online_pass(indptr, seed)
    c = count[0]
    for s in range(order.shape[0]):
        i, weight, start, stop = visited_row(order, s, indptr, weights)
        if weight == 0.0:
            continue  # a row of weight 0 is not there
        dot = w[n_w] * bias if bias > 0 else 0.0
        for k in range(start, stop):
            dot += w[np.uint32(indices[k])] * data[k]
        label = 1 if y[i] > 0 else 0
        margin = y[i] * dot
        judge(stats, loss, cost, label, margin, weight)
        if not margin > 0:  # w <- w + eta y_i x_i, and u <- u + c eta y_i x_i (eta: the row's class and own weight)
            add_row(w, u, c, indptr, indices, data, i, step[label] * weight * y[i], bias)
            stats[UPDATES] += 1
        c += 1.0
    count[0] = c
    return stats
