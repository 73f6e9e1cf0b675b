"""Data that changes under a run (issue 34): a store replaced while a run reads it, a text file edited in place,
two runs writing one model. None of them may end in a model that looks complete.

Every replacement happens at a fixed point of the run (a hook wrapped around a block read, the checkpoint
writer's test-only pause), never after a delay, so these tests do not depend on the machine's speed.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import forked
import h5py
import numpy as np
import pytest

from blocksvm import _locks, write_store
from blocksvm.cli import main
from blocksvm.errors import InUseError, NegativeGapError, StoreError, StoreReplacedError
from blocksvm.io.text_cache import cache_path, store_for
from blocksvm.model import LinearModel
from blocksvm.solvers import SOLVERS
from blocksvm.store import BlockStore, reading
from blocksvm.store import format as F
from blocksvm.train import train, tune
from blocksvm.train.params import TrainParams
from blocksvm.train.records import NEGATIVE_GAP, StopRules, make_exact

RUN = ["--max-outer", "3", "--tol", "0", "-q"]


def rows(seed: int = 0, n: int = 600, features: int = 20) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features)) * (rng.random((n, features)) < 0.3)
    y = np.where(X @ rng.normal(size=features) > 0, 1.0, -1.0)
    return X, y


def a_store(path: Path, scale: float = 1.0, block_rows: int = 100) -> Path:
    X, y = rows()
    write_store((scale * X, y), path, block_rows=block_rows, progress=False)
    return path


def replaced_after(monkeypatch, store: Path, by: Path, reads: int) -> list[int]:
    """Replace the directory ``store`` by a copy of ``by`` right after this process's ``reads``-th block read, as a
    copy or an older blocksvm would, past the store's lock. Returns the blocks asked for (filled in as they are)."""
    read = BlockStore.read_block
    asked: list[int] = []

    def read_then_replace(self, b: int):
        asked.append(b)
        block = read(self, b)
        if len(asked) == reads:
            os.rename(store, store.with_name(store.name + ".gone"))
            shutil.copytree(by, store)
        return block

    monkeypatch.setattr(BlockStore, "read_block", read_then_replace)
    return asked


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("blocksvm: error: ") and "Traceback" not in err, err
    return lines[0].removeprefix("blocksvm: error: ")


def lock_files(folder: Path) -> list[str]:
    """The lock files left under ``folder`` (but in a store that replaced_after put aside: its run let go of a lock
    file that was no longer at the store's path)."""
    return sorted(p.name for p in folder.rglob("*.lock") if not p.parent.name.endswith(".gone"))


# ---- 1. a store has an identity --------------------------------------------------------------------------------


@pytest.mark.parametrize("block_rows", [100, 150], ids=["same shapes", "other shapes"])
def test_a_store_replaced_mid_run_ends_in_one_line_and_no_model(tmp_path, monkeypatch, capsys, block_rows):
    """The issue's user: the same rows with every value doubled, converted over the store while it trains (same
    block shapes: before, the run mixed the two and ended 'optimization finished' on a negative gap)."""
    store, other = a_store(tmp_path / "s.bsvm"), a_store(tmp_path / "x2.bsvm", scale=2.0, block_rows=block_rows)
    ours, theirs = BlockStore(store).store_id, BlockStore(other).store_id
    asked = replaced_after(monkeypatch, store, other, reads=2)
    assert main(["train", str(store), str(tmp_path / "m.h5"), "--prefetch", "0", *RUN]) == 2
    message = one_error_line(capsys)
    assert len(asked) == 3  # the third block read is the first of the new store: refused
    file = F.BLOCK_FILE.format(asked[-1])
    assert message == (
        f"{store} was replaced while this run read it: block {asked[-1]} ({file}) is of generation {theirs}, the "
        f"run began on generation {ours} (the store was converted again or copied over); no model or predictions "
        "were written: run again on the store as it is now"
    )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("m.h5")) == ["m.h5.history.jsonl"]
    assert lock_files(tmp_path) == []


def test_predict_on_a_replaced_store_writes_no_predictions(tmp_path, monkeypatch):
    store, other = a_store(tmp_path / "s.bsvm"), a_store(tmp_path / "x2.bsvm", scale=2.0)
    model = train(store, verbose=0, max_outer=2).model
    replaced_after(monkeypatch, store, other, reads=1)
    with pytest.raises(StoreReplacedError, match=f"^{store} was replaced while this run read it: block"):
        blocksvm_predict(model, store, tmp_path / "p.txt")
    assert not list(tmp_path.glob("p.txt*"))  # no predictions that look complete


def blocksvm_predict(model, data, output):
    from blocksvm.predict import predict

    return predict(model, data, output, progress=False)


def test_resume_refuses_a_checkpoint_of_another_generation(tmp_path, capsys):
    X, y = rows()
    store = a_store(tmp_path / "s.bsvm")
    ck = tmp_path / "ck.h5"
    assert main(["train", str(store), str(tmp_path / "m.h5"), "--checkpoint", str(ck), *RUN]) == 0
    before = BlockStore(store).store_id
    write_store((X, y), store, block_rows=100, overwrite=True, progress=False)  # the same rows, converted again
    after = BlockStore(store).store_id
    assert main(["train", str(store), str(tmp_path / "m.h5"), "--resume", str(ck), "--max-outer", "5", "-q"]) == 2
    assert one_error_line(capsys) == (
        f"checkpoint {ck} was made for generation {before} of the store {store}, which now holds generation "
        f"{after} (it was converted again): resume on the store it was made for (or a copy of it), or start a new run"
    )


def without_ids(store: Path) -> Path:
    """``store`` as a writer without generations would have left it: no ``store_id`` in the manifest or a block."""
    manifest = json.loads((store / F.MANIFEST).read_text())
    del manifest["store_id"]
    (store / F.MANIFEST).write_text(json.dumps(manifest))
    for block in manifest["blocks"]:
        path = store / block["file"]
        with h5py.File(path, "r+") as f:
            del f.attrs["store_id"]
        block["bytes"], block["crc32"] = path.stat().st_size, F.file_crc32(path)  # h5py may move the file's end
    (store / F.MANIFEST).write_text(json.dumps(manifest))
    return store


def test_a_store_without_generations_still_reads_and_trains_the_same_model(tmp_path, monkeypatch):
    with_ids = a_store(tmp_path / "s.bsvm")
    old = without_ids(a_store(tmp_path / "old.bsvm"))
    assert BlockStore(old).store_id is None and BlockStore(old).info()["store_id"] is None
    params = {"verbose": 0, "max_outer": 4, "tol": 0.0, "seed": 3}
    expected, got = train(with_ids, **params).model, train(old, **params).model
    np.testing.assert_array_equal(got.coef, expected.coef)
    np.testing.assert_array_equal(got.intercept, expected.intercept)
    assert BlockStore(old).verify() == []
    # what is checked without ids is what was checked before: a block of other lengths is refused, as today
    other = a_store(tmp_path / "x.bsvm", block_rows=150)
    replaced_after(monkeypatch, old, without_ids(other), reads=1)
    with pytest.raises(StoreError, match="is missing|is inconsistent|was replaced") as caught:
        train(old, **params, prefetch=0)
    assert not isinstance(caught.value, StoreReplacedError)


# ---- 2. no overwrite under a reader ----------------------------------------------------------------------------


def test_convert_overwrite_refuses_while_a_reader_holds_the_store_and_succeeds_after(tmp_path, capsys):
    X, y = rows()
    text = tmp_path / "d.txt"
    text.write_text("".join(f"{int(label)} 1:{v:.3f}\n" for label, v in zip(y, X[:, 0] + 2)))
    store = tmp_path / "s.bsvm"
    assert main(["convert", str(text), str(store), "-q"]) == 0
    before = BlockStore(store).store_id
    with reading(store):
        assert main(["convert", str(text), str(store), "--overwrite", "-q"]) == 2
        assert one_error_line(capsys) == (
            f"cannot overwrite {store}: a run is reading it, or another conversion writing it (train, tune, predict, "
            "convert); run again once it has ended, or write the new store under another name"
        )
        with pytest.raises(InUseError):
            write_store((X, y), store, overwrite=True, progress=False)
        assert BlockStore(store).store_id == before  # untouched
        assert not list(tmp_path.glob("s.bsvm.partial-*"))
    assert main(["convert", str(text), str(store), "--overwrite", "-q"]) == 0
    assert BlockStore(store).store_id != before
    assert lock_files(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.txt", "s.bsvm"]  # the old store went, nothing aside


@pytest.mark.parametrize("command", ["train", "tune", "predict", "validation"])
def test_every_reader_holds_the_store_while_it_reads_it(tmp_path, monkeypatch, command):
    """A conversion over the store, tried in the middle of each reader's block reads, is refused."""
    store = a_store(tmp_path / "s.bsvm")
    model = train(store, verbose=0, max_outer=1).model
    X, y = rows()
    refused = []
    read = BlockStore.read_block

    def read_and_overwrite(self, b: int):
        if not refused:
            try:
                write_store((X, y), store, overwrite=True, progress=False)
            except InUseError as exc:
                refused.append(str(exc))
            else:
                refused.append(None)
        return read(self, b)

    monkeypatch.setattr(BlockStore, "read_block", read_and_overwrite)
    if command == "train":
        train(store, verbose=0, max_outer=1)
    elif command == "tune":
        tune(store, verbose=0, folds=2, C_grid=(1.0,), max_outer=1)
    elif command == "predict":
        blocksvm_predict(model, store, None)
    else:
        train(a_store(tmp_path / "t.bsvm"), verbose=0, max_outer=1, validation=store)
    assert len(refused) == 1 and refused[0] is not None
    assert refused[0].startswith(f"cannot overwrite {store}: a run is reading it")
    write_store((X, y), store, overwrite=True, progress=False)  # the reader has ended: the store is replaced
    assert lock_files(tmp_path) == []


def test_a_reader_is_refused_while_a_conversion_replaces_the_store(tmp_path, monkeypatch):
    store = a_store(tmp_path / "s.bsvm")
    X, y = rows()
    tried = []
    converter = importlib.import_module("blocksvm.io.conversion")  # the package's `convert` is the function
    write_blocks = converter._write_blocks

    def write_blocks_then_read(*args, **kwargs):
        with pytest.raises(InUseError) as caught:
            train(store, verbose=0, max_outer=1)
        tried.append(str(caught.value))
        return write_blocks(*args, **kwargs)

    monkeypatch.setattr(converter, "_write_blocks", write_blocks_then_read)
    write_store((X, y), store, block_rows=100, overwrite=True, progress=False)
    assert tried == [
        f"{store} is being replaced by a conversion (convert pid {os.getpid()}): run again once it has ended"
    ]


# ---- 3. a negative gap is never convergence ---------------------------------------------------------------------


def test_a_negative_gap_ends_the_run_with_the_error(tmp_path, monkeypatch, capsys):
    """The dual's sums raised past the primal, as a store changed under the run would."""
    store = a_store(tmp_path / "s.bsvm")
    dual = SOLVERS["dual-cd"].dual_objectives
    monkeypatch.setattr(SOLVERS["dual-cd"], "dual_objectives", lambda self: dual(self) + 1e6)
    assert main(["train", str(store), str(tmp_path / "m.h5"), "--tol", "1e-3", "--max-outer", "5", "-q"]) == 2
    message = one_error_line(capsys)
    assert message.startswith("relative duality gap -")
    assert message.endswith(
        " in pass 1: the dual objective exceeds the primal, which no single data set allows: the data changed under "
        "the run (a store converted again or copied over, a text file edited) or it resumed from a damaged "
        "checkpoint; no model written: train again on the data as it is now"
    )
    assert not (tmp_path / "m.h5").exists()
    with pytest.raises(NegativeGapError):  # tune's exact evaluations too
        tune(store, verbose=0, folds=2, C_grid=(1.0,))


class _Solver:
    """What make_exact reads of a solver: a problem whose primal is 10 and whose dual is given."""

    def __init__(self, dual: float):
        self.dual = dual
        self.problem = type("P", (), {"task": "classification"})()

    def weights(self):
        return np.zeros((2, 3))

    def objective_terms(self, W, losses):
        return {"loss": np.asarray(losses, dtype=float)}

    def dual_objectives(self):
        return np.array([5.0, self.dual])


@pytest.mark.parametrize("dual", [10.0, 10.0 * (1 + 0.5 * NEGATIVE_GAP), 10.0 * (1 - 2 * NEGATIVE_GAP)])
def test_each_problems_exact_gap_is_checked_rounding_aside(dual):
    record = {"outer": 7}
    figures = (np.array([10.0, 10.0]), 0, 0.0)
    if dual > 10.0 * (1 - NEGATIVE_GAP):  # one problem's gap below -1e-10, the other's (0.5) fine
        with pytest.raises(NegativeGapError, match=r"^relative duality gap -2\.00e-10 in pass 7: the dual"):
            make_exact(record, _Solver(dual), figures, 10)
    else:
        make_exact(record, _Solver(dual), figures, 10)
        assert record["gap"] == 0.5


def test_the_stop_rule_never_takes_a_negative_exact_gap():
    rules = StopRules(TrainParams(tol=1e-3), frozenset({"gap"}))
    exact = {"outer": 2, "primal_exact": True, "gap": -1e-3, "pg_violation": None}
    with pytest.raises(NegativeGapError):
        rules.reason(exact, out_of_time=False)
    assert rules.reason({**exact, "gap": -1e-11}, out_of_time=False).startswith("relative duality gap")
    assert rules.reason({**exact, "primal_exact": False}, out_of_time=False) is None  # an estimate is confirmed first


# ---- 4. one run per output ---------------------------------------------------------------------------------------


def test_a_second_run_on_the_same_outputs_is_refused_while_the_first_holds_them(tmp_path, capsys, wait_for):
    """A first run paused (at its first checkpoint write) holds its model, history and store; a second run writing
    them, a conversion over the store and a warm start from the model are refused; once it is killed, its lock
    files lock nothing and all of them go ahead."""
    store = a_store(tmp_path / "s.bsvm")
    model, ck, marker = tmp_path / "m.h5", tmp_path / "ck.h5", tmp_path / "paused"
    text = tmp_path / "x.txt"
    text.write_text("1 1:1\n-1 2:1\n")
    first = subprocess.Popen(
        [sys.executable, "-m", "blocksvm.cli", "train", str(store), str(model), "--checkpoint", str(ck), *RUN],
        env={**os.environ, "BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE": f"1:before:{marker}"},
    )
    try:
        wait_for(marker.exists, first, "the first run's pause")
        pid = f"pid {first.pid}"
        assert main(["train", str(store), str(model), *RUN]) == 2
        assert one_error_line(capsys) == (
            f"the model {model} is in use by another run ({pid}): two runs must not write the same model, history "
            "or checkpoint; wait for it to end or write elsewhere"
        )
        assert main(["train", str(store), str(tmp_path / "other.h5"), "--history", f"{model}.history.jsonl", *RUN]) == 2
        assert one_error_line(capsys).startswith(f"the history {model}.history.jsonl is in use by another run")
        assert main(["convert", str(text), str(store), "--overwrite", "-q"]) == 2
        assert one_error_line(capsys).startswith(f"cannot overwrite {store}: a run is reading it")
        assert main(["stream", str(text), str(tmp_path / "o.h5"), "--warm-start", str(model), "-q"]) == 2
        assert one_error_line(capsys) == (
            f"the model {model} is being written by another run ({pid}): warm-start from it once that run has ended"
        )
        assert not (tmp_path / "other.h5").exists()
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert lock_files(tmp_path)  # a killed run leaves its lock files ...
    assert main(["train", str(store), str(model), *RUN]) == 0  # ... which lock nothing
    assert main(["convert", str(text), str(store), "--overwrite", "-q"]) == 0
    assert lock_files(tmp_path) == ["ck.h5.lock"]  # the others' next holders removed them; this one may be deleted


def test_a_finished_model_is_overwritten_but_never_the_one_a_run_starts_from(tmp_path):
    """A run's output is no input of its own: continuing a model writes the model it goes on to elsewhere."""
    store = a_store(tmp_path / "s.bsvm")
    model, kept = tmp_path / "m.h5", tmp_path / "kept.h5"
    perceptron = ["--solver", "perceptron", "-q"]
    assert main(["train", str(store), str(model), *perceptron, "--max-outer", "1"]) == 0
    assert main(["train", str(store), str(model), *perceptron, "--max-outer", "2"]) == 0  # a finished one: written over
    assert LinearModel.load(model).summary["outer_iterations"] == 2
    shutil.copy(model, kept)
    assert main(["train", str(store), str(model), *perceptron, "--max-outer", "1", "--warm-start", str(model)]) == 2
    assert main(["train", str(store), str(model), *perceptron, "--max-outer", "1", "--warm-start", str(kept)]) == 0
    expected = train(store, verbose=0, solver="perceptron", max_outer=1, warm_start=kept).model
    np.testing.assert_array_equal(LinearModel.load(model).coef, expected.coef)  # it went on from the model given
    assert lock_files(tmp_path) == []


def test_where_flock_is_missing_runs_go_on_without_locks(tmp_path, monkeypatch):
    """A file system without flock (some network ones) must not stop a run that worked before locks existed."""
    store = a_store(tmp_path / "s.bsvm")

    def no_flock(fd, operation):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(_locks.fcntl, "flock", no_flock)
    assert main(["train", str(store), str(tmp_path / "m.h5"), *RUN]) == 0
    assert main(["stream", str(a_text(tmp_path)), str(tmp_path / "o.h5"), "--warm-start", str(tmp_path / "m.h5")]) == 0
    write_store(rows(), store, overwrite=True, progress=False)
    assert lock_files(tmp_path) == []


def a_text(folder: Path) -> Path:
    text = folder / "x.txt"
    text.write_text("1 1:1\n-1 2:1\n")
    return text


# ---- 5. the text cache keys on what can change ------------------------------------------------------------------


def flip_labels_in_place(path: Path) -> None:
    """Every label negated, the same bytes count, the same inode; then the modification time set back."""
    st = path.stat()
    text = path.read_text()
    with open(path, "r+") as f:  # in place: the inode stays
        f.write("\n".join(("-" if line[0] == "+" else "+") + line[1:] for line in text.splitlines()) + "\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p, rsync -t or touch -r would


@pytest.mark.parametrize("how", ["edited in place", "copied over"])
def test_a_text_file_changed_with_its_size_and_time_kept_is_converted_again(tmp_path, capsys, how):
    X, y = rows()
    text = tmp_path / "d.txt"
    text.write_text("".join(f"{'+1' if label > 0 else '-1'} 1:{v:+.3f}\n" for label, v in zip(y, X[:, 0])))
    assert main(["train", str(text), str(tmp_path / "m1.h5"), *RUN]) == 0
    cache = cache_path(text)
    recorded = json.loads((cache / "source.json").read_text())
    size, mtime = text.stat().st_size, text.stat().st_mtime_ns
    if how == "edited in place":
        flip_labels_in_place(text)
        assert text.stat().st_ctime_ns != recorded["ctime_ns"]  # the premise: a write sets the change time
        why = "the file was written since, its size and modification time kept"
    else:
        copy = tmp_path / "copy.txt"
        shutil.copy2(text, copy)
        flip_labels_in_place(copy)
        os.replace(copy, text)
        why = "the file is another one now, a copy or a move over it"
    assert (text.stat().st_size, text.stat().st_mtime_ns) == (size, mtime)
    capsys.readouterr()
    assert main(["train", str(text), str(tmp_path / "m2.h5"), "--max-outer", "3", "--tol", "0"]) == 0
    assert f"converting {text} into the cached store {cache} (again: {why})" in capsys.readouterr().err
    old, new = LinearModel.load(tmp_path / "m1.h5"), LinearModel.load(tmp_path / "m2.h5")
    np.testing.assert_array_equal(new.coef, -old.coef)  # y -> -y: dual CD follows it sign for sign


def test_a_cache_made_before_change_times_were_recorded_is_converted_again_once(tmp_path):
    X, y = rows()
    text = tmp_path / "d.txt"
    text.write_text("".join(f"{int(label)} 1:{v:.3f}\n" for label, v in zip(y, X[:, 0])))
    said = []
    cache = store_for(text, say=said.append)
    source = json.loads((cache / "source.json").read_text())
    older = {key: value for key, value in source.items() if key not in ("ctime_ns", "file")}
    (cache / "source.json").write_text(json.dumps(older))
    assert store_for(text, say=said.append) == cache
    assert store_for(text, say=said.append) == cache
    assert said[1:] == [
        f"converting {text} into the cached store {cache} (again: an older blocksvm made the cache, "
        "without the file's change time and identity)",
        f"using the cached store {cache}",
    ]


# ---- 6. the three gaps of issue 40: a stream's key, predict's lock, one swap ----------------------------------------


def test_a_stream_resumed_on_its_file_edited_in_place_with_its_size_and_time_kept_is_refused(tmp_path, capsys):
    X, y = rows()
    text = tmp_path / "d.txt"
    text.write_text("".join(f"{'+1' if label > 0 else '-1'} 1:{v:+.3f}\n" for label, v in zip(y, X[:, 0])))
    ck = tmp_path / "ck.h5"
    assert main(["stream", str(text), str(tmp_path / "m.h5"), "--checkpoint", str(ck), "-q"]) == 0
    size, mtime = text.stat().st_size, text.stat().st_mtime_ns
    flip_labels_in_place(text)
    assert (text.stat().st_size, text.stat().st_mtime_ns) == (size, mtime)  # what the key was before this issue
    capsys.readouterr()
    assert main(["stream", str(text), str(tmp_path / "m.h5"), "--resume", str(ck), "-q"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"checkpoint {ck} was made for the stream {text} ({size} bytes, modified ")
    assert ", not for the stream " in line


def test_predict_reads_its_model_under_its_shared_lock(tmp_path, capsys):
    """Refused while a run writes the model (its exclusive lock); a run is refused the model while predict reads it;
    once either has ended, the other goes ahead."""
    store, text = a_store(tmp_path / "s.bsvm"), a_text(tmp_path)
    model = tmp_path / "m.h5"
    assert main(["train", str(store), str(model), *RUN]) == 0
    writer = _locks.FileLock(model.with_name("m.h5.lock"), holder="pid 4242")
    assert writer.try_acquire() is None  # as the run writing the model holds it
    try:
        assert main(["predict", str(model), str(text), "-q"]) == 2
        assert one_error_line(capsys) == (
            f"the model {model} is being written by another run (pid 4242): predict with it once that run has ended"
        )
    finally:
        writer.release()
    reader = _locks.FileLock(model.with_name("m.h5.lock"), shared=True)
    assert reader.try_acquire() is None  # as predict holds it while it loads the model
    try:
        assert main(["train", str(store), str(model), *RUN]) == 2
        assert one_error_line(capsys).startswith(f"the model {model} is in use by another run (a run reading it)")
    finally:
        reader.release()
    assert main(["predict", str(model), str(text), "-q"]) == 0


def test_predict_during_a_conversion_over_its_data_and_a_rewrite_of_its_model_reads_old_or_new(tmp_path, monkeypatch):
    """predict, paused at its first block read: a conversion over its store is refused (its shared lock), and a
    model written meanwhile (by a rename, as every model is) is not the one it reads: its predictions are the old
    model's on the old store, whole."""
    store, model = a_store(tmp_path / "s.bsvm"), tmp_path / "m.h5"
    train(store, verbose=0, max_outer=1).model.save(model)
    before = LinearModel.load(model)
    expected = tmp_path / "expected.txt"
    blocksvm_predict(model, store, expected)
    read, events = BlockStore.read_block, []

    def read_during_rewrites(self, b: int):
        if not events:
            try:
                write_store((2 * rows()[0], rows()[1]), store, overwrite=True, progress=False)
            except InUseError:
                events.append("conversion refused")
            train(a_store(tmp_path / "other.bsvm", scale=3.0), verbose=0, max_outer=2).model.save(model)
            events.append("model rewritten")
        return read(self, b)

    monkeypatch.setattr(BlockStore, "read_block", read_during_rewrites)
    blocksvm_predict(model, store, tmp_path / "p.txt")
    assert events == ["conversion refused", "model rewritten"]
    assert (tmp_path / "p.txt").read_text() == expected.read_text()
    assert not np.array_equal(LinearModel.load(model).coef, before.coef)  # the rewrite took place, after the load


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")
def test_convert_overwrite_swaps_the_stores_in_one_exchange(tmp_path, monkeypatch):
    from blocksvm.store import writer

    store = a_store(tmp_path / "s.bsvm")
    old_id = BlockStore(store).store_id
    calls = []
    exchange = writer._exchange
    monkeypatch.setattr(writer, "_exchange", lambda a, b: calls.append((a.name, b.name)) or exchange(a, b))
    write_store(rows(seed=1), store, overwrite=True, progress=False)
    new = BlockStore(store)
    assert calls and calls[0][1] == "s.bsvm" and calls[0][0].startswith("s.bsvm.partial-")
    assert new.store_id != old_id and sorted(p.name for p in tmp_path.iterdir()) == ["s.bsvm"]


def killed_at_the_swap(tmp_path: Path, store: Path, stage: str, wait_for) -> None:
    """``convert --overwrite`` of ``store`` in a forked child, SIGKILLed at ``stage`` of its swap."""
    text = tmp_path / "x.txt"
    X, y = rows(seed=5)
    text.write_text("".join(f"{int(label)} 1:{v:.3f} 2:{w:.3f}\n" for label, v, w in zip(y, X[:, 0], X[:, 1])))
    marker = tmp_path / f"swap-{stage}"
    env = {
        "BLOCKSVM_TEST_PAUSE_IN_SWAP": f"{stage}:{marker}",
        "BLOCKSVM_TEST_SWAP_BY_RENAMES": "1" * (stage == "between"),
    }
    child = forked.Child(["convert", text, store, "--overwrite", "-q"], env)
    wait_for(lambda: marker.exists() or child.poll() is not None, None, f"the swap's {stage}")
    child.signal(signal.SIGKILL)
    assert child.wait().code == -signal.SIGKILL


@pytest.mark.parametrize("partial", ["complete", "gone"])
def test_a_swap_killed_between_its_two_renames_is_completed_or_undone_by_the_next_open(tmp_path, wait_for, partial):
    """Where the system has no atomic exchange, a conversion killed between its renames leaves no store at the path:
    the next open puts the new store there (complete), or the old one back (the new one gone)."""
    store = a_store(tmp_path / "s.bsvm")
    old_id = BlockStore(store).store_id
    killed_at_the_swap(tmp_path, store, "between", wait_for)
    assert not store.exists()
    (new_dir,) = tmp_path.glob("s.bsvm.partial-*")
    new_id = json.loads((new_dir / F.MANIFEST).read_text())["store_id"]
    if partial == "gone":
        shutil.rmtree(new_dir)
    opened = BlockStore(store)
    assert opened.store_id == (new_id if partial == "complete" else old_id)
    assert opened.verify() == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("s.bsvm")) == ["s.bsvm"]


def test_a_swap_killed_after_its_exchange_leaves_the_new_store_whole(tmp_path, wait_for):
    store = a_store(tmp_path / "s.bsvm")
    killed_at_the_swap(tmp_path, store, "exchanged", wait_for)
    assert BlockStore(store).verify() == []  # the new store, whole; the old one waits under the partial name


# ---- 7. kills in the middle of a write: nothing left that looks complete ------------------------------------------


def paused_in_writing(argv: list, name: str, tmp_path: Path, wait_for) -> None:
    """``argv`` in a forked child, SIGKILLed once half of its file ``name`` is written (blocksvm._test_hooks)."""
    marker = tmp_path / f"writing-{name}"
    child = forked.Child(argv, {"BLOCKSVM_TEST_PAUSE_WRITING": f"{name}:{marker}"})
    wait_for(lambda: marker.exists() or child.poll() is not None, None, f"the write of {name}")
    child.signal(signal.SIGKILL)
    assert child.wait().code == -signal.SIGKILL


def test_kills_in_the_middle_of_a_model_an_export_and_a_conversion_leave_the_old_files_whole(tmp_path, wait_for):
    store, model, export = a_store(tmp_path / "s.bsvm"), tmp_path / "m.h5", tmp_path / "m.txt"
    assert main(["train", str(store), str(model), *RUN]) == 0
    assert main(["export", str(model), str(export), "-q"]) == 0
    before = {path: path.read_bytes() for path in (model, export, store / F.MANIFEST, store / "block-00001.h5")}
    text = tmp_path / "x.txt"
    text.write_text("1 1:1\n-1 2:1\n" * 50)
    paused_in_writing(
        ["train", store, model, "--max-outer", "5", "--tol", "0", "-q"], "m.h5.partial", tmp_path, wait_for
    )
    paused_in_writing(["export", model, export, "-q"], "m.txt.partial", tmp_path, wait_for)
    paused_in_writing(["convert", text, store, "--overwrite", "-q"], "block-00000.h5", tmp_path, wait_for)
    paused_in_writing(["convert", text, store, "--overwrite", "-q"], "manifest.json.tmp", tmp_path, wait_for)
    assert {path: path.read_bytes() for path in before} == before  # the files as they were, whole
    assert (
        BlockStore(store).verify() == [] and LinearModel.load(export).coef.shape == LinearModel.load(model).coef.shape
    )
    for half in ("m.h5.partial", "m.txt.partial"):  # what a kill leaves is named as unfinished
        assert (tmp_path / half).exists()
    with pytest.raises(StoreError, match="is not a complete block store"):
        BlockStore(next(tmp_path.glob("s.bsvm.partial-*")))
