"""What the scikit-learn estimators share: their parameters, made from the declarations of the command
they face (``BlockSVC``: ``train``; ``BlockSVCCV``: ``tune``; ``OnlineClassifier``: ``partial_fit``), and linear
decisions."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import scipy.sparse as sp
from sklearn.utils._available_if import available_if
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from blocksvm.features import positions
from blocksvm.model import LinearModel
from blocksvm.params import ESTIMATOR_NAMES, Param
from blocksvm.train.params import PARAMS, TUNE, for_command, tune_reads


def checked_sample_weight(sample_weight, X, allow_all_zero: bool = False) -> np.ndarray | None:
    """``sample_weight`` as one float64 a row of ``X``, checked as scikit-learn checks it (a number or one weight a
    row; finite, >= 0; not all 0 unless ``allow_all_zero``); None when it is None or every weight is 1 (rows of
    weight 1 are rows without weights: the same store, bit for bit)."""
    if sample_weight is None:
        return None
    weights = _check_sample_weight(
        sample_weight, X, dtype=np.float64, ensure_non_negative=True, allow_all_zero_weights=allow_all_zero
    )
    return None if np.all(weights == 1.0) else np.array(weights, dtype=np.float64)


def check_weighted_classes(labels: np.ndarray, weights: np.ndarray | None, name: str) -> None:
    """Refuse weights that leave rows of fewer than two classes (a classifier needs two classes to learn)."""
    if weights is None:
        return
    left = np.unique(labels[weights > 0]).tolist()
    if len(left) < 2:
        raise ValueError(
            f"{name}: sample_weight leaves rows of one class only ({left[0]!r}, the others weigh 0): a classifier "
            "needs two classes with weight above 0"
        )


def declared(command: str, renamed: tuple[str, ...] = ()) -> dict[str, Param]:
    """The parameters ``command`` reads, with its defaults, but those the estimator names its own way
    (:data:`~blocksvm.params.ESTIMATOR_NAMES` and ``renamed``)."""
    own_names = set(ESTIMATOR_NAMES) | set(renamed)
    return {p.name: solvers_own(p) for p in for_command(command) if p.name not in own_names}


def solvers_own(p: Param) -> Param:
    """``p``, its default None where solvers have their own (``max_outer``: dual CD's 1,000, Newton's 50): in a
    signature the declared default would be a value given, and a value given is what runs."""
    if not p.solver_defaults or p.default is None:
        return p
    own = ", ".join(f"{solver} {value}" for solver, value in p.solver_defaults)
    return dataclasses.replace(
        p, default=None, none_ok=True, expects=f"{p.expects}, or None: the solver's own ({own}; the others {p.default})"
    )


def declared_tune() -> dict[str, Param]:
    """The parameters ``tune`` reads, with its defaults: the training parameters (train's for dual CD, C aside),
    then its own options but ``refit`` (a file; the estimators keep the refitted model), but those the estimators
    name their own way (:data:`~blocksvm.params.ESTIMATOR_NAMES`)."""
    reads = (*(p for p in tune_reads() if p.name in PARAMS), *(p for p in TUNE.values() if p.name != "refit"))
    return {p.name: solvers_own(p) for p in reads if p.name not in ESTIMATOR_NAMES}


def declared_init(params: dict[str, Param], own: dict[str, tuple[object, str]]):
    """``__init__`` storing the declared ``params`` and the estimator's ``own`` ones (keyword-only), with a
    real signature for scikit-learn."""
    defaults = {**{name: p.default for name, p in params.items()}, **{name: d for name, (d, _) in own.items()}}

    def __init__(self, **values):
        unknown = set(values) - set(defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected parameter(s) {', '.join(sorted(unknown))}")
        for name, default in defaults.items():
            setattr(self, name, values.get(name, default))

    keyword = inspect.Parameter.KEYWORD_ONLY
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, keyword, default=default) for name, default in defaults.items()]
    )
    return __init__


def parameters_doc(params: dict[str, Param], own: dict[str, tuple[object, str]]) -> str:
    """The numpydoc Parameters section, from the declarations (its heading indented as the docstrings' headings,
    which their ``{parameters}`` line, indented by 4, stands for)."""
    lines = ["    Parameters", "        ----------"]
    for name, p in params.items():
        lines += [f"    {name} : default={p.default!r}", f"        {p.help} Values: {p.range}."]
    for name, (default, text) in own.items():
        lines += [f"    {name} : default={default!r}", f"        {text}"]
    return "\n".join(lines)


def declared_parameters(params: dict[str, Param], own: dict[str, tuple[object, str]]):
    """A class decorator: the estimator's parameters are the declared ``params`` (its ``_training``) and its ``own``
    ones, which its ``__init__`` stores (:func:`declared_init`) and its docstring's ``{parameters}`` lists."""

    def declare(estimator: type) -> type:
        estimator.__init__ = declared_init(params, own)
        estimator._training = params
        estimator.__doc__ = estimator.__doc__.replace("{parameters}", parameters_doc(params, own))
        return estimator

    return declare


class SparseInput:
    """An estimator that takes sparse input, as scikit-learn's checks read its tags."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearDecisions(SparseInput):
    """``decision_function`` of arrays and ``predict`` for a fitted ``coef_``, ``intercept_``, ``classes_``;
    sparse input welcome."""

    def _array_scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        if sp.issparse(self.coef_):
            return sparse_coef_scores(self.coef_, self.intercept_, X)
        scores = safe_sparse_dot(X, self.coef_.T, dense_output=True) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def decision_function(self, X) -> np.ndarray:
        """Decision values: shape (n_samples,) for two classes (> 0: ``classes_[1]``), else (n_samples, n_classes)."""
        return self._array_scores(X)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels, shape (n_samples,)."""
        scores = self.decision_function(X)
        indices = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[indices]

    def _has_probabilities(self) -> bool:
        if self.loss != "logistic":
            raise AttributeError(
                f"probabilities need loss='logistic' (logistic regression); this estimator has loss={self.loss!r}"
            )
        return True

    @available_if(_has_probabilities)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes), as LIBLINEAR's ``predict_probability``: the sigmoid
        of the decision value for two classes; for more, each one-vs-rest sigmoid, normalized (loss='logistic').

        They differ from scikit-learn's ``LogisticRegression(C=C)`` on the same data because the problems differ: as
        in LIBLINEAR, the intercept is the weight of a constant feature (``bias``) and is penalized with the others,
        where scikit-learn leaves it unpenalized (and its multiclass default is the multinomial loss, not one-vs-rest).
        A large ``bias`` (say 100) makes the penalty on the intercept small and the two close."""
        scores = self.decision_function(X)
        p = 0.5 * (1.0 + np.tanh(0.5 * scores))  # 1 / (1 + exp(-score)) without overflow
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        return p / p.sum(axis=1, keepdims=True)

    @available_if(_has_probabilities)
    def predict_log_proba(self, X) -> np.ndarray:
        """The logarithms of :meth:`predict_proba` (loss='logistic')."""
        return np.log(self.predict_proba(X))


def sparse_coef(W: np.ndarray, feature_map: np.ndarray, width: int) -> sp.csr_matrix:
    """``coef_`` of a sparse feature space: the weights ``W`` (n_problems, len(feature_map)) of the columns
    ``feature_map`` (sorted) as a CSR matrix (n_problems, width), which holds only them."""
    rows = np.repeat(np.arange(W.shape[0]), W.shape[1])
    columns = np.tile(np.asarray(feature_map, np.int64), W.shape[0])
    return sp.csr_matrix((np.ravel(W), (rows, columns)), shape=(W.shape[0], width))


def sparse_coef_scores(coef: sp.csr_matrix, intercept: np.ndarray, X) -> np.ndarray:
    """``X coef^T + intercept`` for a CSR ``coef`` as wide as a sparse feature space, through its columns: never a
    matrix as tall as the space (what ``X @ coef.T`` would build). Shape (n_rows,) for one row of ``coef``."""
    columns = np.unique(coef.indices).astype(np.int64)
    W = np.zeros((coef.shape[0], len(columns)))
    W[np.repeat(np.arange(coef.shape[0]), np.diff(coef.indptr)), positions(columns, coef.indices, 0)] = coef.data
    model = LinearModel(W, np.atleast_1d(intercept).astype(np.float64), np.zeros(0), 1.0, feature_map=columns)
    model.space_features = coef.shape[1]
    return model.decision_function(X)
