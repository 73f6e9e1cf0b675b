"""The estimators' scikit-learn twins: a fitted model is linear, so scikit-learn's own estimators carry it exactly.

``to_sklearn()`` gives the fitted ``LinearSVC``, ``LogisticRegression``, ``Perceptron``, ``LinearSVR`` or
``SGDOneClassSVM`` with the same ``coef_``, ``intercept_`` (the bias weight times ``bias``, as their
``intercept_scaling``) and ``classes_``, so that their ``decision_function`` and ``predict`` are the estimator's;
``from_sklearn(est)`` goes the other way. Each estimator takes its twin's methods from a class here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from blocksvm.errors import ModelError, ParameterError
from blocksvm.estimator.fitting import plain
from blocksvm.model import LinearModel


class SVCTwin:
    """:class:`~blocksvm.estimator.svc.BlockSVC`'s twins: ``LinearSVC``, ``LogisticRegression``, ``Perceptron``."""

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
        common = {"fit_intercept": fit_intercept, "class_weight": plain(self.class_weight)}
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
    def from_sklearn(cls, estimator) -> SVCTwin:
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
        fitted.model_ = LinearModel(
            coef,
            intercept,
            model_classes,
            bias,
            index_base=0,
            loss=loss,
            params={"penalty": learner.get("penalty", "l2")},
        )
        fitted.coef_, fitted.intercept_, fitted.classes_ = coef, intercept, classes
        _take_fitted(fitted, estimator)
        return fitted


class SVRTwin:
    """:class:`~blocksvm.estimator.svr.BlockSVR`'s twin: ``LinearSVR``."""

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
        from sklearn.svm import LinearSVR

        coef = _dense_coef(self, "LinearSVR")
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
    def from_sklearn(cls, estimator) -> SVRTwin:
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


class OneClassTwin:
    """:class:`~blocksvm.estimator.one_class.BlockOneClassSVM`'s twin: ``SGDOneClassSVM``."""

    def to_sklearn(self):
        """The equivalent fitted ``sklearn.linear_model.SGDOneClassSVM``: the same ``coef_`` (dense) and ``offset_``,
        so its ``decision_function`` and ``score_samples`` equal this one's on any input (and its ``predict`` but at a
        decision of exactly 0, which it calls an inlier); its ``nu`` is this one's.

        Raises ``ModelError`` for a sparse feature space too wide for a dense ``coef_``, as :meth:`BlockSVR.to_sklearn
        <blocksvm.estimator.svr.BlockSVR.to_sklearn>` does.
        """
        from sklearn.linear_model import SGDOneClassSVM

        coef = _dense_coef(self, "SGDOneClassSVM")
        twin = SGDOneClassSVM(nu=float(self.nu), random_state=self.random_state)
        twin.coef_ = np.array(coef, dtype=np.float64)
        twin.offset_ = np.array(self.offset_, dtype=np.float64)
        twin.n_features_in_, twin.n_iter_ = self.n_features_in_, int(self.n_iter_)
        if hasattr(self, "feature_names_in_"):
            twin.feature_names_in_ = np.array(self.feature_names_in_, copy=True)
        return twin


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
    bias = float(plain(bias))
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


_DENSE_LIMIT = 1 << 27  # features of a dense coef_ that to_sklearn writes out for LinearSVR (a gigabyte)


def _dense_coef(estimator, twin: str) -> np.ndarray:
    """The fitted ``estimator``'s ``coef_`` (one weight vector, dense or a sparse column) as the dense vector
    ``twin``'s ``coef_`` holds; refused past :data:`_DENSE_LIMIT` features."""
    check_is_fitted(estimator)
    coef = estimator.coef_
    if not sp.issparse(coef):
        return coef
    if coef.shape[0] > _DENSE_LIMIT:
        raise ModelError(f"{twin} holds a dense coef_: {coef.shape[0]:,} features (a sparse space) are too many")
    return coef.toarray().ravel()
