"""Compiled helpers that move CSR rows around (gather, compact, append) and check their order."""

from __future__ import annotations

import numpy as np
from numba import njit


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
