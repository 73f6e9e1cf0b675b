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
def range_of_features(stops: np.ndarray) -> np.ndarray:
    """Each feature's range: int32 array of shape (stops[-1],), ``r`` at the features ``stops[r-1] .. stops[r] - 1``
    (a lookup per entry: a search among the ranges would cost a mispredicted branch per step)."""
    found = np.empty(stops[-1], np.int32)
    first = 0
    for r in range(len(stops)):
        found[first : stops[r]] = r
        first = stops[r]
    return found


@njit(cache=True, nogil=True)
def count_ranges(indptr: np.ndarray, indices: np.ndarray, range_of: np.ndarray, n_ranges: int, lo: int, hi: int):
    """The entries of rows ``lo .. hi - 1`` of a block (CSR ``indptr``, ``indices``) in each of ``n_ranges`` feature
    ranges (feature ``j``'s: ``range_of[j]``): int64 array of shape (n_ranges,)."""
    counts = np.zeros(n_ranges, np.int64)
    for e in range(indptr[lo], indptr[hi]):
        counts[range_of[indices[e]]] += 1
    return counts


@njit(cache=True, nogil=True)
def deal_entries(block, first_row: int, row_of, range_of: np.ndarray, span, at: np.ndarray, out) -> None:
    """Deal the entries of rows ``span = (lo, hi)`` of a block to their feature ranges (feature ``j``'s:
    ``range_of[j]``), in the order of their rows (a stable counting sort by range): an entry of range ``r`` goes to
    position ``at[r]`` (then advanced, in place) of each output array. Threads that deal consecutive rows of a block,
    each from its own ``at`` (:func:`count_ranges` of the rows before), write apart.

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
            j = indices[e]
            r = range_of[j]
            p = at[r]
            at[r] = p + 1
            cols[p] = j
            rows[p] = first_row + i
            vals[p] = data[e]
            if with_class:
                cls[p] = row_class[i]
            if weighted:
                wts[p] = row_weight[i]


@njit(cache=True, nogil=True)
def sort_columns(entries, first: int, at: np.ndarray, slot: np.ndarray, out, statistics) -> None:
    """Sort a range's entries by column (a stable counting sort: rows stay in the order dealt, ascending) and, where
    the layout keeps them, sum each stored column's statistics by class: ``sums[s, c] += w_i x_ij`` and
    ``squares[s, c] += w_i x_ij**2`` over its entries of rows of class ``c`` (``w_i`` the row's weight: ``wts``, or 1
    where it is empty; ``c`` from ``cls``, or 0 where it is empty), summed in row order. A range's entries may come
    in consecutive segments, one call each: ``at`` carries the sort from one to the next.

    entries : (cols, rows, vals, cls, wts), as :func:`deal_entries` dealt them.
    first : the range's first feature; feature ``first + k``'s next entry goes to ``at[k]`` (in-place: the
        position after its entries so far), its statistics to row ``slot[k]`` of ``sums`` and ``squares`` (its
        place among the range's stored columns).
    out : (rows, vals), output arrays of shape (the range's nnz,).
    statistics : (sums, squares), float64 arrays of shape (stored columns, classes), zero before the first segment;
        of no classes (shape (stored columns, 0)): none kept.
    """
    cols, rows, vals, cls, wts = entries
    out_rows, out_vals = out
    sums, squares = statistics
    with_class, weighted, summed = len(cls) > 0, len(wts) > 0, sums.shape[1] > 0
    for e in range(len(cols)):
        k = cols[e] - first
        p = at[k]
        at[k] = p + 1
        out_rows[p] = rows[e]
        out_vals[p] = vals[e]
        if not summed:
            continue
        x = np.float64(vals[e])
        wx = wts[e] * x if weighted else x
        c = cls[e] if with_class else 0
        s = slot[k]
        sums[s, c] += wx
        squares[s, c] += wx * x


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
