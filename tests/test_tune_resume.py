"""``blocksvm tune`` checkpoints and resumes in the middle of a search (issue 23): the same table, the same model.

The oracle is the uninterrupted search: a search stopped and resumed must make the very same table (every C,
score, fold score, primal, gap and pass count; only the seconds may differ) and refit the very same model.
Stops come after a given number of blocks (a signal the checkpointer raises, as tests/test_checkpoint.py cuts
training) and a kill at a point the checkpoint writer announces: nothing depends on time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from conftest import cutting_after

from blocksvm.checkpoint import read_checkpoint
from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.errors import CheckpointError
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore
from blocksvm.train import train, tune
from blocksvm.train.loop import Trainer

# 0.7 is not a power of 2 times the values before it: a resumed search's costs at 0.7 are made from 0.7 alone, as
# the uninterrupted search's are (Problem.at), not scaled along the grid
GRID = (0.01, 0.02, 0.7)
SEARCH = {"C_grid": GRID, "folds": 3, "tol": 1e-5}
N_BLOCKS = 4


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two-class and three-class generated stores of 1,500 rows in 4 blocks, and another two-class one."""
    root = tmp_path_factory.mktemp("tune-resume")
    made = {}
    for name, classes, seed in (("two", 2, 5), ("three", 3, 5), ("other", 2, 6)):
        spec = SyntheticSpec(rows=1500, features=60, nnz=12, noise=0.1, seed=seed, classes=classes)
        made[name] = BlockStore(make_store(root / f"{name}.bsvm", spec, block_rows=400, progress=False))
    return made


@pytest.fixture(scope="module")
def whole(stores, tmp_path_factory):
    """The uninterrupted search of SEARCH on the two-class store, refit at its best C."""
    return tune(stores["two"], verbose=0, refit=tmp_path_factory.mktemp("whole") / "m.h5", **SEARCH)


def table(result) -> list[dict]:
    """The search's table, every figure but the seconds."""
    return [{k: v for k, v in vars(p).items() if k != "seconds"} for p in result.points]


def assert_same_search(result, whole) -> None:
    assert table(result) == table(whole)
    assert (result.best_C, result.best_score, result.stop_reason) == (whole.best_C, whole.best_score, whole.stop_reason)
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    np.testing.assert_array_equal(result.model.intercept, whole.model.intercept)


def cut_once(blocks: int, signum=signal.SIGTERM):
    """The checkpointers of the runs inside stop theirs after ``blocks`` blocks."""
    return cutting_after(blocks, signum)


@pytest.mark.parametrize(
    "name, more",
    [
        ("two", {"loss": "squared-hinge"}),  # the row cache, the default working set, in the checkpoint
        ("three", {"loss": "logistic", "working_set": "pair", "C_grid": None, "patience": 2}),  # LIBLINEAR's -C
    ],
)
def test_a_search_cut_every_few_blocks_resumes_to_the_same_table_and_model(stores, tmp_path, tune_in_cuts, name, more):
    options = {**SEARCH, **more}
    whole = tune(stores[name], verbose=0, refit=tmp_path / "whole.h5", **options)
    result, cuts = tune_in_cuts(stores[name], tmp_path / "ck.h5", 3, refit=tmp_path / "cut.h5", **options)
    blocks = sum(p.passes for p in whole.points) * N_BLOCKS
    assert blocks // 3 - 1 <= cuts <= blocks // 3 and cuts >= 4  # cuts in passes, at C boundaries (one that falls
    # on the search's last block may end nothing: the search is done)
    assert_same_search(result, whole)


def test_a_search_stopped_at_a_C_boundary_and_a_finished_one_resume_to_the_same_table(stores, whole, tmp_path):
    store, ck = stores["two"], tmp_path / "ck.h5"
    with cut_once(whole.points[0].passes * N_BLOCKS):  # the last block of the last pass at the first C
        stopped = tune(store, verbose=0, checkpoint=ck, refit=tmp_path / "m.h5", **SEARCH)
    assert stopped.interrupted and stopped.model is None and table(stopped) == table(whole)[:1]
    saved = read_checkpoint(ck).state
    assert (len(saved["points"]), saved["C"], saved["position"]) == (1, GRID[0], 0)
    assert_same_search(tune(store, verbose=0, resume=ck, refit=tmp_path / "m.h5", **SEARCH), whole)
    passes = read_checkpoint(ck).state["outer"]
    again = tune(store, verbose=0, resume=ck, refit=tmp_path / "again.h5", **SEARCH)  # a finished search
    assert_same_search(again, whole)
    assert read_checkpoint(ck).state["outer"] == passes  # no pass more


@pytest.mark.parametrize(
    "changed, message",
    [
        ({"folds": 4}, r"other tune options \(folds=3 there, 4 here\); only patience may change when resuming"),
        ({"C_grid": (0.01, 0.7)}, r"other tune options \(C_grid=\[0.01, 0.02, 0.7\] there, \[0.01, 0.7\] here\)"),
        ({"warm": False}, r"other tune options \(warm=True there, False here\)"),
        ({"loss": "logistic"}, r"other parameters \(loss='squared-hinge' there, 'logistic' here\)"),
    ],
)
def test_a_checkpoint_of_another_search_is_refused_in_one_line(stores, tmp_path, changed, message):
    ck = tmp_path / "ck.h5"
    with cut_once(2):
        tune(stores["two"], verbose=0, checkpoint=ck, **SEARCH)
    with pytest.raises(CheckpointError, match=f"^checkpoint {ck} was made with {message}"):
        tune(stores["two"], verbose=0, resume=ck, **{**SEARCH, **changed})


def test_other_stores_and_training_checkpoints_are_refused_and_patience_may_change(stores, tmp_path):
    ck, train_ck = tmp_path / "ck.h5", tmp_path / "train.h5"
    with cut_once(2):
        tune(stores["two"], verbose=0, checkpoint=ck, **SEARCH)
    with pytest.raises(CheckpointError, match=f"^checkpoint {ck} was made for the store .*two.bsvm"):
        tune(stores["other"], verbose=0, resume=ck, **SEARCH)
    train(stores["two"], verbose=0, checkpoint=train_ck, max_outer=1)
    with pytest.raises(CheckpointError, match="was written by a training run .train or stream., not by blocksvm tune"):
        tune(stores["two"], verbose=0, resume=train_ck, **SEARCH)
    with pytest.raises(CheckpointError, match="was written by blocksvm tune: continue the search with 'blocksvm tune"):
        train(stores["two"], verbose=0, resume=ck)
    assert len(tune(stores["two"], verbose=0, resume=ck, **{**SEARCH, "patience": 1}).points) == len(GRID)


def test_ctrl_c_stops_the_command_with_its_checkpoint_and_resume_prints_the_same_table(stores, tmp_path, capsys):
    store, ck = stores["three"], tmp_path / "ck.h5"
    args = ["tune", str(store.path), "--C-grid", ",".join(map(str, GRID)), "--folds", "3", "--tol", "1e-5"]
    with cut_once(2, signal.SIGINT):
        assert main([*args, "--checkpoint", str(ck)]) == 130
    err = capsys.readouterr().err
    assert "stopped by SIGINT at C 0.01, pass 1, block 2/4" in err
    assert f"checkpoint in {ck}: continue with --resume {ck}" in err
    assert main([*args, "--resume", str(ck), "--json"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    whole = tune(store, verbose=0, **SEARCH)
    assert [{k: v for k, v in p.items() if k not in ("seconds", "spread")} for p in resumed["points"]] == table(whole)


class _RefitCutAtOnce(Trainer):
    """The refit's trainer (the search's has folds), sent SIGINT as its first pass starts (it stops after that
    pass's first block)."""

    def _run_pass(self, stop) -> bool:
        if self.problem.folds == 1:
            signal.raise_signal(signal.SIGINT)
        return super()._run_pass(stop)


def test_ctrl_c_during_the_refit_keeps_its_model_and_says_it_is_not_finished(stores, tmp_path, capsys, monkeypatch):
    """The refit, cut, wrote its model and the command ended 0 as if it were done."""
    store, model = stores["three"], tmp_path / "m.h5"
    monkeypatch.setattr(sys.modules["blocksvm.train.c_search"], "Trainer", _RefitCutAtOnce)  # (the module)
    args = ["tune", str(store.path), "--C-grid", ",".join(map(str, GRID)), "--folds", "3", "--tol", "1e-5"]
    assert main([*args, "--refit", str(model)]) == 130
    err = capsys.readouterr().err
    assert "the refit at C = " in err and f"stopped by SIGINT: the model written to {model} is not finished" in err
    assert LinearModel.load(model).summary["stop_reason"] == "stopped by SIGINT"


@pytest.mark.slow  # a child process: 4 s
def test_a_search_killed_while_writing_a_checkpoint_resumes_from_the_one_before(stores, whole, tmp_path, wait_for):
    """SIGKILL in the middle of the 5th checkpoint write (one after every block): PATH still holds the 4th."""
    store, ck, marker = stores["two"], tmp_path / "ck.h5", tmp_path / "paused"
    args = ["tune", str(store.path), "--C-grid", ",".join(map(str, GRID)), "--folds", "3", "--tol", "1e-5", "-q"]
    env = {**os.environ, "BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE": f"5:during:{marker}"}
    command = [sys.executable, "-m", "blocksvm.cli", *args, "--checkpoint", str(ck), "--checkpoint-every", "1"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_for(marker.exists, process, "the pause in checkpoint write 5")
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert read_checkpoint(ck).state["outer"] == 2  # the 4th write: the end of pass 1 (its evaluation done)
    result = tune(store, verbose=0, resume=ck, refit=tmp_path / "m.h5", **SEARCH)
    assert_same_search(result, whole)
