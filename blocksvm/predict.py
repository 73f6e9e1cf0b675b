"""Apply a model to a block store or a LIBSVM text file, streaming, with output in source order.

A text file is read chunk by chunk and predictions are written as they come (constant memory).
A store's rows are shuffled across blocks, so predictions are gathered with each row's source
line number and sorted before writing: 16 bytes per row (+8 per class with decision values),
the same order of memory as training's ``alpha``.

Features outside the model's (indices beyond its features, or absent from a compact model's feature
map; for a sparse model, which keeps only its nonzero weights, indices beyond its space's width) count as zero, as
in LIBLINEAR; they are counted on the way (nonzeros, and distinct indices in
a :class:`~blocksvm.features.FeatureSet`, sized by the distinct indices met, not by the largest) and
reported by a :class:`FeatureSpaceWarning`, or refused with ``strict=True``. So are a classifier's input labels that
are not among its classes (a test set of another problem): their rows count as predicted wrong, and one
:class:`LabelWarning` says how many there were, of which labels, from which line.

Text is read as the model's training text was: LIBSVM's indices, or VW's names hashed alike (the model's
``text_format``, :mod:`blocksvm.io.vw`); text or a store declared or recorded otherwise is refused.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from blocksvm._progress import progress_bar
from blocksvm.errors import (  # noqa: F401 - the warnings: predict's, where users import them
    BlocksvmError,
    FeatureSpaceWarning,
    InputFormatError,
    InputWarning,
    LabelWarning,
    ModelError,
    check_writable,
    refuse_writing_over,
)
from blocksvm.features import FeatureSet, translate
from blocksvm.io.text import Skipped
from blocksvm.io.vw import Hashing, describe, iter_text, text_format_of
from blocksvm.model import LinearModel, load_shared
from blocksvm.store import BlockStore, reading


@dataclass
class PredictSummary:
    """What a prediction run did."""

    rows: int
    correct: int
    seconds: float
    output: str | None
    outside_indices: int = 0
    """Distinct feature indices of the input outside the model's feature space (ignored)."""
    outside_nonzeros: int = 0
    """Nonzeros of the input at those indices."""
    mse: float | None = None
    """Regression: the mean squared error of the predictions (None for a classifier)."""
    r2: float | None = None
    """Regression: the coefficient of determination ``1 - SSE / SST`` (None for a classifier)."""
    inliers: int | None = None
    """One-class: the rows predicted +1, ``w.x - rho > 0`` (None for other models, whose labels are compared)."""
    nonzero_weights: int | None = None
    """The model's weights of features that are not zero (every problem's; the bias's aside)."""
    skipped_lines: int = 0
    """Malformed lines of text skipped (``skip_bad_lines``): no prediction was written for them."""
    first_skipped: str | None = None
    """The first skipped line's message."""

    @property
    def accuracy(self) -> float | None:
        return None if self.mse is not None or self.inliers is not None else self.correct / max(self.rows, 1)

    def to_dict(self) -> dict:
        return {**asdict(self), "accuracy": self.accuracy}

    def __str__(self) -> str:
        text = self._result()
        if self.skipped_lines:
            text += (
                f"; skipped {self.skipped_lines:,} malformed lines (no prediction written for them), the first: "
                f"{self.first_skipped}"
            )
        return text

    def _result(self) -> str:
        weights = "" if self.nonzero_weights is None else f" (a model of {self.nonzero_weights:,} nonzero weights)"
        if self.mse is not None:
            return (
                f"Mean squared error = {self.mse:.6g}, R^2 = {self.r2:.6g} ({self.rows} rows) in {self.seconds:.2f} s"
                + weights
            )
        if self.inliers is not None:
            share = 100 * self.inliers / max(self.rows, 1)
            return f"Inliers (+1) = {share:.4f}% ({self.inliers}/{self.rows}) in {self.seconds:.2f} s{weights}"
        return f"Accuracy = {100 * self.accuracy:.4f}% ({self.correct}/{self.rows}) in {self.seconds:.2f} s{weights}"


class _Tally:
    """What predictions got right: correct labels, or (regression) the sums for the squared error and R^2; and, for a
    classifier, the labels of the input that are not among its classes (``unseen``: label -> rows, first line), which
    ``strict`` refuses at the first."""

    def __init__(self, model: LinearModel, data: Path, strict: bool):
        self.rows = self.correct = self.positive = 0
        self.squared_error = self.sum = self.sum_squares = 0.0
        classifier = not model.is_regression and model.rho is None  # (one-class: labels unread)
        self.classes = np.asarray(model.classes, np.float64) if classifier else None
        self.data, self.strict = data, strict
        self.unseen: dict[float, list] = {}

    def add(self, predicted: np.ndarray, labels: np.ndarray, lines: np.ndarray) -> None:
        if self.classes is not None:
            self._check_labels(labels, lines)
        self.rows += len(labels)
        self.correct += int(np.count_nonzero(predicted == labels))
        self.positive += int(np.count_nonzero(predicted > 0))
        self.squared_error += float(np.sum((predicted - labels) ** 2))
        self.sum += float(np.sum(labels))
        self.sum_squares += float(np.sum(labels * labels))

    def _check_labels(self, labels: np.ndarray, lines: np.ndarray) -> None:
        stray = np.flatnonzero(~np.isin(labels, self.classes))
        if not len(stray):
            return
        if self.strict:
            raise ModelError(
                f"{self._where(int(lines[stray[0]]))}: label {labels[stray[0]]:g} is not among the model's classes "
                f"({_numbers(self.classes)}) (--strict; without it such rows count as wrong, with a warning)"
            )
        for label, first in zip(*np.unique(labels[stray], return_index=True)):
            count = int(np.count_nonzero(labels[stray] == label))
            seen = self.unseen.setdefault(float(label), [0, int(lines[stray[first]])])
            seen[0] += count
            seen[1] = min(seen[1], int(lines[stray[first]]))

    def _where(self, line: int) -> str:
        return f"{self.data} (the row of source line {line})" if self.data.is_dir() else f"{self.data}:{line}"

    def unseen_warning(self, data: Path, model: LinearModel) -> str:
        rows = sum(count for count, _ in self.unseen.values())
        labels = sorted(self.unseen)
        first = min(line for _, line in self.unseen.values())
        return (
            f"{data}: {rows} rows have labels the model never saw ({_numbers(labels)}; the first at line {first}), "
            f"not among its classes ({_numbers(model.classes)}): they count as predicted wrong (--strict or "
            "strict=True makes this an error)"
        )

    def regression(self) -> dict:
        n = max(self.rows, 1)
        total = self.sum_squares - self.sum * self.sum / n
        return {"mse": self.squared_error / n, "r2": 1.0 - self.squared_error / total if total > 0 else float("nan")}


def predict(
    model: LinearModel | str | os.PathLike,
    data: str | os.PathLike,
    output=None,
    *,
    decision_values: bool = False,
    probability: bool = False,
    progress: bool | None = None,
    strict: bool = False,
    text_format: str | None = None,
    hash_bits: int | None = None,
    hash_all: bool | None = None,
    skip_bad_lines: bool = False,
) -> PredictSummary:
    """Predict every row of ``data`` (a block store directory, a LIBSVM file, or VW text for a model trained on it).

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
    probability : bool
        Write each class's probability after the label instead (LIBLINEAR's ``-b 1``; a logistic regression
        model only): a first line ``labels`` names the classes, in the model's (sorted) order.
    strict : bool
        Refuse input features outside the model's feature space (indices beyond its features), and a classifier's
        input labels not among its classes: raise :class:`~blocksvm.errors.ModelError` at the first one, naming its
        line, and write no output. By default such features count as zero, such rows as predicted wrong, and one
        :class:`FeatureSpaceWarning` or :class:`LabelWarning` says how many there were.
    text_format : {"libsvm", "vw"}, optional
        The text's format, when declared (``--format``); by default the model's training text's. A model trained
        on VW text reads text as VW text hashed alike; any other declaration is refused.
    hash_bits, hash_all : optional
        The hashing of VW text, when declared: refused unless it is the model's.
    skip_bad_lines : bool
        Text: skip malformed lines and count them (no prediction is written for them); refused for a store.

    Returns
    -------
    PredictSummary
        Rows, how many were predicted right (labels of the source compared with predictions) or, for a
        regression model, the mean squared error and R^2, or for a one-class model how many it calls inliers (+1),
        and the input's distinct feature indices and nonzeros outside the model's feature space.
    """
    start = time.perf_counter()
    given_model = None if isinstance(model, LinearModel) else model
    refuse_writing_over({"the predictions": output}, {"the data": data, "the model": given_model})
    name = "the model" if isinstance(model, LinearModel) else f"the model {model}"
    model = model if isinstance(model, LinearModel) else load_shared(model, "predict with it")
    data = Path(data)
    if probability:
        model.probabilities(np.zeros((0, model.coef.shape[0])))  # a model without them: one line, before any output
    space = _FeatureSpace(model, name, data, strict)
    writer = _Writer(output, model, decision_values, probability)
    tally = _Tally(model, data, strict)
    declared = text_format_for(model, name, text_format, hash_bits, hash_all)
    skipped = Skipped()
    if skip_bad_lines and data.is_dir():
        raise ModelError(
            f"--skip-bad-lines (skip_bad_lines=) reads text; {data} is a store, converted already (its skipped lines: "
            "blocksvm info)"
        )
    with reading(data), writer:  # a store: no conversion replaces it while its rows are predicted
        if data.is_dir():
            _predict_store(model, BlockStore(data), writer, progress, space, tally, name)
        else:
            _predict_text(model, data, writer, progress, space, tally, declared, skipped if skip_bad_lines else None)
        if tally.rows == 0:  # no accuracy of 0 rows, no empty output: one line, as convert says it
            raise InputFormatError(data, 0, "contains no data rows" + (" (every line skipped)" * bool(skipped.lines)))
    summary = PredictSummary(
        tally.rows,
        tally.correct,
        time.perf_counter() - start,
        str(output) if output else None,
        space.indices,
        space.nonzeros,
        **(tally.regression() if model.is_regression else {}),
        **({"inliers": tally.positive} if model.rho is not None else {}),
        nonzero_weights=model.nonzero_weights,
        skipped_lines=skipped.lines,
        first_skipped=skipped.first,
    )
    if space.nonzeros:
        warnings.warn(space.warning(), FeatureSpaceWarning, stacklevel=2)
    if tally.unseen:
        warnings.warn(tally.unseen_warning(data, model), LabelWarning, stacklevel=2)
    return summary


def _numbers(values) -> str:
    return ", ".join(f"{float(v):g}" for v in values)


class _FeatureSpace:
    """Counts the input's nonzeros and distinct indices outside the model's features; with ``strict``
    refuses the first one."""

    def __init__(self, model: LinearModel, name: str, data: Path, strict: bool):
        self.model, self.base = model, model.index_base
        self.name, self.data, self.strict = name, data, strict
        self.outside = FeatureSet()  # the distinct zero-based indices met outside the model
        self.nonzeros = 0

    @property
    def indices(self) -> int:
        return len(self.outside.sorted()) if self.nonzeros else 0

    def _space(self) -> str:
        last = self.base + self.model.space_features - 1
        if self.model.sparse:
            return (
                f"{self.name}, whose {self.model.space_features} features are indices {self.base} to {last} "
                f"({self.model.nonzero_weights} nonzero weights kept)"
            )
        if self.model.feature_map is not None:
            return f"{self.name}, which uses {self.model.n_features} of the indices {self.base} to {last}"
        return f"{self.name}, whose {self.model.n_features} features are indices {self.base} to {last}"

    def columns(self, indptr: np.ndarray, indices: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """The model's columns of the rows' zero-based ``indices``, counting those outside the model."""
        columns = self.model.columns(indices)
        # (a sparse model's absent columns are weights of 0 in its space: only indices beyond the space are outside)
        outside = indices >= self.model.space_features if self.model.sparse else columns >= self.model.n_features
        if not outside.any():
            return columns
        first = int(np.argmax(outside))
        if self.strict:
            line = lines[np.searchsorted(indptr, first, side="right") - 1]
            where = f"{self.data} (the row of source line {line})" if self.data.is_dir() else f"{self.data}:{line}"
            raise ModelError(
                f"{where}: feature index {int(indices[first]) + self.base} is outside {self._space()} "
                "(--strict; without it such features are ignored, with a warning)"
            )
        met = indices[outside]
        self.nonzeros += len(met)
        self.outside.add(met, int(met.max()))
        return columns

    def warning(self) -> str:
        return (
            f"{self.data}: {self.indices} distinct feature indices ({self.nonzeros} nonzeros) are outside "
            f"{self._space()}: they were ignored (--strict or strict=True makes this an error)"
        )


def text_format_for(
    model: LinearModel, name: str, text_format: str | None, hash_bits: int | None, hash_all: bool | None
) -> dict | None:
    """How to read text for ``model``: its training text's format (``model.text_format``), or the one declared,
    which must be the same.

    Raises
    ------
    ModelError
        A declaration that is not the model's: another format, or other hashing.
    """
    trained = model.text_format
    if trained is not None:
        Hashing.from_dict(trained, name)  # a record this blocksvm reads
    if text_format is None and hash_bits is None and not hash_all:
        return trained
    if text_format == "libsvm":
        text_format_of("libsvm", hash_bits, hash_all)  # refuses hashing options for LIBSVM's indices
        if trained is not None:
            raise ModelError(f"{name} was trained on {describe(trained)}: it cannot read LIBSVM text")
        return None
    text_format_of(text_format or "vw")  # an unknown format is refused by name
    if trained is None:
        raise ModelError(f"{name} was trained on {describe(None)}, not on hashed VW text: it cannot read VW text")
    declared = Hashing(
        trained["bits"] if hash_bits is None else hash_bits,
        trained.get("hash_all", False) if hash_all is None else bool(hash_all),
    ).to_dict()
    if declared != trained:
        raise ModelError(
            f"{name} was trained on {describe(trained)}; the text is declared {describe(declared)}: the columns "
            "would differ"
        )
    return trained


def _predict_text(
    model: LinearModel,
    path: Path,
    writer,
    progress,
    space: _FeatureSpace,
    tally: _Tally,
    text_format: dict | None,
    skipped: Skipped | None,
) -> None:
    """``skipped``: malformed lines are skipped and counted there (None: the first is an error)."""
    size = path.stat().st_size if path.exists() else None
    with progress_bar(size, "predict", unit="B", unit_scale=True, enabled=progress) as bar:
        for chunk in iter_text(path, text_format, dtype=np.float64, skip_bad_lines=skipped is not None):
            if skipped is not None:
                skipped.add(chunk)
            if model.index_base == 1 and chunk.min_index == 0:
                first = int(np.argmax(chunk.indices == 0))
                line = chunk.lines[np.searchsorted(chunk.indptr, first, side="right") - 1]
                raise ModelError(
                    f"{path}:{line}: feature index 0, but the model was trained on one-based "
                    "indices: this file is in another feature space (zero-based)"
                )
            indices = chunk.indices - np.int32(model.index_base)
            columns = space.columns(chunk.indptr, indices, chunk.lines)
            values = model.decisions_of_columns(chunk.indptr, columns, chunk.data)
            labels = model.labels_from_decisions(values)
            writer.write(labels, values)
            tally.add(labels, chunk.labels, chunk.lines)
            bar.update(chunk.source_pos - bar.n)


def _predict_store(
    model: LinearModel, store: BlockStore, writer, progress, space: _FeatureSpace, tally: _Tally, name: str
) -> None:
    if store.text_format != model.text_format:
        raise ModelError(
            f"{store.path} was read from {describe(store.text_format)}, but {name} was trained on "
            f"{describe(model.text_format)}: they are different feature spaces"
        )
    if store.index_base != model.index_base:
        raise ModelError(
            f"{store.path} has {store.index_base}-based feature indices but the model was trained on "
            f"{model.index_base}-based ones: they are different feature spaces"
        )
    lines, predicted, decisions = [], [], []
    with progress_bar(store.n_blocks, "predict", unit="block", enabled=progress) as bar:
        for block in store.iter_blocks():
            indices = translate(block.indices, store.feature_map, None, 0)  # the source's zero-based indices
            columns = space.columns(block.indptr, indices, block.lines)  # lines: of the source
            values = model.decisions_of_columns(block.indptr, columns, block.data)
            labels = model.labels_from_decisions(values)
            tally.add(labels, block.labels, block.lines)
            if writer.active:
                lines.append(block.lines)
                predicted.append(labels)
                if writer.decision_values or writer.probability:
                    decisions.append(values)
            bar.update()
    if writer.active:
        order = np.argsort(np.concatenate(lines), kind="stable")
        values = np.concatenate(decisions)[order] if decisions else None
        writer.write(np.concatenate(predicted)[order], values)


class _Writer:
    """Prediction lines to a temporary file, renamed when complete; nothing if no output."""

    def __init__(self, output, model: LinearModel, decision_values: bool, probability: bool = False):
        self.output = Path(output) if output else None
        self.model, self.decision_values, self.probability = model, decision_values, probability
        self.integral = not model.is_regression and all(float(c).is_integer() for c in model.classes)
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
            if self.probability:  # LIBLINEAR's -b 1 header
                self.file.write("labels " + " ".join(self._labels(self.model.classes)) + "\n")
        return self

    def _labels(self, labels: np.ndarray) -> np.ndarray:
        return labels.astype(np.int64).astype(str) if self.integral else np.char.mod("%.17g", labels)

    def write(self, labels: np.ndarray, values: np.ndarray | None) -> None:
        if not self.file:
            return
        label_text = self._labels(labels)
        if self.probability:
            values = self.model.probabilities(values)
        if (self.decision_values or self.probability) and values is not None:
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
