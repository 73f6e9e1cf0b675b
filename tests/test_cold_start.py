"""The first run (issue 41): what numba compiles is lighter, and ``blocksvm warmup`` compiles every command's kernels
with the commands a user runs. How long a first run takes is measured by tools/cold_start.py, never here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from blocksvm.cli import build_parser
from blocksvm.warmup import FIRST, REST, warmup

REPO = Path(__file__).resolve().parents[1]


def test_a_slice_of_another_shape_compiles_numba_s_generic_error():
    """numba's CPU message for ``a[i:j] = b`` of another shape formats both shapes, the largest thing a first run
    compiled; blocksvm has numba use its generic message. A function compiled after ``import blocksvm`` raises it."""
    from numba import njit

    import blocksvm  # noqa: F401

    @njit
    def assign(a, b):
        a[1:3] = b

    assign(np.zeros(5), np.ones(2))
    with pytest.raises(ValueError, match="^cannot assign slice from input of different size$"):
        assign(np.zeros(5), np.ones(3))


def test_importing_blocksvm_imports_no_numba():
    """The generic message is set when numba first compiles, not when blocksvm is imported."""
    code = "import sys, blocksvm, blocksvm.cli; print('numba' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip() == "False", done.stderr


def test_info_of_a_store_loads_neither_numba_nor_scipy(tmp_path):
    """``blocksvm info`` reads a store's manifest and files' facts: its compiled kernels and scipy are loaded where
    blocks are decoded or checked, not by a command that reads none (what it costs: tools/cold_start.py)."""
    from blocksvm.datasets import SyntheticSpec, make_store

    store = tmp_path / "s.bsvm"
    make_store(store, SyntheticSpec(rows=50, features=20, nnz=3, seed=1), block_rows=20, progress=False)
    code = (
        "import sys; from blocksvm.cli import main\n"
        f"try: main(['info', {str(store)!r}])\n"
        "except SystemExit as e: assert not e.code, e.code\n"
        "print(sorted(m for m in ('numba', 'scipy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def test_numba_finds_blas_without_scipy_linalg_s_package():
    """numba's first compile imports scipy.linalg.cython_blas to check for BLAS, which ran the whole scipy.linalg
    package at every command's start; blocksvm loads that one module first. A kernel's BLAS call still works."""
    code = """
import sys, numpy as np, blocksvm
from numba import njit
@njit
def dot(a, b):
    return np.dot(a, b)
print(dot(np.arange(3.0), np.arange(3.0)), 'scipy.linalg' in sys.modules, 'scipy.linalg.cython_blas' in sys.modules)
import scipy.linalg
print(scipy.linalg.solve(2 * np.eye(2), np.ones(2)).tolist())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.stdout.split("\n")[:2] == ["5.0 False True", "[0.5, 0.5]"], done.stderr


def test_stale_numba_caches_go_when_a_compiled_module_changes(tmp_path, monkeypatch):
    """The caches are deleted when the source of a module with compiled functions changes, kept when only a file's
    time changes (a checkout) or a module without compiled functions changes; an unchanged tree reads no source."""
    from blocksvm import _jit_cache

    monkeypatch.setattr(_jit_cache, "PACKAGE", tmp_path)
    monkeypatch.setattr(_jit_cache, "STAMP", tmp_path / "__pycache__" / "stamp")
    kernels, plain, cached = tmp_path / "kernels.py", tmp_path / "plain.py", tmp_path / "__pycache__" / "k.nbi"
    kernels.write_text("@njit(cache=True)\ndef f(): pass\n")
    plain.write_text("x = 1\n")

    def cache_kept() -> bool:
        cached.parent.mkdir(exist_ok=True)
        cached.touch()
        _jit_cache.ensure_fresh_cache()
        return cached.exists()

    cache_kept()  # the first stamp
    assert cache_kept()
    plain.write_text("x = 2\n")
    assert cache_kept()
    os.utime(kernels, ns=(1, 1))
    reads = []
    monkeypatch.setattr(_jit_cache, "sources_digest", lambda real=_jit_cache.sources_digest: reads.append(1) or real())
    assert cache_kept() and reads == [1]
    assert cache_kept() and reads == [1]
    kernels.write_text("@njit(cache=True)\ndef f(): return 1\n")
    assert not cache_kept()


def test_every_warmup_command_is_one_the_command_line_takes():
    """The warm-up runs the commands a user runs: each parses (an option the CLI no longer has would fail here, not
    in a user's first warm-up)."""
    parser = build_parser()
    names = {"DATA": "d.svm", "VW": "d.vw", "STORE": "s.bsvm", "MODEL": "m.h5", "GENERATED": "g.bsvm"}
    names |= {"OUT": "o.h5", "OUT.bsvm": "o.bsvm"}
    commands = [args for phase in (FIRST, REST) for chain in phase for args in chain]
    for args in commands:
        parsed, unknown = parser.parse_known_args([names.get(a, a) for a in args])
        assert not unknown, args
    trained = {" ".join(args[3:]) for args in commands if args[0] == "train"}
    assert {f"-s {code}" for code in (0, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21)} <= trained  # and -s 1: FIRST's default


def test_a_failed_chain_fails_the_warmup_without_a_wait(monkeypatch):
    """A prediction waits for the training chain's model: when that chain fails, the warm-up ends with its error
    (it waited for a model no command would write)."""
    import blocksvm.warmup
    from blocksvm.errors import BlocksvmError

    def run(args, files, out):
        if args[0] == "train":
            raise BlocksvmError("warmup: 'blocksvm train' failed: on purpose")

    monkeypatch.setattr(blocksvm.warmup, "_run", run)
    monkeypatch.setattr(blocksvm.warmup, "_files", lambda root: {"root": root, "MODEL": str(root / "never.h5")})
    with pytest.raises(BlocksvmError, match="on purpose"):
        warmup(jobs=2, say=lambda text: None, again=True)  # (again: whatever the caches here)
