"""Checkpoints: the full training state on disk, written atomically, checked on read.

A checkpoint is one HDF5 file (``CHECKPOINT_FORMAT`` version 1) holding the solver's arrays
(``w``, every ``alpha``, ...) as datasets and, as a JSON dataset, the rest: the position in the
outer loop (iteration and blocks done), the sums of the pass in progress, the history so far,
the hyper-parameters and the identity of the store. A SHA-256 digest over all of it is stored
beside and checked on load, so a corrupted or truncated file is detected.

Writing: a temporary file is written and fsync'ed, the current checkpoint becomes ``PATH.prev``,
and the temporary file is renamed to ``PATH``; at no moment is a half-written file under either
name. Reading falls back to ``PATH.prev`` when ``PATH`` is missing or damaged. A lock file
(``PATH.lock``, ``flock``) keeps two runs from writing the same checkpoint; the operating system
releases it when its process dies, even by SIGKILL. :func:`writing` locks a run's other outputs (its model
and history) alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import h5py
import numpy as np

from blocksvm._hdf5 import fsync_dir, open_versioned, write_hdf5
from blocksvm._locks import FileLock
from blocksvm.errors import CheckpointError, InUseError
from blocksvm.schema import Array, Arrays, Field, Schema

CHECKPOINT_FORMAT = "blocksvm-checkpoint"
CHECKPOINT_VERSION = 1

# Test-only: BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE="N:STAGE:MARKER" stops the N-th checkpoint write of
# this process at STAGE, creates the file MARKER and sleeps, so that tests/test_checkpoint.py SIGKILLs the
# process at exactly that point whatever the machine's speed or load. STAGE is "before" (nothing of this
# checkpoint on disk yet), "during" (PATH.tmp holds half its bytes, as a kill in the middle of writing it
# leaves it) or "between" (PATH already renamed to PATH.prev, PATH.tmp not yet renamed to PATH). A process
# left paused exits after 10 minutes as if killed. The pause happens once: not if MARKER exists already.
# Unset, the hook costs one environment lookup per write.
_TEST_PAUSE = "BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE"
_TEST_PAUSE_STAGES = ("before", "during", "between")
_writes_in_this_process = 0


@dataclass
class Checkpoint:
    """Everything needed to continue a run exactly where it stopped.

    Attributes
    ----------
    params : dict
        :class:`~blocksvm.train.TrainParams` as a dict.
    store : dict
        ``fingerprint``, ``rows``, ``nnz``, ``blocks`` and ``path`` of the training store.
    state : dict
        :class:`~blocksvm.train.loop.TrainState` as a dict.
    arrays : dict of str to ndarray
        The solver's state arrays.
    """

    params: dict
    store: dict
    state: dict
    arrays: dict = field(default_factory=dict)

    def digest(self) -> str:
        h = hashlib.sha256(self._meta_bytes())
        for name in sorted(self.arrays):
            array = np.ascontiguousarray(self.arrays[name])
            h.update(name.encode())
            h.update(str(array.dtype).encode() + str(array.shape).encode())
            if array.size:  # (an empty array has no bytes, and memoryview cannot cast one)
                h.update(memoryview(array).cast("B"))
        return h.hexdigest()

    def _meta_bytes(self) -> bytes:
        return json.dumps({"params": self.params, "store": self.store, "state": self.state}, sort_keys=True).encode()


def previous_path(path: Path) -> Path:
    return path.with_name(path.name + ".prev")


def write_checkpoint(path: str | os.PathLike, checkpoint: Checkpoint) -> float:
    """Write ``checkpoint`` atomically, keeping the one before as ``PATH.prev``; return seconds."""
    start = time.perf_counter()
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")

    def fill(f: h5py.File) -> None:
        f.attrs["format"] = CHECKPOINT_FORMAT
        f.attrs["version"] = CHECKPOINT_VERSION
        f.attrs["sha256"] = checkpoint.digest()
        f.create_dataset("meta", data=np.frombuffer(checkpoint._meta_bytes(), dtype=np.uint8))
        for name, array in checkpoint.arrays.items():
            f.create_dataset(f"arrays/{name}", data=array)

    pause = _test_pause_stage()
    _test_pause_if(pause, "before")
    try:
        data = write_hdf5(tmp, fill)  # a full disk is an OSError, and no partial file stays
    except OSError as exc:
        kept = " (the one written before is intact: free space, then --resume it)" if path.exists() else ""
        raise CheckpointError(f"cannot write the checkpoint {path}: {exc.strerror or exc}{kept}") from None
    if pause and pause[0] == "during":
        os.truncate(tmp, len(data) // 2)
    _test_pause_if(pause, "during")
    if path.exists():
        os.replace(path, previous_path(path))
    _test_pause_if(pause, "between")
    os.replace(tmp, path)
    fsync_dir(path.parent)
    return time.perf_counter() - start


def _test_pause_stage() -> tuple[str, Path] | None:
    """``(stage, marker)`` if the test-only pause (see ``_TEST_PAUSE``) is due in this write, else None."""
    spec = os.environ.get(_TEST_PAUSE)
    if spec is None:
        return None
    global _writes_in_this_process
    _writes_in_this_process += 1
    number, stage, marker = spec.split(":", 2)
    if stage not in _TEST_PAUSE_STAGES:
        raise ValueError(f"{_TEST_PAUSE}: stage {stage!r} is not one of {', '.join(_TEST_PAUSE_STAGES)}")
    due = int(number) == _writes_in_this_process and not Path(marker).exists()  # once: a resumed run goes on
    return (stage, Path(marker)) if due else None


def _test_pause_if(pause: tuple[str, Path] | None, stage: str) -> None:
    if pause is None or pause[0] != stage:
        return
    pause[1].touch()
    time.sleep(600)  # the test kills this process long before
    os._exit(137)  # ... or has gone: end as a SIGKILL would, without finishing the write


def read_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read and verify one checkpoint file; raise CheckpointError saying what is wrong.

    The file's layout (its attributes, ``meta`` and the arrays: numbers, of a size the file holds) is checked before
    anything is read, the digest then, and last every field of ``meta`` against :data:`CHECKPOINT_SCHEMA`.
    """
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: no such checkpoint")
    if not h5py.is_hdf5(path):
        raise CheckpointError(f"{path} is not a blocksvm checkpoint (not even an HDF5 file)")
    try:
        with open_versioned(path, CHECKPOINT_FORMAT, CHECKPOINT_VERSION, "checkpoint", CheckpointError) as f:
            group = f["arrays"] if "arrays" in f else {}  # (f.get would take a damaged object for a missing one)
            if not isinstance(group, (h5py.Group, dict)):
                raise CheckpointError(f"{path}: field 'arrays' is not a group of arrays")
            stored = {**({"meta": f["meta"]} if "meta" in f else {}), **{f"arrays/{n}": group[n] for n in group}}
            layout = Arrays((Array("meta", dtype=np.dtype(np.uint8)), *(Array(n, ndim=None) for n in stored)))
            layout.check(stored, str(path), CheckpointError)
            expected = _text(f.attrs["sha256"])
            meta_bytes = bytes(f["meta"][()])
            arrays = {name: group[name][()] for name in group}
    except CheckpointError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:  # h5py's errors of damaged metadata
        raise CheckpointError(f"{path} is corrupted or truncated: {_first_line(exc)}") from None
    try:
        meta = json.loads(meta_bytes)
    except ValueError as exc:  # (UnicodeDecodeError too)
        raise CheckpointError(f"{path} is corrupted or truncated: {_first_line(exc)}") from None
    PARTS.check(meta, str(path), CheckpointError)
    checkpoint = Checkpoint(meta["params"], meta["store"], meta["state"], arrays)
    if checkpoint.digest() != expected:
        raise CheckpointError(f"{path} is corrupted: its checksum does not match its content")
    CHECKPOINT_SCHEMA.check(meta, str(path), CheckpointError)
    return checkpoint


def _text(value) -> str:
    """A string attribute as h5py reads it (str, or bytes when stored at a fixed length)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise TypeError(f"an attribute is {type(value).__name__}, not a string")
    return value


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


# ---- what a checkpoint may say (blocksvm.schema) -------------------------------------------------------------------

PARTS = Schema((Field("params", "dict"), Field("store", "dict"), Field("state", "dict")))
_SUMS = Schema(
    (
        Field("loss", "list", items=Field("", "real")),
        Field("correct", "real"),
        Field("rows", "int", low=0),
        Field("blocks", "int", low=0),
        Field("passes", "real", low=0),
        Field("updates", "int", low=0),
        Field("compute_seconds", "real", low=0),
        Field("figures", "dict"),
        Field("weight", "real", optional=True, null=True),
        Field("sweep_seconds", "real", low=0, optional=True),
    )
)
_NEGATIVE_GAP = -1e-10  # blocksvm.train.records.NEGATIVE_GAP: a gap below is no pass's (a run refuses it)


def _no_exact_negative_gap(record: dict) -> tuple[str, str] | None:
    """An exact duality gap below a run's own refusal is no pass's (a pass's estimate may be, and is kept)."""
    gap = record.get("gap")
    if record["primal_exact"] and gap is not None and gap < _NEGATIVE_GAP:
        return "gap", f"is {gap:g}, an exact gap below {_NEGATIVE_GAP:g}, which no run records"
    return None


_RECORD = Schema(
    (
        Field("outer", "int", low=1),
        Field("primal", "real"),
        Field("primal_exact", "bool"),
        Field("gap", "real", optional=True, null=True),
        Field("pg_violation", "real", optional=True, null=True),
        Field("rows_shrunk", "int", low=0, optional=True),
        Field("stop", "str", optional=True, null=True),
    ),
    rules=(_no_exact_negative_gap,),
)
_POSITION = (
    Field("outer", "int", low=1),
    Field("position", "int", low=0),
    Field("sums", "dict", fields=_SUMS),
    Field("elapsed", "real", low=0),
)


def _learned_some_class(state: dict) -> tuple[str, str] | None:
    """A stream's learner that learned rows knows their classes."""
    classes = state.get("learner", {}).get("classes")
    if classes is not None and not classes and state["sums"]["rows"] > 0:
        return "learner.classes", f"is empty, but {state['sums']['rows']:,} rows were learned"
    return None


def _a_streams_learner(meta: dict) -> tuple[str, str] | None:
    """A stream's checkpoint (its input a file: ``stream:`` in the fingerprint) records its learner's classes, features
    and dtype."""
    if not meta["store"]["fingerprint"].startswith("stream:") or "search" in meta["state"]:
        return None
    learner = meta["state"].get("learner")
    for key in ("classes", "n_features", "dtype"):
        if not isinstance(learner, dict) or key not in learner:
            return f"state.learner{'.' + key if isinstance(learner, dict) else ''}", "is missing (a stream's learner)"
    return None


_TRAINING = Schema(
    _POSITION
    + (
        Field("history", "list", items=Field("", "dict", fields=_RECORD)),
        Field("blocks_visited", "int", low=0),
        Field("memory", "dict", optional=True, fields=Schema((Field("data_mb", "real", low=0, optional=True),))),
        Field(  # an exact evaluation made as the next pass goes by (blocksvm.train.certificate)
            "certificate",
            "dict",
            optional=True,
            fields=Schema((Field("outer", "int", low=1), Field("certified", "bool"))),
        ),
        Field("eval_seconds", "real", low=0),
        Field(
            "learner",
            "dict",
            optional=True,
            fields=Schema(
                (
                    Field("classes", "list", optional=True, items=Field("", "number")),
                    Field("n_features", "int", optional=True, low=0, high=1 << 31),
                    Field("dtype", "str", optional=True, choices=("float32", "float64")),
                )
            ),
        ),
    ),
    rules=(_learned_some_class,),
)
_POINT = Schema(
    (
        Field("C", "number", low=0),
        Field("score", "real"),
        Field("fold_scores", "list", items=Field("", "real")),
        Field("primal", "real"),
        Field("gap", "real"),
        Field("passes", "int", low=0),
        Field("seconds", "real", low=0),
    )
)


def _best_among_points(state: dict) -> tuple[str, str] | None:
    best, points, values = state["best"], state["points"], state["values"]
    if any(c <= 0 for c in values) or any(a >= b for a, b in zip(values, values[1:])):
        return "values", "are not positive and increasing"
    if len(points) > len(values):
        return "points", f"has {len(points)} points for {len(values)} values of C"
    if best is not None and not 0 <= best < len(points):
        return "best", f"is {best}, but {len(points)} values of C are done"
    if state["C"] is not None and state["C"] not in state["values"]:
        return "C", f"is {state['C']!r}, not one of the values to try"
    return None


def _time_at_C(state: dict) -> tuple[str, str] | None:
    """When the search moved to its C: ``C_started``, or (a checkpoint of a search before it was the trainer's
    client) the ``seconds`` spent at C."""
    return None if "C_started" in state or "seconds" in state else ("C_started", "is missing")


_SEARCH = Schema(
    _POSITION
    + (
        Field("values", "list", items=Field("", "number", low=0)),
        Field("points", "list", items=Field("", "dict", fields=_POINT)),
        Field("C", "number", null=True),
        Field("C_started", "real", optional=True),
        Field("best", "int", null=True),
        Field("since_best", "int", low=0),
        Field("search", "dict"),
        # the trainer's state, which a search's checkpoint holds since the search is the trainer's client (before, it
        # counted its own passes and seconds)
        *(replace(f, optional=True) for f in _TRAINING.fields if f.name not in {p.name for p in _POSITION}),
        Field("passes", "int", optional=True, low=0),
        Field("iterations", "int", optional=True, low=0),
        Field("seconds", "real", optional=True, low=0),
    ),
    rules=(_best_among_points, _time_at_C),
)


def _state_of_its_kind(meta: dict) -> tuple[str, str] | None:
    """A search's state (``blocksvm tune``: it has ``search``) or a training run's, each checked by its schema."""
    state = meta["state"]
    found = (_SEARCH if "search" in state else _TRAINING).problem(state, "state.")
    return found


CHECKPOINT_SCHEMA = Schema(
    (
        Field("params", "dict"),
        Field(
            "store",
            "dict",
            fields=Schema(
                (
                    Field("fingerprint", "str"),
                    Field("path", "str"),
                    Field("what", "str", optional=True),
                    Field("store_id", "str", optional=True, null=True),  # the generation it names
                    *(Field(k, "int", optional=True, low=0) for k in ("rows", "nnz", "blocks")),
                )
            ),
        ),
        Field("state", "dict"),
    ),
    rules=(_state_of_its_kind, _a_streams_learner),
)
"""What a checkpoint's ``meta`` may say: the parameters, the identity of its input (a store of a generation, a
stream's file) and the state of a training run (:class:`~blocksvm.train.snapshot.TrainState`) or of a search of C
(``SearchState``). Its arrays are checked against the run that resumes them
(:func:`blocksvm.train.snapshot.load_arrays`)."""


def read_latest(path: str | os.PathLike) -> tuple[Checkpoint, str | None]:
    """The checkpoint at ``path``, or the previous one if ``path`` is missing or damaged.

    Returns the checkpoint and a warning (None when ``path`` itself was good).
    """
    path = Path(path)
    try:
        return read_checkpoint(path), None
    except CheckpointError as exc:
        previous = previous_path(path)
        if not previous.exists():
            raise
        try:
            return read_checkpoint(previous), f"{exc}; resuming from the previous checkpoint {previous}"
        except CheckpointError as older:
            raise CheckpointError(f"{exc}; and the previous one: {older}") from None


class CheckpointLock(FileLock):
    """An exclusive ``flock`` on ``PATH.lock`` for the life of a run; the file is removed when the run ends.

    The file is unlinked while still locked, so a run that opened it just before sees, once it holds the lock,
    that the path names another file (or none) and opens the path again (:mod:`blocksvm._locks`).
    """

    def __init__(self, path: Path):
        super().__init__(path.with_name(path.name + ".lock"), holder=f"pid {os.getpid()}")

    def _open(self):
        return open(self.path, "a+")  # noqa: SIM115 - held until release()

    def acquire(self) -> None:
        self.acquire_or_raise(
            lambda owner: CheckpointError(
                f"checkpoint {self.path.with_suffix('')} is in use by another training run "
                f"({owner or 'another process'}); two runs must not write the same checkpoint"
            )
        )


@contextmanager
def writing(outputs: dict) -> Iterator[None]:
    """Hold an exclusive lock on ``PATH.lock`` of each output (``{"the model": path, "the history": path}``, None
    paths skipped) for the block: one run per output.

    A second run that would write one of them is refused in one line while this one runs; a finished output is
    still overwritten (its lock went with its run), as LIBLINEAR overwrites a model file. The locks are
    reentrant in one process, so a command and the function it calls may both lock the history they write.
    Where no lock can be taken (a file system without ``flock``) the run goes on without one, as it did before
    outputs were locked. A checkpoint has its own lock (:class:`CheckpointLock`).

    Raises
    ------
    InUseError
        Another process writes (or is reading, to warm-start from) one of the outputs.
    """
    held = []
    try:
        for what, path in outputs.items():
            if path is None:
                continue
            path = Path(path)
            lock = FileLock(
                path.with_name(path.name + ".lock"), holder=f"pid {os.getpid()}", optional=True, reentrant=True
            )
            held.append(
                lock.acquire_or_raise(
                    lambda owner, what=what, path=path: InUseError(
                        f"{what} {path} is in use by another run ({owner or 'a run reading it'}): two runs must not "
                        "write the same model, history or checkpoint; wait for it to end or write elsewhere"
                    )
                )
            )
        yield
    finally:
        for lock in reversed(held):
            lock.release()


class Checkpointer:
    """Decides when to write checkpoints of a run, and writes them.

    The trainer calls :meth:`after_block`, :meth:`after_pass` and :meth:`on_stop` with a
    ``snapshot`` callable returning the :class:`Checkpoint` of its current state; each returns the
    seconds the write took, or None when no checkpoint was due.

    Parameters
    ----------
    path : path
        Checkpoint file; ``PATH.prev`` and ``PATH.lock`` are kept beside it.
    every_blocks : int, default=0
        Also write after every this many blocks (0: only at the end of each outer iteration).
    every_seconds : float, optional
        Also write when this many seconds passed since the last checkpoint.

    A checkpoint is always written at the end of every outer iteration and when training stops.
    """

    def __init__(self, path: str | os.PathLike, *, every_blocks: int = 0, every_seconds: float | None = None):
        if every_blocks < 0:
            raise CheckpointError(f"checkpoint_every (--checkpoint-every) must be >= 0, not {every_blocks}")
        if every_seconds is not None and every_seconds <= 0:
            raise CheckpointError(f"checkpoint_seconds (--checkpoint-seconds) must be positive, not {every_seconds}")
        self.path = Path(path)
        self.every_blocks = every_blocks
        self.every_seconds = every_seconds
        self.lock = CheckpointLock(self.path)
        self.count = 0
        self.seconds = 0.0
        self._blocks_since = 0
        self._last = time.perf_counter()

    def __enter__(self) -> Checkpointer:
        self.lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.lock.release()

    def save(self, snapshot: Callable[[], Checkpoint]) -> float:
        seconds = write_checkpoint(self.path, snapshot())
        self.seconds += seconds
        self.count += 1
        self._blocks_since = 0
        self._last = time.perf_counter()
        return seconds

    def after_block(self, snapshot: Callable[[], Checkpoint], at_pass_end: bool) -> float | None:
        self._blocks_since += 1
        if at_pass_end:
            return None  # the end of the pass writes one anyway
        due_blocks = self.every_blocks and self._blocks_since >= self.every_blocks
        due_time = self.every_seconds is not None and time.perf_counter() - self._last >= self.every_seconds
        return self.save(snapshot) if due_blocks or due_time else None

    def after_pass(self, snapshot: Callable[[], Checkpoint]) -> float:
        self._blocks_since = 0
        return self.save(snapshot)

    def on_stop(self, snapshot: Callable[[], Checkpoint]) -> float | None:
        if self._blocks_since or not self.count:  # else the end of the pass just wrote this state
            return self.save(snapshot)
        return None
