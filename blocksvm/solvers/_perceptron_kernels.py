"""The Perceptron, and the averaged Perceptron, on one block.

Rosenblatt's rule (Rosenblatt 1958; Freund & Schapire, "Large Margin Classification Using the
Perceptron Algorithm", Machine Learning 1999, for the averaged variant)::

    for each row i, in a random order:
        if y_i w.x_i <= 0:   w <- w + eta_i y_i x_i      (eta_i: the class weight of y_i, 1 without weights)

The averaged Perceptron returns ``1/T sum_t w_t``, the mean of ``w`` after each of the ``T`` rows
seen so far; it costs O(nnz) per update by Daumé's trick: ``u <- u + c y_i x_i`` on every update
made at step ``c`` (counted from 1), and the mean is ``((T + 1) w - u) / T``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.solvers._common import visit_order

# Indices into the stats array perceptron_block returns.
LOSS_SEEN, CORRECT_SEEN, MISTAKES = range(3)


@njit(cache=True, nogil=True)
def perceptron_block(indptr, indices, data, y, w, u, count, bias, loss, cost, step, seed):
    """One pass of Perceptron updates over a block's rows in a random order.

    The order is ``visit_order``'s: file order when ``seed < 0``.

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the block.
    y : ndarray of float64, shape (n_rows,)
        +1 or -1.
    w : ndarray of float64, shape (n_features + 1,)
        Weights; last entry for the bias feature of value ``bias`` (none when ``bias <= 0``).
    u : ndarray of float64, shape (n_features + 1,)
        ``sum c y_i x_i`` over the updates, for the average ``w - u / c``.
    count : ndarray of float64, shape (1,)
        ``c``: 1 + rows seen so far, updated in place.
    loss : ndarray of float64, shape (3,)
        The loss table of :mod:`blocksvm.losses` measured at the ``w`` each row saw.
    cost : ndarray of float64, shape (2,)
        Weight of the loss of negative and positive rows (in the reported loss).
    step : ndarray of float64, shape (2,)
        Size of the update of negative and positive rows: the class weights (1 without them).
    seed : int

    Returns
    -------
    stats : ndarray of float64, shape (3,)
        Loss sum and rows with a positive margin, each at the ``w`` the row saw; updates made.
    """
    n_rows = indptr.shape[0] - 1
    n_w = w.shape[0] - 1
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    stats = np.zeros(3, np.float64)
    c = count[0]
    for s in range(n_rows):
        i = order[s]
        dot = w[n_w] * bias if bias > 0 else 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            dot += w[np.uint32(indices[k])] * data[k]
        margin = y[i] * dot
        slack = loss[0] - margin
        if slack > 0:
            stats[LOSS_SEEN] += cost[1 if y[i] > 0 else 0] * (slack * (loss[1] + loss[2] * slack))
        if margin > 0:
            stats[CORRECT_SEEN] += 1
        else:  # w <- w + eta y_i x_i, and u <- u + c eta y_i x_i (eta: the row's class weight)
            d = step[1 if y[i] > 0 else 0] * y[i]
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                j = np.uint32(indices[k])
                w[j] += d * data[k]
                u[j] += c * d * data[k]
            if bias > 0:
                w[n_w] += d * bias
                u[n_w] += c * d * bias
            stats[MISTAKES] += 1
        c += 1.0
    count[0] = c
    return stats
