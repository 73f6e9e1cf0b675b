"""``--memory-mb`` is the whole process's memory, planned once (blocksvm/train/plan.py): the runtime, the learner's
arrays and the blocks in flight come off it before the data, its first line says so, a budget below those is refused
naming the smallest that works, and a resumed run keeps the plan it started with. (Peak RSS against the budget is
measured by tools/bench_cold.py, not here: a test process's memory is its own and every test's.)"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import memory_for, run_cli

from blocksvm import BlockSVC
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.errors import ParameterError
from blocksvm.store import BlockStore
from blocksvm.store.kept import block_bytes
from blocksvm.train import train
from blocksvm.train.plan import RUNTIME


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("plan") / "s.bsvm"
    make_store(path, SyntheticSpec(rows=8000, features=400, nnz=12, seed=2), block_rows=1000, progress=False)
    return path


def test_the_plan_is_the_runtime_the_arrays_the_blocks_in_flight_and_the_data(store):
    s = BlockStore(store)
    sizes = [block_bytes(s, b["rows"], b["nnz"]) for b in s.blocks]
    arrays = 9 * s.n_rows + 8 * (s.n_features + 1) * 3  # dual CD's alpha and flag a row; w, its copy and sums
    in_flight = 2 * max(sizes) + 2 * 8e6  # two blocks decoded; a stored chunk a decoding thread
    assert memory_for(store, 0.0) == pytest.approx((RUNTIME + arrays + in_flight) / 1e6, rel=1e-12)
    sizes = [size + 32 * b["rows"] for size, b in zip(sizes, s.blocks)]  # (and dual CD's 32 bytes of a row kept)
    for blocks in (0, 3, 8):  # the data budget keeps as many blocks as fit (their decoded bytes)
        result = train(store, memory_mb=memory_for(store, sum(sizes[:blocks]) / 1e6 + 1e-3), max_outer=1, verbose=0)
        assert result.model.summary["kept_blocks"] == blocks


def test_a_budget_below_the_process_is_refused_naming_the_smallest_that_works(store, tmp_path, capsys):
    code, _, err = run_cli(capsys, "train", store, tmp_path / "m.h5", "--memory-mb", "100")
    assert code == 2 and err.count("\n") == 1, err
    smallest = int(re.search(r"give --memory-mb (\d+) or more", err).group(1))
    assert smallest >= memory_for(store, 0.0)
    code, _, err = run_cli(capsys, "train", store, tmp_path / "m.h5", "--memory-mb", smallest, "--max-outer", "1")
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith(f"note: memory budget --memory-mb {smallest} (the runtime 250 MB, the learner's arrays")
    assert "the blocks in flight" in first and "its data" in first
    with pytest.raises(ParameterError, match="is below what this run needs"):
        BlockSVC(memory_mb=100).fit(store)


def test_a_resumed_run_keeps_the_plan_it_started_with(store, tmp_path):
    """Its budget, given anew or left to the default (half of what is available, which differs from process to
    process), does not change the blocks it keeps: it ends where the uninterrupted run does."""
    budget = memory_for(store, 0.3)  # 2 of the 8 blocks kept
    whole = train(store, memory_mb=budget, max_outer=4, tol=0, verbose=0)
    assert 0 < whole.model.summary["kept_blocks"] < 8
    ck = tmp_path / "ck.h5"
    train(store, memory_mb=budget, max_outer=2, tol=0, verbose=0, checkpoint=ck)
    for given in ({}, {"memory_mb": 4000.0}):
        resumed = train(store, max_outer=4, tol=0, verbose=0, resume=ck, **given)
        np.testing.assert_array_equal(resumed.model.coef, whole.model.coef)
        assert resumed.model.summary["kept_blocks"] == whole.model.summary["kept_blocks"]
