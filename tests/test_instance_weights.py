"""Instance weights in the solvers (issue 33): row ``i``'s cost is ``C_i = C * class_weight(y_i) * weight_i``.

The oracles: the same rows repeated ``weight_i`` times (a weight of 0 removes the row) for the solvers whose problem
is the objective (dual CD, its working sets, threads and CoCoA+ shards, Newton, tune's folds); scikit-learn's
``LinearSVC``, ``LogisticRegression``, ``Perceptron`` and ``SGDClassifier`` with ``sample_weight``; the dual written
in numpy; and, for the online learners, the row removed (weight 0) or the update repeated where that is what the
update does (docs/ALGORITHMS.md, *Instance weights*).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import SWEEPS_A_VISIT
from oracle import primal
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, Perceptron, SGDClassifier
from sklearn.svm import LinearSVC
from sklearn.utils.class_weight import compute_class_weight

from blocksvm import BlockSVC, BlockSVR, OnlineClassifier, ParameterError, write_store
from blocksvm.cli import main
from blocksvm.losses import LOSSES
from blocksvm.solvers import SOLVERS, Problem
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, train
from blocksvm.train.loop import Trainer

N, FEATURES = 400, 30
ONLINE = [name for name, solver in SOLVERS.items() if solver.online]


def relative(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


@pytest.fixture(scope="module")
def data():
    """400 sparse rows, a binary, a 3-class and a real-valued target, and integer weights 0 .. 3."""
    rng = np.random.default_rng(0)
    X = sp.random(N, FEATURES, density=0.3, format="csr", random_state=1)
    score = X @ rng.normal(size=FEATURES)
    noisy = score + 0.3 * rng.normal(size=N)
    targets = {
        "binary": np.where(noisy > np.median(noisy), 1.0, -1.0),
        "classes": np.digitize(noisy, np.quantile(noisy, [0.33, 0.66])).astype(np.float64),
        "regression": score + 0.1 * rng.normal(size=N),
    }
    return X, targets, rng.integers(0, 4, size=N).astype(np.float64)


@pytest.fixture(scope="module")
def stores(data, tmp_path_factory):
    """Per target: the rows with their weights (blocks of 70 rows) and the rows repeated weight_i times (blocks of
    120), each store shuffled with its own seed."""
    X, targets, w = data
    root = tmp_path_factory.mktemp("weights")
    repeated = np.repeat(np.arange(N), w.astype(int))
    made = {}
    for name, y in targets.items():
        write_store((X, y), root / f"{name}-w.bsvm", sample_weight=w, block_rows=70, seed=3, progress=False)
        write_store((X[repeated], y[repeated]), root / f"{name}-r.bsvm", block_rows=120, seed=4, progress=False)
        made[name] = (root / f"{name}-w.bsvm", root / f"{name}-r.bsvm")
    return made


def both(stores, target: str, **params):
    """Train on the weighted store and on the repeated rows alike: ``(weighted, repeated)`` results."""
    weighted, repeated = stores[target]
    params = {"C": 0.7, "verbose": 0, **params}
    return train(weighted, **params), train(repeated, **params)


def assert_same_problem(a, b, figures=("primal",)) -> None:
    """Both stopped by their own rule, at the same objective (1e-8 relative) and the same figures."""
    for result in (a, b):
        assert not result.stop_reason.startswith("max_outer"), result.stop_reason
    assert relative(a.model.summary["primal"], b.model.summary["primal"]) < 1e-8
    for key in figures[1:]:
        assert a.history[-1][key] == pytest.approx(b.history[-1][key], rel=1e-6, abs=1e-9), key


# ---- dual CD: the weighted problem is the problem of the repeated rows -----------------------------------------


# (C = 0.1 for the losses with a linear part: dual CD takes hundreds of passes to a 1e-9 gap at C = 0.7 there)
@pytest.mark.parametrize(
    "loss, working_set, C, threads",
    [
        ("hinge", "cache", 0.1, 1),
        ("squared-hinge", "cache", 0.7, 1),
        ("logistic", "cache", 0.7, 1),
        ("squared-hinge", "pair", 0.7, 1),
        ("squared-hinge", "cache", 0.7, 2),  # one problem's rows shared by two threads
    ],
)
def test_dual_cd_integer_weights_are_repeated_rows(stores, loss, working_set, C, threads):
    a, b = both(stores, "binary", C=C, loss=loss, working_set=working_set, threads=threads, tol=1e-9, max_outer=400)
    assert_same_problem(a, b, ("primal", "dual", "train_accuracy"))


def test_one_vs_rest_on_threads_with_class_weights(stores):
    a, b = both(stores, "classes", loss="squared-hinge", class_weight={2: 3.0}, threads=2, tol=1e-9, max_outer=400)
    assert_same_problem(a, b, ("primal", "dual", "train_accuracy"))


@pytest.mark.parametrize("loss", ["epsilon-insensitive", "squared-epsilon-insensitive"])
def test_support_vector_regression(stores, loss):
    a, b = both(stores, "regression", C=0.1, loss=loss, epsilon=0.05, tol=1e-11, max_outer=20_000)
    assert_same_problem(a, b, ("primal", "dual", "train_mse"))


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_cocoa_shards(data, tmp_path, loss):
    """Two shards of one block each (the line search of the squared hinge; the logistic loss's added updates): the
    same objective to the gap both certify."""
    X, targets, w = data
    y, repeated = targets["binary"], np.repeat(np.arange(N), w.astype(int))
    write_store((X, y), tmp_path / "w.bsvm", sample_weight=w, block_rows=200, seed=3, progress=False)
    write_store((X[repeated], y[repeated]), tmp_path / "r.bsvm", block_rows=300, seed=4, progress=False)
    pair = {"s": (tmp_path / "w.bsvm", tmp_path / "r.bsvm")}
    a, b = both(pair, "s", C=0.1, loss=loss, workers=2, tol=1e-6, max_outer=3000)
    assert a.history[-1]["gap"] <= 1e-6 and b.history[-1]["gap"] <= 1e-6
    assert relative(a.model.summary["primal"], b.model.summary["primal"]) < 2e-6


def test_rows_of_weight_zero_keep_alpha_zero_and_the_dual_is_numpys(stores, data):
    """The dual objective the records report is the weighted dual computed in numpy from the solver's alphas:
    ``sum alpha_i - 1/2 ||w||^2 - 1/2 sum alpha_i^2 / (2 C_i)`` (squared hinge, ``C_i = C weight_i``); rows of weight
    0 never leave alpha = 0, and ``w = sum alpha_i y_i x_i``."""
    trainer = Trainer(stores["binary"][0], TrainParams(C=0.7, loss="squared-hinge", tol=1e-8, max_outer=200), verbose=0)
    result = trainer.run()
    store = BlockStore(stores["binary"][0])
    blocks = [store.read_block(b) for b in range(store.n_blocks)]
    weights = np.concatenate([b.weights for b in blocks])
    y = np.where(np.concatenate([b.labels for b in blocks]) > 0, 1.0, -1.0)
    X = sp.vstack([sp.hstack([b.to_csr(FEATURES), np.ones((b.n_rows, 1))]) for b in blocks]).tocsr()
    alpha, w = trainer.solver.alpha[0], trainer.solver.w[0]
    assert np.all(alpha[weights == 0] == 0) and np.all(alpha[weights > 0] >= 0) and np.any(weights == 0)
    np.testing.assert_allclose(w, X.T @ (alpha * y), atol=1e-10)
    live = weights > 0
    dual = alpha.sum() - 0.5 * w @ w - 0.5 * np.sum(alpha[live] ** 2 / (2 * 0.7 * weights[live]))
    assert result.history[-1]["dual"] == pytest.approx(dual, rel=1e-12)


# ---- Newton ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, loss",
    [("binary", "squared-hinge"), ("classes", "logistic"), ("regression", "squared-epsilon-insensitive")],
)
def test_newton_integer_weights_are_repeated_rows(stores, target, loss):
    a, b = both(stores, target, solver="newton", loss=loss, eps=1e-10, max_outer=100, threads=2)
    assert_same_problem(a, b)


# ---- against scikit-learn's sample_weight ---------------------------------------------------------------------


def sklearn_twin(loss: str, C: float):
    if loss == "logistic":
        return LogisticRegression(C=C, solver="liblinear", dual=True, tol=1e-8, max_iter=100_000)
    return LinearSVC(C=C, loss=loss.replace("-", "_"), dual=True, tol=1e-8, max_iter=200_000)


def test_a9a_reaches_scikit_learns_weighted_optimum(shared_data, tmp_path):
    check_against_scikit_learn(shared_data, tmp_path, "a9a", "logistic")


@pytest.mark.slow  # 10-30 s each (the hinge: 100s of passes to a 1e-5 gap), most of it scikit-learn's
@pytest.mark.parametrize(
    "name, loss",
    [("a9a", "hinge"), ("a9a", "squared-hinge"), ("w8a", "hinge"), ("w8a", "squared-hinge"), ("w8a", "logistic")],
)
def test_real_data_reach_scikit_learns_weighted_optimum(shared_data, tmp_path, name, loss):
    check_against_scikit_learn(shared_data, tmp_path, name, loss)


def check_against_scikit_learn(shared_data, tmp_path, name: str, loss: str) -> None:
    """Weights 0, 0.5, 1, 2, 3 drawn for a9a's or w8a's rows: blocksvm's primal objective (written in numpy, the
    intercept regularized as both regularize it) within 1e-4 of scikit-learn's liblinear fitted with the same
    ``sample_weight``, at a gap of 1e-5."""
    X, y = load_svmlight_file(str(shared_data / name))
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)  # what liblinear takes
    w = np.random.default_rng(1).choice([0.0, 0.5, 1.0, 2.0, 3.0], size=X.shape[0])
    write_store((X, y), tmp_path / "s.bsvm", sample_weight=w, block_rows=8000, seed=0, progress=False)
    C = 0.5
    per_visit = SWEEPS_A_VISIT if loss == "hinge" else {}
    ours = train(tmp_path / "s.bsvm", C=C, loss=loss, tol=1e-5, max_outer=1000, verbose=0, **per_visit)
    assert ours.stop_reason.startswith("relative duality gap"), ours.stop_reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        theirs = sklearn_twin(loss, C).fit(X, y, sample_weight=w)
    t = np.where(y > 0, 1.0, -1.0)
    mine = primal(ours.model.coef[0], ours.model.intercept[0], X, t, C * w, loss)
    oracle = primal(theirs.coef_[0], theirs.intercept_[0], X, t, C * w, loss)
    assert relative(mine, oracle) < 1e-4
    assert ours.model.summary["primal"] == pytest.approx(mine, rel=1e-9)  # the record is the weighted objective


def test_balanced_class_weights_are_weighed_by_the_rows_weights(stores, data):
    """``class_weight="balanced"`` on a weighted store: scikit-learn's ``compute_class_weight`` with
    ``sample_weight`` (each class's total weight), not its row count."""
    X, targets, w = data
    store = BlockStore(stores["classes"][0])
    problem = Problem.from_store(store, TrainParams(C=2.0, class_weight="balanced"))
    expected = compute_class_weight(
        "balanced", classes=np.unique(targets["classes"]), y=targets["classes"], sample_weight=w
    )
    np.testing.assert_allclose(problem.costs[:, 1], 2.0 * expected, rtol=1e-12)
    assert problem.total_weight == w.sum()


def test_validation_and_training_accuracy_are_weighted(stores, data):
    """A weighted validation store is scored by its weights (scikit-learn's ``score(X, y, sample_weight)``), and so
    is the exact training accuracy."""
    X, targets, w = data
    result = train(stores["binary"][0], C=0.7, tol=1e-6, validation=stores["binary"][0], verbose=0)
    right = result.model.predict(X) == targets["binary"]
    last = result.history[-1]
    assert last["primal_exact"] and last["train_accuracy"] == pytest.approx(np.average(right, weights=w), abs=1e-12)
    assert last["validation_accuracy"] == pytest.approx(np.average(right, weights=w), abs=1e-12)


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_tunes_folds_are_the_weighted_problems_and_their_scores_weighted(stores, loss):
    """Each fold's model minimizes the weighted objective of its training rows (scikit-learn's liblinear with their
    ``sample_weight``, 1e-5), and the CV accuracy is each held-out row counted by its weight (numpy, exact)."""
    from blocksvm.solvers.problem import fold_of
    from blocksvm.train.c_search import Tuner
    from blocksvm.train.params import settle_tune

    store = BlockStore(stores["binary"][0])
    blocks = [store.read_block(b) for b in range(store.n_blocks)]
    X = sp.vstack([b.to_csr(FEATURES) for b in blocks]).tocsr().astype(np.float64)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    y, w = np.concatenate([b.labels for b in blocks]), np.concatenate([b.weights for b in blocks])
    params, _, options = settle_tune(None, {"loss": loss, "tol": 1e-8, "max_outer": 1000, "C_grid": (0.5,)})
    tuner = Tuner(store, params, options, verbose=0, progress=False)
    point = tuner.solve_at(0.5)
    W = tuner.solver.weights().reshape(options["folds"], -1)
    folds = fold_of(np.arange(len(y)), params.seed, options["folds"])
    t = np.where(y > 0, 1.0, -1.0)
    right, held = 0.0, 0.0
    for f in range(options["folds"]):
        training = folds != f
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            oracle = sklearn_twin(loss, 0.5).fit(X[training], y[training], sample_weight=w[training])
        args = (X[training], t[training], 0.5 * w[training], loss)
        mine = primal(W[f, :-1], W[f, -1], *args)
        assert relative(mine, primal(oracle.coef_[0], oracle.intercept_[0], *args)) < 1e-5
        predicted = np.where(X[~training] @ W[f, :-1] + W[f, -1] > 0, 1.0, -1.0)
        right += np.dot(predicted == y[~training], w[~training])
        held += w[~training].sum()
    assert point.score == pytest.approx(right / held, abs=1e-12)


def test_a_store_whose_weights_are_all_zero_is_refused(tmp_path, data):
    X, targets, w = data
    write_store((X, targets["binary"]), tmp_path / "z.bsvm", sample_weight=np.zeros(N), progress=False)
    with pytest.raises(ParameterError, match="every row's instance weight is zero: there is nothing to train on"):
        train(tmp_path / "z.bsvm", verbose=0)


# ---- resume ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [{"working_set": "cache"}, {"solver": "newton", "loss": "logistic"}])
def test_a_weighted_run_cut_anywhere_resumes_to_the_same_bits(stores, tmp_path, train_in_cuts, params):
    options = {"C": 0.7, "max_outer": 3, **({"tol": 0.0} if "solver" not in params else {"eps": 1e-12}), **params}
    whole = train(stores["binary"][0], verbose=0, **options)
    cut, cuts = train_in_cuts(stores["binary"][0], tmp_path / "ck.h5", 5, **options)
    assert cuts >= 3
    np.testing.assert_array_equal(cut.model.coef, whole.model.coef)
    np.testing.assert_array_equal(cut.model.intercept, whole.model.intercept)
    assert [h["primal"] for h in cut.history] == [h["primal"] for h in whole.history]


# ---- Pegasos and OGD: uniform weights c are C times c ---------------------------------------------------------


@pytest.mark.parametrize("solver, loss", [("pegasos", "squared-hinge"), ("pegasos", "hinge"), ("ogd", "logistic")])
def test_uniform_weights_are_a_larger_C(tmp_path, data, solver, loss):
    """Their steps weigh each row's (sub)gradient by its weight and their ball holds the weighted problem's
    optimum: weights all 2.5 take the path of C times 2.5 (the same rows in the same blocks)."""
    X, targets, _ = data
    y = targets["binary"]
    write_store((X, y), tmp_path / "w.bsvm", sample_weight=np.full(N, 2.5), block_rows=70, seed=3, progress=False)
    write_store((X, y), tmp_path / "u.bsvm", block_rows=70, seed=3, progress=False)
    common = {"solver": solver, "loss": loss, "max_outer": 5, "verbose": 0, "average": False}
    a = train(tmp_path / "w.bsvm", C=0.2, **common)
    b = train(tmp_path / "u.bsvm", C=0.5, **common)
    np.testing.assert_allclose(a.model.coef, b.model.coef, rtol=1e-9, atol=1e-12)
    assert a.history[-1]["primal"] == pytest.approx(b.history[-1]["primal"], rel=1e-9)


# ---- online learners ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("solver", ONLINE)
def test_a_row_of_weight_zero_is_a_row_removed(data, solver):
    """In file order every online learner skips a row of weight 0 as if it were not there (its step count too):
    the same model as the rows without it, bit for bit; and a weight of 1 is no weight."""
    X, targets, w = data
    y, keep = targets["binary"], w > 0
    ones = np.where(keep, 1.0, 0.0)
    a = OnlineClassifier(solver=solver, order="file").partial_fit(X, y, classes=[-1, 1], sample_weight=ones)
    b = OnlineClassifier(solver=solver, order="file").partial_fit(X[keep], y[keep], classes=[-1, 1])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize(
    "solver, oracle",
    [
        ("perceptron", Perceptron(shuffle=False, max_iter=1, tol=None, fit_intercept=False, eta0=1.0)),
        (
            "pa1",
            SGDClassifier(
                loss="hinge",
                penalty=None,
                learning_rate="pa1",
                eta0=0.3,
                shuffle=False,
                max_iter=1,
                tol=None,
                fit_intercept=False,
            ),
        ),
        (
            "pa2",
            SGDClassifier(
                loss="hinge",
                penalty=None,
                learning_rate="pa2",
                eta0=0.3,
                shuffle=False,
                max_iter=1,
                tol=None,
                fit_intercept=False,
            ),
        ),
    ],
)
def test_a_weight_scales_the_update_as_scikit_learns_sample_weight(data, solver, oracle):
    """The Perceptron's and PA's steps times the row's weight: scikit-learn's ``Perceptron`` and
    ``SGDClassifier(learning_rate="pa1"|"pa2")`` with ``sample_weight`` (file order, no bias, one pass)."""
    X, targets, _ = data
    y = targets["binary"]
    w = np.random.default_rng(2).uniform(0.0, 3.0, size=N)
    cost = {} if solver == "perceptron" else {"C": 0.3}
    ours = OnlineClassifier(solver=solver, order="file", bias=-1, average=False, **cost)
    ours.partial_fit(X, y, classes=[-1, 1], sample_weight=w)
    X32 = sp.csr_matrix(X)
    X32.indices, X32.indptr = X32.indices.astype(np.int32), X32.indptr.astype(np.int32)
    oracle.fit(X32, y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_[0], oracle.coef_[0], rtol=0, atol=1e-9)


def test_a_perceptron_weight_k_is_k_repeated_mistakes():
    """Weight k equals k repeated updates exactly where every repeat is still a mistake: here a row with margin -10
    weighted 3, against the row three times (the model and the progressive mistakes)."""
    X = np.array([[10.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    y = np.array([1, -1, 1])
    weighted = OnlineClassifier(order="file", bias=-1, average=False)
    weighted.partial_fit(X, y, classes=[-1, 1], sample_weight=[1.0, 3.0, 1.0])
    repeated = OnlineClassifier(order="file", bias=-1, average=False)
    repeated.partial_fit(X[[0, 1, 1, 1, 2]], y[[0, 1, 1, 1, 2]], classes=[-1, 1])
    np.testing.assert_array_equal(weighted.coef_, repeated.coef_)
    np.testing.assert_array_equal(weighted.coef_, [[7.0, 2.0]])


def test_the_stream_reads_importance_weights_and_weighs_its_progressive_figures(tmp_path):
    """VW's importance weights in a stream: the Perceptron's steps times the weight, its progressive loss and
    accuracy means weighted by them (Vowpal Wabbit's average loss), a numpy transcription as the oracle; a
    stream whose weights are all 1 reports as an unweighted one."""
    from blocksvm.stream import stream

    rng = np.random.default_rng(4)
    rows = [
        (rng.choice([-1, 1]), sorted(set(rng.integers(0, 6, size=3))), rng.choice([0.0, 0.5, 1.0, 4.0]))
        for _ in range(300)
    ]

    def text(weights) -> str:  # names of digits in the default namespace are their own columns (docs/FORMAT.md)
        return "".join(
            f"{label} {weight:g} | {' '.join(map(str, f))}\n" for (label, f, _), weight in zip(rows, weights)
        )

    (tmp_path / "w.vw").write_text(text([weight for *_, weight in rows]))
    result = stream(tmp_path / "w.vw", verbose=0, text_format="vw", hash_bits=4, average=False, bias=-1)
    model, summary = result.model, result.model.summary
    w, loss, right, total = np.zeros(6), 0.0, 0.0, 0.0
    for label, features, weight in rows:
        if weight == 0:
            continue
        x = np.zeros(6)
        x[features] = 1.0
        margin = label * (w @ x)
        loss += weight * max(0.0, -margin)
        right += weight * (margin > 0 or (margin == 0 and label < 0))
        total += weight
        if not margin > 0:
            w += weight * label * x
    assert summary["weight"] == total and summary["progressive_accuracy"] == pytest.approx(right / total, abs=1e-12)
    assert summary["progressive_loss"] == pytest.approx(loss / total, rel=1e-12)
    np.testing.assert_allclose(model.coef[0], w, rtol=0, atol=1e-12)
    (tmp_path / "ones.vw").write_text(text([1] * len(rows)))
    ones = stream(tmp_path / "ones.vw", verbose=0, text_format="vw", hash_bits=4, average=False, bias=-1)
    assert "weight" not in ones.model.summary and isinstance(ones.model.summary["mistakes"], int)


# ---- the estimators -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator",
    [
        BlockSVC(solver="newton", eps=1e-12),
        BlockSVC(loss="hinge", tol=0.0, max_outer=300),
        BlockSVR(loss="squared-epsilon-insensitive", solver="newton", eps=1e-12),
    ],
)
def test_scikit_learns_sample_weight_equivalence_checks_pass_at_the_optimum(estimator):
    """scikit-learn's own checks that integer ``sample_weight`` equals repeated rows (and 0 removed ones), to 1e-7
    in every decision: they hold at the optimum (tests/test_estimator.py runs them at max_outer=20, where a run
    stops at another point of its own path)."""
    from sklearn.utils.estimator_checks import (
        check_sample_weight_equivalence_on_dense_data,
        check_sample_weight_equivalence_on_sparse_data,
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_sample_weight_equivalence_on_dense_data(type(estimator).__name__, estimator)
        if isinstance(estimator, BlockSVR) or estimator.solver == "newton":
            check_sample_weight_equivalence_on_sparse_data(type(estimator).__name__, estimator)


def test_block_svc_sample_weight_reaches_linear_svcs_and_scores_as_scikit_learn(data, tmp_path):
    X, targets, _ = data
    y = targets["classes"]
    w = np.random.default_rng(5).uniform(0.0, 2.0, size=N)
    ours = BlockSVC(C=0.5, tol=1e-8, max_outer=1000, random_state=0).fit(X, y, sample_weight=w)
    theirs = LinearSVC(C=0.5, dual=True, tol=1e-10, max_iter=200_000).fit(X, y, sample_weight=w)
    for k, positive in enumerate(ours.classes_):
        t = np.where(y == positive, 1.0, -1.0)
        args = (X, t, 0.5 * w, "squared-hinge")
        mine, oracle = (
            primal(ours.coef_[k], ours.intercept_[k], *args),
            primal(theirs.coef_[k], theirs.intercept_[k], *args),
        )
        assert relative(mine, oracle) < 1e-6
    assert ours.score(X, y, sample_weight=w) == pytest.approx(np.average(ours.predict(X) == y, weights=w), abs=1e-15)
    # a weighted store scores by its own weights; sample_weight is refused for a store (it holds them)
    write_store((X, y), tmp_path / "w.bsvm", sample_weight=w, block_rows=100, progress=False)
    assert ours.score(tmp_path / "w.bsvm") == pytest.approx(ours.score(X, y, sample_weight=w), abs=1e-12)
    with pytest.raises(ValueError, match="sample_weight must be None when X is a block store"):
        BlockSVC().fit(tmp_path / "w.bsvm", sample_weight=w)


def test_weights_that_leave_one_class_are_refused():
    X = np.random.default_rng(0).uniform(size=(10, 3))
    y = np.arange(10) % 2
    for estimator in (BlockSVC(), OnlineClassifier()):
        with pytest.raises(ValueError, match=r"sample_weight leaves rows of one class only \(1, the others weigh 0\)"):
            estimator.fit(X, y, sample_weight=y)


# ---- the command line -----------------------------------------------------------------------------------------


def test_train_and_tune_read_a_weighted_store_on_the_command_line(stores, tmp_path, capsys):
    weighted, repeated = stores["binary"]
    for store, model in ((weighted, "w.h5"), (repeated, "r.h5")):
        assert main(["train", str(store), str(tmp_path / model), "-C", "0.7", "--tol", "1e-10", "-q"]) == 0
    from blocksvm.model import LinearModel

    a, b = LinearModel.load(tmp_path / "w.h5"), LinearModel.load(tmp_path / "r.h5")
    assert relative(a.summary["primal"], b.summary["primal"]) < 1e-8
    assert main(["tune", str(weighted), "--C-grid", "0.5,1", "--folds", "3", "--json", "-q"]) == 0
    assert "best_C" in capsys.readouterr().out
    assert LOSSES  # (the losses the tests above cover)
