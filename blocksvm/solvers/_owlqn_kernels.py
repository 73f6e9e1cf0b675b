"""OWL-QN's kernels: one piece of rows' share of a pass's sums, and the driver's vector arithmetic.

A pass values, for each problem ``k`` that asks (VALUE), the points of its line search along its direction ``d``
from ``w``, ``N_CANDIDATES`` steps ``a_j = a 2^-j`` at once, each point projected on the orthant of the search
(Andrew & Gao 2007: a weight that would cross zero stops at zero)::

    v_j = pi(w + a_j d),   pi(v)_i = 0 where w_i != 0 and v_i w_i < 0 (with an L1 term), else v_i
    sum_i C_i l(v_j.x_i)        for every j                 the candidates' losses (C_i: the row's class cost
                                                             times its instance weight, as Newton's kernel)
    sum_i C_i l'(v_0.x_i) x_i                                the loss's gradient at the first candidate
    sum_i C_i l'(0) x_i                                      the gradient at w = 0 (on request, for the stop rule)

A weight that is zero moves only into the orthant of its steepest descent (the driver's direction has that sign
there), so only weights that are not zero are clipped, and the orthant needs no array of its own. The projection
makes a row's decision value piecewise linear in the step: each candidate is its own dot product (four per row,
over the same two loads of ``w`` and ``d``). ``a = 0`` values ``w`` alone (the start and a gradient pass).

The driver's arithmetic (:func:`pseudo_gradient`, :func:`direction`, :func:`candidate_terms`) runs in serial loops
over the weights: the same bits on every machine, and no BLAS threads woken between passes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.losses import EPSILON
from blocksvm.solvers._common import add_scaled_row, member_weight, predicted_right
from blocksvm.solvers._newton_kernels import decision_loss, decision_slope

NONE, VALUE = 0, 1  # what a problem asks of a pass
N_CANDIDATES = 4  # line-search steps valued per pass: a, a/2, a/4, a/8
# the scalar sums of each problem: the candidates' losses, then these (taken at the first candidate)
CORRECT, POSITIVE, ROWS, WEIGHT = range(N_CANDIDATES, N_CANDIDATES + 4)
N_SCALARS = N_CANDIDATES + 4
MAIN, AT_ZERO = range(2)  # a problem's vectors: the gradient at the first candidate, g(0)


@njit(cache=True, nogil=True, inline="always")
def _add_candidates(t, wi, di, x, steps, project):
    """``t_j += v_j x`` for one feature of value ``x`` whose weight and direction are ``wi`` and ``di``, at every
    candidate step: ``v_j = pi(wi + steps_j di)``, zero where the step crosses 0 when ``project``."""
    for j in range(N_CANDIDATES):
        v = wi + steps[j] * di
        if project and v * wi < 0.0:
            v = 0.0
        t[j] += v * x


@njit(cache=True, nogil=True)
def piece_sums(rows, targets, costs, member, W, D, request, setup, scalars, vectors):
    """Add one piece's sums (see the module docstring) into ``scalars`` and ``vectors`` (zeros on entry).

    Parameters
    ----------
    rows : (indptr, indices, data, weights)
        The piece's CSR arrays and its rows' instance weights (empty: every row weighs 1; a row of weight 0 is
        skipped, as if absent).
    targets : ndarray (n_problems, n_rows)
        ±1 targets.
    costs : ndarray (n_problems, 2)
        C of negative and positive rows.
    member : ndarray of bool (n_problems, n_rows)
        Whether problem ``k`` trains on the row (cross-validation leaves a fold out).
    W, D : ndarray (n_problems, n_weights)
        The weights and each problem's direction (the bias feature's last).
    request : (kinds, alphas, slots)
        ``kinds`` (n_problems,) NONE or VALUE; ``alphas`` the first candidate step of each (0: ``w`` alone);
        ``slots`` (n_problems, 2) the row of ``vectors`` of its MAIN and AT_ZERO sums (-1: not asked).
    setup : (bias, loss, project)
        The bias feature's value (<= 0: none), the loss table of :mod:`blocksvm.losses`, and whether candidates
        are projected on the orthant (a penalty with an L1 term).
    scalars : ndarray (n_problems, N_SCALARS)
    vectors : ndarray (n_slots, n_weights)
    """
    indptr, indices, data, weights = rows
    kinds, alphas, slots = request
    bias, loss, project = setup
    n_w = W.shape[1] - 1
    t = np.empty(N_CANDIDATES)
    steps = np.empty(N_CANDIDATES)
    for k in range(W.shape[0]):
        if kinds[k] == NONE:
            continue
        w, d, a = W[k], D[k], alphas[k]
        n_values = N_CANDIDATES if a != 0.0 else 1
        for j in range(N_CANDIDATES):
            steps[j] = a * 0.5**j
        main, at_zero = slots[k, MAIN], slots[k, AT_ZERO]
        for i in range(indptr.shape[0] - 1):
            weight = member_weight(member, k, i, weights)
            if weight == 0.0:
                continue  # not problem k's row, or a row of weight 0
            y = targets[k, i]
            label = 1 if y > 0 else 0
            C = costs[k, label] * weight
            start, stop = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
            for j in range(n_values):
                t[j] = 0.0
            if n_values == 1:  # w alone
                total = w[n_w] * bias if bias > 0 else 0.0
                for p in range(start, stop):
                    total += w[np.uint32(indices[p])] * data[p]
                t[0] = total
            else:  # v_j = pi(w + a_j d), each its own dot product
                for p in range(start, stop):
                    column = np.uint32(indices[p])
                    _add_candidates(t, w[column], d[column], np.float64(data[p]), steps, project)
                if bias > 0:
                    _add_candidates(t, w[n_w], d[n_w], bias, steps, project)
            for j in range(n_values):
                scalars[k, j] += C * decision_loss(loss, y, t[j])
            add_scaled_row(vectors[main], indices, data, start, stop, C * decision_slope(loss, y, t[0]), bias)
            if at_zero >= 0:
                add_scaled_row(vectors[at_zero], indices, data, start, stop, C * decision_slope(loss, y, 0.0), bias)
            scalars[k, ROWS] += 1.0
            scalars[k, WEIGHT] += weight
            scalars[k, POSITIVE] += label
            if loss[3] != EPSILON and predicted_right(y * t[0], label):
                scalars[k, CORRECT] += weight


@njit(cache=True, nogil=True)
def pseudo_gradient(w, g, l1, out):
    """OWL-QN's pseudo-gradient of ``l1 ||w||_1 + smooth(w)`` (``g``: the smooth part's gradient) into ``out``: the
    minimum-norm subgradient. Returns its 1-norm (LIBLINEAR's ``Gnorm1``)::

        w_i > 0: g_i + l1      w_i < 0: g_i - l1      w_i = 0: g_i + l1 if < 0, g_i - l1 if > 0, else 0
    """
    total = 0.0
    for i in range(w.shape[0]):
        gi = g[i]
        if w[i] > 0:
            v = gi + l1
        elif w[i] < 0:
            v = gi - l1
        elif gi + l1 < 0:
            v = gi + l1
        elif gi - l1 > 0:
            v = gi - l1
        else:
            v = 0.0
        out[i] = v
        total += abs(v)
    return total


@njit(cache=True, nogil=True)
def dot(a, b):
    """``a.b``, added in order."""
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


@njit(cache=True, nogil=True)
def direction(pg, S, Y, rho, pairs, newest, project, d):
    """The quasi-Newton direction ``d = -H pg`` by L-BFGS's two-loop recursion (Nocedal 1980) over the ``pairs``
    newest of the memory's ``(s, y)`` rows (a ring: ``newest`` is the last written), ``H_0 = (s.y / y.y) I`` of the
    newest; then, with an L1 term (``project``), Andrew & Gao's alignment: ``d_i = 0`` where it does not point
    the way of ``-pg_i``. Returns ``d.pg`` (< 0: a descent direction; 0: none, ``pg`` = 0)."""
    m, n = S.shape[0], d.shape[0]
    alpha = np.empty(m)
    for i in range(n):
        d[i] = -pg[i]
    for back in range(pairs):  # newest first
        j = (newest - back) % m
        a = rho[j] * dot(S[j], d)
        alpha[j] = a
        for i in range(n):
            d[i] -= a * Y[j, i]
    if pairs > 0:
        gamma = 1.0 / (rho[newest] * dot(Y[newest], Y[newest]))
        for i in range(n):
            d[i] *= gamma
    for back in range(pairs - 1, -1, -1):  # oldest first
        j = (newest - back) % m
        b = rho[j] * dot(Y[j], d)
        for i in range(n):
            d[i] += (alpha[j] - b) * S[j, i]
    slope = 0.0
    for i in range(n):
        if project and d[i] * pg[i] >= 0.0:
            d[i] = 0.0
        slope += d[i] * pg[i]
    return slope


@njit(cache=True, nogil=True)
def candidate(w, d, step, project, out):
    """The candidate point ``pi(w + step d)`` into ``out`` (see the module docstring)."""
    for i in range(w.shape[0]):
        v = w[i] + step * d[i]
        out[i] = 0.0 if project and v * w[i] < 0.0 else v


@njit(cache=True, nogil=True)
def candidate_terms(w, d, pg, steps, project, out):
    """For each step of ``steps``, the terms the driver adds to a candidate's loss, into ``out`` (n_steps, 3):
    ``pg.(v - w)`` (Armijo's decrease), ``||v||_1`` and ``||v||^2``, with ``v = pi(w + step d)``."""
    for j in range(steps.shape[0]):
        decrease, norm1, norm2 = 0.0, 0.0, 0.0
        for i in range(w.shape[0]):
            v = w[i] + steps[j] * d[i]
            if project and v * w[i] < 0.0:
                v = 0.0
            decrease += pg[i] * (v - w[i])
            norm1 += abs(v)
            norm2 += v * v
        out[j, 0], out[j, 1], out[j, 2] = decrease, norm1, norm2
