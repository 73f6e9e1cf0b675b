"""The column layout's per-entry loops (:mod:`blocksvm.store.columns`): feature ranges from the counts, a row
block's entries dealt to the ranges, and a range's entries sorted by column with their statistics.

Arrays in, arrays out; nothing here knows a file. Every loop releases the GIL, so the column blocks are built on
several threads at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def add_counts(counts: np.ndarray, indices: np.ndarray, shift: int) -> bool:
    """Count each feature's entries: ``counts[indices[e] - shift] += 1`` for every entry ``e``; False (and nothing
    counted past it) when an index lies outside ``shift .. shift + len(counts) - 1``."""
    n = len(counts)
    for e in range(len(indices)):
        j = indices[e] - shift
        if j < 0 or j >= n:
            return False
        counts[j] += 1
    return True


@njit(cache=True, nogil=True)
def choose_ranges(counts: np.ndarray, entry_bytes: int, column_bytes: int, target: float) -> np.ndarray:
    """The ends ``stop`` of consecutive feature ranges ``[start, stop)`` covering ``0 .. len(counts) - 1``, each
    about ``target`` bytes: feature ``j`` weighs ``counts[j] * entry_bytes`` plus ``column_bytes`` when it has
    entries (its pointer, id and statistics). A range ends before the feature that would carry it past ``target``;
    a feature heavier than ``target`` alone makes a range of its own (with the empty features around it).

    counts : int64 array of shape (n_features,), the entries of each feature.
    Returns int64 array of shape (n_ranges,), increasing, its last value ``n_features``.
    """
    n = len(counts)
    stops = np.empty(max(n, 1), np.int64)
    n_ranges = 0
    held = 0.0  # bytes of the range being filled
    for j in range(n):
        if counts[j] == 0:
            continue
        weight = counts[j] * entry_bytes + column_bytes
        if held > 0 and held + weight > target:
            stops[n_ranges] = j
            n_ranges += 1
            held = 0.0
        held += weight
    stops[n_ranges] = n
    return stops[: n_ranges + 1].copy()


@njit(cache=True, nogil=True)
def range_of_features(stops: np.ndarray, found: np.ndarray) -> None:
    """Each feature's range into ``found`` (shape (stops[-1],)): ``r`` at the features ``stops[r-1] .. stops[r] - 1``
    (a lookup per entry: a search among the ranges would cost a mispredicted branch per step)."""
    first = 0
    for r in range(len(stops)):
        found[first : stops[r]] = r
        first = stops[r]


@njit(cache=True, nogil=True)
def count_ranges(block, range_of: np.ndarray, n_ranges: int, span, entry_range: np.ndarray) -> np.ndarray:
    """The entries of rows ``span = (lo, hi)`` of a block in each feature range (feature ``j``'s: ``range_of[j]``),
    of ``n_ranges``, each entry's range written to ``entry_range`` (at the entry's place in the block) for
    :func:`deal_entries`.

    block : (indptr, indices), the block's CSR row pointers and zero-based columns.
    range_of : integer array of shape (n_features,) (:func:`range_of_features`).
    entry_range : array of shape (the block's nnz,), of ``range_of``'s type.
    Returns int64 array of shape (n_ranges,).
    """
    indptr, indices = block
    lo, hi = span
    counts = np.zeros(n_ranges, np.int64)
    for e in range(indptr[lo], indptr[hi]):
        r = range_of[indices[e]]
        entry_range[e] = r
        counts[r] += 1
    return counts


@njit(cache=True, nogil=True)
def deal_entries(block, first_row: int, row_of, entry_range: np.ndarray, span, at: np.ndarray, out) -> None:
    """Deal the entries of rows ``span = (lo, hi)`` of a block to their feature ranges (``entry_range``, from
    :func:`count_ranges`), in the order of their rows (a stable counting sort by range): an entry of range ``r`` goes
    to position ``at[r]`` (then advanced, in place) of each output array. Threads that deal consecutive rows of a
    block, each from its own ``at`` (:func:`count_ranges` of the rows before), write apart.

    The range is read from ``entry_range`` in entry order, not looked up here: a lookup in the features' table (a
    random read, out of the cache) would delay the next entry's ``at[r]``, which the processor cannot read before it
    knows the range (a dealt entry cost 70-80 ns on a million features, 18-21 ns so, its count included).

    block : (indptr, indices, data), the block's CSR arrays, zero-based columns.
    first_row : the block's first row in the store.
    row_of : (row_class, row_weight), each row's class and instance weight (either empty: not dealt).
    out : (cols, rows, vals, cls, wts), arrays of shape (the block's nnz,): an entry's column, its store-wide row
        (``first_row`` + its row in the block), its value, and where those arrays are not empty its row's class and
        weight.
    """
    indptr, indices, data = block
    row_class, row_weight = row_of
    cols, rows, vals, cls, wts = out
    lo, hi = span
    with_class, weighted = len(cls) > 0, len(wts) > 0
    for i in range(lo, hi):
        for e in range(indptr[i], indptr[i + 1]):
            r = entry_range[e]
            p = at[r]
            at[r] = p + 1
            cols[p] = indices[e]
            rows[p] = first_row + i
            vals[p] = data[e]
            if with_class:
                cls[p] = row_class[i]
            if weighted:
                wts[p] = row_weight[i]


@njit(cache=True, nogil=True)
def sort_columns(entries, first: int, at: np.ndarray, out) -> None:
    """Sort a range's entries by column (a stable counting sort: rows stay in the order dealt, ascending). A range's
    entries may come in consecutive segments, one call each: ``at`` carries the sort from one to the next.

    entries : (cols, rows, vals, cls, wts), as :func:`deal_entries` dealt them.
    first : the range's first feature; feature ``first + k``'s next entry goes to ``at[k]`` (in-place: the
        position after its entries so far).
    out : (rows, vals, cls, wts), output arrays of shape (the range's nnz,); ``cls`` and ``wts`` empty where the
        entries carry none.
    """
    cols, rows, vals, cls, wts = entries
    out_rows, out_vals, out_cls, out_wts = out
    with_class, weighted = len(out_cls) > 0, len(out_wts) > 0
    for e in range(len(cols)):
        k = cols[e] - first
        p = at[k]
        at[k] = p + 1
        out_rows[p] = rows[e]
        out_vals[p] = vals[e]
        if with_class:
            out_cls[p] = cls[e]
        if weighted:
            out_wts[p] = wts[e]


@njit(cache=True, nogil=True)
def column_statistics(counts: np.ndarray, entries, statistics) -> None:
    """Sum each stored column's statistics by class over its entries sorted by column (:func:`sort_columns`):
    ``sums[s, c] += w_i x_ij`` and ``squares[s, c] += w_i x_ij**2`` over its entries of rows of class ``c`` (``w_i``
    the row's weight: ``wts``, or 1 where it is empty; ``c`` from ``cls``, or 0 where it is empty), in row order.

    Summed after the sort, column by column, not as each entry is sorted: there a column's sums are read at random
    and each sum waits for the last one written (the sort cost three times as much).

    counts : int64 array, each column's entries (its entries follow the previous column's); the columns with entries
        are the stored ones, ``s`` counting them.
    entries : (vals, cls, wts), sorted by column.
    statistics : (sums, squares), float64 arrays of shape (stored columns, classes), zero.
    """
    vals, cls, wts = entries
    sums, squares = statistics
    with_class, weighted = len(cls) > 0, len(wts) > 0
    p = s = 0
    for k in range(len(counts)):
        if counts[k] == 0:
            continue
        for q in range(p, p + counts[k]):
            x = np.float64(vals[q])
            wx = wts[q] * x if weighted else x
            c = cls[q] if with_class else 0
            sums[s, c] += wx
            squares[s, c] += wx * x
        p += counts[k]
        s += 1


@njit(cache=True, nogil=True)
def rows_ascending(indptr: np.ndarray, rows: np.ndarray, n_rows: int) -> bool:
    """Whether each column's rows (``rows[indptr[s]:indptr[s+1]]``) increase strictly and lie in ``0 .. n_rows - 1``."""
    for s in range(len(indptr) - 1):
        previous = -1
        for p in range(indptr[s], indptr[s + 1]):
            r = rows[p]
            if r <= previous or r >= n_rows:
                return False
            previous = r
    return True
