"""Long runs survive: checkpoints, resume to the same model, refusals, kills at random moments."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from blocksvm.checkpoint import previous_path, read_checkpoint
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.errors import CheckpointError
from blocksvm.model import LinearModel
from blocksvm.train import train

PARAMS = {"C": 0.5, "loss": "hinge", "tol": 0.0, "max_outer": 12, "seed": 3}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "train.bsvm"
    make_store(path, SyntheticSpec(rows=60_000, features=2000, nnz=10, seed=9), block_rows=5000, progress=False)
    return path


@pytest.fixture(scope="module")
def uninterrupted(store):
    return train(store, verbose=0, **PARAMS)


def test_resumed_run_ends_bit_identical(store, uninterrupted, tmp_path, train_in_cuts):
    result, stops = train_in_cuts(store, tmp_path / "ck.h5", 0.05, **PARAMS)
    assert stops >= 3, "the time limit should have cut the run several times"
    np.testing.assert_array_equal(result.model.coef, uninterrupted.model.coef)
    np.testing.assert_array_equal(result.model.intercept, uninterrupted.model.intercept)
    assert [r["outer"] for r in result.history] == list(range(1, PARAMS["max_outer"] + 1))
    assert [r["dual"] for r in result.history] == [r["dual"] for r in uninterrupted.history]


@pytest.mark.parametrize("variant", [{"working_set": "pair"}, {"working_set": "block"},
                                     {"solver": "pegasos", "average": True, "batch_size": 8}])  # fmt: skip
def test_resume_is_bit_identical_for_every_solver(store, tmp_path, variant, train_in_cuts):
    params = {**PARAMS, **variant, "max_outer": 5}
    whole = train(store, verbose=0, **params)
    result, stops = train_in_cuts(store, tmp_path / "ck.h5", 0.03, **params)
    assert stops >= 2, "the time limit should have cut the run"
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    np.testing.assert_array_equal(result.model.intercept, whole.model.intercept)
    assert [r["outer"] for r in result.history] == list(range(1, params["max_outer"] + 1))


def test_sigkill_at_random_moments_then_resume(store, uninterrupted, tmp_path):
    ck, model, history = tmp_path / "ck.h5", tmp_path / "m.h5", tmp_path / "h.jsonl"
    args = ["--checkpoint-every", "1", "-C", str(PARAMS["C"]), "--loss", "hinge", "--tol", "0", "--max-outer",
            str(PARAMS["max_outer"]), "--seed", str(PARAMS["seed"]), "--history", str(history)]  # fmt: skip
    rng = random.Random(0)
    kills = kills_during_write = 0
    while kills < 12 and (kills < 3 or kills_during_write < 1):
        resume = ["--resume", str(ck)] if ck.exists() or previous_path(ck).exists() else ["--checkpoint", str(ck)]
        before = _mtime(ck)
        process = subprocess.Popen([sys.executable, "-m", "blocksvm.cli", "train", str(store), str(model),
                                    "-q", *resume, *args])  # fmt: skip
        deadline = time.time() + 60
        while _mtime(ck) == before and time.time() < deadline and process.poll() is None:
            time.sleep(0.005)  # until this process has written a checkpoint: it is training
        time.sleep(rng.uniform(0.0, 0.5))
        if process.poll() is not None:
            break  # finished before the kill
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
        kills_during_write += ck.with_name("ck.h5.tmp").exists()
    assert kills >= 3 and kills_during_write >= 1, (kills, kills_during_write)
    finished = subprocess.run([sys.executable, "-m", "blocksvm.cli", "train", str(store), str(model), "-q",
                               "--resume", str(ck), *args], timeout=300)  # fmt: skip
    assert finished.returncode == 0
    resumed = LinearModel.load(model)
    np.testing.assert_array_equal(resumed.coef, uninterrupted.model.coef)
    records = [json.loads(line) for line in history.read_text().splitlines()]
    assert [r["outer"] for r in records] == list(range(1, PARAMS["max_outer"] + 1))


def _mtime(path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def test_refuses_a_checkpoint_of_another_store(store, tmp_path):
    other = tmp_path / "other.bsvm"
    make_store(other, SyntheticSpec(rows=60_000, features=2000, nnz=10, seed=10), block_rows=5000, progress=False)
    ck = tmp_path / "ck.h5"
    train(store, verbose=0, checkpoint=ck, **{**PARAMS, "max_outer": 1})
    with pytest.raises(CheckpointError, match="was made for the store .*train.bsvm"):
        train(other, verbose=0, resume=ck, **PARAMS)


def test_refuses_conflicting_parameters_but_allows_safe_ones(store, tmp_path):
    ck = tmp_path / "ck.h5"
    train(store, verbose=0, checkpoint=ck, **{**PARAMS, "max_outer": 1})
    with pytest.raises(CheckpointError, match=r"C=0.5 there, 2.0 here"):
        train(store, verbose=0, resume=ck, **{**PARAMS, "C": 2.0})
    with pytest.raises(CheckpointError, match=r"loss='hinge' there, 'squared-hinge' here"):
        train(store, verbose=0, resume=ck, **{**PARAMS, "loss": "squared-hinge"})
    result = train(store, verbose=0, resume=ck, **{**PARAMS, "max_outer": 2, "tol": 1e-9, "time_limit": 100.0})
    assert [r["outer"] for r in result.history] == [1, 2]


def test_existing_checkpoint_needs_resume(store, tmp_path):
    ck = tmp_path / "ck.h5"
    train(store, verbose=0, checkpoint=ck, **{**PARAMS, "max_outer": 1})
    with pytest.raises(CheckpointError, match="exists: pass resume"):
        train(store, verbose=0, checkpoint=ck, **PARAMS)


def test_corrupted_checkpoint_falls_back_to_the_previous_one(store, tmp_path, capsys):
    ck = tmp_path / "ck.h5"
    train(store, verbose=0, checkpoint=ck, **{**PARAMS, "max_outer": 2})
    assert read_checkpoint(previous_path(ck)).state["outer"] == 2  # written at the end of pass 1
    data = bytearray(ck.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64 * [0x5A])
    ck.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupted"):
        read_checkpoint(ck)
    result = train(store, verbose=1, resume=ck, **{**PARAMS, "max_outer": 3})
    assert "resuming from the previous checkpoint" in capsys.readouterr().err
    assert [r["outer"] for r in result.history] == [1, 2, 3]


def test_truncated_checkpoint_and_previous_are_both_reported(store, tmp_path):
    ck = tmp_path / "ck.h5"
    train(store, verbose=0, checkpoint=ck, **{**PARAMS, "max_outer": 2})
    for path in (ck, previous_path(ck)):
        path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="corrupted or truncated.*and the previous one"):
        train(store, verbose=0, resume=ck, **PARAMS)


def test_a_locked_checkpoint_is_refused(store, tmp_path):
    ck = tmp_path / "ck.h5"
    process = subprocess.Popen([sys.executable, "-m", "blocksvm.cli", "train", str(store), str(tmp_path / "m.h5"),
                                "-q", "--checkpoint", str(ck), "--tol", "0", "--max-outer", "100000"])  # fmt: skip
    try:
        deadline = time.time() + 60
        while not ck.exists() and time.time() < deadline:
            time.sleep(0.05)
        with pytest.raises(CheckpointError, match="in use by another training run"):
            train(store, verbose=0, resume=ck, tol=0.0, max_outer=100000)
    finally:
        process.kill()
        process.wait()


def test_sigterm_saves_a_checkpoint_and_says_so(store, tmp_path, training_with_a_checkpoint):
    ck = tmp_path / "ck.h5"
    process = training_with_a_checkpoint(store, tmp_path / "m.h5", ck)
    time.sleep(0.2)
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "stopped by SIGTERM" in err and f"--resume {ck}" in err
    saved = read_checkpoint(ck)
    assert saved.state["blocks_visited"] >= 1
    assert LinearModel.load(tmp_path / "m.h5").summary["stop_reason"] == "stopped by SIGTERM"


def test_resume_with_the_row_cache_is_bit_identical(store, tmp_path, train_in_cuts):
    params = {**PARAMS, "working_set": "cache", "cache_mb": 0.5, "max_outer": 4}
    uninterrupted = train(store, verbose=0, **params)
    result, stops = train_in_cuts(store, tmp_path / "ck.h5", 0.05, **params)
    assert stops >= 2
    np.testing.assert_array_equal(result.model.coef, uninterrupted.model.coef)
