"""CoCoA+ rounds (blocksvm.solvers.cocoa, on blocksvm.train.engines) on joblib threads and a real dask LocalCluster.

Oracles: the serial trainer (K = 1 is it, bit for bit), the serial optimum (a gap certificate at a
tight tolerance), a numpy transcription of CoCoA+ (Ma et al. 2015, Algorithm 1 with sigma' = K and
dual CD as the local solver), and the dual's monotone increase that the sigma' = K bound guarantees.
The fault tests make a worker exit inside a chosen round (a test-only hook), so they are
deterministic: the kill always lands mid-round, whatever the machine's speed.
"""

from __future__ import annotations

import gc
import os
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import cli
from oracle import liblinear_fit, primal
from sklearn.datasets import dump_svmlight_file

from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.errors import CheckpointError, ParameterError
from blocksvm.io import convert
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore
from blocksvm.train import Trainer, TrainParams, train
from blocksvm.train.engines import FAULT_VARIABLE

distributed = pytest.importorskip("distributed")

# Rows spread over many features and no bias feature: a shared constant feature is CoCoA+'s worst
# case (docs/PARALLEL.md), which the convergence tests would only make slow.
SPEC = SyntheticSpec(rows=4000, features=5000, nnz=12, seed=3, noise=0.02, power=1.0)
QUICK = {"verbose": 0, "bias": -1.0}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("par") / "s.bsvm", SPEC, block_rows=500, progress=False)


@pytest.fixture(scope="module")
def multiclass_store(tmp_path_factory):
    spec = SyntheticSpec(rows=3000, features=3000, nnz=10, seed=4, noise=0.02, power=1.0, classes=3)
    return make_store(tmp_path_factory.mktemp("par3") / "s.bsvm", spec, block_rows=500, progress=False)


def new_cluster():
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")


@pytest.fixture(scope="module")
def client():
    with new_cluster() as cluster, distributed.Client(cluster) as client:
        yield client


def same_model(a, b) -> None:
    np.testing.assert_array_equal(a.model.coef, b.model.coef)
    np.testing.assert_array_equal(a.model.intercept, b.model.intercept)


# ---- K = 1 is the serial trainer ------------------------------------------------------------------

# (a shard solves each visit as the serial trainer does with several inner passes; the serial trainer's own default,
# one sweep a pass over the rows it keeps in memory, has no shards)
PER_VISIT = {"inner_passes": 5}


@pytest.mark.parametrize(
    "options",
    [
        {"working_set": "cache"},
        {"working_set": "pair", "loss": "hinge"},
        {"working_set": "block", "bias": 1.0},
        {"class_weight": {1: 3.0}, "loss": "hinge"},
    ],
)
def test_one_shard_on_the_cluster_is_the_serial_trainer_bit_for_bit(store, client, options):
    params = {**QUICK, "max_outer": 4, "tol": 0, **PER_VISIT, **options}
    same_model(train(store, workers=1, client=client, **params), train(store, **params))


def test_one_shard_multiclass_is_the_serial_trainer_bit_for_bit(multiclass_store, client):
    params = {**QUICK, "max_outer": 3, "tol": 0, **PER_VISIT}
    same_model(train(multiclass_store, workers=1, client=client, **params), train(multiclass_store, **params))


# ---- the algorithm --------------------------------------------------------------------------------


def dense_problem(path, bias: float):
    s = BlockStore(path)
    blocks = [s.read_block(b) for b in range(s.n_blocks)]
    X = sp.vstack([b.to_csr(s.n_features) for b in blocks]).toarray().astype(np.float64)
    if bias > 0:
        X = np.hstack([X, np.full((len(X), 1), bias)])
    y = np.where(np.concatenate([b.labels for b in blocks]) == s.classes[-1], 1.0, -1.0)
    block_of = np.concatenate([np.full(b.n_rows, b.index) for b in blocks])
    return X, y, block_of


def cocoa_plus(X, y, block_of, K: int, rounds: int, C: float, loss: str, sigma=None, line_search=False):
    """CoCoA+ (Ma et al. 2015, Algorithm 1; adding, sigma' = K by default): each round, every shard (blocks
    b mod K) makes one pass of dual CD over its rows in stored order on its local subproblem from the shared
    w; w becomes w + sum_k dw_k. Coordinates whose projected gradient is below 1e-12 are left alone
    (LIBLINEAR's rule). With ``line_search`` the summed step d is scaled by the gamma that maximizes the dual
    D(alpha + gamma d) = sum alpha - 1/2 ||w||^2 - 1/2 sum D alpha^2, a parabola in gamma, within the box."""
    upper, diag = (C, 0.0) if loss == "hinge" else (np.inf, 1.0 / (2.0 * C))
    alpha, w, sigma = np.zeros(len(y)), np.zeros(X.shape[1]), float(sigma or K)
    for _ in range(rounds):
        start = alpha.copy()
        for k in range(K):
            u = w.copy()  # w + sigma' dw_k
            for i in np.flatnonzero(block_of % K == k):
                G = y[i] * (u @ X[i]) - 1.0 + diag * alpha[i]
                pg = min(G, 0.0) if alpha[i] == 0 else max(G, 0.0) if alpha[i] == upper else G
                if abs(pg) <= 1e-12:
                    continue
                qd = sigma * (X[i] @ X[i]) + diag
                new = min(max(alpha[i] - G / qd, 0.0), upper) if qd > 0 else upper
                u += sigma * (new - alpha[i]) * y[i] * X[i]
                alpha[i] = new
        d = alpha - start
        step = X.T @ (d * y)
        gamma = 1.0
        if line_search:
            with np.errstate(divide="ignore", invalid="ignore"):
                room = np.where(d > 0, (upper - start) / d, np.where(d < 0, -start / d, np.inf))
            slope = d.sum() - w @ step - diag * start @ d
            gamma = min(max(slope / (step @ step + diag * d @ d), 0.0), room.min())
        alpha = start + gamma * d
        w = w + gamma * step
    return w, alpha


def dual(alpha, w, C: float, loss: str) -> float:
    diag = 0.0 if loss == "hinge" else 1.0 / (2.0 * C)
    return alpha.sum() - 0.5 * w @ w - 0.5 * diag * alpha @ alpha


@pytest.mark.parametrize(
    "K, loss, bias, sigma, line_search",
    [
        (2, "hinge", -1.0, None, False),
        (3, "squared-hinge", 1.0, None, False),
        (4, "hinge", 1.0, None, False),
        (2, "squared-hinge", -1.0, None, True),
        (3, "hinge", 1.0, 1.0, True),
        (4, "squared-hinge", 1.0, 2.0, True),
    ],
)
def test_rounds_equal_a_numpy_transcription_of_cocoa_plus(store, K, loss, bias, sigma, line_search):
    X, y, block_of = dense_problem(store, bias)
    expected, _ = cocoa_plus(X, y, block_of, K, rounds=3, C=0.5, loss=loss, sigma=sigma, line_search=line_search)
    result = train(
        store,
        workers=K,
        line_search=line_search,
        cocoa_sigma=sigma,
        order="file",
        working_set="block",
        inner_passes=1,
        C=0.5,
        loss=loss,
        bias=bias,
        max_outer=3,
        tol=0,
        verbose=0,
    )
    got = np.hstack([result.model.coef[0], result.model.intercept / bias if bias > 0 else []])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "working_set, loss, sigma, line_search",
    [
        ("cache", "hinge", None, False),
        ("pair", "hinge", None, False),
        ("block", "hinge", None, False),
        ("cache", "hinge", 1.0, True),
        ("pair", "squared-hinge", 1.0, True),
        ("block", "squared-hinge", None, True),
    ],
)
def test_the_dual_never_decreases(store, working_set, loss, sigma, line_search):
    """sigma' = K makes the sum of the local subproblems a lower bound of the dual: every round raises it. The
    line search maximizes the dual along the shards' summed step (gamma = 0 would keep it): it never lowers it,
    whatever sigma'."""
    result = train(
        store,
        workers=3,
        working_set=working_set,
        loss=loss,
        cocoa_sigma=sigma,
        line_search=line_search,
        max_outer=8,
        tol=0,
        **QUICK,
    )
    duals = [r["dual"] for r in result.history]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:])), duals
    assert duals[-1] > duals[0]


def test_the_line_search_keeps_every_alpha_in_its_box_and_the_dual_exact(store, tmp_path):
    """sigma' = 1 makes each shard's step as long as the serial one: summed, they overshoot, and the line search
    cuts them back; the alphas stay in [0, C] and the recorded dual is the dual of the saved alphas."""
    ck = tmp_path / "ck.h5"
    C = 0.5
    result = train(store, workers=4, loss="hinge", C=C, cocoa_sigma=1.0, max_outer=4, tol=0, checkpoint=ck, **QUICK)
    from blocksvm.checkpoint import read_latest

    saved, _ = read_latest(ck)
    X, y, block_of = dense_problem(store, -1.0)
    alpha = np.zeros(len(y))
    for k in range(4):
        alpha[np.flatnonzero(block_of % 4 == k)] = saved.arrays[f"shard{k}.alpha"][0]
    assert alpha.min() >= 0 and alpha.max() <= C * (1 + 1e-12)
    w = X.T @ (alpha * y)
    np.testing.assert_allclose(result.model.coef[0], w, rtol=1e-9, atol=1e-12)
    assert result.history[-1]["dual"] == pytest.approx(dual(alpha, w, C, "hinge"), rel=1e-12)


def test_a_sigma_below_k_without_the_line_search_is_refused(store):
    with pytest.raises(ParameterError, match="cocoa_sigma 1 is below the 2 shards"):
        train(store, workers=2, cocoa_sigma=1.0, line_search=False, **QUICK)


def test_a_parallel_dual_is_the_dual_of_its_alpha(store, tmp_path):
    """The checkpoint holds every shard's alpha: the dual from them and w = sum alpha_i y_i x_i."""
    ck = tmp_path / "ck.h5"
    result = train(store, workers=2, loss="hinge", max_outer=3, tol=0, checkpoint=ck, **QUICK)
    from blocksvm.checkpoint import read_latest

    saved, _ = read_latest(ck)
    X, y, block_of = dense_problem(store, -1.0)
    alpha = np.zeros(len(y))
    for k in range(2):
        rows = np.flatnonzero(block_of % 2 == k)  # the shard's rows in its local order: its blocks ascending
        alpha[rows] = saved.arrays[f"shard{k}.alpha"][0]
    w = X.T @ (alpha * y)
    np.testing.assert_allclose(result.model.coef[0], w, rtol=1e-9, atol=1e-12)
    assert result.history[-1]["dual"] == pytest.approx(alpha.sum() - 0.5 * w @ w, rel=1e-12)


# ---- the optimum, in every mode --------------------------------------------------------------------


@pytest.fixture(scope="module")
def serial_optimum(store):
    return {loss: train(store, loss=loss, tol=1e-7, max_outer=200, **QUICK) for loss in ("hinge", "squared-hinge")}


def assert_at_optimum(result, serial) -> None:
    assert result.stop_reason.startswith("relative duality gap"), result.stop_reason
    assert result.model.summary["primal"] <= serial.model.summary["primal"] * (1 + 1e-4)
    agree = np.mean(np.sign(result.model.coef) == np.sign(serial.model.coef))
    assert agree > 0.9


@pytest.mark.parametrize("loss", [pytest.param("hinge", marks=pytest.mark.slow), "squared-hinge"])
def test_threads_reach_the_serial_optimum(store, serial_optimum, loss):
    result = train(store, workers=2, loss=loss, tol=1e-5, max_outer=150, **QUICK)
    assert_at_optimum(result, serial_optimum[loss])


def test_the_cluster_reaches_the_serial_optimum(store, client, serial_optimum):
    result = train(store, client=client, loss="squared-hinge", tol=1e-5, max_outer=150, **QUICK)
    assert result.model.params["workers"] == 2  # one shard per worker by default
    assert_at_optimum(result, serial_optimum["squared-hinge"])


@pytest.mark.slow
def test_multiclass_with_class_weights_on_the_cluster(multiclass_store, client):
    params = {**QUICK, "class_weight": {1: 2.0, 3: 0.5}, "loss": "squared-hinge"}
    serial = train(multiclass_store, tol=1e-7, max_outer=200, **params)
    result = train(multiclass_store, client=client, workers=3, tol=1e-5, max_outer=150, **params)
    assert result.stop_reason.startswith("relative duality gap")
    per_problem = np.array(result.history[-1]["per_problem_primal"])
    optimum = np.array(serial.history[-1]["per_problem_primal"])
    assert np.all(per_problem <= optimum * (1 + 1e-4))


def test_threads_and_the_cluster_take_the_same_path(store, client):
    params = {**QUICK, "workers": 2, "max_outer": 4, "tol": 0}
    same_model(train(store, client=client, **params), train(store, **params))


def test_newton_on_the_cluster_is_the_serial_model_bit_for_bit(store, client, monkeypatch):
    """A pass learner's shards sum their pieces on the workers; the coordinator adds their nodes in the fixed tree
    (blocksvm.sums): the serial model, to the last bit, whatever the split."""
    import blocksvm.sums

    monkeypatch.setattr(blocksvm.sums, "PIECE_NNZ", 1000)  # several pieces a block
    monkeypatch.setattr(blocksvm.sums, "PIECE_WEIGHTS", 0)
    params = {**QUICK, "solver": "newton", "loss": "logistic", "eps": 1e-4}
    serial = train(store, **params)
    on_cluster = train(store, client=client, **params)
    assert on_cluster.model.params["workers"] == 2
    same_model(on_cluster, serial)
    assert [r["primal"] for r in on_cluster.history] == [r["primal"] for r in serial.history]


def test_owl_qn_on_the_cluster_is_the_serial_model_bit_for_bit(store, client, monkeypatch):
    """The L1 problems (-s 5, -s 6; issue 32) on a 2-worker LocalCluster: OWL-QN's passes are sums, as Newton's."""
    import blocksvm.sums

    monkeypatch.setattr(blocksvm.sums, "PIECE_NNZ", 1000)
    monkeypatch.setattr(blocksvm.sums, "PIECE_WEIGHTS", 0)
    for loss in ("squared-hinge", "logistic"):
        params = {**QUICK, "penalty": "l1", "loss": loss, "C": 0.5, "eps": 1e-3, "solver": "owl-qn"}
        serial = train(store, **params)
        on_cluster = train(store, client=client, **params)
        assert on_cluster.model.params["workers"] == 2 and on_cluster.model.params["solver"] == "owl-qn"
        same_model(on_cluster, serial)
        assert [r["primal"] for r in on_cluster.history] == [r["primal"] for r in serial.history]


@pytest.fixture(scope="module")
def store_with_columns(tmp_path_factory):
    from blocksvm.io import write_columns

    path = make_store(tmp_path_factory.mktemp("cols") / "s.bsvm", SPEC, block_rows=500, progress=False)
    write_columns(path, block_mb=0.1)
    return path


def test_the_column_learners_on_the_cluster_are_the_serial_model_bit_for_bit(store_with_columns, client):
    """-s 5 and -s 6 by coordinate descent over the columns: each worker holds pieces of the features (2 and 3
    pieces here: a worker may hold two); the model depends on the pieces only, to the last bit."""
    for loss, pieces in (("squared-hinge", 2), ("logistic", 3)):
        params = {**QUICK, "penalty": "l1", "loss": loss, "C": 0.5, "eps": 1e-3, "column_pieces": pieces}
        serial = train(store_with_columns, **params)
        on_cluster = train(store_with_columns, client=client, **params)
        assert on_cluster.model.params["solver"] == {"squared-hinge": "cdn", "logistic": "glmnet"}[loss]
        same_model(on_cluster, serial)
        assert [r["primal"] for r in on_cluster.history] == [r["primal"] for r in serial.history]


# ---- faults and resume ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_worker_killed_mid_round_is_replaced_and_nothing_is_lost(store, tmp_path, monkeypatch):
    marker = tmp_path / "killed"
    params = {**QUICK, "workers": 2, "loss": "hinge", "max_outer": 6, "tol": 0}
    uninterrupted = train(store, **params)
    monkeypatch.setenv(FAULT_VARIABLE, f"3,1,{marker}")  # inherited by the cluster's worker processes
    with new_cluster() as cluster, distributed.Client(cluster) as client:
        result = train(store, client=client, **params)
    assert marker.exists(), "the worker running shard 1 in round 3 should have died"
    same_model(result, uninterrupted)  # no update of alpha lost or applied twice
    assert [r["outer"] for r in result.history] == list(range(1, 7))


@pytest.mark.slow
def test_a_worker_killed_after_a_checkpoint_is_rebuilt_from_it(store, tmp_path, monkeypatch):
    # a checkpoint makes the gathered shards the roots of their futures: the lost shard is rebuilt from there
    marker = tmp_path / "killed"
    params = {**QUICK, "workers": 2, "loss": "hinge", "max_outer": 6, "tol": 0}
    uninterrupted = train(store, **params)
    monkeypatch.setenv(FAULT_VARIABLE, f"4,0,{marker}")
    with new_cluster() as cluster, distributed.Client(cluster) as client:
        result = train(store, client=client, checkpoint=tmp_path / "ck.h5", **params)
    assert marker.exists(), "the worker running shard 0 in round 4 should have died"
    same_model(result, uninterrupted)


def scheduler_tasks(client) -> int:
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


def test_a_checkpoint_cuts_the_history_the_scheduler_keeps(store, client, wait_for):
    # the scheduler forgets tasks asynchronously: poll until the count is reached
    def tasks(n: int) -> None:
        wait_for(lambda: scheduler_tasks(client) == n, None, f"{n} tasks on the scheduler")

    params = TrainParams(**{k: v for k, v in QUICK.items() if k != "verbose"}, workers=2, loss="hinge")
    tasks(0)  # none left by another test
    trainer = Trainer(store, params, client=client, verbose=0)
    for outer in range(1, 7):
        trainer.passes.round(outer)
    tasks(2 + 6 * 5)  # the lineage: the 2 roots, and per round the w task, 2 round tasks and 2 shard states
    trainer.solver.state()  # what a checkpoint takes
    tasks(2)
    trainer.passes.round(7)
    tasks(2 + 5)
    del trainer
    gc.collect()
    tasks(0)


@pytest.mark.slow
def test_a_killed_threaded_run_resumes_from_its_checkpoint_exactly(store, tmp_path):
    marker, ck, model = tmp_path / "killed", tmp_path / "ck.h5", tmp_path / "m.h5"
    run = ["--workers", "2", "--bias", "-1", "--loss", "hinge", "--max-outer", "6", "--tol", "0"]
    args = cli("train", store, model, *run, "--checkpoint", ck, "-q")
    env = {**os.environ, FAULT_VARIABLE: f"4,0,{marker}"}
    killed = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert killed.returncode == 137 and marker.exists(), killed.stderr
    assert not model.exists()
    resumed = subprocess.run(
        cli("train", store, model, *run, "--resume", ck, "-q"), env=env, capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stderr
    uninterrupted = train(store, workers=2, loss="hinge", max_outer=6, tol=0, **QUICK)
    got = LinearModel.load(model)
    np.testing.assert_array_equal(got.coef, uninterrupted.model.coef)
    assert got.summary["outer_iterations"] == 6


def test_a_cluster_run_resumes_exactly_and_refuses_another_k(store, client, tmp_path):
    ck = tmp_path / "ck.h5"
    params = {**QUICK, "workers": 2, "working_set": "cache", "max_outer": 5, "tol": 0}
    whole = train(store, **params)
    train(store, client=client, checkpoint=ck, **{**params, "max_outer": 2})
    with pytest.raises(CheckpointError, match="workers=2 there, 3 here"):
        train(store, client=client, resume=ck, **{**params, "workers": 3})
    same_model(train(store, client=client, resume=ck, **params), whole)


# ---- refusals ----------------------------------------------------------------------------------------


def test_only_dual_cd_and_the_pass_learners_run_in_shards(store):
    readers = "dual-cd, newton, owl-qn, cdn, glmnet"
    with pytest.raises(ParameterError, match=f"workers is read by the solvers {readers}, not "):
        train(store, workers=2, solver="pegasos", **QUICK)


def test_more_workers_than_blocks_is_refused(store):
    with pytest.raises(ParameterError, match=r"workers \(9\) must be at most the store's blocks \(8\)"):
        train(store, workers=9, **QUICK)


# ---- the estimator ------------------------------------------------------------------------------------


@pytest.mark.parametrize("option, field", [({"workers": 2}, "workers"), ({"n_jobs": 2}, "threads")])
def test_blocksvc_shards_and_threads_reach_the_optimum(store, option, field):
    """``BlockSVC(workers=K)`` runs CoCoA+ shards; ``n_jobs=T`` (scikit-learn's name) threads inside each block."""
    from blocksvm import BlockSVC

    s = BlockStore(store)
    blocks = [s.read_block(b) for b in range(s.n_blocks)]
    X = sp.vstack([b.to_csr(s.n_features) for b in blocks]).tocsr()
    y = np.concatenate([b.labels for b in blocks])
    serial = BlockSVC(bias=-1.0, tol=1e-7, max_outer=200, random_state=0).fit(X, y)
    parallel = BlockSVC(bias=-1.0, tol=1e-5, max_outer=200, random_state=0, **option).fit(X, y)
    assert parallel.model_.params[field] == 2
    assert parallel.stop_reason_.startswith("relative duality gap")
    assert parallel.model_.summary["primal"] <= serial.model_.summary["primal"] * (1 + 1e-4)
    assert abs(parallel.score(X, y) - serial.score(X, y)) <= 0.01


def test_logistic_rounds_add_safely_and_reach_liblinear(store):
    """The logistic dual is not quadratic along the shards' step: the rounds add it with sigma' = K (the line search,
    exact only for the hinge family, is not used) and reach LIBLINEAR -s 7's optimum."""
    X, y, _ = dense_problem(store, bias=-1.0)
    coef, intercept = liblinear_fit(sp.csr_matrix(X), y, "logistic", C=1.0, bias=-1.0, eps=1e-8)
    result = train(store, workers=2, loss="logistic", tol=1e-5, max_outer=300, **QUICK)
    assert result.stop_reason.startswith("relative duality gap"), result.stop_reason
    ours = primal(result.model.coef[0], 0.0, X, y, 1.0, "logistic", bias=-1.0)
    assert abs(ours - primal(coef, intercept, X, y, 1.0, "logistic", bias=-1.0)) <= 1e-4 * ours


@pytest.mark.parametrize(
    "loss, tol",
    [("squared-epsilon-insensitive", 1e-4), pytest.param("epsilon-insensitive", 1e-2, marks=pytest.mark.slow)],
)
def test_regression_rounds_reach_the_serial_optimum(tmp_path, loss, tol):
    """SVR's dual is not quadratic along the step either (its |beta| term): sigma' = K, and the serial optimum
    (the L1 loss's rounds converge as O(1/epsilon): a loose gap keeps the test short)."""
    rng = np.random.default_rng(0)
    X = sp.random(2000, 1000, density=0.01, random_state=1, format="csr")  # rare features: rounds add up
    y = X @ rng.normal(size=1000) + rng.normal(scale=0.1, size=2000)
    text = tmp_path / "reg.svm"
    dump_svmlight_file(X, y, str(text))
    store = tmp_path / "reg.bsvm"
    convert(text, store, block_rows=500, progress=False)
    serial = train(store, loss=loss, tol=1e-7, max_outer=300, **QUICK)
    result = train(store, workers=2, loss=loss, tol=tol, max_outer=300, **QUICK)
    assert result.stop_reason.startswith("relative duality gap"), result.stop_reason
    assert result.model.summary["primal"] <= serial.model.summary["primal"] * (1 + tol)
