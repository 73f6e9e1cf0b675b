"""Apply a model to a block store or a LIBSVM text file, streaming, with output in source order.

A text file is read chunk by chunk and predictions are written as they come (constant memory).
A store's rows are shuffled across blocks, so predictions are gathered with each row's source
line number and sorted before writing: 16 bytes per row (+8 per class with decision values),
the same order of memory as training's ``alpha``.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from blocksvm._progress import progress_bar
from blocksvm.errors import BlocksvmError, ModelError, check_writable
from blocksvm.io.libsvm import iter_parsed
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore


@dataclass
class PredictSummary:
    """What a prediction run did."""

    rows: int
    correct: int
    seconds: float
    output: str | None

    @property
    def accuracy(self) -> float:
        return self.correct / max(self.rows, 1)

    def to_dict(self) -> dict:
        return {**asdict(self), "accuracy": self.accuracy}

    def __str__(self) -> str:
        return (f"Accuracy = {100 * self.accuracy:.4f}% ({self.correct}/{self.rows}) "
                f"in {self.seconds:.2f} s")  # fmt: skip


def predict(model: LinearModel | str | os.PathLike, data: str | os.PathLike, output=None, *,
            decision_values: bool = False, progress: bool | None = None) -> PredictSummary:  # fmt: skip
    """Predict every row of ``data`` (a block store directory or a LIBSVM file).

    Parameters
    ----------
    model : LinearModel or path
        A blocksvm model file or a LIBLINEAR model file.
    data : path
        A store directory or a LIBSVM/svmlight text file (also .gz, .bz2, .xz).
    output : path, optional
        File to write one prediction per row, in the source's row order: the label, then (with
        ``decision_values``) the decision value of each problem. Written to a temporary name
        and renamed when complete.

    Returns
    -------
    PredictSummary
        Rows, how many were predicted right (labels of the source compared with predictions).
    """
    start = time.perf_counter()
    model = model if isinstance(model, LinearModel) else LinearModel.load(model)
    data = Path(data)
    writer = _Writer(output, model, decision_values)
    with writer:
        if data.is_dir():
            rows, correct = _predict_store(model, BlockStore(data), writer, progress)
        else:
            rows, correct = _predict_text(model, data, writer, progress)
    return PredictSummary(rows, correct, time.perf_counter() - start, str(output) if output else None)


def _predict_text(model: LinearModel, path: Path, writer, progress) -> tuple[int, int]:
    rows = correct = 0
    size = path.stat().st_size if path.exists() else None
    with progress_bar(size, "predict", unit="B", unit_scale=True, enabled=progress) as bar:
        for chunk in iter_parsed(path, dtype=np.float64):
            if model.index_base == 1 and chunk.min_index == 0:
                first = int(np.argmax(chunk.indices == 0))
                line = chunk.lines[np.searchsorted(chunk.indptr, first, side="right") - 1]
                raise ModelError(
                    f"{path}:{line}: feature index 0, but the model was trained on one-based "
                    "indices: this file is in another feature space (zero-based)"
                )
            indices = chunk.indices - np.int32(model.index_base)
            values = model.decision_function_csr(chunk.indptr, indices, chunk.data)
            labels = model.labels_from_decisions(values)
            writer.write(labels, values)
            rows += chunk.n_rows
            correct += int(np.count_nonzero(labels == chunk.labels))
            bar.update(chunk.source_pos - bar.n)
    return rows, correct


def _predict_store(model: LinearModel, store: BlockStore, writer, progress) -> tuple[int, int]:
    if store.index_base != model.index_base:
        raise ModelError(
            f"{store.path} has {store.index_base}-based feature indices but the model was trained on "
            f"{model.index_base}-based ones: they are different feature spaces"
        )
    lines, predicted, decisions, correct = [], [], [], 0
    with progress_bar(store.n_blocks, "predict", unit="block", enabled=progress) as bar:
        for block in store.iter_blocks():
            values = model.decision_function_csr(block.indptr, block.indices, block.data)
            labels = model.labels_from_decisions(values)
            correct += int(np.count_nonzero(labels == block.labels))
            if writer.active:
                lines.append(block.lines)
                predicted.append(labels)
                if writer.decision_values:
                    decisions.append(values)
            bar.update()
    if writer.active:
        order = np.argsort(np.concatenate(lines), kind="stable")
        values = np.concatenate(decisions)[order] if decisions else None
        writer.write(np.concatenate(predicted)[order], values)
    return store.n_rows, correct


class _Writer:
    """Prediction lines to a temporary file, renamed when complete; nothing if no output."""

    def __init__(self, output, model: LinearModel, decision_values: bool):
        self.output = Path(output) if output else None
        self.decision_values = decision_values
        self.integral = all(float(c).is_integer() for c in model.classes)
        self.file = None

    @property
    def active(self) -> bool:
        return self.output is not None

    def __enter__(self):
        if self.output:
            check_writable(self.output, "predictions to")
            self.tmp = self.output.with_name(self.output.name + ".partial")
            try:
                self.file = open(self.tmp, "w")  # noqa: SIM115 - closed in __exit__
            except OSError as exc:  # a read-only file system that os.access did not report, ...
                raise BlocksvmError(f"cannot write predictions to {self.output}: {exc.strerror or exc}") from None
        return self

    def write(self, labels: np.ndarray, values: np.ndarray | None) -> None:
        if not self.file:
            return
        label_text = labels.astype(np.int64).astype(str) if self.integral else labels.astype(str)
        if self.decision_values and values is not None:
            columns = [label_text] + [np.char.mod("%.8g", values[:, k]) for k in range(values.shape[1])]
            label_text = columns[0]
            for column in columns[1:]:
                label_text = np.char.add(np.char.add(label_text, " "), column)
        self.file.write("\n".join(label_text.tolist()))
        if len(label_text):
            self.file.write("\n")

    def __exit__(self, kind, exc, tb) -> None:
        if not self.file:
            return
        try:
            if exc is None:  # a full disk may only show when the last buffer is flushed
                self.file.flush()
                os.fsync(self.file.fileno())  # on disk before its final name: a crash leaves no half file
        except OSError as error:
            exc = error
        try:
            self.file.close()
            if exc is None:
                os.replace(self.tmp, self.output)
        except OSError as error:
            exc = exc or error
        if exc is None:
            return
        self.tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename in (None, str(self.tmp)):  # a write failed
            raise BlocksvmError(f"cannot write predictions to {self.output}: {exc.strerror or exc}") from exc
        if kind is None:
            raise exc
