"""One pass of an online learner straight from text: no store, memory = the model + a few chunks.

The text, LIBSVM's or Vowpal Wabbit's (a file, ``.gz``/``.bz2``/``.xz``, or ``-`` for standard input), is parsed
chunk by chunk beside the learner (:func:`blocksvm.io.vw.iter_text`: a thread reads ahead, parser threads parse), and
the chunks' rows, in file order, go through the one pass loop (:class:`blocksvm.train.pass_loop.PassRun`) to a
:class:`~blocksvm.solvers.growing.GrowingLearner`, whose model grows with the classes and features it meets
(:meth:`~blocksvm.solvers.growing.GrowingLearner.pieces`; nothing learned is thrown away when the second class
comes: that module's docstring). The learner is judged by progressive validation: every row's loss and mistake are
taken before the row is learned.

Signals, checkpoints and their snapshot are a run's (:class:`blocksvm.train.loop.Run`, as the trainer's): the
learner's arrays, the classes and features seen, the rows learned and the progressive sums; a resumed stream (file
input) parses and skips those rows and continues, ending at the model of an uninterrupted pass.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from functools import partial

import numpy as np

from blocksvm.errors import BlocksvmError, CheckpointError, InputFormatError
from blocksvm.io.text import BINARY, CHUNK_BYTES, Skipped
from blocksvm.io.vw import iter_text, text_format_of
from blocksvm.losses import LOGISTIC
from blocksvm.model import LinearModel, load_warm_start
from blocksvm.solvers import SOLVERS
from blocksvm.solvers.growing import GrowingLearner
from blocksvm.train.loop import Run, checkpointer_of, read_resumed
from blocksvm.train.params import settle
from blocksvm.train.pass_loop import PassRun
from blocksvm.train.records import PassSums
from blocksvm.train.schedule import FILE_ORDER
from blocksvm.train.snapshot import TrainState, check_warm_start, load_arrays, restore, stream_identity


@dataclass
class StreamResult:
    """What :func:`stream` returns: the model and the summary (``examples``, ``progressive_accuracy``,
    ``progressive_loss``, ``mistakes``, ``nonzero_weights``, ``seconds``, ``bytes``, ``mb_per_s``)."""

    model: LinearModel | None  # None if a signal stopped it before a second class
    summary: dict
    stopped_by: str | None = None  # the signal that stopped the stream early


class Progressive:
    """The VW-style table of progressive validation, a line at doubling example counts, read from the sums
    of the pass (examples, loss, rows predicted right). With importance weights the losses are means weighted by
    them and the mistakes their weight (Vowpal Wabbit's average loss over its weighted example sum)."""

    HEADER = f"{'average loss':>14} {'since last':>12} {'examples':>12} {'mistakes':>10}"

    def __init__(self, say, sums: PassSums):
        self.say, self.sums = say, sums
        self.next_line = 1
        while self.next_line <= sums.rows:
            self.next_line *= 2
        self._last = (sums.rows, self.loss, sums.seen)

    @property
    def loss(self) -> float:
        return float(np.sum(self.sums.loss))

    def rows_until_line(self) -> int:
        return self.next_line - self.sums.rows

    def update(self) -> None:
        """A line if the examples reached the next doubling."""
        if self.sums.rows >= self.next_line:
            self.line()
            while self.next_line <= self.sums.rows:
                self.next_line *= 2

    def line(self) -> None:
        examples, seen = self.sums.rows, self.sums.seen
        if self._last[0] == 0:
            self.say(self.HEADER)
        since = seen - self._last[2]
        since_loss = (self.loss - self._last[1]) / since if since else 0.0
        average = self.loss / seen if seen > 0 else 0.0
        mistakes = seen - self.sums.correct
        shown = f"{mistakes:10d}" if self.sums.weight is None else f"{mistakes:10.6g}"
        self.say(f"{average:14.6f} {since_loss:12.6f} {examples:12d} {shown}")
        self._last = (examples, self.loss, seen)

    def finish(self) -> None:
        """The last line, unless it was just printed."""
        if self.sums.rows and self.sums.rows != self._last[0]:
            self.line()


def stream(
    input: str | os.PathLike,
    params=None,
    *,
    verbose: int = 1,
    say=None,
    chunk_bytes: int = CHUNK_BYTES,
    dtype="float32",
    **options,
) -> StreamResult:
    """One pass of an online learner over LIBSVM text, in file order; see the module docstring.

    Parameters
    ----------
    input : path or "-"
        LIBSVM text (plain, .gz, .bz2, .xz) or ``"-"`` for standard input.
    params : TrainParams, optional
        ``solver`` must be an online learner (default ``perceptron``).
    verbose : int, default=1
        0 silent, 1 the progressive table.
    say : callable, optional
        Where lines go (default: standard output).
    chunk_bytes : int
        Text parsed at a time (memory: a few chunks).
    dtype : "float32" or "float64"
        Type the values are parsed to (float32, as a store keeps them, by default).
    **options
        The training parameters that ``stream`` reads and its run options (``checkpoint``,
        ``checkpoint_every`` chunks, ``resume``, ``warm_start``, ``zero_based``, ``text_format``, ``hash_bits``,
        ``hash_all``: VW text, its names hashed as ``convert --format vw`` hashes them): docs/PARAMETERS.md. Others
        are refused.

    Returns
    -------
    StreamResult
    """
    params, run = settle("stream", params, options)
    text = text_format_of(run.text_format, run.hash_bits, run.hash_all)  # None: LIBSVM's indices
    base = 0 if run.zero_based or text is not None else 1
    path = os.fspath(input)
    say = say or (lambda text: print(text, flush=True))  # the table is the command's output: standard output
    out = say if verbose else (lambda text: None)
    identity = stream_identity(path)
    if run.resume and path == "-":  # (said before the checkpoint is looked for: no checkpoint would help)
        raise CheckpointError("standard input cannot be resumed: its rows are gone; stream from a file")
    learner = GrowingLearner(params, params.classes or (), dtype=dtype)
    state = TrainState(sums=PassSums.zeros(1))
    checkpointer = checkpointer_of(run)  # (train's: a new run over an existing checkpoint is refused, and a resume
    # from a missing one)
    if run.resume:
        state, learner = _resume(run.resume, params, identity, dtype, out)
    elif run.warm_start:
        _warm_start(learner, load_warm_start(run.warm_start), str(run.warm_start), text)
    progress = Progressive(out, state.sums)
    text_bytes, stopped_by = [0], None
    skipped = Skipped()

    def arrays() -> dict:  # the learner's, and (in the state) the classes and features it has met
        state.learner = {"classes": learner.classes.tolist(), "n_features": learner.n_features}
        state.learner["dtype"] = learner.dtype.name
        saved = learner.solver.state() if learner.solver is not None else {}
        if learner.slots is not None:  # a sparse space's features (blocksvm.solvers.growing)
            saved = {**saved, "feature_slots": learner.slots}
        return saved

    the_run = Run(params, identity, arrays, state, checkpointer=checkpointer)
    hinted = _hint_skipping(run.skip_bad_lines)
    with hinted, checkpointer or contextlib.nullcontext(), the_run.session() as stop:
        chunks = iter_text(path, text, dtype=learner.dtype, chunk_bytes=chunk_bytes, skip_bad_lines=run.skip_bad_lines)
        chunk_done = partial(the_run.checkpoint, "after_block", at_pass_end=False)
        pieces = _pieces(_counting(chunks, skipped), base, state.position, progress, text_bytes, chunk_done)
        if params.classes:
            pieces = _declared_only(pieces, np.asarray(params.classes, dtype=np.float64), path)
        the_pass = PassRun(state, params, stop, by_rows=True, on_block=lambda rows: progress.update())
        if not the_pass.run(learner.pieces(pieces), learner, FILE_ORDER):
            stopped_by = stop.signal_name
            out(f"stopped by {stopped_by} after {state.sums.rows} examples")
        pieces.close()
    progress.finish()
    if stopped_by and (learner.solver is None or len(learner.classes) < 2):  # nothing to save yet; the checkpoint is
        return StreamResult(None, {"examples": state.sums.rows}, stopped_by)
    model = _model(learner, params, base, state.sums, the_run.elapsed(), text_bytes[0], text)
    model.summary |= skipped.summary()
    return StreamResult(model, model.summary, stopped_by)


def _counting(chunks, skipped: Skipped):
    """``chunks``, their skipped lines counted in ``skipped``."""
    for chunk in chunks:
        skipped.add(chunk)
        yield chunk


@contextlib.contextmanager
def _hint_skipping(skipping: bool):
    """A malformed line of the stream's text (without ``skip_bad_lines``) says how to go past it."""
    try:
        yield
    except InputFormatError as exc:
        if skipping or not exc.line or exc.reason == BINARY:
            raise
        raise exc.hinted(
            "the stream stops there, no model written: --skip-bad-lines skips such lines and counts them"
        ) from None


def _pieces(chunks, base: int, skip: int, progress: Progressive, text_bytes: list, chunk_done):
    """The rows of the parsed ``chunks``, zero-based, after the first ``skip`` (learned before a resume), cut
    where the progressive table needs a line (at every power of two, as Vowpal Wabbit prints). ``chunk_done``
    is called when every row of a chunk has been learned."""
    for chunk in chunks:
        text_bytes[0] += chunk.text_bytes
        rows = chunk
        if skip:
            dropped = min(skip, chunk.n_rows)
            skip -= dropped
            if dropped == chunk.n_rows:
                continue
            rows = chunk.slice(dropped, chunk.n_rows)
        if rows.nnz and rows.indices.min() < base:
            raise BlocksvmError(
                "feature index 0 in a stream read as one-based (LIBSVM's numbering): pass --zero-based if the "
                "file numbers features from 0"
            )
        rows.indices = (rows.indices - base).astype(np.int32)
        if rows.weights is not None and np.all(rows.weights == 1.0):
            rows.weights = None  # importance weights of 1 are none: the rows of unweighted text (docs/FORMAT.md)
        start = 0
        while start < rows.n_rows:  # (a few dozen cuts in all: the lines double)
            stop = min(rows.n_rows, start + progress.rows_until_line())
            yield 0, rows.slice(start, stop)
            start = stop
        chunk_done()


def _declared_only(pieces, classes: np.ndarray, path: str):
    """``pieces``, refusing a row whose label is not among ``classes`` (``--classes``), naming its line."""
    for key, rows in pieces:
        stray = np.flatnonzero(~np.isin(rows.labels, classes))
        if len(stray):
            i = stray[0]
            label = float(rows.labels[i])
            raise BlocksvmError(
                f"{path}:{rows.lines[i]}: label {label:g} is not among the classes declared by --classes "
                f"({', '.join(f'{c:g}' for c in classes)}): declare every label of the stream, or none"
            )
        yield key, rows


def _warm_start(learner: GrowingLearner, model: LinearModel, source: str, text: dict | None) -> None:
    """Continue ``model``: its classes, features and weights (a model of the same problem, bias and text format)."""
    params = learner.params
    SOLVERS[params.solver].check_warm_starts()
    check_warm_start(model, source, SOLVERS[params.solver].loss_of(params), params.bias, text)
    learner.start_from(model.weights(), model.classes, model.n_features, model.feature_map)


def _model(
    learner: GrowingLearner, params, base: int, sums: PassSums, seconds: float, text_bytes: int, text: dict | None
) -> LinearModel:
    if learner.solver is None or len(learner.classes) < 2:
        seen = learner.classes.tolist()
        raise BlocksvmError(
            f"the stream held {sums.rows} examples of {len(seen)} class(es) {seen}: a classifier needs two or more"
        )
    W, feature_map, space_features = learner.model_weights()
    seen = sums.seen if sums.seen > 0 else 1
    summary = {
        "examples": sums.rows,
        **({} if sums.weight is None else {"weight": sums.weight}),  # (VW's weighted example sum)
        "progressive_accuracy": sums.correct / seen,
        "progressive_loss": float(np.sum(sums.loss)) / seen,
        "mistakes": sums.seen - sums.correct,
        "nonzero_weights": int(np.count_nonzero(W)),
        "features": learner.n_features,
        "classes": learner.classes.tolist(),
        "seconds": round(seconds, 3),
        "bytes": text_bytes,
        "mb_per_s": round(text_bytes / 1e6 / max(seconds, 1e-9), 1),
    }
    if learner.problem.loss.kind == LOGISTIC:  # the mean loss is the log loss itself (Vowpal Wabbit's average loss)
        summary["progressive_log_loss"] = summary["progressive_loss"]
    return LinearModel.from_weights(
        W,
        learner.classes,
        learner.params.bias,
        index_base=base,
        params=params.to_dict(),
        summary=summary,
        loss=learner.problem.loss.name,
        feature_map=feature_map,
        space_features=space_features,
        text_format=text,
    )


def _resume(path, params, identity: dict, dtype, out) -> tuple[TrainState, GrowingLearner]:
    saved = read_resumed(path, out)
    state = restore(saved, params, identity, f"checkpoint {path}")
    learned = state.learner
    widest = max((a.shape[-1] for n, a in saved.arrays.items() if a.ndim == 2 and n != "feature_slots"), default=1)
    if learned.get("classes") and learned.get("n_features", 0) >= widest:  # before the learner's arrays are made
        raise CheckpointError(
            f"checkpoint {path}: field 'state.learner.n_features' is {learned['n_features']:,}, more than its arrays "
            f"hold ({widest - 1:,})"
        )
    learner = GrowingLearner(
        params,
        learned.get("classes", ()),
        learned.get("n_features", 0),
        learned.get("dtype", dtype),
        saved.arrays.get("feature_slots"),
    )
    if learner.solver is not None:
        load_arrays(learner.solver, saved, f"checkpoint {path}")
    out(f"resuming the stream after {state.sums.rows} examples")
    return state, learner
