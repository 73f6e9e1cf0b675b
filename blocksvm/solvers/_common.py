"""Kernels every solver shares: random permutations, row norms, decision values and losses.

All are plain ``@njit(cache=True, nogil=True)`` functions over arrays. A block arrives as CSR
arrays ``indptr`` (int64, n_rows + 1), ``indices`` (int32, zero-based), ``data`` (float32 or
float64); a weight vector ``w`` has ``n_features + 1`` entries, the last one for the bias feature
whose constant value is ``bias`` (no bias term when ``bias <= 0``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

HINGE = 0
SQUARED_HINGE = 1
LOSSES = {"hinge": HINGE, "squared-hinge": SQUARED_HINGE}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def next_random(state):
    """splitmix64 step on ``state`` (uint64 array of length 1, updated in place); 64 random bits."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def shuffle_prefix(index, n, state):
    """Fisher-Yates shuffle of ``index[:n]`` in place."""
    for j in range(n - 1, 0, -1):
        k = np.int64(next_random(state) % np.uint64(j + 1))
        index[j], index[k] = index[k], index[j]


@njit(cache=True, nogil=True)
def shuffle_runs(index, n, run, state, scratch):
    """Permute ``index[:n]`` in runs: cut it into runs of ``run`` consecutive entries and put the
    runs in random order (Fisher-Yates over runs); ``scratch`` has room for ``n`` entries.

    Rows are stored in random order (the converter shuffles them), so a run is a random set of
    rows that lie next to each other in memory: visiting runs in random order keeps the sweep
    random across passes while the hardware prefetcher streams each run from memory.
    """
    if n == 0:
        return
    n_runs = (n + run - 1) // run
    order = np.arange(n_runs)
    shuffle_prefix(order, n_runs, state)
    shift = np.int64(next_random(state) % np.uint64(n))  # run boundaries move every pass
    out = 0
    for r in range(n_runs):
        start = order[r] * run
        for j in range(start, min(start + run, n)):
            scratch[out] = index[(j + shift) % n]
            out += 1
    index[:n] = scratch[:n]


@njit(cache=True, nogil=True)
def row_norms_squared(indptr, data):
    """``||x_i||^2`` of every row, shape (n_rows,)."""
    n_rows = indptr.shape[0] - 1
    out = np.empty(n_rows, np.float64)
    for i in range(n_rows):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += np.float64(data[k]) * data[k]
        out[i] = s
    return out


@njit(cache=True, nogil=True, inline="always")
def dot_row(w, indptr, indices, data, i, bias):
    """``w . x_i`` including the bias feature; indices beyond ``w`` (minus the bias) are ignored."""
    n_w = w.shape[0] - 1
    s = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        j = indices[k]
        if j < n_w:
            s += w[j] * data[k]
    if bias > 0:
        s += w[n_w] * bias
    return s


@njit(cache=True, nogil=True)
def decision_values(indptr, indices, data, W, bias):
    """Decision values ``X W^T`` (+ bias), shape (n_rows, n_problems) for ``W`` of shape (n_problems, n_w)."""
    n_rows = indptr.shape[0] - 1
    out = np.empty((n_rows, W.shape[0]), np.float64)
    for i in range(n_rows):
        for p in range(W.shape[0]):
            out[i, p] = dot_row(W[p], indptr, indices, data, i, bias)
    return out


@njit(cache=True, nogil=True)
def loss_and_correct(indptr, indices, data, y, w, bias, loss, cost):
    """At fixed ``w``: ``sum_i cost[y_i] * loss(y_i w.x_i)`` and the count of ``y_i w.x_i > 0``.

    ``cost`` holds the C of negative and positive rows: ``cost[0]`` for y = -1, ``cost[1]`` for +1.
    """
    total = 0.0
    correct = 0
    for i in range(indptr.shape[0] - 1):
        margin = y[i] * dot_row(w, indptr, indices, data, i, bias)
        slack = 1.0 - margin
        if slack > 0:
            total += cost[1 if y[i] > 0 else 0] * (slack if loss == HINGE else slack * slack)
        if margin > 0:
            correct += 1
    return total, correct
