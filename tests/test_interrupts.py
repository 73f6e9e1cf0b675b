"""Ctrl-C at any moment is ``blocksvm: interrupted``, exit code 130, nothing half-written; output into a pipe that
nobody reads any more goes quiet and the run finishes (issue 24).

No timer anywhere: the interrupt is delivered by the code under test itself, at a chosen place. A compiled
function that sends SIGINT to its own process from inside numba stands in for a conversion kernel (the signal
then arrives while compiled code runs, as a user's Ctrl-C does); an import hook sends it while a heavy
module is being imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import forked
import pytest

from blocksvm.datasets import SyntheticSpec, write_libsvm

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}

# Runs in a child: each run interrupts the AT-th call of the converter's gather_rows (the call of io/spill.py
# that met the user's Ctrl-C in issue 24) by a SIGINT sent from inside the compiled code; one JSON line a run.
NUMBA_HOOK = r"""
import contextlib, ctypes, io, json, os, shutil, sys
from pathlib import Path

from numba import njit

import blocksvm.io.spill as spill
from blocksvm.cli import main
from blocksvm._rows_kernels import gather_rows

kill = ctypes.CDLL(None).kill
kill.argtypes = [ctypes.c_int, ctypes.c_int]
kill.restype = ctypes.c_int
PID, SIGINT = os.getpid(), 2


@njit
def gather_rows_then_sigint(indptr, indices, data, rows, pid):
    out = gather_rows(indptr, indices, data, rows)
    kill(pid, SIGINT)  # Ctrl-C while compiled code runs: handled when the call returns its tuple
    return out


class Interrupting:
    def __init__(self, at):
        self.at, self.calls = at, 0

    def __call__(self, indptr, indices, data, rows):
        self.calls += 1
        if self.calls == self.at:
            return gather_rows_then_sigint(indptr, indices, data, rows, PID)
        return gather_rows(indptr, indices, data, rows)


def run(argv, at):
    hook = spill.gather_rows = Interrupting(at)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    return {"code": code, "stderr": err.getvalue(), "calls": hook.calls}


data, work, runs = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
caches = Path(os.environ["BLOCKSVM_CACHE_DIR"])  # (train's text cache: cleaned as the other outputs)
commands = {
    "convert": ["convert", str(data), str(work / "out.bsvm"), "--block-size", "400", "-q"],
    "train": ["train", str(data), str(work / "m.h5"), "-q"],
}


def outputs():
    return [p for p in [*work.iterdir(), *data.parent.iterdir(), *caches.glob("*")] if p != data]


def clean():
    for p in outputs():
        shutil.rmtree(p) if p.is_dir() else p.unlink()


work.mkdir()
calls = {name: run(argv, 0)["calls"] for name, argv in commands.items()}  # the calls of an uninterrupted run
clean()
for i in range(runs):
    name = ("convert", "train")[i % 2]
    at = 1 + (i // 2) % calls[name]
    result = run(commands[name], at)
    left = sorted(p.name for p in outputs())
    print(json.dumps({"command": name, "at": at, "of": calls[name], "left": left, **result}), flush=True)
    clean()
"""


@pytest.fixture(scope="module")
def interrupted_runs(tmp_path_factory) -> list[dict]:
    """A hundred runs, half ``convert``, half ``train`` of a text file, each interrupted inside numba."""
    folder = tmp_path_factory.mktemp("interrupts")
    (folder / "data").mkdir()
    data = folder / "data" / "train.svm"
    write_libsvm(data, SyntheticSpec(rows=3000, features=300, nnz=10, seed=3), progress=False)
    done = subprocess.run(
        [sys.executable, "-c", NUMBA_HOOK, str(data), str(folder / "work"), "100"],
        capture_output=True,
        text=True,
        env={**ENV, "BLOCKSVM_CACHE_DIR": str(folder / "caches")},
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_ctrl_c_inside_numba_is_always_interrupted(interrupted_runs):
    assert len(interrupted_runs) == 100
    for run in interrupted_runs:
        assert not any(sign in run["stderr"] for sign in forked.BUG_SIGNS), run
        assert (run["code"], run["stderr"]) == (130, "blocksvm: interrupted\n"), run


def test_ctrl_c_inside_numba_hits_every_call_of_both_commands(interrupted_runs):
    """The hundred interrupts land on every gather_rows call of a conversion: the main thread's partition and the
    block writers' permutations (SIGINT sent from a writer thread)."""
    for command, least in (("convert", 5), ("train", 2)):  # train converts into one block: two calls
        runs = [run for run in interrupted_runs if run["command"] == command]
        assert {run["at"] for run in runs} == set(range(1, runs[0]["of"] + 1)), command
        assert runs[0]["of"] >= least


def test_ctrl_c_inside_numba_leaves_nothing_half_written(interrupted_runs):
    for run in interrupted_runs:
        assert run["left"] == [], run  # no store, no partial store, no cache, no model, no history


# Runs in a child: SIGINT sent to itself while MODULE is being imported, before the command has started.
IMPORT_HOOK = r"""
import importlib.abc, signal, sys

class SigintOnImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            sys.meta_path.remove(self)
            signal.raise_signal(signal.SIGINT)
        return None

sys.meta_path.insert(0, SigintOnImport())
from blocksvm.cli import main
sys.exit(main(sys.argv[2:]))
"""


# the heavy modules a conversion imports (it no longer imports scipy)
@pytest.mark.parametrize("module", ["numpy", "numba", "h5py", "hdf5plugin", "blocksvm.io.conversion"])
def test_ctrl_c_while_importing_is_one_line(tmp_path, module):
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")
    argv = ["convert", str(data), str(tmp_path / "s")]
    done = subprocess.run([sys.executable, "-c", IMPORT_HOOK, module, *argv], capture_output=True, text=True, env=ENV)
    assert (done.returncode, done.stderr) == (130, "blocksvm: interrupted\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svm"]


def test_version_and_help_import_nothing_heavy():
    """``blocksvm --version`` took 1.1 s of imports (issue 24): it and ``--help`` load no numba, numpy, HDF5."""
    script = (
        "import contextlib, io, sys\n"
        "from blocksvm.cli import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        main(argv)\n"
        "    heavy = {'numba', 'numpy', 'h5py', 'scipy', 'sklearn'} & {m.split('.')[0] for m in sys.modules}\n"
        "    print(argv[0], sorted(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV)
    assert done.stdout.splitlines() == ["--version []", "--help []"], done.stderr


def test_tour_modules_are_attributes_after_import_blocksvm():
    """The README's ``blocksvm.stream.stream(...)`` and ``blocksvm.predict.predict(...)`` after ``import blocksvm``
    raised AttributeError (issue 24)."""
    script = "import blocksvm; print(blocksvm.stream.stream.__name__, blocksvm.predict.predict.__name__)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV)
    assert done.stdout.split() == ["stream", "predict"], done.stderr


def run_into_a_closed_pipe(argv: list[str]) -> int:
    """``blocksvm ARGV 2>&1 | head -0``, deterministically: standard output and error are a pipe whose reader has
    closed before the command starts, so every line it prints meets a broken pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        command = [sys.executable, "-m", "blocksvm.cli", *argv]
        return subprocess.run(command, stdout=write, stderr=write, env=ENV, timeout=600).returncode
    finally:
        os.close(write)


@pytest.mark.children  # (run_into_a_closed_pipe: blocksvm in a child)
def test_train_into_a_closed_pipe_finishes_with_its_own_history(tmp_path, small_libsvm):
    """``blocksvm train data.svm m.h5 2>&1 | head -2`` ended with exit code 1, no message, and an older model's
    history cut to the passes printed (issue 24). Printing is not the run: the model and a complete history."""
    from blocksvm.model import LinearModel

    model = tmp_path / "m.h5"
    history = tmp_path / "m.h5.history.jsonl"
    assert run_into_a_closed_pipe(["train", str(small_libsvm), str(model), "-C", "4", "--max-outer", "5"]) == 0
    older = history.read_text()
    argv = ["train", str(small_libsvm), str(model), "-C", "0.25", "--tol", "0", "--max-outer", "3", "--json"]
    assert run_into_a_closed_pipe(argv) == 0
    records = [json.loads(line) for line in history.read_text().splitlines()]
    assert [r["outer"] for r in records] == [1, 2, 3] and history.read_text() != older
    assert LinearModel.load(model).params["C"] == 0.25  # the history's model, not the older one


@pytest.mark.children  # (run_into_a_closed_pipe: blocksvm in a child)
def test_info_and_convert_into_a_closed_pipe_succeed(tmp_path, small_libsvm):
    store = tmp_path / "s"
    assert run_into_a_closed_pipe(["convert", str(small_libsvm), str(store)]) == 0
    assert run_into_a_closed_pipe(["info", str(store), "--verify"]) == 0
