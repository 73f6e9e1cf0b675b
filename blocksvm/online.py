"""The scikit-learn face of the online learners: :class:`OnlineClassifier`.

``partial_fit(X, y, classes=...)`` hands the rows, as one block, through the one block-pass driver
(:func:`blocksvm.train.pass_loop.run_pass`) to the same learner that ``blocksvm stream`` drives
(:class:`blocksvm.solvers.growing.GrowingLearner`); ``fit`` starts anew and makes ``max_iter`` such passes.
Labels of any kind are encoded as ``0 .. K-1``. Its parameters are those the ``partial_fit`` readers of
:mod:`blocksvm.params` declare.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from blocksvm._estimators import (
    LinearDecisions,
    check_weighted_classes,
    checked_sample_weight,
    declared,
    declared_parameters,
    sparse_coef,
)
from blocksvm.features import compact_learner
from blocksvm.rows import Rows
from blocksvm.solvers.growing import GrowingLearner
from blocksvm.train.params import settle
from blocksvm.train.pass_loop import run_pass
from blocksvm.train.records import PassSums
from blocksvm.train.schedule import DrawnSeeds

# The declared parameters partial_fit reads, with its defaults (seed and max_outer: random_state and max_iter here).
TRAINING = declared("partial_fit", renamed=("max_outer",))
OWN_PARAMS: dict[str, tuple[object, str]] = {
    "max_iter": (
        5,
        "Passes of ``fit`` over the data (the training parameter ``max_outer``, named as scikit-learn names it).",
    ),
    "random_state": (
        0,
        "int, RandomState instance or None. Seeds the row order of each pass of ``fit`` "
        "and ``partial_fit`` (with ``order='random'``). The default, 0, learns the same model twice, as the command "
        "line's ``--seed 0``; None draws other orders at each fit.",
    ),
}
_FITTED = ("coef_", "intercept_", "classes_", "n_features_in_", "n_iter_", "_learner", "_encoder", "_rng")


@declared_parameters(TRAINING, OWN_PARAMS)
class OnlineClassifier(LinearDecisions, ClassifierMixin, BaseEstimator):
    """Linear classifier learned online: Perceptron and the other online learners of blocksvm.

        One call of :meth:`partial_fit` is one pass over its rows (in a random order, or as given
        with ``order="file"``); :meth:`fit` starts anew and makes ``max_iter`` passes. The learners
        and their parameters are those of ``blocksvm train --solver NAME`` (docs/PARAMETERS.md).

    {parameters}

        Attributes
        ----------
        coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
            A scipy CSR matrix of that shape when ``X`` is a wide sparse matrix whose rows use few of its
            columns (hashed features): it holds only the features met.
        intercept_ : ndarray of shape (1,) or (n_classes,)
        classes_ : ndarray of shape (n_classes,)
        n_features_in_ : int
        n_iter_ : int
            Passes made since the learner started (``fit`` resets it).

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from blocksvm import OnlineClassifier
        >>> X, y = make_classification(n_samples=300, n_features=5, random_state=0)
        >>> clf = OnlineClassifier(solver="perceptron", average=True, random_state=0).fit(X, y)
        >>> bool(clf.score(X, y) > 0.85)
        True
    """

    def fit(self, X, y, sample_weight=None) -> OnlineClassifier:
        """Start anew and make ``max_iter`` passes over ``(X, y)``.

        ``sample_weight`` (array-like of shape (n_samples,), finite, >= 0): each row's instance weight, which
        multiplies its class weight in the learner's update (docs/ALGORITHMS.md says what that does in each
        learner); a row of weight 0 is skipped. None: every row weighs 1.
        """
        for name in _FITTED:
            self.__dict__.pop(name, None)
        params = self._params()
        for _ in range(params.max_outer):
            self._partial_fit(X, y, None, reset=not hasattr(self, "_learner"), sample_weight=sample_weight)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None) -> OnlineClassifier:
        """One pass over ``(X, y)``; ``classes`` (all the labels to come) is required on the first call;
        ``sample_weight``: each row's instance weight, as :meth:`fit` reads it."""
        first = not hasattr(self, "_learner")
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit")
        return self._partial_fit(X, y, classes, reset=first, sample_weight=sample_weight, one_call=True)

    def _partial_fit(self, X, y, classes, reset: bool, sample_weight=None, one_call: bool = False) -> OnlineClassifier:
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset)
        check_classification_targets(y)
        weights = checked_sample_weight(sample_weight, X, allow_all_zero=one_call)  # (a fit needs a row that counts)
        if reset and classes is None:
            check_weighted_classes(y, weights, type(self).__name__)
        if reset:
            self._encoder = LabelEncoder().fit(y if classes is None else classes)
            if len(self._encoder.classes_) < 2:
                raise ValueError(
                    f"OnlineClassifier needs samples of at least 2 classes, but the data contain only "
                    f"one class: {self._encoder.classes_[0]!r}"
                )
            self.classes_ = self._encoder.classes_
            codes = np.arange(len(self.classes_), dtype=np.float64)
            wide = sp.issparse(X) and compact_learner(len(np.unique(X.indices)), X.shape[1])
            # a wide sparse X: weights for the features met (the learner's slots), not for every column
            self._learner = GrowingLearner(self._params(), codes, 0 if wide else X.shape[1], np.float64)
            self._rng = check_random_state(self.random_state)
            self.n_iter_ = 0
        unseen = np.setdiff1d(np.unique(y), self.classes_)
        if len(unseen):
            raise ValueError(f"y holds labels {unseen.tolist()} not among the classes {self.classes_.tolist()}")
        self._visit(sp.csr_matrix(X, dtype=np.float64), self._encoder.transform(y).astype(np.float64), weights)
        self.n_iter_ += 1
        W, feature_map, _ = self._learner.model_weights()
        bias = self._learner.params.bias
        self.coef_ = _coef(W[:, :-1], feature_map, X.shape[1])
        self.intercept_ = W[:, -1] * bias if bias > 0 else np.zeros(W.shape[0])
        return self

    def _visit(self, X: sp.csr_matrix, labels: np.ndarray, weights: np.ndarray | None) -> None:
        X.sort_indices()
        rows = Rows(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, labels, weights=weights)
        seeds = DrawnSeeds(self._rng, shuffle=self._learner.params.order != "file")
        run_pass(self._learner.pieces([(0, rows)]), self._learner, seeds, PassSums.zeros(1))

    def _params(self):
        values = {name: getattr(self, name) for name in TRAINING}
        values["max_outer"] = self.max_iter
        values = {k: v.item() if isinstance(v, np.generic) else v for k, v in values.items()}
        if values["loss"] == "squared_hinge":
            values["loss"] = "squared-hinge"
        if isinstance(values["class_weight"], dict) and hasattr(self, "_encoder"):
            values["class_weight"] = {
                float(c): w
                for c, w in zip(self._encoder.transform(list(values["class_weight"])), values["class_weight"].values())
            }
        given = {k: v for k, v in values.items() if k == "max_outer" or v != TRAINING[k].default}
        return settle("partial_fit", None, given)[0]


def _coef(W: np.ndarray, feature_map: np.ndarray | None, width: int):
    """``coef_``: the weights as an array as wide as ``X``, or, for a learner in a sparse space (its feature map;
    or fewer columns than ``X``), a CSR matrix that holds only the features met."""
    if feature_map is None and W.shape[1] == width:
        return W.copy()
    return sparse_coef(W, np.arange(W.shape[1]) if feature_map is None else feature_map, width)
