"""Dual CD with ``--inner-passes 1`` where the budget keeps under a tenth of the rows: none kept, the streamed
blocks swept two at a time, paired afresh every pass (blocksvm/solvers/resident.py). Oracles: LIBLINEAR's optimum;
the same learner with its blocks swept one at a time, which crawls (coordinate descent in groups of rows that never
change); an uncut run, for runs cut between the two blocks of a pair; the plan's arithmetic for which visits a
budget takes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import memory_for, store_rows
from oracle import liblinear_fit, primal

from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.solvers import resident
from blocksvm.train import train

ONE_BLOCK_MB = 0.12  # room for one of the store's blocks (68 kB kept), not for two: under a tenth of the rows


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """13 blocks of 500 rows: an odd one out in every pass."""
    path = tmp_path_factory.mktemp("paired") / "s.bsvm"
    make_store(path, SyntheticSpec(rows=6500, features=300, nnz=10, seed=5), block_rows=500, progress=False)
    return path


def paired_run(store, **params):
    return train(store, verbose=0, memory_mb=memory_for(store, ONE_BLOCK_MB), inner_passes=1, **params)


@pytest.fixture(scope="module")
def certified(store):
    return paired_run(store, tol=1e-3)


def test_no_rows_kept_and_one_sweep_a_visit(certified):
    summary = certified.model.summary
    assert summary["kept_blocks"] == 0 and summary["blocks"] == 13
    assert {r["inner_passes"] for r in certified.history} == {1.0}  # (the older visits sweep 5 times)
    assert certified.stop_reason.startswith("relative duality gap")


def test_pairs_converge_where_blocks_swept_alone_crawl(store, certified, monkeypatch):
    assert len(certified.history) <= 40
    original = resident.ResidentRows.start_resident

    def unpaired(self, *args):
        original(self, *args)
        self.paired = False

    monkeypatch.setattr(resident.ResidentRows, "start_resident", unpaired)
    passes = 3 * len(certified.history)
    alone = paired_run(store, tol=1e-3, max_outer=passes)
    assert len(alone.history) == passes and alone.history[-1]["gap"] > 1e-3  # three times the pairs' passes


def test_reaches_liblinears_optimum(store):
    result = paired_run(store, tol=1e-7)
    X, y, _ = store_rows(store)
    w, b = liblinear_fit(X, y, "squared-hinge", 1.0, 1.0, eps=1e-8)
    ours = primal(result.model.coef[0], result.model.intercept[0], X, y, 1.0, "squared-hinge")
    theirs = primal(w, b, X, y, 1.0, "squared-hinge")
    assert ours == pytest.approx(theirs, rel=1e-6)
    assert result.model.summary["primal"] == pytest.approx(ours, rel=1e-9)  # (the certificate's, exact)


def test_a_run_cut_between_a_pairs_blocks_resumes_bit_for_bit(store, certified, tmp_path, train_in_cuts):
    """Cut every 3 blocks of 13: inside pairs (the held block is read again) and between them."""
    budget = memory_for(store, ONE_BLOCK_MB)
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 3, tol=1e-3, memory_mb=budget, inner_passes=1)
    assert cuts >= 5
    np.testing.assert_array_equal(result.model.coef, certified.model.coef)
    np.testing.assert_array_equal(result.model.intercept, certified.model.intercept)
    assert [r.get("gap") for r in result.history] == [r.get("gap") for r in certified.history]


def test_threads_take_the_same_path(store, certified):
    """One problem's pair is one task: the same model on two threads."""
    result = paired_run(store, tol=1e-3, threads=2)
    np.testing.assert_array_equal(result.model.coef, certified.model.coef)


def test_the_default_under_a_tenth_takes_the_older_visits(store):
    """Pairs are asked for (--inner-passes 1): the default keeps the cache's visits, faster on few support vectors."""
    result = train(store, verbose=0, memory_mb=memory_for(store, ONE_BLOCK_MB), max_outer=2)
    assert result.model.summary["kept_blocks"] == 0
    assert result.history[0]["inner_passes"] > 1.0
