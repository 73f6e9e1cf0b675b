"""Newton's method over blocks (``--solver newton``, LIBLINEAR's -s 0, 2 and 11), a pass learner (issue 30).

Oracles: LIBLINEAR itself (liblinear-official: its optimum, and its Newton at the same -e), a numpy transcription
of LIBLINEAR 2.50's ``newton.cpp`` and ``l2r_erm_fun`` (below: the iterates' objectives, one by one), and the serial
trainer (the fixed tree of blocksvm.sums makes threads, shards and resumed runs give its model bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_run, memory_for
from oracle import primal, row_costs, seed_liblinear
from sklearn.datasets import dump_svmlight_file

import blocksvm.sums
from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.io import convert
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore
from blocksvm.train import train

liblinear = pytest.importorskip("liblinear.liblinearutil")
CODES = {"squared-hinge": 2, "logistic": 0, "squared-epsilon-insensitive": 11}


def store_arrays(path) -> tuple[sp.csr_matrix, np.ndarray]:
    s = BlockStore(path)
    blocks = [s.read_block(b) for b in range(s.n_blocks)]
    X = sp.vstack([b.to_csr(s.n_features) for b in blocks]).tocsr().astype(np.float64)
    return X, np.concatenate([b.labels for b in blocks])


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("newton")
    spec = SyntheticSpec(rows=6000, features=2000, nnz=15, seed=5, noise=0.05)
    path = make_store(root / "s.bsvm", spec, block_rows=1500, progress=False)
    return path, *store_arrays(path)


@pytest.fixture(scope="module")
def three_classes(tmp_path_factory):
    root = tmp_path_factory.mktemp("newton3")
    spec = SyntheticSpec(rows=3000, features=300, nnz=12, seed=6, noise=0.05, classes=3)
    path = make_store(root / "s.bsvm", spec, block_rows=700, progress=False)
    return path, *store_arrays(path)


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    root = tmp_path_factory.mktemp("newton-svr")
    rng = np.random.default_rng(0)
    X = sp.random(3000, 400, density=0.02, random_state=1, format="csr")
    y = X @ rng.normal(size=400) + rng.normal(scale=0.1, size=3000)
    dump_svmlight_file(X, y, str(root / "r.svm"))
    convert(root / "r.svm", root / "r.bsvm", block_rows=700, progress=False)
    return root / "r.bsvm", *store_arrays(root / "r.bsvm")


def liblinear_weights(X, y, code: int, C: float, bias: float, eps: float, weights: str = "") -> dict:
    """LIBLINEAR's ``(coef, intercept)`` per class label (``None``: the one problem of two classes or regression)."""
    seed_liblinear()
    B = bias if bias > 0 else -1
    model = liblinear.train(liblinear.problem(y, X), f"-s {code} -c {C} -B {B} -e {eps} {weights} -q")
    labels = model.get_labels()
    if model.get_nr_class() <= 2:
        w, b = model.get_decfun(0)
        sign = -1.0 if labels and labels[0] == min(labels) and code != 11 else 1.0
        return {None: (sign * np.array(w), sign * b)}
    return {label: tuple(map(np.array, model.get_decfun(labels.index(label)))) for label in labels}


def binary_primal(coef, intercept, X, y, loss, costs, bias) -> float:
    t = np.where(y == y.max(), 1.0, -1.0)
    if loss == "squared-epsilon-insensitive":
        w_bias = intercept / bias if bias > 0 else 0.0
        r = np.abs(X @ coef + intercept - y) - 0.1
        return 0.5 * (coef @ coef + w_bias**2) + costs[0] * float(np.sum(np.maximum(r, 0.0) ** 2))
    return primal(coef, intercept, X, t, row_costs(t, costs), loss, bias=bias)


# ---- LIBLINEAR's optimum ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data, loss, C, bias, weights",
    [
        ("a9a", "squared-hinge", 1.0, 1.0, None),
        ("a9a", "logistic", 4.0, -1.0, None),
        ("w8a", "squared-hinge", 0.5, 1.0, {1: 5.0}),
        ("w8a", "logistic", 1.0, 1.0, None),
        ("generated", "squared-hinge", 2.0, -1.0, {-1: 0.5, 1: 2.0}),
        ("generated", "logistic", 0.25, 1.0, None),
        ("regression", "squared-epsilon-insensitive", 1.0, 1.0, None),
        ("regression", "squared-epsilon-insensitive", 4.0, -1.0, None),
    ],
)
def test_reaches_liblinears_optimum(request, data, loss, C, bias, weights):
    store, X, y = request.getfixturevalue(data)
    ours = train(store, solver="newton", loss=loss, C=C, bias=bias, class_weight=weights, eps=1e-5, verbose=0)
    flags = " ".join(f"-w{int(label)} {w}" for label, w in (weights or {}).items())
    ((coef, intercept),) = liblinear_weights(X, y, CODES[loss], C, bias, 1e-8, flags).values()
    costs = (C * (weights or {}).get(-1, 1.0), C * (weights or {}).get(1, 1.0))
    theirs = binary_primal(coef, intercept, X, y, loss, costs, bias)
    mine = binary_primal(ours.model.coef[0], ours.model.intercept[0], X, y, loss, costs, bias)
    assert abs(mine - theirs) <= 1e-6 * theirs, (mine, theirs)
    assert ours.model.summary["primal"] == pytest.approx(mine, rel=1e-9)  # the record's objective is exact
    assert ours.stop_reason.startswith("gradient norm")


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_three_classes_one_vs_rest_are_liblinears_problems(three_classes, loss):
    store, X, y = three_classes
    weights = {2: 3.0}
    ours = train(store, solver="newton", loss=loss, C=0.5, class_weight=weights, eps=1e-6, verbose=0)
    theirs = liblinear_weights(X, y, CODES[loss], 0.5, 1.0, 1e-8, "-w2 3")
    for k, label in enumerate(ours.model.classes):
        t = np.where(y == label, 1.0, -1.0)
        costs = (0.5, 0.5 * weights.get(int(label), 1.0))
        coef, intercept = theirs[int(label)]
        expected = primal(coef, intercept, X, t, row_costs(t, costs), loss)
        got = primal(ours.model.coef[k], ours.model.intercept[k], X, t, row_costs(t, costs), loss)
        assert abs(got - expected) <= 1e-6 * expected, (label, got, expected)
        assert ours.history[-1]["per_problem_primal"][k] == pytest.approx(got, rel=1e-9)


def test_at_liblinears_default_eps_it_takes_liblinears_path(a9a):
    """The same algorithm at the same -e: the same iterations and the same objective (to rounding)."""
    store, X, y = a9a
    ours = train(store, solver="newton", loss="logistic", C=2.0, verbose=0)  # eps None: LIBLINEAR's 0.01
    ((coef, intercept),) = liblinear_weights(X, y, 0, 2.0, 1.0, 0.01).values()
    theirs = binary_primal(coef, intercept, X, y, "logistic", (2.0, 2.0), 1.0)
    assert ours.model.summary["primal"] == pytest.approx(theirs, rel=1e-10)


# ---- LIBLINEAR's algorithm, transcribed ---------------------------------------------------------------------


def liblinear_newton(X, y, C: float, eps: float, max_iter: int = 50) -> list[float]:
    """LIBLINEAR 2.50's ``NEWTON::newton`` with ``l2r_l2_svc_fun`` (squared hinge, bias a regularized column of X),
    in numpy: the objective after each iteration."""
    n = X.shape[1]

    def fun_grad(w):
        z = y * (X @ w)
        active = z < 1
        f = 0.5 * w @ w + C * np.sum((1 - z[active]) ** 2)
        g = w + 2 * C * X[active].T @ (y[active] * (z[active] - 1))
        return f, g, active

    f, g, active = fun_grad(np.zeros(n))
    gnorm0 = np.linalg.norm(g)
    w, objectives = np.zeros(n), []
    tol = eps * max(min(np.sum(y > 0), np.sum(y < 0)), 1) / len(y)
    for _ in range(max_iter):
        if np.linalg.norm(g) <= tol * gnorm0:
            break
        M = 0.99 + 0.01 * (1 + 2 * C * np.asarray(X[active].multiply(X[active]).sum(axis=0)).ravel())
        s, r = np.zeros(n), -g
        z = r / M
        d, zTr, Q = z.copy(), z @ r, 0.0
        cgtol, steps = min(0.5, np.sqrt(np.sqrt(zTr))), 0
        while steps < max(n, 5):
            steps += 1
            Hd = d + 2 * C * X[active].T @ (X[active] @ d)
            dHd = d @ Hd
            if dHd <= 1e-16:
                break
            alpha = zTr / dHd
            s, r = s + alpha * d, r - alpha * Hd
            new_Q = -0.5 * (s @ r - s @ g)
            if not (new_Q <= 0 and new_Q - Q <= 0) or steps * (new_Q - Q) >= cgtol * new_Q:
                break
            Q, z = new_Q, r / M
            new_zTr = z @ r
            d, zTr = z + (new_zTr / zTr) * d, new_zTr
        step, f_old, gTs = 1.0, f, g @ s
        for _ in range(20):
            f_new = fun_grad(w + step * s)[0]
            if f_new - f_old <= 0.01 * step * gTs:
                break
            step *= 0.5
        w = w + step * s
        f, g, active = fun_grad(w)
        objectives.append(f)
        if abs(f_old - f) <= 1e-12 * abs(f):
            break
    return objectives


def test_iterates_are_liblinears_newton_transcribed(generated):
    store, X, y = generated
    t = np.where(y == y.max(), 1.0, -1.0)
    ours = train(store, solver="newton", C=2.0, bias=-1.0, eps=1e-4, verbose=0)
    expected = liblinear_newton(X, t, 2.0, 1e-4)
    np.testing.assert_allclose([r["primal"] for r in ours.history], expected, rtol=1e-9)


# ---- the same bits on any number of threads and shards, and resumed -----------------------------------------


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 256 rows: several a block, so that threads and shards split blocks' pieces."""
    monkeypatch.setattr(blocksvm.sums, "PIECE_NNZ", 1000)
    monkeypatch.setattr(blocksvm.sums, "PIECE_WEIGHTS", 0)


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
@pytest.mark.parametrize("split", [{"threads": 2}, {"threads": 3}, {"workers": 2}, {"workers": 3, "threads": 2}])
def test_threads_and_shards_give_the_serial_model_bit_for_bit(generated, small_pieces, loss, split):
    store = generated[0]
    serial = train(store, solver="newton", loss=loss, C=0.5, eps=1e-4, verbose=0)
    parallel = train(store, solver="newton", loss=loss, C=0.5, eps=1e-4, verbose=0, **split)
    assert_same_run(parallel, serial, "primal")


@pytest.mark.parametrize("fits", [True, False], ids=["in-memory", "read-every-pass"])
def test_a_run_cut_inside_passes_resumes_to_the_same_model(generated, small_pieces, tmp_path, train_in_cuts, fits):
    """Cut every 3 blocks (4 a pass: every position of a pass, and between passes of an iteration)."""
    store = generated[0]
    params = {"solver": "newton", "C": 0.5, "eps": 1e-4, "threads": 2}
    params["memory_mb"] = memory_for(store, 64.0 if fits else 0.01, "newton")
    whole = train(store, verbose=0, **params)
    result, cuts = train_in_cuts(store, tmp_path / "ck.h5", 3, **params)
    assert cuts >= 5
    np.testing.assert_array_equal(result.model.coef, whole.model.coef)
    assert [r["primal"] for r in result.history] == [r["primal"] for r in whole.history]


def test_blocks_are_read_once_when_the_store_fits_and_at_every_pass_when_not(generated):
    store = generated[0]
    kept = train(store, solver="newton", C=0.5, eps=1e-4, verbose=0)
    read = train(store, solver="newton", C=0.5, eps=1e-4, memory_mb=memory_for(store, 0.01, "newton"), verbose=0)
    np.testing.assert_array_equal(kept.model.coef, read.model.coef)
    passes = sum(r["newton_passes"] for r in read.history)
    total = sum(r["bytes_read"] for r in kept.history)
    assert kept.history[0]["bytes_read"] == total > 0  # all in the first pass
    assert sum(r["bytes_read"] for r in read.history) == passes * total


# ---- faces ----------------------------------------------------------------------------------------------------


def test_liblinear_codes_0_2_and_11_choose_newton(generated, tmp_path):
    store = generated[0]
    for code, loss in ((2, "squared-hinge"), (0, "logistic"), (1, "squared-hinge")):
        assert main(["train", str(store), str(tmp_path / "m.h5"), "-s", str(code), "-q"]) == 0
        model = LinearModel.load(tmp_path / "m.h5")
        assert model.params["loss"] == loss
        assert model.params["solver"] == ("dual-cd" if code == 1 else "newton")
    assert main(["train", str(store), str(tmp_path / "m.h5"), "-s", "2", "--solver", "dual-cd", "-q"]) == 0
    assert LinearModel.load(tmp_path / "m.h5").params["solver"] == "dual-cd"  # the explicit flag wins


def test_iterations_are_recorded_and_max_outer_counts_them(generated):
    result = train(generated[0], solver="newton", C=4.0, eps=1e-9, max_outer=2, verbose=0)
    assert result.stop_reason == "max_outer (2) reached"
    assert [r["outer"] for r in result.history] == [1, 2]
    first = result.history[0]
    assert first["cg_steps"] >= 1 and first["newton_passes"] == first["cg_steps"] + 2  # start, CG, line search
    assert first["primal_exact"] and first["gap"] is None and first["gradient_norm"] < 1


def test_blocksvc_takes_newton(generated):
    from blocksvm import BlockSVC

    _, X, y = generated
    newton = BlockSVC(solver="newton", C=0.5, eps=1e-6, random_state=0).fit(X, y)
    dual = BlockSVC(C=0.5, tol=1e-8, max_outer=300, random_state=0).fit(X, y)
    assert newton.model_.summary["primal"] == pytest.approx(dual.model_.summary["primal"], rel=1e-6)
    assert newton.score(X, y) == pytest.approx(dual.score(X, y), abs=1e-3)


def test_tune_searches_C_with_newton_and_refits_from_the_folds(generated, tmp_path):
    from blocksvm.train import tune

    store = generated[0]
    grid = (0.0625, 0.5, 4.0)
    newton = tune(store, solver="newton", C_grid=grid, eps=1e-6, folds=3, refit=tmp_path / "n.h5", verbose=0)
    dual = tune(store, C_grid=grid, tol=1e-7, max_outer=300, folds=3, verbose=0)
    assert newton.best_C == dual.best_C
    for a, b in zip(newton.points, dual.points):
        assert a.primal == pytest.approx(b.primal, rel=1e-6)
        assert a.score == pytest.approx(b.score, abs=1e-3)
    direct = train(store, solver="newton", C=newton.best_C, eps=1e-6, verbose=0)
    assert newton.model.summary["primal"] == pytest.approx(direct.model.summary["primal"], rel=1e-8)


def test_a_search_with_newton_cut_inside_passes_resumes_to_the_same_table(generated, tmp_path, tune_in_cuts):
    from blocksvm.train import tune

    options = {"solver": "newton", "C_grid": (0.25, 1.0), "eps": 1e-4, "folds": 3}
    whole = tune(generated[0], verbose=0, **options)
    result, cuts = tune_in_cuts(generated[0], tmp_path / "ck.h5", 3, **options)
    assert cuts >= 3
    assert [(p.C, p.score, p.primal, p.passes) for p in result.points] == [
        (p.C, p.score, p.primal, p.passes) for p in whole.points
    ]
