"""Long runs survive: checkpoints, resume to the same model, refusals, kills during and between writes.

Nothing here depends on time or machine load: runs are cut after a given number of blocks, and
killed at points the checkpoint writer itself announces (the test-only pause of blocksvm.checkpoint).
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import subprocess
from dataclasses import asdict

import forked
import numpy as np
import pytest
from conftest import cli, cutting_after, memory_for

from blocksvm.checkpoint import CheckpointLock, previous_path, read_checkpoint, write_checkpoint
from blocksvm.datasets import SyntheticSpec, make_store, write_libsvm
from blocksvm.errors import CheckpointError
from blocksvm.model import LinearModel
from blocksvm.stream import stream
from blocksvm.train import train, tune

PARAMS = {"C": 0.5, "loss": "hinge", "tol": 0.0, "max_outer": 12, "seed": 3}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "train.bsvm"
    make_store(path, SyntheticSpec(rows=60_000, features=2000, nnz=10, seed=9), block_rows=5000, progress=False)
    return path


@pytest.fixture(scope="module")
def uninterrupted(store):
    return train(store, verbose=0, **PARAMS)


N_BLOCKS = 12  # the store's blocks: 60,000 rows in blocks of 5,000


@pytest.mark.slow  # 60,000 rows cut at every position of a pass; every solver's resume stays in the suite
def test_resumed_run_ends_bit_identical(store, uninterrupted, tmp_path, train_in_cuts):
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 7, **PARAMS)  # 7: cuts at every position of a pass
    assert cuts == PARAMS["max_outer"] * N_BLOCKS // 7
    np.testing.assert_array_equal(result.model.coef, uninterrupted.model.coef)
    np.testing.assert_array_equal(result.model.intercept, uninterrupted.model.intercept)
    assert [r["outer"] for r in result.history] == list(range(1, PARAMS["max_outer"] + 1))
    assert [r["dual"] for r in result.history] == [r["dual"] for r in uninterrupted.history]


@pytest.mark.parametrize(
    "variant",
    [{"working_set": "pair"}, {"working_set": "block"}, {"solver": "pegasos", "average": True, "batch_size": 8}],
)
def test_resume_is_bit_identical_for_every_solver(store, tmp_path, variant, train_in_cuts):
    params = {**PARAMS, **variant, "max_outer": 5}
    if "solver" in variant:
        del params["tol"]  # dual CD's rule
    whole = train(store, verbose=0, **params)
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 7, **params)
    assert cuts == 5 * N_BLOCKS // 7
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    np.testing.assert_array_equal(result.model.intercept, whole.model.intercept)
    assert [r["outer"] for r in result.history] == list(range(1, params["max_outer"] + 1))


def test_a_run_on_liblinears_svr_rule_resumes_to_the_same_passes(store, tmp_path, train_in_cuts):
    """-s 12 and 13's -e judges each pass against the run's first (the 1-norm of its violations, kept in the
    history): a run cut every 7 blocks, the first pass's figures read back from its checkpoint, stops on the same
    pass with the same ratios and model as the run left alone."""
    params = {**PARAMS, "loss": "epsilon-insensitive", "eps": 0.1, "tol": None, "max_outer": 300}
    whole = train(store, verbose=0, **params)
    assert whole.stop_reason.startswith("PG violation's 1-norm over the first pass's"), whole.stop_reason
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 7, **params)
    assert cuts == (len(whole.history) * N_BLOCKS - 1) // 7  # (a cut at the run's last block: the run is done)
    assert result.stop_reason == whole.stop_reason
    assert [r["pg_violation"] for r in result.history] == [r["pg_violation"] for r in whole.history]
    assert [r.get("rows_shrunk") for r in result.history] == [r.get("rows_shrunk") for r in whole.history]
    assert any(r.get("rows_shrunk") for r in whole.history)  # (rows were shrunk, and brought back, across the cuts)
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    np.testing.assert_array_equal(result.model.intercept, whole.model.intercept)


def test_a_tiny_time_limit_cuts_after_exactly_one_block_and_resumes_bit_identical(store, tmp_path):
    """The time limit counts from the start of each process: 1e-9 s lets exactly one block run."""
    params = {**PARAMS, "max_outer": 2}
    whole = train(store, verbose=0, **params)
    ck = tmp_path / "ck.h5"
    result = train(store, verbose=0, checkpoint=ck, time_limit=1e-9, **params)
    for blocks in range(1, N_BLOCKS + 1):  # up to the end of pass 1
        assert result.interrupted and result.stop_reason == "time limit reached"
        assert read_checkpoint(ck).state["blocks_visited"] == blocks
        if blocks < N_BLOCKS:
            result = train(store, verbose=0, resume=ck, time_limit=1e-9, **params)
    # at a pass boundary a time limit would stop the run before its first block: pass 2 runs unlimited
    result = train(store, verbose=0, resume=ck, **params)
    assert not result.interrupted and result.stop_reason.startswith("max_outer")
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    assert [r["outer"] for r in result.history] == [1, 2]


def _pause_at(write: int, stage: str, marker) -> dict:
    """The environment of a child whose ``write``-th checkpoint write pauses at ``stage`` (blocksvm.checkpoint)."""
    return {**os.environ, "BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE": f"{write}:{stage}:{marker}"}


@pytest.mark.slow
def test_sigkill_during_and_between_checkpoint_writes_then_resume(store, uninterrupted, tmp_path, wait_for):
    """Four SIGKILLs, each at a point the child announces, then a resume to the uninterrupted model.

    1. between writes, 4 blocks after the last checkpoint (their work is lost and done again);
    2. during a write in the middle of a pass: PATH.tmp is half written, PATH is the checkpoint before;
    3. between the two renames of a write: PATH is gone, PATH.prev is the checkpoint before;
    4. during the write at the end of a pass, after that pass's history line was written: the resumed
       run rewrites the history from the checkpoint, so the pass is in it once.
    """
    ck, model, history = tmp_path / "ck.h5", tmp_path / "m.h5", tmp_path / "h.jsonl"
    tmp, prev = ck.with_name("ck.h5.tmp"), previous_path(ck)
    args = [
        "-C",
        str(PARAMS["C"]),
        "--loss",
        "hinge",
        "--tol",
        "0",
        "--max-outer",
        str(PARAMS["max_outer"]),
        "--seed",
        str(PARAMS["seed"]),
        "--history",
        str(history),
    ]
    logs = []

    def killed(start: list[str], every: int, write: int, stage: str) -> None:
        """Run the child until its ``write``-th checkpoint write pauses at ``stage``, then SIGKILL it."""
        marker, log = tmp_path / f"paused-{len(logs)}", tmp_path / f"stderr-{len(logs)}"
        logs.append(log)
        with open(log, "w") as err:
            process = subprocess.Popen(
                cli("train", store, model, *start, "--checkpoint-every", every, *args),
                stderr=err,
                env=_pause_at(write, stage, marker),
            )
        try:
            wait_for(marker.exists, process, f"the pause at {stage} of checkpoint write {write}")
            process.send_signal(signal.SIGKILL)
        finally:
            process.kill()
            process.wait()
        assert process.returncode == -signal.SIGKILL, log.read_text()

    def visited(path) -> int:
        return read_checkpoint(path).state["blocks_visited"]

    resume = ["--resume", str(ck)]
    # 1. a checkpoint every 4 blocks; killed when the second is due: blocks 5-8 are lost
    killed(["--checkpoint", str(ck)], 4, 2, "before")
    assert visited(ck) == 4 and not tmp.exists() and not prev.exists()
    # 2. resumed at block 4, a checkpoint after every block; killed while writing the 10th (block 14)
    killed(resume, 1, 10, "during")
    assert "resuming at iteration 1, block 4/12" in logs[1].read_text()
    assert tmp.exists() and visited(ck) == 13 and visited(prev) == 12
    with pytest.raises(CheckpointError):
        read_checkpoint(tmp)  # half a file: the next run must ignore it
    # 3. resumed from ck (not the half-written tmp); killed between the renames of its 30th write
    killed(resume, 1, 30, "between")
    assert "resuming at iteration 2, block 1/12" in logs[2].read_text()
    assert not ck.exists() and visited(prev) == 42 and visited(tmp) == 43
    # 4. resumed from ck.prev; a checkpoint every 5 blocks; killed writing the one that ends pass 4
    killed(resume, 5, 2, "during")
    err = logs[3].read_text()
    assert "resuming from the previous checkpoint" in err and "resuming at iteration 4, block 6/12" in err
    assert tmp.exists() and visited(ck) == 47 and visited(prev) == 42
    assert [json.loads(line)["outer"] for line in history.read_text().splitlines()] == [1, 2, 3, 4]  # not in ck
    finished = subprocess.run(
        cli("train", store, model, *resume, *args),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert finished.returncode == 0, finished.stderr
    assert "resuming at iteration 4, block 11/12" in finished.stderr  # ck, not the half-written tmp
    resumed = LinearModel.load(model)
    np.testing.assert_array_equal(resumed.coef, uninterrupted.model.coef)
    np.testing.assert_array_equal(resumed.intercept, uninterrupted.model.intercept)
    records = [json.loads(line) for line in history.read_text().splitlines()]
    assert [r["outer"] for r in records] == list(range(1, PARAMS["max_outer"] + 1))
    assert [r["dual"] for r in records] == [r["dual"] for r in uninterrupted.history]


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


def test_a_locked_checkpoint_is_refused(store, tmp_path, wait_for):
    ck = tmp_path / "ck.h5"
    process = subprocess.Popen(
        cli("train", store, tmp_path / "m.h5", "-q", "--checkpoint", ck, "--tol", "0", "--max-outer", "100000")
    )
    try:
        wait_for(ck.exists, process, f"checkpoint {ck}")
        with pytest.raises(CheckpointError, match="in use by another training run"):
            train(store, verbose=0, resume=ck, tol=0.0, max_outer=100000)
    finally:
        process.kill()
        process.wait()


def test_a_run_that_ends_removes_its_lock_file(store, tmp_path):
    """``run.ckpt.lock`` stayed after normal finishes (issue 24)."""
    ck = tmp_path / "ck.h5"
    train(store, verbose=0, checkpoint=ck, **{**PARAMS, "max_outer": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.h5"]
    with pytest.raises(CheckpointError):  # a refused resume (other parameters) ends the run too
        train(store, verbose=0, resume=ck, **{**PARAMS, "C": 2.0})
    assert not (tmp_path / "ck.h5.lock").exists()


def test_a_lock_file_removed_by_its_run_is_never_held_twice(tmp_path, monkeypatch):
    """A run that opened the lock file just before its holder ended and removed it must not lock that removed
    file while a third run holds the new one."""
    ck = tmp_path / "ck.h5"
    first = CheckpointLock(ck)
    first.acquire()
    opened_before = open(first.path, "a+")  # noqa: SIM115 - handed to the second run below
    first.release()
    third = CheckpointLock(ck)
    third.acquire()
    handles = iter([opened_before])
    monkeypatch.setattr(
        "blocksvm.checkpoint.open", lambda *a, **k: next(handles, None) or builtins.open(*a, **k), raising=False
    )
    with pytest.raises(CheckpointError, match="in use by another training run"):
        CheckpointLock(ck).acquire()
    third.release()
    assert not third.path.exists()


def test_sigterm_saves_a_checkpoint_and_says_so(store, tmp_path, training_with_a_checkpoint):
    ck = tmp_path / "ck.h5"
    process = training_with_a_checkpoint(store, tmp_path / "m.h5", ck)
    os.kill(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "stopped by SIGTERM" in err and f"--resume {ck}" in err
    saved = read_checkpoint(ck)
    assert saved.state["blocks_visited"] >= 1
    assert not (tmp_path / "m.h5").exists()  # the output is a finished run's; the model so far is beside it
    assert LinearModel.load(tmp_path / "m.partial.h5").summary["stop_reason"] == "stopped by SIGTERM"


def test_resume_with_the_row_cache_is_bit_identical(store, tmp_path, train_in_cuts):
    params = {**PARAMS, "working_set": "cache", "cache_mb": 0.5, "max_outer": 4}
    uninterrupted = train(store, verbose=0, **params)
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 5, **params)
    assert cuts == 4 * N_BLOCKS // 5
    np.testing.assert_array_equal(result.model.coef, uninterrupted.model.coef)


@pytest.mark.parametrize("solver, refused", [("dual-cd", False), ("pegasos", True)])
def test_a_checkpoint_from_before_a_parameter_existed_resumes_unless_its_solver_reads_it(tmp_path, solver, refused):
    """A checkpoint written before ``pegasos_schedule`` was declared holds no value for it: a dual CD run, which
    does not read it, resumes (it was refused for 'other parameters'); a Pegasos run, whose steps it sets, is
    refused naming it."""
    store = tmp_path / "s.bsvm"
    make_store(store, SyntheticSpec(rows=600, features=40, nnz=5, seed=1), block_rows=200, progress=False)
    ck = tmp_path / "ck.h5"
    train(store, solver=solver, max_outer=1, verbose=0, checkpoint=ck)
    saved = read_checkpoint(ck)
    del saved.params["pegasos_schedule"]
    write_checkpoint(ck, saved)
    if refused:
        with pytest.raises(CheckpointError, match="pegasos_schedule=None there, 'smooth' here"):
            train(store, solver=solver, max_outer=2, verbose=0, resume=ck)
    else:
        resumed = train(store, solver=solver, max_outer=2, verbose=0, resume=ck)
        whole = train(store, solver=solver, max_outer=2, verbose=0)
        np.testing.assert_array_equal(resumed.model.coef, whole.model.coef)


# ---- the search's and the stream's checkpoints killed in their writes (issue 40) ---------------------------------


def killed_in_a_write(wait_for, tmp_path, write: int, stage: str, argv=None, target=None) -> None:
    """Run ``argv`` (or ``target``) in a forked child until its ``write``-th checkpoint write pauses at ``stage``, then
    SIGKILL it there."""
    marker = tmp_path / f"paused-{write}-{stage}"
    child = forked.Child(argv, {"BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE": f"{write}:{stage}:{marker}"}, target)
    wait_for(lambda: marker.exists() or child.poll() is not None, None, f"the pause at {stage} of write {write}")
    child.signal(signal.SIGKILL)
    assert child.wait().code == -signal.SIGKILL


def test_a_search_killed_during_and_between_its_checkpoint_writes_resumes_to_the_same_table(tmp_path, wait_for):
    """tune, killed half-way through its third checkpoint write (PATH.tmp half written), then, resumed, between the
    renames of its fourth (PATH gone, PATH.prev the one before): the search resumed from what is left ends with the
    table of an uninterrupted one, bit for bit."""
    store = tmp_path / "s.bsvm"
    make_store(store, SyntheticSpec(rows=3000, features=200, nnz=10, seed=4), block_rows=500, progress=False)
    search = {"C_grid": [0.25, 1.0], "folds": 2, "max_outer": 3, "tol": 0.0}
    whole = tune(store, verbose=0, **search)
    ck = tmp_path / "ck.h5"
    argv = ["tune", store, "--C-grid", "0.25,1", "--folds", "2", "--max-outer", "3", "--tol", "0", "-q"]
    killed_in_a_write(wait_for, tmp_path, 3, "during", [*argv, "--checkpoint", ck, "--checkpoint-every", "2"])
    assert ck.with_name("ck.h5.tmp").exists() and previous_path(ck).exists()
    killed_in_a_write(wait_for, tmp_path, 2, "between", [*argv, "--resume", ck, "--checkpoint-every", "2"])
    assert not ck.exists() and previous_path(ck).exists()
    resumed = tune(store, verbose=0, resume=ck, **search)
    assert [asdict(p) | {"seconds": 0} for p in resumed.points] == [asdict(p) | {"seconds": 0} for p in whole.points]
    assert resumed.best_C == whole.best_C


def test_a_stream_killed_during_and_between_its_checkpoint_writes_resumes_to_the_same_model(tmp_path, wait_for):
    text = tmp_path / "d.svm"
    write_libsvm(text, SyntheticSpec(rows=3000, features=300, nnz=10, seed=6), progress=False)
    ck = tmp_path / "ck.h5"
    run = {"solver": "perceptron", "average": True, "verbose": 0, "chunk_bytes": 1 << 14}
    whole = stream(text, **run).model

    def first():
        stream(text, checkpoint=ck, checkpoint_every=1, **run)

    def again():
        stream(text, resume=ck, checkpoint_every=1, **run)

    killed_in_a_write(wait_for, tmp_path, 4, "during", target=first)
    assert read_checkpoint(ck).state["position"] > 0 and ck.with_name("ck.h5.tmp").exists()
    killed_in_a_write(wait_for, tmp_path, 3, "between", target=again)
    assert not ck.exists()
    resumed = stream(text, resume=ck, **run).model
    np.testing.assert_array_equal(resumed.coef, whole.coef)
    np.testing.assert_array_equal(resumed.intercept, whole.intercept)


@pytest.mark.parametrize("cut", [1, 5, 13])
def test_a_run_resumed_before_its_kept_blocks_are_back_reads_each_block_as_itself(tmp_path, cut):
    """A budget that keeps some of the blocks (3 of 12): a run resumed before its plan's blocks were all in memory
    read them back at its first visit, while the reads ahead it had decided still held them, and every block after
    came one place late (another block's rows under its index); its second pass drifted from the uninterrupted run's."""
    store = tmp_path / "s.bsvm"
    make_store(store, SyntheticSpec(rows=6000, features=300, nnz=10, seed=5), block_rows=500, progress=False)
    params = {"tol": 1e-3, "memory_mb": memory_for(store, 0.16), "max_outer": 3}
    whole = train(store, verbose=0, **params)
    assert 0 < whole.model.summary["kept_blocks"] < whole.model.summary["blocks"]
    with cutting_after(cut):
        cut_run = train(store, verbose=0, checkpoint=tmp_path / "ck.h5", checkpoint_every=1, **params)
    assert cut_run.interrupted
    resumed = train(store, verbose=0, resume=tmp_path / "ck.h5", **params)
    assert [r["dual"] for r in resumed.history] == [r["dual"] for r in whole.history]
    np.testing.assert_array_equal(resumed.model.coef, whole.model.coef)
