"""Projected online (sub)gradient descent on the SVM objective, with the iterates' average, on one block.

Problem (the same minimizer as the dual solvers, divided by ``l C``)::

    min_w  f(w) = lambda/2 ||w||^2 + 1/l sum_i loss(y_i w.x_i),    lambda = 1 / (l C)

Zinkevich, "Online Convex Programming and Generalized Infinitesimal Gradient Ascent", ICML 2003
(steps ``eta / sqrt(t)``); Hazan, Agarwal & Kale, "Logarithmic Regret Algorithms for Online Convex
Optimization", Machine Learning 2007 (steps ``1 / (lambda t)`` for a ``lambda``-strongly convex
objective, as Pegasos takes them). Row ``t`` (counted from 1 across blocks and passes) makes, with the
sub-gradient of ``f_t(w) = lambda/2 ||w||^2 + loss(y_t w.x_t)`` at ``w_t``::

    w <- (1 - eta_t lambda) w + eta_t g_t y_t x_t       g_t = -loss'(y_t w_t.x_t)  (0 at the hinge's kink)
    w <- min(1, R / ||w||) w                              R = sqrt(bound / lambda), Loss.bound

with ``eta_t lambda = rate * (t + t0_t)^-power``: ``(1, 1)`` or ``(eta lambda, 1/2)``, the schedule as data
(so that the first step of ``1 / (lambda t)`` shrinks by exactly 0; a shrink below 0 stops at 0). The offset
``t0_t = curvature ||x_t||^2 / lambda`` (bias feature included) is 0 but for ``--ogd-schedule smooth``, where it
makes the steps ``1 / (lambda t + L_t)``, never longer than ``1 / L_t``, ``L_t`` the curvature of the row's loss
(Pegasos's smooth schedule with batches of one, :mod:`._pegasos_kernels`).
The ball holds the optimum (:meth:`blocksvm.losses.Loss.pegasos_radius`). A row's class weight
and its instance weight scale its ``g_t`` (and its loss's curvature, in ``t0_t``). The online-to-batch
average (Cesa-Bianchi, Conconi & Gentile, IEEE Trans. Inf. Theory 2004) is ``1/T sum_t w_{t+1}``, the mean of
``w`` after each of the ``T`` rows seen.

A row costs O(nnz) by a scale trick: ``w = scale * v``, so the shrink and the projection change
``scale`` only, and ``||w||^2`` is tracked as rows change ``v``. The sum of the iterates is kept as
``p + q v`` (``q`` a number): adding ``w`` is ``q <- q + scale``, and a change ``delta`` of ``v``
is balanced by ``p <- p - q delta`` on the row's own coordinates. Steps that zero ``w`` (a shrink
factor ``1 - eta_t lambda <= 0``, as at ``t = 1`` with ``1 / (lambda t)``) fold ``scale`` into
``v`` (and ``q v`` into ``p``), O(n); so does a ``q`` grown to ``FOLD`` times ``scale``: ``p`` and
``q v`` would then be far larger than the sum they make (whose rounding error grows with
``q / scale``), as after the early steps of ``1 / (lambda t)``, where the projection shrinks
``scale`` at almost every row. Without projections, that is once in about ``FOLD`` rows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.solvers._common import UPDATES, judge_slope, online_pass, visited_row

# Indices into the OGD state array: w = scale * v, ||w||^2, the step t, the sum's coefficient q.
SCALE, SQ_NORM, STEP, SUM_SCALE = range(4)
N_STATE = 4
# q / scale beyond which the sum of the iterates is folded into p (its relative rounding error: ~1e-16 FOLD)
FOLD = 1e6


@njit(cache=True, nogil=True)
def fold(v, total, state):
    """``v <- scale v``, ``scale <- 1`` and ``total <- total + q v``, ``q <- 0``: the same ``w`` and sum."""
    scale, q = state[SCALE], state[SUM_SCALE]
    for j in range(v.shape[0]):
        total[j] += q * v[j]
        v[j] *= scale
    state[SCALE] = 1.0
    state[SUM_SCALE] = 0.0


@njit(cache=True, nogil=True)
def ogd_block(rows, y, v, state, hyper, setup, seed):
    """One pass of projected OGD steps over a block (the online kernel contract: :mod:`._common`).

    ``v``: the direction of ``w = scale v``. ``state``: ``(total, steps)``; ``total`` (n_features + 1,) is
    ``p``, the sum of the iterates being ``p + q v``; ``steps`` (N_STATE,) is ``[scale, ||w||^2, t, q]``.
    ``hyper``: ``[lambda, R, rate, power, curvature]``: ``lambda = 1 / (l C)``, the ball's radius, and the steps
    ``eta_t lambda = rate * (t + curvature ||x_t||^2 / lambda)^-power``. ``UPDATES`` counts the rows with a
    nonzero loss gradient.
    """
    indptr, indices, data, weights = rows
    total, steps = state
    bias, loss, cost, weight = setup
    lam, R, rate, power, curvature = hyper[0], hyper[1], hyper[2], hyper[3], hyper[4]
    n_w = v.shape[0] - 1
    bias_sq = bias * bias if bias > 0 else 0.0
    order, stats = online_pass(indptr, seed)
    for s in range(order.shape[0]):
        i, own, start, stop = visited_row(order, s, indptr, weights)  # the row's instance weight
        if own == 0.0:
            continue  # a row of weight 0 is not there
        # v.x and ||x||^2 in one sweep of the row; w.x = scale v.x
        dot = v[n_w] * bias if bias > 0 else 0.0
        x_sq = bias_sq
        for k in range(start, stop):
            x = np.float64(data[k])
            dot += v[np.uint32(indices[k])] * x
            x_sq += x * x
        label = 1 if y[i] > 0 else 0
        slope = judge_slope(stats, loss, cost, label, y[i] * steps[SCALE] * dot, own)
        g = 0.0
        if slope > 0:
            g = weight[label] * own * slope
            stats[UPDATES] += 1
        t = steps[STEP]
        eta_lam = rate * (t + curvature * own * x_sq / lam) ** -power
        # shrink: w <- (1 - eta lambda) w
        shrink = 1.0 - eta_lam
        if shrink <= 0.0:
            fold(v, total, steps)
            v[:] = 0.0
            dot = 0.0
            steps[SQ_NORM] = 0.0
        else:
            steps[SCALE] *= shrink
            steps[SQ_NORM] *= shrink * shrink
        scale = steps[SCALE]
        # step: w <- w + a x with a = eta g y; ||w + a x||^2 = ||w||^2 + 2 a scale v.x + a^2 ||x||^2
        if g != 0.0:
            a = eta_lam / lam * g * y[i]
            steps[SQ_NORM] = max(0.0, steps[SQ_NORM] + 2.0 * a * scale * dot + a * a * x_sq)
            a_v = a / scale
            q = steps[SUM_SCALE]
            for k in range(start, stop):
                j = np.uint32(indices[k])
                delta = a_v * data[k]
                v[j] += delta
                total[j] -= q * delta
            if bias > 0:
                delta = a_v * bias
                v[n_w] += delta
                total[n_w] -= q * delta
        # project onto the ball of radius R
        if steps[SQ_NORM] > R * R:
            steps[SCALE] *= R / math.sqrt(steps[SQ_NORM])
            steps[SQ_NORM] = R * R
        # the sum of the iterates: + w = scale v
        steps[SUM_SCALE] += steps[SCALE]
        if steps[SUM_SCALE] > FOLD * steps[SCALE]:  # (also before scale could underflow)
            fold(v, total, steps)
        steps[STEP] = t + 1.0
    return stats


@njit(cache=True, nogil=True)
def average(v, total, state):
    """The mean of ``w`` after each row seen (zeros before any): ``(p + q v) / (t - 1)``."""
    rows = max(state[STEP] - 1.0, 1.0)
    return (total + state[SUM_SCALE] * v) / rows
