"""The tests' shared oracles: LIBLINEAR's primal, written in numpy, LIBLINEAR itself, and what several learners'
tests share (random sparse rows, a numpy FTRL, the trainer's visiting order, the documented fold hash).

``P(w) = 1/2 ||w||^2 + sum_i C_i loss(y_i (w.x_i + b))``, with the bias weight ``b / bias``
regularized as LIBLINEAR's ``-B`` does. The loss values come from :mod:`blocksvm.losses`, the one
definition of each loss (pinned to hand-computed values in tests/test_losses.py); the optimum they
are compared with is LIBLINEAR's, computed by LIBLINEAR.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from blocksvm.io import convert
from blocksvm.losses import LOSSES
from blocksvm.penalties import liblinear_code
from blocksvm.solvers._common import interleaved_runs
from blocksvm.store import BlockStore
from blocksvm.train.schedule import Schedule

MASK = 2**64 - 1


def primal(coef: np.ndarray, intercept: float, X, y, C, loss: str, bias: float = 1.0) -> float:
    """LIBLINEAR's primal objective of one binary problem (``y`` in {-1, +1}).

    ``C`` is a number or an array of per-row costs (:func:`row_costs`); ``loss`` a name of
    :data:`blocksvm.losses.LOSSES` (scikit-learn's ``squared_hinge`` spelling too).
    """
    losses = LOSSES[loss.replace("_", "-")].value(y * (X @ coef + intercept))
    w_bias = intercept / bias if bias > 0 else 0.0
    return 0.5 * (coef @ coef + w_bias**2) + float(np.sum(C * losses))


def svr_primal(coef, intercept, X, y, C, eps: float, squared: bool, bias: float = 1.0) -> float:
    """LIBLINEAR's primal of support vector regression (-s 11 and 12: ``squared``; -s 13): ``1/2 ||w||^2 + sum_i C_i
    slack_i`` (squared), ``slack_i = max(0, |y_i - w.x_i - b| - eps)``, the bias weight regularized as ``-B`` does."""
    slack = np.maximum(0.0, np.abs(y - X @ coef - intercept) - eps)
    w_bias = intercept / bias if bias > 0 else 0.0
    return 0.5 * (coef @ coef + w_bias**2) + float(np.sum(C * (slack**2 if squared else slack)))


def row_costs(y, costs) -> np.ndarray:
    """Per-row C of ±1 targets ``y`` from ``costs = (C_negative, C_positive)``."""
    return np.where(np.asarray(y) > 0, costs[1], costs[0])


def seed_liblinear() -> None:
    """Reset the C library's ``rand()``, which LIBLINEAR's dual solvers draw their coordinate order from without
    seeding it: a model that stops at LIBLINEAR's iteration cap (-s 3) then depends on every earlier LIBLINEAR call
    in the process, so on the test order. Called before each oracle training, it is the model of a fresh process."""
    import ctypes

    ctypes.CDLL(None).srand(1)


def liblinear_fit(X, y, loss: str, C: float, bias: float, eps: float = 1e-5) -> tuple[np.ndarray, float]:
    """LIBLINEAR's weights for class ``+1``, as ``(coef, intercept)``."""
    from liblinear import liblinearutil as liblinear

    seed_liblinear()

    B = bias if bias > 0 else -1  # LIBLINEAR's -B sets the bias; the problem's own is overridden
    code = liblinear_code(loss)
    model = liblinear.train(liblinear.problem(y, X), f"-s {code} -c {C} -B {B} -e {eps} -q")
    assert model.bias == B
    w, b = model.get_decfun()  # b is the bias weight times B
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    return sign * np.array(w), sign * b


def last_iterate(function):
    """``function`` (``train`` or ``stream``) with ``average=False`` for the learners that read ``average``, unless
    the call sets it: the oracles these tests transcribe (the papers' rules, scikit-learn's learners) return the
    last iterate, and the default became the mean of the iterates (issue 24, docs/TUNING.md)."""
    from functools import wraps

    from blocksvm.solvers.registry import SOLVERS

    readers = {name for name, solver in SOLVERS.items() if "average" in {p.name for p in solver.params}}
    default_solver = {"train": "dual-cd", "stream": "perceptron"}[function.__name__]

    @wraps(function)
    def call(*args, **kwargs):
        if kwargs.get("solver", default_solver) in readers:
            kwargs.setdefault("average", False)
        return function(*args, **kwargs)

    return call


def sparse_rows(rng, rows: int, features: int, nnz: int, informative: int, noise: float, classes: int = 2):
    """Rows of ``nnz`` random features with 3-decimal values; labels from hidden weights with ``informative``
    nonzeros (sign of ``w.x``, or the arg-max of ``classes`` such scores, labels 1..K), a ``noise`` share
    flipped (binary) or redrawn (multiclass)."""
    hidden = np.zeros((features, 1 if classes == 2 else classes))
    hot = rng.choice(features, informative, replace=False)
    hidden[hot] = rng.normal(size=(informative, hidden.shape[1]))
    idx = np.sort(np.argsort(rng.random((rows, features)), axis=1)[:, :nnz], axis=1)
    val = np.round(rng.normal(size=(rows, nnz)), 3)
    scores = np.einsum("rk,rkc->rc", val, hidden[idx])
    if classes == 2:
        y = np.where(scores[:, 0] > 0, 1, -1)
        y[rng.random(rows) < noise] *= -1
    else:
        y = np.argmax(scores, axis=1) + 1
        flip = rng.random(rows) < noise
        y[flip] = rng.integers(1, classes + 1, size=flip.sum())
    return idx, val, y


def learner_text(folder, seed: int, rows: int, features: int, nnz: int, informative: int, positive_first: bool = True):
    """``folder/train.svm``: :func:`sparse_rows` (binary, 10% noise) as LIBSVM text, an online learner's test data;
    ``positive_first``: the first row positive (a stream's first class is then the positive one: no restart when the
    second class comes)."""
    path = folder / "train.svm"
    idx, val, y = sparse_rows(np.random.default_rng(seed), rows, features, nnz, informative, 0.1)
    if positive_first:
        y[0] = 1
    write_rows(path, idx, val, y)
    return path


def write_rows(path, idx, val, y) -> None:
    """Rows of :func:`sparse_rows` as LIBSVM text (one-based indices, every value written exactly)."""
    with open(path, "w") as f:
        for r in range(len(y)):
            f.write(f"{y[r]} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(idx[r], val[r])) + "\n")


def with_bias(X, bias: float) -> np.ndarray:
    """``X``'s rows as dense float64 arrays with the bias feature's value last (0 without a bias: ``bias <= 0``)."""
    return np.hstack([X.toarray().astype(np.float64), np.full((X.shape[0], 1), bias if bias > 0 else 0.0)])


def multiclass_store(folder, seed: int):
    """600 rows of 30 features in 3 classes (:func:`sparse_rows`, 5% redrawn) as ``folder/multi.svm`` and as the
    store ``folder/multi.bsvm`` of 3 blocks, the online learners' one-vs-rest data; returns the store's path."""
    idx, val, y = sparse_rows(np.random.default_rng(seed), 600, 30, 6, 10, 0.05, classes=3)
    write_rows(folder / "multi.svm", idx, val, y)
    convert(folder / "multi.svm", folder / "multi.bsvm", block_rows=200, progress=False)
    return folder / "multi.bsvm"


def learn_in_file_order(oracle, rows, y, passes: int, class_weight: dict | None = None):
    """``passes`` passes of ``oracle.learn(x, +-1, the row's class weight)`` over the dense ``rows`` of labels ``y``
    in file order; its progressive sums (``correct``, ``losses``) are the last pass's. Returns the oracle."""
    for _ in range(passes):
        oracle.correct, oracle.losses = 0, 0.0
        for x, label in zip(rows, y):
            oracle.learn(x, 1.0 if label > 0 else -1.0, (class_weight or {}).get(int(label), 1.0))
    return oracle


def assert_weights(model, w, bias: float = 1.0, k: int = 0, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """Problem ``k`` of ``model`` has the weights ``w`` (the bias feature's last): coef ``w[:-1]``, intercept
    ``w[-1] * bias`` (0 without a bias)."""
    np.testing.assert_allclose(model.coef[k], w[:-1], rtol=rtol, atol=atol)
    np.testing.assert_allclose(model.intercept[k], w[-1] * bias if bias > 0 else 0.0, rtol=rtol, atol=atol)


def streamed_and_one_pass(stream, train, text, folder, stream_kw=(), train_kw=(), **kw):
    """``text`` streamed, and one pass in file order over its store (converted unshuffled, blocks of 150): their
    weights agree to 1e-12. ``kw`` reach both, ``stream_kw`` and ``train_kw`` one. Returns both results."""
    convert(text, folder / "f32.bsvm", block_rows=150, shuffle=False, progress=False)
    streamed = stream(text, verbose=0, chunk_bytes=4096, **dict(stream_kw), **kw)
    trained = train(folder / "f32.bsvm", order="file", max_outer=1, verbose=0, **dict(train_kw), **kw)
    np.testing.assert_allclose(streamed.model.coef, trained.model.coef, rtol=1e-12, atol=1e-15)
    return streamed, trained


def loss_gradient(loss: str, margin: float) -> float:
    """``-d loss / d margin``: hinge max(0, 1 - m), squared hinge max(0, 1 - m)^2 (0 at the kink), logistic
    log(1 + exp(-m))."""
    if loss == "logistic":
        return 1.0 / (1.0 + np.exp(margin))
    if margin >= 1:
        return 0.0
    return 1.0 if loss == "hinge" else 2.0 * (1.0 - margin)


class NumpyFTRL:
    """McMahan et al., Algorithm 1, per coordinate, with the logistic gradient or a hinge-family sub-gradient."""

    def __init__(self, n_weights: int, alpha: float, beta: float, l1: float, l2: float, loss: str, bias: float):
        self.z, self.n = np.zeros(n_weights), np.zeros(n_weights)
        self.alpha, self.beta, self.l1, self.l2, self.loss, self.bias = alpha, beta, l1, l2, loss, bias
        self.correct, self.losses = 0, 0.0  # progressive validation: each row before its update

    def weights(self, i) -> np.ndarray:
        z, n = self.z[i], self.n[i]
        return np.where(
            np.abs(z) <= self.l1, 0.0, -(z - np.sign(z) * self.l1) / ((self.beta + np.sqrt(n)) / self.alpha + self.l2)
        )

    def learn(self, features: np.ndarray, values: np.ndarray, y: float, weight: float = 1.0) -> None:
        if self.bias > 0:
            features, values = np.append(features, len(self.z) - 1), np.append(values, self.bias)
        w = self.weights(features)
        margin = y * (w @ values)
        self.correct += margin > 0 or (margin == 0 and y < 0)  # a decision of 0 reads as the negative class
        self.losses += (
            np.log1p(np.exp(-margin))
            if self.loss == "logistic"
            else max(0.0, 1 - margin) ** (1 + (self.loss != "hinge"))
        )
        g = -y * weight * loss_gradient(self.loss, margin) * values
        sigma = (np.sqrt(self.n[features] + g * g) - np.sqrt(self.n[features])) / self.alpha
        self.z[features] += g - sigma * w
        self.n[features] += g * g

    def coef(self) -> np.ndarray:
        return self.weights(np.arange(len(self.z)))


def schedule(path, passes: int, seed: int, n_problems: int):
    """``(block, problem, rows in visiting order)`` of each visit, as the trainer makes them."""
    store = BlockStore(path)
    for outer in range(1, passes + 1):
        for b in Schedule(seed, outer).order(store.n_blocks):
            block = store.read_block(int(b))
            for k, kernel_seed in enumerate(Schedule(seed, outer).seeds(block.index, n_problems)):
                order = np.empty(block.n_rows, np.int64)
                interleaved_runs(order, np.arange(block.n_rows), block.n_rows, np.array([np.uint64(kernel_seed)]))
                yield block.to_csr(store.n_features), block.labels, k, order


def liblinear_weights(model, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(coef, intercept)`` of LIBLINEAR's model in our layout: one row per class in ``classes``
    order for K > 2, one row for ``classes[1]`` for two classes."""
    labels = model.get_labels()
    if len(classes) == 2:
        w, b = model.get_decfun(0)  # LIBLINEAR's single w scores labels[0]
        sign = 1.0 if labels[0] == classes[1] else -1.0
        return sign * np.array([w]), sign * np.array([b])
    pairs = [model.get_decfun(labels.index(int(c))) for c in classes]
    return np.array([w for w, _ in pairs]), np.array([b for _, b in pairs])


def per_problem_primals(coef, intercept, X, y, classes, costs, loss, bias: float = 1.0) -> np.ndarray:
    """The oracle's primal of each problem: one for two classes (positive: the larger label), else one-vs-rest."""
    positives = classes[1:] if len(classes) == 2 else classes
    values = []
    for k, positive in enumerate(positives):
        t = np.where(y == positive, 1.0, -1.0)
        values.append(primal(coef[k], intercept[k], X, t, row_costs(t, costs[k]), loss, bias))
    return np.array(values)


def documented_fold(row: int, seed: int, folds: int) -> int:
    """The split as docs/TUNE.md writes it, in Python integers."""
    z = (row + (seed + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return (z ^ (z >> 31)) % folds


def store_arrays(store: BlockStore) -> tuple[sp.csr_matrix, np.ndarray]:
    """The store's rows in stored order (their positions are what the folds hash)."""
    blocks = sorted(store.iter_blocks(), key=lambda b: b.index)
    X = sp.vstack(
        [sp.csr_matrix((b.data, b.indices, b.indptr), shape=(b.n_rows, store.n_features)) for b in blocks]
    ).tocsr()
    return X.astype(np.float64), np.concatenate([b.labels for b in blocks])


def liblinear_fold(X, y, train_rows, loss: str, C: float, classes) -> tuple[np.ndarray, object]:
    """LIBLINEAR's model on one fold's training rows and its W in our layout (one row per problem, bias last)."""
    from liblinear import liblinearutil as liblinear

    code = liblinear_code(loss)
    seed_liblinear()  # its coordinate order comes from the process's rand(): the test order must not matter
    model = liblinear.train(liblinear.problem(y[train_rows], X[train_rows]), f"-s {code} -c {C} -B 1 -e 1e-7 -q")
    labels = model.get_labels()
    if len(classes) == 2:
        w, b = model.get_decfun(0)
        sign = 1.0 if labels[0] == classes[1] else -1.0
        return sign * np.array([[*w, b]]), model
    return np.array([[*w, b] for w, b in (model.get_decfun(labels.index(int(c))) for c in classes)]), model


SAMPLE_WEIGHT_CHECKS = (
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
)


def weighted_against_repeated(estimator, method: str = "decision_function") -> float:
    """The largest difference of ``method``'s values between ``estimator`` fitted with integer ``sample_weight`` and
    fitted on the rows repeated that many times, on the data of scikit-learn's sample-weight equivalence checks (15
    rows, 30 features, 3 classes, weights 0 to 4; the weighted rows shuffled), both at ``random_state=0``. The
    checks ask for 1e-7 (relative; 1e-9 absolute)."""
    from sklearn.base import clone
    from sklearn.utils import shuffle

    rng = np.random.RandomState(42)
    X, y, weights = rng.rand(15, 30), rng.randint(0, 3, size=15), rng.randint(0, 5, size=15)
    repeated = clone(estimator).set_params(random_state=0).fit(X.repeat(weights, axis=0), y.repeat(weights))
    X_w, y_w, w = shuffle(X, y, weights, random_state=0)
    weighted = clone(estimator).set_params(random_state=0).fit(X_w, y_w, sample_weight=w)
    return float(np.abs(getattr(repeated, method)(X) - getattr(weighted, method)(X)).max())


def assert_trains_and_resumes_exactly(train, store, folder, flags: list, **options):
    """``blocksvm train STORE MODEL --max-outer 4 FLAGS`` is ``train(store, max_outer=4, **options)``'s model, and a
    run cut after 2 of the 4 passes and resumed ends at it, its progressive losses the same; returns the whole run's
    result. ``train``: the test module's (``last_iterate``'s, say)."""
    from blocksvm.cli import main
    from blocksvm.model import LinearModel

    assert main(["train", str(store), str(folder / "m.h5"), "--max-outer", "4", *flags, "-q"]) == 0
    whole = train(store, max_outer=4, verbose=0, **options)
    np.testing.assert_array_equal(LinearModel.load(folder / "m.h5").coef, whole.model.coef)
    cut = train(store, max_outer=2, checkpoint=folder / "c2.h5", verbose=0, **options)
    assert cut.stop_reason.startswith("max_outer")
    resumed = train(store, max_outer=4, resume=folder / "c2.h5", verbose=0, **options)
    np.testing.assert_array_equal(resumed.model.coef, whole.model.coef)
    np.testing.assert_array_equal(resumed.model.intercept, whole.model.intercept)
    assert [r["progressive_loss"] for r in resumed.history] == [r["progressive_loss"] for r in whole.history]
    return whole
