"""Kernels every solver shares: row orders, prefetching, row norms and losses.

All are plain ``@njit(cache=True, nogil=True)`` functions over arrays. A block arrives as CSR
arrays ``indptr`` (int64, n_rows + 1), ``indices`` (int32, zero-based), ``data`` (float32 or
float64); a weight vector ``w`` has ``n_features + 1`` entries, the last one for the bias feature
whose constant value is ``bias`` (no bias term when ``bias <= 0``).

Two habits keep the row loops fast (measured in ``tools/bench_epoch.py``):

- Hot loops index with unsigned integers (``np.uint64(k)``, ``np.uint32(j)``): numba then skips
  its negative-index wraparound, which otherwise costs more instructions than the arithmetic.
- Arrays are never passed to a helper called once per row: numba reference-counts array
  arguments with atomic instructions, which costs more than a whole coordinate step. Helpers
  called once per run of rows, and the ``prefetch`` intrinsic, are fine.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from blocksvm.losses import EPSILON, LOGISTIC

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


RUN = 32  # consecutive rows visited as one stream
GROUP = 4  # runs interleaved row by row


@njit(cache=True, nogil=True)
def interleaved_runs(order, rows, n, state):
    """Write ``rows[:n]`` into ``order[:n]`` in a random order that keeps memory access streaming.

    ``rows[:n]`` is cut into runs of ``RUN`` consecutive entries (the first run shortened by a
    random phase, so boundaries move from pass to pass); the runs are shuffled, and each group
    of ``GROUP`` runs is visited row by row in turn (run 1's first row, run 2's first row, ...).

    Rows are stored in random order (the converter shuffles them), so with ``rows`` increasing
    each run is a random set of rows lying next to each other in memory: the CPU streams
    ``GROUP`` runs at once instead of waiting for one row at a time, as a plain permutation
    makes it do (3-4x slower per row, on data larger than the L2 cache). Interleaving matters
    for convergence: visiting whole runs one after another keeps neighbouring rows together
    in every pass, which cost dual CD 5x more outer iterations on a9a (squared hinge: 175
    against 31). Each group's rows are then shuffled among themselves: visited in a fixed
    pattern, a row followed its neighbour in memory in nearly every pass, and dual CD of the
    logistic loss stalled (a9a: 9e-6 from the optimum after 33 passes, 5e-7 after 50, where a
    plain permutation is at 2e-8 and 2e-12); shuffled, it converges as a permutation does, and
    the group's rows still lie in GROUP short stretches of memory.
    """
    if n == 0:
        return
    phase = np.int64(next_random(state) % np.uint64(RUN))
    first = phase if phase > 0 else RUN
    n_runs = 1 + max(0, (n - first + RUN - 1) // RUN)
    runs = np.arange(n_runs)
    shuffle_prefix(runs, n_runs, state)
    out = 0
    for g in range(0, n_runs, GROUP):
        size = min(GROUP, n_runs - g)
        group_start = out
        for q in range(RUN):
            for h in range(size):
                r = runs[g + h]
                start = 0 if r == 0 else first + (r - 1) * RUN
                stop = min(n, first if r == 0 else start + RUN)
                if start + q < stop:
                    order[out] = rows[start + q]
                    out += 1
        shuffle_prefix(order[group_start:out], out - group_start, state)


@njit(cache=True, nogil=True)
def visit_order(order, rows, n, seed):
    """Write the order of a sweep over ``rows[:n]`` into ``order[:n]``: :func:`interleaved_runs`
    seeded by ``seed``, or ``rows`` as they are when ``seed < 0`` (file order, ``--order file``).
    Returns the random state for the sweeps that follow."""
    state = np.array([np.uint64(max(seed, 0))], np.uint64)
    if seed >= 0:
        interleaved_runs(order, rows, n, state)
    else:
        order[:n] = rows[:n]
    return state


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to start loading the cache line of ``array[index]`` (of a 2-d array: ``array[index, 0]``, its row's
    first item) (a hint: never faults)."""
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        ary = context.make_array(array_type)(context, builder, args[0])
        first = context.cast(builder, args[1], index_type, types.intp)
        at = [first, *(context.get_constant(types.intp, 0) for _ in range(array_type.ndim - 1))]
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, at, wraparound=False)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        name = "llvm.prefetch.p0" if str(byte_ptr) == "ptr" else "llvm.prefetch.p0i8"  # opaque or typed pointers
        signature_ir = ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, signature_ir, name)
        builder.call(fn, [builder.bitcast(ptr, byte_ptr), i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def soft_newton_step(gp, gn, h, x):
    """The ``d`` minimizing ``|x + d| + g d + h d^2 / 2`` (a one-variable quadratic plus an absolute value, ``h >
    0``), given ``gp = g + 1`` and ``gn = g - 1`` (scaled: ``g +- epsilon`` for ``epsilon |x + d|``): the Newton step
    soft-thresholded at ``-x``. CDN's and newGLMNET's coordinate steps and dual CD's regression step."""
    if gp < h * x:
        return -gp / h
    if gn > h * x:
        return -gn / h
    return -x


@njit(cache=True, nogil=True, inline="always")
def slack_loss(loss, slack):
    """The loss of a row of the margin or epsilon kind whose slack ``s`` is positive: ``s (linear + quadratic s)``.

    ``loss`` is the table ``[threshold, linear, quadratic, kind]`` of :mod:`blocksvm.losses`; every kernel reads
    the loss through :func:`row_loss`, :func:`row_slope` and this function, never writes a formula itself.
    """
    return slack * (loss[1] + loss[2] * slack)


@njit(cache=True, nogil=True, inline="always")
def slack_slope(loss, slack):
    """``-d loss / d m`` at a positive slack ``s``: ``linear + 2 quadratic s`` (0 wherever ``s <= 0``)."""
    return loss[1] + 2.0 * loss[2] * slack


@njit(cache=True, nogil=True, inline="always")
def row_loss(loss, z):
    """The loss of a row's margin ``z = y w.x`` (classification) or residual ``z = y - w.x`` (regression)."""
    kind = loss[3]
    if kind == LOGISTIC:  # log(1 + exp(-z)) without overflow
        return math.log1p(math.exp(-z)) if z >= 0 else math.log1p(math.exp(z)) - z
    slack = abs(z) - loss[0] if kind == EPSILON else loss[0] - z
    return slack_loss(loss, slack) if slack > 0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def row_slope(loss, margin):
    """``-d loss / d m`` at a row's margin (classification): the size of a gradient step, 0 for none."""
    if loss[3] == LOGISTIC:  # 1 / (1 + exp(m)) without overflow
        return 1.0 / (1.0 + math.exp(margin)) if margin <= 0 else math.exp(-margin) / (1.0 + math.exp(-margin))
    slack = loss[0] - margin
    return slack_slope(loss, slack) if slack > 0 else 0.0


# The online kernel contract. An online learner's kernel makes one pass over a block:
#
#     stats = kernel(rows, y, w, state, hyper, setup, seed)
#
# rows: the block's CSR arrays and its rows' instance weights (indptr, indices, data, weights; weights empty:
# every row weighs 1); y: the targets of one problem (+1 or -1); w: the array the learner's model is made of
# (n_features + 1 entries, the bias feature's last), updated in place; state: a tuple of the learner's other
# arrays of this problem, updated in place; hyper: its numbers (float64 array); setup: (bias, loss, cost, step)
# -- the bias feature's value (<= 0: none), the loss table of blocksvm.losses, the weight of the reported loss
# of negative and positive rows, and the class weights (1 without them) that scale their updates; seed: the row
# order's (< 0: file order). A row's instance weight multiplies its class weight wherever the learner reads one
# (docs/ALGORITHMS.md says what that does in each learner), and a row of weight 0 is skipped as if absent (no
# judgement, no step counted). It returns the stats below, each row judged before its update (progressive
# validation): loss sum and rows with a positive margin at the w each row saw (each counted weight_i times),
# and rows that changed the model.
LOSS_SEEN, CORRECT_SEEN, UPDATES = range(3)
N_ONLINE_STATS = 3


@njit(cache=True, nogil=True)
def online_pass(indptr, seed):
    """The row order of an online learner's pass over a block (:func:`visit_order`) and its zeroed stats."""
    n_rows = indptr.shape[0] - 1
    order = np.empty(n_rows, np.int64)
    visit_order(order, np.arange(n_rows), n_rows, seed)
    return order, np.zeros(N_ONLINE_STATS, np.float64)


@njit(cache=True, nogil=True, inline="always")
def visited_row(order, s, indptr, weights):
    """Row ``order[s]`` of an online pass: its index, its instance weight (0: the row is not there, and the pass
    skips it) and the span ``start .. stop - 1`` of its entries (unsigned, as every hot loop indexes)."""
    i = order[s]
    return i, row_weight(weights, i), np.uint64(indptr[i]), np.uint64(indptr[i + 1])


@njit(cache=True, nogil=True, inline="always")
def predicted_right(margin, label):
    """Whether the row of class ``label`` (1: positive) with the margin ``y w.x`` is predicted right, as
    ``predict`` reads a decision value: positive above 0, negative at or below it (a row whose decision is 0,
    such as an empty row without a bias, is predicted negative)."""
    return margin > 0 or (margin == 0 and label == 0)


@njit(cache=True, nogil=True, inline="always")
def judge(stats, loss, cost, label, margin, weight):
    """Progressive validation of one row of instance weight ``weight``, before its update: add its loss (weighted
    by ``cost[label]`` and ``weight``) and, if it is predicted right, its weight to ``stats``; return its slack
    ``threshold - margin``."""
    stats[LOSS_SEEN] += cost[label] * weight * row_loss(loss, margin)
    if predicted_right(margin, label):
        stats[CORRECT_SEEN] += weight
    return loss[0] - margin


@njit(cache=True, nogil=True, inline="always")
def judge_slope(stats, loss, cost, label, margin, weight):
    """:func:`judge`, for the gradient learners: return ``-d loss / d m`` at the margin (0: no step)."""
    judge(stats, loss, cost, label, margin, weight)
    return row_slope(loss, margin)


@njit(cache=True, nogil=True, inline="always")
def add_row(w, u, c, indptr, indices, data, i, d, bias):
    """An averaging learner's update at step ``c``: ``w <- w + d x_i`` and Daume's sum ``u <- u + c d x_i``, the
    bias feature included (solvers/base.py, ``AveragingSolver``)."""
    n_w = w.shape[0] - 1
    for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        j = np.uint32(indices[k])
        w[j] += d * data[k]
        u[j] += c * d * data[k]
    if bias > 0:
        w[n_w] += d * bias
        u[n_w] += c * d * bias


@njit(cache=True, nogil=True)
def drop_shrunk(active, active_size, shrunk):
    """Drop the rows marked ``shrunk`` from the active list ``active[:active_size]``, which keeps its order, and clear
    their marks; returns the list's new size (the dual coordinate descents' shrinking, once a pass)."""
    kept = 0
    for p in range(active_size):
        if not shrunk[active[p]]:
            active[kept] = active[p]
            kept += 1
        shrunk[active[p]] = False
    return kept


@njit(cache=True, nogil=True)
def row_norms_squared(indptr, data):
    """``||x_i||^2`` of every row, shape (n_rows,)."""
    n_rows = indptr.shape[0] - 1
    out = np.empty(n_rows, np.float64)
    for i in range(n_rows):
        s = 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            s += np.float64(data[k]) * data[k]
        out[i] = s
    return out


@njit(cache=True, nogil=True, inline="always")
def row_weight(weights, i):
    """Row ``i``'s instance weight: ``weights[i]``, or 1 when ``weights`` is empty (rows without weights)."""
    return weights[i] if weights.shape[0] > 0 else 1.0


@njit(cache=True, nogil=True, inline="always")
def member_weight(member, k, i, weights):
    """Row ``i``'s instance weight in problem ``k``: 0 when ``member[k, i]`` is false (the row is held out of it,
    as cross-validation holds a fold out), else :func:`row_weight`."""
    return row_weight(weights, i) if member[k, i] else 0.0


@njit(cache=True, nogil=True)
def loss_and_correct(indptr, indices, data, y, w, bias, loss, cost, weights):
    """At fixed ``w``: ``sum_i cost_i * loss_i``, the rows predicted right (:func:`predicted_right`) and
    ``sum_i (y_i - w.x_i)^2``, each row counted ``weight_i`` times.

    ``loss`` is the table of :mod:`blocksvm.losses`; ``cost`` holds the C of negative and positive rows:
    ``cost[0]`` for y = -1, ``cost[1]`` for +1 (regression: ``cost[1]`` for every row); ``weights`` each row's
    instance weight, which multiplies its cost (empty: every row weighs 1). Features beyond ``w`` (minus its bias
    entry) are ignored.
    """
    n_w = w.shape[0] - 1
    regression = loss[3] == EPSILON
    total, squared = 0.0, 0.0
    correct = 0.0
    for i in range(indptr.shape[0] - 1):
        weight = row_weight(weights, i)
        dot = w[n_w] * bias if bias > 0 else 0.0
        for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            j = np.uint32(indices[k])
            if j < n_w:
                dot += w[j] * data[k]
        if regression:
            residual = y[i] - dot
            total += cost[1] * weight * row_loss(loss, residual)
            squared += weight * residual * residual
            continue
        margin = y[i] * dot
        label = 1 if y[i] > 0 else 0
        total += cost[label] * weight * row_loss(loss, margin)
        if predicted_right(margin, label):
            correct += weight
    return total, correct, squared


@njit(cache=True, nogil=True, inline="always")
def add_scaled_row(out, indices, data, start, stop, c, bias):
    """``out += c x`` for the row of entries ``start .. stop - 1`` (and its bias feature of value ``bias``, the last
    of ``out``, when ``bias > 0``), added in the row's order."""
    for p in range(start, stop):
        out[np.uint32(indices[p])] += c * data[p]
    if bias > 0:
        out[out.shape[0] - 1] += c * bias


@njit(cache=True, nogil=True)
def dot(a, b):
    """``a.b``, added in order: the same bits on every machine (a BLAS dot splits the sum among its threads, and
    waking them between two passes of a driver cost more than the dot: 2 s of a 4 s Newton run, measured)."""
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


@njit(cache=True, nogil=True, inline="always")
def row_dot(w, indptr, indices, data, r):
    """``w.x_r`` of CSR row ``r``."""
    total = 0.0
    for k in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
        total += w[np.uint32(indices[k])] * data[k]
    return total


@njit(cache=True, nogil=True, inline="always")
def row_add(w, indptr, indices, data, r, d):
    """``w += d x_r`` of CSR row ``r``."""
    for k in range(np.uint64(indptr[r]), np.uint64(indptr[r + 1])):
        w[np.uint32(indices[k])] += d * data[k]


@njit(cache=True, nogil=True, inline="always")
def working_dot(w, a, b, n_a, i):
    """``w.x_i`` of working row ``i`` (A's rows ``0 .. n_a - 1``, then B's: each a CSR tuple ``(indptr, indices,
    data, ...)``, their values of either precision), without the bias."""
    if i < n_a:
        return row_dot(w, a[0], a[1], a[2], i)
    return row_dot(w, b[0], b[1], b[2], i - n_a)


@njit(cache=True, nogil=True, inline="always")
def working_add(w, a, b, n_a, i, d, bias):
    """``w += d x_i`` of working row ``i`` (as :func:`working_dot`), and ``d * bias`` to the bias weight (``w``'s
    last) when ``bias > 0``."""
    if i < n_a:
        row_add(w, a[0], a[1], a[2], i, d)
    else:
        row_add(w, b[0], b[1], b[2], i - n_a, d)
    if bias > 0:
        w[w.shape[0] - 1] += d * bias
