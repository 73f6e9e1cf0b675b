"""BlockSVR: linear support vector regression by block minimization, as a scikit-learn estimator (the fit on
arrays or on a store: :mod:`blocksvm.estimator.fitting`; its scikit-learn twin: :mod:`blocksvm.estimator.twins`)."""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from blocksvm._estimators import SparseInput, checked_sample_weight, declared_parameters, sparse_coef_scores
from blocksvm.errors import ParameterError
from blocksvm.estimator import fitting
from blocksvm.estimator.svc import BlockSVC
from blocksvm.estimator.twins import SVRTwin
from blocksvm.losses import LOSSES, REGRESSION
from blocksvm.params import Param
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, TrainResult, train


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


# BlockSVR's training parameters: BlockSVC's but the class weights.
REGRESSION_TRAINING = for_regression(fitting.TRAINING)


@declared_parameters(REGRESSION_TRAINING, fitting.OWN_PARAMS)
class BlockSVR(SVRTwin, SparseInput, RegressorMixin, BaseEstimator):
    """Linear support vector regression (L1- or L2-loss, L2-regularized) trained by block minimization.

        Solves LIBLINEAR's ``-s 13`` (``loss="epsilon-insensitive"``) or ``-s 12``
        (``"squared-epsilon-insensitive"``) problem ``min_w 1/2 ||w||^2 + C sum_i loss(y_i - w^T [x_i, bias])``
        with ``loss(r) = max(0, |r| - epsilon)`` or its square, by dual coordinate descent (Ho & Lin, Neural
        Computation 2012) over blocks of rows read one at a time. ``fit`` takes arrays or a store on disk, as
        :class:`BlockSVC` does.

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

    def fit(self, X, y=None, sample_weight=None) -> BlockSVR:
        """Train on arrays ``(X, y)`` (real-valued ``y``), or on a store on disk (``y`` None: its labels);
        ``sample_weight``: each row's instance weight, which multiplies its C (None for a store: its own)."""
        self.__dict__.pop("model_", None)
        seed = fitting.drawn_seed(self.random_state)
        if fitting.is_store(X):
            params = self._train_params(seed)  # (checked before a text file's conversion)
            fitting.no_labels_for_a_store(y, "targets")
            fitting.no_weights_for_a_store(sample_weight)
            store = fitting.open_store(X, self.verbose)
            self.n_features_in_ = store.space_features
            return self._fit_store(store, params)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True)
        weights = checked_sample_weight(sample_weight, X)
        params = self._train_params(seed, X.shape)
        with fitting.array_store(self, X, y.astype(np.float64), weights, seed=seed) as store:
            return self._fit_store(store, params)

    def _train_params(self, seed: int, shape: tuple[int, int] | None = None) -> TrainParams:
        """As :meth:`BlockSVC._train_params`: ``shape`` chooses the solver "auto" names."""
        values = fitting.training_values(self)
        values.update(seed=seed, threads=fitting.plain(self.n_jobs))
        values["loss"] = str(values["loss"]).replace("_", "-")  # scikit-learn's spelling too
        return _regression_only(self._settle(fitting.not_default(values, self._training), shape), type(self).__name__)

    _settle = BlockSVC._settle

    def _fit_store(self, store: BlockStore, params: TrainParams) -> BlockSVR:
        return self._keep(train(store, params, verbose=int(self.verbose), progress=False))

    def _keep(self, result: TrainResult) -> BlockSVR:
        """Set the fitted attributes from a training's result."""
        fitting.keep_result(self, result)
        self.coef_ = fitting.vector_coef_of(result.model)
        self.intercept_ = float(result.model.intercept[0])
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted values, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        if sp.issparse(self.coef_):
            return sparse_coef_scores(self.coef_.T, np.atleast_1d(self.intercept_), X)  # coef_: (n_features, 1)
        return np.asarray(safe_sparse_dot(X, self.coef_, dense_output=True)).ravel() + self.intercept_
