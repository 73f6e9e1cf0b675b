"""Convergence plots of a training history (needs matplotlib: ``pip install blocksvm[plot]``)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from blocksvm.errors import BlocksvmError, check_writable
from blocksvm.schema import Field, Schema


def read_history(path: str | os.PathLike) -> list[dict]:
    """The records of a JSON-lines history file, each checked against :data:`RECORD_SCHEMA`."""
    path = Path(path)
    _refuse_a_model(path)
    try:
        lines = path.read_text().splitlines()
        numbered = [(number, json.loads(line)) for number, line in enumerate(lines, 1) if line.strip()]
    except FileNotFoundError:
        raise BlocksvmError(f"{path}: no such history file") from None
    except IsADirectoryError:
        raise BlocksvmError(f"{path} is a directory, not a training history") from None
    except ValueError as exc:  # UnicodeDecodeError (a binary file) is a ValueError too
        raise BlocksvmError(f"{path} is not a JSON-lines training history: {exc}") from None
    records = [record for _, record in numbered]
    if not records:
        raise BlocksvmError(f"{path} holds no training records")
    missing = [key for key in _NEEDED if not all(isinstance(r, dict) and key in r for r in records)]
    if missing:
        raise BlocksvmError(f"{path} is not a blocksvm training history: records lack {', '.join(missing)}")
    for number, record in numbered:
        RECORD_SCHEMA.check(record, f"{path}:{number}")
    return records


def _refuse_a_model(path: Path) -> None:
    """A model (HDF5) given for its history: point at the history written beside it."""
    try:
        with open(path, "rb") as f:
            is_hdf5 = f.read(8) == b"\x89HDF\r\n\x1a\n"
    except OSError:
        return  # read_history says what is wrong
    if is_hdf5:
        raise BlocksvmError(f"{path} is an HDF5 file (a model?), not a training history: plot {path}.history.jsonl")


_NEEDED = ("outer", "time", "primal", "train_accuracy")
_DRAWN = ("dual", "gap", "progressive_accuracy", "validation_accuracy", "pg_violation", "progressive_loss")
RECORD_SCHEMA = Schema(
    (
        Field("outer", "int", low=0),
        Field("time", "real"),
        Field("primal", "real", null=True),
        Field("train_accuracy", "real", null=True),
        Field("primal_exact", "bool", optional=True, null=True),
        *(Field(key, "real", optional=True, null=True) for key in _DRAWN),
    )
)
"""What a record of a history file must hold for ``plot`` (every record a JSON object of these; others pass)."""


def _values(records: list[dict], key: str, transform=float) -> list[float]:
    """``key`` of each record (NaN where a record has none: a gap missing from a pass, say), for a plot."""
    return [math.nan if r.get(key) is None else transform(r[key]) for r in records]


def plot_history(
    history: list[dict] | str | os.PathLike, output: str | os.PathLike, *, title: str | None = None
) -> Path:
    """Draw objective, duality gap, accuracy and PG violation (progressive loss for online learners); save a PNG.

    Top row against wall-clock seconds, bottom row against outer iterations; the gap and the
    PG violation on log scales. Exact evaluations are drawn as filled markers, pass estimates
    as a line.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BlocksvmError("plotting needs matplotlib: pip install 'blocksvm[plot]'") from None
    records = read_history(history) if not isinstance(history, list) else history
    check_writable(output, "the plot")
    outer = [r["outer"] for r in records]
    seconds = [r["time"] for r in records]
    exact = [r for r in records if r.get("primal_exact")]

    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    ax = axes[0, 0]
    ax.plot(seconds, _values(records, "primal"), label="primal (pass estimate)", color="C0")
    ax.plot(_values(exact, "time"), _values(exact, "primal"), "o", color="C0", label="primal (exact)")
    if records[0].get("dual") is not None:
        ax.plot(seconds, _values(records, "dual"), label="dual (exact)", color="C1")
    ax.set(xlabel="seconds", ylabel="objective", title="Objective")
    ax.legend()

    ax = axes[0, 1]
    if records[0].get("gap") is not None:
        floor = lambda gap: max(gap, 1e-16)  # noqa: E731 - a log scale shows no 0
        ax.semilogy(seconds, _values(records, "gap", floor), color="C2", label="gap (pass estimate)")
        ax.semilogy(_values(exact, "time"), _values(exact, "gap", floor), "o", color="C2", label="gap (exact)")
        ax.legend()
    ax.set(xlabel="seconds", ylabel="(P - D) / P", title="Relative duality gap")

    ax = axes[1, 0]
    ax.plot(outer, _values(records, "train_accuracy", lambda a: 100 * a), label="training", color="C3")
    if records[0].get("progressive_accuracy") is not None:
        ax.plot(
            outer,
            _values(records, "progressive_accuracy", lambda a: 100 * a),
            "--",
            color="C6",
            label="progressive (before each update)",
        )
    validation = [(r["outer"], r["validation_accuracy"]) for r in records if r.get("validation_accuracy") is not None]
    if validation:
        ax.plot([o for o, _ in validation], [100 * a for _, a in validation], label="validation", color="C4")
    ax.set(xlabel="outer iteration", ylabel="accuracy (%)", title="Accuracy")
    ax.legend()

    ax = axes[1, 1]
    violations = [(r["outer"], r["pg_violation"]) for r in records if r.get("pg_violation")]
    if violations:
        ax.semilogy([o for o, _ in violations], [v for _, v in violations], color="C5")
        ax.set(xlabel="outer iteration", ylabel="max PG - min PG", title="Projected-gradient violation")
    elif records[0].get("progressive_loss") is not None:  # an online learner: progressive validation
        ax.plot(outer, _values(records, "progressive_loss"), "o-", color="C6")
        ax.set(xlabel="outer iteration", ylabel="mean loss before each update", title="Progressive loss")

    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    fig.suptitle(title or "blocksvm training")
    fig.tight_layout()
    return _saved(fig, plt, Path(output))


def _saved(fig, plt, output: Path) -> Path:
    """Save ``fig`` to ``output`` through a temporary name: a plot cut by a kill or a full disk is not left looking
    complete."""
    tmp = output.with_name(output.name + ".partial")
    try:
        fig.savefig(tmp, dpi=110, format=output.suffix.lstrip(".").lower() or "png")
        os.replace(tmp, output)
    except OSError as exc:
        raise BlocksvmError(f"cannot write the plot {output}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return output


def plot_cv(result, output: str | os.PathLike, *, title: str | None = None) -> Path:
    """Draw a C search (a :class:`~blocksvm.train.c_search.TuneResult`): the CV score against log2 C, each fold's own
    score as a dot and the spread over the folds as a band, the best C marked; save a PNG."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BlocksvmError("plotting needs matplotlib: pip install 'blocksvm[plot]'") from None
    check_writable(output, "the plot")
    scale = 100.0 if result.metric == "accuracy" else 1.0
    logs = [math.log2(p.C) for p in result.points]
    scores = [scale * p.score for p in result.points]
    spreads = [scale * p.spread for p in result.points]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for log_c, point in zip(logs, result.points):
        ax.plot([log_c] * len(point.fold_scores), [scale * s for s in point.fold_scores], ".", color="0.6")
    low = [s - d for s, d in zip(scores, spreads)]
    high = [s + d for s, d in zip(scores, spreads)]
    ax.fill_between(logs, low, high, color="C0", alpha=0.2, label="± std over folds")
    ax.plot(logs, scores, "o-", color="C0", label=f"CV {'accuracy' if scale == 100 else 'MSE'} ({result.folds} folds)")
    ax.axvline(math.log2(result.best_C), color="C3", linestyle="--", label=f"best C = {result.best_C:g}")
    ylabel = "CV accuracy (%)" if scale == 100 else "CV mean squared error"
    ax.set(xlabel="log2 C", ylabel=ylabel, title=title or "Cross-validation over C")
    ax.legend()
    fig.tight_layout()
    return _saved(fig, plt, Path(output))
