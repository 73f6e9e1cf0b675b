"""Every learner and every path that drives one gives, for fixed seeds, the models recorded before the one-loop
change (issue 20).

``tests/data/reference_loop.npz`` was written by ``python tests/test_reference_loop.py`` at commit 06c0302, before
the trainer, the CoCoA+ round, the stream and ``OnlineClassifier`` moved onto one block-pass driver: every dual-CD
configuration, Pegasos, each online learner over blocks and through ``stream``, ``partial_fit`` chunks and
CoCoA+ with two shards on threads. Those that visit a block's rows in
:func:`~blocksvm.solvers._common.interleaved_runs`' order (all but the streams) were recorded again when each group of
its runs came to be shuffled among itself (a fixed pattern stalled dual CD of the logistic loss): only those that moved
were replaced. Arithmetic that did not change must give the same bits.

The streams start with a row of the larger label: a stream whose first rows are all of the *smaller* label
restarted its binary problem from zero when the larger label came (rows thrown away); it now keeps them
(tests/test_stream.py), so those streams were meant to change and are not recorded here. For the same reason
the multiclass streams (``CHANGED``) are recorded but no longer compared: when a third class came, the problem of
the binary model's negative class started from zero; it now starts from the binary problem, flipped (exactly the
one-vs-rest problem of the rows so far), as tests/test_stream.py checks against a numpy transcription.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from blocksvm.datasets import SyntheticSpec, make_store, write_libsvm
from blocksvm.solvers.registry import SOLVERS
from blocksvm.stream import stream
from blocksvm.train import train

REFERENCE = Path(__file__).resolve().parent / "data" / "reference_loop.npz"
COMMON = {"max_outer": 3, "seed": 7}
ONLINE = {
    "perceptron": {"solver": "perceptron"},
    "perceptron-average": {"solver": "perceptron", "average": True},
    "pa": {"solver": "pa"},
    "pa1": {"solver": "pa1"},
    "pa2": {"solver": "pa2"},
    "cw": {"solver": "cw", "cw_eta": 0.8},
    "arow": {"solver": "arow", "arow_r": 0.5},
    "ogd-sqrt-average": {"solver": "ogd", "average": True, "ogd_schedule": "sqrt", "ogd_eta": 2.0},
    "ogd-inverse": {"solver": "ogd", "ogd_schedule": "inverse", "loss": "squared-hinge"},
    "ftrl": {"solver": "ftrl", "l1": 2.0, "l2": 0.5, "loss": "hinge"},
    "fobos": {"solver": "fobos", "l1": 1e-3, "loss": "squared-hinge"},
    "fobos-constant": {"solver": "fobos", "fobos_schedule": "constant", "fobos_eta": 0.05},
}
WEIGHTED = {"class_weight": {-1: 0.5, 1: 3.0}}
TRAIN = {
    **{
        f"dual-cd-{loss}-{ws}": {"loss": loss, "working_set": ws}
        for loss in ("hinge", "squared-hinge")
        for ws in ("cache", "pair", "block")
    },
    "dual-cd-no-bias-inner": {"loss": "hinge", "bias": -1, "inner_passes": 2, "inner_eps": 0.1},
    "dual-cd-class-weight": {"loss": "squared-hinge", **WEIGHTED},
    "dual-cd-file-order-pair": {"loss": "hinge", "order": "file", "working_set": "pair"},
    "multiclass-dual-cd": {"loss": "hinge", "store": "multiclass", "class_weight": {1: 2.0, 3: 0.5}},
    "pegasos": {"solver": "pegasos", "loss": "hinge"},
    "pegasos-average-batch": {
        "solver": "pegasos",
        "loss": "squared-hinge",
        "average": True,
        "batch_size": 4,
        "pegasos_schedule": "inverse",  # the default when recorded (smooth since issue 24)
    },
    "multiclass-pegasos": {"solver": "pegasos", "loss": "hinge", "store": "multiclass", "average": True},
    # (CoCoA+'s old step, added with sigma' = K: the line search that is the default since is not recorded here)
    "cocoa-2-hinge-cache": {"loss": "hinge", "workers": 2, "line_search": False},
    "cocoa-2-squared-pair": {"loss": "squared-hinge", "working_set": "pair", "workers": 2, "line_search": False},
    "multiclass-cocoa-2": {"loss": "squared-hinge", "store": "multiclass", "workers": 2, "line_search": False},
    **{f"blocks-{name}": config for name, config in ONLINE.items()},
    **{f"blocks-{name}-weighted": {**ONLINE[name], **WEIGHTED} for name in ("perceptron", "pa1", "arow", "ftrl")},
    **{f"blocks-{name}-file-no-bias": {**ONLINE[name], "order": "file", "bias": -1} for name in ("pa2", "cw")},
    **{
        f"multiclass-{name}": {**ONLINE[name], "store": "multiclass"}
        for name in ("perceptron-average", "pa1", "ogd-sqrt-average", "fobos")
    },
}
STREAM = {
    **{f"stream-{name}": config for name, config in ONLINE.items()},
    "stream-multiclass-perceptron": {"solver": "perceptron", "text": "multiclass"},
    "stream-multiclass-arow": {"solver": "arow", "text": "multiclass"},
}
PARTIAL_FIT = {
    f"partial-fit-{name}": ONLINE[name]
    for name in ("perceptron-average", "pa1", "arow", "ogd-inverse", "ftrl", "fobos")
}
PARTIAL_FIT["partial-fit-multiclass-pa2"] = {"solver": "pa2", "text": "multiclass"}


def make_data(root: Path) -> dict[str, Path]:
    """Stores of 3,000 rows (binary, 3 classes) and LIBSVM texts whose first row has the larger label."""
    paths = {"binary": root / "binary.bsvm", "multiclass": root / "multiclass.bsvm"}
    specs = {
        "binary": SyntheticSpec(rows=3000, features=150, nnz=12, seed=21),
        "multiclass": SyntheticSpec(rows=3000, features=150, nnz=12, seed=22, classes=3),
    }
    for name, spec in specs.items():
        make_store(paths[name], spec, block_rows=500 if name == "binary" else 600, progress=False)
        text = root / f"{name}.svm"
        write_libsvm(text, spec, progress=False)
        lines = text.read_text().splitlines(keepends=True)
        largest = max(float(line.split()[0]) for line in lines)
        first = next(i for i, line in enumerate(lines) if float(line.split()[0]) == largest)
        text.write_text("".join([lines[first], *lines[:first], *lines[first + 1 :]]))
        paths[f"{name}-text"] = text
    return paths


# dual CD's defaults when the models were recorded (since then, one sweep a visit and no working set)
DUAL_CD_THEN = {"inner_passes": 5, "working_set": "cache"}


def fit(data: dict[str, Path], name: str) -> tuple[np.ndarray, np.ndarray]:
    if name in TRAIN:
        config = dict(TRAIN[name])
        if config.get("solver", "dual-cd") == "dual-cd":
            config = DUAL_CD_THEN | config
        model = train(data[config.pop("store", "binary")], verbose=0, **COMMON, **cost(config), **config).model
        return model.coef, model.intercept
    if name in STREAM:
        config = dict(STREAM[name])
        text = data[config.pop("text", "binary") + "-text"]
        model = stream(text, verbose=0, chunk_bytes=1 << 14, **cost(config), **config).model
        return model.coef, model.intercept
    from blocksvm import OnlineClassifier

    config = dict(PARTIAL_FIT[name])
    X, y = load_svmlight_file(str(data[config.pop("text", "binary") + "-text"]))
    clf = OnlineClassifier(random_state=3, **cost(config), **config)
    for _ in range(2):
        for chunk in np.array_split(np.arange(X.shape[0]), 4):
            clf.partial_fit(X[chunk], y[chunk], classes=np.unique(y))
    return clf.coef_, clf.intercept_


NAMES = [*TRAIN, *STREAM, *PARTIAL_FIT]
CHANGED = {"stream-multiclass-perceptron", "stream-multiclass-arow"}


def cost(config: dict) -> dict:
    """``C = 0.5`` for the learners that read it, and ``tol = 0`` (no gap rule) for dual CD: the others refuse
    them, and they never changed their models; ``average=False``, the default when the references were recorded."""
    solver = config.get("solver", "dual-cd")
    recorded = {"average": False} if solver in AVERAGING and "average" not in config else {}
    return recorded | (
        {"C": 0.5}
        if solver in ("pa1", "pa2", "ogd", "pegasos")
        else {"C": 0.5, "tol": 0.0}
        if solver == "dual-cd"
        else {}
    )


# The learners that read ``average``, whose default was False when the references were recorded (issue 24 made
# it True): the references are their last iterates.
AVERAGING = {name for name, solver in SOLVERS.items() if "average" in {p.name for p in solver.params}}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("reference"))


@pytest.mark.parametrize("name", [name for name in NAMES if name not in CHANGED])
def test_same_model_as_before_the_one_loop_change(data, name):
    reference = np.load(REFERENCE)
    coef, intercept = fit(data, name)
    np.testing.assert_array_equal(coef, reference[f"{name}/coef"])
    np.testing.assert_array_equal(intercept, reference[f"{name}/intercept"])


if __name__ == "__main__":  # record the reference models
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = make_data(Path(tmp))
        arrays = {}
        for name in NAMES:
            arrays[f"{name}/coef"], arrays[f"{name}/intercept"] = fit(data, name)
    np.savez_compressed(REFERENCE, **arrays)
    print(f"{len(NAMES)} models written to {REFERENCE}", file=sys.stderr)
