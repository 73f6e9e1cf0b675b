"""Every error of docs/TROUBLESHOOTING.md, produced through the command line.

Each case runs ``blocksvm.cli.main`` with bad input and checks what a user sees: exit code 2, one
line ``blocksvm: error: ...`` on standard error (a parse error adds one indented line showing the
offending text), no traceback, and the message the troubleshooting page lists under a
``#### `...` `` heading (``<word>`` there stands for a variable part). With ``--debug`` the same
case raises, so the traceback shows. A last test checks that the page and the cases list the same
messages, so neither can drift from the other.
"""

from __future__ import annotations

import builtins
import errno
import gzip
import importlib
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import h5py
import pytest
from conftest import ENOSPC, failing_open

from blocksvm._locks import FileLock
from blocksvm.checkpoint import Checkpoint, CheckpointLock, read_checkpoint, write_checkpoint
from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.io import _parse_kernels as K
from blocksvm.io.libsvm import _REASONS
from blocksvm.io.text_cache import cache_path
from blocksvm.solvers import SOLVERS
from blocksvm.store import BlockStore
from blocksvm.store import format as F

DOC = Path(__file__).resolve().parents[1] / "docs" / "TROUBLESHOOTING.md"
SPEC = SyntheticSpec(rows=1500, features=60, nnz=8, seed=5)


@dataclass
class Env:
    """Small files made once: texts, stores, a model, its history and a checkpoint."""

    root: Path
    text: Path
    store: Path
    test_store: Path
    zero_store: Path
    model: Path
    history: Path
    ck: Path

    def copy(self, tmp: Path, what: Path, name: str | None = None) -> Path:
        target = tmp / (name or what.name)
        (shutil.copytree if what.is_dir() else shutil.copy)(what, target)
        return target


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Env:
    root = tmp_path_factory.mktemp("errors")
    text, test_text = root / "train.txt", root / "test.txt"
    write_libsvm(text, SPEC, rows=range(1200), progress=False)
    write_libsvm(test_text, SPEC, rows=range(1200, 1500), progress=False)
    (root / "zero.txt").write_text("1 0:1 3:2\n-1 2:1\n")
    e = Env(
        root,
        text,
        root / "train.bsvm",
        root / "test.bsvm",
        root / "zero.bsvm",
        root / "model.h5",
        root / "model.h5.history.jsonl",
        root / "ck.h5",
    )
    for argv in (
        ["convert", text, e.store, "--block-size", "300"],
        ["convert", test_text, e.test_store, "--n-features", "60"],
        ["convert", root / "zero.txt", e.zero_store],
        ["train", e.store, e.model, "--max-outer", "2", "--tol", "0", "--checkpoint", e.ck],
    ):
        assert main([str(a) for a in argv] + ["-q"]) == 0
    return e


# ---- helpers that make bad inputs ----------------------------------------------------------------


def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def edit_manifest(store: Path, **changes) -> Path:
    manifest = json.loads((store / "manifest.json").read_text())
    for key, value in changes.items():
        if value is None:
            manifest.pop(key)
        else:
            manifest[key] = value
    (store / "manifest.json").write_text(json.dumps(manifest))
    return store


def damage_block(store: Path, block: int = 1) -> Path:
    """Overwrite bytes inside the first chunk of ``indices``: the block's size stays, its content breaks."""
    file = store / f"block-{block:05d}.h5"
    with h5py.File(file, "r") as f:
        offset = f["indices"].id.get_chunk_info(0).byte_offset + 10
    with open(file, "r+b") as f:
        f.seek(offset)
        f.write(b"\xde\xad\xbe\xef")
    return store


def set_h5_attr(path: Path, **attrs) -> Path:
    with h5py.File(path, "r+") as f:
        for key, value in attrs.items():
            f.attrs[key] = value
    return path


def truncated(path: Path) -> Path:
    """Cut a file to its first 1000 bytes (the HDF5 signature survives)."""
    os.truncate(path, 1000)
    return path


def corrupt_alpha(path: Path) -> Path:
    """Change bytes of a checkpoint's ``alpha`` in place: the file still opens, its checksum fails."""
    with h5py.File(path, "r") as f:
        name = next(n for n in f["arrays"] if n.startswith("alpha"))
        offset = f["arrays"][name].id.get_offset()
    with open(path, "r+b") as f:
        f.seek(offset + 8)
        f.write(b"\x5a" * 16)
    return path


def stream_checkpoint(e: Env, tmp: Path) -> Path:
    """A finished stream's checkpoint, made from ``e.text``."""
    assert main(["stream", str(e.text), str(tmp / "s.h5"), "--checkpoint", str(tmp / "sck.h5"), "-q"]) == 0
    return tmp / "sck.h5"


def tune_checkpoint(e: Env, tmp: Path) -> Path:
    """A finished search's checkpoint (2 folds, one C) on ``e.store``."""
    ck = tmp / "tck.h5"
    assert main(["tune", str(e.store), "--C-grid", "0.5", "--folds", "2", "--checkpoint", str(ck), "-q"]) == 0
    return ck


def tune_resume(*options, checkpoint=tune_checkpoint):
    def build(e, t, mp):
        return ["tune", e.store, "--C-grid", "0.5", "--resume", checkpoint(e, t), "-q", *options]

    return build


def wide_store(tmp: Path) -> Path:
    """A store of a sparse space (largest index 2**31 - 1), held compactly with a feature map."""
    assert main(["convert", str(write(tmp / "wide.txt", "1 1:1 2147483647:1\n-1 2:1\n")), str(tmp / "wide.bsvm")]) == 0
    return tmp / "wide.bsvm"


def wide_model(tmp: Path) -> Path:
    """A model trained on :func:`wide_store`: 3 features of 2,147,483,647."""
    assert main(["train", str(wide_store(tmp)), str(tmp / "wide.h5"), "-q"]) == 0
    return tmp / "wide.h5"


def cut_feature_map(store: Path) -> Path:
    data = (store / "features.h5").read_bytes()
    write(store / "features.h5", data[: len(data) // 2])
    return store


def streamed_model(tmp: Path, text: str) -> Path:
    """A Perceptron model of the LIBSVM ``text``."""
    assert main(["stream", str(write(tmp / "w.txt", text)), str(tmp / "w.h5"), "-q"]) == 0
    return tmp / "w.h5"


full_disk_open = failing_open()  # ``open`` on a full disk: files open, writes fail with ENOSPC


def fail_with(exc: BaseException):
    def fail(*args, **kwargs):
        raise exc

    return fail


class NoWorkersClient:
    """A dask client of a scheduler that no worker has joined."""

    def __init__(self, address, timeout=None):
        self.scheduler = type("Scheduler", (), {"address": address})()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        pass

    def scheduler_info(self):
        return {"workers": {}}

    def wait_for_workers(self, n, timeout=None):
        raise TimeoutError


def a_scheduler_without_workers(e, t, mp):
    mp.setattr(pytest.importorskip("distributed"), "Client", NoWorkersClient)
    return ["train", e.store, t / "m.h5", "--scheduler", "tcp://127.0.0.1:1"]


def shipped_to_a_worker_with_another_store(e, t, mp):
    """``--workers 2`` whose shards, as if pickled to a worker, find another store at the path."""
    from blocksvm.train import engines

    def shipped(self, shards):
        self.shards = pickle.loads(pickle.dumps(shards))
        for shard in self.shards:
            shard.view.fingerprint = "another store"

    mp.setattr(engines.ThreadEngine, "keep", shipped)
    return ["train", e.store, t / "m.h5", "--workers", "2"]


EACCES = PermissionError(errno.EACCES, os.strerror(errno.EACCES))


def patched(target, name: str, value, build):
    """``build``, run with ``target.name`` (a module given by name, or an object) replaced by ``value``. A name
    the target lacks is refused (a patch of a name that moved would test nothing), but a builtin's (``open``)."""

    def patched_build(e, t, mp):
        where = importlib.import_module(target) if isinstance(target, str) else target
        mp.setattr(where, name, value, raising=not hasattr(builtins, name))
        return build(e, t, mp)

    return patched_build


def read_only(build):
    """``build``, run where folder ``ro`` may not be written (``os.access`` says no, as on a read-only disk)."""
    real = os.access

    def access(path, mode, **kwargs):
        return False if Path(path).name == "ro" and mode & os.W_OK else real(path, mode, **kwargs)

    def read_only_build(e, t, mp):
        (t / "ro").mkdir()
        mp.setattr(os, "access", access)
        return build(e, t, mp)

    return read_only_build


def missing_block(e, t, mp):
    store = e.copy(t, e.store)
    (store / "block-00002.h5").unlink()
    return ["train", store, t / "m.h5"]


def block_lost_while_training(damage):
    """Train with a checkpoint; the third block read finds its file damaged by ``damage(file)``."""

    def build(e, t, mp):
        store = e.copy(t, e.store)
        real, reads = BlockStore.read_block, []

        def read_block(self, b):
            reads.append(b)
            if len(reads) == 3:
                damage(self.path / self.blocks[b]["file"])
            return real(self, b)

        mp.setattr(BlockStore, "read_block", read_block)
        return ["train", store, t / "m.h5", "--checkpoint", t / "ck.h5", "--checkpoint-every", "1"]

    return build


def store_replaced_while_training(e, t, mp):
    """Train; after the second block read, the store is converted again (the same rows, another generation) behind
    the run's back, as a copy over it would."""
    store, again = e.copy(t, e.store), t / "again.bsvm"
    assert main(["convert", str(e.text), str(again), "--block-size", "300", "-q"]) == 0
    real, reads = BlockStore.read_block, []

    def read_block(self, b):
        reads.append(b)
        block = real(self, b)
        if len(reads) == 2:
            shutil.rmtree(store)
            shutil.copytree(again, store)
        return block

    mp.setattr(BlockStore, "read_block", read_block)
    return ["train", store, t / "m.h5", "--prefetch", "0"]


def holding(lock_file: Path, holder: str = "", shared: bool = False) -> Path:
    """Hold a lock on ``lock_file`` as another process would (``flock`` on a second open file refuses)."""
    lock = FileLock(lock_file, holder=holder, shared=shared)
    assert lock.try_acquire() is None
    HELD_LOCKS.append(lock)
    return lock_file


def store_converted_again_since_the_checkpoint(e, t, mp):
    store = e.copy(t, e.store)
    assert main(["train", str(store), str(t / "m.h5"), "--max-outer", "1", "--checkpoint", str(t / "c.h5"), "-q"]) == 0
    assert main(["convert", str(e.text), str(store), "--block-size", "300", "--overwrite", "-q"]) == 0
    return ["train", store, t / "m.h5", "--resume", t / "c.h5"]


def warm_start_from_a_model_being_written(e, t, mp):
    model = e.copy(t, e.model)
    holding(model.with_name(model.name + ".lock"), "pid 4242")  # as the run writing it holds it
    return ["stream", e.text, t / "o.h5", "--warm-start", model]


def dual_past_the_primal(e, t, mp):
    dual = SOLVERS["dual-cd"].dual_objectives
    mp.setattr(SOLVERS["dual-cd"], "dual_objectives", lambda self: dual(self) + 1e6)
    return ["train", e.store, t / "m.h5", "--tol", "1e-3"]


def one_class_store(e, t, mp):
    text = write(t / "one.txt", "1 1:1\n1 2:1\n")
    assert main(["convert", str(text), str(t / "one.bsvm"), "-q"]) == 0
    return ["train", t / "one.bsvm", t / "m.h5"]


def without_matplotlib(e, t, mp):
    mp.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    return ["plot", e.history, "-o", t / "p.png"]


LIBLINEAR_HEADER = b"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n"


def liblinear_model(t: Path, solver: str, n_features: str, weights: str) -> Path:
    return write(
        t / "ll.txt", f"solver_type {solver}\nnr_class 2\nlabel 1 -1\nnr_feature {n_features}\nbias -1\nw\n{weights}"
    )


def real_valued_store(t: Path) -> Path:
    """A store of 150 rows whose labels are 150 real values."""
    from blocksvm.io import convert

    convert(
        write(t / "real.txt", "".join(f"{i * 0.37:.2f} 1:{i}\n" for i in range(150))), t / "real.bsvm", progress=False
    )
    return t / "real.bsvm"


def labels_cut_short(store: Path) -> Path:
    """Block 1's labels cut to 3 values, the manifest's size and checksum of the file made to agree."""
    file = store / "block-00001.h5"
    with h5py.File(file, "r+") as f:
        del f["labels"]
        f["labels"] = [1.0, -1.0, 1.0]
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["blocks"][1].update(bytes=file.stat().st_size, crc32=F.file_crc32(file))
    (store / "manifest.json").write_text(json.dumps(manifest))
    return store


def older_store(e, t: Path, mp) -> Path:
    """``e.text`` converted as a blocksvm before issue 40 did: string attributes of variable length."""
    from blocksvm.store import writer

    mp.setattr(writer, "fixed_strings", lambda f, **attributes: f.attrs.update(attributes))
    assert main(["convert", str(e.text), str(t / "older.bsvm"), "--block-size", "300", "-q"]) == 0
    return t / "older.bsvm"


def heap_damaged_file(file: Path) -> Path:
    """Two bytes flipped in the first object of the file's global heap (HDF5 would walk it for ever)."""
    data = bytearray(file.read_bytes())
    at = data.find(b"GCOL\x01")
    for i in (at + 23, at + 24):
        data[i] ^= 0xFF
    file.write_bytes(bytes(data))
    return file


def heap_damaged(store: Path) -> Path:
    heap_damaged_file(store / "block-00001.h5")
    return store


def a_read_that_stalls(e, t, mp):
    """Block 1's read takes 3 s where 0.2 s are allowed: the run fails naming it (the read ends on its own)."""
    mp.setenv("BLOCKSVM_READ_STALL_SECONDS", "0.2")
    real = BlockStore.read_block

    def slow(self, b):
        if b == 1:
            time.sleep(3)
        return real(self, b)

    mp.setattr(BlockStore, "read_block", slow)
    return ["train", e.store, t / "m.h5"]


def forge(ck: Path, alpha=None, **state) -> None:
    """The checkpoint ``ck`` with ``state`` fields replaced (or its alpha by ``alpha(alpha)``), its digest made
    again: a file that lies and checks out, alone (no ``.prev``)."""
    saved = read_checkpoint(ck)
    arrays = dict(saved.arrays)
    if alpha is not None:
        arrays["alpha"] = alpha(arrays["alpha"])
    ck.unlink()
    write_checkpoint(ck, Checkpoint(saved.params, saved.store, {**saved.state, **state}, arrays))
    ck.with_name(ck.name + ".prev").unlink()  # (else a run falls back to it, as it does from a damaged checkpoint)


def holding_model_lock(model: Path) -> Path:
    holding(model.with_name(model.name + ".lock"), "pid 4242")  # as the run writing it holds it
    return model


# ---- the cases: (message as on the troubleshooting page, argv builder) -----------------------------
# A builder gets the shared files, a fresh folder and pytest's monkeypatch, and returns the argv.

# one line per reason of the LIBSVM parser (test_every_parse_reason_has_a_case checks the keys)
BAD_LINES = {
    K.BAD_LABEL: "abc 1:2",
    K.NONFINITE_LABEL: "nan 1:2",
    K.BAD_PAIR: "1 3",
    K.BAD_INDEX: "1 x:5",
    K.NEGATIVE_INDEX: "1 -3:1",
    K.ZERO_INDEX: "1 0:1",
    K.INDEX_TOO_LARGE: "1 99999999999:1",
    K.NOT_INCREASING: "1 3:1 2:1",
    K.DUPLICATE_INDEX: "1 3:1 3:2",
    K.BAD_VALUE: "1 3:abc",
    K.NONFINITE_VALUE: "1 3:nan",
    K.BAD_QID: "1 qid:x 1:1",
}


def vw_line(line: str, *options: str):
    def build(e, t, mp):
        text = write(t / "bad.vw", f"1 |a x\n{line}\n-1 |a y\n")
        return ["convert", text, t / "o.bsvm", "--format", "vw", *options]

    return build


def weights_file(weights: str, *options: str):
    return lambda e, t, mp: ["convert", e.text, t / "o.bsvm", "--weights", write(t / "w.txt", weights), *options]


def vw_text(t: Path) -> Path:
    return write(t / "d.vw", "".join(f"{1 if i % 2 else -1} |a x{i % 7} y{i % 3}\n" for i in range(60)))


def vw_model(t: Path) -> Path:
    """A model trained on VW text hashed into 2^18 columns."""
    assert main(["convert", str(vw_text(t)), str(t / "d.bsvm"), "--format", "vw", "-q"]) == 0
    assert main(["train", str(t / "d.bsvm"), str(t / "vw.h5"), "--max-outer", "2", "-q"]) == 0
    return t / "vw.h5"


def regression_model(e, t: Path) -> Path:
    """A support vector regression model (of the store's labels)."""
    assert main(["train", str(e.store), str(t / "svr.h5"), "-s", "12", "--max-outer", "2", "-q"]) == 0
    return t / "svr.h5"


def weighted_store(e, t: Path, weight: str = "2") -> Path:
    weights = write(t / "w", f"{weight}\n" * 1200)
    assert main(["convert", str(e.text), str(t / "w.bsvm"), "--weights", str(weights), "-q"]) == 0
    return t / "w.bsvm"


def convert_line(line: str, *options: str):
    def build(e, t, mp):
        return ["convert", write(t / "bad.txt", f"1 1:1\n{line}\n-1 2:1\n"), t / "o.bsvm", *options]

    return build


def train_with(*options):
    return lambda e, t, mp: ["train", e.store, t / "m.h5", *options]


def resume_with(*options, prepare=None):
    def build(e, t, mp):
        ck = e.copy(t, e.ck)
        e.copy(t, e.ck.with_name("ck.h5.prev"))
        if prepare:
            prepare(e, t, ck)
        return ["train", e.store, t / "m.h5", "--resume", ck, "--max-outer", "3", *options]

    return build


HELD_LOCKS: list[CheckpointLock | FileLock] = []


def hold_lock(e, t, ck):
    """Lock the checkpoint as a running training would (``flock`` on a second open file refuses)."""
    lock = CheckpointLock(ck)
    lock.acquire()
    HELD_LOCKS.append(lock)


@pytest.fixture(autouse=True)
def release_locks():
    yield
    while HELD_LOCKS:
        HELD_LOCKS.pop().release()


NOT_WRITABLE = (
    "cannot write <what> <path>: folder <folder> is not writable (permission denied or a read-only file system)"
)

CASES = [
    # -- the command line itself
    ("argument <name>: <what>", "usage", lambda e, t, mp: ["convert", e.text, t / "o", "--block-mb", "lots"]),
    ("argument <name>: <what>", "usage", lambda e, t, mp: ["train", e.store, t / "m", "-s", "9"]),
    ("argument <name>: <what>", "usage", lambda e, t, mp: ["train", e.store, t / "m", "-w", "heavy"]),
    ("argument <name>: <what>", "usage", lambda e, t, mp: ["train", e.store, t / "m", "-s", "2", "-C"]),
    ("unrecognized arguments: <args>", "usage", lambda e, t, mp: ["info", e.store, "--colour"]),
    ("the following arguments are required: <names>", "usage", lambda e, t, mp: ["predict", e.model]),
    (
        "<output> <path> <is> <input> <path>: no command writes over its input; give <output> another path",
        "error",
        lambda e, t, mp: ["train", e.copy(t, e.text), t / e.text.name],
    ),
    (
        "<output> <path> <is> <input> <path>: no command writes over its input; give <output> another path",
        "error",
        lambda e, t, mp: ["predict", e.model, e.test_store, e.test_store / "manifest.json"],
    ),
    (
        "<output> and <output> are both <path>: give each its own path",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint", t / "m.h5"],
    ),
    # -- reading LIBSVM text (convert; predict on a text file)
    ("<file>: no such file", "error", lambda e, t, mp: ["convert", t / "absent.txt", t / "o.bsvm"]),
    ("<file>: is a directory, not a LIBSVM text file", "error", lambda e, t, mp: ["convert", t, t / "o.bsvm"]),
    (
        "<file>: is a block store (already converted), not a LIBSVM text file",
        "error",
        lambda e, t, mp: ["convert", e.store, t / "o.bsvm"],
    ),
    (
        "<file>: is an HDF5 file (a blocksvm model, block or checkpoint?), not LIBSVM text",
        "error",
        lambda e, t, mp: ["predict", e.model, e.model],
    ),
    (
        "<file>: permission denied",
        "error",
        patched("blocksvm.io.text", "open", fail_with(EACCES), lambda e, t, mp: ["convert", e.text, t / "o.bsvm"]),
    ),
    (
        "<file>: cannot be read: <reason>",
        "error",
        lambda e, t, mp: ["convert", write(t / "cut.gz", gzip.compress(e.text.read_bytes())[:5000]), t / "o.bsvm"],
    ),
    (
        "<file>: contains no data rows",
        "error",
        lambda e, t, mp: ["convert", write(t / "e.txt", "\n# nothing\n"), t / "o"],
    ),
    (
        "<file>: contains no data rows",
        "error",
        lambda e, t, mp: ["predict", e.model, write(t / "e.txt", ""), "-o", t / "p.txt"],
    ),
    ("<file>:<line>: label <token> is not a number", "parse", convert_line(BAD_LINES[K.BAD_LABEL])),
    (
        "<file>:<line>: looks like CSV (commas between values), not LIBSVM text (label index:value index:value ...)",
        "error",
        lambda e, t, mp: ["convert", write(t / "d.csv", "label,f1,f2\n1,0.5,2\n"), t / "o"],
    ),
    (
        "<file>:<line>: column '<name>': '<cell>' is not a number",
        "error",
        lambda e, t, mp: ["convert", write(t / "d.csv", "label,f1\n1,0.5\n-1,x\n"), t / "o", "--csv", "label"],
    ),
    (
        "<file>:1: has no column '<name>' (its columns: <names>); --csv NAME",
        "error",
        lambda e, t, mp: ["convert", write(t / "d.csv", "label,f1\n1,0.5\n"), t / "o", "--csv", "y"],
    ),
    ("<file>:<line>: label <token> is not a finite number", "parse", convert_line(BAD_LINES[K.NONFINITE_LABEL])),
    ("<file>:<line>: <token> is not an index:value pair", "parse", convert_line(BAD_LINES[K.BAD_PAIR])),
    (
        "<file>:<line>: <token> is not an index:value pair: it looks like Vowpal Wabbit text (features after a "
        "'|namespace'): read it with --format vw (text_format='vw' in Python)",
        "parse",
        convert_line("1 |f a:1 b"),
    ),
    (
        "<file>:<line>: is not UTF-8 text (a binary file?): blocksvm reads LIBSVM or VW text, plain or .gz, .bz2 or "
        ".xz",
        "error",
        lambda e, t, mp: ["convert", write(t / "a.npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f8'}\n"), t / "o.bsvm"],
    ),
    (
        "--skip-bad-lines (skip_bad_lines=) reads text; <store> is a store, converted already (its skipped lines: "
        "blocksvm info)",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--skip-bad-lines"],
    ),
    (
        "--skip-bad-lines (skip_bad_lines=) reads text; <store> is a store, converted already (its skipped lines: "
        "blocksvm info)",
        "error",
        lambda e, t, mp: ["predict", e.model, e.test_store, "--skip-bad-lines"],
    ),
    ("<file>:<line>: feature index in <token> is not an integer", "parse", convert_line(BAD_LINES[K.BAD_INDEX])),
    ("<file>:<line>: feature index in <token> is negative", "parse", convert_line(BAD_LINES[K.NEGATIVE_INDEX])),
    (
        "<file>:<line>: feature index 0 in <token>, but the file is read as one-based (convert without "
        "--no-zero-based, or with --zero-based; zero_based='auto' or True in Python)",
        "parse",
        convert_line(BAD_LINES[K.ZERO_INDEX], "--no-zero-based"),
    ),
    (
        "<file>:<line>: feature index in <token> is larger than 2147483647, the largest 32-bit index: renumber or hash "
        "the features into a smaller range",
        "parse",
        convert_line(BAD_LINES[K.INDEX_TOO_LARGE]),
    ),
    (
        "<file>:<line>: feature indices must increase along a line, but <token> follows a larger index",
        "parse",
        convert_line(BAD_LINES[K.NOT_INCREASING]),
    ),
    (
        "<file>:<line>: feature index in <token> appears twice on the line",
        "parse",
        convert_line(BAD_LINES[K.DUPLICATE_INDEX]),
    ),
    ("<file>:<line>: value in <token> is not a number", "parse", convert_line(BAD_LINES[K.BAD_VALUE])),
    ("<file>:<line>: value in <token> is NaN or infinite", "parse", convert_line(BAD_LINES[K.NONFINITE_VALUE])),
    (
        "<file>:<line>: <token> is not a valid qid:<integer> before the features",
        "parse",
        convert_line(BAD_LINES[K.BAD_QID]),
    ),
    (
        "<file>:<line>: a value does not fit in float32 (convert with --dtype float64)",
        "error",
        convert_line("1 2:1e39"),
    ),
    (
        "<file>:<line>: a value is too large for float64",
        "error",
        convert_line(f"1 2:{2**1024}", "--dtype", "float64"),
    ),  # many digits: converted by Python's float
    ("<file>:<line>: label is too large for float64", "error", convert_line(f"{2**1024} 2:1")),
    (
        "<file>:<line>: the squared norm of the row overflows float64 (values beyond about 1e154): rescale the "
        "features",
        "error",
        convert_line("1 2:1e154 3:1.5e154", "--dtype", "float64"),
    ),
    # -- convert and generate: parameters and the output store
    (
        "<store> already exists (pass overwrite / --overwrite to replace it)",
        "error",
        lambda e, t, mp: ["convert", e.text, e.store],
    ),
    (
        "cannot create <store>: folder <folder> does not exist",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "no" / "o.bsvm"],
    ),
    (
        "cannot create <store>: <reason>",
        "error",
        patched(Path, "mkdir", fail_with(EACCES), lambda e, t, mp: ["convert", e.text, t / "o.bsvm"]),
    ),
    (
        "cannot create <store>: <reason>",
        "error",  # the folder turned read-only while blocks were written
        patched(
            "blocksvm._hdf5",
            "open",
            failing_open(refuse=errno.EROFS),
            lambda e, t, mp: ["convert", e.text, t / "o.bsvm"],
        ),
    ),
    (
        "no space left on the device while writing <store>; nothing was written",
        "error",
        patched(
            "blocksvm.store.writer", "write_hdf5", fail_with(ENOSPC), lambda e, t, mp: ["convert", e.text, t / "o.bsvm"]
        ),
    ),
    (
        "block_rows must be a positive integer (--block-rows), not <n>",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--block-size", "0"],
    ),
    (
        "block_mb must be positive (--block-mb), not <n>",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--block-mb", "-1"],
    ),
    (
        "unknown compression <name>; choose one of blosc-lz4, lzf, gzip, zstd, none (gzip-N and zstd-N set a level)",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--compression", "rar"],
    ),
    (
        "compression <name>: the level must be an integer in 1..<n>",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--compression", "gzip-12"],
    ),
    (
        "n_features must be a positive integer (--n-features), not <n>",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--n-features", "0"],
    ),
    (
        "n_features=<n> is smaller than the file's <m> features (its largest index is <i>, <base>-based; --n-features)",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--n-features", "5"],
    ),
    (
        "jobs must be a positive integer (--jobs), not <n>",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--jobs", "0"],
    ),
    (
        "--block-rows must be a positive number of rows, not <n>",
        "error",
        lambda e, t, mp: [
            "generate",
            t / "g",
            "--rows",
            "10",
            "--features",
            "5",
            "--nnz",
            "2",
            "--store",
            "--block-size",
            "0",
        ],
    ),
    (
        "rows and features must be positive",
        "error",
        lambda e, t, mp: ["generate", t / "g.txt", "--rows", "0", "--features", "5"],
    ),
    (
        "nnz must be in 1..features (<n>), not <m>",
        "error",
        lambda e, t, mp: ["generate", t / "g.txt", "--rows", "10", "--features", "5"],
    ),
    (
        "noise must be in [0, 0.5), not <x>",
        "error",
        lambda e, t, mp: ["generate", t / "g.txt", "--rows", "10", "--features", "5", "--nnz", "2", "--noise", "0.7"],
    ),
    (
        "cannot write <what> <path>: <reason>",
        "error",
        patched(
            "blocksvm.datasets",
            "open",
            full_disk_open,
            lambda e, t, mp: ["generate", t / "g.txt", "--rows", "10", "--features", "5", "--nnz", "2"],
        ),
    ),
    # -- VW text and instance weights (convert --format vw, --weights, predict, stream)
    (
        "<file>:<line>: no label before the first '|' (a last word that touches the bar is VW's tag, not a label)",
        "parse",
        vw_line("|a b"),
    ),
    ("<file>:<line>: importance weight <token> is not a number", "parse", vw_line("1 x |a b")),
    (
        "<file>:<line>: <token> before the first '|' looks like LIBSVM's index:value: VW's features follow a '|' "
        "(convert LIBSVM text without --format vw)",
        "parse",
        vw_line("1 3:1 4:1"),
    ),
    (
        "<file>:<line>: importance weight <token> is negative: instance weights must be >= 0",
        "parse",
        vw_line("1 -2 |a b"),
    ),
    ("<file>:<line>: importance weight <token> is not a finite number", "parse", vw_line("1 inf |a b")),
    (
        "<file>:<line>: <token> is one word too many before the first '|': VW's label, importance weight and tag are "
        "read (an initial prediction, VW's third number, is not supported)",
        "parse",
        vw_line("1 2 3 |a b"),
    ),
    (
        "<file>:<line>: the weight of namespace <token> is not a number (|namespace:weight)",
        "parse",
        vw_line("1 |a:q b"),
    ),
    ("<file>:<line>: feature <token> has no name", "parse", vw_line("1 |a :3")),
    ("<file>:<line>: weight <w> is negative: instance weights must be >= 0", "error", weights_file("1\n-1\n")),
    ("<file>:<line>: weight <w> is not a finite number", "error", weights_file("1\nnan\n")),
    ("<file>:<line>: <text> is not a number: a weights file holds one a line", "error", weights_file("1\n2 3\n")),
    (
        "<file>: has <n> weights, fewer than the rows of <data> (the row of its line <m> has none): one weight a row",
        "error",
        weights_file("1\n2\n"),
    ),
    (
        "<file>:<line>: one weight too many: <data> has <n> rows (one weight a row)",
        "error",
        weights_file("1\n" * 1201),
    ),
    (
        "--weights pairs the k-th weight with the k-th row: it cannot be kept in step past skipped lines "
        "(--skip-bad-lines)",
        "error",
        weights_file("1\n", "--skip-bad-lines"),
    ),
    (
        "VW text carries its weights after each label: --weights is for LIBSVM and CSV text",
        "error",
        weights_file("1\n", "--format", "vw"),
    ),
    (
        "give --csv or --format vw, not both: the input is CSV or VW text",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--csv", "0", "--format", "vw"],
    ),
    (
        "--hash-bits and --hash-all hash VW's feature names: give --format vw (LIBSVM's indices are columns)",
        "error",
        lambda e, t, mp: ["convert", e.text, t / "o", "--hash-bits", "18"],
    ),
    ("hash_bits must be an integer in 1..30 (--hash-bits), not <n>", "error", vw_line("1 |a b", "--hash-bits", "31")),
    (
        "<where> records <format> text hashed by <hash>; this blocksvm reads VW text hashed by murmurhash3_x86_32 only",
        "error",
        lambda e, t, mp: [
            "predict",
            set_h5_attr(vw_model(t), text_format=json.dumps({"format": "vw", "hash": "xxhash", "bits": 18})),
            vw_text(t),
        ],
    ),
    (
        "<store>: every row's instance weight is zero: there is nothing to train on",
        "error",
        lambda e, t, mp: ["train", weighted_store(e, t, "0"), t / "m.h5"],
    ),
    (
        "the model <model> was trained on <format>: it cannot read LIBSVM text",
        "error",
        lambda e, t, mp: ["predict", vw_model(t), e.text, "--format", "libsvm"],
    ),
    (
        "the model <model> was trained on LIBSVM text (integer indices), not on hashed VW text: it cannot read VW text",
        "error",
        lambda e, t, mp: ["predict", e.model, vw_text(t), "--format", "vw"],
    ),
    (
        "the model <model> was trained on <format>; the text is declared <format>: the columns would differ",
        "error",
        lambda e, t, mp: ["predict", vw_model(t), vw_text(t), "--hash-bits", "12"],
    ),
    (
        "<store> was read from <format>, but the model <model> was trained on <format>: they are different feature "
        "spaces",
        "error",
        lambda e, t, mp: ["predict", vw_model(t), e.test_store],
    ),
    (
        "<model> is <problem>; this run trains <problem> (loss <loss>): a warm start continues a model of the same "
        "problem",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "s.h5", "--warm-start", regression_model(e, t)],
    ),
    (
        "<model> was trained on <format>; this data is <format>",
        "error",
        lambda e, t, mp: ["stream", vw_text(t), t / "s.h5", "--format", "libsvm", "--warm-start", vw_model(t)],
    ),
    # -- reading a block store (info, train, predict, --validation)
    ("<store>: no such block store", "error", lambda e, t, mp: ["info", t / "absent.bsvm"]),
    (
        "--verify checks a block store's blocks; <model> is a model file",
        "error",
        lambda e, t, mp: ["info", e.model, "--verify"],
    ),
    (
        "<path> is not a block store (a store is a directory made by 'blocksvm convert'; convert a LIBSVM file first)",
        "error",
        lambda e, t, mp: ["info", e.text],
    ),
    # -- training on a LIBSVM file: its cached store
    ("<path>: no such file or block store", "error", lambda e, t, mp: ["train", t / "absent.txt", t / "m.h5"]),
    (
        "cannot create the cached store <store> for <file>: folder <folder> is not writable (permission denied or a "
        "read-only file system); pass --cache-dir DIR (cache_dir= in Python) to put it elsewhere",
        "error",
        read_only(lambda e, t, mp: ["train", e.text, t / "m.h5", "--cache-dir", t / "ro"]),
    ),
    (
        "cannot create the cached store <store> for <file>: folder <folder> cannot be created (<reason>); pass "
        "--cache-dir DIR (cache_dir= in Python) to put it elsewhere",
        "error",
        lambda e, t, mp: ["train", e.text, t / "m.h5", "--cache-dir", write(t / "f", "") / "sub"],
    ),
    (
        "cannot create the cached store <store> for <file>: <store> exists and is not a block store; remove it, or "
        "pass --cache-dir DIR (cache_dir= in Python) to put it elsewhere",
        "error",
        lambda e, t, mp: cache_path(e.copy(t, e.text)).mkdir(parents=True) or ["train", t / e.text.name, t / "m.h5"],
    ),
    ("<store> is not a complete block store: it has no manifest.json", "error", lambda e, t, mp: ["info", t]),
    (
        "<store> is not a complete block store: it has no manifest.json (an interrupted conversion leaves such a "
        ".partial directory)",
        "error",
        lambda e, t, mp: (t / "o.bsvm.partial-1a2b3c4d").mkdir() or ["info", t / "o.bsvm.partial-1a2b3c4d"],
    ),
    (
        "<store> is not a complete block store (the conversion did not finish)",
        "error",
        lambda e, t, mp: ["info", edit_manifest(e.copy(t, e.store), complete=False)],
    ),
    (
        "<store> was written in store format version <n>; this blocksvm reads version 3 and older (upgrade blocksvm)",
        "error",
        lambda e, t, mp: ["train", edit_manifest(e.copy(t, e.store), version=4), t / "m.h5"],
    ),
    (
        "<store>: the feature map (features.h5) is damaged (<reason>): convert the store again",
        "error",
        lambda e, t, mp: ["info", cut_feature_map(wide_store(t))],
    ),
    (
        "<store> is not a blocksvm store (its manifest names another format)",
        "error",
        lambda e, t, mp: ["info", edit_manifest(e.copy(t, e.store), format="parquet")],
    ),
    (
        "<store>/manifest.json is corrupted: <reason>",
        "error",
        lambda e, t, mp: ["info", write(e.copy(t, e.store) / "manifest.json", '{"format": "blocksvm-st').parent],
    ),
    (
        "<store>/manifest.json: field '<field>' <problem>: restore the store from a copy, or convert it again",
        "error",
        lambda e, t, mp: ["info", edit_manifest(e.copy(t, e.store), blocks=None)],
    ),
    (
        "<store>/manifest.json: field '<field>' <problem>: restore the store from a copy, or convert it again",
        "error",
        lambda e, t, mp: ["train", edit_manifest(e.copy(t, e.store), rows="1200"), t / "m.h5"],
    ),
    (
        "<store>: block <n> (<file>) is inconsistent: <problem>",
        "error",
        lambda e, t, mp: ["train", labels_cut_short(e.copy(t, e.store)), t / "m.h5"],
    ),
    (
        "<store>: block <n> (<file>) cannot be read, the file is damaged (<reason>): convert the store again",
        "error",
        lambda e, t, mp: ["train", heap_damaged(older_store(e, t, mp)), t / "m.h5"],
    ),
    (
        "<store>: block <n> (<file>) was not read in <s> s: its file or the disk under it does not answer (a network "
        "file system that stopped?); no model or predictions were written (BLOCKSVM_READ_STALL_SECONDS sets how long "
        "a read may take)",
        "error",
        a_read_that_stalls,
    ),
    (
        "<file>: permission denied",
        "error",
        patched(Path, "read_text", fail_with(EACCES), lambda e, t, mp: ["info", e.store]),
    ),
    (
        "<store>: block <n> (<file>) is missing: restore the store from a copy (its checkpoints stay valid) or "
        "convert again",
        "error",
        missing_block,
    ),
    (
        "<store>: block <n> (<file>) is missing: restore the store from a copy (its checkpoints stay valid) or "
        "convert again",
        "error",
        block_lost_while_training(os.unlink),
    ),
    (
        "<store>: block <n> (<file>) has <n> bytes, the manifest says <m>: the file is truncated or was replaced; "
        "restore the store from a copy (its checkpoints stay valid) or convert again",
        "error",
        lambda e, t, mp: (
            os.truncate(e.copy(t, e.store) / "block-00001.h5", 1000) or ["predict", e.model, t / "train.bsvm"]
        ),
    ),
    (
        "<store>: block <n> (<file>) has <n> bytes, the manifest says <m>: the file is truncated or was replaced; "
        "restore the store from a copy (its checkpoints stay valid) or convert again",
        "error",
        block_lost_while_training(lambda file: os.truncate(file, 1000)),
    ),
    (
        "<store>: block <n> (<file>) cannot be read, the file is damaged (<reason>): convert the store again",
        "error",
        lambda e, t, mp: ["train", damage_block(e.copy(t, e.store)), t / "m.h5"],
    ),
    ("<store> holds a single class (<labels>); an SVM needs two or more", "error", one_class_store),
    (
        "<store> was replaced while this run read it: block <n> (<file>) is of generation <id>, the run began on "
        "generation <id> (the store was converted again or copied over); no model or predictions were written: run "
        "again on the store as it is now",
        "error",
        store_replaced_while_training,
    ),
    (
        "<store> is being replaced by a conversion (convert pid <n>): run again once it has ended",
        "error",
        lambda e, t, mp: ["train", holding(e.copy(t, e.store) / ".lock", "convert pid 4242").parent, t / "m.h5"],
    ),
    (
        "cannot overwrite <store>: a run is reading it, or another conversion writing it (train, tune, predict, "
        "convert); run again once it has ended, or write the new store under another name",
        "error",
        lambda e, t, mp: ["convert", e.text, holding(e.copy(t, e.store) / ".lock", shared=True).parent, "--overwrite"],
    ),
    (
        "cannot write the columns of <store>: a run is reading it, or a conversion or another column write is "
        "writing it (<holder>); run again once it has ended",
        "error",
        lambda e, t, mp: ["columns", holding(e.copy(t, e.store) / ".lock", shared=True).parent],
    ),
    (
        "cannot write the column layout of <store>: this process cannot write in the store's folder (permission "
        "denied or a read-only file system); run 'blocksvm columns <store>' as a user who can, or copy the store to "
        "a folder you can write (its checkpoints stay valid) and use the copy",
        "error",
        lambda e, t, mp: [
            "columns",
            mp.setattr("blocksvm.store.columns.os.access", lambda path, mode: False) or e.copy(t, e.store),
        ],
    ),
    (
        "relative duality gap <x> in pass <n>: the dual objective exceeds the primal, which no single data set "
        "allows: the data changed under the run (a store converted again or copied over, a text file edited) or it "
        "resumed from a damaged checkpoint; no model written: train again on the data as it is now",
        "error",
        dual_past_the_primal,
    ),
    (
        "validation store <store> has <b>-based feature indices, the training store <store> <b>-based: they are "
        "different feature spaces",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--validation", e.zero_store],
    ),
    # -- training parameters
    ("C must be a positive finite number, not <x>", "error", train_with("-C", "-1")),
    ("tol must be a number >= 0 or None, not <x>", "error", train_with("--tol", "-1")),
    ("eps must be a positive number or None, not <x>", "error", train_with("--eps", "0")),
    ("max_outer must be an integer >= 1, not <n>", "error", train_with("--max-outer", "0")),
    ("inner_passes must be an integer >= 1 or None, not <n>", "error", train_with("--inner-passes", "0")),
    ("nu must be a number in (0, 1], not <x>", "error", train_with("-s", "21", "-n", "1.5")),
    ("<flag> is not read by --solver <name>: <reason>", "error", train_with("-s", "21", "-B", "1")),
    (
        "--working-set block cannot train a one-class SVM: its dual's sum (nu times the rows) moves between blocks "
        "only through rows of two blocks solved together: use cache (the default) or pair",
        "error",
        train_with("--loss", "one-class", "--working-set", "block"),
    ),
    ("batch_size must be an integer >= 1, not <n>", "error", train_with("--solver", "pegasos", "--batch-size", "0")),
    ("seed must be an integer >= 0, not <n>", "error", train_with("--seed", "-1")),
    ("time_limit must be a positive number of seconds or None, not <x>", "error", train_with("--time-limit", "0")),
    ("tune searches C: give the values to try as --C-grid", "error", lambda e, t, mp: ["tune", e.store, "-C", "2"]),
    (
        "tune warm-starts dual-cd, newton, owl-qn, cdn and glmnet along C; --solver <solver> cannot continue from "
        "another C: train it with 'blocksvm train' at each C",
        "error",
        lambda e, t, mp: ["tune", e.store, "--solver", "pegasos"],
    ),
    (
        "<flag> is a train option; tune searches C by cross-validation",
        "error",
        lambda e, t, mp: ["tune", e.store, "--time-limit", "60"],
    ),
    ("folds must be an integer >= 2, not <n>", "error", lambda e, t, mp: ["tune", e.store, "--folds", "1"]),
    (
        "C_grid must be positive numbers, all different, or None, not <x>",
        "error",
        lambda e, t, mp: ["tune", e.store, "--C-grid", "1,1"],
    ),
    (
        "folds=<k>: fold <f> holds none of the <n> rows of <store>; use fewer folds",
        "error",
        lambda e, t, mp: ["tune", write(t / "three.txt", "1 1:1\n-1 2:1\n1 1:2\n"), "--folds", "5", "-q"],
    ),
    ("eval_every must be an integer >= 0, not <n>", "error", train_with("--eval-every", "-1")),
    ("bias must be a finite number (<= 0: no bias), not <x>", "error", train_with("--bias", "inf")),
    ("class_weight names label <label>, which is not among the labels <labels>", "error", train_with("-w", "7=2")),
    ("class_weight names label <label>, which is not a number", "error", train_with("-w", "x=2")),
    ("class_weight[<label>] must be a positive number, not <x>", "error", train_with("-w", "1=-2")),
    (
        "checkpoint_seconds must be a positive number or None, not <x>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint", t / "ck", "--checkpoint-seconds", "0"],
    ),
    (
        "checkpoint_every must be an integer >= 0, not <n>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint", t / "ck", "--checkpoint-every", "-1"],
    ),
    # -- checkpoints
    (
        "checkpoint <ck> exists: pass resume=<ck> (--resume) to continue that run, or remove it to start anew",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint", e.copy(t, e.ck)],
    ),
    ("<ck>: no such checkpoint", "error", lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", t / "no.ck"]),
    (
        "<ck> is an HDF5 file but not a blocksvm checkpoint",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", e.copy(t, e.model)],
    ),
    (
        "<ck> is not a blocksvm checkpoint (not even an HDF5 file)",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", e.copy(t, e.text)],
    ),
    (
        "<ck> is corrupted or truncated: <reason>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", truncated(e.copy(t, e.ck))],
    ),
    (
        "<ck> is corrupted: its checksum does not match its content",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", corrupt_alpha(e.copy(t, e.ck))],
    ),
    (
        "<ck> is corrupted or truncated: <reason>; and the previous one: <ck>.prev is corrupted or truncated: <reason>",
        "error",
        resume_with(prepare=lambda e, t, ck: [os.truncate(p, 1000) for p in (ck, t / "ck.h5.prev")]),
    ),
    (
        "<ck> is checkpoint format version <n>; this blocksvm reads version 1 (upgrade blocksvm)",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", set_h5_attr(e.copy(t, e.ck), version=5)],
    ),
    (
        "checkpoint <ck> was made for the store <store> (<n> rows, <m> nnz), not for the store <store> (<n> rows, "
        "<m> nnz)",
        "error",
        lambda e, t, mp: ["train", e.test_store, t / "m.h5", "--resume", e.copy(t, e.ck)],
    ),
    (
        "checkpoint <ck> was made for generation <id> of the store <store>, which now holds generation <id> (it was "
        "converted again): resume on the store it was made for (or a copy of it), or start a new run",
        "error",
        store_converted_again_since_the_checkpoint,
    ),
    (
        "checkpoint <ck> was made with other parameters (<changes>); only eps, eval_every, max_outer, memory_mb, "
        "prefetch, read_threads, time_limit, tol may change when resuming",
        "error",
        resume_with("-C", "2", "--loss", "hinge"),
    ),
    (
        "checkpoint <ck> was made with other tune options (<changes>); only patience may change when resuming",
        "error",
        tune_resume("--folds", "3"),
    ),
    (
        "checkpoint <ck> was written by a training run (train or stream), not by blocksvm tune",
        "error",
        tune_resume("--folds", "2", checkpoint=lambda e, t: e.copy(t, e.ck)),
    ),
    (
        "checkpoint <ck> was written by blocksvm tune: continue the search with 'blocksvm tune --resume'",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--resume", tune_checkpoint(e, t)],
    ),
    (
        "checkpoint <ck> is in use by another training run (pid <n>); two runs must not write the same checkpoint",
        "error",
        resume_with(prepare=hold_lock),
    ),
    # -- models and predictions
    ("<model>: no such model file", "error", lambda e, t, mp: ["predict", t / "absent.h5", e.test_store]),
    (
        "<model> is a directory (a block store?), not a model file",
        "error",
        lambda e, t, mp: ["predict", e.store, e.test_store],
    ),
    (
        "<model> is neither a blocksvm model nor a LIBLINEAR model file",
        "error",
        lambda e, t, mp: ["export", e.text, t / "m.txt"],
    ),
    ("<model> is an HDF5 file but not a blocksvm model", "error", lambda e, t, mp: ["predict", e.ck, e.test_store]),
    (
        "<model> is model format version <n>; this blocksvm reads version 3 (upgrade blocksvm)",
        "error",
        lambda e, t, mp: ["predict", set_h5_attr(e.copy(t, e.model), version=5), e.test_store],
    ),
    (
        "<model> is not a readable model: <reason>",
        "error",
        lambda e, t, mp: ["predict", write(t / "m.h5", e.model.read_bytes()[:3000]), e.test_store],
    ),
    (
        "<model> is not a readable LIBLINEAR model file: <reason>",
        "error",
        lambda e, t, mp: ["predict", write(t / "ll.txt", LIBLINEAR_HEADER + b"0.5\n\xff\n"), e.test_store],
    ),
    (
        "<model>: expected <n> weight rows of <k> values, found <shape>",
        "error",
        lambda e, t, mp: ["predict", liblinear_model(t, "L2R_L2LOSS_SVC_DUAL", "3", "0.1\n0.2\n"), e.test_store],
    ),
    (
        "<model>: LIBLINEAR solver_type <name> is not a linear model blocksvm can apply",
        "error",
        lambda e, t, mp: ["predict", liblinear_model(t, "L2R_SOME_FUTURE_SOLVER", "1", "0.1\n"), e.test_store],
    ),
    (
        "probabilities need a logistic regression model (train with --loss logistic); this one minimized the "
        "<loss> loss",
        "error",
        lambda e, t, mp: ["predict", e.model, e.test_store, "-b", "1"],
    ),
    (
        "<store> has <b>-based feature indices but the model was trained on <b>-based ones: they are different "
        "feature spaces",
        "error",
        lambda e, t, mp: ["predict", e.model, e.zero_store],
    ),
    (
        "<file>:<line>: feature index 0, but the model was trained on one-based indices: this file is in another "
        "feature space (zero-based)",
        "error",
        lambda e, t, mp: ["predict", e.model, e.root / "zero.txt"],
    ),
    (
        "<where>: feature index <i> is outside the model <model>, whose <k> features are indices <lo> to <hi> "
        "(--strict; without it such features are ignored, with a warning)",
        "error",
        lambda e, t, mp: ["predict", e.model, write(t / "wide.txt", "1 1:1 100000:2\n"), "--strict"],
    ),
    (
        "the validation data <data>: <n> rows have labels the training store does not have (<labels>; its classes: "
        "<classes>): they count as predicted wrong in the validation score (--strict; without it they count in its "
        "score as predict counts them)",
        "error",
        lambda e, t, mp: (
            main(["convert", str(write(t / "v.txt", "7 1:1\n")), str(t / "v.bsvm"), "-q"])
            or ["train", e.store, t / "m.h5", "--validation", t / "v.bsvm", "--strict"]
        ),
    ),
    (
        "the validation data <data>: its features of indices <lo> to <hi> are outside the training store's features "
        "(indices <a> to <b>): they are ignored in the validation score (--strict; without it they count in its "
        "score as predict counts them)",
        "error",
        lambda e, t, mp: (
            main(["convert", str(write(t / "v.txt", "1 999:1\n-1 2:1\n")), str(t / "v.bsvm"), "-q"])
            or ["train", e.store, t / "m.h5", "--validation", t / "v.bsvm", "--strict"]
        ),
    ),
    (
        "<where>: feature index <i> is outside the model <model>, whose <k> features are indices <lo> to <hi> "
        "(--strict; without it such features are ignored, with a warning)",
        "error",
        lambda e, t, mp: (
            main(["convert", str(write(t / "wide.txt", "1 1:1 100000:2\n")), str(t / "wide.bsvm"), "-q"])
            or ["predict", e.model, t / "wide.bsvm", "--strict"]
        ),
    ),
    (
        "<where>: label <label> is not among the model's classes (<classes>) (--strict; without it such rows count as "
        "wrong, with a warning)",
        "error",
        lambda e, t, mp: ["predict", e.model, write(t / "five.txt", "1 1:1\n5 2:1\n"), "--strict"],
    ),
    # -- streams and warm starts
    (
        "stream needs an online learner (<learners>); --solver <name> makes passes over a store: convert the file "
        "and use 'blocksvm train'",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "--solver", "dual-cd"],
    ),
    (
        "class_weight='balanced' needs the class counts of the whole data: a stream has them only at its end; give "
        "the weights (-w LABEL=WEIGHT)",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "-w", "balanced"],
    ),
    (
        "feature index 0 in a stream read as one-based (LIBSVM's numbering): pass --zero-based if the file numbers "
        "features from 0",
        "error",
        lambda e, t, mp: ["stream", e.root / "zero.txt", t / "m.h5"],
    ),
    (
        "the stream held <n> examples of <k> class(es) <labels>: a classifier needs two or more",
        "error",
        lambda e, t, mp: ["stream", write(t / "one.txt", "1 1:1\n1 2:1\n"), t / "m.h5"],
    ),
    (
        "standard input cannot be resumed: its rows are gone; stream from a file",
        "error",
        lambda e, t, mp: ["stream", "-", t / "m.h5", "--resume", t / "ck.h5"],
    ),
    (
        "<file>:<line>: label <label> is not among the classes declared by --classes (<labels>): declare every "
        "label of the stream, or none",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "--classes", "5,6"],
    ),
    (
        "checkpoint <ck> was made for the stream <path> (<facts>), not for the stream <path> (<facts>)",
        "error",
        lambda e, t, mp: ["stream", e.root / "test.txt", t / "m.h5", "--resume", stream_checkpoint(e, t)],
    ),
    (
        "checkpoint <ck> was made with other parameters (<changes>); only eps, eval_every, max_outer, memory_mb, "
        "prefetch, read_threads, time_limit, tol may change when resuming",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "--bias", "2", "--resume", stream_checkpoint(e, t)],
    ),
    (
        "--solver <name> cannot continue a saved model (--warm-start): its state is more than the weights",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--warm-start", e.model],
    ),
    (
        "the model <model> is being written by another run (pid <n>): warm-start from it once that run has ended",
        "error",
        warm_start_from_a_model_being_written,
    ),
    (
        "<model> has the classes <labels>; <store> has <labels>: a warm start needs the same classes",
        "error",
        lambda e, t, mp: [
            "train",
            e.store,
            t / "m.h5",
            "--solver",
            "perceptron",
            "--warm-start",
            streamed_model(t, "1 1:1\n2 2:1\n3 3:1\n"),
        ],
    ),
    (
        "<model> has <n> features, more than the store's <m>",
        "error",
        lambda e, t, mp: [
            "train",
            e.store,
            t / "m.h5",
            "--solver",
            "perceptron",
            "--warm-start",
            streamed_model(t, "1 1:1\n-1 100:1\n"),
        ],
    ),
    (
        "<model> has <n> features that <store> does not use: a warm start needs the store's features to include "
        "the model's",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--solver", "perceptron", "--warm-start", wide_model(t)],
    ),
    (
        "the LIBLINEAR model would take about <x> GB (<n> features, dense), more than 1 GiB; LIBLINEAR would need "
        "<y> GB to load it: keep the blocksvm model",
        "error",
        lambda e, t, mp: ["export", wide_model(t), t / "m.txt"],
    ),
    (
        "<model> was trained with bias <b>: pass --bias <b>",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "--bias", "-1", "--warm-start", e.model],
    ),
    # -- writing outputs: model, history, checkpoint, predictions, LIBLINEAR model, plot
    (
        "<what> <path> is in use by another run (pid <n>): two runs must not write the same model, history or "
        "checkpoint; wait for it to end or write elsewhere",
        "error",
        lambda e, t, mp: ["train", e.store, holding(t / "m.h5.lock", "pid 4242").with_suffix("")],
    ),
    (
        "<what> <path> is in use by another run (pid <n>): two runs must not write the same model, history or "
        "checkpoint; wait for it to end or write elsewhere",
        "error",
        lambda e, t, mp: [
            "tune",
            e.store,
            "--C-grid",
            "1",
            "--refit",
            holding(t / "r.h5.lock", "pid 4242").with_suffix(""),
        ],
    ),
    (
        "cannot write <what> <path>: folder <folder> does not exist",
        "error",
        lambda e, t, mp: ["train", e.store, t / "no" / "m.h5", "--history", t / "h.jsonl"],
    ),
    ("cannot write <what> <path>: it is a directory", "error", lambda e, t, mp: ["train", e.store, t]),
    (
        "cannot write <what> <path>: folder <folder> does not exist",
        "error",
        train_with("--history", "/nonexistent-folder/h.jsonl"),
    ),
    (
        NOT_WRITABLE,
        "error",
        read_only(lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint", t / "ro" / "ck"]),
    ),
    (
        "cannot write <what> <path>: <reason>",
        "error",
        patched(
            "blocksvm.model",
            "write_hdf5",
            fail_with(ENOSPC),
            lambda e, t, mp: ["train", e.store, t / "m.h5", "--max-outer", "1", "-q"],
        ),
    ),
    (
        "cannot write <what> <path>: <reason>",
        "error",  # the disk fills while a checkpoint is written
        patched(
            "blocksvm._hdf5",
            "open",
            full_disk_open,
            lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint", t / "ck.h5", "--max-outer", "1", "-q"],
        ),
    ),
    (
        "cannot write <what> <path>: <reason>",
        "error",  # ... or the history
        patched(
            "blocksvm.monitor",
            "open",
            full_disk_open,
            lambda e, t, mp: ["train", e.store, t / "m.h5", "--max-outer", "1", "-q"],
        ),
    ),
    (
        "cannot write <what> <path>: folder <folder> does not exist",
        "error",
        lambda e, t, mp: ["predict", e.model, e.test_store, "-o", t / "no" / "p.txt"],
    ),
    (
        "cannot write <what> <path>: <reason>",
        "error",
        patched(
            "blocksvm.predict",
            "open",
            full_disk_open,
            lambda e, t, mp: ["predict", e.model, e.test_store, "-o", t / "p.txt"],
        ),
    ),
    (
        "cannot write <what> <path>: <reason>",
        "error",  # a read-only file system that os.access did not report
        patched(
            "blocksvm.predict",
            "open",
            failing_open(refuse=errno.EROFS),
            lambda e, t, mp: ["predict", e.model, e.test_store, "-o", t / "p.txt"],
        ),
    ),
    (NOT_WRITABLE, "error", read_only(lambda e, t, mp: ["export", e.model, t / "ro" / "m.txt"])),
    (
        "cannot write <what> <path>: <reason>",
        "error",
        patched("blocksvm.liblinear_format", "open", full_disk_open, lambda e, t, mp: ["export", e.model, t / "m.txt"]),
    ),
    (
        "cannot write <what> <path>: folder <folder> does not exist",
        "error",
        lambda e, t, mp: ["plot", e.history, "-o", t / "no" / "p.png"],
    ),
    # -- plots
    ("<history>: no such history file", "error", lambda e, t, mp: ["plot", t / "absent.jsonl"]),
    ("<history> is a directory, not a training history", "error", lambda e, t, mp: ["plot", t]),
    (
        "<history> is an HDF5 file (a model?), not a training history: plot <history>.history.jsonl",
        "error",
        lambda e, t, mp: ["plot", e.model],
    ),
    ("<history> is not a JSON-lines training history: <reason>", "error", lambda e, t, mp: ["plot", e.text]),
    (
        "give the output file once: as the third word or as --output, not both",
        "error",
        lambda e, t, mp: ["predict", e.model, e.test_store, t / "a.txt", "-o", t / "b.txt"],
    ),
    ("<history> holds no training records", "error", lambda e, t, mp: ["plot", write(t / "h.jsonl", "\n")]),
    (
        "<history> is not a blocksvm training history: records lack <keys>",
        "error",
        lambda e, t, mp: ["plot", write(t / "h.jsonl", '{"loss": 1}\n')],
    ),
    ("plotting needs matplotlib: pip install 'blocksvm[plot]'", "error", without_matplotlib),
    # -- the demo
    ("rows must be a positive integer, not <n>", "error", lambda e, t, mp: ["demo", "--rows", "0"]),
    ("--workdir <path> is a file, not a folder", "error", lambda e, t, mp: ["demo", "--workdir", e.text]),
    (
        "the demo cannot write its files in <folder>: <reason>",
        "error",
        patched(
            "blocksvm.datasets",
            "open",
            full_disk_open,
            lambda e, t, mp: [
                "demo",
                "--rows",
                "100",
                "--test-rows",
                "10",
                "--features",
                "20",
                "--nnz",
                "3",
                "--workdir",
                t / "d",
            ],
        ),
    ),
    # -- anything else
    (
        "unexpected <type>: <text> (a bug in blocksvm: run again with --debug and report the traceback)",
        "error",
        patched("blocksvm.cli.data", "print_info", fail_with(RuntimeError("oops")), lambda e, t, mp: ["info", e.store]),
    ),
    (
        "out of memory (smaller blocks need less: convert with a smaller --block-mb)",
        "error",
        patched("blocksvm.cli.data", "print_info", fail_with(MemoryError()), lambda e, t, mp: ["info", e.store]),
    ),
    # -- parallel training (--workers, --scheduler)
    (
        "<flag> is read by --solver <solvers>, not by --solver <name>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--workers", "2", "--solver", "pegasos"],
    ),
    (
        "<flag> is read only with <options>: it <what it does>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--checkpoint-seconds", "60"],
    ),
    (
        "<flag> is read only with <options>: it <what it does>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--solver", "dual-cd", "--cocoa-sigma", "2"],
    ),
    (
        "<flag> is read only with <options>: it <what it does>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "-p", "0.1"],
    ),
    (
        "<flag> is read only with <options>: it <what it does>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--strict"],
    ),
    (
        "--memory-mb <n> is below what this run needs before it keeps any data, <m> MB (the runtime <a> MB, the "
        "learner's arrays <b> MB, the blocks in flight <c> MB): give --memory-mb <k> or more",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--memory-mb", "30"],
    ),
    (
        "--tol 0 turns the duality gap rule off and no other rule would stop this run before its <n> passes: give "
        "--max-outer N or --time-limit SECONDS for how long to run, -e EPS for LIBLINEAR's rule, or a tolerance > 0",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--tol", "0"],
    ),
    (
        "-s <code> is the <loss> loss with the <penalty> penalty; <flags> beside it asks for another problem "
        "(<problem>): give one of them",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "-s", "1", "--loss", "logistic"],
    ),
    (
        "<file>:<line>: <reason> (the stream stops there, no model written: --skip-bad-lines skips such lines and "
        "counts them)",
        "parse",
        lambda e, t, mp: ["stream", write(t / "bad.txt", "1 1:1\n-1 2:x\n"), t / "o.h5"],
    ),
    (
        "--loss <loss> is not a loss --solver <solver> minimizes (it minimizes <losses>)",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--solver", "pegasos", "--loss", "logistic"],
    ),
    (
        "--penalty <penalty> is not a penalty --solver <solver> minimizes (it minimizes <penalties>); without "
        "--solver, --penalty <penalty> chooses <solver>",
        "error",
        train_with("--penalty", "l1", "--solver", "dual-cd"),
    ),
    (
        "--l1-ratio weighs the two terms of --penalty elasticnet; --penalty <penalty> has one",
        "error",
        train_with("--penalty", "l1", "--l1-ratio", "0.3"),
    ),
    (
        "<store> has <n> distinct labels, most of them not integers: real-valued targets? A classifier would train "
        "one problem per value; for regression choose the loss <losses>",
        "error",
        lambda e, t, mp: ["train", real_valued_store(t), t / "m.h5"],
    ),
    (
        "class_weight weighs classes; loss '<loss>' is regression: drop it",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "-s", "12", "-w", "1=2"],
    ),
    (
        "<flag> is read by --solver <solvers>, not by --solver <name>",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "--solver", "pa", "-C", "2"],
    ),
    (
        "<flag> is a <command> option; <command> <what it does>",
        "error",
        lambda e, t, mp: ["stream", e.text, t / "m.h5", "--workers", "2"],
    ),
    (
        "--scheduler runs shards of --solver <solvers>, not of <solver>",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--scheduler", "tcp://127.0.0.1:1", "--solver", "pegasos"],
    ),
    (
        "workers (<k>) must be at most the store's blocks (<n>): each shard is whole blocks; convert with a smaller "
        "--block-rows for more",
        "error",
        lambda e, t, mp: ["train", e.store, t / "m.h5", "--workers", "999"],
    ),
    (
        "--scheduler needs dask.distributed: pip install 'blocksvm[dask]'",
        "error",
        lambda e, t, mp: (
            mp.setitem(sys.modules, "distributed", None)
            or ["train", e.store, t / "m.h5", "--scheduler", "tcp://127.0.0.1:1"]
        ),
    ),
    (
        "cannot reach a dask scheduler at <address> (<error>): start one ('dask scheduler') or check the address",
        "error",
        patched(
            "blocksvm.train.executors",
            "CONNECT_SECONDS",
            0.5,
            lambda e, t, mp: (
                pytest.importorskip("distributed")
                and ["train", e.store, t / "m.h5", "--scheduler", "tcp://127.0.0.1:1"]
            ),
        ),
    ),
    (
        "the dask scheduler at <address> has no workers (waited <n> s): start some ('dask worker ADDRESS')",
        "error",
        a_scheduler_without_workers,
    ),
    (
        "<store> on this worker is not the store being trained: the workers must read the same store at the same path "
        "(a shared file system)",
        "error",
        shipped_to_a_worker_with_another_store,
    ),
    # -- files that lie: checkpoints, models, histories and text, damaged or edited
    ("<ck>: field '<field>' <problem>", "error", resume_with(prepare=lambda e, t, ck: forge(ck, outer="3"))),
    (
        "checkpoint <ck>: field '<field>' <problem>",
        "error",
        resume_with(prepare=lambda e, t, ck: forge(ck, alpha=lambda alpha: alpha[:, :700])),
    ),
    (
        "<model>: field '<field>' <problem>",
        "error",
        lambda e, t, mp: ["predict", set_h5_attr(e.copy(t, e.model), bias="high"), e.test_store],
    ),
    (
        "<model>: field '<field>' <problem>",
        "error",
        lambda e, t, mp: ["predict", liblinear_model(t, "L2R_L2LOSS_SVC_DUAL", "two", "0.5\n"), e.test_store],
    ),
    (
        "<model> is damaged: <problem>",
        "error",
        lambda e, t, mp: ["predict", heap_damaged_file(e.copy(t, e.model)), e.test_store],
    ),
    (
        "<model>: a weight among rows <a> to <b> is <what>",
        "error",
        lambda e, t, mp: ["predict", liblinear_model(t, "L2R_L2LOSS_SVC_DUAL", "2", "0.5\nnan\n"), e.test_store],
    ),
    (
        "the model <model> is being written by another run (pid <n>): predict with it once that run has ended",
        "error",
        lambda e, t, mp: ["predict", holding_model_lock(e.copy(t, e.model)), e.test_store],
    ),
    (
        "<history>:<line>: field '<field>' <problem>",
        "error",
        lambda e, t, mp: [
            "plot",
            write(t / "h.jsonl", '{"outer": 1, "time": "late", "primal": 1, "train_accuracy": 0.5}\n'),
            "-o",
            t / "p.png",
        ],  # fmt: skip
    ),
    (
        "<file>:<line>: is not UTF-8 text (a binary file, or another encoding?)",
        "error",
        lambda e, t, mp: ["convert", write(t / "d.csv", b"label,a\n1,2\n\xff\xfe,3\n"), t / "o.bsvm", "--csv", "label"],
    ),
]


def pattern_regex(pattern: str) -> re.Pattern:
    """The page's message as a regular expression: ``<word>`` stands for any text."""
    parts = re.split(r"<[a-z][a-z0-9 _.-]*>", pattern)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def documented_messages() -> list[str]:
    return re.findall(r"^#### `(.+)`$", DOC.read_text(), flags=re.MULTILINE)


def run(capsys, argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


IDS = [f"{i:03d}-{re.sub(r'[^a-z0-9]+', '-', p.lower())[:50]}" for i, (p, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("pattern, kind, build", CASES, ids=IDS)
def test_error_is_one_clean_line(env, tmp_path, monkeypatch, capsys, pattern, kind, build):
    argv = build(env, tmp_path, monkeypatch)
    if kind == "usage":
        with pytest.raises(SystemExit) as exit_:
            run(capsys, argv)
        code, err = exit_.value.code, capsys.readouterr().err
    else:
        code, _, err = run(capsys, argv)
    lines = [line for line in err.rstrip("\n").split("\n") if not line.startswith("note: ")]  # (said before work)
    assert code == 2, err
    assert "Traceback" not in err
    assert lines[0].startswith("blocksvm: error: "), err
    message = lines[0].removeprefix("blocksvm: error: ")
    if kind == "usage":
        message = re.sub(r" \(see '[^']+ --help'\)$", "", message)
    assert pattern_regex(pattern).fullmatch(message), f"\n{message}\ndoes not match the page's\n{pattern}"
    if kind == "parse":  # the offending line, shown under the message
        assert len(lines) == 2 and lines[1].startswith("    ") and lines[1].strip(), err
    else:
        assert len(lines) == 1, err


@pytest.mark.parametrize(
    "pattern, kind, build",
    [c for c in CASES if c[1] != "usage"],
    ids=[i for i, c in zip(IDS, CASES) if c[1] != "usage"],
)
def test_debug_shows_the_traceback(env, tmp_path, monkeypatch, capsys, pattern, kind, build):
    argv = build(env, tmp_path, monkeypatch)
    with pytest.raises(BaseException) as raised:
        main([str(a) for a in argv] + ["--debug"])
    assert not isinstance(raised.value, SystemExit)


def test_the_page_lists_exactly_the_tested_messages():
    documented = documented_messages()
    tested = [pattern for pattern, _, _ in CASES]
    assert len(documented) == len(set(documented)), "a message is listed twice on the page"
    assert set(documented) - set(tested) == set(), "listed on the page but produced by no test"
    assert set(tested) - set(documented) == set(), "produced by a test but not on the page"


def test_every_parse_reason_has_a_case():
    assert set(BAD_LINES) == set(_REASONS)
    for template in _REASONS.values():
        fixed = template.split("{token!r}")
        assert any(all(part in pattern for part in fixed) for pattern, _, _ in CASES), template


def test_an_unwritable_model_folder_is_refused_before_training(env, tmp_path, capsys):
    """Hours of training must not end in 'cannot write the model': the CLI checks first."""
    code, _, err = run(capsys, ["train", env.store, tmp_path / "no" / "m.h5", "--history", tmp_path / "h.jsonl"])
    assert code == 2 and "cannot write the model" in err
    assert not (tmp_path / "h.jsonl").exists()  # training never started (a run creates its history file first)


def test_failed_writes_leave_no_partial_file(env, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys.modules["blocksvm.liblinear_format"], "open", full_disk_open, raising=False)
    monkeypatch.setattr(sys.modules["blocksvm.predict"], "open", full_disk_open, raising=False)
    assert run(capsys, ["export", env.model, tmp_path / "m.txt"])[0] == 2
    assert run(capsys, ["predict", env.model, env.test_store, "-o", tmp_path / "p.txt"])[0] == 2
    monkeypatch.setattr(sys.modules["blocksvm.model"], "write_hdf5", fail_with(ENOSPC))
    assert run(capsys, ["train", env.store, tmp_path / "m.h5", "--max-outer", "1", "-q"])[0] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.h5.history.jsonl"]


def test_verify_failure_exits_1_with_the_problems_on_stdout(env, tmp_path, capsys):
    store = damage_block(env.copy(env.root, env.store, "damaged.bsvm"))
    code, out, err = run(capsys, ["info", store, "--verify"])
    assert code == 1 and err == ""
    assert "verify       FAILED" in out and "block 1 (block-00001.h5): file checksum differs" in out


def test_ctrl_c_saves_the_checkpoint_and_exits_130(env, tmp_path, training_with_a_checkpoint):
    store = tmp_path / "big.bsvm"
    assert (
        main(
            [
                "generate",
                str(store),
                "--rows",
                "40000",
                "--features",
                "2000",
                "--nnz",
                "20",
                "--store",
                "--block-size",
                "2000",
                "-q",
            ]
        )
        == 0
    )
    ck = tmp_path / "ck.h5"
    process = training_with_a_checkpoint(store, tmp_path / "m.h5", ck)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "stopped by SIGINT" in err and f"continue with --resume {ck}" in err
    assert "Traceback" not in err and (tmp_path / "m.partial.h5").exists() and not (tmp_path / "m.h5").exists()


def test_a_full_disk_is_an_error_not_a_crash(env, tmp_path):
    """A real 1 MB file system: h5py crashes when it fills one (h5py/h5py#914); blocksvm must not."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "tmpfs", str(disk)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("needs root and tmpfs to make a small file system")
    command = [sys.executable, "-m", "blocksvm.cli"]
    try:
        big = tmp_path / "big.txt"
        write_libsvm(big, SyntheticSpec(rows=6000, features=2000, nnz=40, seed=1), progress=False)
        done = subprocess.run(
            [*command, "convert", str(big), str(disk / "big.bsvm"), "--block-size", "2000"],
            capture_output=True,
            text=True,
        )
        assert (done.returncode, done.stderr) == (
            2,
            f"blocksvm: error: no space left on the device while writing {disk}/big.bsvm; nothing was written\n",
        )
        assert list(disk.iterdir()) == []
        with open(disk / "fill", "wb") as f, pytest.raises(OSError):
            f.write(bytes(2 << 20))
        done = subprocess.run(
            [
                *command,
                "train",
                str(env.store),
                str(disk / "m.h5"),
                "--history",
                str(tmp_path / "h.jsonl"),
                "--max-outer",
                "1",
                "-q",
            ],
            capture_output=True,
            text=True,
        )
        assert (done.returncode, done.stderr) == (
            2,
            f"blocksvm: error: cannot write the model {disk}/m.h5: No space left on device\n",
        )
        assert [p.name for p in disk.iterdir()] == ["fill"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)
