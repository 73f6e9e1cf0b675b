"""L1-FOBOS (truncated gradient) on one block, with lazy shrinkage.

Duchi & Singer, "Efficient Online and Batch Learning Using Forward Backward Splitting", JMLR 2009,
Section 5 (the L1 case); Langford, Li & Zhang, "Sparse Online Learning via Truncated Gradient",
JMLR 2009, whose truncated gradient with threshold theta = inf and K = 1 is the same rule. For each
row ``x_t``, with step ``eta_t = eta / sqrt(t)`` or ``eta``::

    w <- w - eta_t g_t                                   (g_t = -y_t l'(y_t w.x_t) x_t)
    w_i <- sgn(w_i) max(0, |w_i| - eta_t lambda1)        for every i

``l'`` is the derivative of the user's loss of :mod:`blocksvm.losses` (``row_slope`` of :mod:`._common`:
``1 / (1 + exp(m))`` for the logistic loss, ``linear + 2 quadratic s`` for the hinge family when the slack
``s = max(0, threshold - m)`` is positive, else 0). The shrinkage of
coordinates the row does not touch is deferred, as in both papers' lazy updates: ``U`` is the
shrinkage ``lambda1 sum_s eta_s`` of all steps so far, ``last_i`` the value of ``U`` when ``w_i``
was last brought up to date, and a row first applies ``sgn(w_i) max(0, |w_i| - (U - last_i))`` to
its own coordinates only. A row costs O(nnz); the full ``w`` applies what is still owed.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, judge_slope, online_pass, visited_row

# Indices into the clock array (per problem): the step count t and the shrinkage U.
STEP, SHRINK = range(2)
N_CLOCK = 2


@njit(cache=True, nogil=True, inline="always")
def shrunk(w, owed):
    """``sgn(w) max(0, |w| - owed)``."""
    if owed <= 0.0:
        return w
    return w - math.copysign(owed, w) if abs(w) > owed else 0.0


@njit(cache=True, nogil=True)
def fobos_block(rows, y, w, state, hyper, setup, seed):
    """One pass of L1-FOBOS over a block (the online kernel contract: :mod:`._common`).

    ``w``: the weights, each short of the shrinkage ``U - last_i`` it is owed. ``state``: ``(last, clock)``;
    ``last`` (n_features + 1,) the shrinkage already applied to each weight, ``clock`` (2,) ``[t, U]``: steps
    taken and shrinkage so far. ``hyper``: ``[eta, sqrt_steps, lambda1]`` (``eta_t = eta / sqrt(t)`` when
    ``sqrt_steps`` is 1, else ``eta``). ``UPDATES`` counts the rows with a nonzero gradient.
    """
    indptr, indices, data, weights = rows
    last, clock = state
    bias, loss, cost, step = setup
    eta, sqrt_steps, l1 = hyper[0], hyper[1] > 0, hyper[2]
    n_w = w.shape[0] - 1
    order, stats = online_pass(indptr, seed)
    t, owed_total = clock[STEP], clock[SHRINK]
    for s in range(order.shape[0]):
        i, own, start, stop = visited_row(order, s, indptr, weights)  # the row's instance weight
        if own == 0.0:
            continue  # a row of weight 0 is not there
        t += 1.0
        eta_t = eta / math.sqrt(t) if sqrt_steps else eta
        # bring the row's weights up to date, then w.x
        dot = 0.0
        if bias > 0:
            w[n_w] = shrunk(w[n_w], owed_total - last[n_w])
            last[n_w] = owed_total
            dot = w[n_w] * bias
        for k in range(start, stop):
            j = np.uint32(indices[k])
            w[j] = shrunk(w[j], owed_total - last[j])
            last[j] = owed_total
            dot += w[j] * data[k]
        label = 1 if y[i] > 0 else 0
        slope = judge_slope(stats, loss, cost, label, y[i] * dot, own)
        if slope > 0:  # w <- w - eta_t g_t (g_t times the row's class and own weight)
            stats[UPDATES] += 1
            d = eta_t * y[i] * step[label] * own * slope
            for k in range(start, stop):
                w[np.uint32(indices[k])] += d * data[k]
            if bias > 0:
                w[n_w] += d * bias
        owed_total += eta_t * l1  # this step's shrinkage, owed by every weight
    clock[STEP], clock[SHRINK] = t, owed_total
    return stats


@njit(cache=True, nogil=True)
def fobos_weights(w, last, owed_total):
    """The weights with all shrinkage applied (a new array; the state is left as it is)."""
    out = np.empty_like(w)
    for j in range(w.shape[0]):
        out[j] = shrunk(w[j], owed_total - last[j])
    return out
