"""The row cache of selective block minimization: what it keeps, within its budget."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from blocksvm.solvers.cache import RowCache
from blocksvm.store import Block


def make_block(index: int, row_offset: int, n_rows: int, seed: int) -> Block:
    X = sp.random(n_rows, 30, density=0.2, format="csr", random_state=seed, dtype=np.float32)
    labels = np.where(np.random.default_rng(seed).random(n_rows) > 0.5, 1.0, -1.0)
    lines = np.arange(row_offset, row_offset + n_rows) + 1
    return Block(
        X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, labels, lines, index=index, row_offset=row_offset
    )


def upper_of(labels):
    return np.where(labels > 0, 2.0, 1.0)[None, :]  # C = 1 for -1 rows, 2 for +1 rows


def test_refill_keeps_free_support_vectors_first_then_bound_ones_never_zero():
    block = make_block(0, 0, 100, seed=1)
    alpha = np.zeros((1, 100))
    free, bound = np.arange(0, 10), np.arange(10, 40)
    alpha[0, free] = 0.5
    alpha[0, bound] = upper_of(block.labels)[0, bound]
    cache = RowCache(capacity=1e9, dtype=np.float32)
    cache.refill(block, alpha, upper_of, np.random.default_rng(0))
    assert set(cache.row_ids) == set(range(40))  # every support vector, no alpha = 0 row
    # rows keep their content
    X = sp.csr_matrix((block.data, block.indices, block.indptr), shape=(100, 30))
    C = cache.rows.to_csr(30)
    assert (X[cache.row_ids] != C).nnz == 0
    np.testing.assert_array_equal(cache.rows.labels, block.labels[cache.row_ids])
    # a small budget keeps the free ones
    small = RowCache(capacity=cache.row_bytes(np.diff(block.indptr)[free]).sum(), dtype=np.float32)
    small.refill(block, alpha, upper_of, np.random.default_rng(0))
    assert set(small.row_ids) == set(free)
    assert small.nbytes <= small.capacity


def test_cache_carries_rows_across_blocks_and_excludes_the_block_being_solved():
    first, second = make_block(0, 0, 50, seed=2), make_block(1, 50, 50, seed=3)
    alpha = np.full((1, 100), 0.3)
    cache = RowCache(capacity=1e9, dtype=np.float32)
    cache.refill(first, alpha, upper_of, np.random.default_rng(0))
    assert cache.excluding(50, 100).n_rows == 50  # none of the second block's rows: all stay
    cache.refill(second, alpha, upper_of, np.random.default_rng(1))
    np.testing.assert_array_equal(cache.row_ids, np.arange(100))  # sorted store order
    restored = RowCache(capacity=1e9, dtype=np.float32)
    restored.load_state(cache.state())
    np.testing.assert_array_equal(restored.rows.indptr, cache.rows.indptr)
    np.testing.assert_array_equal(restored.row_ids, cache.row_ids)


def test_excluding_drops_the_block_rows_in_place_and_refill_takes_them_back():
    block = make_block(0, 0, 80, seed=4)
    alpha = np.full((1, 80), 0.3)
    cache = RowCache(capacity=1e9, dtype=np.float32)
    cache.refill(block, alpha, upper_of, np.random.default_rng(0))
    X = sp.csr_matrix((block.data, block.indices, block.indptr), shape=(80, 30))
    kept = cache.excluding(20, 50)
    assert kept is cache and cache.n_rows == 50
    np.testing.assert_array_equal(cache.row_ids, np.r_[0:20, 50:80])
    assert (cache.rows.to_csr(30) != X[cache.row_ids]).nnz == 0  # rows moved with their content
    assert cache.excluding(0, 80).n_rows == 0
    cache.refill(block, alpha, upper_of, np.random.default_rng(2))
    np.testing.assert_array_equal(cache.row_ids, np.arange(80))
    assert (cache.rows.to_csr(30) != X).nnz == 0
