"""``to_sklearn()`` and ``from_sklearn()`` (issue 33): a fitted BlockSVC, BlockSVR or CV estimator as the fitted
scikit-learn estimator that makes the same decisions, and back. The oracle is scikit-learn's own
``decision_function`` and ``predict`` on inputs the models were not fitted on (dense, float32, sparse, frames)."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, Perceptron
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC, LinearSVR

from blocksvm import BlockSVC, BlockSVCCV, BlockSVR, BlockSVRCV, ModelError, ParameterError
from blocksvm.model import LinearModel

FAST = {"max_outer": 15, "random_state": 0}  # a few passes: the decisions compared need not be the optimum's
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def data(n_classes: int, labels=None, seed: int = 0):
    X, y = make_classification(
        n_samples=300, n_features=8, n_informative=5, n_classes=n_classes, random_state=seed, n_clusters_per_class=1
    )
    if labels is not None:
        y = np.asarray(labels)[y]
    return X[:200], y[:200], X[200:]


def inputs(X: np.ndarray) -> list:
    """The held-out rows in every form a user may hand over."""
    rng = np.random.default_rng(1)
    noisy = X + rng.normal(scale=3.0, size=X.shape)  # far from the training rows too
    return [X, X.astype(np.float32), sp.csr_matrix(X), noisy, sp.csr_matrix(noisy * (rng.random(X.shape) < 0.5))]


def assert_same_decisions(ours, theirs, X) -> None:
    for rows in inputs(X):
        a, b = ours.decision_function(rows), theirs.decision_function(rows)
        assert a.shape == b.shape and np.max(np.abs(a - b), initial=0.0) <= 1e-12
        assert np.array_equal(ours.predict(rows), theirs.predict(rows))


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge", "logistic"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_to_sklearn_makes_blocksvms_decisions_for_every_loss(loss, n_classes):
    X, y, X_test = data(n_classes)
    ours = BlockSVC(loss=loss, C=0.7, bias=2.5, **FAST).fit(X, y)
    theirs = ours.to_sklearn()
    assert isinstance(theirs, LogisticRegression if loss == "logistic" else LinearSVC)
    assert theirs.C == 0.7 and theirs.fit_intercept and theirs.intercept_scaling == 2.5
    if loss != "logistic":
        assert theirs.loss == loss.replace("-", "_")
    assert theirs.coef_.shape == (1 if n_classes == 2 else n_classes, 8)  # one-vs-rest: a row per class
    assert np.array_equal(theirs.classes_, ours.classes_) and theirs.n_features_in_ == 8
    assert np.array_equal(theirs.intercept_, ours.model_.intercept)  # the bias weight times the bias value
    assert_same_decisions(ours, theirs, X_test)
    if loss == "logistic" and n_classes == 2:
        assert np.max(np.abs(ours.predict_proba(X_test) - theirs.predict_proba(X_test))) <= 1e-12
    back = BlockSVC.from_sklearn(theirs)
    assert_same_decisions(back, theirs, X_test)


def test_string_labels_no_bias_and_feature_names():
    X, y, X_test = data(3, labels=["cat", "dog", "emu"])
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(8)])
    ours = BlockSVC(bias=-1, class_weight={"dog": 2.0}, **FAST).fit(frame, y)
    theirs = ours.to_sklearn()
    assert not theirs.fit_intercept and np.all(theirs.intercept_ == 0.0) and theirs.class_weight == {"dog": 2.0}
    assert list(theirs.feature_names_in_) == list(frame.columns) and theirs.classes_.tolist() == ["cat", "dog", "emu"]
    test_frame = pd.DataFrame(X_test, columns=frame.columns)
    assert np.array_equal(ours.predict(test_frame), theirs.predict(test_frame))
    assert np.array_equal(ours.decision_function(test_frame), theirs.decision_function(test_frame))


@pytest.mark.parametrize("loss", ["epsilon-insensitive", "squared-epsilon-insensitive"])
def test_blocksvr_to_sklearn_is_linear_svr_with_the_same_predictions(loss):
    X, y = make_regression(n_samples=300, n_features=6, noise=5.0, random_state=3)
    ours = BlockSVR(loss=loss, C=2.0, epsilon=0.5, **FAST).fit(X[:200], y[:200])
    theirs = ours.to_sklearn()
    assert isinstance(theirs, LinearSVR) and theirs.loss == loss.replace("-", "_") and theirs.epsilon == 0.5
    for rows in inputs(X[200:]):
        assert np.max(np.abs(ours.predict(rows) - theirs.predict(rows))) <= 1e-12
    back = BlockSVR.from_sklearn(theirs)
    assert np.max(np.abs(back.predict(X[200:]) - theirs.predict(X[200:]))) <= 1e-12


def test_the_cv_estimators_give_the_chosen_C():
    X, y, X_test = data(2)
    ours = BlockSVCCV(Cs=[0.01, 1.0], cv=3, random_state=0).fit(X, y)
    theirs = ours.to_sklearn()
    assert theirs.C == ours.C_
    assert_same_decisions(ours, theirs, X_test)
    Xr, yr = make_regression(n_samples=200, n_features=4, noise=1.0, random_state=0)
    svr = BlockSVRCV(Cs=[0.1, 1.0], cv=3, random_state=0).fit(Xr, yr)
    assert svr.to_sklearn().C == svr.C_ and np.allclose(svr.to_sklearn().predict(Xr), svr.predict(Xr), atol=1e-12)


def test_a_sparse_feature_space_keeps_a_sparse_coef():
    """A wide sparse matrix trains compactly (coef_ is CSR, as wide as the space): scikit-learn's linear classifiers
    take a sparse coef_ (their sparsify()), and decide alike up to the order of the sums."""
    rng = np.random.default_rng(4)
    width = 3_000_000
    used = np.sort(rng.choice(width, 40, replace=False))
    values = rng.normal(size=300 * 40) * (rng.random(300 * 40) < 0.3)
    X = sp.csr_matrix((values, (np.repeat(np.arange(300), 40), np.tile(used, 300))), shape=(300, width))
    X.eliminate_zeros()
    y = np.where(X[:, used[:5]].sum(axis=1).A.ravel() > 0, 1, -1)
    ours = BlockSVC(**FAST).fit(X[:200], y[:200])
    theirs = ours.to_sklearn()
    assert sp.issparse(theirs.coef_) and theirs.coef_.shape == (1, width)
    a, b = ours.decision_function(X[200:]), theirs.decision_function(X[200:])
    assert np.max(np.abs(a - b)) <= 1e-12 and np.array_equal(ours.predict(X[200:]), theirs.predict(X[200:]))


def test_from_sklearn_carries_a_fitted_scikit_learn_model_into_blocksvm(tmp_path):
    """LinearSVC, LogisticRegression (binary, multinomial) and Perceptron fitted by scikit-learn: the BlockSVC made
    from each decides alike, and its model_ saved and loaded too."""
    X, y, X_test = data(3, seed=5)
    Xb, yb, Xb_test = data(2, seed=6)
    fitted = [
        (LinearSVC(C=0.3, intercept_scaling=3.0).fit(X, y), X_test),
        (LogisticRegression(C=2.0).fit(X, y), X_test),
        (LogisticRegression(solver="liblinear", fit_intercept=False).fit(Xb, yb), Xb_test),
        (Perceptron(random_state=0).fit(X, y), X_test),
    ]
    for theirs, rows in fitted:
        ours = BlockSVC.from_sklearn(theirs)
        assert_same_decisions(ours, theirs, rows)
        ours.model_.save(tmp_path / "m.h5")
        assert np.array_equal(LinearModel.load(tmp_path / "m.h5").predict(rows), theirs.predict(rows))
    assert BlockSVC.from_sklearn(fitted[0][0]).bias == 3.0 and BlockSVC.from_sklearn(fitted[2][0]).bias == -1.0


def test_the_estimator_pickles_and_runs_in_a_pipeline():
    X, y, X_test = data(2)
    pipeline = make_pipeline(StandardScaler(), BlockSVC(**FAST)).fit(X, y)
    sklearn_pipeline = make_pipeline(pipeline[0], pipeline[1].to_sklearn())
    restored = pickle.loads(pickle.dumps(sklearn_pipeline))
    assert np.array_equal(restored.predict(X_test), pipeline.predict(X_test))
    assert "blocksvm" not in pickle.dumps(sklearn_pipeline[1]).decode("latin-1")  # plain scikit-learn: no blocksvm


def test_refusals():
    with pytest.raises(NotFittedError):
        BlockSVC().to_sklearn()
    with pytest.raises(
        ParameterError, match="takes a fitted LinearSVC, LogisticRegression or Perceptron, not LinearSVR"
    ):
        BlockSVC.from_sklearn(LinearSVR())
    with pytest.raises(ParameterError, match="takes a fitted LinearSVR, not LinearSVC"):
        BlockSVR.from_sklearn(LinearSVC())
    X, y, _ = data(2)
    ours = BlockSVC(**FAST).fit(X, y)
    ours.model_.loss = "unknown"
    with pytest.raises(ModelError, match="has no scikit-learn counterpart"):
        ours.to_sklearn()
