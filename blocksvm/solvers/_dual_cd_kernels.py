"""Dual coordinate descent for L2-regularized linear SVMs, logistic regression and SVR, on one block.

Problem (LIBLINEAR's ``solve_l2r_l1l2_svc``; Hsieh, Chang, Lin, Keerthi & Sundararajan,
"A Dual Coordinate Descent Method for Large-scale Linear SVM", ICML 2008, Algorithm 1)::

    min_alpha  f(alpha) = 1/2 alpha^T Qbar alpha - e^T alpha
    s.t.       0 <= alpha_i <= U_i,      Qbar = Q + D,  Q_ij = y_i y_j x_i^T x_j

    L1-loss (hinge):          U_i = C_i,       D_ii = 0
    L2-loss (squared hinge):  U_i = infinity,  D_ii = 1 / (2 C_i)
    C_i = C * class_weight(y_i) * weight_i     (weight_i: the row's instance weight, 1 without them)

with ``w = sum_i alpha_i y_i x_i`` kept up to date. Coordinate ``i`` takes the clipped Newton step
``alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i)`` where ``G = y_i w^T x_i - 1 + D_ii alpha_i``,
and its projected gradient ``PG`` measures how far ``alpha_i`` is from optimal. The same loop solves
logistic regression's dual (:func:`logistic_step`, LIBLINEAR ``-s 7``) and support vector regression's
(:func:`epsilon_step`, ``-s 12``, ``-s 13``): the loss table's kind chooses the coordinate step.

Block minimization (Yu, Hsieh, Chang & Lin, "Large Linear Classification When Data Cannot Fit
In Memory", KDD 2010, Algorithm 2 with LIBLINEAR as the inner solver) calls :func:`solve_block`
on one block at a time: the block's rows are the only free coordinates, ``w`` is shared.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from blocksvm.losses import EPSILON, LOGISTIC, MARGIN
from blocksvm.solvers._common import (
    drop_shrunk,
    interleaved_runs,
    next_random,
    predicted_right,
    prefetch,
    row_loss,
    soft_newton_step,
    working_add,
    working_dot,
)

INF = math.inf

# Indices into the stats array solve_block returns.
PG_MAX_FIRST, PG_MIN_FIRST, LOSS_FIRST, CORRECT_FIRST, PG_MAX_LAST, PG_MIN_LAST, PASSES, UPDATES = range(8)
PG_SUM_FIRST = 8
N_STATS = 9
# Rows ahead in the visit order whose nonzeros are prefetched (their per-row entries: twice as
# far), so that they arrive from memory while earlier rows are being solved.
AHEAD = 8


MAX_NEWTON = 100  # Newton steps per coordinate of the logistic dual at most (LIBLINEAR's max_inner_iter)
NEWTON_EPS = 1.0e-8  # ... until |g'(z)| is below this (LIBLINEAR's smallest inner tolerance)


@njit(cache=True, nogil=True, inline="always")
def logistic_step(a, margin, alpha, C):
    """One coordinate of the logistic regression dual (Yu, Huang & Lin, Machine Learning 2011, Algorithm 3;
    LIBLINEAR's ``solve_l2r_lr_dual``): ``(PG, new alpha_i)``.

    The dual keeps ``alpha_i`` in ``(0, C)`` with the entropy ``alpha log alpha + (C - alpha) log(C - alpha)``;
    the sub-problem in ``z`` (``alpha_i``, or ``C - alpha_i`` when that is the side the step moves away from)::

        g(z) = z log z + (C - z) log(C - z) + a/2 (z - z_old)^2 + sign * margin * (z - z_old)

    is solved by Newton steps that stay inside ``(0, C)`` (a step past 0 multiplies ``z`` by 0.1 instead).
    ``a``: ``Qbar_ii``; ``margin``: ``y_i w.x_i``. A row seen for the first time (``alpha_i = 0``, the dual's
    value at ``w = 0``) starts from LIBLINEAR's ``min(0.001 C, 1e-8)``. PG is ``d D / d alpha_i`` at the start.
    """
    sign, z_old = 1.0, alpha
    if 0.5 * a * (C - 2.0 * alpha) + margin < 0.0:
        sign, z_old = -1.0, C - alpha
    z = z_old
    if C - z < 0.5 * C:
        z = 0.1 * z
    if z <= 0.0:
        z = min(0.001 * C, 1.0e-8)
    gp = a * (z - z_old) + sign * margin + math.log(z / (C - z))
    pg = sign * gp
    steps = 0
    while steps < MAX_NEWTON and abs(gp) >= NEWTON_EPS:
        newton = z - gp / (a + C / (C - z) / z)
        z = 0.1 * z if newton <= 0.0 else newton
        gp = a * (z - z_old) + sign * margin + math.log(z / (C - z))
        steps += 1
    return pg, (alpha + sign * (z - z_old) if steps > 0 else alpha)


@njit(cache=True, nogil=True, inline="always")
def epsilon_step(G, beta, H, U, epsilon):
    """One coordinate of the support vector regression dual (Ho & Lin, Neural Computation 2012, Algorithm 4;
    LIBLINEAR's ``solve_l2r_l1l2_svr``): ``(PG, new beta_i)``.

    ``min 1/2 beta' Q beta - y' beta + epsilon |beta|_1 + 1/2 sum D_ii beta_i^2``, ``-U <= beta_i <= U``;
    ``G = w.x_i - y_i + D_ii beta_i`` is the smooth part's gradient, ``H = Qbar_ii``. The step is the exact
    minimizer of the one-variable problem (a quadratic plus ``epsilon |beta|``), clipped to the box; PG is its
    projected (sub)gradient, 0 at an optimal ``beta_i``.
    """
    Gp, Gn = G + epsilon, G - epsilon
    if beta == 0.0:
        pg = Gp if Gp < 0.0 else (Gn if Gn > 0.0 else 0.0)
    elif beta >= U:
        pg = max(Gp, 0.0)
    elif beta <= -U:
        pg = min(Gn, 0.0)
    else:
        pg = Gp if beta > 0.0 else Gn
    if H == 0.0:  # a row with no features, no bias and D_ii = 0 (-s 13 -B -1): the sub-problem is linear in beta_i
        return pg, (U if Gp < 0.0 else (-U if Gn > 0.0 else 0.0))  # LIBLINEAR's step of -G / 0, clipped to the box
    d = soft_newton_step(Gp, Gn, H, beta)
    return pg, min(max(beta + d, -U), U)


@njit(cache=True, nogil=True, inline="always")
def prefetch_row(a, b, n_a, j, line):
    """Ask for the cache lines of working row ``j``'s nonzeros (numbered as :func:`working_dot` numbers them;
    ``line``: values a cache line)."""
    if j < n_a:
        prefetch_csr_row(a[0], a[1], a[2], j, line)
    else:
        prefetch_csr_row(b[0], b[1], b[2], j - n_a, line)


@njit(cache=True, nogil=True, inline="always")
def prefetch_csr_row(indptr, indices, data, r, line):
    """Ask for the cache lines of CSR row ``r``'s nonzeros."""
    for k in range(indptr[r], indptr[r + 1] + line - 1, line):
        prefetch(indices, k)
        prefetch(data, k)


@njit(cache=True, nogil=True, inline="always")
def coordinate(dot, yi, alpha_old, weight, qd_inv, upper, diag, loss, sigma, pg_max_old, pg_min_old):
    """One coordinate's step from its row's ``dot = w.x_i`` (the bias included): ``(PG, new alpha_i, z, c, shrink,
    scale)``, ``z`` the margin ``y_i w.x_i`` (regression: the residual), ``c`` the row's class (1: positive),
    ``shrink`` whether LIBLINEAR's shrinking leaves it out (the hinge family at a bound it keeps, judged against the
    last pass's PG bounds), ``scale`` what ``x_i`` is added to ``w`` with, times the step of alpha_i. The loss table's
    kind chooses the step: the hinge family's clipped Newton step, :func:`logistic_step` or :func:`epsilon_step`."""
    kind = loss[3]
    shrink = False
    if kind == MARGIN:
        c = 1 if yi > 0 else 0
        z = yi * dot
        G = z - 1.0 + diag[c] / weight * alpha_old  # G = y_i w.x_i - 1 + D_ii alpha_i
        U = upper[c] * weight
        # projected gradient; shrink alpha_i away if it sits at a bound it will keep
        PG = G
        if alpha_old == 0.0:
            shrink = G > pg_max_old
            PG = min(G, 0.0)
        elif alpha_old == U:
            shrink = G < pg_min_old
            PG = max(G, 0.0)
        # the clipped Newton step
        alpha_new = min(max(alpha_old - G * qd_inv, 0.0), U) if abs(PG) > 1.0e-12 else alpha_old
        scale = yi * sigma
    elif kind == LOGISTIC:
        c = 1 if yi > 0 else 0
        z = yi * dot
        PG, alpha_new = logistic_step(1.0 / qd_inv, z, alpha_old, upper[c] * weight)
        scale = yi * sigma
    else:  # EPSILON: alpha is beta, w = sum beta_i x_i
        c = 1
        z = yi - dot
        G = dot - yi + diag[1] / weight * alpha_old
        U = upper[1] * weight
        PG, alpha_new = epsilon_step(G, alpha_old, 1.0 / qd_inv, U, loss[0])
        # LIBLINEAR's shrinking of its SVR duals: beta_i at 0 or a bound it keeps by more than the last pass's
        # largest violation (its Gmax_old)
        gmax = max(pg_max_old, -pg_min_old)
        Gp, Gn = G + loss[0], G - loss[0]
        if alpha_old == 0.0:
            shrink = Gp > gmax and Gn < -gmax
        elif alpha_old >= U:
            shrink = Gp < -gmax
        elif alpha_old <= -U:
            shrink = Gn > gmax
        scale = sigma
    return PG, alpha_new, z, c, shrink, scale


@njit(cache=True, nogil=True)
def solve_block(a, b, w, box, hyper, loss, seed, members):
    """Dual CD passes over A's and B's rows from a fresh start of shrinking (:func:`solve_rows`), their alphas
    (``a[5]``, ``b[5]``) updated in place."""
    rows = working_rows(a, b, box, hyper)
    shrink = (members.copy(), np.array([members.shape[0]], np.int64), np.array([INF, -INF]))
    stats = solve_rows(a, b, rows, w, box, hyper, loss, seed, members, shrink)
    scatter_alpha(rows[1], a[5], b[5], members)
    return stats


@njit(cache=True, nogil=True)
def working_rows(a, b, box, hyper):
    """The working rows' scalars side by side, A's rows then B's, so that a step reads one array of each whichever
    block its row comes from: ``y``, ``alpha`` (a copy: :func:`scatter_alpha` puts it back), ``1 / Qbar_ii``
    (:func:`row_scalars`) and the instance weights (empty: none)."""
    y = np.concatenate((a[3], b[3]))
    alpha = np.concatenate((a[5], b[5]))
    weights = np.concatenate((a[6], b[6]))
    return y, alpha, row_scalars(y, np.concatenate((a[4], b[4])), weights, box, hyper), weights


@njit(cache=True, nogil=True)
def live_members(members, a_weights, b_weights):
    """``members`` without the rows of weight 0 (A's rows ``0 .. n_a - 1``, B's from ``n_a``): a row that costs
    nothing is no coordinate, its alpha stays 0. ``members`` itself when the rows have no weights."""
    if a_weights.shape[0] + b_weights.shape[0] == 0:
        return members
    n_a = a_weights.shape[0]
    keep = np.empty(members.shape[0], np.int64)
    n = 0
    for p in range(members.shape[0]):
        i = members[p]
        if (a_weights[i] if i < n_a else b_weights[i - n_a]) > 0:
            keep[n] = i
            n += 1
    return keep[:n].copy()


@njit(cache=True, nogil=True)
def scatter_alpha(alpha, a_alpha, b_alpha, members):
    """The working rows' ``alpha`` back to A's and B's: the ``members`` only (the others' are left alone)."""
    n_a = a_alpha.shape[0]
    for p in range(members.shape[0]):
        i = members[p]
        if i < n_a:
            a_alpha[i] = alpha[i]
        else:
            b_alpha[i - n_a] = alpha[i]


@njit(cache=True, nogil=True)
def solve_rows(a, b, rows, w, box, hyper, loss, seed, members, shrink):
    """Run dual CD passes over the rows of block A and companion rows B, updating alpha and w.

    The free coordinates are A's rows and B's rows, visited together in one random order per
    pass; B (possibly empty) holds rows kept in memory from earlier blocks, so that the groups
    of rows solved together change from visit to visit. The order is
    :func:`~blocksvm.solvers._common.interleaved_runs` of the rows not shrunk, and the rows a
    few steps ahead in it are prefetched.

    Parameters
    ----------
    a : tuple (indptr, indices, data, y, sq_norms, alpha, weights)
        Block A: its CSR arrays (see :mod:`blocksvm.solvers._common`); ``y`` (n_a,), +1 or -1;
        ``sq_norms`` (n_a,), ``||x_i||^2`` without the bias feature; ``alpha`` (n_a,), A's dual
        variables, updated in place; ``weights`` (n_a,), each row's instance weight, or empty (every row
        weighs 1: both A and B have weights, or neither).
    b : tuple, as ``a``
        The companion rows B (n_b rows, may be 0).
    rows : tuple (y, alpha, qd_inv, weights)
        :func:`working_rows`: the rows' scalars side by side; ``alpha`` is the one updated (the members' only). Row
        ``i``'s cost is ``weights[i]`` times its class's: ``U_i = upper * weight_i``, ``D_ii = diag / weight_i``.
    w : ndarray of float64, shape (n_features + 1,)
        Last entry: weight of the bias feature (unused if ``bias <= 0``).
    box : tuple (upper, diag, cost)
        LIBLINEAR's ``upper_bound`` and ``diag`` per class (index 0 for y = -1, 1 for y = +1),
        from :meth:`blocksvm.losses.Loss.dual_box`, and C per class.
    hyper : ndarray of float64, shape (4,)
        ``[bias, max_passes, inner_eps, sigma]``: the bias feature's value; passes over A and B at
        most (>= 1); stop after a pass whose PG violation ``max PG - min PG`` is at most
        ``inner_eps`` (< 0: never); CoCoA+'s sigma' (>= 1): ``w`` is a worker's local
        ``w + sigma' dw`` and the local subproblem's curvature is ``sigma' ||x_i||^2 + D_ii``
        (docs/PARALLEL.md); 1 is plain dual CD.
    loss : ndarray of float64, shape (4,)
        The loss table ``[threshold, linear, quadratic, kind]`` (:mod:`blocksvm.losses`): the kind chooses the
        coordinate step (:func:`logistic_step`, :func:`epsilon_step` or the hinge family's clipped Newton step),
        and it gives the loss estimate.
    seed : int
        Seed of the row orders (< 0: the rows in stored order, every pass).
    members : ndarray of int64, increasing
        The working rows this call may change (A's rows are ``0 .. n_a - 1``, B's ``n_a ..``): all of
        them, or one replica's share (``DualCDSolver._solve_in_replicas``); the others' alpha is left alone. None of
        weight 0 (:func:`live_members`).
    shrink : tuple (active, count, pg_old)
        LIBLINEAR's shrinking, carried from one call to the next (a thread's sweeps, one call each): the rows
        not shrunk are ``active[:count[0]]`` (a subset of ``members``, increasing; ``active`` as long as
        ``members``), and ``pg_old`` the last pass's ``[max PG, min PG]`` bounds (``[inf, -inf]``: none yet);
        updated in place.

    Returns
    -------
    stats : ndarray of float64, shape (N_STATS,)
        Over A's rows in the first pass: max and min PG, loss sum (``sum C_i loss_i`` at the
        ``w`` each row saw) and count of positive margins (with instance weights: their weight). Over the last
        pass: max and min PG. Then passes made, updates made, and the sum of ``|PG|`` over A's rows in the first
        pass (the 1-norm of LIBLINEAR's violations: its SVR duals' rule).
    """
    a_indptr, b_indptr = a[0], b[0]
    y, alpha, qd_inv, weights = rows  # working rows 0 .. n_rows - 1: A's rows, then B's
    weighted = weights.shape[0] > 0
    upper, diag, cost = box
    bias, max_passes, inner_eps, sigma = hyper[0], int(hyper[1]), hyper[2], hyper[3]
    kind = loss[3]
    n_a = a_indptr.shape[0] - 1
    n_rows = n_a + b_indptr.shape[0] - 1
    n_w = w.shape[0] - 1
    line = 64 // a[2].itemsize  # values per cache line (prefetch stride)
    loss_sum, correct, first_max, first_min, first_sum = 0.0, 0.0, -INF, INF, 0.0  # over A's rows, first pass
    n_members = members.shape[0]
    active, count, pg_old = shrink  # rows not shrunk, increasing
    shrunk = np.zeros(n_rows, np.bool_)
    order = np.empty(n_rows, np.int64)
    active_size = count[0]
    pg_max_old, pg_min_old = pg_old[0], pg_old[1]
    pg_max_new, pg_min_new = -INF, INF
    passes = 0
    updates = 0
    state = np.array([np.uint64(max(seed, 0))], np.uint64)
    while passes < max_passes:
        if seed >= 0:
            interleaved_runs(order, active, active_size, state)
        else:  # file order (--order file): the rows not shrunk, as stored
            order[:active_size] = active[:active_size]
        pg_max_new, pg_min_new = -INF, INF
        first = passes == 0
        for s in range(active_size):
            # prefetch: the scalars and row pointers of the row 2 * AHEAD ahead, the nonzeros of
            # the row AHEAD ahead (its row pointers arrived meanwhile)
            if s + 2 * AHEAD < active_size:
                j = order[s + 2 * AHEAD]
                prefetch(y, j)
                prefetch(alpha, j)
                prefetch(qd_inv, j)
                if j < n_a:
                    prefetch(a_indptr, j)
                else:
                    prefetch(b_indptr, j - n_a)
            if s + AHEAD < active_size:
                prefetch_row(a, b, n_a, order[s + AHEAD], line)
            i = order[s]
            # G = y_i w.x_i - 1 + D_ii alpha_i
            dot = working_dot(w, a, b, n_a, i)
            if bias > 0:
                dot += w[n_w] * bias
            yi = y[i]
            alpha_old = alpha[i]
            weight = weights[i] if weighted else 1.0  # C_i = cost * weight_i
            PG, alpha_new, z, c, shrink_now, scale = coordinate(
                dot, yi, alpha_old, weight, qd_inv[i], upper, diag, loss, sigma, pg_max_old, pg_min_old
            )
            if shrink_now:
                shrunk[i] = True
                continue
            pg_max_new = max(pg_max_new, PG)
            pg_min_new = min(pg_min_new, PG)
            if first and i < n_a:
                loss_sum += cost[c] * weight * row_loss(loss, z)
                if kind != EPSILON and predicted_right(z, c):
                    correct += weight
                first_max = max(first_max, PG)
                first_min = min(first_min, PG)
                first_sum += abs(PG)
            if alpha_new == alpha_old:
                continue
            alpha[i] = alpha_new
            working_add(w, a, b, n_a, i, (alpha_new - alpha_old) * scale, bias)  # w += sigma d_alpha y_i x_i
            updates += 1
        passes += 1
        # drop the rows shrunk in this pass from the active list, which stays increasing
        active_size = drop_shrunk(active, active_size, shrunk)
        # LIBLINEAR's stopping rule, with one pass over the unshrunk set before trusting it
        if pg_max_new - pg_min_new <= inner_eps:
            if active_size == n_members:
                break
            active_size = n_members
            active[:] = members
            pg_max_old, pg_min_old = INF, -INF
            continue
        pg_max_old = pg_max_new if pg_max_new > 0 else INF
        pg_min_old = pg_min_new if pg_min_new < 0 else -INF
    count[0], pg_old[0], pg_old[1] = active_size, pg_max_old, pg_min_old
    stats = np.empty(N_STATS, np.float64)
    stats[PG_MAX_FIRST], stats[PG_MIN_FIRST] = first_max, first_min
    stats[LOSS_FIRST], stats[CORRECT_FIRST] = loss_sum, correct
    stats[PG_MAX_LAST], stats[PG_MIN_LAST] = pg_max_new, pg_min_new
    stats[PASSES] = passes
    stats[UPDATES] = updates
    stats[PG_SUM_FIRST] = first_sum
    return stats


# Indices into the stats array sweep_working returns.
SEEN_PG_MAX, SEEN_PG_MIN, SEEN_LOSS, SEEN_CORRECT, SHRUNK_LOSS, SHRUNK_CORRECT, SEEN_UPDATES, SEEN_PG_SUM = range(8)
N_SEEN = 8


@njit(cache=True, nogil=True)
def working_members(n_a, chunk, ids_a, ids_b, shrunk, member_a, member_b):
    """The working rows of a visit, increasing: A's rows (``0 .. n_a - 1``) and the resident rows of ``chunk`` (B's,
    numbered from ``n_a``) that the problem trains on (``member_*``: empty, all of them; else a flag a row) and that
    are not shrunk (``shrunk``: by store-wide row id, ``ids_*``)."""
    out = np.empty(n_a + chunk.shape[0], np.int64)
    n = 0
    for i in range(n_a):
        if (member_a.shape[0] == 0 or member_a[i]) and not shrunk[ids_a[i]]:
            out[n] = i
            n += 1
    for p in range(chunk.shape[0]):
        r = chunk[p]
        if (member_b.shape[0] == 0 or member_b[r]) and not shrunk[ids_b[r]]:
            out[n] = n_a + r
            n += 1
    return out[:n]


@njit(cache=True, nogil=True)
def sweep_working(a, b, rows_a, rows_b, w, alpha, box, hyper, loss, seed, members, shrunk, pg_old):
    """One sweep of dual CD over a visit's working rows, in a random order that keeps memory streaming
    (:func:`~blocksvm.solvers._common.interleaved_runs`): the rows of a block streamed in (A) and a share of the
    resident rows (B), every row of the pass's working set swept once a pass in one random order over the whole
    (Hsieh et al. 2008's random permutation: rows visited block by block, in a fixed or blocked order, make dual CD
    crawl on data whose rows are alike, as cyclic coordinate descent does).

    LIBLINEAR's shrinking carries from pass to pass as in its own loop: a row at a bound it keeps (judged against the
    last pass's PG bounds ``pg_old``, ``[max, min]``) is flagged in ``shrunk`` and left out of the passes after (the
    caller leaves flagged rows out of ``members``) until they all come back.

    Parameters
    ----------
    a, b : tuple (indptr, indices, data)
        A's CSR arrays (n_a rows; may be none) and the resident rows' (B: all of them, a share of which is worked on).
    rows_a, rows_b : tuple (y, qd_inv, weights, ids)
        Each row's target, ``1 / Qbar_ii`` (:func:`working_rows`), instance weight (empty: none) and store-wide id,
        which indexes ``alpha`` and ``shrunk``.
    w : ndarray (n_features + 1,)
        Updated in place, ``w += (alpha_i - alpha_old) y_i x_i``.
    alpha, shrunk : ndarray (n_rows,)
        The problem's store-wide dual variables and shrinking flags, updated in place.
    box, hyper, loss
        As :func:`solve_rows` (``hyper``'s passes and inner_eps unread: one sweep).
    seed : int
        Seed of the row order (< 0: the working rows as given).
    members : ndarray of int64, increasing
        The working rows (:func:`working_members`): A's ``0 .. n_a - 1``, B's from ``n_a``.

    Returns
    -------
    stats : ndarray (N_SEEN,)
        Over the rows swept: max and min PG, ``sum C_i loss_i`` at the ``w`` each saw and the rows predicted right
        (their weight), these two again over the rows shrunk in this sweep (included), the updates made, and the
        sum of ``|PG|`` over the rows swept (not shrunk).
    """
    a_indptr = a[0]
    upper, diag, cost = box
    bias, sigma = hyper[0], hyper[3]
    kind = loss[3]
    n_a = a_indptr.shape[0] - 1
    n_w = w.shape[0] - 1
    line = 64 // b[2].itemsize  # values per cache line (prefetch stride)
    weighted_a, weighted_b = rows_a[2].shape[0] > 0, rows_b[2].shape[0] > 0
    pg_max_old, pg_min_old = pg_old[0], pg_old[1]
    pg_max, pg_min, loss_sum, correct, shrunk_loss, shrunk_correct, updates = -INF, INF, 0.0, 0.0, 0.0, 0.0, 0
    pg_sum = 0.0
    n = members.shape[0]
    order = np.empty(n, np.int64)
    if seed >= 0:
        interleaved_runs(order, members, n, np.array([np.uint64(seed)], np.uint64))
    else:
        order[:] = members
    for s in range(n):
        if s + AHEAD < n:  # the nonzeros of the row AHEAD ahead arrive while the rows before are solved
            prefetch_row(a, b, n_a, order[s + AHEAD], line)
        i = order[s]
        dot = working_dot(w, a, b, n_a, i)
        if i < n_a:
            yi, qd, weight, row = rows_a[0][i], rows_a[1][i], rows_a[2][i] if weighted_a else 1.0, rows_a[3][i]
        else:
            r = i - n_a
            yi, qd, weight, row = rows_b[0][r], rows_b[1][r], rows_b[2][r] if weighted_b else 1.0, rows_b[3][r]
        if bias > 0:
            dot += w[n_w] * bias
        alpha_old = alpha[row]
        PG, alpha_new, z, c, shrink, scale = coordinate(
            dot, yi, alpha_old, weight, qd, upper, diag, loss, sigma, pg_max_old, pg_min_old
        )
        row_cost = cost[c] * weight * row_loss(loss, z)
        right = weight if kind != EPSILON and predicted_right(z, c) else 0.0
        loss_sum += row_cost
        correct += right
        if shrink:  # its loss now stands for it until it comes back (the pass estimates)
            shrunk[row] = True
            shrunk_loss += row_cost
            shrunk_correct += right
            continue
        pg_max = max(pg_max, PG)
        pg_min = min(pg_min, PG)
        pg_sum += abs(PG)
        if alpha_new == alpha_old:
            continue
        alpha[row] = alpha_new
        working_add(w, a, b, n_a, i, (alpha_new - alpha_old) * scale, bias)
        updates += 1
    stats = np.empty(N_SEEN, np.float64)
    stats[SEEN_PG_MAX], stats[SEEN_PG_MIN], stats[SEEN_LOSS], stats[SEEN_CORRECT] = pg_max, pg_min, loss_sum, correct
    stats[SHRUNK_LOSS], stats[SHRUNK_CORRECT], stats[SEEN_UPDATES] = shrunk_loss, shrunk_correct, updates
    stats[SEEN_PG_SUM] = pg_sum
    return stats


@njit(cache=True, nogil=True)
def shares(n, n_shares, seed):
    """``n`` rows dealt at random into ``n_shares`` shares (each row's share drawn from ``seed``): ``(order,
    starts)``, share ``s`` being ``order[starts[s]:starts[s + 1]]``, increasing."""
    state = np.array([np.uint64(seed)], np.uint64)
    key = np.empty(n, np.int64)
    starts = np.zeros(n_shares + 1, np.int64)
    for r in range(n):
        key[r] = np.int64(next_random(state) % np.uint64(n_shares))
        starts[key[r] + 1] += 1
    for s in range(n_shares):
        starts[s + 1] += starts[s]
    order = np.empty(n, np.int64)
    filled = starts[:-1].copy()
    for r in range(n):
        order[filled[key[r]]] = r
        filled[key[r]] += 1
    return order, starts


@njit(cache=True, nogil=True)
def row_scalars(y, sq_norms, weights, box, hyper):
    """``1 / Qbar_ii = 1 / (sigma (||x_i||^2 + B^2) + D_ii)`` of rows with targets ``y`` and squared norms
    ``sq_norms`` (without the bias), ``D_ii = diag / weight_i`` (``weights`` empty: none; a row of weight 0 is no
    member: never solved). A row with no features, no bias and the hinge loss has ``Qbar_ii = 0``: as in LIBLINEAR,
    ``G / Qbar_ii`` is then -inf (``G = -1``), and the step clips alpha_i to its upper bound C."""
    diag, bias, sigma = box[1], hyper[0], hyper[3]
    bias_sq = bias * bias if bias > 0 else 0.0
    weighted = weights.shape[0] > 0
    out = np.empty(y.shape[0])
    for i in range(y.shape[0]):
        d = diag[1 if y[i] > 0 else 0]
        if weighted and weights[i] > 0:
            d = d / weights[i]
        qd = sigma * (sq_norms[i] + bias_sq) + d
        out[i] = 1.0 / qd if qd > 0.0 else INF
    return out


@njit(cache=True, nogil=True)
def replica_steps(w, replicas):
    """``u = sum_t (replicas[t] - w)``, the threads' steps of ``w`` added in thread order."""
    u = np.empty_like(w)
    for j in range(w.shape[0]):
        total = 0.0
        for t in range(replicas.shape[0]):
            total += replicas[t, j] - w[j]
        u[j] = total
    return u


@njit(cache=True, nogil=True)
def _dual_slope(kind, gamma, alpha0, d, y, upper, diag, epsilon, weights):
    """``d/dgamma`` and ``-d^2/dgamma^2`` of the rows' part of the dual at ``alpha0 + gamma d`` (the hinge family:
    ``sum alpha - 1/2 sum D alpha^2``; logistic: the entropy; SVR: ``sum y beta - eps |beta| - 1/2 sum D beta^2``),
    each row's ``C_i`` its class's times its weight (``weights`` empty: 1)."""
    weighted = weights.shape[0] > 0
    slope, curve = 0.0, 0.0
    for i in range(alpha0.shape[0]):
        di = d[i]
        if di == 0.0:
            continue
        c = 1 if (kind == EPSILON or y[i] > 0) else 0
        weight = weights[i] if weighted else 1.0
        a = alpha0[i] + gamma * di
        if kind == LOGISTIC:
            C = upper[c] * weight
            slope += di * math.log((C - a) / a)
            curve += di * di * (1.0 / a + 1.0 / (C - a))
            continue
        D = diag[c] / weight
        slope -= D * a * di
        curve += D * di * di
        if kind == MARGIN:
            slope += di
        else:
            side = a if a != 0.0 else di  # (at a kink: the side the step goes)
            slope += y[i] * di - epsilon * (di if side > 0 else -di)
    return slope, curve


@njit(cache=True, nogil=True)
def dual_line_search(kind, alpha0, d, y, upper, diag, epsilon, wu, uu, sigma, weights):
    """The step ``gamma`` along the threads' summed step ``d`` of the alphas that maximizes the dual (the local
    subproblem's, with CoCoA+'s ``sigma``), keeping every alpha in its box: the dual along ``gamma`` is concave,
    ``phi'(gamma) = rows' slope - w.u - gamma sigma ||u||^2`` with ``u = sum_i d_i y_i x_i``. The hinge family: the
    vertex of a quadratic; the logistic and SVR duals: Newton's steps on ``phi'`` kept inside a bracket that
    bisection shrinks. ``gamma = 1`` is the threads' own steps, always in the box. ``weights``: the rows' instance
    weights (empty: none), which multiply their ``C``."""
    # the box: the largest gamma keeping each alpha in [0, U] (logistic: inside (0, C); SVR: [-U, U])
    weighted = weights.shape[0] > 0
    limit = INF
    for i in range(alpha0.shape[0]):
        di = d[i]
        if di == 0.0:
            continue
        c = 1 if (kind == EPSILON or y[i] > 0) else 0
        U = upper[c] * weights[i] if weighted else upper[c]
        high, low = U, (-U if kind == EPSILON else 0.0)
        room = (high - alpha0[i]) / di if di > 0 else (low - alpha0[i]) / di
        limit = min(limit, room)
    if kind == LOGISTIC:
        limit *= 1.0 - 1.0e-12  # strictly inside (0, C)
    limit = max(limit, 1.0)
    if kind == MARGIN:
        slope, curve = _dual_slope(kind, 0.0, alpha0, d, y, upper, diag, epsilon, weights)
        slope -= wu
        curve += sigma * uu
        return min(max(slope / curve, 0.0), limit) if curve > 0.0 else 1.0
    low, high = 0.0, min(limit, 16.0)
    gamma = 1.0
    for _ in range(60):
        slope, curve = _dual_slope(kind, gamma, alpha0, d, y, upper, diag, epsilon, weights)
        slope -= wu + gamma * sigma * uu
        curve += sigma * uu
        if slope > 0.0:
            low = gamma
        else:
            high = gamma
        step = gamma + slope / curve if curve > 0.0 else 0.5 * (low + high)
        if not (low < step < high):
            step = 0.5 * (low + high)
        if abs(step - gamma) <= 1.0e-12 * max(1.0, gamma) or high - low <= 1.0e-12:
            return step
        gamma = step
    return gamma
