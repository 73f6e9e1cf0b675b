"""The one output channel of training: history records (JSON lines) and one printed line per pass.

What the figures of a record mean, and which are exact, is said in :mod:`blocksvm.train.records`.
"""

from __future__ import annotations

import json
import string
import sys
from contextlib import contextmanager
from pathlib import Path

from blocksvm.errors import BlocksvmError


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
    shown : str
        The learner's own record entries the line shows (its ``shown``: ``"label {key:spec}  ..."``), each part shown
        when the record has its key.
    """

    def __init__(self, history_path=None, *, verbose: int = 1, stream=None, shown: str = ""):
        self.history_path = Path(history_path) if history_path else None
        self.verbose = verbose
        self.stream = stream or sys.stderr
        self.shown = shown

    def record(self, rec: dict) -> None:
        if self.history_path:
            with self._writing(), open(self.history_path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        if self.verbose:
            print(format_record(rec, self.shown), file=self.stream, flush=True)

    def rewrite(self, history: list[dict]) -> None:
        """Replace the history file by ``history`` (empty, or on resume the checkpoint's records)."""
        if self.history_path:
            with self._writing(), open(self.history_path, "w") as f:
                f.writelines(json.dumps(rec) + "\n" for rec in history)

    @contextmanager
    def _writing(self):
        """A failed write (a full disk) as one line naming the history, not a bare OSError naming nothing."""
        try:
            yield
        except OSError as exc:
            raise BlocksvmError(f"cannot write the history {self.history_path}: {exc.strerror or exc}") from None

    def detail(self, text: str) -> None:
        """A line printed only at verbose level 2."""
        if self.verbose >= 2:
            print(text, file=self.stream, flush=True)

    def say(self, text: str) -> None:
        if self.verbose:
            print(text, file=self.stream, flush=True)


# The figures every record may hold, shown after the learner's own (``mark``: "~" on an estimate).
_FIGURES = (
    ("nsv", "nSV {value}"),
    ("train_accuracy", "train acc{mark} {percent:.2f}%"),
    ("train_inliers", "inliers{mark} {percent:.2f}%"),
    ("train_mse", "train MSE {value:.6g}"),
    ("validation_accuracy", "val acc {percent:.2f}%"),
    ("validation_inliers", "val inliers {percent:.2f}%"),
    ("validation_mse", "val MSE {value:.6g}"),
)


def format_record(rec: dict, shown: str = "") -> str:
    """One human line: LIBLINEAR-like, greppable; ``shown``: the learner's own entries (:attr:`Solver.shown`)."""
    parts = [f"iter {rec['outer']:3d}", f"time {rec['time']:8.2f}s"]
    mark = "" if rec.get("primal_exact") else "~"
    if rec.get("primal") is not None:
        parts.append(f"primal{mark} {rec['primal']:.6e}")
    if rec.get("dual") is not None:
        parts.append(f"dual {rec['dual']:.6e}")
        parts.append(f"gap{mark} {rec['gap']:.2e}")
    if rec.get("pg_violation") is not None:
        parts.append(f"PG {rec['pg_violation']:.3g}")
    for text, key, spec, _ in string.Formatter().parse(shown):
        if key and rec.get(key) is not None:
            parts.append(f"{text.strip()} {rec[key]:{spec}}")
    for key, text in _FIGURES:
        if rec.get(key) is not None:
            parts.append(text.format(value=rec[key], percent=100 * rec[key], mark=mark))
    if rec.get("partial"):
        parts.append("(partial pass)")
    return "  ".join(parts)
