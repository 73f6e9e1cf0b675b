"""BlockSVC: linear classification (SVMs, logistic regression, the Perceptron) by block minimization, as a
scikit-learn estimator (the fit on arrays or on a store: :mod:`blocksvm.estimator.fitting`; its scikit-learn twins:
:mod:`blocksvm.estimator.twins`)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from blocksvm._estimators import (
    LinearDecisions,
    check_weighted_classes,
    checked_sample_weight,
    declared_parameters,
)
from blocksvm.errors import ModelError, ParameterError
from blocksvm.estimator import fitting
from blocksvm.estimator.twins import SVCTwin
from blocksvm.features import translate
from blocksvm.losses import LOSSES, NOVELTY
from blocksvm.solvers import SOLVERS
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, TrainResult, train
from blocksvm.train.params import faster_solver, settle
from blocksvm.train.records import StopRules

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


@declared_parameters(fitting.TRAINING, fitting.OWN_PARAMS)
class BlockSVC(SVCTwin, LinearDecisions, ClassifierMixin, BaseEstimator):
    """Linear SVM (L1- or L2-loss, L2-regularized) trained by block minimization.

        Solves LIBLINEAR's problem ``min_w 1/2 ||w||^2 + sum_i C_i loss(y_i w^T [x_i, bias])`` (the
        bias weight is regularized, as LIBLINEAR's ``-B`` and scikit-learn's ``LinearSVC`` do), one
        problem for two classes and one-vs-rest for more, by dual coordinate descent (or Pegasos)
        over blocks of rows read one at a time (Yu, Hsieh, Chang & Lin, KDD 2010).

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

    _fitted = _FITTED

    # ---- fit ------------------------------------------------------------------------------

    def fit(self, X, y=None, sample_weight=None) -> BlockSVC:
        """Train on arrays, or on a block store on disk.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or str, PathLike or
            BlockStore
            Training rows; or the directory of a store made by ``blocksvm convert`` (its labels
            are the targets); or a LIBSVM file, converted once into a cached store in the user's cache folder
            (``~/.cache/blocksvm``, ``$BLOCKSVM_CACHE_DIR``; reused while the file is unchanged).
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
        seed = fitting.drawn_seed(self.random_state)
        if fitting.is_store(X):
            fitting.no_labels_for_a_store(y)
            fitting.no_weights_for_a_store(sample_weight)
            params = self._train_params(self.class_weight, seed)  # checked before a text file's conversion
            store = fitting.open_store(X, self.verbose)
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
        params = self._train_params(_encoded_class_weight(self.class_weight, classes), seed, X.shape)  # before writing
        block_rows = fitting.checked_block_rows(self)
        if params.workers and params.workers > 1:  # each of the n_jobs shards needs blocks of its own
            block_rows = min(block_rows, -(-X.shape[0] // params.workers))
        with fitting.array_store(self, X, codes, weights, seed=seed, block_rows=block_rows) as store:
            return self._fit_store(store, classes, params)

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
        fitting.keep_result(self, result)
        reason, model = result.stop_reason, result.model
        if classes.dtype.kind in "biuf":  # a saved model predicts the labels themselves
            model.classes = classes.astype(np.float64)
        self.classes_ = classes
        self.coef_ = fitting.coef_of(model)
        self.intercept_ = model.intercept
        has_rule = StopRules(params, SOLVERS[params.solver].stop_rules).has_tolerance
        if (has_rule and reason.startswith("max_outer")) or reason.startswith("time limit"):
            gap = model.summary.get("gap")
            faster = faster_solver(params)
            remedy = f", or give solver='{faster}': it converges in fewer passes on scaled or dense data"
            warnings.warn(
                f"{type(self).__name__} stopped before its tolerance: {reason}"
                + ("" if gap is None else f" (relative duality gap {gap:.2e})")
                + ("; raise max_outer or time_limit" if "time_limit" in self._training else "; raise max_outer")
                + (remedy if faster else ""),
                ConvergenceWarning,
                stacklevel=3,
            )
        return self

    def _train_params(self, class_weight, seed: int, shape: tuple[int, int] | None = None) -> TrainParams:
        """The estimator's parameters as checked training parameters (the CLI's check); ``shape``: the arrays' (rows,
        features), which choose the solver ``"auto"`` names (None: a store's, dual CD)."""
        values = fitting.training_values(self)
        values.update(class_weight=fitting.plain(class_weight), seed=seed, threads=fitting.plain(self.n_jobs))
        if isinstance(values["class_weight"], dict):
            values["class_weight"] = {fitting.plain(k): fitting.plain(v) for k, v in values["class_weight"].items()}
        if values["loss"] in ("squared_hinge", "crammer_singer"):  # scikit-learn's spellings
            values["loss"] = values["loss"].replace("_", "-")
        trained = self._settle(fitting.not_default(values, self._training), shape)
        if LOSSES[trained.loss].task == NOVELTY:
            raise ParameterError(f"{type(self).__name__} classifies: for a one-class SVM use BlockOneClassSVM")
        return trained

    def _settle(self, given: dict, shape: tuple[int, int] | None = None) -> TrainParams:
        """The checked training parameters of the values ``given`` (``shape``: the data's, for the solver "auto"):
        train's check."""
        return settle("train", None, given, shape=shape)[0]

    # ---- predict --------------------------------------------------------------------------

    def decision_function(self, X) -> np.ndarray:
        """Decision values.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or a block store, or a LIBSVM file
            A store's rows come out in the order of its source file; a LIBSVM file is converted once into a
            cached store, as ``fit`` does.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            With two classes, > 0 means ``classes_[1]``; with more, one column per class.
        """
        if fitting.is_store(X):
            check_is_fitted(self)
            return self._store_scores(fitting.open_store(X))[0]
        return self._array_scores(X)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Mean accuracy on ``(X, y)``, or on the rows and labels of a store or a LIBSVM file (``y`` None), weighted
        by ``sample_weight`` (scikit-learn's ``score``; for a store, None: its own instance weights, if any)."""
        if fitting.is_store(X):
            fitting.no_labels_for_a_store(y)
            check_is_fitted(self)
            scores, labels, weights = self._store_scores(fitting.open_store(X))
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


def _encoded_class_weight(class_weight, classes: np.ndarray):
    """``class_weight`` with labels replaced by their codes (the store's float labels)."""
    if class_weight is None or isinstance(class_weight, str):
        return class_weight
    if not isinstance(class_weight, dict):
        return class_weight  # refused, with its name, by TrainParams.validate
    codes = {label: code for code, label in enumerate(classes.tolist())}
    encoded = {}
    for label, weight in class_weight.items():
        if fitting.plain(label) not in codes:
            raise ParameterError(
                f"class_weight names label {label!r}, which is not among the classes {classes.tolist()}"
            )
        encoded[float(codes[fitting.plain(label)])] = weight
    return encoded
