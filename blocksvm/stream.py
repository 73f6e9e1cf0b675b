"""One pass of an online learner straight from LIBSVM text: no store, memory = the model + a few chunks.

The text (a file, ``.gz``/``.bz2``/``.xz``, or ``-`` for standard input) is parsed chunk by chunk
in reader and parser threads beside the learner (:func:`blocksvm.io.libsvm.iter_parsed`), and
each chunk is handed to the solver as a block, rows in file order. The learner is judged by
progressive validation: every row's loss and mistake are taken before the row is learned.

The model grows with the data: a feature index beyond the model's adds zero weights; a new class
label adds a one-vs-rest problem that starts from zero weights at the class's first row. With two classes the model is
binary (its problem: the larger label against the smaller). When the first labels seen are of one
class only, that class's problem is learned alone; if the second class turns out to be the larger
label, the binary problem starts anew from zero weights (its positive class changed).

A checkpoint holds the learner's arrays, the classes and features seen, the rows consumed and
the progressive sums; a resumed stream (file input) parses and skips those rows and continues,
ending at the model of an uninterrupted pass.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blocksvm.checkpoint import Checkpoint, CheckpointLock, read_latest, write_checkpoint
from blocksvm.errors import BlocksvmError, CheckpointError, ModelError, ParameterError
from blocksvm.io.libsvm import CHUNK_BYTES, iter_parsed
from blocksvm.model import LinearModel
from blocksvm.solvers import SOLVERS, Problem
from blocksvm.solvers.problem import class_weights
from blocksvm.store import Block
from blocksvm.train.params import SAFE_TO_CHANGE, TrainParams
from blocksvm.train.signals import deferred_signals


@dataclass
class StreamResult:
    """What :func:`stream` returns: the model and the summary (``examples``, ``progressive_accuracy``,
    ``progressive_loss``, ``mistakes``, ``nonzero_weights``, ``seconds``, ``bytes``, ``mb_per_s``)."""

    model: LinearModel
    summary: dict
    stopped_by: str | None = None  # the signal that stopped the stream early


class Progressive:
    """Sums of progressive validation, and the VW-style table printed at doubling example counts."""

    HEADER = f"{'average loss':>14} {'since last':>12} {'examples':>12} {'mistakes':>10}"

    def __init__(self, say, examples: int = 0, loss: float = 0.0, mistakes: int = 0):
        self.say = say
        self.examples, self.loss, self.mistakes = examples, loss, mistakes
        self.next_line = 1
        while self.next_line <= examples:
            self.next_line *= 2
        self._last = (examples, loss)

    def rows_until_line(self) -> int:
        return self.next_line - self.examples

    def add(self, rows: int, loss: float, correct: int) -> None:
        self.examples += int(rows)
        self.loss += float(loss)
        self.mistakes += int(rows - correct)
        if self.examples >= self.next_line:
            self.line()
            while self.next_line <= self.examples:
                self.next_line *= 2

    def line(self) -> None:
        if self._last[0] == 0:
            self.say(self.HEADER)
        since = self.examples - self._last[0]
        since_loss = (self.loss - self._last[1]) / since if since else 0.0
        average = self.loss / max(self.examples, 1)
        self.say(f"{average:14.6f} {since_loss:12.6f} {self.examples:12d} {self.mistakes:10d}")
        self._last = (self.examples, self.loss)

    def state(self) -> dict:
        return {"examples": self.examples, "loss": self.loss, "mistakes": self.mistakes}


class GrowingLearner:
    """An online solver whose classes and features grow with the stream (see the module docstring)."""

    def __init__(self, params: TrainParams, classes=(), n_features: int = 0, dtype=np.float32):
        self.params = params
        self.solver_class = SOLVERS[params.solver]
        if not self.solver_class.online:
            online = ", ".join(name for name, s in SOLVERS.items() if s.online)
            raise ParameterError(
                f"stream needs an online learner ({online}); --solver {params.solver} makes "
                "passes over a store: convert the file and use 'blocksvm train'"
            )
        if params.class_weight == "balanced":
            raise ParameterError(
                "class_weight='balanced' needs the class counts of the whole data: a stream "
                "has them only at its end; give the weights (-w LABEL=WEIGHT)"
            )
        self.dtype = np.dtype(dtype)
        self.classes = np.array(sorted(classes), dtype=np.float64)
        self.n_features = n_features
        self.solver = self._new_solver() if len(self.classes) else None

    @property
    def problem_classes(self) -> list[float]:
        """The class each problem learns to recognize (one for two classes: the larger label)."""
        return self.classes[1:].tolist() if len(self.classes) == 2 else self.classes.tolist()

    def _new_solver(self):
        C = float(self.params.C)
        weights = class_weights(self.params.class_weight, self.classes, np.ones(len(self.classes)))
        if len(self.classes) == 2:
            costs = np.array([[C * weights[0], C * weights[1]]])
        else:  # one problem per class; a single class is its own problem ("c vs the rest to come")
            costs = np.array([[C, C * w] for w in weights])
        problem = Problem(
            1,
            self.n_features,
            1,
            self.classes,
            costs,
            self.solver_class.loss_of(self.params),
            float(self.params.bias),
            C,
            np.array([0, 1]),
            self.dtype,
        )
        return self.solver_class(problem, self.params)

    def make_room(self, labels: np.ndarray, max_column: int) -> None:
        """Grow for new class labels and for features up to column ``max_column`` (zero-based)."""
        new_classes = np.setdiff1d(np.unique(labels), self.classes)
        if not len(new_classes) and max_column < self.n_features and self.solver is not None:
            return
        old = (self.solver, self.problem_classes, self.n_features)
        self.classes = np.union1d(self.classes, new_classes)
        self.n_features = max(self.n_features, max_column + 1)
        self.solver = self._new_solver()
        if old[0] is not None:
            _carry(old[0], old[1], old[2] + 1, self.solver, self.problem_classes, self.n_features + 1)

    def start_from(self, model: LinearModel, source: str = "the model") -> None:
        """Continue ``model``: its classes, features and weights."""
        if model.bias != self.params.bias and not (model.bias <= 0 and self.params.bias <= 0):
            raise ModelError(f"{source} was trained with bias {model.bias:g}: pass --bias {model.bias:g}")
        self.classes, self.n_features = np.asarray(model.classes, dtype=np.float64), model.n_features
        self.solver = self._new_solver()
        self.solver.start_from(model_weights(model))

    def weights(self) -> np.ndarray:
        return self.solver.weights()


def model_weights(model: LinearModel) -> np.ndarray:
    """A model's weights as solvers hold them: (n_problems, n_features + 1), the bias feature's weight last."""
    bias_weight = model.intercept / model.bias if model.bias > 0 else np.zeros(len(model.intercept))
    return np.concatenate([model.coef, bias_weight[:, None]], axis=1)


def _carry(old, old_classes: list, old_n_w: int, new, new_classes: list, new_n_w: int) -> None:
    """Copy each kept problem's state from ``old`` into the fresh solver ``new``.

    State arrays are per problem along their first axis; an axis of ``n_features + 1`` entries has
    the bias feature last, and new features go before it.
    """
    kept = [(new_classes.index(c), k) for k, c in enumerate(old_classes) if c in new_classes]
    old_state, new_state = old.state(), new.state()
    for name, target in new_state.items():
        source = old_state[name]
        for new_k, old_k in kept:
            if source.ndim >= 2 and source.shape[-1] == old_n_w and target.shape[-1] == new_n_w:
                target[new_k, ..., : old_n_w - 1] = source[old_k, ..., :-1]
                target[new_k, ..., -1] = source[old_k, ..., -1]
            else:
                target[new_k] = source[old_k]
    new.load_state(new_state)


def _input_identity(path: str) -> dict:
    if path == "-":
        return {"path": "-"}
    st = os.stat(path)
    return {"path": str(Path(path).resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def stream(
    input: str | os.PathLike,
    params: TrainParams | None = None,
    *,
    zero_based: bool = False,
    warm_start: str | os.PathLike | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 16,
    resume: str | os.PathLike | None = None,
    verbose: int = 1,
    say=None,
    chunk_bytes: int = CHUNK_BYTES,
    dtype="float32",
    **overrides,
) -> StreamResult:
    """One pass of an online learner over LIBSVM text, in file order; see the module docstring.

    Parameters
    ----------
    input : path or "-"
        LIBSVM text (plain, .gz, .bz2, .xz) or ``"-"`` for standard input.
    params : TrainParams, optional
        ``solver`` must be an online learner; keyword ``overrides`` replace fields.
    zero_based : bool, default=False
        Feature indices start at 0 (default: at 1, as LIBSVM writes them).
    warm_start : path, optional
        A model to continue (its classes, features and weights).
    checkpoint : path, optional
        Written every ``checkpoint_every`` chunks and when the stream ends or is stopped.
    resume : path, optional
        Continue the stream of this checkpoint (a file input, unchanged).
    verbose : int, default=1
        0 silent, 1 the progressive table.
    say : callable, optional
        Where lines go (default: standard output).
    chunk_bytes : int
        Text parsed at a time (memory: a few chunks).
    dtype : "float32" or "float64"
        Type the values are parsed to (float32, as a store keeps them, by default).

    Returns
    -------
    StreamResult
    """
    params = params or TrainParams()
    unknown = set(overrides) - set(params.to_dict())
    if unknown:
        raise ParameterError(f"unknown training parameter(s): {', '.join(sorted(unknown))}")
    params = TrainParams.from_dict({**params.to_dict(), **overrides}).validate()
    path = os.fspath(input)
    say = say or (lambda text: print(text, flush=True))  # the table is the command's output: standard output
    out = say if verbose else (lambda text: None)
    learner = GrowingLearner(params, dtype=dtype)
    progress = Progressive(out)
    identity = _input_identity(path)
    skip = 0
    if resume:
        learner, progress, skip = _resume(resume, params, identity, out)
    elif warm_start:
        learner.start_from(LinearModel.load(warm_start), str(warm_start))
    base = 0 if zero_based else 1
    checkpoint = checkpoint or resume
    lock = CheckpointLock(Path(checkpoint)) if checkpoint else None
    if lock:
        lock.acquire()
    start, chunks, text_bytes, stopped_by = time.perf_counter(), 0, 0, None
    try:
        with deferred_signals() as stop:
            for chunk in iter_parsed(path, dtype=learner.dtype, chunk_bytes=chunk_bytes):  # index 0: _learn's check
                text_bytes += chunk.text_bytes
                rows = chunk
                if skip:
                    dropped = min(skip, chunk.n_rows)
                    skip -= dropped
                    if dropped == chunk.n_rows:
                        continue
                    rows = chunk.take(np.arange(dropped, chunk.n_rows))
                _learn(learner, rows, base, progress, chunks)
                chunks += 1
                if checkpoint and chunks % checkpoint_every == 0:
                    _save(checkpoint, params, identity, learner, progress)
                if stop:
                    stopped_by = stop.signal_name
                    out(f"stopped by {stopped_by} after {progress.examples} examples")
                    break
        if checkpoint:
            _save(checkpoint, params, identity, learner, progress)
    finally:
        if lock:
            lock.release()
    if progress.examples and progress.examples != progress._last[0]:
        progress.line()
    seconds = time.perf_counter() - start
    model = _model(learner, params, base, progress, seconds, text_bytes)
    return StreamResult(model, model.summary, stopped_by)


def _learn(learner: GrowingLearner, rows, base: int, progress: Progressive, chunk_index: int) -> None:
    """Hand a chunk's rows to the learner: a new class joins at its first row; the visits are cut where
    the progressive table needs a line."""
    if len(rows.indices) and rows.indices.min() < base:
        raise BlocksvmError(
            "feature index 0 in a stream read as one-based (LIBSVM's numbering): pass "
            "--zero-based if the file numbers features from 0"
        )
    indices = (rows.indices - base).astype(np.int32)
    learner.make_room(rows.labels[:0], int(indices.max()) if len(indices) else -1)  # new features: zeros
    start = 0
    while start < rows.n_rows:
        unseen = np.flatnonzero(~np.isin(rows.labels[start:], learner.classes))
        if len(unseen) and unseen[0] == 0:
            learner.make_room(rows.labels[start : start + 1], learner.n_features - 1)
            continue
        end = start + unseen[0] if len(unseen) else rows.n_rows
        while start < end:
            # rows up to the table's next doubling count; past 2^16 examples, the rest at once
            stop = end if progress.next_line > 1 << 16 else min(end, start + progress.rows_until_line())
            lo, hi = rows.indptr[start], rows.indptr[stop]
            block = Block(
                rows.indptr[start : stop + 1] - lo,
                indices[lo:hi],
                rows.data[lo:hi],
                rows.labels[start:stop],
                None,
                index=chunk_index,
                row_offset=0,
            )
            report = learner.solver.visit(block, np.full(learner.solver.problem.n_problems, -1, np.int64))
            progress.add(stop - start, float(np.sum(report.loss)), report.correct)
            start = stop


def _model(
    learner: GrowingLearner, params, base: int, progress: Progressive, seconds: float, text_bytes: int
) -> LinearModel:
    if learner.solver is None or len(learner.classes) < 2:
        seen = learner.classes.tolist()
        raise BlocksvmError(
            f"the stream held {progress.examples} examples of {len(seen)} class(es) {seen}: a "
            "classifier needs two or more"
        )
    W = learner.weights()
    summary = {
        "examples": progress.examples,
        "progressive_accuracy": 1 - progress.mistakes / max(progress.examples, 1),
        "progressive_loss": progress.loss / max(progress.examples, 1),
        "mistakes": progress.mistakes,
        "nonzero_weights": int(np.count_nonzero(W)),
        "features": learner.n_features,
        "classes": learner.classes.tolist(),
        "seconds": round(seconds, 3),
        "bytes": text_bytes,
        "mb_per_s": round(text_bytes / 1e6 / max(seconds, 1e-9), 1),
    }
    return LinearModel.from_weights(
        W, learner.classes, learner.params.bias, index_base=base, params=params.to_dict(), summary=summary
    )


def _save(path, params, identity: dict, learner: GrowingLearner, progress: Progressive) -> None:
    state = {
        **progress.state(),
        "classes": learner.classes.tolist(),
        "n_features": learner.n_features,
        "dtype": learner.dtype.name,
    }
    arrays = learner.solver.state() if learner.solver is not None else {}
    write_checkpoint(path, Checkpoint(params.to_dict(), {"fingerprint": "stream", **identity}, state, arrays))


def _resume(path, params, identity: dict, out) -> tuple[GrowingLearner, Progressive, int]:
    if identity["path"] == "-":
        raise CheckpointError("standard input cannot be resumed: its rows are gone; stream from a file")
    saved, warning = read_latest(path)
    if warning:
        out(f"warning: {warning}")
    if saved.store != {"fingerprint": "stream", **identity}:
        raise CheckpointError(
            f"checkpoint {path} was made for the stream {saved.store.get('path')} "
            f"({saved.store.get('size')} bytes); {identity['path']} is not that file, or it "
            "changed since"
        )
    ours = params.to_dict()
    changed = [k for k in ours if k not in SAFE_TO_CHANGE and ours[k] != saved.params.get(k)]
    if changed:
        raise CheckpointError(f"checkpoint {path} was made with other parameters ({', '.join(changed)})")
    s = saved.state
    learner = GrowingLearner(params, s["classes"], s["n_features"], s["dtype"])
    if learner.solver is not None:
        learner.solver.load_state(saved.arrays)
    out(f"resuming the stream after {s['examples']} examples")
    return learner, Progressive(out, s["examples"], s["loss"], s["mistakes"]), s["examples"]
