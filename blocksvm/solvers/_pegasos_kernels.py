"""Pegasos: primal estimated sub-gradient steps on mini-batches of one block.

Problem (the same minimizer as the dual solvers, divided by ``l C``)::

    min_w  lambda/2 ||w||^2 + 1/l sum_i loss(y_i w^T x_i),    lambda = 1 / (l C)

Shalev-Shwartz, Singer, Srebro & Cotter, "Pegasos: Primal Estimated sub-GrAdient SOlver for SVM",
Math. Programming 2011, Fig. 2 (mini-batch variant), run block by block as in Yu et al., KDD 2010:
the block's rows are split into mini-batches ``A_t`` of ``r`` rows, and with ``eta_t = 1/(lambda (t + t0))``

    w <- (1 - eta_t lambda) w + eta_t / r * sum_{i in A_t} g_i y_i x_i
    w <- min(1, R / ||w||) w

where ``g_i = 1[y_i w.x_i < 1]`` (hinge) or ``2 max(0, 1 - y_i w.x_i)`` (squared hinge) and
``R = 1/sqrt(lambda)`` (hinge; the paper's bound) or ``sqrt(2/lambda)`` (squared hinge, from
``lambda/2 ||w*||^2 <= f(0) = 1``). The step counter ``t`` runs on across blocks and passes. A row's class
weight and its instance weight multiply its ``g_i`` (the loss is then ``1/l sum_i weight_i loss_i``: ``R`` grows
with the square root of the rows' mean weight, and ``L`` below weighs each row's curvature).

The offset ``t0 = L / lambda`` is 0 in the paper (``--pegasos-schedule inverse``). With ``smooth``, ``L`` is the
curvature of the batch's mean loss, ``curvature * mean_{i in A_t} ||x_i||^2`` (``curvature`` 2 for the squared
hinge, 0 for the hinge): so ``eta_t = 1 / (lambda t + L)`` never exceeds ``1/L``, the longest step a smooth loss
allows (Bottou's ``eta_0 / (1 + eta_0 lambda t)`` with ``eta_0 = 1/L``). The paper's first steps, ``1/lambda``
long (``l C``), throw a squared-hinge ``w`` to the edge of its ball, where margins far below 0 make its gradients
as large: its iterates then swing for tens of passes (docs/TUNING.md, Defaults).

``w`` is stored as ``scale * v`` so that the shrink ``(1 - eta lambda)`` costs O(1), not O(n);
``||w||^2`` is tracked incrementally for the projection.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import predicted_right, prefetch, row_weight, slack_loss, slack_slope, visit_order

# Indices into the Pegasos state array.
SCALE, SQ_NORM, STEP = range(3)
N_STATE = 3
# Indices into the stats array solve_block returns.
LOSS_SEEN, CORRECT_SEEN = range(2)
# Rows ahead in the visit order whose nonzeros are prefetched (see _dual_cd_kernels.AHEAD).
AHEAD = 8


@njit(cache=True, nogil=True)
def solve_block(rows, y, v, state, hyper, setup, seed):
    """One pass of mini-batch Pegasos steps over a block, in a random row order.

    The order is ``visit_order``'s: file order when ``seed < 0``.

    Parameters
    ----------
    rows : tuple (indptr, indices, data, sq_norms, weights)
        CSR arrays of the block, ``||x_i||^2`` of each row, without the bias feature, and each row's instance
        weight (empty: every row weighs 1).
    y : ndarray of float64, shape (n_rows,)
    v : ndarray of float64, shape (n_features + 1,)
        Direction of ``w = state[SCALE] * v``; last entry for the bias feature.
    state : ndarray of float64, shape (N_STATE,)
        ``[scale, ||w||^2, t]``, updated in place.
    hyper : ndarray of float64, shape (4,)
        ``[lambda, R, r, curvature]``: ``lambda = 1 / (l C)``, the radius of the ball projected onto
        (:meth:`blocksvm.losses.Loss.pegasos_radius`), the rows per step, and the loss's curvature per unit of
        ``||x||^2`` that sets the step offset (0: the paper's steps).
    setup : tuple (bias, loss, cost, step)
        The bias feature's value (<= 0: none); the loss table ``[threshold, linear, quadratic]``
        (:mod:`blocksvm.losses`); C per class (negative, positive), which weighs the reported loss; the class
        weights (C's multipliers), which weigh a row's sub-gradient.
    seed : int
        Seed of the row order.

    Returns
    -------
    stats : ndarray of float64, shape (2,)
        ``sum_i C_i loss_i`` and the count (with instance weights: the weight) of positive margins, each at the
        ``w`` row ``i`` saw.
    """
    indptr, indices, data, sq_norms, weights = rows
    bias, loss, cost, step_weight = setup
    lam, R, batch_size, curvature = hyper[0], hyper[1], int(hyper[2]), hyper[3]
    n_rows = indptr.shape[0] - 1
    n_w = v.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    stats = np.zeros(2, np.float64)
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    grad = np.empty(batch_size, np.float64)
    dots = np.empty(batch_size, np.float64)  # v.x_i at the start of the batch
    line = 64 // data.itemsize  # values per cache line (prefetch stride)
    for start in range(0, n_rows, batch_size):
        stop = min(start + batch_size, n_rows)
        scale = state[SCALE]
        batch_sq = 0.0  # sum of the batch's ||x_i||^2, bias included
        # margins of the batch at the current w
        for s in range(start, stop):
            # prefetch: the label and row pointers of the row 2 * AHEAD ahead, the nonzeros of
            # the row AHEAD ahead
            if s + 2 * AHEAD < n_rows:
                j = order[s + 2 * AHEAD]
                prefetch(y, j)
                prefetch(sq_norms, j)
                prefetch(indptr, j)
            if s + AHEAD < n_rows:
                j = order[s + AHEAD]
                for k in range(indptr[j], indptr[j + 1] + line - 1, line):
                    prefetch(indices, k)
                    prefetch(data, k)
            i = order[s]
            dot = 0.0
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                dot += v[np.uint32(indices[k])] * data[k]
            if bias > 0:
                dot += v[n_w] * bias
            dots[s - start] = dot
            weight = row_weight(weights, i)  # C_i = cost * weight_i
            batch_sq += weight * (sq_norms[i] + bias_sq)
            margin = y[i] * scale * dot
            slack = loss[0] - margin
            c = 1 if y[i] > 0 else 0
            if slack > 0:
                stats[LOSS_SEEN] += cost[c] * weight * slack_loss(loss, slack)
                grad[s - start] = slack_slope(loss, slack) * step_weight[c] * weight
            else:
                grad[s - start] = 0.0
            if predicted_right(margin, c):
                stats[CORRECT_SEEN] += weight
        # the step counter with its offset t0 = L / lambda (0: t itself, the paper's steps)
        t = state[STEP] + curvature * batch_sq / (stop - start) / lam
        eta = 1.0 / (lam * t)
        # shrink: w <- (1 - 1/t) w; a first step of 1/lambda (t = 1) starts from w = 0
        if t <= 1.0:
            v[:] = 0.0
            dots[:] = 0.0
            scale = 1.0
            sq_norm = 0.0
        else:
            shrink = 1.0 - 1.0 / t
            scale *= shrink
            sq_norm = state[SQ_NORM] * shrink * shrink
        # step: w += eta / r * g_i y_i x_i, one row at a time to keep ||w||^2 exact:
        # ||w + a x_i||^2 = ||w||^2 + 2 a scale v.x_i + a^2 ||x_i||^2
        step = eta / (stop - start)
        moved = False  # v.x_i from the margin loop holds until v first changes
        for s in range(start, stop):
            if grad[s - start] == 0.0:
                continue
            i = order[s]
            a = step * grad[s - start] * y[i]  # coefficient of x_i in w-space
            dot = dots[s - start]
            if moved:
                dot = 0.0
                for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                    dot += v[np.uint32(indices[k])] * data[k]
                if bias > 0:
                    dot += v[n_w] * bias
            sq_norm += 2.0 * a * scale * dot + a * a * (sq_norms[i] + bias_sq)
            a_v = a / scale
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                v[np.uint32(indices[k])] += a_v * data[k]
            if bias > 0:
                v[n_w] += a_v * bias
            moved = True
        # project onto the ball of radius R
        if sq_norm > R * R:
            scale *= R / math.sqrt(sq_norm)
            sq_norm = R * R
        # Fold the scale into v (O(features)) only before it could underflow: early steps, when the
        # projection shrinks w at every step, would otherwise fold every few steps. v = w / scale
        # stays below R * 1e200, far from overflow.
        if scale < 1e-200:
            for j in range(v.shape[0]):
                v[j] *= scale
            scale = 1.0
        state[SCALE] = scale
        state[SQ_NORM] = max(sq_norm, 0.0)
        state[STEP] += 1.0
    return stats
