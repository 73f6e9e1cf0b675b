"""Prediction arithmetic: decision values of CSR rows, shared by training (evaluation) and models.

A compiled kernel over arrays, in a module of its own so that the model and the solvers both use
it without importing each other's internals.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def decision_values(indptr, indices, data, W, bias):
    """Decision values ``X W^T`` (+ bias), shape (n_rows, n_problems) for ``W`` of shape (n_problems, n_w).

    Features beyond ``W`` (minus its bias column) are ignored.
    """
    n_rows = indptr.shape[0] - 1
    n_w = W.shape[1] - 1
    out = np.empty((n_rows, W.shape[0]), np.float64)
    for i in range(n_rows):
        for p in range(W.shape[0]):
            # W[p] . x_i, written out here: a per-row helper taking arrays costs more (see blocksvm.solvers._common)
            s = W[p, n_w] * bias if bias > 0 else 0.0
            for k in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
                j = np.uint32(indices[k])
                if j < n_w:
                    s += W[p, j] * data[k]
            out[i, p] = s
    return out
