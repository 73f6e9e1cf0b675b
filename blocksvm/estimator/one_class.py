"""BlockOneClassSVM: the linear one-class SVM (novelty detection, LIBLINEAR's -s 21) by block minimization, as a
scikit-learn estimator (the fit on arrays or on a store: :mod:`blocksvm.estimator.fitting`; its scikit-learn twin:
:mod:`blocksvm.estimator.twins`)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OutlierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from blocksvm._estimators import SparseInput, declared_parameters, sparse_coef_scores
from blocksvm.estimator import fitting
from blocksvm.estimator.twins import OneClassTwin
from blocksvm.params import Param
from blocksvm.solvers import SOLVERS
from blocksvm.train import TrainParams, TrainResult, train
from blocksvm.train.params import settle

ONE_CLASS_SOLVER = "one-class"


def for_one_class(params: dict[str, Param]) -> dict[str, Param]:
    """The parameters the one-class solver reads, but the loss and the solver (fixed) and what it does not read."""
    solver = SOLVERS[ONE_CLASS_SOLVER]
    return {
        name: p
        for name, p in params.items()
        if (not p.solvers or solver.name in p.solvers) and name not in solver.ignores and name not in ("loss", "solver")
    }


ONE_CLASS_TRAINING = for_one_class(fitting.TRAINING)
ONE_CLASS_OWN = {name: own for name, own in fitting.OWN_PARAMS.items() if name != "n_jobs"}  # (no threads: one problem)


@declared_parameters(ONE_CLASS_TRAINING, ONE_CLASS_OWN)
class BlockOneClassSVM(OneClassTwin, SparseInput, OutlierMixin, BaseEstimator):
    """Linear one-class SVM (novelty detection), LIBLINEAR's ``-s 21``, trained by block minimization.

        Solves ``min_{w, rho} 1/2 ||w||^2 - nu l rho + sum_i max(0, rho - w.x_i)`` through its dual by LIBLINEAR's
        two-level coordinate descent (Chou, Lin & Lin, SDM 2020) over blocks of rows read one at a time; the
        labels, if any, are not read. It decides ``w.x - rho``: 0 or above an inlier (+1), else an outlier (-1), as
        scikit-learn's outlier detectors do (LIBLINEAR and ``blocksvm predict`` call a decision of exactly 0 an
        outlier: a row on the boundary, such as a training row among the free support vectors that fix ``rho``).
        ``fit`` takes arrays or a store on disk, as :class:`BlockSVC` does; at most ``nu`` of the training rows fall
        outside, and at least ``nu`` of them are support vectors.

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

    def fit(self, X, y=None) -> BlockOneClassSVM:
        """Train on the rows of ``X`` (``y`` is not read), or on a store on disk or a LIBSVM file (its labels unread).

        Returns
        -------
        self : BlockOneClassSVM
        """
        for name in ("coef_", "offset_", "n_iter_", "history_", "stop_reason_", "model_", "feature_names_in_"):
            self.__dict__.pop(name, None)
        seed = fitting.drawn_seed(self.random_state)
        params = self._train_params(seed)
        if fitting.is_store(X):
            store = fitting.open_store(X, self.verbose)
            self.n_features_in_ = store.space_features
            return self._keep(train(store, params, verbose=int(self.verbose), progress=False))
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        with fitting.array_store(self, X, np.zeros(X.shape[0]), seed=seed) as store:
            return self._keep(train(store, params, verbose=int(self.verbose), progress=False))

    def _train_params(self, seed: int) -> TrainParams:
        given = fitting.not_default(fitting.training_values(self), self._training)
        return settle("train", None, {**given, "seed": seed, "loss": "one-class"})[0]

    def _keep(self, result: TrainResult) -> BlockOneClassSVM:
        fitting.keep_result(self, result)
        self.coef_ = fitting.vector_coef_of(result.model)
        self.offset_ = np.array([result.model.rho])
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
        """``w.x - rho`` of each row, shape (n_samples,): >= 0 an inlier."""
        return self.score_samples(X) - self.offset_[0]

    def predict(self, X) -> np.ndarray:
        """+1 (inlier: decision >= 0, scikit-learn's outlier detectors' rule) or -1 (outlier) for each row, shape
        (n_samples,)."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
