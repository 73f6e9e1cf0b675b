"""CSR rows (:class:`Rows`); the compiled helpers that move them around and check their order are in
:mod:`blocksvm._rows_kernels`, imported where they are used (a command that only reads a store's facts loads no
numba)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
        from blocksvm._rows_kernels import gather_rows

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
