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
column ``j - 1``.

The format is dense: a compact model (one with a feature map) is written with a zero row for each
feature of its space it does not use, streamed, so the export holds no more than the model; a file
that would exceed :data:`EXPORT_LIMIT_BYTES` is refused in one line that says its size (LIBLINEAR
would need 8 bytes a weight to load it).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from blocksvm.errors import ModelError, check_writable
from blocksvm.losses import LOSSES, REGRESSION, SQUARED_HINGE

EXPORT_LIMIT_BYTES = 1 << 30
"""LIBLINEAR model files larger than this (1 GiB) are refused: a compact model of a hashed space."""
_ZERO_ROWS = 1 << 16  # zero rows written at a time

# LIBLINEAR's solver types blocksvm applies -> the loss their models minimized
_LOSS_OF_TYPE = {
    "L2R_LR": "logistic",
    "L2R_LR_DUAL": "logistic",
    "L1R_LR": "logistic",
    "L2R_L2LOSS_SVC_DUAL": "squared-hinge",
    "L2R_L2LOSS_SVC": "squared-hinge",
    "L1R_L2LOSS_SVC": "squared-hinge",
    "L2R_L1LOSS_SVC_DUAL": "hinge",
    "MCSVM_CS": "crammer-singer",
    "L2R_L2LOSS_SVR": "squared-epsilon-insensitive",
    "L2R_L2LOSS_SVR_DUAL": "squared-epsilon-insensitive",
    "L2R_L1LOSS_SVR_DUAL": "epsilon-insensitive",
    "ONECLASS_SVM": "one-class",
}


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
    solver = LOSSES.get(model.loss, SQUARED_HINGE).liblinear_type
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
            _write_rows(f, columns, model.feature_map, model.space_features)
            if bias_row is not None:
                _write_rows(f, bias_row[None, :], None, 1)
        os.replace(tmp, path)
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
    """Read a LIBLINEAR model file (a classifier's, logistic regression's, SVR's, Crammer and Singer's or a
    one-class SVM's): the fields of a :class:`~blocksvm.model.LinearModel` (``LinearModel.load`` reads either
    format)."""
    path = Path(path)
    header: dict[str, str] = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.strip().partition(" ")
                if key == "w":
                    break
                header[key] = value
            else:
                raise ModelError(f"{path} is neither a blocksvm model nor a LIBLINEAR model file")
            if header.get("solver_type") not in _LOSS_OF_TYPE:
                raise ModelError(
                    f"{path}: LIBLINEAR solver_type {header.get('solver_type')!r} "
                    "is not a linear model blocksvm can apply"
                )
            loss = _LOSS_OF_TYPE[header["solver_type"]]
            regression = loss in LOSSES and LOSSES[loss].task == REGRESSION
            nr_class = int(header["nr_class"])
            labels = np.array(header.get("label", "0 1" if regression else "").split(), dtype=np.float64)
            n_features = int(header["nr_feature"])
            bias = float(header["bias"])
            rho = float(header["rho"]) if loss == "one-class" else None  # a one-class model decides w.x - rho
            nr_w = 1 if nr_class == 2 and header["solver_type"] != "MCSVM_CS" else nr_class
            rows = n_features + (1 if bias >= 0 else 0)
            W = np.loadtxt(f, max_rows=rows, ndmin=2)
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        raise ModelError(f"{path} is not a readable LIBLINEAR model file: {exc}") from None
    if W.shape != (rows, nr_w):
        raise ModelError(f"{path}: expected {rows} weight rows of {nr_w} values, found {W.shape}")
    classes = np.zeros(0) if regression else np.array([-1.0, 1.0]) if rho is not None else np.sort(labels)
    if rho is not None:  # the offset as the intercept
        coef = W[:n_features].T
        intercept = np.array([-rho])
    elif regression:
        coef = W[:n_features].T
        intercept = W[n_features] * bias if bias >= 0 else np.zeros(1)
    elif nr_w == 1:
        sign = 1.0 if labels[0] == classes[1] else -1.0
        coef = sign * W[:n_features].T
        intercept = sign * W[n_features] * bias if bias >= 0 else np.zeros(1)
    else:
        order = np.argsort(labels)
        coef = W[:n_features, order].T
        intercept = W[n_features, order] * bias if bias >= 0 else np.zeros(nr_class)
    return {
        "coef": np.ascontiguousarray(coef),
        "intercept": np.atleast_1d(intercept).astype(float),
        "classes": classes,
        "bias": bias if bias > 0 else -1.0,
        "index_base": 1,
        "params": {"liblinear_solver": header["solver_type"]},
        "loss": loss,
    }
