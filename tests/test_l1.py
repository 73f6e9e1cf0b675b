"""L1-regularized squared hinge and logistic regression (``--penalty l1``, LIBLINEAR's -s 5 and -s 6): LIBLINEAR's
own coordinate descent over the store's columns (CDN and newGLMNET, the default) and OWL-QN over its rows.

Oracles: LIBLINEAR itself (liblinear-official: its -s 5 and -s 6 optimum at -e 1e-6, whose objective is computed
here in numpy from its ``w``: ``||w||_1`` with the bias feature's weight inside, as LIBLINEAR penalizes it by default,
plus ``C sum loss``), its predictions and its model files; the same rows repeated ``weight_i`` times for instance
weights; and the serial trainer for threads, shards and resumed runs (the fixed tree of blocksvm.sums: the same bits).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_run, memory_for
from sklearn.datasets import load_svmlight_file

import blocksvm.sums
from blocksvm import BlockSVC, ParameterError, write_store
from blocksvm.cli import main
from blocksvm.estimator.twins import _is_l1
from blocksvm.io import convert, write_columns
from blocksvm.liblinear_format import read_liblinear_model, write_liblinear_model
from blocksvm.losses import LOSSES
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore
from blocksvm.store.columns import ensure_columns
from blocksvm.train import train

liblinear = pytest.importorskip("liblinear.liblinearutil")
CODES = {"squared-hinge": 5, "logistic": 6}
COLUMNS = {"squared-hinge": "cdn", "logistic": "glmnet"}  # the solver --penalty l1 chooses for each loss
N_TRAIN, N_TEST, FEATURES, RELEVANT = 4000, 2000, 1000, 30


def generated_rows(seed: int = 1):
    """6,000 sparse rows of 1,000 features (2% dense, values in [0, 1)), labelled by a separator on 30 of them
    with noise: many irrelevant features. The first 4,000 rows train, the rest test."""
    rng = np.random.default_rng(seed)
    n = N_TRAIN + N_TEST
    X = sp.random(n, FEATURES, density=0.02, format="csr", random_state=rng, data_rvs=lambda k: rng.uniform(0, 1, k))
    w = np.zeros(FEATURES)
    w[rng.choice(FEATURES, RELEVANT, replace=False)] = 3.0 * rng.normal(size=RELEVANT)
    score = X @ w
    y = np.where(score + 0.3 * rng.normal(size=n) > np.median(score), 1.0, -1.0)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    X, y, X_test, y_test = generated_rows()
    store = tmp_path_factory.mktemp("l1") / "g.bsvm"
    write_store((X, y), store, block_rows=1000, seed=3, progress=False)
    return store, X, y, X_test, y_test


def objective(coef, intercept: float, X, y, C: float, loss: str, bias: float = 1.0) -> float:
    """LIBLINEAR's -s 5 / -s 6 objective: ``||w||_1 + C sum loss(y (w.x + b))``, the bias weight ``b / bias`` in the
    norm (LIBLINEAR's regularize_bias = 1, its default)."""
    coef = np.asarray(coef, dtype=np.float64).ravel()
    margins = y * (X @ coef + intercept)
    return float(np.abs(coef).sum() + abs(intercept / bias) + np.sum(C * LOSSES[loss].value(margins)))


def liblinear_l1(X, y, loss: str, C: float, bias: float = 1.0, eps: float = 1e-6):
    """LIBLINEAR's -s 5 or -s 6 model and its weights for class +1 as ``(model, coef, intercept)``."""
    model = liblinear.train(liblinear.problem(y, X), f"-s {CODES[loss]} -c {C} -B {bias} -e {eps} -q")
    w, b = model.get_decfun()
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    return model, sign * np.array(w), sign * b


def ours(model: LinearModel, n_features: int) -> tuple[np.ndarray, float]:
    """A binary model's dense ``(coef, intercept)`` in ``n_features`` columns (a sparse model's support spread)."""
    W, _ = model.weights_in(None, n_features)
    return W[0, :-1], float(model.intercept[0])


def accuracy(coef, intercept, X, y) -> float:
    return float(np.mean(np.where(X @ coef + intercept > 0, 1.0, -1.0) == y))


# ---- the optimum of LIBLINEAR's -s 5 and -s 6 -----------------------------------------------------------------


@pytest.mark.parametrize("solver", [None, "owl-qn"], ids=["columns", "owl-qn"])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_objective_nonzeros_and_accuracy_are_liblinears(generated, loss, C, solver):
    store, X, y, X_test, y_test = generated
    _, w_lib, b_lib = liblinear_l1(X, y, loss, C)
    chosen = {"solver": solver} if solver else {}
    result = train(store, penalty="l1", loss=loss, C=C, eps=1e-4, verbose=0, **chosen)
    assert result.model.params["solver"] == (solver or COLUMNS[loss])
    assert result.stop_reason.startswith("subgradient norm"), result.stop_reason
    coef, intercept = ours(result.model, FEATURES)
    f_lib, f_ours = objective(w_lib, b_lib, X, y, C, loss), objective(coef, intercept, X, y, C, loss)
    assert abs(f_ours - f_lib) <= 1e-4 * f_lib
    assert result.model.summary["primal"] == pytest.approx(f_ours, rel=1e-9)  # the history's objective is this one
    nonzero_lib = np.count_nonzero(w_lib)
    assert abs(result.model.nonzero_weights - nonzero_lib) <= 0.05 * nonzero_lib
    assert result.model.nonzero_weights == np.count_nonzero(coef) < FEATURES
    assert abs(accuracy(coef, intercept, X_test, y_test) - accuracy(w_lib, b_lib, X_test, y_test)) <= 0.002


def test_without_a_bias_the_objective_is_liblinears(generated):
    store, X, y, *_ = generated
    _, w_lib, _ = liblinear_l1(X, y, "logistic", 1.0, bias=-1)
    result = train(store, loss="logistic", penalty="l1", C=1.0, bias=-1.0, eps=1e-4, verbose=0)
    coef, intercept = ours(result.model, FEATURES)
    assert intercept == 0.0
    f_lib = objective(w_lib, 0.0, X, y, 1.0, "logistic")
    assert abs(objective(coef, 0.0, X, y, 1.0, "logistic") - f_lib) <= 1e-4 * f_lib


def test_the_l2_penalty_of_owl_qn_is_liblinears_l2_problem(generated):
    """With --penalty l2, OWL-QN is L-BFGS: the optimum of -s 2 (Newton's)."""
    store, *_ = generated
    lbfgs = train(store, solver="owl-qn", penalty="l2", C=0.5, eps=1e-5, verbose=0)
    newton = train(store, solver="newton", C=0.5, eps=1e-5, verbose=0)
    assert lbfgs.model.summary["primal"] == pytest.approx(newton.model.summary["primal"], rel=1e-6)
    assert not lbfgs.model.sparse


@pytest.mark.slow
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("name, loss", [("a9a", "squared-hinge"), ("a9a", "logistic"), ("w8a", "squared-hinge"),
                                        ("w8a", "logistic")])  # fmt: skip
def test_real_data_reach_liblinears_objective(shared_data, tmp_path, name, loss, C):
    X, y = load_svmlight_file(str(shared_data / name))
    store = tmp_path / f"{name}.bsvm"
    convert(shared_data / name, store, block_rows=10000, progress=False)
    n = X.shape[1]
    _, w_lib, b_lib = liblinear_l1(X, y, loss, C)
    # a9a at -e 3e-5: the nonzeros of LIBLINEAR's optimum (below), where 1e-5 took four times as long (logistic,
    # C = 10: 72 s against 18 s). w8a's L1 optimum is not unique: its nonzeros depend on the path
    eps = 3e-5 if name == "a9a" else 1e-4
    result = train(store, penalty="l1", loss=loss, C=C, eps=eps, max_outer=2000, verbose=0)
    coef, intercept = ours(result.model, n)
    f_lib, f_ours = objective(w_lib, b_lib, X, y, C, loss), objective(coef, intercept, X, y, C, loss)
    # LIBLINEAR's -s 5 stops at its 1,000 iterations short of its -e on a9a and w8a (ours measured up to 1.3e-3 lower):
    # within 1e-4 of its objective, or below it; the nonzero counts compared where the objectives are the same
    assert f_ours <= f_lib * (1 + 1e-4), (f_ours, f_lib, result.stop_reason)
    # The 5% is missed here at C = 10: OWL-QN kept 7-8% more nonzero weights than LIBLINEAR at the same
    # objective (a9a: 122 / 114 and 117 / 107; w8a: 293 / 275 and 276 / 256; on w8a still 275 / 256 at -e 1e-6,
    # objectives equal to 1e-9, 25 of them below 1e-4: w8a's L1 optimum is not unique): within 10% is asserted, on
    # a9a at -e 3e-5 (newGLMNET, logistic, C = 10: 118 nonzeros at -e 1e-4, whose last ones leave by 3e-5: 108 / 107;
    # on w8a, squared hinge, C = 10, -e 1e-5 ends at another point of its optimum: 287 / 260)
    if abs(f_ours - f_lib) <= 1e-4 * f_lib:
        nonzero_lib = np.count_nonzero(w_lib)
        assert abs(np.count_nonzero(coef) - nonzero_lib) <= max(0.10 * nonzero_lib, 1)
    if name == "a9a":
        X_test, y_test = load_svmlight_file(str(shared_data / "a9a.t"), n_features=n)
        assert abs(accuracy(coef, intercept, X_test, y_test) - accuracy(w_lib, b_lib, X_test, y_test)) <= 0.002


# ---- instance weights, class weights and one-vs-rest ------------------------------------------------------------


@pytest.mark.parametrize("solver", [None, "owl-qn"], ids=["columns", "owl-qn"])
@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_integer_weights_are_repeated_rows(tmp_path, loss, solver):
    rng = np.random.default_rng(0)
    X = sp.random(400, 30, density=0.3, format="csr", random_state=1)
    y = np.where(X @ rng.normal(size=30) + 0.3 * rng.normal(size=400) > 0.5, 1.0, -1.0)
    weights = rng.integers(0, 4, size=400).astype(np.float64)
    repeated = np.repeat(np.arange(400), weights.astype(int))
    write_store((X, y), tmp_path / "w.bsvm", sample_weight=weights, block_rows=70, seed=3, progress=False)
    write_store((X[repeated], y[repeated]), tmp_path / "r.bsvm", block_rows=120, seed=4, progress=False)
    chosen = {"solver": solver} if solver else {}
    a, b = (train(tmp_path / s, penalty="l1", loss=loss, C=0.7, eps=1e-8, verbose=0, **chosen)
            for s in ("w.bsvm", "r.bsvm"))  # fmt: skip
    assert a.model.summary["primal"] == pytest.approx(b.model.summary["primal"], rel=1e-8)
    _, w_lib, b_lib = liblinear_l1(X[repeated], y[repeated], loss, 0.7)
    coef, intercept = ours(a.model, 30)
    f_lib = objective(w_lib, b_lib, X[repeated], y[repeated], 0.7, loss)
    assert abs(objective(coef, intercept, X[repeated], y[repeated], 0.7, loss) - f_lib) <= 1e-6 * f_lib


def test_one_vs_rest_with_class_weights_is_liblinears(tmp_path):
    rng = np.random.default_rng(2)
    X = sp.random(1500, 200, density=0.05, format="csr", random_state=3)
    y = np.digitize(X @ rng.normal(size=200), [-0.3, 0.3]).astype(np.float64)  # classes 0, 1, 2
    write_store((X, y), tmp_path / "m.bsvm", block_rows=500, seed=1, progress=False)
    weights = {0: 2.0, 2: 0.5}
    result = train(tmp_path / "m.bsvm", penalty="l1", loss="logistic", C=1.0, eps=1e-5, class_weight=weights,
                   verbose=0)  # fmt: skip
    flags = " ".join(f"-w{k} {v}" for k, v in weights.items())
    lib = liblinear.train(liblinear.problem(y, X), f"-s 6 -c 1 -B 1 -e 1e-6 -q {flags}")
    W_lib = np.array([lib.get_decfun(label_idx=i)[0] for i in range(3)])
    b_lib = np.array([lib.get_decfun(label_idx=i)[1] for i in range(3)])
    labels = lib.get_labels()
    W, _ = result.model.weights_in(None, 200)
    for k, label in enumerate(result.model.classes):
        i = labels.index(int(label))
        t = np.where(y == label, 1.0, -1.0)
        C = np.where(t > 0, weights.get(int(label), 1.0), 1.0)
        f_lib = objective(W_lib[i], b_lib[i], X, t, C, "logistic")
        f_ours = objective(W[k, :-1], result.model.intercept[k], X, t, C, "logistic")
        assert abs(f_ours - f_lib) <= 1e-4 * f_lib
    assert np.mean(result.model.predict(X) == np.array(liblinear.predict([], X, lib, "-q")[0])) >= 0.999


# ---- the same bits on threads and shards, and resumed ----------------------------------------------------------


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of about 60 rows: several a block, so that threads and shards split blocks' pieces."""
    monkeypatch.setattr(blocksvm.sums, "PIECE_NNZ", 1000)
    monkeypatch.setattr(blocksvm.sums, "PIECE_WEIGHTS", 0)


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
@pytest.mark.parametrize("split", [{"threads": 2}, {"workers": 2}, {"workers": 2, "threads": 2}])
def test_owl_qn_on_threads_and_shards_gives_the_serial_model_bit_for_bit(generated, small_pieces, loss, split):
    store = generated[0]
    params = {"penalty": "l1", "loss": loss, "C": 1.0, "eps": 1e-3, "verbose": 0, "solver": "owl-qn"}
    serial, parallel = train(store, **params), train(store, **params, **split)
    assert_same_run(parallel, serial, "primal")
    np.testing.assert_array_equal(parallel.model.feature_map, serial.model.feature_map)


@pytest.mark.parametrize("fits", [True, False], ids=["in-memory", "read-every-pass"])
def test_owl_qn_cut_inside_passes_resumes_to_the_same_model(generated, small_pieces, tmp_path, train_in_cuts, fits):
    """Cut every 3 blocks (4 a pass: every position of a pass, and between passes of an iteration)."""
    store = generated[0]
    params = {"penalty": "l1", "loss": "logistic", "C": 1.0, "eps": 1e-2, "threads": 2, "solver": "owl-qn"}
    params["memory_mb"] = memory_for(store, 64.0 if fits else 0.01, "owl-qn")
    whole = train(store, verbose=0, **params)
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 3, **params)
    assert cuts >= 5
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    np.testing.assert_array_equal(result.model.feature_map, whole.model.feature_map)
    assert [r["primal"] for r in result.history] == [r["primal"] for r in whole.history]


# ---- sparse models: kept, saved, exported and read by their nonzero weights ----------------------------------


def test_a_sparse_model_saves_loads_and_decides_as_liblinear(generated, tmp_path):
    store, X, y, X_test, _ = generated
    result = train(store, loss="logistic", penalty="l1", C=0.1, eps=1e-5, verbose=0)
    model = result.model
    assert model.sparse and len(model.feature_map) == model.nonzero_weights == model.n_features < FEATURES // 10
    decisions = model.decision_function(X_test)
    model.save(tmp_path / "m.h5")
    loaded = LinearModel.load(tmp_path / "m.h5")
    assert loaded.sparse and loaded.nonzero_weights == model.nonzero_weights
    np.testing.assert_array_equal(loaded.decision_function(X_test), decisions)
    # to LIBLINEAR: its L1R_LR type, every weight written (its format is dense), the same predictions there
    write_liblinear_model(model, tmp_path / "m.liblinear")
    assert (tmp_path / "m.liblinear").read_text().splitlines()[0] == "solver_type L1R_LR"
    theirs = liblinear.load_model(str(tmp_path / "m.liblinear"))
    _, _, values = liblinear.predict([], X_test, theirs, "-q")
    # (LIBLINEAR's values are for its label[0], our positive class; the model is one-based, our store zero-based)
    np.testing.assert_allclose(np.ravel(values), decisions, rtol=1e-9, atol=1e-9)
    # back, from LIBLINEAR's file: the nonzero rows only
    back = LinearModel.load(tmp_path / "m.liblinear")
    assert back.sparse and back.nonzero_weights == model.nonzero_weights and back.loss == "logistic"
    assert back.params["penalty"] == "l1"
    np.testing.assert_allclose(back.decision_function(X_test), decisions, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_liblinears_own_l1_models_are_read_sparse_and_predict_as_it_does(generated, tmp_path, loss):
    _, X, y, X_test, _ = generated
    lib, _, _ = liblinear_l1(X, y, loss, 0.1, eps=1e-3)
    liblinear.save_model(str(tmp_path / "lib.model"), lib)
    fields = read_liblinear_model(tmp_path / "lib.model")
    assert fields["loss"] == loss and fields["params"]["penalty"] == "l1" and fields["sparse"]
    model = LinearModel.load(tmp_path / "lib.model")
    assert model.nonzero_weights == np.count_nonzero(lib.get_decfun()[0]) == model.n_features
    labels, _, values = liblinear.predict([], X_test, lib, "-q")
    sign = 1.0 if lib.get_labels()[0] == 1 else -1.0
    np.testing.assert_allclose(model.decision_function(X_test), sign * np.ravel(values), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X_test), labels)


# ---- the command line, the estimator and the refusals -----------------------------------------------------------


@pytest.mark.parametrize("code, loss", [("5", "squared-hinge"), ("6", "logistic")])
def test_the_command_line_trains_s_5_and_6_and_predict_counts_the_nonzero_weights(generated, tmp_path, capsys,
                                                                                  code, loss):  # fmt: skip
    store = generated[0]
    assert main(["train", str(store), str(tmp_path / "m.h5"), "-s", code, "-c", "0.1", "-q"]) == 0
    model = LinearModel.load(tmp_path / "m.h5")
    assert (model.loss, model.params["penalty"], model.params["solver"], model.sparse) == (
        loss,
        "l1",
        COLUMNS[loss],
        True,
    )
    capsys.readouterr()
    assert main(["predict", str(store), str(tmp_path / "m.h5"), str(tmp_path / "out.txt")]) == 0
    out = capsys.readouterr().out
    assert f"a model of {model.nonzero_weights:,} nonzero weights" in out
    assert main(["export", str(tmp_path / "m.h5"), str(tmp_path / "m.liblinear")]) == 0
    solver_type = "L1R_L2LOSS_SVC" if code == "5" else "L1R_LR"
    assert (tmp_path / "m.liblinear").read_text().startswith(f"solver_type {solver_type}")


def test_info_reports_a_models_nonzero_weights_as_its_liblinear_file_holds_them(generated, tmp_path, capsys):
    """``blocksvm info MODEL``: the nonzero count of an L1 model and of its LIBLINEAR export, counted here in the
    exported text itself (numpy over the weight lines), and an L2 model's, dense."""
    import json

    store = str(generated[0])
    assert main(["train", store, str(tmp_path / "l1.h5"), "-s", "5", "-c", "0.1", "-q"]) == 0
    assert main(["export", str(tmp_path / "l1.h5"), str(tmp_path / "l1.txt")]) == 0
    lines = (tmp_path / "l1.txt").read_text().splitlines()
    weights = np.loadtxt(lines[lines.index("w") + 1 :], ndmin=1)[:-1]  # the last line is the bias feature's
    capsys.readouterr()
    for path in ("l1.h5", "l1.txt"):
        assert main(["info", str(tmp_path / path), "--json"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert (info["penalty"], info["loss"], info["sparse"]) == ("l1", "squared-hinge", True)
        assert info["nonzero_weights"] == np.count_nonzero(weights) == info["stored_columns"]
        assert info["features"] == len(weights)
    assert main(["info", str(tmp_path / "l1.h5")]) == 0
    assert f"nonzero      {np.count_nonzero(weights):,} weights" in capsys.readouterr().out
    assert main(["train", store, str(tmp_path / "l2.h5"), "-s", "2", "-q"]) == 0
    assert main(["info", str(tmp_path / "l2.h5"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["penalty"], info["solver"], info["sparse"], info["stored_columns"]) == ("l2", "newton", False, 1000)
    assert main(["info", str(tmp_path / "l2.h5"), "--verify"]) == 2
    assert "is a model file" in capsys.readouterr().err


def test_refusals(generated):
    store = generated[0]
    with pytest.raises(ParameterError, match="is not a penalty .*dual-cd.* minimizes"):
        train(store, penalty="l1", solver="dual-cd", verbose=0)
    with pytest.raises(ParameterError, match="hinge"):
        train(store, penalty="l1", loss="hinge", verbose=0)
    with pytest.raises(ParameterError, match="l1_ratio"):
        train(store, penalty="l1", l1_ratio=0.3, verbose=0)


@pytest.mark.parametrize("order", ["-s first", "-s last"])
def test_a_flag_beside_s_keeps_what_s_set_in_either_order(generated, tmp_path, capsys, order):
    """-s 5 sets the loss, the penalty and the solver; a --loss given beside it, wherever it stands, asks for another
    problem and is refused, naming that problem's code where LIBLINEAR has one (before, a --loss after -s dropped the
    penalty: an L2 hinge model, silently)."""
    store, model_path = str(generated[0]), str(tmp_path / "m.h5")

    def flags(loss: str) -> list[str]:
        return ["-s", "5", "--loss", loss] if order == "-s first" else ["--loss", loss, "-s", "5"]

    assert main(["train", store, model_path, *flags("logistic"), "-c", "0.1", "-q"]) == 2
    assert (
        "-s 5 is the squared-hinge loss with the l1 penalty; --loss logistic beside it asks for another problem "
        "(LIBLINEAR's -s 6): give one of them" in capsys.readouterr().err
    )
    assert not (tmp_path / "m.h5").exists()
    assert main(["train", store, str(tmp_path / "hinge.h5"), *flags("hinge"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "--loss hinge beside it asks for another problem (a problem LIBLINEAR has no code for)" in err
    assert not (tmp_path / "hinge.h5").exists()


def test_block_svc_penalty_l1_is_scikit_learns_l1_models(generated):
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    _, X, y, X_test, _ = generated
    for loss, twin in (("squared_hinge", LinearSVC), ("logistic", LogisticRegression)):
        est = BlockSVC(penalty="l1", loss=loss, C=0.1, eps=1e-4).fit(X, y)
        coef = est.coef_.toarray() if sp.issparse(est.coef_) else est.coef_  # (scikit-learn's sparse coef_: sparsify)
        assert np.count_nonzero(coef) == est.model_.nonzero_weights < FEATURES // 2
        sk = est.to_sklearn()
        assert isinstance(sk, twin) and _is_l1(sk)
        np.testing.assert_allclose(sk.decision_function(X_test), est.decision_function(X_test), rtol=1e-9, atol=1e-9)
        refit = twin(**sk.get_params()).fit(X, y)  # scikit-learn's liblinear solves the same problem
        f_sk = objective(refit.coef_[0], refit.intercept_[0], X, y, 0.1, loss.replace("_", "-"))
        f_ours = objective(coef[0], est.intercept_[0], X, y, 0.1, loss.replace("_", "-"))
        assert abs(f_ours - f_sk) <= 1e-3 * f_sk
        back = BlockSVC.from_sklearn(sk)
        assert back.penalty == "l1"
        np.testing.assert_array_equal(back.predict(X_test), est.predict(X_test))


# ---- tune: every fold at every C is LIBLINEAR's -s 6 model of its rows -----------------------------------------


def test_tune_searches_the_l1_problem_fold_by_fold_and_starts_at_the_largest_zero_solution(generated):
    from blocksvm.solvers.problem import fold_of
    from blocksvm.store import BlockStore
    from blocksvm.train.c_search import Tuner
    from blocksvm.train.params import settle_tune

    ensure_columns(generated[0])  # (tune writes them itself; a Tuner made here reads them)
    store = BlockStore(generated[0])
    blocks = [store.read_block(b) for b in range(store.n_blocks)]
    X = sp.vstack([b.to_csr(store.n_features) for b in blocks]).tocsr().astype(np.float64)
    y = np.concatenate([b.labels for b in blocks])
    params, _, options = settle_tune(None, {"penalty": "l1", "loss": "logistic", "eps": 1e-5, "C_grid": [0.1, 1.0]})
    assert params.solver == "glmnet"
    tuner = Tuner(store, params, options, verbose=0, progress=False)
    folds = fold_of(np.arange(store.n_rows), 0, 5)
    for C in (0.1, 1.0):
        point = tuner.solve_at(C)
        W = tuner.solver.weights().reshape(5, 1, -1)
        correct = 0
        for f in range(5):
            rows, held = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
            lib, w_lib, b_lib = liblinear_l1(X[rows], y[rows], "logistic", C)
            f_lib = objective(w_lib, b_lib, X[rows], y[rows], C, "logistic")
            f_ours = objective(W[f, 0, :-1], W[f, 0, -1], X[rows], y[rows], C, "logistic")
            assert abs(f_ours - f_lib) <= 1e-4 * f_lib
            correct += int(np.sum(np.array(liblinear.predict([], X[held], lib, "-q")[0]) == y[held]))
        assert abs(point.score - correct / len(y)) <= 0.002
    # the default grid's start: the power of 2 below the largest C whose solution is zero (LIBLINEAR's -C has none)
    start = Tuner(store, params, options | {"C_grid": None}, verbose=0, progress=False).start_C()
    assert train(generated[0], penalty="l1", loss="logistic", C=start, verbose=0).model.nonzero_weights == 0
    assert train(generated[0], penalty="l1", loss="logistic", C=2 * start, verbose=0).model.nonzero_weights > 0


def test_a_model_of_30m_features_and_2000_nonzeros_predicts_in_memory_of_its_nonzeros(tmp_path):
    import tracemalloc

    rng = np.random.default_rng(4)
    space = 30_000_000
    support = np.sort(rng.choice(space, 2000, replace=False))
    dense_w = {int(j): float(v) for j, v in zip(support, rng.normal(size=2000))}
    model = LinearModel(np.array([list(dense_w.values())]), np.array([0.25]), np.array([-1.0, 1.0]), 1.0,
                        feature_map=support, space_features=space, sparse=True, loss="logistic")  # fmt: skip
    model.save(tmp_path / "m.h5")
    rows = 1000
    indices = np.concatenate([np.sort(rng.choice(space, 20, replace=False)) for _ in range(rows)])
    indices[::7] = rng.choice(support, len(indices[::7]))  # some of the rows' features are the model's
    X = sp.csr_matrix((rng.uniform(size=len(indices)), indices, np.arange(0, 20 * rows + 1, 20)), shape=(rows, space))
    X.sort_indices()
    expected = np.array([sum(dense_w.get(int(j), 0.0) * v for j, v in zip(X[i].indices, X[i].data))
                         for i in range(rows)]) + 0.25  # fmt: skip
    LinearModel.load(tmp_path / "m.h5").decision_function(X[:2])  # (compiled and imported before measuring)
    tracemalloc.start()
    loaded = LinearModel.load(tmp_path / "m.h5")
    values = loaded.decision_function(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-12)
    assert loaded.coef.shape == (1, 2000) and loaded.nonzero_weights == 2000
    assert peak < 4_000_000  # a dense w of 30M features would be 240 MB


def test_a_checkpoint_from_before_the_penalty_resumes_as_l2(generated, tmp_path):
    """A checkpoint written before issue 32 holds no penalty: every run then was L2, and it resumes as one."""
    from blocksvm.checkpoint import read_checkpoint, write_checkpoint

    store, ck = generated[0], tmp_path / "ck.h5"
    train(store, max_outer=1, verbose=0, checkpoint=ck)
    saved = read_checkpoint(ck)
    del saved.params["penalty"], saved.params["l1_ratio"]
    write_checkpoint(ck, saved)
    resumed = train(store, max_outer=2, verbose=0, resume=ck)
    np.testing.assert_array_equal(resumed.model.coef, train(store, max_outer=2, verbose=0).model.coef)


# ---- the column learners: their first iteration, pieces, threads, resume, columns on demand ---------------------


@pytest.fixture(scope="module")
def in_pieces(tmp_path_factory):
    """The generated rows in a store whose columns are 4 blocks (so that they make up to 4 pieces)."""
    X, y, *_ = generated_rows()
    store = tmp_path_factory.mktemp("pieces") / "p.bsvm"
    write_store((X, y), store, block_rows=1000, seed=3, progress=False)
    write_columns(store, block_mb=0.2)
    assert BlockStore(store).columns.n_blocks >= 4
    return store, X, y


def test_a_store_without_columns_gets_them_once_and_says_so(tmp_path, capsys):
    X, y, *_ = generated_rows()
    store = tmp_path / "s.bsvm"
    write_store((X, y), store, block_rows=1000, progress=False)
    assert BlockStore(store).columns is None
    assert main(["train", str(store), str(tmp_path / "a.h5"), "-s", "6", "-c", "0.1"]) == 0
    assert capsys.readouterr().err.count(f"writing the column layout of {store}") == 1
    assert BlockStore(store).columns is not None
    assert main(["train", str(store), str(tmp_path / "b.h5"), "-s", "6", "-c", "0.1"]) == 0
    assert "writing the column layout" not in capsys.readouterr().err
    np.testing.assert_array_equal(LinearModel.load(tmp_path / "a.h5").coef, LinearModel.load(tmp_path / "b.h5").coef)


def test_a_store_whose_folder_cannot_be_written_is_trained_by_owl_qn_and_says_why(tmp_path, capsys, monkeypatch):
    import blocksvm.train.params

    X, y, *_ = generated_rows()
    store = tmp_path / "s.bsvm"
    write_store((X, y), store, block_rows=1000, progress=False)
    monkeypatch.setattr(blocksvm.train.params, "_can_write", lambda folder: False)  # (root may write anywhere)
    assert main(["train", str(store), str(tmp_path / "m.h5"), "-s", "6", "-c", "0.1", "-e", "1e-4"]) == 0
    assert "has no column layout and its folder cannot be written: owl-qn trains" in capsys.readouterr().err
    model = LinearModel.load(tmp_path / "m.h5")
    assert model.params["solver"] == "owl-qn" and BlockStore(store).columns is None
    _, w_lib, b_lib = liblinear_l1(X, y, "logistic", 0.1)
    coef, intercept = ours(model, FEATURES)
    f_lib = objective(w_lib, b_lib, X, y, 0.1, "logistic")
    assert abs(objective(coef, intercept, X, y, 0.1, "logistic") - f_lib) <= 1e-4 * f_lib


@pytest.mark.parametrize("loss", ["logistic", "squared-hinge"])
def test_the_first_iteration_of_glmnet_reads_no_data_and_is_the_one_read(in_pieces, monkeypatch, loss):
    """The gradient at w = 0 from the statistics of the columns: the same iterates as from a read of every column
    (to rounding: sums by class, not by row), one pass fewer."""
    import blocksvm.solvers.glmnet

    store = in_pieces[0]
    params = {"solver": "glmnet", "penalty": "l1", "loss": loss, "C": 1.0, "verbose": 0}
    from_statistics = train(store, **params)
    monkeypatch.setattr(blocksvm.solvers.glmnet, "at_zero_from_statistics", lambda learner: None)
    read = train(store, **params)
    first = [r["column_passes"] for r in (from_statistics.history[0], read.history[0])]
    assert first[1] - first[0] == pytest.approx(1.0, abs=0.1)  # (the quadratic's cycles may skip a step or two)
    np.testing.assert_allclose([r["primal"] for r in from_statistics.history], [r["primal"] for r in read.history],
                               rtol=1e-9)  # fmt: skip


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_pieces_on_threads_give_one_model_and_reach_liblinears_optimum(in_pieces, loss):
    """Block Jacobi over 3 pieces of the features: the model depends on the pieces, not on the threads that run them
    (1, 2 or 4 threads, or 2 workers on threads: the same bits), and reaches LIBLINEAR's optimum."""
    store, X, y = in_pieces
    params = {"penalty": "l1", "loss": loss, "C": 1.0, "eps": 1e-6, "column_pieces": 3, "verbose": 0}
    runs = [train(store, **params, **split) for split in ({}, {"threads": 2}, {"threads": 4}, {"workers": 2})]
    for run in runs[1:]:
        np.testing.assert_array_equal(run.model.coef, runs[0].model.coef)
        np.testing.assert_array_equal(run.model.intercept, runs[0].model.intercept)
        assert [r["primal"] for r in run.history] == [r["primal"] for r in runs[0].history]
    _, w_lib, b_lib = liblinear_l1(X, y, loss, 1.0)
    coef, intercept = ours(runs[0].model, FEATURES)
    f_lib = objective(w_lib, b_lib, X, y, 1.0, loss)
    assert abs(objective(coef, intercept, X, y, 1.0, loss) - f_lib) <= 1e-6 * f_lib
    one_piece = {**params, "column_pieces": 1, "eps": 1e-2}
    np.testing.assert_array_equal(train(store, **one_piece, threads=2).model.coef, train(store, **one_piece).model.coef)


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_a_run_stopped_and_resumed_ends_where_an_uninterrupted_one_does(in_pieces, tmp_path, loss):
    import signal
    import unittest.mock

    import blocksvm.train.loop
    from blocksvm.checkpoint import Checkpointer

    class StopAfter(Checkpointer):
        done = 0

        def after_pass(self, snapshot):
            seconds = super().after_pass(snapshot)
            StopAfter.done += 1
            if StopAfter.done % 2 == 0:
                signal.raise_signal(signal.SIGTERM)
            return seconds

    store = in_pieces[0]
    params = {"penalty": "l1", "loss": loss, "C": 1.0, "eps": 1e-3, "column_pieces": 2, "verbose": 0}
    whole = train(store, **params)
    checkpoint, cuts = tmp_path / "ck.h5", 0
    StopAfter.done = 0
    with unittest.mock.patch.object(blocksvm.train.loop, "Checkpointer", StopAfter):
        result = train(store, checkpoint=checkpoint, **params)
        while result.interrupted:
            cuts += 1
            result = train(store, resume=checkpoint, **params)
    assert cuts >= 2
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    assert [r["primal"] for r in result.history] == [r["primal"] for r in whole.history]


@pytest.mark.parametrize("loss", ["logistic", "squared-hinge"])
def test_features_screened_as_zero_are_not_read_again_and_the_model_is_the_same(generated, monkeypatch, loss):
    """Gap-safe screening: with many irrelevant features, most are proven zero at the optimum within a few
    iterations and their columns are not read again; the model is the one without screening (to the stopping
    rule's precision). Fewer passes where they are proven early (logistic; the squared hinge's come late here and
    the check before the stop reads them once more: about even)."""
    import blocksvm.solvers.glmnet

    store = generated[0]
    params = {"solver": "glmnet", "penalty": "l1", "loss": loss, "C": 0.1, "eps": 1e-4, "verbose": 0}
    screening = train(store, **params)
    assert max(r["screened_features"] for r in screening.history) > FEATURES // 2
    monkeypatch.setattr(blocksvm.solvers.glmnet.GLMNETSolver, "_screen", lambda self, k: None)
    plain = train(store, **params)
    assert max(r["screened_features"] for r in plain.history) == 0
    f_screened, f_plain = screening.model.summary["primal"], plain.model.summary["primal"]
    assert abs(f_screened - f_plain) <= 1e-6 * f_plain
    assert screening.model.nonzero_weights == plain.model.nonzero_weights
    passes = [sum(r["column_passes"] for r in run.history) for run in (screening, plain)]
    assert passes[0] < (0.85 if loss == "logistic" else 1.1) * passes[1]


def test_a_feature_screened_wrongly_comes_back_at_the_check_before_the_stop(generated, monkeypatch):
    """The check before the stop reads the screened features' columns: a feature screened by mistake (here: every
    zero weight, the first time its column is read) comes back, and the model still reaches LIBLINEAR's optimum."""
    import blocksvm.solvers.glmnet

    store, X, y, *_ = generated
    seen = np.zeros(FEATURES + 1, np.bool_)

    def screen_every_zero(self, k):
        new = (self.w[k] == 0.0) & (self.norms >= 0) & ~seen
        seen[self.norms >= 0] = True
        self.screened[k] |= new

    monkeypatch.setattr(blocksvm.solvers.glmnet.GLMNETSolver, "_screen", screen_every_zero)
    result = train(store, solver="glmnet", penalty="l1", loss="logistic", C=1.0, eps=1e-5, verbose=0)
    _, w_lib, b_lib = liblinear_l1(X, y, "logistic", 1.0)
    coef, intercept = ours(result.model, FEATURES)
    f_lib = objective(w_lib, b_lib, X, y, 1.0, "logistic")
    assert abs(objective(coef, intercept, X, y, 1.0, "logistic") - f_lib) <= 1e-5 * f_lib


@pytest.fixture(scope="module")
def long_tail(tmp_path_factory):
    """2,500 rows over 2^16 features whose popularity falls as a power law: most stored columns hold one or two
    entries, so the column layout's statistics (32 bytes a column) would outweigh the entries (8 bytes each)."""
    from blocksvm.datasets import SyntheticSpec, make_store

    store = tmp_path_factory.mktemp("tail") / "t.bsvm"
    make_store(store, SyntheticSpec(rows=2500, features=2**16, nnz=12, power=3.0, seed=4), progress=False)
    data = BlockStore(store)
    blocks = [data.read_block(b) for b in range(data.n_blocks)]
    X = sp.vstack([b.to_csr(data.n_features) for b in blocks]).tocsr().astype(np.float64)
    return store, X, np.concatenate([b.labels for b in blocks])


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_a_layout_whose_statistics_would_outweigh_its_entries_keeps_none_and_trains_liblinears_model(long_tail, loss):
    """Such a layout is written without statistics (version 2: an older blocksvm asks for an upgrade instead of
    reading statistics that are not there), far smaller; the column learners read the gradient at w = 0 from the
    data, as LIBLINEAR does, and reach its optimum; tune's first C is still the largest whose solution is zero."""
    from blocksvm.store.transpose import STATISTICS_SHARE

    store, X, y = long_tail
    layout = ensure_columns(store)
    stored = layout.n_columns
    assert stored * 32 > STATISTICS_SHARE * layout.nnz * 8  # (the case: statistics would weigh more)
    assert layout.stat_classes == 0 and layout.entry["version"] == 2 and layout.verify() == []
    assert layout.read_block(0).sums is None and "sums" not in layout.info()
    result = train(store, penalty="l1", loss=loss, C=1.0, eps=1e-4, verbose=0)
    _, w_lib, b_lib = liblinear_l1(X, y, loss, 1.0)
    coef, intercept = ours(result.model, X.shape[1])
    f_lib = objective(w_lib, b_lib, X, y, 1.0, loss)
    assert abs(objective(coef, intercept, X, y, 1.0, loss) - f_lib) <= 1e-4 * f_lib
    if loss == "logistic":
        from blocksvm.train.c_search import Tuner
        from blocksvm.train.params import settle_tune

        params, _, options = settle_tune(None, {"penalty": "l1", "loss": loss})
        start = Tuner(BlockStore(store), params, options, verbose=0, progress=False).start_C()
        zero, above = (train(store, penalty="l1", loss=loss, C=C, verbose=0).model for C in (start, 2 * start))
        assert zero.nonzero_weights == 0 and zero.intercept[0] == 0.0
        assert above.nonzero_weights > 0 or above.intercept[0] != 0.0  # (here the bias's weight moves first)


def test_columns_beyond_the_budget_keep_the_quadratics_columns_narrowed_and_give_the_same_model(generated):
    """Columns that exceed --memory-mb were read again at every cycle of newGLMNET's quadratic; now its first cycle
    keeps the columns of the features not shrunk (narrowed blocks) when they fit, and the later cycles read nothing:
    the same model, bit for bit, fewer bytes read."""
    store = generated[0]
    ensure_columns(store)
    entries = BlockStore(store).columns.nnz * 8 / 1e6  # MB of the columns' row ids and values
    runs = {
        mb: train(store, penalty="l1", loss="logistic", C=1.0, memory_mb=memory_for(store, mb, "glmnet"), verbose=0)
        for mb in (1024.0, 0.8 * entries, 1e-3)  # all kept; the narrowed kept; nothing kept
    }
    kept, narrowed, none = runs.values()
    for run in (narrowed, none):
        np.testing.assert_array_equal(run.model.coef, kept.model.coef)
        np.testing.assert_array_equal(run.model.intercept, kept.model.intercept)
    read = {mb: sum(r["bytes_read"] for r in run.history) for mb, run in runs.items()}
    assert read[1024.0] < read[0.8 * entries] < 0.8 * read[1e-3], read
