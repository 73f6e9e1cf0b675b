"""PA, PA-I and PA-II, added through the solver contract, against scikit-learn, a numpy transcription and
the separable-case bound of Crammer et al., "Online Passive-Aggressive Algorithms", JMLR 2006.

The transcription writes each variant's step as the paper's Figure 1 does (three formulas, not the
kernel's ``(cap, damping)`` table) and visits the rows in the kernel's order: the text file's, or the
trainer's schedule (block order, then each block's row order from its seed).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracle import (
    assert_trains_and_resumes_exactly,
    assert_weights,
    last_iterate,
    learner_text,
    multiclass_store,
    schedule,
    sparse_rows,
    streamed_and_one_pass,
    with_bias,
    write_rows,
)
from sklearn.datasets import load_svmlight_file

from blocksvm.io import convert
from blocksvm.losses import HINGE
from blocksvm.solvers import _passive_aggressive_kernels as K
from blocksvm.solvers._common import CORRECT_SEEN, LOSS_SEEN
from blocksvm.stream import stream
from blocksvm.train import train

# The oracles here transcribe the last iterate: average=False for the learners that read it.
stream = last_iterate(stream)
train = last_iterate(train)

FEATURES = 40
ROWS = 600
VARIANTS = ("pa", "pa1", "pa2")


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    return learner_text(tmp_path_factory.mktemp("pa"), 21, ROWS, FEATURES, 7, 10)


@pytest.fixture(scope="module")
def a9a_in_file_order(shared_data, tmp_path_factory):
    path = tmp_path_factory.mktemp("pa-a9a") / "a9a.bsvm"
    convert(shared_data / "a9a", path, block_rows=5000, shuffle=False, dtype="float64", progress=False)
    return path


def pa_step(variant: str, w: np.ndarray, x: np.ndarray, y: float, C: float) -> float:
    """Crammer et al. 2006, Figure 1: tau of PA, PA-I or PA-II at ``w`` (0 when ``||x|| = 0``)."""
    loss = max(0.0, 1.0 - y * (w @ x))
    sq_norm = x @ x
    if variant == "pa2":
        return loss / (sq_norm + 1.0 / (2.0 * C))
    if sq_norm == 0:
        return 0.0
    return loss / sq_norm if variant == "pa" else min(C, loss / sq_norm)


def cost(variant: str, C: float) -> dict:
    """``C`` for PA-I and PA-II (PA has none: it refuses one)."""
    return {} if variant == "pa" else {"C": C}


@pytest.mark.parametrize(
    "variant, C, class_weight",
    [
        ("pa1", 0.02, None),
        ("pa1", 1.0, None),
        ("pa2", 0.05, None),
        ("pa2", 0.05, {1: 2.0, -1: 0.5}),
    ],
)
def test_one_pass_in_file_order_equals_scikit_learn(a9a_in_file_order, shared_data, variant, C, class_weight):
    """``--order file`` on a store converted ``--no-shuffle``: the rows of a9a in file order, no bias."""
    from sklearn.linear_model import SGDClassifier

    result = train(
        a9a_in_file_order, solver=variant, C=C, class_weight=class_weight, order="file", bias=-1, max_outer=1, verbose=0
    )
    X, y = load_svmlight_file(str(shared_data / "a9a"), n_features=123)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)  # what scikit-learn's SGD takes
    oracle = SGDClassifier(
        loss="hinge",
        penalty=None,
        learning_rate=variant,
        eta0=C,
        class_weight=class_weight,
        shuffle=False,
        max_iter=1,
        tol=None,
        fit_intercept=False,
    )
    oracle.fit(X, y)
    np.testing.assert_allclose(result.model.coef[0], oracle.coef_[0], rtol=0, atol=1e-9)
    assert result.history[0]["updates"] > 5000  # a9a is not separable: many rows inside the margin


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("bias, class_weight", [(1.0, None), (-1.0, None), (2.0, {1: 3.0, -1: 0.5})])
def test_pa_in_the_schedules_order_equals_the_numpy_transcription(shuffled, variant, bias, class_weight):
    C = 0.1
    cost = {} if variant == "pa" else {"C": C}  # PA has no C
    result = train(
        shuffled, solver=variant, bias=bias, class_weight=class_weight, max_outer=3, seed=7, verbose=0, **cost
    )
    w = np.zeros(FEATURES + 1)
    losses, correct = 0.0, 0
    for X, labels, _, order in schedule(shuffled, 3, 7, 1):
        dense = with_bias(X, bias)
        for i in order:
            y = 1.0 if labels[i] > 0 else -1.0
            margin = y * (w @ dense[i])
            right = (w @ dense[i] > 0) == (y > 0)  # a decision of 0 reads as the negative class
            losses, correct = losses + max(0.0, 1.0 - margin), correct + right
            w = w + (class_weight or {}).get(int(labels[i]), 1.0) * pa_step(variant, w, dense[i], y, C) * y * dense[i]
    assert_weights(result.model, w, bias)
    total = sum(r["progressive_loss"] for r in result.history) * ROWS
    assert total == pytest.approx(losses, rel=1e-10)
    assert sum(r["progressive_accuracy"] for r in result.history) * ROWS == pytest.approx(correct)


def test_the_variants_differ_as_their_steps_do(shuffled):
    """PA-I with C above every l / ||x||^2 is PA; a small C caps the steps; PA-II damps every step."""
    models = {v: train(shuffled, solver=v, max_outer=2, verbose=0, **cost(v, 0.05)).model.coef for v in VARIANTS}
    uncapped = train(shuffled, solver="pa1", C=1e300, max_outer=2, verbose=0).model.coef
    np.testing.assert_array_equal(uncapped, models["pa"])
    assert np.linalg.norm(models["pa1"]) < np.linalg.norm(models["pa"])
    assert np.linalg.norm(models["pa2"]) < np.linalg.norm(models["pa"])
    assert not np.allclose(models["pa1"], models["pa2"])


def test_multiclass_pa_is_one_vs_rest_in_the_schedules_order(tmp_path):
    store = multiclass_store(tmp_path, 8)
    result = train(store, solver="pa1", C=0.3, max_outer=2, seed=4, verbose=0)
    assert result.model.coef.shape == (3, 30)
    W = np.zeros((3, 31))
    for X, labels, k, order in schedule(store, 2, 4, 3):
        dense = with_bias(X, 1.0)
        for i in order:
            y = 1.0 if labels[i] == k + 1 else -1.0
            W[k] += pa_step("pa1", W[k], dense[i], y, 0.3) * y * dense[i]
    np.testing.assert_allclose(result.model.coef, W[:, :-1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.model.intercept, W[:, -1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("variant", VARIANTS)
def test_empty_rows_without_a_bias_change_nothing(tmp_path, variant):
    """||x||^2 = 0 (no features, no bias): tau is 0, so the rows cost their loss and leave w as it was."""
    idx, val, y = sparse_rows(np.random.default_rng(2), 200, 20, 5, 6, 0.1)
    write_rows(tmp_path / "full.svm", idx, val, y)
    lines = (tmp_path / "full.svm").read_text().splitlines(keepends=True)
    with_empty = [line for i, line in enumerate(lines) for line in ([line, "-1\n"] if i % 3 == 0 else [line])]
    (tmp_path / "empty.svm").write_text("".join(with_empty))
    models = []
    for name in ("full", "empty"):
        convert(tmp_path / f"{name}.svm", tmp_path / f"{name}.bsvm", block_rows=60, shuffle=False, progress=False)
        result = train(tmp_path / f"{name}.bsvm", solver=variant, order="file", bias=-1, max_outer=2, verbose=0)
        assert np.all(np.isfinite(result.model.coef))
        models.append(result)
    np.testing.assert_array_equal(models[0].model.coef, models[1].model.coef)
    assert models[1].history[0]["updates"] == models[0].history[0]["updates"]  # the empty rows: no update


def test_cumulative_squared_loss_on_separable_data_is_within_the_bound(tmp_path):
    """Crammer et al. 2006, Theorem 2: if some u has y u.x >= 1 on every row and ||x|| <= R, PA's losses
    satisfy sum_t l_t^2 <= ||u||^2 R^2, over the whole sequence of rows (here: 30 passes)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 6))
    direction = np.array([1.0, -2.0, 0.5, 0.0, 1.0, 0.3])
    direction /= np.linalg.norm(direction)
    X = X[np.abs(X @ direction) > 0.3].astype(np.float32).astype(np.float64)  # the values the kernel sees
    y = np.where(X @ direction > 0, 1.0, -1.0)
    u = direction / np.min(np.abs(X @ direction))  # y u.x >= 1 on every row
    radius = np.max(np.linalg.norm(X, axis=1))
    rows = [
        (np.array([0, X.shape[1]], np.int64), np.arange(X.shape[1], dtype=np.int32), x, y[i : i + 1])
        for i, x in enumerate(X)
    ]
    w = np.zeros(X.shape[1] + 1)
    squared, mistakes = 0.0, 0
    for _ in range(30):
        for indptr, indices, data, label in rows:  # one row a call: the kernel reports each loss at the w it saw
            setup = (-1.0, HINGE.table, np.ones(2), np.ones(2))
            state = (np.zeros_like(w), np.ones(1))  # the mean of the iterates: not read here
            one_row = (indptr, indices, data, np.zeros(0))  # (no instance weights)
            stats = K.pa_block(one_row, label, w, state, np.array([math.inf, 0.0]), setup, -1)
            squared += stats[LOSS_SEEN] ** 2
            mistakes += 1 - int(stats[CORRECT_SEEN])
    assert squared <= (u @ u) * radius**2
    assert 0 < mistakes <= (u @ u) * radius**2  # a mistake has l >= 1
    assert np.all(np.sign(X @ w[:-1]) == y)


def test_cli_trains_and_resumes_pa2_exactly(shuffled, tmp_path):
    flags = ["--solver", "pa2", "-C", "0.2", "--seed", "9", "--no-average"]
    assert_trains_and_resumes_exactly(train, shuffled, tmp_path, flags, solver="pa2", C=0.2, seed=9)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_stream_of_the_text_is_one_pass_in_file_order(text, tmp_path, variant):
    streamed, trained = streamed_and_one_pass(stream, train, text, tmp_path, solver=variant, **cost(variant, 0.1))
    assert streamed.summary["progressive_accuracy"] == pytest.approx(trained.history[0]["progressive_accuracy"])


def test_warm_start_continues_the_models_weights(text, tmp_path):
    """PA's state is its weights: in file order, one pass saved and one more from the model are two passes."""
    convert(text, tmp_path / "f.bsvm", block_rows=150, shuffle=False, progress=False)
    kw = dict(solver="pa1", C=0.1, order="file", verbose=0)
    train(tmp_path / "f.bsvm", max_outer=1, **kw).model.save(tmp_path / "first.h5")
    again = train(tmp_path / "f.bsvm", max_outer=1, warm_start=tmp_path / "first.h5", **kw).model
    two = train(tmp_path / "f.bsvm", max_outer=2, **kw).model
    np.testing.assert_allclose(again.coef, two.coef, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(again.intercept, two.intercept, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_average_is_the_mean_of_the_iterates(shuffled, variant):
    """``average`` (the default): the model is the mean of ``w`` after each row seen, in the schedule's order."""
    C = 0.1
    cost = {} if variant == "pa" else {"C": C}
    result = train(shuffled, solver=variant, average=True, max_outer=3, seed=7, verbose=0, **cost)
    w, total, steps = np.zeros(FEATURES + 1), np.zeros(FEATURES + 1), 0
    for X, labels, _, order in schedule(shuffled, 3, 7, 1):
        dense = with_bias(X, 1.0)
        for i in order:
            y = 1.0 if labels[i] > 0 else -1.0
            w = w + pa_step(variant, w, dense[i], y, C) * y * dense[i]
            total, steps = total + w, steps + 1
    np.testing.assert_allclose(result.model.coef[0], total[:-1] / steps, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.model.intercept[0], total[-1] / steps, rtol=1e-9, atol=1e-12)
