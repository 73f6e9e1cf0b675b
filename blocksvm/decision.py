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


@njit(cache=True, nogil=True)
def count_outside(indices, n_features, seen):
    """Count the nonzeros whose (zero-based) feature index is ``n_features`` or more, outside a model.

    ``seen`` is a bit array of the indices met outside so far (bit ``j - n_features`` for index
    ``j``), updated in place; the caller sizes it to cover the largest index. Returns the number
    of such nonzeros, of indices not seen before, and the position of the first such nonzero (-1:
    none).
    """
    nonzeros = 0
    new = 0
    first = -1
    limit = np.uint64(seen.shape[0]) * np.uint64(8)
    for k in range(indices.shape[0]):
        j = np.uint32(indices[k])
        if j >= n_features:
            if first < 0:
                first = k
            nonzeros += 1
            bit = np.uint64(j - n_features)
            if bit < limit:
                byte = bit >> np.uint64(3)
                mask = np.uint8(1) << np.uint8(bit & np.uint64(7))
                if seen[byte] & mask == 0:
                    seen[byte] |= mask
                    new += 1
    return nonzeros, new, first
