"""One-vs-rest multiclass and class weights reach LIBLINEAR's optima (liblinear-official is the oracle).

LIBLINEAR trains class ``k`` of a K > 2 problem as a binary problem, +1 for class ``k`` and -1 for
the rest, with ``C_pos = C * weight_k`` and ``C_neg = C``; with two classes each class gets its own
``C * weight``. Objectives are computed here, in float64 from scikit-learn's reading of the text,
for both models: ``P(w) = 1/2 ||w||^2 + sum_i C_i loss(y_i (w.x_i + b))`` with the bias weight
regularized (``-B``), exactly as in ``test_optimum.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import memory_for
from oracle import liblinear_weights, per_problem_primals, primal, row_costs
from sklearn.datasets import load_svmlight_file
from sklearn.utils.class_weight import compute_class_weight

from blocksvm.datasets import SyntheticSpec, make_store, write_libsvm
from blocksvm.errors import ParameterError
from blocksvm.io import convert
from blocksvm.penalties import liblinear_code
from blocksvm.solvers import Problem
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, train

liblinear = pytest.importorskip("liblinear.liblinearutil")

C = 0.1


def liblinear_train(X, y, loss: str, C: float, weights: dict | None = None, bias: float = 1.0):
    """LIBLINEAR's model; ``weights`` become ``-w<label> <weight>`` options. -B goes in the options:
    the ``bias`` of ``problem()`` alone is overridden by train's default ``-B -1``."""
    options = f"-s {liblinear_code(loss)} -c {C} -B {bias} -e 1e-6 -q"
    options += "".join(f" -w{label:g} {weight}" for label, weight in (weights or {}).items())
    model = liblinear.train(liblinear.problem(y, X), options)
    assert model.bias == bias
    return model


def test_generator_labels_are_the_arg_max_of_hidden_separators_with_noise():
    from blocksvm.datasets import generate_rows

    spec = SyntheticSpec(rows=20_000, features=300, nnz=20, noise=0.1, seed=4, classes=10)
    rows = generate_rows(spec, 0, spec.rows, dtype="float64")
    binary = generate_rows(
        SyntheticSpec(rows=20_000, features=300, nnz=20, noise=0.1, seed=4), 0, spec.rows, dtype="float64"
    )
    for name in ("indptr", "indices", "data"):  # the rows themselves do not depend on the classes
        np.testing.assert_array_equal(getattr(rows, name), getattr(binary, name))
    X = sp.csr_matrix((rows.data, rows.indices, rows.indptr), shape=(rows.n_rows, 300))
    agree = np.mean(np.argmax(X @ spec.hidden_weights().T, axis=1) + 1 == rows.labels)
    assert 0.88 < agree < 0.92  # 1 - noise
    assert np.unique(rows.labels).tolist() == list(range(1, 11))
    with pytest.raises(ParameterError, match="classes must be an integer >= 2"):
        SyntheticSpec(rows=10, features=5, nnz=2, classes=1).validate()


@pytest.fixture(scope="module")
def ten_classes(tmp_path_factory):
    """A generated 10-class set: 10,000 training rows in 8 blocks, 2,000 test rows."""
    root = tmp_path_factory.mktemp("ten")
    spec = SyntheticSpec(rows=12_000, features=300, nnz=20, seed=21, classes=10)
    write_libsvm(root / "train.svm", spec, rows=range(10_000), progress=False)
    write_libsvm(root / "test.svm", spec, rows=range(10_000, 12_000), progress=False)
    convert(root / "train.svm", root / "train.bsvm", block_rows=1250, progress=False)
    X, y = load_svmlight_file(str(root / "train.svm"), n_features=300)
    X_test, y_test = load_svmlight_file(str(root / "test.svm"), n_features=300)
    assert BlockStore(root / "train.bsvm").n_blocks == 8
    assert np.unique(y).tolist() == list(range(1, 11))
    return root / "train.bsvm", X, y, X_test, y_test


def check_against_liblinear(data, loss: str, class_weight: dict | None = None, tol: float = 5e-5):
    """Train both, then compare each problem's objective (1e-4 relative) and test accuracy (0.5 points)."""
    store, X, y, X_test, y_test = data
    result = train(store, C=C, loss=loss, tol=tol, max_outer=500, class_weight=class_weight, verbose=0)
    assert result.stop_reason.startswith("relative duality gap"), result.stop_reason
    model = result.model
    classes = np.unique(y)
    np.testing.assert_array_equal(model.classes, classes)
    theirs_model = liblinear_train(X, y, loss, C, class_weight)
    ll_coef, ll_intercept = liblinear_weights(theirs_model, classes)

    weights = np.array([(class_weight or {}).get(c, 1.0) for c in classes])
    if len(classes) == 2:
        costs = [(C * weights[0], C * weights[1])]
    else:
        costs = [(C, C * weights[k]) for k in range(len(classes))]
    ours = per_problem_primals(model.coef, model.intercept, X, y, classes, costs, loss)
    theirs = per_problem_primals(ll_coef, ll_intercept, X, y, classes, costs, loss)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    # the history reports the objectives computed here, problem by problem (the store holds float32)
    np.testing.assert_allclose(result.history[-1]["per_problem_primal"], ours, rtol=1e-6)

    accuracy = np.mean(model.predict(X_test) == y_test)
    ll_predicted, _, _ = liblinear.predict(y_test, X_test, theirs_model, "-q")
    ll_accuracy = np.mean(np.array(ll_predicted) == y_test)
    assert abs(accuracy - ll_accuracy) <= 0.005, (accuracy, ll_accuracy)
    return result, ours, theirs, accuracy, ll_accuracy


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge"])
def test_ten_classes_reach_liblinear_one_vs_rest(ten_classes, loss):
    result, _, _, accuracy, _ = check_against_liblinear(ten_classes, loss)
    assert result.model.coef.shape == (10, 300)
    assert accuracy > 0.3  # far above the 0.1 of guessing: the classes were learned


def test_ten_classes_with_class_weights_reach_liblinear(ten_classes):
    check_against_liblinear(ten_classes, "squared-hinge", class_weight={3.0: 4.0, 7.0: 0.5})


def _labels_of(path: Path) -> set[str]:
    with open(path, "rb") as f:
        return {line.split(maxsplit=1)[0].decode() for line in f if line.strip()}


def test_multiclass_sets_in_shared_data_reach_liblinear(shared_data, tmp_path):
    """Every multiclass set in ../shared/data is checked like the generated one (today there is
    none: a9a, a9a.t and w8a are binary, labels -1/+1)."""
    files = sorted(p for p in shared_data.iterdir() if p.is_file() and not p.name.endswith(".md"))
    multiclass = [p for p in files if len(_labels_of(p)) > 2]
    if not multiclass:
        assert {p.name for p in files} >= {"a9a", "w8a"}
        pytest.skip(f"no multiclass set in {shared_data}: {', '.join(p.name for p in files)} are binary")
    for path in multiclass:  # pragma: no cover - runs when such a set is added
        convert(path, tmp_path / f"{path.name}.bsvm", progress=False)
        X, y = load_svmlight_file(str(path))
        check_against_liblinear((tmp_path / f"{path.name}.bsvm", X, y, X, y), "squared-hinge")


class CountingStore(BlockStore):
    """A store that counts the blocks and bytes it reads, evaluation passes included."""

    def __init__(self, path):
        super().__init__(path)
        self.reads, self.bytes = 0, 0

    def read_block(self, b: int):
        self.reads += 1
        self.bytes += self.blocks[b]["bytes"]
        return super().read_block(b)


def test_bytes_read_per_outer_iteration_do_not_grow_with_classes(tmp_path):
    # uncompressed blocks of the same rows: files of K = 2 and K = 10 have the same sizes
    stores = {}
    for k in (2, 10):
        spec = SyntheticSpec(rows=4000, features=300, nnz=20, seed=8, classes=k)
        stores[k] = CountingStore(make_store(tmp_path / f"k{k}", spec, block_rows=500, compression="none", jobs=1))
    a, b = stores[2], stores[10]
    assert (a.n_rows, a.nnz, a.n_blocks) == (b.n_rows, b.nnz, 8)
    assert (len(a.classes), len(b.classes)) == (2, 10)
    total = sum(e["bytes"] for e in a.blocks)
    assert total == sum(e["bytes"] for e in b.blocks)
    none_kept = {k: memory_for(s, 0.001, n_problems=1 if k == 2 else k) for k, s in stores.items()}
    runs = {k: train(s, tol=0, max_outer=3, verbose=0, memory_mb=none_kept[k]) for k, s in stores.items()}
    assert runs[10].model.coef.shape[0] == 10 and runs[2].model.coef.shape[0] == 1
    for k, run in runs.items():
        assert [r["bytes_read"] for r in run.history] == [total] * 3, k  # each block once per pass
    # everything the runs read, the final exact evaluation pass included
    assert a.reads == b.reads == 4 * 8
    assert a.bytes == b.bytes == 4 * total


@pytest.fixture(scope="module")
def imbalanced(tmp_path_factory):
    """A binary set with about one positive row in ten (every negative row, 1 in 3 positive)."""
    root = tmp_path_factory.mktemp("imbalanced")
    spec = SyntheticSpec(rows=14_000, features=400, nnz=20, seed=13)
    write_libsvm(root / "all.svm", spec, progress=False)
    lines = (root / "all.svm").read_bytes().splitlines(keepends=True)
    kept = [line for i, line in enumerate(lines) if line.startswith(b"-1") or i % 3 == 0]
    (root / "train.svm").write_bytes(b"".join(kept))
    convert(root / "train.svm", root / "train.bsvm", block_rows=800, progress=False)
    X, y = load_svmlight_file(str(root / "train.svm"), n_features=400)
    assert 0.08 < np.mean(y > 0) < 0.2
    assert BlockStore(root / "train.bsvm").n_blocks >= 8
    return root / "train.bsvm", X, y, X, y


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge"])
@pytest.mark.parametrize("class_weight", [{1.0: 5.0}, {-1.0: 0.5, 1.0: 3.0}])
def test_class_weights_reach_liblinear_w_optimum(imbalanced, loss, class_weight):
    result, ours, _, _, _ = check_against_liblinear(imbalanced, loss, class_weight, tol=2e-5)
    plain = train(imbalanced[0], C=C, loss=loss, tol=1e-3, verbose=0).model
    X = imbalanced[1]
    # weighting the rare positive class up makes the model predict it more often
    assert np.mean(result.model.predict(X) > 0) > np.mean(plain.predict(X) > 0)


def test_balanced_weights_are_scikit_learns(ten_classes, imbalanced):
    for store, _, y, _, _ in (ten_classes, imbalanced):
        problem = Problem.from_store(BlockStore(store), TrainParams(C=2.0, class_weight="balanced"))
        classes = np.unique(y)
        expected = 2.0 * compute_class_weight("balanced", classes=classes, y=y)
        np.testing.assert_array_equal(problem.classes, classes)
        if len(classes) == 2:
            np.testing.assert_allclose(problem.costs, [expected], rtol=1e-12)
        else:
            np.testing.assert_allclose(problem.costs[:, 1], expected, rtol=1e-12)
            np.testing.assert_array_equal(problem.costs[:, 0], 2.0)


def test_balanced_trains_the_model_of_scikit_learns_weights(imbalanced):
    store, _, y, _, _ = imbalanced
    classes = np.unique(y)
    weights = dict(zip(classes.tolist(), compute_class_weight("balanced", classes=classes, y=y).tolist()))
    balanced = train(store, C=C, tol=0, max_outer=3, class_weight="balanced", verbose=0).model
    explicit = train(store, C=C, tol=0, max_outer=3, class_weight=weights, verbose=0).model
    np.testing.assert_allclose(balanced.coef, explicit.coef, rtol=1e-9, atol=1e-12)


def test_pegasos_learns_ten_classes(ten_classes):
    store, X, y, X_test, y_test = ten_classes
    result = train(store, solver="pegasos", C=C, max_outer=5, average=True, verbose=0)
    theirs = liblinear_train(X, y, "squared-hinge", C)
    ll_predicted, _, _ = liblinear.predict(y_test, X_test, theirs, "-q")
    accuracy = np.mean(result.model.predict(X_test) == y_test)
    assert accuracy >= np.mean(np.array(ll_predicted) == y_test) - 0.05


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge"])
def test_pegasos_class_weights_approach_liblinear_w_optimum(imbalanced, loss):
    store, X, y, _, _ = imbalanced
    weighted = liblinear_weights(liblinear_train(X, y, loss, C, {1.0: 5.0}), np.array([-1.0, 1.0]))
    optimum = primal(weighted[0][0], weighted[1][0], X, y, row_costs(y, (C, 5 * C)), loss)
    plain, heavy = (
        train(store, solver="pegasos", loss=loss, C=C, class_weight=cw, max_outer=10, average=True, verbose=0).model
        for cw in (None, {1.0: 5.0})
    )
    ours = primal(heavy.coef[0], heavy.intercept[0], X, y, row_costs(y, (C, 5 * C)), loss)
    assert optimum <= ours <= 1.05 * optimum
    assert np.mean(heavy.predict(X) > 0) > np.mean(plain.predict(X) > 0)


def test_liblinear_w_options_become_class_weight_options():
    from blocksvm.cli import liblinear_weight_options as rewrite

    assert rewrite(["train", "-w1", "5", "s", "m", "-w-1", "0.5", "-c", "2"]) == [
        "train",
        "--class-weight=1=5",
        "s",
        "m",
        "--class-weight=-1=0.5",
        "-c",
        "2",
    ]
    for untouched in (
        ["predict", "-w1", "5"],
        ["train", "s", "m", "--", "-w1", "5"],
        ["train", "-w", "1=5", "-wbalanced", "-w2", "x"],
    ):
        assert rewrite(untouched) == untouched


def test_cli_train_reads_liblinear_w_options(imbalanced, tmp_path):
    from blocksvm.cli import main
    from blocksvm.model import LinearModel

    store = imbalanced[0]
    options = ["-s", "3", "-c", "0.1", "-w1", "5", "-w-1", "0.5", "--tol", "0", "--max-outer", "3", "-q"]
    assert main(["train", str(store), str(tmp_path / "m.h5"), *options]) == 0
    model = LinearModel.load(tmp_path / "m.h5")
    expected = train(
        store, loss="hinge", C=0.1, class_weight={1.0: 5.0, -1.0: 0.5}, tol=0, max_outer=3, verbose=0
    ).model
    np.testing.assert_array_equal(model.coef, expected.coef)
    assert model.params["class_weight"] == {"1": 5.0, "-1": 0.5}


def test_cli_predicts_with_a_liblinear_multiclass_model(ten_classes, tmp_path):
    from blocksvm.cli import main

    store, X, y, X_test, y_test = ten_classes
    theirs = liblinear_train(X, y, "hinge", C)
    liblinear.save_model(str(tmp_path / "ll.model"), theirs)
    expected, _, values = liblinear.predict(y_test, X_test, theirs, "-q")
    text = store.parent / "test.svm"
    assert (
        main(
            [
                "predict",
                str(tmp_path / "ll.model"),
                str(text),
                "-o",
                str(tmp_path / "out.txt"),
                "--decision-values",
                "-q",
            ]
        )
        == 0
    )
    ours = np.loadtxt(tmp_path / "out.txt")
    np.testing.assert_array_equal(ours[:, 0], expected)
    order = np.argsort(theirs.get_labels())  # LIBLINEAR's columns follow its label order, ours are sorted
    np.testing.assert_allclose(ours[:, 1:], np.array(values)[:, order], rtol=1e-6, atol=1e-9)
    # a store's predictions come out in source order too (the store holds the values as float32)
    assert main(["predict", str(tmp_path / "ll.model"), str(store), "-o", str(tmp_path / "store.txt"), "-q"]) == 0
    on_train, _, _ = liblinear.predict(y, X.astype(np.float32).astype(np.float64), theirs, "-q")
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "store.txt"), on_train)


def test_liblinear_reads_our_ten_class_model(ten_classes, tmp_path):
    from blocksvm.liblinear_format import write_liblinear_model

    store, _, _, X_test, y_test = ten_classes
    ours = train(store, C=C, tol=0, max_outer=2, verbose=0).model
    theirs = liblinear.load_model(str(write_liblinear_model(ours, tmp_path / "ours.model")))
    predicted, _, values = liblinear.predict(y_test, X_test, theirs, "-q")
    np.testing.assert_array_equal(np.array(predicted), ours.predict(X_test))
    # the store is one-based: LIBLINEAR's feature j is our column j - 1, so the values agree
    np.testing.assert_allclose(np.array(values), ours.decision_function(X_test), rtol=1e-9, atol=1e-12)
