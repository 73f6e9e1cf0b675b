"""Snapshot and restore: a run's whole state as a :class:`~blocksvm.checkpoint.Checkpoint`, and back.

One format serves the trainer and the stream. The state besides the learner's arrays is :class:`TrainState`;
a snapshot adds the parameters and the identity of the input (a store, or a stream's file), which a restore
checks before anything is loaded. A search of C (:mod:`.tune`), the trainer's client, adds its own state (its
grid, points and refit start, and its options under ``search``) to the trainer's.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from blocksvm.checkpoint import Checkpoint
from blocksvm.errors import CheckpointError, ModelError
from blocksvm.train.params import PARAMS, SAFE_TO_CHANGE
from blocksvm.train.records import PassSums

# Parameters declared after checkpoints were written whose value in every earlier run was their default: a checkpoint
# without one resumes as if it recorded the default (issue 32's penalty and l1_ratio: every run before was L2)
IMPLIED_BEFORE_DECLARED = ("penalty", "l1_ratio")


@dataclass
class TrainState:
    """Where a run stands, besides the learner's arrays: what a checkpoint must hold."""

    outer: int = 1
    position: int = 0  # blocks of iteration ``outer`` already solved (a stream: rows already learned)
    sums: PassSums | None = None
    history: list = field(default_factory=list)
    elapsed: float = 0.0  # seconds trained before the current process started
    blocks_visited: int = 0
    eval_seconds: float = 0.0  # of the elapsed seconds, those spent in evaluation passes
    passes: int = 0  # passes made since the start, or since the learner moved to another C (a search)
    learner: dict = field(default_factory=dict)  # a growing learner's classes, features and dtype (a stream)
    memory: dict = field(default_factory=dict)  # the run's memory plan: its data megabytes (blocksvm.train.plan)

    def to_dict(self) -> dict:
        return {**asdict(self), "sums": self.sums.to_dict()}


def store_identity(store) -> dict:
    """What a checkpoint of training on ``store`` was made for."""
    return {
        "fingerprint": store.fingerprint,
        "store_id": store.store_id,  # the store's generation: named when a store converted again is refused
        "rows": store.n_rows,
        "nnz": store.nnz,
        "blocks": store.n_blocks,
        "path": str(store.path),
        "what": f"the store {store.path} ({store.n_rows} rows, {store.nnz} nnz)",
    }


def stream_identity(path: str) -> dict:
    """What a checkpoint of a stream from ``path`` (a file, unchanged since; or ``-``) was made for: the file's identity
    as a text file's cached store is keyed (:mod:`blocksvm.io.text_cache`): its device and inode (a copy over it is
    another file), size, modification time and change time (which every write sets, and no copy tool sets back)."""
    if path == "-":
        return {"fingerprint": "stream:-", "path": "-", "what": "standard input"}
    st = os.stat(path)
    resolved = str(Path(path).resolve())
    identity = f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"
    return {
        "fingerprint": f"stream:{resolved}:{identity}",
        "path": resolved,
        "what": f"the stream {resolved} ({st.st_size} bytes, modified {_when(st.st_mtime_ns)}, changed "
        f"{_when(st.st_ctime_ns)}, inode {st.st_ino} of device {st.st_dev})",
    }


def _when(ns: int) -> str:
    """A file time to the nanosecond (a write within the second of another shows)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ns // 10**9)) + f".{ns % 10**9:09d}"


def snapshot(state: TrainState, elapsed: float, params, identity: dict, arrays: dict) -> Checkpoint:
    """The whole state of a run (``elapsed``: seconds trained so far; ``arrays``: the learner's)."""
    return Checkpoint(params.to_dict(), identity, {**state.to_dict(), "elapsed": elapsed}, arrays)


def restore(
    checkpoint: Checkpoint, params, identity: dict, source: str = "the checkpoint", search: bool = False
) -> TrainState:
    """The TrainState of ``checkpoint``; refuse one made for another input or other parameters (only those in
    SAFE_TO_CHANGE may differ), or by a search of C unless ``search`` (:func:`check_fits`). The caller loads the
    arrays into its learner."""
    check_fits(checkpoint, params, identity, source, search)
    s = checkpoint.state
    return TrainState(  # (a search's checkpoint written before its search was the trainer's client has no history)
        outer=s["outer"],
        position=s["position"],
        sums=PassSums(**s["sums"]),
        history=list(s.get("history", [])),
        elapsed=s["elapsed"],
        blocks_visited=s.get("blocks_visited", 0),
        eval_seconds=s.get("eval_seconds", 0.0),
        passes=s.get("passes", 0),
        learner=dict(s.get("learner", {})),
        memory=dict(s.get("memory", {})),
    )


def check_fits(checkpoint: Checkpoint, params, identity: dict, source: str, search: bool = False) -> None:
    """Refuse ``checkpoint`` if it was made for another input or with other parameters (only those in
    SAFE_TO_CHANGE may differ), or by a search of C (``blocksvm tune``) when ``search`` is False, by a training
    run when it is True."""
    if ("search" in checkpoint.state) != search:
        raise CheckpointError(
            f"{source} was written by a training run (train or stream), not by blocksvm tune"
            if search
            else f"{source} was written by blocksvm tune: continue the search with 'blocksvm tune --resume'"
        )
    theirs = checkpoint.store
    if theirs.get("fingerprint") != identity["fingerprint"] and _replaced(theirs, identity):
        raise CheckpointError(
            f"{source} was made for generation {theirs['store_id']} of the store {identity['path']}, which now holds "
            f"generation {identity['store_id']} (it was converted again): resume on the store it was made for (or "
            "a copy of it), or start a new run"
        )
    if theirs.get("fingerprint") != identity["fingerprint"]:
        raise CheckpointError(
            f"{source} was made for {theirs.get('what', theirs.get('path'))}, not for {identity['what']}"
        )
    position, blocks = checkpoint.state.get("position", 0), identity.get("blocks")
    if blocks is not None and position > blocks:  # (a stream's position counts rows: no bound)
        raise CheckpointError(
            f"{source}: field 'state.position' is {position:,}, more than the store's {blocks:,} blocks"
        )
    ours = params.to_dict()
    # a parameter newer than the checkpoint that every run before it had at its default (the penalty, issue 32: L2)
    # is compared at that default; another missing one (pegasos_schedule, whose default changed) is refused by name
    recorded = {k: _json_value(PARAMS[k].default) for k in IMPLIED_BEFORE_DECLARED} | checkpoint.params
    changed = differences(ours, recorded, [k for k in ours if k not in SAFE_TO_CHANGE and _read(k, params)])
    if changed:
        raise CheckpointError(
            f"{source} was made with other parameters ({changed}); only "
            f"{', '.join(sorted(SAFE_TO_CHANGE))} may change when resuming"
        )


def load_arrays(solver, checkpoint: Checkpoint, source: str, rows: int | None = None) -> None:
    """Load ``checkpoint``'s arrays into ``solver``, each of the solver's own (its ``state_names``) checked first:
    present, of numbers, of the solver's shape (``rows``: the store's, named when an array has one value a row).

    Raises
    ------
    CheckpointError
        One line naming the field: ``checkpoint run.ckpt: field 'alpha' has 1,200 values, the store has 1,605 rows``.
    """
    for name in getattr(solver, "state_names", ()):
        ours, theirs = getattr(solver, name), checkpoint.arrays.get(name)
        if theirs is None:
            raise CheckpointError(f"{source}: field '{name}' is missing (--solver {solver.name} keeps it)")
        if theirs.dtype.kind not in "biuf":
            raise CheckpointError(f"{source}: field '{name}' holds {theirs.dtype}, not numbers")
        if theirs.shape != ours.shape:
            raise CheckpointError(f"{source}: field '{name}' {_shape_problem(theirs.shape, ours.shape, rows)}")
    try:
        solver.load_state(checkpoint.arrays)
    except (KeyError, ValueError, IndexError, TypeError) as exc:
        raise CheckpointError(f"{source} does not fit this problem: {exc}") from None


def check_shape(checkpoint: Checkpoint, name: str, shape: tuple, source: str) -> None:
    """Refuse ``checkpoint`` unless its array ``name`` (when it has one) is of numbers in ``shape``."""
    theirs = checkpoint.arrays.get(name)
    if theirs is None:
        return
    if theirs.dtype.kind not in "biuf":
        raise CheckpointError(f"{source}: field '{name}' holds {theirs.dtype}, not numbers")
    if theirs.shape != tuple(shape):
        raise CheckpointError(f"{source}: field '{name}' {_shape_problem(theirs.shape, tuple(shape), None)}")


def _shape_problem(theirs: tuple, ours: tuple, rows: int | None) -> str:
    """How an array of shape ``theirs`` differs from the run's ``ours``: its length when only the last axis differs
    (named as the store's rows when it has one value a row), else its shape."""
    if len(theirs) == len(ours) and theirs[:-1] == ours[:-1]:
        each = " a problem" if int(np.prod(ours[:-1], dtype=np.int64)) > 1 else ""
        if rows is not None and ours[-1] == rows:
            return f"has {theirs[-1]:,} values{each}, the store has {rows:,} rows"
        return f"has {theirs[-1]:,} values{each}, this run's has {ours[-1]:,}"
    return f"has shape {theirs}, this run's is {ours}"


def _replaced(theirs: dict, ours: dict) -> bool:
    """Whether a checkpoint's store and this run's are two generations of one store path (checkpoints written before
    generations were recorded name none)."""
    ids = theirs.get("store_id"), ours.get("store_id")
    paths = theirs.get("path"), ours.get("path")
    return None not in ids + paths and ids[0] != ids[1] and Path(paths[0]).resolve() == Path(paths[1]).resolve()


def _read(name: str, params) -> bool:
    """Whether the run's solver reads parameter ``name`` (one it ignores cannot change the run: a checkpoint written
    before that parameter existed, say, resumes)."""
    declared = PARAMS.get(name)
    return declared is None or not declared.solvers or params.solver in declared.solvers


def differences(ours: dict, theirs: dict, names) -> str:
    """``name=theirs there, ours here`` for each of ``names`` whose values differ (compared as JSON reads them
    back: dict keys become strings, tuples lists); empty if none does."""
    changed = [k for k in names if _json_value(ours[k]) != theirs.get(k)]
    return ", ".join(f"{k}={theirs.get(k)!r} there, {ours[k]!r} here" for k in changed)


def _json_value(value):
    """A parameter as it reads back from JSON (dict keys become strings, tuples lists)."""
    return json.loads(json.dumps(value))


def check_warm_start(model, source: str, loss, bias: float, text: dict | None) -> None:
    """Refuse in one line a model a run cannot continue (``--warm-start``, ``warm_start=``): a model of another
    problem (a classifier, a regression, Crammer and Singer's multiclass SVM, a one-class SVM), trained with another
    bias, or on text of another format. ``loss`` is the run's (:class:`~blocksvm.losses.Loss`)."""
    from blocksvm.io.vw import describe
    from blocksvm.losses import LOSSES

    theirs = LOSSES.get(model.loss) if model.loss else None
    theirs_words = (
        _problem_words(theirs) if theirs else "a regression model" if not len(model.classes) else "a classifier"
    )
    if theirs_words != _problem_words(loss):
        raise ModelError(
            f"{source} is {theirs_words}; this run trains {_problem_words(loss)} (loss {loss.name}): a warm start "
            "continues a model of the same problem"
        )
    if (model.bias > 0) != (bias > 0) or (bias > 0 and model.bias != bias):
        raise ModelError(f"{source} was trained with bias {model.bias:g}: pass --bias {model.bias:g}")
    if model.text_format != text:
        raise ModelError(f"{source} was trained on {describe(model.text_format)}; this data is {describe(text)}")


def _problem_words(loss) -> str:
    from blocksvm.losses import MULTICLASS, NOVELTY, REGRESSION

    if loss.task == NOVELTY:
        return "a one-class SVM"
    if loss.task == REGRESSION:
        return "a regression model"
    return "Crammer and Singer's multiclass SVM" if loss.kind == MULTICLASS else "a classifier"
