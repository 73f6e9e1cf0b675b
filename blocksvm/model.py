"""The trained model: weights, bias, labels, the feature space it expects, and its file formats.

A model file is HDF5 (``MODEL_FORMAT`` version 1): dataset ``coef`` (n_problems, n_features),
dataset ``intercept`` (n_problems,), and JSON attributes ``classes``, ``bias``, ``loss``, ``params``,
``summary`` and ``feature_space`` (``n_features``, ``index_base``, the training store's
fingerprint). A model of a compact store (:mod:`blocksvm.features`) is version 2: it adds the
dataset ``feature_map`` (the original zero-based column of each ``coef`` column, sorted) and the
attribute ``space_features`` (the width of the original space). A **sparse** model (an L1 penalty's, or a LIBLINEAR
-s 5 or 6 model read, when that is smaller) is version 3: its ``feature_map`` holds the columns of its nonzero
weights (its support, not the training data's features) and the attribute ``sparse`` says so, so that a model with
2,000 nonzero weights in a space of 30,000,000 features holds and predicts with 2,000 weights. A model trained on
text other than LIBSVM's (Vowpal Wabbit's hashed names) has the JSON attribute ``text_format``, the training
store's record of the hashing (:mod:`blocksvm.io.vw`), so that ``predict`` reads new text alike; other models
have none. It is written to a temporary name and renamed when complete.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from blocksvm._hdf5 import fsync_dir, open_versioned, write_hdf5
from blocksvm._locks import FileLock
from blocksvm.decision import decision_values
from blocksvm.errors import InUseError, ModelError, check_writable
from blocksvm.features import positions
from blocksvm.liblinear_format import read_liblinear_model
from blocksvm.losses import LOGISTIC_LOSS, LOSSES, ONE_CLASS, REGRESSION
from blocksvm.schema import Array, Arrays, Field, Schema

MODEL_FORMAT = "blocksvm-model"
MODEL_VERSION = 3
"""The newest model version this blocksvm reads and writes: 3 a sparse model, 2 with a feature map, 1 without."""
DENSE_MODEL_VERSION = 1
COMPACT_MODEL_VERSION = 2


@dataclass
class LinearModel:
    """A linear classifier or regressor ``decision(x) = coef @ x + intercept``.

    Attributes
    ----------
    coef : ndarray of float64, shape (n_problems, n_features)
        One row for a binary model (positive class ``classes[1]``), one row per class for
        one-vs-rest.
    intercept : ndarray of float64, shape (n_problems,)
        ``w_bias * bias`` (zeros without a bias term); a one-class model's is ``-rho`` (its ``bias`` is -1: the
        offset is no bias feature).
    classes : ndarray of float64, shape (n_classes,)
        Empty for regression.
    bias : float
        Value of the bias feature used in training (<= 0: none), LIBLINEAR's ``-B``.
    index_base : int
        0 or 1: how feature indices of LIBLINEAR text map to columns (column = index - base).
    params : dict
        Training parameters.
    summary : dict
        Training summary (outer iterations, objective, gap, stop reason, seconds).
    store_fingerprint : str
        Fingerprint of the training store.
    loss : str
        The loss it minimized (a name of :data:`blocksvm.losses.LOSSES`, or ``perceptron``; "" if unknown).
    feature_map : ndarray of int64, shape (n_features,), or None
        A compact model's map: column ``j`` of ``coef`` is the original zero-based column
        ``feature_map[j]`` (sorted); features absent from it have weight 0. None: column ``j`` is ``j``.
    space_features : int
        Width of the original feature space (``n_features`` without a map).
    text_format : dict or None
        How the training text became columns when it was not LIBSVM's indices: the store's ``text`` record
        (VW's names, hashed into ``2**bits`` columns; :mod:`blocksvm.io.vw`). None: LIBSVM's indices.
    sparse : bool
        ``feature_map`` holds the columns of the nonzero weights (:meth:`keep_nonzero`), not the features of the
        training data: a feature of the space absent from it has weight 0, and only indices beyond the space's
        width are outside the model.
    """

    coef: np.ndarray
    intercept: np.ndarray
    classes: np.ndarray
    bias: float
    index_base: int = 1
    params: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    store_fingerprint: str = ""
    loss: str = ""
    feature_map: np.ndarray | None = None
    space_features: int = 0
    text_format: dict | None = None
    sparse: bool = False

    def __post_init__(self):
        if self.feature_map is None:
            self.space_features = self.n_features

    @property
    def n_features(self) -> int:
        """Columns of ``coef``: the features of the space, or of the map for a compact model."""
        return self.coef.shape[1]

    def columns(self, indices: np.ndarray) -> np.ndarray:
        """Original zero-based columns as ``coef``'s columns; a feature outside the model becomes ``n_features``
        or stays beyond it (both ignored by :func:`~blocksvm.decision.decision_values`)."""
        if self.feature_map is None:
            return indices
        return positions(self.feature_map, indices, self.n_features)

    @property
    def rho(self) -> float | None:
        """A one-class model's offset (LIBLINEAR's ``rho``): it decides ``coef @ x - rho``; None for other models."""
        return -float(self.intercept[0]) if self.loss == ONE_CLASS.name else None

    @property
    def nonzero_weights(self) -> int:
        """The weights of features (the bias's aside) that are not zero, over every problem."""
        return int(np.count_nonzero(self.coef))

    def keep_nonzero(self) -> LinearModel:
        """This model holding only the columns with a nonzero weight (:attr:`sparse`), when that takes less memory
        than its columns as they are (a column of the map costs 8 bytes beside its weights); else itself."""
        n_problems = self.coef.shape[0]
        support = np.flatnonzero(np.any(self.coef != 0, axis=0))
        now = 8 * self.n_features * (n_problems + (self.feature_map is not None))
        if 8 * len(support) * (n_problems + 1) >= now:
            return self
        columns = support if self.feature_map is None else np.asarray(self.feature_map, np.int64)[support]
        return dataclasses.replace(
            self, coef=np.ascontiguousarray(self.coef[:, support]), feature_map=columns, sparse=True
        )

    def info(self) -> dict:
        """What ``blocksvm info MODEL`` prints: the problem, the feature space, the weights (nonzero and stored) and
        the training's end, from the model's own fields."""
        return {
            "loss": self.loss or None,
            "penalty": self.params.get("penalty", "l2"),
            "solver": self.params.get("solver"),
            "classes": self.classes.tolist(),
            "problems": int(self.coef.shape[0]),
            "features": int(self.space_features),
            "stored_columns": int(self.n_features),
            "sparse": bool(self.sparse),
            "nonzero_weights": self.nonzero_weights,
            "bias": float(self.bias),
            "intercept": self.intercept.tolist(),
            "objective": self.summary.get("primal"),
            "stop_reason": self.summary.get("stop_reason"),
        }

    @property
    def is_regression(self) -> bool:
        return self.loss in LOSSES and LOSSES[self.loss].task == REGRESSION

    def probabilities(self, values: np.ndarray) -> np.ndarray:
        """Class probabilities from decision values (n_rows, n_problems), shape (n_rows, n_classes) in ``classes``
        order, as LIBLINEAR's ``predict_probability``: ``1 / (1 + exp(-v))`` of the positive class for two classes;
        for more, each one-vs-rest problem's, normalized to sum 1. Only a logistic model has them."""
        if self.loss != LOGISTIC_LOSS.name:
            raise ModelError(
                f"probabilities need a logistic regression model (train with --loss logistic); this one minimized "
                f"the {self.loss or 'unknown'} loss"
            )
        p = 0.5 * (1.0 + np.tanh(0.5 * np.asarray(values, dtype=np.float64)))  # 1 / (1 + exp(-v)) without overflow
        if p.shape[1] == 1:
            return np.hstack([1.0 - p, p])
        return p / p.sum(axis=1, keepdims=True)

    @classmethod
    def from_weights(cls, W: np.ndarray, classes, bias: float, **kwargs) -> LinearModel:
        """From solver weights of shape (n_problems, n_features + 1) (last column: bias feature)."""
        W = np.asarray(W, dtype=np.float64)
        intercept = W[:, -1] * bias if bias > 0 else np.zeros(W.shape[0])
        if kwargs.get("loss") == ONE_CLASS.name:  # the last weight is -rho, an offset, not a bias feature's weight
            intercept, bias = W[:, -1].copy(), -1.0
        return cls(W[:, :-1].copy(), intercept, np.asarray(classes, dtype=np.float64), float(bias), **kwargs)

    def weights_in(self, feature_map: np.ndarray | None, n_features: int) -> tuple[np.ndarray, int]:
        """The weights in another space's columns (a store's: dense of ``n_features``, or compact with
        ``feature_map``), as :meth:`weights` lays them out, and how many of the model's features that space
        lacks (their weights are left out)."""
        if feature_map is None and self.feature_map is None and self.n_features <= n_features:
            return self.weights(n_features), 0
        own = self.feature_map if self.feature_map is not None else np.arange(self.n_features)
        at = own if feature_map is None else positions(feature_map, own, n_features)
        inside = at < n_features
        W = np.zeros((self.coef.shape[0], n_features + 1))
        W[:, at[inside]] = self.coef[:, inside]
        W[:, -1] = self.intercept / self.bias if self.bias > 0 else 0.0
        return W, int(np.count_nonzero(~inside))

    def weights(self, n_features: int | None = None) -> np.ndarray:
        """The weights as solvers hold them, shape (n_problems, n_features + 1): the features (zeros beyond the
        model's, up to ``n_features``), then the bias feature's weight ``intercept / bias``."""
        n_features = self.n_features if n_features is None else n_features
        W = np.zeros((self.coef.shape[0], n_features + 1))
        W[:, : self.n_features] = self.coef
        W[:, -1] = self.intercept / self.bias if self.bias > 0 else 0.0
        return W

    def decision_function_csr(self, indptr, indices, data) -> np.ndarray:
        """Decision values of CSR rows (original zero-based columns), shape (n_rows, n_problems).

        Features outside the model's (beyond its features, or absent from its map) are ignored, as
        LIBLINEAR does.
        """
        return self.decisions_of_columns(indptr, self.columns(indices), data)

    def decisions_of_columns(self, indptr, columns, data) -> np.ndarray:
        """Decision values of CSR rows whose indices are already the model's ``columns`` (:meth:`columns`)."""
        W = np.concatenate([self.coef, self.intercept[:, None]], axis=1)
        return decision_values(indptr, columns, data, W, 1.0)

    def decision_function(self, X) -> np.ndarray:
        """Decision values of a scipy sparse or dense matrix: shape (n_rows,) if binary, else (n_rows, n_classes)."""
        import scipy.sparse as sp

        X = sp.csr_matrix(X)
        X.sort_indices()
        values = self.decision_function_csr(
            X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64)
        )
        return values[:, 0] if self.coef.shape[0] == 1 else values

    def labels_from_decisions(self, values: np.ndarray) -> np.ndarray:
        """Predicted labels (regression: values) from decision values of shape (n_rows, n_problems)."""
        if self.is_regression:
            return values[:, 0].copy()
        if values.shape[1] == 1:
            return np.where(values[:, 0] > 0, self.classes[1], self.classes[0])
        return self.classes[np.argmax(values, axis=1)]

    def predict(self, X) -> np.ndarray:
        values = self.decision_function(X)
        return self.labels_from_decisions(values.reshape(len(values), -1))

    # ---- files ----------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model (temporary name, then rename).

        Raises
        ------
        ModelError
            If ``path`` cannot be written (no such folder, a directory, permission denied, disk
            full); no file is left behind.
        """
        path = Path(path)
        check_writable(path, "the model", ModelError)
        tmp = path.with_name(path.name + ".partial")

        def fill(f: h5py.File) -> None:
            f.attrs["format"] = MODEL_FORMAT
            mapped = MODEL_VERSION if self.sparse else COMPACT_MODEL_VERSION
            f.attrs["version"] = DENSE_MODEL_VERSION if self.feature_map is None else mapped
            if self.sparse:  # (an older blocksvm would take its support for the training features: version 3)
                f.attrs["sparse"] = True
            if self.feature_map is not None:
                f.create_dataset("feature_map", data=np.asarray(self.feature_map, np.int64), compression="gzip")
                f.attrs["space_features"] = self.space_features
            # gzip where most weights are 0 (an L1 model's file is then a fraction of its bytes); dense float64 weights
            # shrink by a tenth at 0.23 s a million (the end of every stream), so they are written as they are
            squeezed = 2 * np.count_nonzero(self.coef) < self.coef.size
            f.create_dataset("coef", data=self.coef, **({"compression": "gzip", "shuffle": True} if squeezed else {}))
            f.create_dataset("intercept", data=self.intercept)
            f.attrs["classes"] = json.dumps(self.classes.tolist())
            f.attrs["bias"] = self.bias
            f.attrs["loss"] = self.loss
            f.attrs["index_base"] = self.index_base
            f.attrs["params"] = json.dumps(self.params)
            f.attrs["summary"] = json.dumps(self.summary, default=float)
            f.attrs["store_fingerprint"] = self.store_fingerprint
            if self.text_format is not None:
                f.attrs["text_format"] = json.dumps(self.text_format)

        try:
            write_hdf5(tmp, fill)
            os.replace(tmp, path)
            fsync_dir(path.parent)  # the rename survives a crash
        except OSError as exc:
            raise ModelError(f"cannot write the model {path}: {exc.strerror or exc}") from None
        finally:
            tmp.unlink(missing_ok=True)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> LinearModel:
        """Read a model file written by :meth:`save` (or a LIBLINEAR model text file)."""
        path = Path(path)
        if not path.exists():
            raise ModelError(f"{path}: no such model file")
        if path.is_dir():
            raise ModelError(f"{path} is a directory (a block store?), not a model file")
        if not h5py.is_hdf5(path):
            return cls(**read_liblinear_model(path))
        try:
            with open_versioned(path, MODEL_FORMAT, MODEL_VERSION, "model", ModelError) as f:
                fields = _checked_fields(f, path)
        except ModelError:
            raise
        except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:  # h5py's errors of a damaged file
            raise ModelError(f"{path} is not a readable model: {_first_line(exc)}") from None
        return cls(**fields)


# ---- what a model file may say (blocksvm.schema) -----------------------------------------------------------------

_JSON_ATTRIBUTES = ("classes", "params", "summary", "text_format")


def _classes_fit(a: dict) -> tuple[str, str] | None:
    classes, problems, loss = a["classes"], a["problems"], a.get("loss", "")
    if any(x >= y for x, y in zip(classes, classes[1:])):
        return "classes", "is not sorted and distinct"
    if loss in LOSSES and LOSSES[loss].task == REGRESSION:
        return None if problems == 1 else ("coef", f"has {problems} rows: a regression model has one")
    if len(classes) < 2:
        return "classes", f"has {len(classes)} classes: a classifier has two or more"
    if problems != len(classes) and not (problems == 1 and len(classes) == 2):
        return "coef", f"has {problems} rows for {len(classes)} classes (one, or one a class)"
    return None


MODEL_ATTRIBUTES = Schema(
    (
        Field("classes", "list", items=Field("", "number")),
        Field("bias", "number"),
        Field("index_base", "int", choices=(0, 1)),
        Field("params", "dict"),
        Field("summary", "dict"),
        Field("store_fingerprint", "str"),
        Field("loss", "str", optional=True),
        Field("space_features", "int", optional=True, low=0, high=1 << 31),
        Field("text_format", "dict", optional=True, null=True),
        Field("sparse", "bool", optional=True),
    ),
    rules=(_classes_fit,),
)
"""What a model file's attributes may say (the JSON ones parsed); its datasets: :func:`_model_arrays`."""
_MOST_RATIO = (
    1100  # deflate's largest ratio, and then some: a model's arrays hold no more than its file this many times
)


def _rows(context: dict) -> str:
    return f"coef has {context['problems']} rows"


def _model_arrays(version: int) -> Arrays:
    return Arrays(
        (
            Array("coef", kinds="f", ndim=2),
            Array(
                "intercept", kinds="f", length=lambda c: c["problems"], of=lambda c: f"coef has {c['problems']} rows"
            ),
            Array(
                "feature_map",
                kinds="iu",
                optional=version < COMPACT_MODEL_VERSION,
                length=lambda c: c["columns"],
                of=lambda c: f"coef has {c['columns']:,} columns",
            ),
        )
    )


def _checked_fields(f: h5py.File, path: Path) -> dict:
    """The fields of a :class:`LinearModel` from the open model file ``f``, every one checked before it is trusted:
    the attributes (types, ranges, classes against the weights' rows), the datasets' types and shapes from the
    metadata, their size against the file's (no more than its bytes can hold compressed), then their values."""
    version = int(f.attrs["version"])
    attributes = {name: _attribute(f, name, path) for name in f.attrs if name not in ("format", "version")}
    stored = {name: f[name] for name in ("coef", "intercept", "feature_map") if name in f}  # (f.get: damaged = absent)
    shape = getattr(stored.get("coef"), "shape", ())
    context = {"problems": shape[0] if len(shape) == 2 else 0, "columns": shape[-1] if len(shape) == 2 else 0}
    _model_arrays(version).check(stored, str(path), ModelError, context)
    MODEL_ATTRIBUTES.check({**attributes, "problems": context["problems"]}, str(path), ModelError)
    values = sum(int(np.prod(f[name].shape)) for name in ("coef", "intercept", "feature_map") if name in f)
    if 8 * values > _MOST_RATIO * max(f.id.get_filesize(), 1):
        raise ModelError(f"{path}: field 'coef' claims {values:,} values, more than a file of its size holds")
    coef, intercept = f["coef"][()].astype(np.float64), f["intercept"][()].astype(np.float64)
    feature_map = f["feature_map"][()].astype(np.int64) if "feature_map" in f else None
    space = attributes.get("space_features", 0)
    for name, array in (("coef", coef), ("intercept", intercept)):
        if not np.isfinite(array).all():
            raise ModelError(f"{path}: field '{name}' holds a value that is NaN or infinite")
    if feature_map is not None and not _sorted_within(feature_map, space):
        raise ModelError(f"{path}: field 'feature_map' is not sorted within the model's {space:,} features")
    if attributes.get("sparse") and feature_map is None:
        raise ModelError(f"{path}: field 'sparse' is true, but the model has no feature_map")
    return {
        "coef": coef,
        "intercept": intercept,
        "classes": np.array(attributes["classes"], dtype=np.float64),
        "bias": float(attributes["bias"]),
        "index_base": attributes["index_base"],
        "params": attributes["params"],
        "summary": attributes["summary"],
        "store_fingerprint": attributes["store_fingerprint"],
        "loss": attributes.get("loss", attributes["params"].get("loss", "")),
        "feature_map": feature_map,
        "space_features": space,
        "text_format": attributes.get("text_format"),
        "sparse": attributes.get("sparse", False),
    }


def _attribute(f: h5py.File, name: str, path: Path):
    """An attribute as a plain value: numbers and booleans as Python's, strings decoded, JSON ones parsed."""
    value = f.attrs[name]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, np.generic):
        value = value.item()
    if name in _JSON_ATTRIBUTES and isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ModelError(f"{path}: field '{name}' is not JSON ({_first_line(exc)})") from None
    if isinstance(value, np.ndarray):  # an attribute written as an array: not one of a model's
        return value.tolist()
    return value


def _sorted_within(columns: np.ndarray, width: int) -> bool:
    """Whether ``columns`` increase strictly and lie in ``0 .. width - 1``."""
    return len(columns) == 0 or (columns[0] >= 0 and columns[-1] < width and bool(np.all(np.diff(columns) > 0)))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def load_warm_start(path: str | os.PathLike) -> LinearModel:
    """The model at ``path`` for a run to continue from (``--warm-start``), read under a shared lock on ``PATH.lock``
    (:func:`load_shared`).

    Raises
    ------
    InUseError
        Another run is writing ``path``.
    """
    return load_shared(path, "warm-start from it")


def load_shared(path: str | os.PathLike, then: str = "read it") -> LinearModel:
    """The model at ``path``, read under a shared lock on ``PATH.lock``: refused while another run writes ``path`` (its
    exclusive lock, :func:`blocksvm.checkpoint.writing`), since that run replaces the model when it ends. A run that
    writes the model it reads (``train DATA M --warm-start M``) holds that lock itself, and reads it. ``then`` says
    what to do once the writer has ended (``"predict with it"``).

    Raises
    ------
    InUseError
        Another run is writing ``path``.
    """
    path = Path(path)
    lock = FileLock(path.with_name(path.name + ".lock"), shared=True, optional=True)
    lock.acquire_or_raise(
        lambda owner: InUseError(
            f"the model {path} is being written by another run ({owner or 'another process'}): {then} once that run "
            "has ended"
        )
    )
    try:
        return LinearModel.load(path)
    finally:
        lock.release()
