"""The gap rule's exact evaluation where the store does not fit the budget: made as the next pass reads the blocks
(blocksvm/train/certificate.py), never by a read of its own. Oracles: a run stopped at the certified pass, whose
immediate evaluation is the one the late certificate must equal bit for bit; the primal of the returned model in
numpy; the blocks a run reads, counted."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import memory_for, store_rows
from oracle import primal

from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.store import BlockStore
from blocksvm.train import train


def budget(store) -> dict:
    """3 of the store's 12 blocks kept: the others read at every pass."""
    return {"memory_mb": memory_for(store, 0.16)}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("certificate") / "s.bsvm"
    make_store(path, SyntheticSpec(rows=6000, features=300, nnz=10, seed=5), block_rows=500, progress=False)
    return path


@pytest.fixture(scope="module")
def certified(store):
    return train(store, tol=1e-3, verbose=0, **budget(store))


def test_the_model_is_the_certified_one_and_its_figures_are_the_immediate_evaluations(store, certified):
    summary = certified.model.summary
    assert 0 < summary["kept_blocks"] < summary["blocks"]  # (the premise: blocks are read at every pass)
    assert certified.stop_reason.startswith("relative duality gap")
    last = certified.history[-1]
    assert last["primal_exact"] and last["gap"] <= 1e-3
    # the run stopped at that pass reads its blocks once more to evaluate it at once: the same weights, the same sums
    alone = train(store, tol=1e-3, verbose=0, max_outer=last["outer"], **budget(store))
    np.testing.assert_array_equal(certified.model.coef, alone.model.coef)
    np.testing.assert_array_equal(certified.model.intercept, alone.model.intercept)
    for key in ("primal", "dual", "gap", "train_accuracy"):
        assert summary[key] == alone.model.summary[key], key
    X, y, _ = store_rows(store)
    ours = primal(certified.model.coef[0], certified.model.intercept[0], X, y, 1.0, "squared-hinge")
    assert summary["primal"] == pytest.approx(ours, rel=1e-9)


def test_no_pass_reads_a_block_twice(store, monkeypatch):
    """Every block the budget does not keep is read once a pass, the exact evaluations' included: they ride along."""
    reads = []
    real = BlockStore.read_block

    def counted(self, b, *args, **kwargs):
        reads.append(b)
        return real(self, b, *args, **kwargs)

    monkeypatch.setattr(BlockStore, "read_block", counted)
    result = train(store, tol=1e-3, verbose=0, **budget(store))
    summary = result.model.summary
    exact = [r["outer"] for r in result.history if r["primal_exact"]]
    passes = len(result.history) + 1  # (the last pass certified the one before it)
    streamed = summary["blocks"] - summary["kept_blocks"]
    assert len(exact) > 1  # (the premise: the rule evaluated several passes exactly)
    assert len(reads) == summary["kept_blocks"] + passes * streamed
    assert np.bincount(reads).max() == passes


def test_a_run_cut_anywhere_resumes_to_the_same_certified_model(store, certified, tmp_path, train_in_cuts):
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 5, tol=1e-3, **budget(store))
    assert cuts >= 5
    np.testing.assert_array_equal(result.model.coef, certified.model.coef)
    assert [r.get("gap") for r in result.history] == [r.get("gap") for r in certified.history]
    assert result.stop_reason == certified.stop_reason
