"""CSR rows: compiled helpers that move rows around (shuffle, partition, gather) and check their order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass
class Rows:
    """CSR rows with their labels: the one in-memory rows type (parsed chunks, blocks, caches).

    Attributes
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
    indices : ndarray of int32, shape (nnz,)
        Feature indices, increasing along each row (zero-based in a store's blocks).
    data : ndarray of float32 or float64, shape (nnz,)
    labels : ndarray of float64, shape (n_rows,)
        Labels as written in the source file.
    lines : ndarray of int64, shape (n_rows,), or None
        Line number of each row in the source file (None where nobody needs them: a row cache).
    weights : ndarray of float64, shape (n_rows,), or None
        Each row's instance weight (finite, >= 0), when the source has them; None: every row weighs 1.
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    labels: np.ndarray
    lines: np.ndarray | None = None
    weights: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return len(self.labels)

    @property
    def nnz(self) -> int:
        return len(self.indices)

    @property
    def nbytes(self) -> int:
        arrays = (self.indptr, self.indices, self.data, self.labels, self.lines, self.weights)
        return sum(a.nbytes for a in arrays if a is not None)

    def to_csr(self, n_features: int):
        """The rows as a ``scipy.sparse.csr_matrix`` of shape (n_rows, n_features)."""
        import scipy.sparse as sp  # here: the readers and the passes never need scipy

        return sp.csr_matrix((self.data, self.indices, self.indptr), shape=(self.n_rows, n_features))

    def slice(self, start: int, stop: int) -> Rows:
        """Rows ``start`` to ``stop - 1`` (views of this one's arrays; ``indptr`` rebased)."""
        lo, hi = self.indptr[start], self.indptr[stop]
        lines = None if self.lines is None else self.lines[start:stop]
        weights = None if self.weights is None else self.weights[start:stop]
        return Rows(
            self.indptr[start : stop + 1] - lo,
            self.indices[lo:hi],
            self.data[lo:hi],
            self.labels[start:stop],
            lines,
            weights,
        )

    def take(self, rows: np.ndarray) -> Rows:
        """The given rows (positions), in that order."""
        indptr, indices, data = gather_rows(self.indptr, self.indices, self.data, rows)
        lines = None if self.lines is None else self.lines[rows]
        weights = None if self.weights is None else self.weights[rows]
        return Rows(indptr, indices, data, self.labels[rows], lines, weights)

    @staticmethod
    def empty(dtype) -> Rows:
        return Rows(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, dtype), np.zeros(0))

    @staticmethod
    def stack(parts: list[Rows]) -> Rows:
        """The rows of ``parts``, one after the other (weighted if any part is: the others' rows weigh 1)."""
        lengths = np.concatenate([np.diff(p.indptr) for p in parts])
        indptr = np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths, dtype=np.int64)])
        lines = None if any(p.lines is None for p in parts) else np.concatenate([p.lines for p in parts])
        weights = None
        if any(p.weights is not None for p in parts):
            weights = np.concatenate([np.ones(p.n_rows) if p.weights is None else p.weights for p in parts])
        return Rows(
            indptr,
            np.concatenate([p.indices for p in parts]),
            np.concatenate([p.data for p in parts]),
            np.concatenate([p.labels for p in parts]),
            lines,
            weights,
        )


@njit(cache=True, nogil=True)
def gather_rows(indptr, indices, data, rows):
    """Copy rows ``rows`` of a CSR matrix, in that order.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
    indices : ndarray of int32, shape (nnz,)
    data : ndarray of float32 or float64, shape (nnz,)
    rows : ndarray of int64, shape (n_out,)

    Returns
    -------
    out_indptr : ndarray of int64, shape (n_out + 1,)
    out_indices : ndarray of int32
    out_data : ndarray, same dtype as ``data``
    """
    n_out = rows.shape[0]
    out_indptr = np.empty(n_out + 1, np.int64)
    out_indptr[0] = 0
    for i in range(n_out):
        r = rows[i]
        out_indptr[i + 1] = out_indptr[i] + indptr[r + 1] - indptr[r]
    nnz = out_indptr[n_out]
    out_indices = np.empty(nnz, indices.dtype)
    out_data = np.empty(nnz, data.dtype)
    for i in range(n_out):  # a loop an array, unsigned: each a plain copy LLVM vectorizes (3x the one loop of both)
        r = rows[i]
        start, stop, dest = np.uint64(indptr[r]), np.uint64(indptr[r + 1]), np.uint64(out_indptr[i])
        for j in range(stop - start):
            out_indices[dest + j] = indices[start + j]
        for j in range(stop - start):
            out_data[dest + j] = data[start + j]
    return out_indptr, out_indices, out_data


@njit(cache=True, nogil=True)
def rows_sorted_increasing(indptr, indices):
    """True iff the indices of every row increase strictly (the store's invariant)."""
    for r in range(indptr.shape[0] - 1):
        for j in range(indptr[r] + 1, indptr[r + 1]):
            if indices[j] <= indices[j - 1]:
                return False
    return True


@njit(cache=True, nogil=True)
def compact_rows(indptr, indices, data, keep):
    """Keep rows ``keep`` (increasing) of a CSR matrix, moved to its front in place; returns the new nnz.

    Safe in place because row ``keep[k]`` moves to position ``k <= keep[k]``: nothing is overwritten
    before it has been read.
    """
    pos = 0
    for k in range(keep.shape[0]):
        r = keep[k]
        start, stop = indptr[r], indptr[r + 1]  # read before indptr[k + 1] (k + 1 <= r + 1) is written
        for j in range(stop - start):
            indices[pos + j] = indices[start + j]
            data[pos + j] = data[start + j]
        pos += stop - start
        indptr[k + 1] = pos
    indptr[0] = 0
    return pos


@njit(cache=True, nogil=True)
def append_rows(indptr, indices, data, n_rows, src_indptr, src_indices, src_data, rows):
    """Copy rows ``rows`` of a CSR source after the first ``n_rows`` rows of a CSR buffer; returns the new nnz."""
    pos = indptr[n_rows]
    for k in range(rows.shape[0]):
        r = rows[k]
        start, stop = src_indptr[r], src_indptr[r + 1]
        for j in range(stop - start):
            indices[pos + j] = src_indices[start + j]
            data[pos + j] = src_data[start + j]
        pos += stop - start
        indptr[n_rows + k + 1] = pos
    return pos
