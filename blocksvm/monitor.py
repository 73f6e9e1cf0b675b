"""Convergence monitoring: sums over a pass, one history record per outer iteration, one channel out.

Which figures are exact (see docs/ALGORITHMS.md):

- ``dual`` is exact: the solver keeps per-block sums of ``alpha`` and ``||w||^2`` is computed
  from the ``w`` in memory at the end of the pass.
- ``primal``, ``gap`` and ``train_accuracy`` are *pass estimates* unless ``primal_exact`` is
  true: each row's loss is taken when the pass reaches it, so with a ``w`` that moved during the
  pass (the loss of early blocks is measured before later blocks changed ``w``). An exact
  evaluation pass recomputes them at the final ``w`` of the iteration; it runs to confirm the gap
  rule and every ``eval_every`` iterations.
- ``time`` is wall-clock seconds since training began; ``train_time`` leaves out the exact
  evaluation and validation passes (the time an optimizer without them would have taken).
- ``pg_violation`` is LIBLINEAR's ``max PG - min PG`` over the first inner pass of every block,
  also with a moving ``w``, exactly as LIBLINEAR measures it during its own sweeps.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np


@dataclass
class PassSums:
    """Sums over the blocks visited so far in the current outer iteration."""

    loss: list
    pg_max: list
    pg_min: list
    correct: int = 0
    rows: int = 0
    blocks: int = 0
    passes: float = 0.0
    updates: int = 0
    compute_seconds: float = 0.0

    @classmethod
    def zeros(cls, n_problems: int) -> PassSums:
        return cls([0.0] * n_problems, [-math.inf] * n_problems, [math.inf] * n_problems)

    def add(self, report, n_rows: int, seconds: float) -> None:
        self.loss = (np.asarray(self.loss) + report.loss).tolist()
        self.pg_max = np.fmax(self.pg_max, report.pg_max).tolist()
        self.pg_min = np.fmin(self.pg_min, report.pg_min).tolist()
        self.correct += int(report.correct)
        self.rows += n_rows
        self.blocks += 1
        self.passes += report.passes
        self.updates += report.updates
        self.compute_seconds += seconds

    def to_dict(self) -> dict:
        return asdict(self)


def relative_gap(primal: np.ndarray, dual: np.ndarray) -> float:
    """Largest ``(P - D) / |P|`` over the problems."""
    return float(np.max((primal - dual) / np.maximum(np.abs(primal), 1e-300)))


class Monitor:
    """Writes history records (JSON lines) and prints one line per outer iteration.

    Parameters
    ----------
    history_path : path or None
        File of JSON lines: :meth:`rewrite` starts it (with the records a resumed run already
        has), :meth:`record` appends.
    verbose : int
        0 silent, 1 one line per outer iteration and a final summary, 2 also per exact pass.
    stream : text file, default sys.stderr
    """

    def __init__(self, history_path=None, *, verbose: int = 1, stream=None):
        self.history_path = Path(history_path) if history_path else None
        self.verbose = verbose
        self.stream = stream or sys.stderr

    def record(self, rec: dict) -> None:
        if self.history_path:
            with open(self.history_path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        if self.verbose:
            print(format_record(rec), file=self.stream, flush=True)

    def rewrite(self, history: list[dict]) -> None:
        """Replace the history file by ``history`` (empty, or on resume the checkpoint's records)."""
        if self.history_path:
            with open(self.history_path, "w") as f:
                f.writelines(json.dumps(rec) + "\n" for rec in history)

    def detail(self, text: str) -> None:
        """A line printed only at verbose level 2."""
        if self.verbose >= 2:
            print(text, file=self.stream, flush=True)

    def say(self, text: str) -> None:
        if self.verbose:
            print(text, file=self.stream, flush=True)


def format_record(rec: dict) -> str:
    """One human line: LIBLINEAR-like, greppable."""
    parts = [f"iter {rec['outer']:3d}", f"time {rec['time']:8.2f}s"]
    mark = "" if rec.get("primal_exact") else "~"
    if rec.get("primal") is not None:
        parts.append(f"primal{mark} {rec['primal']:.6e}")
    if rec.get("dual") is not None:
        parts.append(f"dual {rec['dual']:.6e}")
        parts.append(f"gap{mark} {rec['gap']:.2e}")
    if rec.get("pg_violation") is not None:
        parts.append(f"PG {rec['pg_violation']:.3g}")
    if rec.get("nsv") is not None:
        parts.append(f"nSV {rec['nsv']}")
    parts.append(f"train acc{mark} {100 * rec['train_accuracy']:.2f}%")
    if rec.get("validation_accuracy") is not None:
        parts.append(f"val acc {100 * rec['validation_accuracy']:.2f}%")
    if rec.get("partial"):
        parts.append("(partial pass)")
    return "  ".join(parts)
