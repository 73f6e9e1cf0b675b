"""LIBLINEAR's model text format, both ways, so models move between blocksvm and LIBLINEAR.

The format (LIBLINEAR's ``save_model``)::

    solver_type L2R_L2LOSS_SVC_DUAL
    nr_class 2
    label 1 -1
    nr_feature 123
    bias 1            (-1: no bias feature)
    rho 92948.6       (a one-class model's offset only)
    w
    <nr_w values>     one line per feature, then one for the bias feature if bias >= 0

For two classes there is one weight column and LIBLINEAR predicts ``label[0]`` when the decision
value is positive; for more, one column per class in ``label`` order and the arg-max wins. Crammer and Singer's
models (``MCSVM_CS``) have one column per class even for two classes. A one-class model (``ONECLASS_SVM``) has no
``label`` line and ``bias -1``: it decides ``w.x - rho`` (> 0: +1, else -1). Feature ``j`` of the file (1-based) is
column ``j - 1``. ``solver_type`` names the problem and method (:func:`blocksvm.penalties.liblinear_type`, from
:data:`blocksvm.penalties.LIBLINEAR_SOLVERS`: a Newton model's squared hinge is -s 2's L2R_L2LOSS_SVC, dual CD's
-s 1's L2R_L2LOSS_SVC_DUAL, an L1 model's L1R_L2LOSS_SVC or L1R_LR); reading one, the same table gives the loss
and the penalty.

The format is dense, L1 models' too (LIBLINEAR writes every weight of -s 5 and 6 models): a compact or
sparse model (one with a feature map) is written with a zero row ("0 ") for each feature of its space it
does not hold, streamed, so the export holds no more than the model; a file that would exceed
:data:`EXPORT_LIMIT_BYTES` is refused in one line that says its size (LIBLINEAR would need 8 bytes a
weight to load it). Reading an L1R model keeps only its nonzero rows (a sparse model,
:meth:`~blocksvm.model.LinearModel.keep_nonzero`) when that is smaller, reading the file a chunk of lines at
a time: memory in proportion to its nonzero weights, not to its features.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from blocksvm._hdf5 import fsync_dir
from blocksvm._test_hooks import pause, pause_due
from blocksvm.errors import ModelError, check_writable
from blocksvm.losses import LOSSES, REGRESSION
from blocksvm.penalties import liblinear_type, problem_of_type
from blocksvm.schema import Field, Schema

EXPORT_LIMIT_BYTES = 1 << 30
"""LIBLINEAR model files larger than this (1 GiB) are refused: a compact model of a hashed space."""
_ZERO_ROWS = 1 << 16  # zero rows written at a time
_READ_ROWS = 1 << 16  # weight rows read at a time


def _label_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def write_liblinear_model(model, path: str | os.PathLike) -> Path:
    """Write ``model`` (a :class:`~blocksvm.model.LinearModel`: ``coef``, ``intercept``, ``classes``,
    ``bias``, ``params``) as a LIBLINEAR model file.

    Features are numbered from 1 as LIBLINEAR does, so a model trained on a zero-based store
    is exported with its columns shifted by one (and must be applied to one-based data).

    Raises
    ------
    ModelError
        If ``path`` cannot be written, or the file would be larger than :data:`EXPORT_LIMIT_BYTES`.
    """
    path = Path(path)
    size = export_bytes(model)
    if size > EXPORT_LIMIT_BYTES:
        raise ModelError(
            f"the LIBLINEAR model would take about {size / 1e9:,.1f} GB ({model.space_features:,} features, "
            f"dense), more than {EXPORT_LIMIT_BYTES / 2**30:g} GiB; LIBLINEAR would need "
            f"{8 * model.space_features * model.coef.shape[0] / 1e9:,.1f} GB to load it: keep the blocksvm model"
        )
    coef, classes = model.coef, model.classes
    # LIBLINEAR's single w is for label[0]: our positive class comes first (a regression or one-class model has no
    # labels)
    labels = (
        []
        if model.is_regression or model.rho is not None
        else [classes[1], classes[0]]
        if coef.shape[0] == 1
        else list(classes)
    )
    columns = coef.T
    bias_row = model.intercept / model.bias if model.bias > 0 else None
    solver = model.params.get("liblinear_solver") or liblinear_type(
        model.loss or "squared-hinge", model.params.get("penalty", "l2"), model.params.get("solver", "")
    )
    check_writable(path, "the LIBLINEAR model", ModelError)
    tmp = path.with_name(path.name + ".partial")
    try:
        with open(tmp, "w") as f:
            f.write(f"solver_type {solver}\n")
            f.write(f"nr_class {max(len(classes), 2)}\n")
            if labels:
                f.write("label " + " ".join(_label_text(c) for c in labels) + "\n")
            f.write(f"nr_feature {model.space_features}\n")
            f.write(f"bias {model.bias:.17g}\n" if model.bias > 0 else "bias -1\n")
            if model.rho is not None:
                f.write(f"rho {model.rho:.17g}\n")
            f.write("w\n")
            if pause_due(tmp):  # test-only: the header written, then killed
                f.flush()
                pause()
            _write_rows(f, columns, model.feature_map, model.space_features)
            if bias_row is not None:
                _write_rows(f, bias_row[None, :], None, 1)
            f.flush()
            os.fsync(f.fileno())  # on disk before its final name: a crash leaves no half file under it
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        raise ModelError(f"cannot write the LIBLINEAR model {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


def export_bytes(model) -> int:
    """About how many bytes :func:`write_liblinear_model` writes for ``model``: ``"0 "`` a zero weight, up to
    24 bytes another, a line per feature."""
    nr_w = model.coef.shape[0]
    zero_rows = model.space_features - model.n_features
    return 200 + zero_rows * (2 * nr_w + 1) + (model.n_features + 1) * (24 * nr_w + 1)


def _write_rows(f, rows: np.ndarray, feature_map: np.ndarray | None, width: int) -> None:
    """Row ``k`` of ``rows`` as line ``feature_map[k]`` (``k`` without a map) of ``width`` lines, zeros elsewhere."""
    zero_line = "0 " * rows.shape[1] + "\n"
    written = 0
    for k, row in enumerate(rows):
        line = k if feature_map is None else int(feature_map[k])
        _write_zero_lines(f, zero_line, line - written)
        f.write("".join(f"{v:.17g} " for v in row) + "\n")
        written = line + 1
    _write_zero_lines(f, zero_line, width - written)


def _write_zero_lines(f, zero_line: str, count: int) -> None:
    while count > 0:
        f.write(zero_line * min(count, _ZERO_ROWS))
        count -= _ZERO_ROWS


def read_liblinear_model(path: str | os.PathLike) -> dict:
    """Read a LIBLINEAR model file (a classifier's, logistic regression's or SVR's, L2- or L1-regularized; Crammer
    and Singer's or a one-class SVM's): the fields of a :class:`~blocksvm.model.LinearModel` (``LinearModel.load``
    reads either format)."""
    path = Path(path)
    try:
        with open(path) as f:
            header = HEADER_SCHEMA.check(_read_header(f, path), str(path), ModelError)
            problem = problem_of_type(header["solver_type"])
            if problem is None:
                raise ModelError(
                    f"{path}: LIBLINEAR solver_type {header['solver_type']!r} is not a linear model blocksvm can apply"
                )
            loss, penalty = problem
            regression = loss in LOSSES and LOSSES[loss].task == REGRESSION
            Schema((), rules=(_labels_of(regression or loss == "one-class"),)).check(header, str(path), ModelError)
            nr_class = header["nr_class"]
            labels = np.array(header.get("label", [0.0, 1.0] if regression else []), dtype=np.float64)
            n_features = header["nr_feature"]
            bias = float(header["bias"])
            rho = float(header["rho"]) if loss == "one-class" else None  # a one-class model decides w.x - rho
            nr_w = 1 if nr_class == 2 and header["solver_type"] != "MCSVM_CS" else nr_class
            rows = n_features + (1 if bias >= 0 else 0)
            W, kept = _read_weights(f, path, rows, nr_w, sparse=penalty != "l2")
    except UnicodeDecodeError as exc:
        raise ModelError(f"{path} is not a readable LIBLINEAR model file: {exc}") from None
    bias_row = np.zeros(nr_w)
    if bias >= 0:  # the last row is the bias feature's
        if kept is None:
            bias_row, W = W[n_features], W[:n_features]
        elif len(kept) and kept[-1] == n_features:
            bias_row, W, kept = W[-1], W[:-1], kept[:-1]
    classes = np.zeros(0) if regression else np.array([-1.0, 1.0]) if rho is not None else np.sort(labels)
    if rho is not None:  # the offset as the intercept
        coef, intercept = W.T, np.array([-rho])
    elif regression or nr_w == 1:
        sign = 1.0 if regression or labels[0] == classes[1] else -1.0
        coef, intercept = sign * W.T, sign * bias_row * bias if bias >= 0 else np.zeros(1)
    else:
        order = np.argsort(labels)
        coef, intercept = W[:, order].T, bias_row[order] * bias if bias >= 0 else np.zeros(nr_class)
    fields = {
        "coef": np.ascontiguousarray(coef),
        "intercept": np.atleast_1d(intercept).astype(float),
        "classes": classes,
        "bias": bias if bias > 0 else -1.0,
        "index_base": 1,
        "params": {"liblinear_solver": header["solver_type"], "penalty": penalty},
        "loss": loss,
    }
    if kept is not None:
        fields |= {"feature_map": kept, "space_features": n_features, "sparse": True}
    return fields


_HEADER_LINES = 16  # LIBLINEAR writes 7 at most: a file of more is not one of its models
_HEADER_LINE = 1 << 20  # characters of a header line read at most (a label line of many classes is long)
HEADER_SCHEMA = Schema(
    (
        Field("solver_type", "str"),
        Field("nr_class", "int", low=1, high=1 << 20),
        Field("label", "list", optional=True, items=Field("", "number")),
        Field("nr_feature", "int", low=0, high=1 << 31),
        Field("bias", "number"),
        Field("rho", "number", optional=True),
    )
)
"""What a LIBLINEAR model's header may say (its values read as numbers where they are)."""


def _labels_of(unlabeled: bool):
    """The rule of a header's labels: a classifier's, as many as ``nr_class`` and distinct; a regression or one-class
    model needs none (it has ``rho``, a one-class model)."""

    def rule(header: dict) -> tuple[str, str] | None:
        if unlabeled:
            if "rho" not in header and header["solver_type"] == "ONECLASS_SVM":
                return "rho", "is missing"
            return None
        labels = header.get("label")
        if labels is None:
            return "label", "is missing"
        if len(labels) != header["nr_class"] or len(set(labels)) != len(labels):
            return "label", f"has {len(labels)} labels for nr_class {header['nr_class']} (one a class, distinct)"
        return None

    return rule


def _read_header(f, path: Path) -> dict:
    """The header's lines up to ``w``, a key and its value each, the values as numbers where they are."""
    header = {}
    for _ in range(_HEADER_LINES):
        line = f.readline(_HEADER_LINE)
        key, _, value = line.strip().partition(" ")
        if not line or (not header and key != "solver_type"):
            break
        if key == "w":
            return header
        header[key] = [_number(v) for v in value.split()] if key == "label" else _number(value)
    raise ModelError(f"{path} is neither a blocksvm model nor a LIBLINEAR model file")


def _number(text: str):
    """``text`` as an int or a float when it is one, else as it is (the schema names a field that is not)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _read_weights(f, path: Path, rows: int, nr_w: int, sparse: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``rows`` weight lines of ``nr_w`` values after the header, a chunk of lines at a time: all of them, or with
    ``sparse`` those with a nonzero weight and their row numbers (when fewer than half the rows are; else all)."""
    chunks, numbers, seen = [], [], 0
    while seen < rows:
        lines = [line for _, line in zip(range(min(_READ_ROWS, rows - seen)), f)]
        if not lines:
            break
        try:
            values = np.array(" ".join(lines).split(), dtype=np.float64)
        except ValueError:
            raise ModelError(
                f"{path}: a weight among rows {seen + 1:,} to {seen + len(lines):,} is not a number"
            ) from None
        if not np.isfinite(values).all():
            raise ModelError(f"{path}: a weight among rows {seen + 1:,} to {seen + len(lines):,} is NaN or infinite")
        if values.size != len(lines) * nr_w:
            found = f"{values.size} values in {len(lines)} rows"
            raise ModelError(f"{path}: expected {rows} weight rows of {nr_w} values, found {found}")
        block = values.reshape(len(lines), nr_w)
        if sparse:
            nonzero = np.flatnonzero(np.any(block != 0, axis=1))
            block, rows_kept = block[nonzero], nonzero + seen
            numbers.append(rows_kept)
        chunks.append(block)
        seen += len(lines)
    if seen < rows:
        raise ModelError(f"{path}: expected {rows} weight rows of {nr_w} values, found {seen} rows")
    W = np.concatenate(chunks) if chunks else np.zeros((0, nr_w))
    if not sparse:
        return W, None
    kept = np.concatenate(numbers).astype(np.int64) if numbers else np.zeros(0, np.int64)
    if 2 * len(kept) < rows:
        return W, kept
    dense = np.zeros((rows, nr_w))
    dense[kept] = W
    return dense, None
