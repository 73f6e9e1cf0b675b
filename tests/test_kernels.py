"""The shared row order and the paired working set of the dual CD kernel, on tiny arrays."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from blocksvm.losses import HINGE, SQUARED_HINGE
from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import GROUP, RUN, interleaved_runs, row_norms_squared


@pytest.mark.parametrize("n", [0, 1, 5, RUN - 1, RUN, RUN + 1, GROUP * RUN + 3, 1000])
def test_interleaved_runs_visit_every_row_once(n):
    rows = np.arange(10, 10 + n) * 3  # any increasing row ids
    orders = []
    for seed in range(4):
        order = np.full(n, -1)
        interleaved_runs(order, rows, n, np.array([seed], np.uint64))
        assert np.array_equal(np.sort(order), rows)
        orders.append(order)
    if n > 2 * RUN:
        assert not all(np.array_equal(orders[0], o) for o in orders[1:])


def test_interleaved_runs_visit_groups_of_runs_of_consecutive_rows_in_a_random_order():
    n = GROUP * RUN * 20
    order = np.empty(n, np.int64)
    interleaved_runs(order, np.arange(n), n, np.array([7], np.uint64))
    assert np.array_equal(np.sort(order), np.arange(n))
    # every stretch of GROUP * RUN visits reads rows from few stretches of memory: two groups' runs at most, each
    # across two aligned stretches of RUN rows (a random permutation's fall in about 63 of the 80) ...
    for start in range(0, n, GROUP * RUN):
        assert len(np.unique(order[start : start + GROUP * RUN] // RUN)) <= 4 * GROUP
    # ... in no fixed pattern: a row rarely follows its neighbour in memory GROUP visits later (the pattern before
    # the groups were shuffled did in 9 of 10 visits, and stalled dual CD of the logistic loss), nor right after it
    assert np.mean(order[GROUP:] - order[:-GROUP] == 1) < 0.05
    assert np.mean(np.abs(np.diff(order)) == 1) < 0.05


def test_paired_working_set_keeps_w_equal_to_the_dual_sum_of_both_blocks():
    rng = np.random.default_rng(0)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=1, dtype=np.float64)
    y = np.where(rng.random(300) < 0.4, 1.0, -1.0)
    a, b = slice(0, 180), slice(180, 300)
    for loss in (HINGE, SQUARED_HINGE):
        upper, diag = loss.dual_tables(0.7, 1.3)
        alpha, w = np.zeros(300), np.zeros(41)
        parts = []
        for rows in (a, b):
            Xs = X[rows]
            parts.append(
                (
                    Xs.indptr.astype(np.int64),
                    Xs.indices,
                    Xs.data.astype(np.float32),
                    y[rows],
                    row_norms_squared(Xs.indptr.astype(np.int64), Xs.data.astype(np.float32)),
                )
            )
        for call in range(5):
            a_alpha, b_alpha = alpha[a].copy(), alpha[b].copy()
            box = (upper, diag, np.array([0.7, 1.3]))
            hyper = np.array([1.0, 3, -1.0, 1.0])  # bias, passes, inner eps (none), sigma
            members = np.arange(len(a_alpha) + len(b_alpha))
            a_rows, b_rows = (*parts[0], a_alpha, np.zeros(0)), (*parts[1], b_alpha, np.zeros(0))  # (no weights)
            stats = K.solve_block(a_rows, b_rows, w, box, hyper, loss.table, call, members)
            alpha[a], alpha[b] = a_alpha, b_alpha
            assert stats[K.PASSES] == 3
        X32 = sp.csr_matrix((X.data.astype(np.float32).astype(np.float64), X.indices, X.indptr), shape=X.shape)
        np.testing.assert_allclose(w[:-1], X32.T @ (alpha * y), atol=1e-9)
        np.testing.assert_allclose(w[-1], (alpha * y).sum(), atol=1e-9)
        bound = np.where(y > 0, upper[1], upper[0])
        assert (alpha >= 0).all() and (alpha <= bound).all()
        assert (alpha[b] > 0).any()  # the companion's rows were solved too
