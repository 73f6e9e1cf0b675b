"""Keep numba's on-disk cache consistent with the sources of every compiled function, and compile less.

numba invalidates a cached function only when *its own* file changes, so a kernel that calls a
helper from another module keeps running the old helper after that module is edited. At import,
blocksvm hashes the sources of all its modules that define compiled functions and, if the hash
changed since the caches were written, deletes them (they are rebuilt on first use).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
STAMP = PACKAGE / "__pycache__" / "numba-sources.sha1"
COMPILED = re.compile(rb"^\s*@njit", re.MULTILINE)  # a line that decorates a compiled function


def sources_digest() -> str:
    """A digest of the sources of every module that defines compiled functions."""
    digest = hashlib.sha1()
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_bytes()
        if COMPILED.search(text):
            digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + text)
    return digest.hexdigest()


def files_digest() -> str:
    """A digest of every module's name, size and modification time: what :func:`sources_digest` is checked against
    only when it changed (reading the sources costs 12 ms of every command's start, a stat of them 2)."""
    digest = hashlib.sha1()
    for path in sorted(PACKAGE.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(PACKAGE)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def ensure_fresh_cache() -> None:
    """Delete stale numba cache files if any compiled module changed (best effort)."""
    try:
        files = files_digest()
        stamp = STAMP.read_text().split() if STAMP.exists() else []
        if stamp[1:] == [files]:
            return
        current = sources_digest()
        if stamp[:1] != [current]:
            for pattern in ("*.nbi", "*.nbc"):
                for cached in PACKAGE.rglob(pattern):
                    cached.unlink(missing_ok=True)
        STAMP.parent.mkdir(exist_ok=True)
        STAMP.write_text(f"{current} {files}")
    except OSError:
        pass  # a read-only installation: numba then caches elsewhere or not at all


def compile_lighter() -> None:
    """Once numba is imported, make the error of a slice assigned from an array of another shape numba's generic
    one, ``cannot assign slice from input of different size``, instead of its CPU message, which names both shapes.

    Every kernel that assigns a slice from an array (``a[i:j] = b``) compiles that message, and formatting the
    shapes (f-strings, ``str`` of each integer) was the largest thing compiled: 40% of a first ``train -s 21`` (40.5
    s against 24.1 s with an empty cache, measured), 30% of a first ``stream``. The error is a bug's, never raised by
    a correct run; only its words change. numba's own generic overload replaces the CPU one in its template; if numba
    changes how overloads are kept, nothing is replaced and kernels compile as before.
    """
    if "numba" in sys.modules:
        _load_blas_alone()
        _before_the_first_compile()
    elif not any(isinstance(finder, _AfterNumba) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumba())


class _AfterNumba(importlib.abc.MetaPathFinder):
    """Imports numba as usual, then has :func:`_use_generic_slice_error` called when numba first compiles (blocksvm
    is imported without numba, ``blocksvm --version`` does not pay for it, and a run whose kernels are all cached
    pays nothing)."""

    def find_spec(self, name, path, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _load_blas_alone()
                _before_the_first_compile()

            spec.loader.exec_module = exec_module
        return spec


def _load_blas_alone() -> None:
    """Load scipy's ``cython_blas`` extension on its own, under its own name, before numba looks for it.

    The first function numba compiles or loads from its cache in a process checks that BLAS is there with ``import
    scipy.linalg.cython_blas``, which runs the whole of ``scipy.linalg``'s package (numpy.f2py included): 0.2-0.3 s
    of every command's start, measured (``tools/bench_startup.py``), for one extension module that needs nothing of
    the package. numba (and a later ``import scipy.linalg``) find the module in ``sys.modules``. If scipy.linalg is
    already imported, or the file is not where scipy keeps it, nothing is done and numba imports it as before.
    """
    name = "scipy.linalg.cython_blas"
    if name in sys.modules or "scipy.linalg" in sys.modules:
        return
    try:
        folder = Path(importlib.util.find_spec("scipy").origin).parent / "linalg"
        path = next(p for s in importlib.machinery.EXTENSION_SUFFIXES for p in folder.glob("cython_blas" + s))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    except Exception:  # another scipy: numba imports the package itself
        pass


def _before_the_first_compile() -> None:
    """:func:`_use_generic_slice_error` when numba starts compiling a function for the first time in this process."""
    from numba.core import event

    class FirstCompile(event.Listener):
        done = False

        def on_start(self, ev) -> None:
            if not self.done:  # (numba goes through its listeners as it calls them: this one stays, done)
                self.done = True
                _use_generic_slice_error()

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", FirstCompile())


def _use_generic_slice_error() -> None:
    try:
        from numba.core.registry import cpu_target
        from numba.np import arrayobj

        typing = cpu_target.typing_context
        typing.refresh()
        for template in typing.resolve_value_type(arrayobj.raise_with_shape_context).templates:
            if getattr(template, "_overload_func", None) is arrayobj.ol_raise_with_shape_context_cpu:
                template._overload_func = arrayobj.ol_raise_with_shape_context_generic
    except Exception:  # another numba: compile as it does
        pass
