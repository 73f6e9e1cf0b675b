"""L1-FOBOS (truncated gradient) on one block, with lazy shrinkage.

Duchi & Singer, "Efficient Online and Batch Learning Using Forward Backward Splitting", JMLR 2009,
Section 5 (the L1 case); Langford, Li & Zhang, "Sparse Online Learning via Truncated Gradient",
JMLR 2009, whose truncated gradient with threshold theta = inf and K = 1 is the same rule. For each
row ``x_t``, with step ``eta_t = eta / sqrt(t)`` or ``eta``::

    w <- w - eta_t g_t                                   (g_t = -y_t l'(y_t w.x_t) x_t)
    w_i <- sgn(w_i) max(0, |w_i| - eta_t lambda1)        for every i

``l'`` is the derivative of the user's loss of :mod:`blocksvm.losses` (``-l'(m) = linear + 2
quadratic s`` when the slack ``s = max(0, threshold - m)`` is positive, else 0). The shrinkage of
coordinates the row does not touch is deferred, as in both papers' lazy updates: ``U`` is the
shrinkage ``lambda1 sum_s eta_s`` of all steps so far, ``last_i`` the value of ``U`` when ``w_i``
was last brought up to date, and a row first applies ``sgn(w_i) max(0, |w_i| - (U - last_i))`` to
its own coordinates only. A row costs O(nnz); the full ``w`` applies what is still owed.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import visit_order

# Indices into the clock array (per problem): the step count t and the shrinkage U.
STEP, SHRINK = range(2)
N_CLOCK = 2
# Indices into the stats array fobos_block returns.
LOSS_SEEN, CORRECT_SEEN, UPDATES = range(3)


@njit(cache=True, nogil=True, inline="always")
def shrunk(w, owed):
    """``sgn(w) max(0, |w| - owed)``."""
    if owed <= 0.0:
        return w
    return w - math.copysign(owed, w) if abs(w) > owed else 0.0


@njit(cache=True, nogil=True)
def fobos_block(indptr, indices, data, y, w, last, clock, bias, loss, cost, step, eta, sqrt_steps, l1, seed):
    """One pass of L1-FOBOS over a block's rows in a random order (file order when ``seed < 0``).

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the block.
    y : ndarray of float64, shape (n_rows,)
        +1 or -1.
    w, last : ndarray of float64, shape (n_features + 1,)
        Weights (each short of the shrinkage ``U - last_i`` it is owed) and the shrinkage already
        applied to each, updated in place; last entry for the bias feature of value ``bias`` (none
        when ``bias <= 0``).
    clock : ndarray of float64, shape (2,)
        ``[t, U]``: steps taken and shrinkage so far, updated in place.
    loss : ndarray of float64, shape (3,)
        The loss table ``[threshold, linear, quadratic]`` of :mod:`blocksvm.losses`.
    cost : ndarray of float64, shape (2,)
        Weight of the reported loss of negative and positive rows.
    step : ndarray of float64, shape (2,)
        Multiplier of the gradient of negative and positive rows: the class weights (1 without them).
    eta : float
    sqrt_steps : bool
        ``eta_t = eta / sqrt(t)`` (True) or ``eta`` (False).
    l1 : float
        lambda1.
    seed : int

    Returns
    -------
    stats : ndarray of float64, shape (3,)
        Loss sum and rows with a positive margin, each at the ``w`` the row saw; rows with a
        nonzero gradient.
    """
    n_rows = indptr.shape[0] - 1
    n_w = w.shape[0] - 1
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    stats = np.zeros(3, np.float64)
    t, owed_total = clock[STEP], clock[SHRINK]
    for s in range(n_rows):
        i = order[s]
        start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
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
        margin = y[i] * dot
        slack = loss[0] - margin
        if margin > 0:
            stats[CORRECT_SEEN] += 1
        if slack > 0:  # w <- w - eta_t g_t
            label = 1 if y[i] > 0 else 0
            stats[LOSS_SEEN] += cost[label] * (slack * (loss[1] + loss[2] * slack))
            stats[UPDATES] += 1
            d = eta_t * y[i] * step[label] * (loss[1] + 2.0 * loss[2] * slack)
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
