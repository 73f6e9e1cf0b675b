"""Snapshot and restore: the whole training state as a :class:`~blocksvm.checkpoint.Checkpoint`, and back.

The trainer's state besides the solver's arrays is :class:`TrainState`; a snapshot adds the
parameters and the identity of the store, which a restore checks before anything is loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from blocksvm.checkpoint import Checkpoint
from blocksvm.errors import CheckpointError
from blocksvm.train.params import SAFE_TO_CHANGE
from blocksvm.train.records import PassSums


@dataclass
class TrainState:
    """Where training stands, besides the solver's arrays: what a checkpoint must hold."""

    outer: int = 1
    position: int = 0  # blocks of iteration ``outer`` already solved
    sums: PassSums | None = None
    history: list = field(default_factory=list)
    elapsed: float = 0.0  # seconds trained before the current process started
    blocks_visited: int = 0
    eval_seconds: float = 0.0  # of the elapsed seconds, those spent in evaluation passes


def snapshot(state: TrainState, elapsed: float, params, store, solver) -> Checkpoint:
    """The whole training state (``elapsed``: seconds trained so far)."""
    saved = {
        "outer": state.outer,
        "position": state.position,
        "sums": state.sums.to_dict(),
        "history": state.history,
        "elapsed": elapsed,
        "blocks_visited": state.blocks_visited,
        "eval_seconds": state.eval_seconds,
    }
    identity = {
        "fingerprint": store.fingerprint,
        "rows": store.n_rows,
        "nnz": store.nnz,
        "blocks": store.n_blocks,
        "path": str(store.path),
    }
    return Checkpoint(params.to_dict(), identity, saved, solver.state())


def restore(checkpoint: Checkpoint, params, store, solver, source: str = "the checkpoint") -> TrainState:
    """Load ``checkpoint`` into ``solver`` and return its TrainState; refuse one made for another
    store or other parameters (only those in SAFE_TO_CHANGE may differ)."""
    identity = checkpoint.store
    if identity["fingerprint"] != store.fingerprint:
        raise CheckpointError(
            f"{source} was made for the store {identity['path']} ({identity['rows']} rows, {identity['nnz']} nnz), "
            f"not for {store.path} ({store.n_rows} rows, {store.nnz} nnz)"
        )
    ours = params.to_dict()
    changed = [k for k in ours if k not in SAFE_TO_CHANGE and _json_value(ours[k]) != checkpoint.params.get(k)]
    if changed:
        details = ", ".join(f"{k}={checkpoint.params.get(k)!r} there, {ours[k]!r} here" for k in changed)
        raise CheckpointError(
            f"{source} was made with other parameters ({details}); only "
            f"{', '.join(sorted(SAFE_TO_CHANGE))} may change when resuming"
        )
    try:
        solver.load_state(checkpoint.arrays)
    except (KeyError, ValueError) as exc:
        raise CheckpointError(f"{source} does not fit this problem: {exc}") from None
    s = checkpoint.state
    return TrainState(
        outer=s["outer"],
        position=s["position"],
        sums=PassSums(**s["sums"]),
        history=list(s["history"]),
        elapsed=s["elapsed"],
        blocks_visited=s["blocks_visited"],
        eval_seconds=s["eval_seconds"],
    )


def _json_value(value):
    """A parameter as it reads back from JSON (dict keys become strings)."""
    return json.loads(json.dumps(value))
