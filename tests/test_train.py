"""The outer loop, its stopping rules and monitoring, on small generated stores."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import split_text
from oracle import primal
from sklearn.datasets import load_svmlight_file

from blocksvm.datasets import SyntheticSpec
from blocksvm.errors import ParameterError
from blocksvm.io import convert
from blocksvm.losses import HINGE, SQUARED_HINGE
from blocksvm.solvers import _dual_cd_kernels as K
from blocksvm.solvers._common import row_norms_squared
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, train
from blocksvm.train.records import relative_gap
from blocksvm.train.schedule import Schedule


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 6,000-row generated set in 8 blocks, with its text for independent checks."""
    spec = SyntheticSpec(rows=7000, features=500, nnz=20, seed=3)
    root = split_text(tmp_path_factory.mktemp("small"), spec, 6000, block_rows=750)
    X, y = load_svmlight_file(str(root / "train.svm"), n_features=500)
    return root, X, y


def objective(W: np.ndarray, X, y, C: float, loss: str, bias: float = 1.0) -> float:
    """The oracle's primal for solver weights (last entry: the bias feature's weight)."""
    return primal(W[:-1], W[-1] * bias if bias > 0 else 0.0, X, y, C, loss, bias)


def test_kernel_keeps_w_equal_to_its_dual_sum():
    rng = np.random.default_rng(0)
    X = sp.random(300, 40, density=0.2, format="csr", random_state=1, dtype=np.float64)
    y = np.where(rng.random(300) > 0.5, 1.0, -1.0)
    indptr = X.indptr.astype(np.int64)
    empty = (
        np.zeros(1, np.int64),
        np.zeros(0, np.int32),
        np.zeros(0),
        np.zeros(0),
        np.zeros(0),
        np.zeros(0),
        np.zeros(0),
    )
    for loss in (HINGE, SQUARED_HINGE):
        upper, diag = loss.dual_tables(0.7, 1.3)
        alpha, w = np.zeros(300), np.zeros(41)
        for seed in range(5):
            a = (indptr, X.indices, X.data, y, row_norms_squared(indptr, X.data), alpha, np.zeros(0))  # (no weights)
            box = (upper, diag, np.array([0.7, 1.3]))
            K.solve_block(a, empty, w, box, np.array([1.0, 2, -1.0, 1.0]), loss.table, seed, np.arange(300))
        Xb = sp.hstack([X, np.ones((300, 1))]).tocsr()
        np.testing.assert_allclose(w, Xb.T @ (alpha * y), atol=1e-10)
        assert np.all(alpha >= 0) and np.all(alpha <= upper[(y > 0).astype(int)] + 1e-12)


def test_reported_objectives_and_gap_are_right(small):
    root, X, y = small
    result = train(root / "train.bsvm", C=0.5, loss="squared-hinge", tol=1e-5, verbose=0)
    last = result.history[-1]
    assert last["primal_exact"]
    W = np.concatenate([result.model.coef[0], result.model.intercept / result.model.bias])
    assert last["primal"] == pytest.approx(objective(W, X, y, 0.5, "squared-hinge"), rel=1e-9)
    assert last["dual"] <= last["primal"]
    assert last["gap"] == pytest.approx((last["primal"] - last["dual"]) / last["primal"])
    assert last["gap"] <= 1e-5


def test_same_seed_same_model_other_seed_other_path(small):
    root = small[0]
    params = TrainParams(max_outer=3, tol=0, seed=7)
    first = train(root / "train.bsvm", params, verbose=0).model
    second = train(root / "train.bsvm", params, verbose=0).model
    np.testing.assert_array_equal(first.coef, second.coef)
    other = train(root / "train.bsvm", params, verbose=0, seed=8).model
    assert not np.array_equal(first.coef, other.coef)


def test_block_order_is_a_fresh_permutation_each_pass():
    orders = [Schedule(0, outer).order(12) for outer in range(1, 6)]
    for order in orders:
        assert sorted(order) == list(range(12))
    assert len({tuple(o) for o in orders}) == 5


def test_history_file_has_one_record_per_outer_iteration(small, tmp_path):
    root = small[0]
    history = tmp_path / "h.jsonl"
    result = train(
        root / "train.bsvm",
        max_outer=4,
        tol=0,
        history_path=history,
        verbose=0,
        validation=root / "train.bsvm",
        eval_every=2,
    )
    records = [json.loads(line) for line in history.read_text().splitlines()]
    assert [r["outer"] for r in records] == [1, 2, 3, 4]
    assert records == result.history
    assert [r["primal_exact"] for r in records] == [False, True, False, True]
    for r in records:
        assert 0.5 < r["train_accuracy"] <= 1 and 0.5 < r["validation_accuracy"] <= 1
        assert r["nsv"] > 0 and r["pg_violation"] > 0
    # the store is read once, then kept in memory (it fits the default budget)
    assert records[0]["bytes_read"] == BlockStore(root / "train.bsvm").info()["bytes_on_disk"]
    assert [r["bytes_read"] for r in records[1:]] == [0, 0, 0]
    # the dual objective increases monotonically under exact coordinate minimization
    duals = [r["dual"] for r in records]
    assert duals == sorted(duals)


def test_eps_rule_stops_like_liblinear(small):
    result = train(small[0] / "train.bsvm", tol=0, eps=0.5, max_outer=100, verbose=0)
    assert result.stop_reason.startswith("PG violation")
    assert result.history[-1]["pg_violation"] <= 0.5
    assert all(r["pg_violation"] > 0.5 for r in result.history[:-1])


def test_max_outer_stop_reports_exact_final_objective(small):
    result = train(small[0] / "train.bsvm", tol=1e-12, max_outer=2, verbose=0)
    assert result.stop_reason.startswith("max_outer")
    assert result.history[-1]["primal_exact"]
    assert not result.interrupted


def test_time_limit_stops_at_a_block_boundary(small):
    result = train(small[0] / "train.bsvm", tol=0, max_outer=10_000, time_limit=0.3, verbose=0)
    assert result.interrupted and result.stop_reason == "time limit reached"
    assert result.model.coef.shape == (1, 500)


def test_working_set_block_is_plain_block_minimization(small):
    result = train(small[0] / "train.bsvm", working_set="block", tol=1e-3, max_outer=200, verbose=0)
    assert result.model.summary["gap"] <= 1e-3


def test_class_weights_shift_the_decision_towards_the_heavy_class(small):
    root, X, y = small
    plain = train(root / "train.bsvm", max_outer=5, tol=0, verbose=0).model
    heavy = train(root / "train.bsvm", max_outer=5, tol=0, verbose=0, class_weight={1: 10.0}).model
    assert np.mean(heavy.predict(X) == 1) > np.mean(plain.predict(X) == 1)


def test_bad_parameters_are_refused_with_their_name(small):
    with pytest.raises(ParameterError, match="C must be a positive"):
        train(small[0] / "train.bsvm", C=-1.0)
    with pytest.raises(ParameterError, match="loss must be one of"):
        train(small[0] / "train.bsvm", loss="cubic")
    with pytest.raises(ParameterError, match="unknown parameter"):
        train(small[0] / "train.bsvm", cost=1.0)
    with pytest.raises(ParameterError, match="class_weight names label"):
        train(small[0] / "train.bsvm", class_weight={5: 2.0})


def test_relative_gap_takes_the_worst_problem():
    assert relative_gap(np.array([10.0, 4.0]), np.array([9.0, 3.0])) == pytest.approx(0.25)


def test_pegasos_without_averaging_learns(small):
    root, X, y = small
    result = train(
        root / "train.bsvm", solver="pegasos", loss="squared-hinge", average=False, max_outer=5, batch_size=4, verbose=0
    )
    assert np.mean(result.model.predict(X) == y) > 0.8
    assert result.history[-1]["dual"] is None and result.history[-1]["gap"] is None


def test_store_with_one_class_is_refused(tmp_path):
    text = tmp_path / "one.svm"
    text.write_text("1 1:1\n1 2:1\n")
    convert(text, tmp_path / "one.bsvm", progress=False)
    with pytest.raises(ParameterError, match="single class"):
        train(tmp_path / "one.bsvm")


def test_validation_store_of_another_index_base_is_refused(small, tmp_path):
    text = tmp_path / "zero.svm"
    text.write_text("1 0:1 2:1\n-1 1:1\n")
    convert(text, tmp_path / "zero.bsvm", progress=False)
    assert BlockStore(tmp_path / "zero.bsvm").index_base == 0
    with pytest.raises(Exception, match="different feature spaces"):
        train(small[0] / "train.bsvm", validation=tmp_path / "zero.bsvm", max_outer=1)


def test_cache_working_set_reaches_the_same_optimum_in_fewer_passes(small):
    root, X, y = small
    runs = {
        ws: train(root / "train.bsvm", working_set=ws, cache_mb=0.2, loss="hinge", tol=1e-4, max_outer=500, verbose=0)
        for ws in ("pair", "cache")
    }
    primal = {ws: r.model.summary["primal"] for ws, r in runs.items()}
    assert all(r.model.summary["gap"] <= 1e-4 for r in runs.values())
    assert primal["cache"] == pytest.approx(primal["pair"], rel=2e-4)
    assert len(runs["cache"].history) < len(runs["pair"].history)
