"""Shared fixtures: small generated LIBSVM files, the real data sets, and store readers.

Oracles are independent of blocksvm's parser: ``sklearn.datasets.load_svmlight_file`` for whole
files and Python's ``float`` for numbers.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.store import BlockStore
from blocksvm.train import train

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

SMALL_SPEC = SyntheticSpec(rows=3000, features=400, nnz=15, seed=11)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the repository (a9a, a9a.t, w8a); skip when it is absent."""
    if not (SHARED_DATA / "a9a").is_file():
        pytest.skip(f"{SHARED_DATA} with the real data sets is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def small_libsvm(tmp_path_factory) -> Path:
    """A generated LIBSVM file of 3,000 rows and 400 features (one-based, labels +1/-1)."""
    path = tmp_path_factory.mktemp("data") / "small.txt"
    write_libsvm(path, SMALL_SPEC, progress=False)
    return path


@pytest.fixture
def write_text(tmp_path):
    """Write bytes (or str) to a file under ``tmp_path`` and return its path."""

    def write(text: bytes | str, name: str = "data.txt") -> Path:
        path = tmp_path / name
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return path

    return write


def store_rows(path: Path) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """All rows of a store in source-line order: ``(X, y, lines)``."""
    store = BlockStore(path)
    blocks = [store.read_block(b) for b in range(store.n_blocks)]
    X = sp.vstack([b.to_csr(store.n_features) for b in blocks], format="csr")
    y = np.concatenate([b.labels for b in blocks])
    lines = np.concatenate([b.lines for b in blocks])
    order = np.argsort(lines, kind="stable")
    return X[order], y[order], lines[order]


def assert_same_rows(X, y, X_ref, y_ref) -> None:
    """Exactly equal matrices (same shape, no differing entry) and labels."""
    assert X.shape == X_ref.shape
    assert (X != X_ref).nnz == 0
    np.testing.assert_array_equal(y, y_ref)


def assert_store_matches_sklearn(store_path: Path, text_path: Path, dtype=np.float32,
                                 **sklearn_kwargs) -> None:  # fmt: skip
    """The store holds, row for row, what scikit-learn reads from the text file."""
    X, y, lines = store_rows(store_path)
    X_ref, y_ref = load_svmlight_file(str(text_path), dtype=dtype, **sklearn_kwargs)
    assert len(np.unique(lines)) == len(lines)
    assert X.dtype == np.dtype(dtype)
    assert_same_rows(X, y, X_ref, y_ref)


@pytest.fixture
def read_store():
    """``store_rows`` as a fixture: ``read_store(path) -> (X, y, lines)`` in line order."""
    return store_rows


@pytest.fixture
def check_store():
    """``check_store(store, text, dtype=..., **sklearn_kwargs)`` asserts an exact round trip."""
    return assert_store_matches_sklearn


def _train_in_cuts(store, checkpoint, seconds: float, **params):
    """Train, stopped by a time limit (``seconds`` more each time) and resumed until done; (result, stops)."""
    result = train(store, verbose=0, checkpoint=checkpoint, checkpoint_every=1, time_limit=seconds, **params)
    stops = 1
    while result.interrupted:
        result = train(store, verbose=0, resume=checkpoint, checkpoint_every=1, time_limit=seconds * (stops + 1),
                       **params)  # fmt: skip
        stops += 1
    return result, stops


@pytest.fixture(scope="session")
def train_in_cuts():
    """``train_in_cuts(store, checkpoint, seconds, **params) -> (result, stops)``: a run cut and resumed."""
    return _train_in_cuts


def _training_with_a_checkpoint(store, model, checkpoint) -> subprocess.Popen:
    """``blocksvm train`` in a child (stderr piped), returned once it has written ``checkpoint``."""
    process = subprocess.Popen([sys.executable, "-m", "blocksvm.cli", "train", str(store), str(model),
                                "--checkpoint", str(checkpoint), "--tol", "0", "--max-outer", "100000"],
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.time() + 60
    while not checkpoint.exists() and time.time() < deadline:
        time.sleep(0.05)
    return process


@pytest.fixture(scope="session")
def training_with_a_checkpoint():
    """``training_with_a_checkpoint(store, model, checkpoint) -> Popen``: a long run, checkpointed once."""
    return _training_with_a_checkpoint
