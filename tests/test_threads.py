"""Threads inside a block (``--threads T``, the engine's threads): dual CD's one-vs-rest problems a task each, or
one problem in T replicas of ``w`` merged after every sweep, exact at every block boundary (issue 21).

Oracles: LIBLINEAR's optimum (liblinear-official), the dual recomputed from scratch from the alphas a
checkpoint holds, and the serial trainer (T = 1 is it, bit for bit; so are one-vs-rest problems on T threads). One
problem's T replicas take another path than the serial one (a function of T, not of how the threads run), so the
tests ask what is guaranteed: the optimum to the tolerance, and ``w = sum_i alpha_i y_i x_i`` with the exact dual
at every block boundary. On this 2-core machine T = 3 and 8 share two cores: correctness, not speed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_run, memory_for
from oracle import liblinear_fit, primal, row_costs

from blocksvm.checkpoint import Checkpointer
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.losses import LOSSES
from blocksvm.penalties import liblinear_code
from blocksvm.store import BlockStore
from blocksvm.train import train

pytest.importorskip("liblinear.liblinearutil")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("threads")
    spec = SyntheticSpec(rows=6000, features=2000, nnz=15, seed=5, noise=0.05)
    make_store(root / "s.bsvm", spec, block_rows=1500, progress=False)
    return root / "s.bsvm"


def store_arrays(path) -> tuple[sp.csr_matrix, np.ndarray]:
    """The store's rows and labels, in store order (row_offset order), float64."""
    s = BlockStore(path)
    blocks = [s.read_block(b) for b in range(s.n_blocks)]
    X = sp.vstack([b.to_csr(s.n_features) for b in blocks]).tocsr().astype(np.float64)
    return X, np.concatenate([b.labels for b in blocks])


def at_liblinears_optimum(result, X, y, loss: str, C: float, bias: float, class_weight=None) -> None:
    assert result.stop_reason.startswith("relative duality gap"), result.stop_reason
    labels = np.where(y > 0, 1.0, -1.0)
    weights = class_weight or {}
    costs = (C * weights.get(-1, 1.0), C * weights.get(1, 1.0))
    model = result.model
    ours = primal(model.coef[0], model.intercept[0], X, labels, row_costs(labels, costs), loss, bias)
    if weights:
        from liblinear import liblinearutil as liblinear

        B = bias if bias > 0 else -1
        flags = f"-s {liblinear_code(loss)} -c {C} -B {B} -e 1e-5 -q " + " ".join(
            f"-w{label} {w}" for label, w in weights.items()
        )
        m = liblinear.train(liblinear.problem(labels, X), flags)  # (the weights go through -w)
        w, b = m.get_decfun()
        sign = 1.0 if m.get_labels()[0] == 1 else -1.0
        coef, intercept = sign * np.array(w), sign * b
    else:
        coef, intercept = liblinear_fit(X, labels, loss, C, bias)
    theirs = primal(coef, intercept, X, labels, row_costs(labels, costs), loss, bias)
    assert ours <= theirs * (1 + 1e-4), (ours, theirs)


@pytest.mark.parametrize(
    "threads, loss, working_set, bias",
    [
        (2, "hinge", "cache", 1.0),
        pytest.param(2, "squared-hinge", "pair", -1.0, marks=pytest.mark.slow),
        (3, "squared-hinge", "cache", -1.0),
        pytest.param(8, "hinge", "cache", 1.0, marks=pytest.mark.slow),
    ],
)
def test_a9a_reaches_liblinears_optimum(a9a, threads, loss, working_set, bias):
    store, X, y = a9a
    result = train(
        store, threads=threads, loss=loss, working_set=working_set, bias=bias, tol=1e-4, max_outer=3000, verbose=0
    )
    at_liblinears_optimum(result, X, y, loss, 1.0, bias)


@pytest.mark.parametrize("threads, loss", [(2, "squared-hinge"), pytest.param(3, "hinge", marks=pytest.mark.slow)])
def test_w8a_reaches_liblinears_optimum_with_class_weights(w8a, threads, loss):
    store, X, y = w8a
    weights = {1: 4.0, -1: 0.5}
    result = train(store, threads=threads, loss=loss, class_weight=weights, tol=1e-4, max_outer=3000, verbose=0)
    at_liblinears_optimum(result, X, y, loss, 1.0, 1.0, weights)


@pytest.mark.parametrize(
    "threads, working_set, bias",
    [(2, "block", -1.0), pytest.param(3, "pair", 1.0, marks=pytest.mark.slow), (8, "block", -1.0)],
)
def test_generated_reaches_liblinears_optimum(generated, threads, working_set, bias):
    """(Plain block minimization, working set "block", stalls with a bias feature here, and on a9a's redundant
    rows, threads or not: it is tested without one.)"""
    X, y = store_arrays(generated)
    result = train(
        generated,
        threads=threads,
        working_set=working_set,
        bias=bias,
        loss="squared-hinge",
        C=0.5,
        tol=1e-5,
        max_outer=500,
        verbose=0,
    )
    at_liblinears_optimum(result, X, y, "squared-hinge", 0.5, bias)


@pytest.mark.parametrize("threads, working_set", [(2, "cache"), (3, "pair"), (8, "block")])
def test_multiclass_problems_on_threads_are_the_serial_model_bit_for_bit(tmp_path, threads, working_set):
    """One-vs-rest problems share nothing they write: a thread each takes the path each takes alone."""
    spec = SyntheticSpec(rows=4000, features=800, nnz=12, seed=9, classes=3)
    make_store(tmp_path / "m.bsvm", spec, block_rows=1000, progress=False)
    params = {
        "loss": "hinge",
        "class_weight": {1: 2.0, 3: 0.5},
        "working_set": working_set,
        "max_outer": 4,
        "tol": 0.0,
        "verbose": 0,
    }
    serial = train(tmp_path / "m.bsvm", **params)
    threaded = train(tmp_path / "m.bsvm", threads=threads, **params)
    assert_same_run(threaded, serial, "dual")


class EveryBlock(Checkpointer):
    """Keeps a snapshot after every block (not written to disk)."""

    def __init__(self, path):
        super().__init__(path)
        self.snapshots = []

    def after_block(self, snapshot, at_pass_end: bool):
        self.snapshots.append(snapshot())
        return None

    def after_pass(self, snapshot):
        self.snapshots.append(snapshot())
        return 0.0

    def on_stop(self, snapshot):
        return None


@pytest.mark.parametrize("threads, working_set", [(2, "cache"), (3, "pair"), (2, "block")])
def test_w_and_the_dual_are_exact_after_every_block(generated, tmp_path, threads, working_set):
    """From every block's snapshot: w equals sum alpha_i y_i x_i, and the recorded dual sums give the dual of
    those alphas, both to 1e-9."""
    from blocksvm.train.loop import Trainer
    from blocksvm.train.params import settle

    params, _ = settle(
        "train",
        None,
        {"threads": threads, "working_set": working_set, "loss": "squared-hinge", "max_outer": 3, "tol": 0.0},
    )
    checkpointer = EveryBlock(tmp_path / "unused")
    trainer = Trainer(generated, params, verbose=0, checkpointer=checkpointer)
    trainer.run()
    X, labels = store_arrays(generated)
    y = np.where(labels > 0, 1.0, -1.0)
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr()
    D = 0.5 / params.C  # squared hinge: D_ii = 1 / (2C)
    assert len(checkpointer.snapshots) == 3 * 4 + 3
    for snap in checkpointer.snapshots:
        alpha, w = snap.arrays["alpha"][0], snap.arrays["w"][0]
        np.testing.assert_allclose(w, Xb.T @ (alpha * y), rtol=1e-9, atol=1e-9)
        sums = snap.arrays["block_sums"][0].sum(axis=0)
        dual_from_sums = sums[0] - 0.5 * w @ w - 0.5 * sums[1]
        dual = alpha.sum() - 0.5 * w @ w - 0.5 * np.sum(D * alpha**2)
        assert dual_from_sums == pytest.approx(dual, rel=1e-9, abs=1e-9)


def test_one_thread_is_the_serial_trainer_bit_for_bit(generated):
    one = train(generated, threads=1, max_outer=3, tol=0, verbose=0).model
    plain = train(generated, max_outer=3, tol=0, verbose=0).model
    np.testing.assert_array_equal(one.coef, plain.coef)


@pytest.mark.parametrize("data_mb", [None, 0.6])
def test_one_problems_sweep_at_the_defaults_is_the_same_bits_on_any_number_of_threads(generated, data_mb):
    """At dual CD's defaults (one sweep a pass over the rows kept in memory) the threads run beside one problem's
    sweep (the exact evaluations over the kept blocks, the reader), never inside it: the model, its passes and its
    certificate are the serial run's, bit for bit, with every block kept or half of them streamed (0.6 MB of data)."""
    memory_mb = None if data_mb is None else memory_for(generated, data_mb)
    runs = [train(generated, threads=t, tol=1e-4, memory_mb=memory_mb, verbose=0) for t in (1, 2, 3)]
    assert runs[0].stop_reason.startswith("relative duality gap"), runs[0].stop_reason
    for run in runs[1:]:
        np.testing.assert_array_equal(run.model.coef, runs[0].model.coef)
        assert run.model.summary["gap"] == runs[0].model.summary["gap"]
        assert run.model.summary["outer_iterations"] == runs[0].model.summary["outer_iterations"]


def test_resume_ends_within_the_tolerance(generated, tmp_path, train_in_cuts):
    """With T > 1 a resumed run does not take the uninterrupted run's path (the threads interleave anew), but
    it ends at a model of the same certified quality."""
    params = {"threads": 2, "loss": "squared-hinge", "tol": 1e-5, "max_outer": 300}
    whole = train(generated, verbose=0, **params)
    result, cuts = train_in_cuts(generated, tmp_path / "ck.h5", 3, **params)
    assert cuts >= 1
    for r in (whole, result):
        assert r.stop_reason.startswith("relative duality gap")
    assert result.model.summary["primal"] == pytest.approx(whole.model.summary["primal"], rel=2e-5)


# ---- the merge of the threads' replicas -----------------------------------------------------------------------


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("loss", ["hinge", "squared-hinge", "logistic", "squared-epsilon-insensitive"])
def test_the_line_search_maximizes_the_dual_along_the_threads_step(loss, weighted):
    """``dual_line_search`` against the dual itself, written in numpy from ``Loss.dual_terms`` and maximized on a
    fine grid of the steps that keep every alpha in its box (with instance weights: each row's C times its
    weight)."""
    from blocksvm.solvers import _dual_cd_kernels as K

    rng = np.random.default_rng(3)
    the = LOSSES[loss].with_epsilon(0.1)
    upper, diag = the.dual_tables(0.7, 1.3)
    n, n_w = 40, 9
    X = rng.normal(size=(n, n_w))
    y = rng.normal(size=n) if the.kind == 2 else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    weights = rng.uniform(0.3, 3.0, n) if weighted else None
    cap = np.where(y > 0, upper[1], upper[0]) if the.kind != 2 else np.full(n, upper[1])
    cap = np.where(np.isinf(cap), 5.0, cap) * (1.0 if weights is None else weights)
    low = -cap if the.kind == 2 else 0.0 * cap
    alpha0 = rng.uniform(0.05, 0.95, n) * (cap - low) + low
    alpha1 = np.clip(alpha0 + rng.normal(scale=0.3, size=n) * cap, low + 1e-6 * cap, cap * (1 - 1e-6))
    d = alpha1 - alpha0
    signed = np.ones(n) if the.kind == 2 else y
    w = X.T @ (alpha0 * signed) + rng.normal(scale=0.1, size=n_w)
    u = X.T @ (d * signed)
    sigma = 1.5

    def dual(gamma):
        terms = the.dual_terms(y, alpha0 + gamma * d, upper, diag, weights).sum(axis=0)
        return terms[0] - 0.5 * terms[1] - gamma * (w @ u) - 0.5 * sigma * gamma**2 * (u @ u)

    box = np.where(y > 0, upper[1], upper[0]) if the.kind != 2 else np.full(n, upper[1])  # (inf: no bound)
    box = box * (1.0 if weights is None else weights)
    floor = -box if the.kind == 2 else np.zeros(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d > 0, (box - alpha0) / d, np.where(d < 0, (floor - alpha0) / d, np.inf))
    grid = np.linspace(0.0, min(room.min(), 16.0) * (1 - 1e-9), 20001)[1:]
    best = grid[np.argmax([dual(g) for g in grid])]
    kernel_weights = np.zeros(0) if weights is None else weights
    gamma = K.dual_line_search(the.kind, alpha0, d, y, upper, diag, the.threshold, w @ u, u @ u, sigma, kernel_weights)
    assert dual(gamma) >= dual(best) - 1e-9 * abs(dual(best))
    assert abs(gamma - best) <= 2 * (grid[1] - grid[0]) + 1e-6


def test_a_budget_that_keeps_too_few_rows_solves_each_visit_with_its_working_set(generated):
    """Where the budget keeps less than a tenth of the rows (0.6 MB: none of the 4 blocks), one sweep a visit would
    sweep the streamed blocks one after another, which stalls where rows are alike; dual CD's defaults there are the
    older block minimization (several sweeps a visit beside a cache of support vectors), which reaches LIBLINEAR's
    optimum."""
    from blocksvm.solvers.dual_cd import DualCDSolver
    from blocksvm.train.engines import Budget, _kept_blocks
    from blocksvm.train.params import TrainParams

    store = BlockStore(generated)
    for megabytes, kept_rows, working_set in ((0.1, 0, "cache"), (0.6, 3000, "block")):
        own, kept, _ = _kept_blocks(DualCDSolver, TrainParams(), store, Budget(megabytes * 1e6, ""), range(4))
        assert (kept.capacity[0], own.working_set) == (kept_rows, working_set)
    X, y = store_arrays(generated)
    result = train(
        generated, memory_mb=memory_for(generated, 0.1), tol=1e-4, loss="squared-hinge", bias=-1.0, verbose=0
    )
    at_liblinears_optimum(result, X, y, "squared-hinge", 1.0, -1.0)
