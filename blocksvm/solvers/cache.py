"""A cache of informative rows kept in memory across blocks (selective block minimization).

Chang & Roth, "Selective Block Minimization for Faster Convergence of Limited Memory Large-Scale
Linear Models", KDD 2011: the rows that determine ``w`` are the support vectors, a small part of
a large data set. Keeping them in memory and solving every newly loaded block *together with
them* updates the support vectors at every visit instead of once a pass.

Eviction rule (applied after every visit, over the cached rows and the block just solved):
rows with ``alpha_i = 0`` in every problem are dropped; then free support vectors
(``0 < alpha_i < U_i`` in some problem) come first, bound ones (``alpha_i = U_i``) after, each
group in random order, until ``capacity`` bytes are filled.
"""

from __future__ import annotations

import numpy as np

from blocksvm._rows_kernels import append_rows, compact_rows
from blocksvm.rows import Rows


class RowCache:
    """Rows of the store kept in memory, with their store-wide row ids.

    The rows live in buffers that grow to the largest cache seen and are then filled in place:
    a visit allocates nothing (fresh allocations of tens of MB at every visit cost page faults,
    15-20% of a pass where the whole data fits in the cache).

    Parameters
    ----------
    capacity : float
        Bytes the cached rows may take (CSR arrays, labels, row ids and instance weights).
    dtype : value dtype of the store.
    weighted : bool
        The rows have instance weights (kept beside their labels).

    Attributes
    ----------
    rows : Rows
        The cached rows (views of the buffers; no line numbers).
    row_ids : ndarray of int64, shape (n_rows,)
        Position of each cached row in the store (its index into ``alpha``), increasing.
    """

    def __init__(self, capacity: float, dtype, weighted: bool = False):
        self.capacity = float(capacity)
        self.dtype = np.dtype(dtype)
        self.weighted = weighted
        self._indptr = np.zeros(1, np.int64)
        self._indices = np.zeros(0, np.int32)
        self._data = np.zeros(0, self.dtype)
        self._labels = np.zeros(0)
        self._weights = np.zeros(0)  # (with instance weights only)
        self._row_ids = np.zeros(0, np.int64)
        self.n_rows, self.nnz = 0, 0

    def emptied(self) -> RowCache:
        """An empty cache of the same capacity, type and weights."""
        return RowCache(self.capacity, self.dtype, weighted=self.weighted)

    @property
    def rows(self) -> Rows:
        n, nnz = self.n_rows, self.nnz
        weights = self._weights[:n] if self.weighted else None
        return Rows(self._indptr[: n + 1], self._indices[:nnz], self._data[:nnz], self._labels[:n], weights=weights)

    @property
    def row_ids(self) -> np.ndarray:
        return self._row_ids[: self.n_rows]

    @property
    def nbytes(self) -> int:
        return self.row_bytes(np.diff(self._indptr[: self.n_rows + 1])).sum() if self.n_rows else 0

    def row_bytes(self, lengths: np.ndarray) -> np.ndarray:
        return (32 if self.weighted else 24) + lengths * (4 + self.dtype.itemsize)

    def excluding(self, first: int, stop: int) -> RowCache:
        """The cache without the rows whose id is in ``[first, stop)`` (the block about to be solved: its
        own rows are solved as the block's). They are dropped in place; :meth:`refill` takes them
        back from the block if they still belong in the cache."""
        ids = self.row_ids
        keep = np.flatnonzero((ids < first) | (ids >= stop))
        if len(keep) < self.n_rows:
            self._keep(keep)
        return self

    def refill(self, block, alpha: np.ndarray, upper_of, rng: np.random.Generator) -> None:
        """Choose the rows to keep among this cache's and ``block``'s, by the eviction rule.

        ``alpha`` is the store-wide dual array, shape (n_problems, n_rows); ``upper_of(labels)``
        gives the upper bound ``U`` of rows with these labels in each problem, shape
        (n_problems, len(labels)), times each row's instance weight here (``C_i``). This cache must not hold rows
        of ``block`` (see :meth:`excluding`).
        """
        block_ids = np.arange(block.row_offset, block.row_offset + block.n_rows)
        ids = np.concatenate([self.row_ids, block_ids])
        labels = np.concatenate([self._labels[: self.n_rows], block.labels])
        weights = np.concatenate([self._weights[: self.n_rows], block.weights]) if self.weighted else None
        lengths = np.concatenate([np.diff(self._indptr[: self.n_rows + 1]), np.diff(block.indptr)])
        a = np.abs(alpha[:, ids])  # (regression's beta has either sign)
        upper = upper_of(labels)
        if weights is not None:  # U_i = U weight_i (inf * 0 for a row of weight 0 at no bound: its alpha is 0)
            with np.errstate(invalid="ignore"):
                upper = upper * weights
        at_upper = a == upper
        free = ((a > 0) & ~at_upper).any(axis=0)
        bound = (a > 0).any(axis=0) & ~free
        chosen = []
        for group in (np.flatnonzero(free), np.flatnonzero(bound)):
            chosen.append(rng.permutation(group))
        order = np.concatenate(chosen)
        fits = np.cumsum(self.row_bytes(lengths[order])) <= self.capacity
        keep = np.sort(order[fits])  # store order: sequential memory for the sweep
        from_cache, from_block = keep[keep < self.n_rows], keep[keep >= self.n_rows] - self.n_rows
        self._keep(from_cache)
        self._reserve(self.n_rows + len(from_block), self.nnz + int(np.diff(block.indptr)[from_block].sum()))
        n = self.n_rows
        self.nnz = append_rows(
            self._indptr, self._indices, self._data, n, block.indptr, block.indices, block.data, from_block
        )
        self._labels[n : n + len(from_block)] = block.labels[from_block]
        if self.weighted:
            self._weights[n : n + len(from_block)] = block.weights[from_block]
        self._row_ids[n : n + len(from_block)] = block_ids[from_block]
        self.n_rows = n + len(from_block)

    def _keep(self, rows: np.ndarray) -> None:
        """Keep only the cached rows at positions ``rows`` (increasing), in place."""
        self.nnz = compact_rows(self._indptr, self._indices, self._data, rows)
        self._labels[: len(rows)] = self._labels[rows]
        if self.weighted:
            self._weights[: len(rows)] = self._weights[rows]
        self._row_ids[: len(rows)] = self._row_ids[rows]
        self.n_rows = len(rows)

    def _reserve(self, n_rows: int, nnz: int) -> None:
        """Grow the buffers (keeping their content) to hold ``n_rows`` rows and ``nnz`` entries."""
        if n_rows + 1 > len(self._indptr):
            size = max(n_rows + 1, len(self._indptr) * 5 // 4)
            self._indptr = _grown(self._indptr, size)
            self._labels = _grown(self._labels, size)
            self._row_ids = _grown(self._row_ids, size)
            if self.weighted:
                self._weights = _grown(self._weights, size)
        if nnz > len(self._indices):
            size = max(nnz, len(self._indices) * 5 // 4)
            self._indices = _grown(self._indices, size)
            self._data = _grown(self._data, size)

    def state(self) -> dict[str, np.ndarray]:
        rows = self.rows
        arrays = {"indptr": rows.indptr, "indices": rows.indices, "data": rows.data, "labels": rows.labels}
        if self.weighted:
            arrays["weights"] = rows.weights
        return {f"cache_{name}": array for name, array in {**arrays, "row_ids": self.row_ids}.items()}

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        self._indptr = np.array(arrays["cache_indptr"], dtype=np.int64)
        self._indices = np.array(arrays["cache_indices"], dtype=np.int32)
        self._data = np.array(arrays["cache_data"], dtype=self.dtype)
        self._labels = np.array(arrays["cache_labels"], dtype=np.float64)
        if self.weighted:
            self._weights = np.array(arrays["cache_weights"], dtype=np.float64)
        self._row_ids = np.array(arrays["cache_row_ids"], dtype=np.int64)
        self.n_rows, self.nnz = len(self._row_ids), len(self._indices)


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(size, array.dtype)
    out[: len(array)] = array
    return out
