"""Shared fixtures: small generated LIBSVM files, the real data sets, and store readers.

Oracles are independent of blocksvm's parser: ``sklearn.datasets.load_svmlight_file`` for whole
files and Python's ``float`` for numbers.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import inspect
import os
import re
import signal
import subprocess
import sys
import threading
import time
import unittest.mock
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

import blocksvm.store.readahead
import blocksvm.train.loop
from blocksvm.checkpoint import Checkpointer, read_checkpoint
from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.io import convert
from blocksvm.store import BlockStore
from blocksvm.train import TrainResult, train, tune
from blocksvm.train.c_search import TuneResult

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

SMALL_SPEC = SyntheticSpec(rows=3000, features=400, nnz=15, seed=11)

# Dual CD's block minimization of several sweeps a visit beside a cache of support vectors (its default before the
# sweeps over the rows kept in memory): for the tests that ask an L1-loss dual (hinge, -s 13) for a tight gap, where
# single sweeps, LIBLINEAR's own pace, take thousands of passes (a9a's hinge at 1e-5: over 1,000).
SWEEPS_A_VISIT = {"inner_passes": 5, "working_set": "cache"}


# ---- markers: what a test needs beyond this process (tests/README.md) ------------------------------------------------

REAL_DATA_FIXTURES = {"shared_data", "a9a", "w8a"}
CHILD_FIXTURES = {"wait_for", "training_with_a_checkpoint"}
STARTS_A_CHILD = re.compile(r"subprocess\.|Popen|sys\.executable|(?<![\w.])cli\(")
USES_DASK = re.compile(r"\bdask\b|distributed|new_cluster")


def pytest_collection_modifyitems(config, items) -> None:
    """Mark each test by what it needs besides this process, read from its fixtures and its source: ``real_data``
    (the sets of ../shared/data), ``children`` (a child process: a command run as a user runs it), ``dask`` (dask,
    a cluster of worker processes for most). ``-m "not children and not dask and not real_data"`` runs the rest. A
    test that starts a child process unmarked fails (:func:`_children_are_marked`): mark it by hand."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        try:
            source = inspect.getsource(item.function)
        except (AttributeError, OSError, TypeError):
            source = ""
        if names & REAL_DATA_FIXTURES:
            item.add_marker("real_data")
        if names & CHILD_FIXTURES or STARTS_A_CHILD.search(source):
            item.add_marker("children")
        if "client" in names or USES_DASK.search(source):
            item.add_marker("dask")


@pytest.fixture(autouse=True)
def _children_are_marked(request):
    """A test not marked ``children`` that starts one fails, naming it: the marker stays true."""
    if request.node.get_closest_marker("children"):
        yield
        return
    started = []
    original = subprocess.Popen.__init__

    def init(self, args, *rest, **options):
        started.append(args)
        original(self, args, *rest, **options)

    with unittest.mock.patch.object(subprocess.Popen, "__init__", init):
        yield
    if started:
        pytest.fail(f"this test starts a child process ({started[0]}): mark it @pytest.mark.children")


def memory_for(store, data_mb: float, solver: str = "dual-cd", n_problems: int = 1, **params) -> float:
    """The ``--memory-mb`` under which a run of ``solver`` on ``store`` keeps ``data_mb`` megabytes of data: what the
    process needs before its data (blocksvm.train.plan), and those."""
    from blocksvm.solvers import SOLVERS
    from blocksvm.train.params import settle
    from blocksvm.train.plan import make_plan

    settled, _ = settle("train", None, {"solver": solver, **params})
    store = store if isinstance(store, BlockStore) else BlockStore(store)
    return make_plan(settled, store, SOLVERS[solver], n_problems).minimum / 1e6 + data_mb


@pytest.fixture(scope="session", autouse=True)
def text_caches(tmp_path_factory) -> Path:
    """Text inputs' cached stores in the session's temporary folder, not the user's cache folder (child processes
    inherit it)."""
    from blocksvm.io.text_cache import CACHE_VARIABLE

    folder = tmp_path_factory.mktemp("caches")
    saved = os.environ.get(CACHE_VARIABLE)
    os.environ[CACHE_VARIABLE] = str(folder)
    yield folder
    if saved is None:
        os.environ.pop(CACHE_VARIABLE, None)
    else:
        os.environ[CACHE_VARIABLE] = saved


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the repository (a9a, a9a.t, w8a); skip when it is absent."""
    if not (SHARED_DATA / "a9a").is_file():
        pytest.skip(f"{SHARED_DATA} with the real data sets is not present")
    return SHARED_DATA


def _real_store(shared_data: Path, tmp_path_factory, name: str, block_rows: int):
    store = tmp_path_factory.mktemp(name) / f"{name}.bsvm"
    convert(shared_data / name, store, block_rows=block_rows, progress=False)
    return store, *load_svmlight_file(str(shared_data / name))


@pytest.fixture(scope="session")
def a9a(shared_data, tmp_path_factory):
    """a9a as a store of 8,000-row blocks, and its rows as scikit-learn reads them: ``(store, X, y)``."""
    return _real_store(shared_data, tmp_path_factory, "a9a", 8000)


@pytest.fixture(scope="session")
def w8a(shared_data, tmp_path_factory):
    """w8a as a store of 12,000-row blocks, and its rows as scikit-learn reads them: ``(store, X, y)``."""
    return _real_store(shared_data, tmp_path_factory, "w8a", 12000)


@pytest.fixture(scope="session")
def small_libsvm(tmp_path_factory) -> Path:
    """A generated LIBSVM file of 3,000 rows and 400 features (one-based, labels +1/-1)."""
    path = tmp_path_factory.mktemp("data") / "small.txt"
    write_libsvm(path, SMALL_SPEC, progress=False)
    return path


def write_vw(source: Path, target: Path, weights=None) -> None:
    """LIBSVM text as Vowpal Wabbit text with named features: index ``i`` becomes the name ``f<i>`` (bare when its
    value is 1), in namespace ``a`` below index 40 and ``b`` from it on (a9a's first attributes and the others).
    ``weights``: a callable of the row number (0-based) giving the text of its importance weight (None: the row has
    none), or None."""
    with open(source) as f, open(target, "w") as g:
        for row, line in enumerate(f):
            label, *pairs = line.split()
            names = {"a": [], "b": []}
            for pair in pairs:
                index, value = pair.split(":")
                names["a" if int(index) < 40 else "b"].append(f"f{index}" if value == "1" else f"f{index}:{value}")
            weight = weights(row) if weights is not None else None
            weight = f" {weight}" if weight is not None else ""
            g.write(f"{label}{weight} |a {' '.join(names['a'])} |b {' '.join(names['b'])}\n")


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
    X = sp.vstack([original_csr(store, b) for b in blocks], format="csr")
    y = np.concatenate([b.labels for b in blocks])
    lines = np.concatenate([b.lines for b in blocks])
    order = np.argsort(lines, kind="stable")
    return X[order], y[order], lines[order]


def original_csr(store: BlockStore, block) -> sp.csr_matrix:
    """A block's rows in the source's (zero-based) columns: a compact store's through its feature map."""
    if store.feature_map is None:
        return block.to_csr(store.n_features)
    indices = store.feature_map[block.indices]
    return sp.csr_matrix((block.data, indices, block.indptr), shape=(block.n_rows, store.space_features))


def assert_same_rows(X, y, X_ref, y_ref) -> None:
    """Exactly equal matrices (same shape, no differing entry) and labels."""
    assert X.shape == X_ref.shape
    assert (X != X_ref).nnz == 0
    np.testing.assert_array_equal(y, y_ref)


def assert_same_run(result, reference, figure: str) -> None:
    """Two runs' models bit for bit (coef and intercept) and their records' ``figure`` pass by pass."""
    np.testing.assert_array_equal(result.model.coef, reference.model.coef)
    np.testing.assert_array_equal(result.model.intercept, reference.model.intercept)
    assert [r[figure] for r in result.history] == [r[figure] for r in reference.history]


def assert_store_matches_sklearn(store_path: Path, text_path: Path, dtype=np.float32, **sklearn_kwargs) -> None:
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


@pytest.fixture(scope="module")
def in_file_order(text):
    """The rows of the module's ``text`` in blocks of 150, stored in file order, values as float64: an online
    learner's oracle visits them in that order (``--order file``)."""
    path = text.with_suffix(".bsvm")
    convert(text, path, block_rows=150, shuffle=False, dtype="float64", progress=False)
    return path


@pytest.fixture(scope="module")
def shuffled(text):
    """The rows of the module's ``text`` in blocks of 150, shuffled as ``convert`` shuffles them."""
    path = text.with_suffix(".shuffled.bsvm")
    convert(text, path, block_rows=150, progress=False)
    return path


class CutAfter(Checkpointer):
    """A checkpointer that stops its run with ``signum`` (SIGTERM) after the run's ``blocks``-th block.

    ``signal.raise_signal`` delivers the signal to this thread and runs the trainer's handler before it
    returns, so the stop request is set before the trainer looks for it after this very block: the
    run stops at the same block on any machine, through the path a real SIGTERM takes.
    """

    blocks, signum = 0, signal.SIGTERM

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._done = 0

    def after_block(self, snapshot, at_pass_end: bool) -> float | None:
        seconds = super().after_block(snapshot, at_pass_end)
        self._done += 1
        if self._done == self.blocks:
            signal.raise_signal(self.signum)
        return seconds


@contextlib.contextmanager
def cutting_after(blocks: int, signum: int = signal.SIGTERM):
    """Runs stopped as by ``signum`` after every ``blocks`` blocks (:class:`CutAfter`), and only there.

    A wait for a block's read looks for a stop request every ``_POLL_SECONDS`` (a user's Ctrl-C ends it): a cut at a
    pass's last block, followed by the iteration's evaluation (a read of the store), would stop that read when it
    took longer than the poll (a loaded machine) and end the run there instead of after the evaluation. The poll is
    the bound of a hang here, so a read ends as it does on an idle machine and the cuts fall where they are put.
    """
    cutting = type("CutAfter", (CutAfter,), {"blocks": blocks, "signum": signum})
    with (
        unittest.mock.patch.object(blocksvm.train.loop, "Checkpointer", cutting),
        unittest.mock.patch.object(blocksvm.store.readahead, "_POLL_SECONDS", 120.0),
    ):
        yield


def _train_in_cuts(store, checkpoint: Path, blocks: int, **params) -> tuple[TrainResult, int]:
    """Train, stopped after every ``blocks`` blocks and resumed until done; ``(result, cuts)``.

    Each run writes a checkpoint after every block and is stopped (as by SIGTERM) after its
    ``blocks``-th block, wherever that falls in a pass, then resumed. Nothing depends on time: a run
    of ``B`` blocks in all is cut exactly ``B // blocks`` times, each cut ``blocks`` blocks after the
    one before (checked in the checkpoint).
    """
    assert threading.current_thread() is threading.main_thread(), "the trainer reads signals in the main thread"
    cuts = 0
    with cutting_after(blocks):
        result = train(store, verbose=0, checkpoint=checkpoint, checkpoint_every=1, **params)
        while result.interrupted:
            cuts += 1
            assert result.stop_reason == "stopped by SIGTERM", result.stop_reason
            assert read_checkpoint(checkpoint).state["blocks_visited"] == cuts * blocks
            result = train(store, verbose=0, resume=checkpoint, checkpoint_every=1, **params)
    return result, cuts


@pytest.fixture(scope="session")
def train_in_cuts():
    """``train_in_cuts(store, checkpoint, blocks, **params) -> (result, cuts)``: a run cut every ``blocks`` blocks."""
    return _train_in_cuts


def _tune_in_cuts(store, checkpoint: Path, blocks: int, **options) -> tuple[TuneResult, int]:
    """A search (``tune``) stopped as by SIGTERM after every ``blocks`` blocks it visits and resumed until done;
    ``(result, cuts)``. As for training, nothing depends on time: a search that visits ``B`` blocks in all (the
    evaluation reads apart) is cut ``B // blocks`` times."""
    assert threading.current_thread() is threading.main_thread(), "the search reads signals in the main thread"
    cuts = 0
    with cutting_after(blocks):
        result = tune(store, verbose=0, checkpoint=checkpoint, **options)
        while result.interrupted:
            cuts += 1
            assert result.stop_reason == "stopped by SIGTERM", result.stop_reason
            result = tune(store, verbose=0, resume=checkpoint, **options)
    return result, cuts


@pytest.fixture(scope="session")
def tune_in_cuts():
    """``tune_in_cuts(store, checkpoint, blocks, **options) -> (result, cuts)``: a search cut every ``blocks``
    blocks."""
    return _tune_in_cuts


ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FullFile:
    """A file whose writes fail as on a full disk."""

    def __init__(self, file):
        self.file = file

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()


def failing_open(fails=lambda path: True, refuse: int | None = None):
    """``open`` whose files opened for writing (and for which ``fails(path)``) cannot be written:
    writes fail with ENOSPC, or, with ``refuse`` (an errno), the open itself fails."""

    def fake_open(file, mode="r", *args, **kwargs):
        if not any(c in mode for c in "wa") or not fails(Path(file)):
            return builtins.open(file, mode, *args, **kwargs)
        if refuse is not None:
            raise OSError(refuse, os.strerror(refuse), str(file))
        return FullFile(builtins.open(file, mode, *args, **kwargs))

    return fake_open


def split_text(root: Path, spec: SyntheticSpec, train_rows: int, block_rows: int) -> Path:
    """``spec``'s first ``train_rows`` rows as ``root/train.svm``, converted to ``root/train.bsvm`` in blocks of
    ``block_rows``, and the rest as ``root/test.svm``; returns ``root``."""
    write_libsvm(root / "train.svm", spec, rows=range(train_rows), progress=False)
    write_libsvm(root / "test.svm", spec, rows=range(train_rows, spec.rows), progress=False)
    convert(root / "train.svm", root / "train.bsvm", block_rows=block_rows, progress=False)
    return root


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """``blocksvm ARGV`` in this process: ``(exit code, stdout, stderr)``, a usage error's exit included."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # usage errors: argparse exits
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def cli(*args) -> list[str]:
    """The command line of ``blocksvm ARGS`` run by this interpreter in a child process (each argument as text)."""
    return [sys.executable, "-m", "blocksvm.cli", *map(str, args)]


def _wait_for(condition, process: subprocess.Popen | None, what: str, timeout: float = 120.0) -> None:
    """Poll ``condition()`` until it holds; fail if ``process`` (when given) ends first or after ``timeout`` seconds.

    The timeout is only a guard against a hang: a loaded machine is slow, not 120 s slow.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None:
            pytest.fail(f"the process ended (exit {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} after {timeout:g} s")
        time.sleep(0.01)


@pytest.fixture(scope="session")
def wait_for():
    """``wait_for(condition, process, what, timeout=120)``: poll until ``condition()``, failing if ``process`` ends
    (``process=None``: nothing to watch)."""
    return _wait_for


def _training_with_a_checkpoint(store, model, checkpoint) -> subprocess.Popen:
    """``blocksvm train`` in a child (stderr piped), returned once it has written ``checkpoint``."""
    process = subprocess.Popen(
        cli("train", store, model, "--checkpoint", checkpoint, "--tol", "0", "--max-outer", "100000"),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(checkpoint.exists, process, f"checkpoint {checkpoint}")
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process


@pytest.fixture(scope="session")
def training_with_a_checkpoint():
    """``training_with_a_checkpoint(store, model, checkpoint) -> Popen``: a long run, checkpointed once."""
    return _training_with_a_checkpoint
