"""What the estimators of stores share: their own parameters, the fit on arrays through a temporary store, the
fit on a store or a LIBSVM file, and the fitted attributes of a training's result.

``fit(X, y)`` writes the arrays as a temporary block store (rows shuffled, labels encoded as floats ``0 .. K-1``
for a classifier), trains on it exactly as :func:`blocksvm.train.train` trains on a store made by ``blocksvm
convert``, and removes it; ``fit(store_path)`` trains on a store already on disk, for data larger than memory.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from blocksvm._estimators import declared, sparse_coef
from blocksvm.errors import ParameterError
from blocksvm.io.conversion import write_store
from blocksvm.io.text_cache import say_to_stderr, store_or_cached
from blocksvm.params import Param
from blocksvm.store import BlockStore
from blocksvm.train import TrainResult
from blocksvm.train.params import AUTO, PARAMS

# Parameters of the estimator besides the training parameters (those of ESTIMATOR_NAMES are named as
# scikit-learn names them).
OWN_PARAMS: dict[str, tuple[object, str]] = {
    "block_rows": (100_000, "Rows per block of the temporary store that ``fit(X, y)`` writes. Range [1, inf)."),
    "random_state": (
        0,
        "int, RandomState instance or None. Seeds the row shuffle of the temporary store and "
        "the block and row orders of training (the training parameter ``seed``). The default, 0, fits the same model "
        "twice, as the command line's ``--seed 0``; None draws other orders at each fit.",
    ),
    "verbose": (0, "0 silent, 1 one line per pass (standard error)."),
    "tmp_dir": (None, "Folder for the temporary store (default: the system's temporary folder)."),
    "n_jobs": (
        1,
        "int. Threads solving each block at once (the training parameter ``threads``, docs/PARALLEL.md); 1: the "
        "serial trainer. CoCoA+ shards are ``workers``.",
    ),
}


def solver_auto(params: dict[str, Param]) -> dict[str, Param]:
    """The declared parameters with the estimators' ``solver``: ``"auto"`` by default, chosen by the data's shape
    when ``fit`` is given arrays (:func:`blocksvm.train.params.settle`'s ``shape``), as scikit-learn's ``LinearSVC``
    chooses with ``dual="auto"``."""
    p = params["solver"]
    help = (
        "'auto' (the default): on arrays (in memory) with more rows than features, newton (LIBLINEAR's primal Newton "
        "method) where the loss allows it (squared-hinge, logistic, squared-epsilon-insensitive) and newton reads "
        "every parameter given, as scikit-learn's LinearSVC(dual='auto') chooses its primal solver: dual-cd needs "
        "many passes on scaled or dense data; else dual-cd (a store or a LIBSVM file: dual-cd, out of core). Or a "
        "solver by name: " + p.help
    )
    return params | {"solver": dataclasses.replace(p, default=AUTO, choices=(AUTO, *p.choices), help=help)}


# The training parameters, as declared: those train reads (seed and threads are random_state and n_jobs here).
TRAINING = solver_auto(declared("train"))


def plain(value):
    """A NumPy scalar (from a parameter grid, say) as the Python number the checks expect."""
    return value.item() if isinstance(value, np.generic) else value


def training_values(estimator) -> dict:
    """The estimator's training parameters, as plain values."""
    return {name: plain(getattr(estimator, name)) for name in estimator._training if name in PARAMS}


def not_default(values: dict, declared: dict) -> dict:
    """The training parameters of ``values`` given to the estimator: those that differ from the defaults of train or
    of the estimator's ``declared`` parameters (its ``_training``: a regressor's loss), what the checks of train and
    tune are given; None where solvers have defaults of their own is the solver's."""

    def given(name: str, value) -> bool:
        if value is None and PARAMS[name].solver_defaults:
            return False
        return value != PARAMS[name].default or (name in declared and value != declared[name].default)

    return {name: value for name, value in values.items() if given(name, value)}


def drawn_seed(random_state) -> int:
    """The training's ``seed``, drawn once from ``random_state``."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def is_store(X) -> bool:
    return isinstance(X, (str, os.PathLike, BlockStore))


def open_store(X, verbose: int = 0) -> BlockStore:
    """A store as given, or the store at a path: a store's directory, or a LIBSVM file's cached store (its
    conversion said when ``verbose``)."""
    return X if isinstance(X, BlockStore) else BlockStore(store_or_cached(X, say=say_to_stderr if verbose else None))


def no_labels_for_a_store(y, what: str = "labels") -> None:
    if y is not None:
        raise ValueError(f"y must be None when X is a block store: the store holds the {what}")


def no_weights_for_a_store(sample_weight) -> None:
    if sample_weight is not None:
        raise ValueError(
            "sample_weight must be None when X is a block store: the store holds its instance weights (convert "
            "--weights FILE, VW's importance weights, write_store(sample_weight=))"
        )


def checked_block_rows(estimator) -> int:
    size = plain(estimator.block_rows)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ParameterError(f"block_rows must be an integer >= 1, not {estimator.block_rows!r}")
    return size


@contextmanager
def array_store(estimator, X, labels: np.ndarray, weights=None, *, seed: int, block_rows: int | None = None):
    """Rows of ``X`` (CSR or dense), their labels and instance weights (None: none) as a temporary block store in
    the estimator's ``tmp_dir``, removed afterwards: :func:`blocksvm.write_store`, rows shuffled, in ``X``'s
    precision (float32 or float64), the one writer of rows that are not text. ``block_rows``: the estimator's."""
    block_rows = checked_block_rows(estimator) if block_rows is None else block_rows
    folder = tempfile.mkdtemp(prefix="blocksvm-fit-", dir=estimator.tmp_dir)
    try:
        path = Path(folder) / "train.bsvm"
        write_store(
            (X, labels),
            path,
            sample_weight=weights,
            block_rows=block_rows,
            seed=seed,
            dtype=X.dtype.name,
            progress=False,
        )
        yield BlockStore(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def keep_result(estimator, result: TrainResult) -> None:
    """The fitted attributes every estimator keeps of a training's result (``model_``, ``n_iter_``, ``history_``,
    ``stop_reason_``); an interrupted training is a KeyboardInterrupt."""
    reason = result.stop_reason
    if result.interrupted and reason.startswith("stopped by"):
        raise KeyboardInterrupt(f"{type(estimator).__name__}.fit {reason}")
    estimator.model_ = result.model
    estimator.n_iter_ = len(result.history)
    estimator.history_ = result.history
    estimator.stop_reason_ = reason


def coef_of(model):
    """``coef_`` of a model: its weights (n_problems, n_features), or a scipy CSR matrix of that shape for a sparse
    feature space (stored compactly), which holds only the features the data uses."""
    if model.feature_map is None:
        return model.coef
    return sparse_coef(model.coef, model.feature_map, model.space_features)


def vector_coef_of(model):
    """``coef_`` of a model of one weight vector: (n_features,), or a sparse column (n_features, 1)."""
    coef = coef_of(model)
    return coef.T if sp.issparse(coef) else coef[0]
