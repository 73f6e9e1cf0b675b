"""``blocksvm tune``: K-fold cross-validation over C, every fold sharing each block read (issue 23).

The oracle is LIBLINEAR (liblinear-official): the split is rebuilt here from the documented rule (a row's fold
is splitmix64 of its store position and the seed, written out again below in plain Python), LIBLINEAR trains
each fold's training rows at each C, and its objective (computed by tests/oracle.py) and its predictions of
the held-out rows are compared with the folds' models of the search.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import SWEEPS_A_VISIT
from oracle import documented_fold, liblinear_fold, primal, row_costs, store_arrays
from sklearn.datasets import dump_svmlight_file

from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.errors import ParameterError
from blocksvm.io import convert
from blocksvm.solvers.problem import fold_of
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, tune
from blocksvm.train.c_search import Tuner
from blocksvm.train.params import settle_tune

liblinear = pytest.importorskip("liblinear.liblinearutil")

GRID = (0.0625, 0.25, 1.0)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """A two-class and a three-class generated store of 1,500 rows in 4 blocks."""
    root = tmp_path_factory.mktemp("tune")
    made = {}
    for classes in (2, 3):
        spec = SyntheticSpec(rows=1500, features=60, nnz=12, noise=0.1, seed=5, classes=classes)
        made[classes] = BlockStore(make_store(root / f"c{classes}.bsvm", spec, block_rows=400, progress=False))
    return made


def searched(store, loss: str, warm: bool = True, solver: str = "dual-cd", **more):
    """Run the search over GRID with ``Tuner``, keeping every fold's weights at every C (dual CD to a 1e-6 gap,
    Newton to LIBLINEAR's gradient rule at 1e-7)."""
    rule = {"tol": 1e-6} if solver == "dual-cd" else {"eps": 1e-7}
    given = {"loss": loss, "solver": solver, "max_outer": 1000, "C_grid": GRID, **rule, **more}
    params, _, options = settle_tune(None, given)
    options["warm"] = warm
    tuner = Tuner(store, params, options, verbose=0, progress=False)
    points, weights = [], []
    for C in GRID:
        points.append(tuner.solve_at(C))
        weights.append(tuner.solver.weights().reshape(tuner.problem.folds, tuner.problem.per_fold, -1).copy())
    return tuner, points, weights


def fold_primals(W, X, y, rows, loss: str, C: float, classes) -> np.ndarray:
    """The oracle's primal of each of a fold's problems on its training rows."""
    positives = classes[1:] if len(classes) == 2 else classes
    values = []
    for k, positive in enumerate(positives):
        t = np.where(y[rows] == positive, 1.0, -1.0)
        values.append(primal(W[k, :-1], W[k, -1], X[rows], t, row_costs(t, (C, C)), loss))
    return np.array(values)


def test_a_rows_fold_is_the_documented_hash():
    rows = np.array([0, 1, 2, 7, 1000, 2**40 + 3])
    for seed, folds in ((0, 5), (3, 10), (12345, 2)):
        expected = [documented_fold(int(r), seed, folds) for r in rows]
        assert fold_of(rows, seed, folds).tolist() == expected
    counts = np.bincount(fold_of(np.arange(100_000), 0, 5))
    assert counts.min() > 19_500 and counts.max() < 20_500  # about n / K each


@pytest.mark.parametrize(
    "classes, loss, solver",
    [  # the hinge: LIBLINEAR's -s 3 at its iteration cap, ours to a 1e-6 gap: the slow step
        (2, "squared-hinge", "dual-cd"),
        (2, "logistic", "dual-cd"),
        pytest.param(2, "hinge", "dual-cd", marks=pytest.mark.slow),
        (3, "squared-hinge", "dual-cd"),
        (3, "logistic", "dual-cd"),
        (2, "squared-hinge", "newton"),
        (3, "logistic", "newton"),
    ],
)
def test_every_fold_at_every_C_is_liblinears_model_of_its_rows(stores, classes, loss, solver):
    store = stores[classes]
    tuner, points, weights = searched(store, loss, solver=solver, **(SWEEPS_A_VISIT if loss == "hinge" else {}))
    X, y = store_arrays(store)
    labels = store.classes
    folds = np.array([documented_fold(i, 0, 5) for i in range(store.n_rows)])
    for C, point, W in zip(GRID, points, weights):
        correct = 0
        for f in range(5):
            train_rows, held = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
            theirs, model = liblinear_fold(X, y, train_rows, loss, C, labels)
            ours_p = fold_primals(W[f], X, y, train_rows, loss, C, labels)
            theirs_p = fold_primals(theirs, X, y, train_rows, loss, C, labels)
            if loss == "hinge":  # LIBLINEAR's -s 3 may stop at its iteration cap: ours (gap-certified) may be lower
                assert np.all(ours_p <= theirs_p * (1 + 1e-4)) and point.gap <= 1e-6, (ours_p, theirs_p)
            elif solver == "newton":
                assert np.isnan(point.gap)  # no dual
                np.testing.assert_allclose(ours_p, theirs_p, rtol=1e-6)
            else:
                np.testing.assert_allclose(ours_p, theirs_p, rtol=1e-4)
            predicted, _, _ = liblinear.predict(y[held], X[held], model, "-q")
            correct += int(np.sum(np.array(predicted) == y[held]))
        assert abs(100 * point.score - 100 * correct / len(y)) <= 0.1, (C, point.score, correct / len(y))


def test_warm_and_cold_searches_reach_the_same_models_and_warm_takes_fewer_passes(stores):
    _, warm_points, warm = searched(stores[2], "squared-hinge")
    _, cold_points, cold = searched(stores[2], "squared-hinge", warm=False)
    for a, b in zip(warm, cold):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)
    for a, b in zip(warm_points, cold_points):
        assert a.primal == pytest.approx(b.primal, rel=1e-5)
    assert sum(p.passes for p in warm_points[1:]) < sum(p.passes for p in cold_points[1:])


def test_the_search_picks_the_best_score_and_refits_at_it(stores, tmp_path):
    model_path = tmp_path / "best.h5"
    result = tune(stores[2], C_grid=GRID, tol=1e-4, refit=model_path, verbose=0)
    scores = [p.score for p in result.points]
    assert result.best_score == max(scores)
    assert result.best_C == result.points[scores.index(max(scores))].C  # the smallest C of ties
    assert [p.C for p in result.points] == list(GRID)
    assert model_path.exists() and result.model.summary["tune"]["best_C"] == result.best_C
    assert "<- best" in result.table()


def test_regression_scores_the_held_out_mean_squared_error(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(600, 20, density=0.3, format="csr", random_state=1)
    y = X @ rng.normal(size=20) + 0.1 * rng.normal(size=600)
    path = tmp_path / "r.svm"
    dump_svmlight_file(X, y, str(path))
    store = BlockStore(convert(path, tmp_path / "r.bsvm", block_rows=200, progress=False).output)
    result = tune(store, loss="squared-epsilon-insensitive", C_grid=(0.5, 2.0), tol=1e-5, verbose=0)
    assert result.metric == "mse"
    assert result.best_score == min(p.score for p in result.points)
    assert 0 < result.best_score < float(np.var(y))


def test_the_default_grid_starts_where_liblinear_starts(stores):
    store = stores[2]
    params, _, options = settle_tune(None, {})
    X, _ = store_arrays(store)
    largest = float(np.max(np.asarray(X.multiply(X).sum(axis=1)))) + 1.0  # the bias feature's 1^2
    expected = 2.0 ** np.floor(np.log2(1.0 / (2 * store.n_rows * largest)))  # calc_start_C, -s 2
    assert Tuner(store, params, options, verbose=0).start_C() == expected


@pytest.mark.parametrize(
    "given, message",
    [
        ({"C": 2.0}, "tune searches C: give the values to try as C_grid"),
        ({"folds": 1}, "folds must be an integer >= 2, not 1"),
        ({"C_grid": (1.0, -1.0)}, "C_grid must be positive numbers, all different, or None"),
        (
            {"solver": "pegasos"},
            "tune warm-starts dual-cd, newton, owl-qn, cdn and glmnet along C; solver=pegasos cannot continue",
        ),
        ({"workers": 2}, "workers is a train option; tune searches C by cross-validation"),
        ({"validation": "x.bsvm"}, "validation is a train option; tune searches C by cross-validation"),
        ({"average": True}, "average is read by the solvers pegasos"),
    ],
)
def test_bad_inputs_are_refused_in_one_line(given, message):
    with pytest.raises(ParameterError, match=f"^{message}"):
        settle_tune(None, given)


def test_more_folds_than_rows_is_refused(tmp_path):
    path = tmp_path / "tiny.svm"
    path.write_text("1 1:1\n-1 2:1\n1 1:2\n")
    with pytest.raises(ParameterError, match="folds=5: fold .* holds none of the 3 rows"):
        tune(path, folds=5, verbose=0)


def test_a_train_params_object_with_a_C_is_refused():
    with pytest.raises(ParameterError, match="tune searches C"):
        settle_tune(TrainParams(C=3.0), {})


def test_the_command_line_prints_the_table_or_json(stores, tmp_path, capsys):
    import json

    from blocksvm.cli import main

    store = stores[3].path
    assert main(["tune", str(store), "--C-grid", "2^-2..2^0", "--folds", "3", "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["tune", str(store), "--C-grid", "0.25,1", "--folds", "3", "--refit", str(tmp_path / "m.h5")]) == 0
    out = capsys.readouterr().out
    assert "<- best" in out and "best C = " in out
    assert main(["tune", str(store), "--C-grid", "0.25,1", "--folds", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert [p["C"] for p in figures["points"]] == [0.25, 1.0] and figures["folds"] == 3
    assert len(figures["points"][0]["fold_scores"]) == 3


def test_help_shows_exactly_what_tune_reads():
    from blocksvm.cli import build_parser
    from blocksvm.train.params import PARAMS, TUNE, tune_reads

    parser = next(a for a in build_parser()._actions if a.dest == "command").choices["tune"]
    of_alias = {alias.dest: p.name for p in PARAMS.values() for alias in p.aliases}  # -s: the loss's
    shown = {of_alias.get(a.dest, a.dest) for a in parser._actions if a.help != "==SUPPRESS=="}
    own = {"help", "quiet", "verbose", "debug", "json", "plot", "store"}
    assert shown - own == {p.name for p in tune_reads()} | set(TUNE)
    assert "C" not in shown and "solver" in shown  # dual CD or Newton


def test_plot_draws_the_search(stores, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from blocksvm.cli import main

    png = tmp_path / "cv.png"
    assert main(["tune", str(stores[2].path), "--C-grid", "0.25,1", "--folds", "3", "--plot", str(png), "-q"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_values_line_says_pass_or_passes_as_its_count_does(stores, capsys):
    """One pass is "1 pass", not "1 passes" (issue 33). A loose tolerance ends the warm-started values in one pass."""
    from blocksvm.cli import main

    assert main(["tune", str(stores[2].path), "--C-grid", "0.25,0.5,1", "--folds", "3", "--tol", "0.5"]) == 0
    counts = re.findall(r"  (\d+) (pass|passes)  [\d.]+ s", "".join(capsys.readouterr()))  # (the lines: stderr)
    assert len(counts) == 3 and ("1", "pass") in counts
    assert all((n == "1") == (word == "pass") for n, word in counts)
