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
``tau`` of its rows, and so does a row's instance weight, as scikit-learn's ``SGDClassifier(learning_rate="pa1"|
"pa2")`` scales it by ``class_weight`` and ``sample_weight``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, add_row, judge, online_pass, slack_loss, visited_row


@njit(cache=True, nogil=True)
def pa_block(rows, y, w, state, hyper, setup, seed):
    """One pass of Passive-Aggressive updates over a block (the online kernel contract: :mod:`._common`).

    ``w``: the weights. ``state``: ``(u, count)``, Daume's sum and the step count of the mean of the iterates
    (``AveragingSolver``). ``hyper``: ``[cap, damping]``, the variant: ``tau = min(cap, l / (||x||^2 +
    damping))``. The loss table is the hinge's: ``l``.
    """
    indptr, indices, data, weights = rows
    u, count = state
    bias, loss, cost, step = setup
    cap, damping = hyper[0], hyper[1]
    n_w = w.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    order, stats = online_pass(indptr, seed)
    c = count[0]  # the step of the row
    for s in range(order.shape[0]):
        i, weight, start, stop = visited_row(order, s, indptr, weights)  # its instance weight
        if weight == 0.0:
            continue  # a row of weight 0 is not there
        # w.x and ||x||^2 in one sweep of the row
        dot = w[n_w] * bias if bias > 0 else 0.0
        sq_norm = 0.0
        for k in range(start, stop):
            x = np.float64(data[k])
            dot += w[np.uint32(indices[k])] * x
            sq_norm += x * x
        sq_norm += bias_sq
        label = 1 if y[i] > 0 else 0
        slack = judge(stats, loss, cost, label, y[i] * dot, weight)
        at, c = c, c + 1.0  # the row's step, and the next row's
        if slack <= 0 or sq_norm <= 0:
            continue  # passive: the margin is met; or x = 0: tau = 0, nothing can change
        tau = min(cap, slack_loss(loss, slack) / (sq_norm + damping))
        # aggressive: w <- w + tau y x (and Daume's sum, for the mean of the iterates)
        add_row(w, u, at, indptr, indices, data, i, tau * y[i] * step[label] * weight, bias)
        stats[UPDATES] += 1
    count[0] = c
    return stats
