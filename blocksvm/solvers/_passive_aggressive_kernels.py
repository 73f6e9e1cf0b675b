"""Passive-Aggressive updates (PA, PA-I, PA-II) on one block.

Crammer, Dekel, Keshet, Shalev-Shwartz & Singer, "Online Passive-Aggressive Algorithms", JMLR 7
(2006), Figure 1 (binary classification). For each row, with the hinge loss
``l = max(0, 1 - y w.x)`` measured before the update::

    PA:     tau = l / ||x||^2
    PA-I:   tau = min(C, l / ||x||^2)
    PA-II:  tau = l / (||x||^2 + 1/(2C))
    w <- w + tau y x

The three are one rule, ``tau = min(cap, l / (||x||^2 + damping))``, whose ``(cap, damping)`` is
``(inf, 0)``, ``(C, 0)`` or ``(inf, 1/(2C))``: the variant is data, not a branch. ``||x||^2``
counts the bias feature. A row with ``||x||^2 = 0`` (no features and no bias) gets ``tau = 0``:
its ``x`` is zero, so no step could change ``w`` (and PA's ``l / 0`` is not taken). A class weight scales the step
``tau`` of its rows, as scikit-learn's ``SGDClassifier(learning_rate="pa1"|"pa2")`` does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.solvers._common import visit_order

# Indices into the stats array pa_block returns.
LOSS_SEEN, CORRECT_SEEN, UPDATES = range(3)


@njit(cache=True, nogil=True)
def pa_block(indptr, indices, data, y, w, bias, loss, cost, step, cap, damping, seed):
    """One pass of Passive-Aggressive updates over a block's rows (file order when ``seed < 0``).

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the block.
    y : ndarray of float64, shape (n_rows,)
        +1 or -1.
    w : ndarray of float64, shape (n_features + 1,)
        Weights, updated in place; last entry for the bias feature of value ``bias`` (none when
        ``bias <= 0``).
    loss : ndarray of float64, shape (3,)
        The loss table ``[threshold, linear, quadratic]`` of :mod:`blocksvm.losses` (the hinge: ``l``).
    cost : ndarray of float64, shape (2,)
        Weight of the reported loss of negative and positive rows.
    step : ndarray of float64, shape (2,)
        Multiplier of ``tau`` for negative and positive rows: the class weights (1 without them).
    cap, damping : float
        The variant: ``tau = min(cap, l / (||x||^2 + damping))``.
    seed : int

    Returns
    -------
    stats : ndarray of float64, shape (3,)
        Loss sum and rows with a positive margin, each at the ``w`` the row saw; rows updated.
    """
    n_rows = indptr.shape[0] - 1
    n_w = w.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    stats = np.zeros(3, np.float64)
    for s in range(n_rows):
        i = order[s]
        start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
        # w.x and ||x||^2 in one sweep of the row
        dot = w[n_w] * bias if bias > 0 else 0.0
        sq_norm = 0.0
        for k in range(start, stop):
            x = np.float64(data[k])
            dot += w[np.uint32(indices[k])] * x
            sq_norm += x * x
        sq_norm += bias_sq
        margin = y[i] * dot
        if margin > 0:
            stats[CORRECT_SEEN] += 1
        slack = loss[0] - margin
        if slack <= 0:
            continue  # passive: the margin is met
        label = 1 if y[i] > 0 else 0
        hinge = slack * (loss[1] + loss[2] * slack)
        stats[LOSS_SEEN] += cost[label] * hinge
        if sq_norm <= 0:
            continue  # x = 0: tau = 0, nothing can change
        tau = min(cap, hinge / (sq_norm + damping))
        # aggressive: w <- w + tau y x
        d = tau * y[i] * step[label]
        for k in range(start, stop):
            w[np.uint32(indices[k])] += data[k] * d
        if bias > 0:
            w[n_w] += bias * d
        stats[UPDATES] += 1
    return stats
