"""The scikit-learn face of blocksvm: :class:`BlockSVC` and :class:`BlockSVR`.

``fit(X, y)`` writes the arrays as a temporary block store (rows shuffled, labels encoded as
floats ``0 .. K-1``), trains on it exactly as :func:`blocksvm.train.train` trains on a store made
by ``blocksvm convert``, and removes it; ``fit(store_path)`` trains on a store already on disk,
for data larger than memory. Both end in one shared path, :meth:`BlockSVC._fit_store`.

A fitted model is linear, so scikit-learn's own estimators carry it exactly: ``to_sklearn()`` gives the
fitted ``LinearSVC``, ``LogisticRegression``, ``Perceptron`` or ``LinearSVR`` with the same ``coef_``,
``intercept_`` (the bias weight times ``bias``, as their ``intercept_scaling``) and ``classes_``, so that
their ``decision_function`` and ``predict`` are this estimator's; ``from_sklearn(est)`` goes the other way.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from blocksvm._estimators import (
    LinearDecisions,
    check_weighted_classes,
    checked_sample_weight,
    declared,
    declared_init,
    declared_tune,
    parameters_doc,
    sparse_coef,
    sparse_coef_scores,
)
from blocksvm.errors import ModelError, ParameterError
from blocksvm.features import translate
from blocksvm.io.convert import write_store
from blocksvm.io.text_cache import say_to_stderr, store_or_cached
from blocksvm.losses import LOSSES, NOVELTY, REGRESSION
from blocksvm.model import LinearModel
from blocksvm.params import ESTIMATOR_NAMES, Param
from blocksvm.solvers import SOLVERS
from blocksvm.solvers.problem import empty_fold
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, TrainResult, train
from blocksvm.train.params import PARAMS, TUNE, settle, settle_tune
from blocksvm.train.records import StopRules
from blocksvm.train.tune import Tuner

# Parameters of the estimator besides the training parameters (those of ESTIMATOR_NAMES are named as
# scikit-learn names them).
OWN_PARAMS: dict[str, tuple[object, str]] = {
    "block_rows": (100_000, "Rows per block of the temporary store that ``fit(X, y)`` writes. Range [1, inf)."),
    "random_state": (
        None,
        "int, RandomState instance or None. Seeds the row shuffle of the temporary store and "
        "the block and row orders of training (the training parameter ``seed``).",
    ),
    "verbose": (0, "0 silent, 1 one line per pass (standard error)."),
    "tmp_dir": (None, "Folder for the temporary store (default: the system's temporary folder)."),
    "n_jobs": (
        1,
        "int. Threads solving each block at once (the training parameter ``threads``, docs/PARALLEL.md); 1: the "
        "serial trainer. CoCoA+ shards are ``workers``.",
    ),
}
# The training parameters, as declared: those train reads (seed and threads are random_state and n_jobs here).
TRAINING = declared("train")


# Fitted attributes, removed by the reset that starts every fit.
_FITTED = (
    "coef_",
    "intercept_",
    "classes_",
    "n_features_in_",
    "feature_names_in_",
    "n_iter_",
    "history_",
    "stop_reason_",
    "model_",
)


class BlockSVC(LinearDecisions, ClassifierMixin, BaseEstimator):
    """Linear SVM (L1- or L2-loss, L2-regularized) trained by block minimization.

        Solves LIBLINEAR's problem ``min_w 1/2 ||w||^2 + sum_i C_i loss(y_i w^T [x_i, bias])`` (the
        bias weight is regularized, as LIBLINEAR's ``-B`` and scikit-learn's ``LinearSVC`` do), one
        problem for two classes and one-vs-rest for more, by dual coordinate descent (or Pegasos)
        over blocks of rows read one at a time (Yu, Hsieh, Chang & Lin, KDD 2010).

        Parameters
        ----------
    {parameters}
        Attributes
        ----------
        coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
            Weights; one row (for ``classes_[1]``) with two classes, one row per class with more.
            A scipy CSR matrix of that shape for a store stored compactly (a sparse feature space,
            docs/FORMAT.md), so that it holds only the features the data uses (its transpose in CSR
            form would be as tall as the space: predictions go through ``model_``'s feature map).
        intercept_ : ndarray of shape (1,) or (n_classes,)
            ``bias`` times the bias weight (zeros when ``bias <= 0``).
        classes_ : ndarray of shape (n_classes,)
            Class labels.
        n_features_in_ : int
        feature_names_in_ : ndarray of shape (n_features_in_,)
            Defined only when X has feature names that are all strings.
        n_iter_ : int
            Outer iterations (passes over the data) made.
        history_ : list of dict
            One record per pass (objective, gap, accuracy, seconds, bytes read), see
            :mod:`blocksvm.monitor`.
        stop_reason_ : str
        model_ : LinearModel
            The trained model, for :meth:`LinearModel.save` or LIBLINEAR export. Its classes are the
            labels when they are numbers, else their codes ``0 .. n_classes - 1``.

        See Also
        --------
        blocksvm.train.train : the same training on a store, with checkpoints and validation.
        sklearn.svm.LinearSVC : the in-memory equivalent (LIBLINEAR).

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from blocksvm import BlockSVC
        >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
        >>> clf = BlockSVC(C=0.5, random_state=0).fit(X, y)
        >>> clf.coef_.shape, clf.classes_.tolist()
        ((1, 5), [0, 1])
        >>> bool(clf.score(X, y) > 0.9)
        True
    """

    __init__ = declared_init(TRAINING, OWN_PARAMS)
    _training = TRAINING  # the declared parameters __init__ stores besides OWN_PARAMS
    _fitted = _FITTED

    # ---- fit ------------------------------------------------------------------------------

    def fit(self, X, y=None, sample_weight=None) -> BlockSVC:
        """Train on arrays, or on a block store on disk.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or str, PathLike or
            BlockStore
            Training rows; or the directory of a store made by ``blocksvm convert`` (its labels
            are the targets); or a LIBSVM file, converted once into a cached store beside it
            (``FILE.bsvm-cache``, reused while the file is unchanged).
        y : array-like of shape (n_samples,), or None
            Target labels; must be None when ``X`` is a store.
        sample_weight : array-like of shape (n_samples,), or None
            Each row's instance weight (finite, >= 0): row ``i``'s cost is ``C * class_weight(y_i) *
            sample_weight_i``, as scikit-learn's ``LinearSVC`` reads it; a weight of 0 leaves the row out. None
            for a store: its own weights (``convert --weights``, VW's importance weights), if it has any.

        Returns
        -------
        self : BlockSVC
        """
        self._reset()
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        if _is_store(X):
            if y is not None:
                raise ValueError("y must be None when X is a block store: the store holds the labels")
            _no_weights_for_a_store(sample_weight)
            params = self._train_params(self.class_weight, seed)  # checked before a text file's conversion
            store = _open_store(store_or_cached(X, say=say_to_stderr if self.verbose else None))
            self.n_features_in_ = store.space_features
            self._store_index_base = store.index_base
            return self._fit_store(store, store.classes, params)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32])
        check_classification_targets(y)
        weights = checked_sample_weight(sample_weight, X)
        encoder = LabelEncoder().fit(y)
        classes = encoder.classes_
        if len(classes) < 2:
            raise ValueError(
                f"BlockSVC needs samples of at least 2 classes, but the data contain only one class: {classes[0]!r}"
            )
        check_weighted_classes(y, weights, type(self).__name__)
        codes = encoder.transform(y).astype(np.float64)
        params = self._train_params(_encoded_class_weight(self.class_weight, classes), seed)  # before writing
        block_rows = self._checked_block_rows()
        if params.workers and params.workers > 1:  # each of the n_jobs shards needs blocks of its own
            block_rows = min(block_rows, -(-X.shape[0] // params.workers))
        folder = tempfile.mkdtemp(prefix="blocksvm-fit-", dir=self.tmp_dir)
        try:
            store = _array_store(Path(folder) / "train.bsvm", X, codes, weights, block_rows=block_rows, seed=seed)
            return self._fit_store(store, classes, params)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _reset(self) -> None:
        for name in self._fitted:
            self.__dict__.pop(name, None)
        self._store_index_base = None  # the feature numbering of a training store, if any

    def _fit_store(self, store: BlockStore, classes: np.ndarray, params: TrainParams) -> BlockSVC:
        """The path every fit ends in: train on ``store``, then set the fitted attributes.

        ``classes`` are the labels the store's sorted label values stand for.
        """
        return self._keep(train(store, params, verbose=int(self.verbose), progress=False), classes, params)

    def _keep(self, result: TrainResult, classes: np.ndarray, params: TrainParams) -> BlockSVC:
        """Set the fitted attributes from a training's result; warn if it stopped before its tolerance."""
        reason = result.stop_reason
        if result.interrupted and reason.startswith("stopped by"):
            raise KeyboardInterrupt(f"{type(self).__name__}.fit {reason}")
        model = result.model
        if classes.dtype.kind in "biuf":  # a saved model predicts the labels themselves
            model.classes = classes.astype(np.float64)
        self.classes_ = classes
        self.coef_ = model.coef if model.feature_map is None else sparse_coef(model.coef, *_space(model))
        self.intercept_ = model.intercept
        self.n_iter_ = len(result.history)
        self.history_ = result.history
        self.stop_reason_ = reason
        self.model_ = model
        has_rule = StopRules(params, SOLVERS[params.solver].stop_rules).has_tolerance
        if (has_rule and reason.startswith("max_outer")) or reason.startswith("time limit"):
            gap = model.summary.get("gap")
            warnings.warn(
                f"{type(self).__name__} stopped before its tolerance: {reason}"
                + ("" if gap is None else f" (relative duality gap {gap:.2e})")
                + ("; raise max_outer or time_limit" if "time_limit" in self._training else "; raise max_outer"),
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    def _train_params(self, class_weight, seed: int) -> TrainParams:
        """The estimator's parameters as checked training parameters (the CLI's check)."""
        values = {name: _plain(getattr(self, name)) for name in self._training if name in PARAMS}
        values.update(class_weight=_plain(class_weight), seed=seed, threads=_plain(self.n_jobs))
        if isinstance(values["class_weight"], dict):
            values["class_weight"] = {_plain(k): _plain(v) for k, v in values["class_weight"].items()}
        if values["loss"] in ("squared_hinge", "crammer_singer"):  # scikit-learn's spellings
            values["loss"] = values["loss"].replace("_", "-")
        given = {name: value for name, value in values.items() if value != PARAMS[name].default}
        trained = self._settle(given)
        if LOSSES[trained.loss].task == NOVELTY:
            raise ParameterError(f"{type(self).__name__} classifies: for a one-class SVM use BlockOneClassSVM")
        return trained

    def _settle(self, given: dict) -> TrainParams:
        """The checked training parameters of the values ``given``: train's check."""
        return settle("train", None, given)[0]

    def _checked_block_rows(self) -> int:
        size = _plain(self.block_rows)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ParameterError(f"block_rows must be an integer >= 1, not {self.block_rows!r}")
        return size

    # ---- predict --------------------------------------------------------------------------

    def decision_function(self, X) -> np.ndarray:
        """Decision values.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or a block store, or a LIBSVM file
            A store's rows come out in the order of its source file; a LIBSVM file is converted once into a
            cached store beside it, as ``fit`` does.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            With two classes, > 0 means ``classes_[1]``; with more, one column per class.
        """
        if _is_store(X):
            check_is_fitted(self)
            return self._store_scores(_open_store(X))[0]
        return self._array_scores(X)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Mean accuracy on ``(X, y)``, or on the rows and labels of a store or a LIBSVM file (``y`` None), weighted
        by ``sample_weight`` (scikit-learn's ``score``; for a store, None: its own instance weights, if any)."""
        if _is_store(X):
            if y is not None:
                raise ValueError("y must be None when X is a block store: the store holds the labels")
            check_is_fitted(self)
            scores, labels, weights = self._store_scores(_open_store(X))
            sample_weight = weights if sample_weight is None else sample_weight
            indices = (scores > 0).astype(np.intp) if scores.ndim == 1 else np.argmax(scores, axis=1)
            return float(np.average(self.classes_[indices] == labels, weights=sample_weight))
        return super().score(X, y, sample_weight=sample_weight)

    def _store_scores(self, store: BlockStore) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Decision values, labels and instance weights (None: the store has none) of a store's rows, in source
        order.

        Columns beyond ``n_features_in_`` are ignored (as LIBLINEAR ignores unseen features).
        """
        trained_on = getattr(self, "_store_index_base", None)
        if trained_on is not None and store.index_base != trained_on:
            raise ModelError(
                f"{store.path} has {store.index_base}-based feature indices, the training "
                f"store {trained_on}-based: they are different feature spaces"
            )
        scores, labels, lines, weights = [], [], [], []
        if self.read_threads is not None:
            store.read_threads = self.read_threads
        for block in store.iter_blocks(prefetch=int(self.prefetch)):
            indices = translate(block.indices, store.feature_map, None, 0)  # the source's columns
            scores.append(self.model_.decision_function_csr(block.indptr, indices, block.data))
            labels.append(block.labels)
            lines.append(block.lines)
            weights.append(block.weights)
        order = np.argsort(np.concatenate(lines), kind="stable")
        values = np.concatenate(scores)[order]
        weights = None if not store.weighted else np.concatenate(weights)[order]
        return (values[:, 0] if values.shape[1] == 1 else values), np.concatenate(labels)[order], weights

    # ---- scikit-learn's own estimators -------------------------------------------------------

    def to_sklearn(self):
        """The equivalent fitted scikit-learn estimator, for code that expects one (pipelines, pickles, converters).

        ``LinearSVC`` for the hinge and squared hinge losses (and ``LinearSVC(multi_class="crammer_singer")`` for
        Crammer and Singer's, a row per class even for two classes, as scikit-learn's),
        ``LogisticRegression`` for the logistic loss,
        ``Perceptron`` for the Perceptron's; with ``penalty="l1"`` (LIBLINEAR's -s 5 and 6),
        ``LinearSVC(penalty="l1", dual=False)`` and ``LogisticRegression(penalty="l1", solver="liblinear")``
        (``l1_ratio=1`` from scikit-learn 1.8), the same problems in scikit-learn's liblinear (the elastic net has none:
        scikit-learn's does not penalize the bias); its ``coef_`` (one-vs-rest: a row per class with more than two),
        ``intercept_`` (the bias weight times ``bias``: scikit-learn's ``intercept_scaling``), ``classes_`` and
        ``n_features_in_`` are this estimator's, so its ``decision_function`` and ``predict`` equal this one's on any
        input (``X @ coef_.T + intercept_`` both; to rounding where ``coef_`` is sparse). Its parameters (``C``,
        ``loss``, ``fit_intercept``, ``intercept_scaling``, ``class_weight``) describe the problem that was solved.
        With more than two classes, scikit-learn's ``LogisticRegression.predict_proba`` is the softmax of the
        decision values, where blocksvm (as LIBLINEAR) normalizes each class's sigmoid: the decisions and predictions
        agree, the probabilities do not.

        Returns
        -------
        sklearn.svm.LinearSVC, sklearn.linear_model.LogisticRegression or sklearn.linear_model.Perceptron

        Raises
        ------
        ModelError
            A loss or a penalty scikit-learn has no estimator for.
        """
        check_is_fitted(self)
        from sklearn.linear_model import LogisticRegression, Perceptron
        from sklearn.svm import LinearSVC

        loss = self.model_.loss
        fit_intercept, scaling = _intercept_of(self.bias)
        common = {"fit_intercept": fit_intercept, "class_weight": _plain(self.class_weight)}
        n_iter = int(self.n_iter_)
        penalty = self.model_.params.get("penalty", "l2")
        if penalty == "l1" and loss in ("squared-hinge", "logistic"):  # LIBLINEAR's -s 5 and 6, as scikit-learn's
            C = float(getattr(self, "C_", None) or self.C)
            if loss == "squared-hinge":
                twin = LinearSVC(C=C, penalty="l1", dual=False, intercept_scaling=scaling, **common)
            else:
                l1 = _l1_logistic()
                twin = LogisticRegression(C=C, solver="liblinear", intercept_scaling=scaling, **l1, **common)
                n_iter = np.full(1, n_iter, dtype=np.int32)
        elif penalty != "l2":
            raise ModelError(f"{type(self).__name__} with penalty {penalty!r} has no scikit-learn counterpart")
        elif loss in ("hinge", "squared-hinge"):
            C = float(getattr(self, "C_", None) or self.C)
            twin = LinearSVC(C=C, loss=loss.replace("-", "_"), intercept_scaling=scaling, **common)
        elif loss == "crammer-singer":  # one row per class, two classes included, as scikit-learn's own
            twin = LinearSVC(C=float(self.C), multi_class="crammer_singer", intercept_scaling=scaling, **common)
        elif loss == "logistic":
            C = float(getattr(self, "C_", None) or self.C)
            liblinear = {"solver": "liblinear", "dual": True} if len(self.classes_) == 2 else {}  # its -s 7, binary
            twin = LogisticRegression(C=C, intercept_scaling=scaling, **liblinear, **common)
            n_iter = np.full(1, n_iter, dtype=np.int32)
        elif loss == "perceptron":
            twin = Perceptron(**common)
        else:
            raise ModelError(f"{type(self).__name__} with loss {loss!r} has no scikit-learn counterpart")
        return _fitted_twin(self, twin, np.array(self.intercept_, dtype=np.float64), n_iter)

    @classmethod
    def from_sklearn(cls, estimator) -> BlockSVC:
        """A fitted BlockSVC from a fitted scikit-learn ``LinearSVC`` (Crammer and Singer's too), ``LogisticRegression``
        or ``Perceptron``:
        the same ``coef_``, ``intercept_`` and ``classes_``, hence the same decisions and predictions, and a
        ``model_`` that ``save`` writes (``bias`` is its ``intercept_scaling``, or -1 without an intercept).

        A multinomial ``LogisticRegression`` (more than two classes) keeps its decisions and predictions; its
        probabilities become blocksvm's normalized sigmoids, not the softmax.
        """
        from sklearn.linear_model import LogisticRegression, Perceptron
        from sklearn.svm import LinearSVC

        if isinstance(estimator, LinearSVC):
            loss = "crammer-singer" if estimator.multi_class == "crammer_singer" else estimator.loss.replace("_", "-")
        elif isinstance(estimator, LogisticRegression):
            loss = "logistic"
        elif isinstance(estimator, Perceptron):
            loss = "perceptron"
        else:
            raise ParameterError(
                f"BlockSVC.from_sklearn takes a fitted LinearSVC, LogisticRegression or Perceptron, not "
                f"{type(estimator).__name__}"
            )
        check_is_fitted(estimator)
        bias = _bias_of(estimator)
        C = float(getattr(estimator, "C", 1.0))  # (a Perceptron has none)
        learner = {"solver": "perceptron"} if loss == "perceptron" else {"C": C, "loss": loss}
        if _is_l1(estimator) and loss in ("squared-hinge", "logistic"):
            learner["penalty"] = "l1"
        fitted = cls(bias=bias, class_weight=estimator.class_weight, **learner)
        fitted._reset()
        coef = _dense(estimator.coef_)
        intercept = np.broadcast_to(np.asarray(estimator.intercept_, dtype=np.float64), (coef.shape[0],)).copy()
        classes = np.asarray(estimator.classes_)
        model_classes = (
            classes.astype(np.float64) if classes.dtype.kind in "biuf" else np.arange(len(classes), dtype=float)
        )
        fitted.model_ = LinearModel(coef, intercept, model_classes, bias, index_base=0, loss=loss,
                                    params={"penalty": learner.get("penalty", "l2")})  # fmt: skip
        fitted.coef_, fitted.intercept_, fitted.classes_ = coef, intercept, classes
        _take_fitted(fitted, estimator)
        return fitted


def _l1_logistic() -> dict:
    """``LogisticRegression``'s L1 penalty: ``l1_ratio=1`` where scikit-learn (1.8 on) deprecates ``penalty``."""
    from sklearn.linear_model import LogisticRegression

    return {"l1_ratio": 1.0} if LogisticRegression().get_params()["penalty"] == "deprecated" else {"penalty": "l1"}


def _is_l1(estimator) -> bool:
    """A scikit-learn ``LinearSVC`` or ``LogisticRegression`` of the L1 penalty (``penalty="l1"``, or ``l1_ratio=1``
    where ``penalty`` is deprecated)."""
    penalty = getattr(estimator, "penalty", "l2")
    return penalty == "l1" or (penalty == "deprecated" and getattr(estimator, "l1_ratio", 0.0) == 1.0)


def _intercept_of(bias: float) -> tuple[bool, float]:
    """scikit-learn's ``fit_intercept`` and ``intercept_scaling`` of a blocksvm ``bias`` (<= 0: none)."""
    bias = float(_plain(bias))
    return (True, bias) if bias > 0 else (False, 1.0)


def _bias_of(estimator) -> float:
    """blocksvm's ``bias`` of a scikit-learn linear estimator: its ``intercept_scaling`` (1 if it has none), -1 without
    an intercept."""
    return float(getattr(estimator, "intercept_scaling", 1.0)) if estimator.fit_intercept else -1.0


def _dense(coef) -> np.ndarray:
    return np.asarray(coef.toarray() if sp.issparse(coef) else coef, dtype=np.float64).copy()


def _fitted_twin(source, twin, intercept, n_iter):
    """``twin`` given ``source``'s fitted attributes: its weights, intercept, classes and input features."""
    twin.coef_ = source.coef_.copy()
    twin.intercept_ = intercept
    if hasattr(source, "classes_"):
        twin.classes_ = np.array(source.classes_, copy=True)
    twin.n_features_in_ = source.n_features_in_
    if hasattr(source, "feature_names_in_"):
        twin.feature_names_in_ = np.array(source.feature_names_in_, copy=True)
    twin.n_iter_ = n_iter
    return twin


def _take_fitted(target, estimator) -> None:
    """The fitted attributes a blocksvm estimator made ``from_sklearn`` shares with scikit-learn's ``estimator``."""
    target.n_features_in_ = int(estimator.n_features_in_)
    if hasattr(estimator, "feature_names_in_"):
        target.feature_names_in_ = np.array(estimator.feature_names_in_, copy=True)
    target.n_iter_ = int(np.max(getattr(estimator, "n_iter_", 0)))
    target.history_ = []
    target.stop_reason_ = f"from scikit-learn's {type(estimator).__name__}"


def _space(model) -> tuple[np.ndarray, int]:
    return model.feature_map, model.space_features


def _array_store(path: Path, X, labels: np.ndarray, weights=None, *, block_rows: int, seed: int) -> BlockStore:
    """Rows of ``X`` (CSR or dense) and their instance weights (None: none) as a block store through
    :func:`blocksvm.write_store`, rows shuffled, in ``X``'s precision (float32 or float64): the one writer of rows
    that are not text."""
    write_store(
        (X, labels), path, sample_weight=weights, block_rows=block_rows, seed=seed, dtype=X.dtype.name, progress=False
    )
    return BlockStore(path)


def _no_weights_for_a_store(sample_weight) -> None:
    if sample_weight is not None:
        raise ValueError(
            "sample_weight must be None when X is a block store: the store holds its instance weights (convert "
            "--weights FILE, VW's importance weights, write_store(sample_weight=))"
        )


def _plain(value):
    """A NumPy scalar (from a parameter grid, say) as the Python number the checks expect."""
    return value.item() if isinstance(value, np.generic) else value


def _is_store(X) -> bool:
    return isinstance(X, (str, os.PathLike, BlockStore))


def _open_store(X) -> BlockStore:
    """A store as given, or the store at a path: a store's directory, or a LIBSVM file's cached store."""
    return X if isinstance(X, BlockStore) else BlockStore(store_or_cached(X, say=None))


def _encoded_class_weight(class_weight, classes: np.ndarray):
    """``class_weight`` with labels replaced by their codes (the store's float labels)."""
    if class_weight is None or isinstance(class_weight, str):
        return class_weight
    if not isinstance(class_weight, dict):
        return class_weight  # refused, with its name, by TrainParams.validate
    codes = {label: code for code, label in enumerate(classes.tolist())}
    encoded = {}
    for label, weight in class_weight.items():
        if _plain(label) not in codes:
            raise ParameterError(
                f"class_weight names label {label!r}, which is not among the classes {classes.tolist()}"
            )
        encoded[float(codes[_plain(label)])] = weight
    return encoded


BlockSVC.__doc__ = BlockSVC.__doc__.replace("{parameters}", parameters_doc(TRAINING, OWN_PARAMS))


def for_regression(params: dict[str, Param]) -> dict[str, Param]:
    """A classifier's parameters as its regressor's: no class weights, LIBLINEAR's L1-loss SVR (-s 13) by default."""
    return {
        name: dataclasses.replace(p, default="epsilon-insensitive") if name == "loss" else p
        for name, p in params.items()
        if name != "class_weight"
    }


def _regression_only(trained: TrainParams, regressor: str) -> TrainParams:
    if LOSSES[trained.loss].task != REGRESSION:
        classifier = regressor.replace("SVR", "SVC")
        raise ParameterError(f"{regressor} minimizes a regression loss, not loss={trained.loss!r}: use {classifier}")
    return trained


_DENSE_LIMIT = 1 << 27  # features of a dense coef_ that to_sklearn writes out for LinearSVR (a gigabyte)


def _dense_coef(coef, twin: str) -> np.ndarray:
    """``coef`` (one weight vector, dense or a sparse column) as the dense vector ``twin``'s ``coef_`` holds;
    refused past :data:`_DENSE_LIMIT` features."""
    if not sp.issparse(coef):
        return coef
    if coef.shape[0] > _DENSE_LIMIT:
        raise ModelError(f"{twin} holds a dense coef_: {coef.shape[0]:,} features (a sparse space) are too many")
    return coef.toarray().ravel()


# BlockSVR's training parameters: BlockSVC's but the class weights.
REGRESSION_TRAINING = for_regression(TRAINING)


class BlockSVR(RegressorMixin, BaseEstimator):
    """Linear support vector regression (L1- or L2-loss, L2-regularized) trained by block minimization.

        Solves LIBLINEAR's ``-s 13`` (``loss="epsilon-insensitive"``) or ``-s 12``
        (``"squared-epsilon-insensitive"``) problem ``min_w 1/2 ||w||^2 + C sum_i loss(y_i - w^T [x_i, bias])``
        with ``loss(r) = max(0, |r| - epsilon)`` or its square, by dual coordinate descent (Ho & Lin, Neural
        Computation 2012) over blocks of rows read one at a time. ``fit`` takes arrays or a store on disk, as
        :class:`BlockSVC` does.

        Parameters
        ----------
    {parameters}
        Attributes
        ----------
        coef_ : ndarray of shape (n_features,)
            A scipy sparse column of shape (n_features, 1) when the data's feature space is sparse (stored
            compactly, docs/FORMAT.md): it holds only the features the data uses.
        intercept_ : float
        n_features_in_ : int
        n_iter_ : int
        history_ : list of dict
        stop_reason_ : str
        model_ : LinearModel
    """

    __init__ = declared_init(REGRESSION_TRAINING, OWN_PARAMS)
    _training = REGRESSION_TRAINING

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None, sample_weight=None) -> BlockSVR:
        """Train on arrays ``(X, y)`` (real-valued ``y``), or on a store on disk (``y`` None: its labels);
        ``sample_weight``: each row's instance weight, which multiplies its C (None for a store: its own)."""
        self.__dict__.pop("model_", None)
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        params = self._train_params(seed)
        if _is_store(X):
            if y is not None:
                raise ValueError("y must be None when X is a block store: the store holds the targets")
            _no_weights_for_a_store(sample_weight)
            store = _open_store(store_or_cached(X, say=say_to_stderr if self.verbose else None))
            self.n_features_in_ = store.space_features
            return self._fit_store(store, params)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True)
        weights = checked_sample_weight(sample_weight, X)
        folder = tempfile.mkdtemp(prefix="blocksvm-fit-", dir=self.tmp_dir)
        try:
            block_rows = BlockSVC._checked_block_rows(self)
            targets = y.astype(np.float64)
            store = _array_store(Path(folder) / "train.bsvm", X, targets, weights, block_rows=block_rows, seed=seed)
            return self._fit_store(store, params)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _train_params(self, seed: int) -> TrainParams:
        values = {name: _plain(getattr(self, name)) for name in self._training if name in PARAMS}
        values.update(seed=seed, threads=_plain(self.n_jobs))
        values["loss"] = str(values["loss"]).replace("_", "-")  # scikit-learn's spelling too
        given = {name: value for name, value in values.items() if value != PARAMS[name].default}
        return _regression_only(self._settle(given), type(self).__name__)

    _settle = BlockSVC._settle

    def _fit_store(self, store: BlockStore, params: TrainParams) -> BlockSVR:
        return self._keep(train(store, params, verbose=int(self.verbose), progress=False))

    def _keep(self, result: TrainResult) -> BlockSVR:
        """Set the fitted attributes from a training's result."""
        if result.interrupted and result.stop_reason.startswith("stopped by"):
            raise KeyboardInterrupt(f"{type(self).__name__}.fit {result.stop_reason}")
        self.model_ = result.model
        model = result.model
        self.coef_ = model.coef[0] if model.feature_map is None else sparse_coef(model.coef, *_space(model)).T
        self.intercept_ = float(result.model.intercept[0])
        self.n_iter_ = len(result.history)
        self.history_ = result.history
        self.stop_reason_ = result.stop_reason
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted values, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        if sp.issparse(self.coef_):
            return sparse_coef_scores(self.coef_.T, np.atleast_1d(self.intercept_), X)  # coef_: (n_features, 1)
        return np.asarray(safe_sparse_dot(X, self.coef_, dense_output=True)).ravel() + self.intercept_

    # ---- scikit-learn's own estimator --------------------------------------------------------

    def to_sklearn(self):
        """The equivalent fitted ``sklearn.svm.LinearSVR``: the same ``coef_`` (dense, as LinearSVR's always is),
        ``intercept_`` (the bias weight times ``bias``, its ``intercept_scaling``) and ``n_features_in_``, so that its
        ``predict`` equals this one's on any input; its ``C``, ``epsilon``, ``loss``, ``fit_intercept`` and
        ``intercept_scaling`` describe the problem solved.

        Raises
        ------
        ModelError
            A sparse feature space too wide for a dense ``coef_`` (over 2**27 features: a gigabyte).
        """
        check_is_fitted(self)
        from sklearn.svm import LinearSVR

        coef = self.coef_
        coef = _dense_coef(coef, "LinearSVR")
        fit_intercept, scaling = _intercept_of(self.bias)
        twin = LinearSVR(
            C=float(getattr(self, "C_", None) or self.C),
            epsilon=float(self.epsilon),
            loss=self.model_.loss.replace("-", "_"),
            fit_intercept=fit_intercept,
            intercept_scaling=scaling,
        )
        twin = _fitted_twin(self, twin, np.array([self.intercept_], dtype=np.float64), int(self.n_iter_))
        twin.coef_ = np.array(coef, dtype=np.float64)
        return twin

    @classmethod
    def from_sklearn(cls, estimator) -> BlockSVR:
        """A fitted BlockSVR from a fitted ``sklearn.svm.LinearSVR``: the same ``coef_`` and ``intercept_``, hence the
        same predictions, and a ``model_`` that ``save`` writes (``bias``: its ``intercept_scaling``, or -1 without
        an intercept)."""
        from sklearn.svm import LinearSVR

        if not isinstance(estimator, LinearSVR):
            raise ParameterError(f"BlockSVR.from_sklearn takes a fitted LinearSVR, not {type(estimator).__name__}")
        check_is_fitted(estimator)
        bias = _bias_of(estimator)
        loss = estimator.loss.replace("_", "-")
        fitted = cls(C=float(estimator.C), epsilon=float(estimator.epsilon), loss=loss, bias=bias)
        fitted.__dict__.pop("model_", None)
        coef = _dense(estimator.coef_).ravel()
        intercept = float(np.asarray(estimator.intercept_, dtype=np.float64).ravel()[0])
        fitted.model_ = LinearModel(
            coef[None, :].copy(), np.array([intercept]), np.zeros(0), bias, index_base=0, loss=loss
        )
        fitted.coef_, fitted.intercept_ = coef, intercept
        _take_fitted(fitted, estimator)
        return fitted


BlockSVR.__doc__ = BlockSVR.__doc__.replace("{parameters}", parameters_doc(REGRESSION_TRAINING, OWN_PARAMS))


# ---- the one-class SVM --------------------------------------------------------------------------------------

ONE_CLASS_SOLVER = "one-class"


def for_one_class(params: dict[str, Param]) -> dict[str, Param]:
    """The parameters the one-class solver reads, but the loss and the solver (fixed) and what it does not read."""
    solver = SOLVERS[ONE_CLASS_SOLVER]
    return {
        name: p
        for name, p in params.items()
        if (not p.solvers or solver.name in p.solvers) and name not in solver.ignores and name not in ("loss", "solver")
    }


ONE_CLASS_TRAINING = for_one_class(TRAINING)
ONE_CLASS_OWN = {name: own for name, own in OWN_PARAMS.items() if name != "n_jobs"}  # (no threads: one problem)


class BlockOneClassSVM(OutlierMixin, BaseEstimator):
    """Linear one-class SVM (novelty detection), LIBLINEAR's ``-s 21``, trained by block minimization.

        Solves ``min_{w, rho} 1/2 ||w||^2 - nu l rho + sum_i max(0, rho - w.x_i)`` through its dual by LIBLINEAR's
        two-level coordinate descent (Chou, Lin & Lin, SDM 2020) over blocks of rows read one at a time; the
        labels, if any, are not read. It decides ``w.x - rho``: above 0 an inlier (+1), else an outlier (-1), as
        LIBLINEAR (scikit-learn's ``SGDOneClassSVM`` calls a decision of exactly 0 an inlier). ``fit`` takes arrays
        or a store on disk, as :class:`BlockSVC` does; at most ``nu`` of the training rows fall outside, and at
        least ``nu`` of them are support vectors.

        Parameters
        ----------
    {parameters}
        Attributes
        ----------
        coef_ : ndarray of shape (n_features,)
            ``w``; a scipy sparse column of shape (n_features, 1) for a store stored compactly (docs/FORMAT.md).
        offset_ : ndarray of shape (1,)
            ``rho``: ``decision_function(X) = X @ coef_ - offset_``, as scikit-learn's ``SGDOneClassSVM``.
        n_features_in_ : int
        n_iter_ : int
        history_ : list of dict
        stop_reason_ : str
        model_ : LinearModel
            The trained model (``model_.rho``), for :meth:`LinearModel.save` or LIBLINEAR export.

        Examples
        --------
        >>> import numpy as np
        >>> from blocksvm.estimator import BlockOneClassSVM
        >>> X = np.random.default_rng(0).normal(loc=3.0, size=(400, 4))
        >>> detector = BlockOneClassSVM(nu=0.1, random_state=0).fit(X)
        >>> detector.predict([[3.0, 3.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0]]).tolist()
        [1, -1]
    """

    __init__ = declared_init(ONE_CLASS_TRAINING, ONE_CLASS_OWN)
    _training = ONE_CLASS_TRAINING

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None) -> BlockOneClassSVM:
        """Train on the rows of ``X`` (``y`` is not read), or on a store on disk or a LIBSVM file (its labels unread).

        Returns
        -------
        self : BlockOneClassSVM
        """
        for name in ("coef_", "offset_", "n_iter_", "history_", "stop_reason_", "model_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        params = self._train_params(seed)
        if _is_store(X):
            store = _open_store(store_or_cached(X, say=say_to_stderr if self.verbose else None))
            self.n_features_in_ = store.space_features
            return self._keep(train(store, params, verbose=int(self.verbose), progress=False))
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        folder = tempfile.mkdtemp(prefix="blocksvm-fit-", dir=self.tmp_dir)
        try:
            block_rows = BlockSVC._checked_block_rows(self)
            store = _array_store(Path(folder) / "train.bsvm", X, np.zeros(X.shape[0]), block_rows=block_rows, seed=seed)
            return self._keep(train(store, params, verbose=int(self.verbose), progress=False))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _train_params(self, seed: int) -> TrainParams:
        values = {name: _plain(getattr(self, name)) for name in self._training if name in PARAMS}
        given = {name: value for name, value in values.items() if value != PARAMS[name].default}
        return settle("train", None, {**given, "seed": seed, "loss": "one-class"})[0]

    def _keep(self, result: TrainResult) -> BlockOneClassSVM:
        if result.interrupted and result.stop_reason.startswith("stopped by"):
            raise KeyboardInterrupt(f"{type(self).__name__}.fit {result.stop_reason}")
        model = self.model_ = result.model
        self.coef_ = model.coef[0] if model.feature_map is None else sparse_coef(model.coef, *_space(model)).T
        self.offset_ = np.array([model.rho])
        self.n_iter_ = len(result.history)
        self.history_ = result.history
        self.stop_reason_ = result.stop_reason
        if result.stop_reason.startswith(("max_outer", "time limit")):
            warnings.warn(
                f"{type(self).__name__} stopped before its tolerance: {result.stop_reason}; raise max_outer",
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    def score_samples(self, X) -> np.ndarray:
        """``w.x`` of each row, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        if sp.issparse(self.coef_):
            return sparse_coef_scores(self.coef_.T, np.zeros(1), X)
        return np.asarray(safe_sparse_dot(X, self.coef_, dense_output=True)).ravel()

    def decision_function(self, X) -> np.ndarray:
        """``w.x - rho`` of each row, shape (n_samples,): > 0 an inlier."""
        return self.score_samples(X) - self.offset_[0]

    def predict(self, X) -> np.ndarray:
        """+1 (inlier: decision > 0) or -1 (outlier) for each row, shape (n_samples,)."""
        return np.where(self.decision_function(X) > 0, 1, -1)

    def to_sklearn(self):
        """The equivalent fitted ``sklearn.linear_model.SGDOneClassSVM``: the same ``coef_`` (dense) and ``offset_``,
        so its ``decision_function`` and ``score_samples`` equal this one's on any input (and its ``predict`` but at a
        decision of exactly 0, which it calls an inlier); its ``nu`` is this one's.

        Raises
        ------
        ModelError
            A sparse feature space too wide for a dense ``coef_`` (over 2**27 features: a gigabyte).
        """
        check_is_fitted(self)
        from sklearn.linear_model import SGDOneClassSVM

        coef = self.coef_
        coef = _dense_coef(coef, "SGDOneClassSVM")
        twin = SGDOneClassSVM(nu=float(self.nu), random_state=self.random_state)
        twin.coef_ = np.array(coef, dtype=np.float64)
        twin.offset_ = np.array(self.offset_, dtype=np.float64)
        twin.n_features_in_, twin.n_iter_ = self.n_features_in_, int(self.n_iter_)
        if hasattr(self, "feature_names_in_"):
            twin.feature_names_in_ = np.array(self.feature_names_in_, copy=True)
        return twin


BlockOneClassSVM.__doc__ = BlockOneClassSVM.__doc__.replace(
    "{parameters}", parameters_doc(ONE_CLASS_TRAINING, ONE_CLASS_OWN)
)


# ---- C chosen by cross-validation: blocksvm tune behind the estimators --------------------------------------

# BlockSVCCV's parameters: what tune reads (the training parameters but C, which it searches, and its own options
# but refit: fit always refits), tune's folds and C grid under LogisticRegressionCV's names, then BlockSVC's own.
TUNED = declared_tune()
SEARCH_OWN: dict[str, tuple[object, str]] = {
    "cv": (
        TUNE["folds"].default,
        "int. K of K-fold cross-validation (tune's ``folds``): a row's fold is a hash of its position in the store "
        "and the seed drawn from ``random_state`` (docs/TUNE.md). Range [2, inf).",
    ),
    "Cs": (
        TUNE["C_grid"].default,
        "list of float or None. The values of C (tune's ``C_grid``), tried in increasing order, each started from "
        "the solutions at the one before. None: LIBLINEAR's ``-C`` range, from a C small for the data doubling up "
        "to 1024, stopped by ``patience``. Not a number of values, as LogisticRegressionCV's int ``Cs`` is.",
    ),
}
_SEARCH_FITTED = ("C_", "best_score_", "cv_results_", "tune_result_")
TUNED_OWN = {**SEARCH_OWN, **OWN_PARAMS}  # the CV estimators' own parameters: the search's, then BlockSVC's


class _Tuned:
    """What :class:`BlockSVCCV` and :class:`BlockSVRCV` add to the estimators they extend: tune's check of the
    parameters, and a fit that is tune's search on the store and its refit at the best C."""

    def _settle(self, given: dict) -> TrainParams:
        """The checked training parameters of the values ``given``: tune's check (it refuses C and what it does
        not read)."""
        return settle_tune(None, given | self._search_options())[0]

    def _search_options(self) -> dict:
        """The options of tune the parameters give, under tune's names, each checked against its declaration."""
        options = {name: _plain(getattr(self, name)) for name in self._training if name in TUNE}
        for name, alias in ESTIMATOR_NAMES.items():
            if name in TUNE:
                value = getattr(self, alias)
                value = [_plain(v) for v in value] if isinstance(value, (list, tuple, np.ndarray)) else _plain(value)
                if not TUNE[name].accepts(value):
                    raise ParameterError(f"{alias} must be {TUNE[name].range}, not {getattr(self, alias)!r}")
                options[name] = value
        return options

    def _search(self, store: BlockStore, params: TrainParams) -> TrainResult:
        """Cross-validate C on ``store`` (keeping the search's attributes), then train on every row at the best C,
        started from the folds' solutions there: tune's refit."""
        options = settle_tune(params, self._search_options())[2]
        params = dataclasses.replace(params, seed=_seed_of_full_folds(store.n_rows, params.seed, options["folds"]))
        options["refit"] = True  # keep the folds' solutions for the refit (tune's names a file; fit keeps the model)
        tuner = Tuner(store, params, options, verbose=int(self.verbose), progress=False)
        search = tuner.run()
        if search.interrupted:
            raise KeyboardInterrupt(f"{type(self).__name__}.fit {search.stop_reason}")
        self.C_, self.best_score_, self.tune_result_ = search.best_C, search.best_score, search
        points = search.to_dict()["points"]
        self.cv_results_ = {key: np.array([p[key] for p in points]) for key in points[0]}
        return tuner.refit_run(search.best_C, verbose=int(self.verbose))


def _seed_of_full_folds(n_rows: int, seed: int, folds: int) -> int:
    """The estimators' drawn ``seed``, or the first after it whose folds (docs/TUNE.md's hash of a row's position and
    the seed) all hold rows: a few rows hashed into K folds may leave one empty (10 rows in 5 folds: about half the
    seeds), which tune refuses; an estimator draws its seed, so it draws on (a function of ``random_state`` still).
    Fewer rows than folds are refused."""
    if n_rows < folds:
        raise ParameterError(f"cv={folds}: more folds than the n_samples = {n_rows} rows; use fewer folds")
    while empty_fold(n_rows, seed, folds) is not None:
        seed = (seed + 1) % np.iinfo(np.int32).max
    return seed


def _fill_search_doc(estimator: type, params: dict[str, Param], score: str) -> None:
    """A CV estimator's docstring with its parameters and the attributes of its search, ``score`` its metric."""
    doc = estimator.__doc__.replace("{parameters}", parameters_doc(params, TUNED_OWN))
    estimator.__doc__ = doc.replace("{search}", _search_attributes(score))


def _search_attributes(score: str) -> str:
    """The Attributes the search adds, ``score`` naming its metric."""
    return f"""C_ : float
            The C chosen: the best cross-validation score, the smallest C of ties.
        best_score_ : float
            Its score: {score}.
        cv_results_ : dict of ndarray
            One entry per C tried, in increasing order of C: ``C``, ``score``, ``fold_scores`` (shape
            (n_Cs, cv): each fold's held-out score), ``spread`` (their standard deviation), ``primal`` (the mean
            over the folds of their exact primal objectives), ``gap`` (the largest relative duality gap), ``passes``
            (over the store, every fold at once), ``seconds``.
        tune_result_ : TuneResult
            The search as :func:`blocksvm.train.tune` returns it; ``tune_result_.table()`` prints it."""


class BlockSVCCV(_Tuned, BlockSVC):
    """:class:`BlockSVC` with C chosen by K-fold cross-validation out of core, as ``blocksvm tune`` chooses it.

        ``fit`` cross-validates every C of ``Cs`` (by default LIBLINEAR's ``-C`` range) with
        :class:`blocksvm.train.tune.Tuner`: the ``cv`` folds' problems are solved side by side, sharing each block
        read, each C started from the solutions at the C before (Chu, Ho, Chen & Lin, KDD 2015). The CV accuracy is
        LIBLINEAR's ``-v``: correct held-out predictions over all rows (with ``sample_weight``, or a weighted store,
        each row counted by its weight, as ``LogisticRegressionCV`` scores its folds). Then it trains on every row at
        the best C, started from the folds' solutions there (tune's refit): that model predicts, as BlockSVC's does
        (``predict_proba`` with ``loss="logistic"``). ``fit`` takes arrays, a store or a LIBSVM file, as
        BlockSVC's does. Dual CD only: tune scales its dual from one C to the next (docs/TUNE.md).

        Parameters
        ----------
    {parameters}
        Attributes
        ----------
        {search}
        coef_, intercept_, classes_, n_features_in_, feature_names_in_, model_
            As :class:`BlockSVC`'s, of the model trained on every row at ``C_``.
        n_iter_, history_, stop_reason_
            That training's passes, their records and why it stopped.

        See Also
        --------
        blocksvm.train.tune : the same search on a store, with the command line's table.
        sklearn.linear_model.LogisticRegressionCV : the in-memory counterpart.

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from blocksvm import BlockSVCCV
        >>> X, y = make_classification(n_samples=300, n_features=5, random_state=0)
        >>> clf = BlockSVCCV(Cs=[0.01, 0.1, 1.0], cv=3, random_state=0).fit(X, y)
        >>> clf.C_ in (0.01, 0.1, 1.0), clf.cv_results_["fold_scores"].shape
        (True, (3, 3))
    """

    __init__ = declared_init(TUNED, TUNED_OWN)
    _training = TUNED
    _fitted = _FITTED + _SEARCH_FITTED

    def _fit_store(self, store: BlockStore, classes: np.ndarray, params: TrainParams) -> BlockSVCCV:
        return self._keep(self._search(store, params), classes, params)


_fill_search_doc(BlockSVCCV, TUNED, "the held-out accuracy over all rows")

REGRESSION_TUNED = for_regression(TUNED)


class BlockSVRCV(_Tuned, BlockSVR):
    """:class:`BlockSVR` with C chosen by K-fold cross-validation out of core, as ``blocksvm tune`` chooses it.

        As :class:`BlockSVCCV`, for regression: the best C has the lowest cross-validated mean squared error
        (held-out squared errors over all rows), the smallest C of ties.

        Parameters
        ----------
    {parameters}
        Attributes
        ----------
        {search}
        coef_, intercept_, n_features_in_, model_
            As :class:`BlockSVR`'s, of the model trained on every row at ``C_``.
        n_iter_, history_, stop_reason_
            That training's passes, their records and why it stopped.
    """

    __init__ = declared_init(REGRESSION_TUNED, TUNED_OWN)
    _training = REGRESSION_TUNED

    def _fit_store(self, store: BlockStore, params: TrainParams) -> BlockSVRCV:
        return self._keep(self._search(store, params))


_fill_search_doc(BlockSVRCV, REGRESSION_TUNED, "the held-out mean squared error over all rows (lower is better)")
