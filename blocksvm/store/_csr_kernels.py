"""Compiled helpers that move CSR rows around (used to shuffle and partition blocks)."""

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
    for i in range(n_out):
        r = rows[i]
        start = indptr[r]
        dest = out_indptr[i]
        for j in range(indptr[r + 1] - start):
            out_indices[dest + j] = indices[start + j]
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
