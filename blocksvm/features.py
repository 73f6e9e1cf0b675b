"""Feature maps: a sparse feature space held in memory proportional to the features the data uses.

A hashed feature space (VW's ``-b 28``, 32-bit hashes) has a largest index far beyond the number of
distinct features its rows use. A store of such data numbers its columns compactly: column ``j`` of
its blocks is the original (zero-based) column ``feature_map[j]``, ``feature_map`` sorted, and a model
trained on it keeps the same map. Everything sized by the features (``w``, a solver's state, a
model's ``coef``) is then sized by ``len(feature_map)``, never by the largest index.

When to compact (:func:`compact_space`): when the space is wider than :data:`DENSE_WIDTH` columns and
the data uses at most half of them. Below that width a dense weight array costs at most 512 kB, and
a space that is at least half used costs at most twice the compact one; compacting would then buy
nothing worth a map lookup per nonzero at prediction time, and every such store and model stays
exactly as before (LIBLINEAR's layout, ``coef`` as wide as the space).
"""

from __future__ import annotations

import numpy as np

DENSE_WIDTH = 1 << 16
"""Spaces up to this many columns stay dense whatever their use (512 kB a weight array)."""
MARK_LIMIT = 1 << 24
""":class:`FeatureSet` marks indices below this in a bool array (16 MB at most), sorts them beyond."""


def compact_space(used: int, width: int) -> bool:
    """Whether a space of ``width`` columns of which ``used`` occur is stored and trained compactly."""
    return width > DENSE_WIDTH and 2 * used <= width


LEARNER_DENSE_WIDTH = 1 << 22
"""A learner that grows with the features it meets (a stream, ``partial_fit``) stays dense up to this width
(32 MB a weight array): in slots it looks up every nonzero of every row it learns, which took 80% of a stream's
time on 1,000,000 features (ftrl: 10x slower), where a store pays its map once, at conversion."""


def compact_learner(used: int, width: int) -> bool:
    """Whether a growing learner over ``width`` columns of which ``used`` occur so far learns in slots."""
    return width > LEARNER_DENSE_WIDTH and compact_space(used, width)


class FeatureSet:
    """The distinct feature indices met, in memory bounded by them (and 16 MB), not by the largest one.

    Indices below :data:`MARK_LIMIT` are marked in a bool array as long as every index is (one pass
    over a chunk, no sort); once a larger one comes, the set is a sorted array of distinct indices,
    merged with each chunk's distinct ones when the pending ones outgrow it.
    """

    def __init__(self):
        self._marks = np.zeros(0, bool)
        self._sorted: np.ndarray | None = None  # the set once an index reached MARK_LIMIT
        self._pending: list[np.ndarray] = []
        self._pending_size = 0

    def add(self, indices: np.ndarray, largest: int) -> None:
        """Add ``indices`` (any order, repeats allowed), whose largest is ``largest`` (-1: none)."""
        if largest < 0:
            return
        if self._sorted is None and largest < MARK_LIMIT:
            if largest >= len(self._marks):
                grown = np.zeros(min(max(largest + 1, 2 * len(self._marks)), MARK_LIMIT), bool)
                grown[: len(self._marks)] = self._marks
                self._marks = grown
            self._marks[indices] = True
            return
        if self._sorted is None:
            self._sorted = np.flatnonzero(self._marks).astype(np.int64)
            self._marks = np.zeros(0, bool)
        self._pending.append(distinct(indices.astype(np.int64)))
        self._pending_size += len(self._pending[-1])
        if self._pending_size > max(len(self._sorted), 1 << 20):
            self._merge()

    def _merge(self) -> None:
        self._sorted = distinct(np.concatenate([self._sorted, *self._pending]))
        self._pending, self._pending_size = [], 0

    def sorted(self) -> np.ndarray:
        """The distinct indices met, sorted (int64)."""
        if self._sorted is None:
            return np.flatnonzero(self._marks).astype(np.int64)
        self._merge()
        return self._sorted


def distinct(indices: np.ndarray) -> np.ndarray:
    """The distinct values of ``indices``, sorted: ``np.unique``'s result by one sort (numpy 2.4's ``np.unique`` of
    integers hashes first, then sorts: 10x slower on 10M indices, 13 of the 27 s of a 600k-row convert of 2^24
    features)."""
    ordered = np.sort(indices)
    keep = np.empty(len(ordered), bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def rank_in(feature_map: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``np.searchsorted(feature_map, columns)`` (int32), the columns searched in their sorted order: each search
    then starts where the last ended and reads the map in order (6M columns of a 6.5M-feature map: 1.3 s against
    5.7 s of cache misses in the given order)."""
    order = np.argsort(columns)
    at = np.empty(len(columns), np.int32)
    at[order] = np.searchsorted(feature_map, columns[order])
    return at


def positions(feature_map: np.ndarray, columns: np.ndarray, absent: int) -> np.ndarray:
    """The compact column of each original column in ``columns`` (int32); ``absent`` for those not in the map."""
    if len(feature_map) == 0:
        return np.full(len(columns), absent, np.int32)
    at = rank_in(feature_map, columns)
    at[at == len(feature_map)] = 0
    return np.where(feature_map[at] == columns, at, absent).astype(np.int32)


def translate(indices: np.ndarray, source_map: np.ndarray | None, target_map: np.ndarray | None, absent: int):
    """Columns of one space (``source_map``: its compact columns' originals, None: dense) in another's
    (``target_map``); columns the target lacks become ``absent``, or stay as they are for a dense target."""
    original = indices if source_map is None else source_map[indices]
    if target_map is None:
        return original
    return positions(target_map, original, absent)
