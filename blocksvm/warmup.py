"""``blocksvm warmup``: compile every command's kernels once, on every core, so that no first run waits for them.

numba compiles a kernel the first time a process calls it and caches the machine code beside its module
(``__pycache__``): a fresh installation's first run of each command pays for the kernels it uses, tens of seconds
where the run itself takes a few, and one process compiles one function at a time. Here the very commands a user
runs (the same kernels, with the same argument types) run once on a few hundred generated rows, as chains of
commands in processes of their own, as many at once as there are cores: first the chains every other command
builds on (:data:`FIRST`: the conversion and the column layout, whose store the others read, and a training and its
predictions, whose kernels of reading and evaluating every training shares), then every other command
(:data:`REST`).

A warm-up that ends well leaves a stamp beside the caches (:data:`STAMP`: the compiled modules' sources, numba,
Python and the processor, and the cache files it left); the next one, while all of that is as it was, says so and
compiles nothing (a second of work, where running the commands again only to load their caches took 45 s).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from blocksvm._jit_cache import PACKAGE, sources_digest
from blocksvm.errors import BlocksvmError
from blocksvm.params import cores

STAMP = PACKAGE / "__pycache__" / "warmup.json"
"""What the last warm-up that ended well found: the caches it left and what they were compiled from and for."""

# Chains of commands: DATA (LIBSVM text), VW (VW text), STORE (DATA's store), MODEL and OUT are the warm-up's files.
CODES = (0, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21)  # (-s 1 is dual CD's default problem: FIRST trains it)
ONLINE = ("perceptron", "pa", "pa1", "pa2", "cw", "arow", "ogd", "ftrl", "fobos", "scw1", "scw2")
FIRST = (
    (
        ["generate", "GENERATED", "--store", "--rows", "600", "--features", "60", "--nnz", "8", "--block-rows", "200"],
        ["train", "GENERATED", "MODEL", "--cache-mb", "16"],
        ["predict", "MODEL", "GENERATED"],
    ),
    (
        ["convert", "DATA", "STORE", "--block-rows", "200"],
        ["columns", "STORE"],  # (before the L1 trainings of REST read them: they are not written while others read)
        ["predict", "MODEL", "DATA", "-o", "OUT"],
    ),
)
REST = (
    (["info", "STORE", "--verify"],),
    (["convert", "VW", "OUT.bsvm", "--format", "vw"],),
    *((["train", "STORE", "OUT", "-s", str(code)],) for code in CODES),
    (["train", "STORE", "OUT", "--threads", "2"],),
    (["train", "STORE", "OUT", "-s", "2", "--threads", "2"],),
    (["train", "STORE", "OUT", "--solver", "pegasos"],),
    (["train", "STORE", "OUT", "--solver", "owl-qn", "--penalty", "l1"],),
    (["tune", "STORE", "--C-grid", "0.5,1", "--folds", "2"],),
    *((["stream", "DATA", "OUT", "--solver", solver],) for solver in ONLINE),
    (["stream", "DATA", "OUT", "--solver", "ftrl", "--loss", "logistic"],),
)


def warmup(jobs: int | None = None, say=print, again: bool = False) -> dict:
    """Run the chains of :data:`FIRST`, then of :data:`REST`, ``jobs`` processes at a time (default: one a core);
    return the seconds and the commands run. The conversion's chain predicts with the training chain's model: it
    comes second, and waits for it. Nothing runs while the last warm-up's caches stand as it left them (``again``:
    run anyway)."""
    jobs = jobs or cores()
    phases = (FIRST, REST)
    commands = sum(len(chain) for phase in phases for chain in phase)
    started = time.perf_counter()
    stamped = _stamped()
    if stamped is not None and not again:
        seconds = time.perf_counter() - started
        say(
            f"warm already: the kernels of {commands} commands stand compiled and cached as the warm-up of "
            f"{stamped} left them (nothing compiled; --again runs it anyway)"
        )
        return {"seconds": round(seconds, 1), "commands": 0, "jobs": jobs, "warm_since": stamped}
    with tempfile.TemporaryDirectory(prefix="blocksvm-warmup-") as tmp:
        files = _files(Path(tmp))
        say(f"compiling the kernels of {commands} commands, {jobs} at a time")
        failed = threading.Event()  # a chain that failed: the others stop waiting for its model
        for phase in phases:
            with ThreadPoolExecutor(jobs) as pool:
                list(pool.map(lambda chain: _chain(chain[1], files, chain[0], failed), enumerate(phase)))
    seconds = time.perf_counter() - started
    _stamp()
    say(f"warm: the kernels of {commands} commands compiled and cached in {seconds:.0f} s")
    return {"seconds": round(seconds, 1), "commands": commands, "jobs": jobs}


def _identity() -> dict:
    """What the caches were compiled from and for: the compiled modules' sources, numba, Python, the processor."""
    import numba

    cpu = ""
    try:  # numba compiles for the host's processor: its model and flags (Linux)
        with open("/proc/cpuinfo") as info:
            cpu = "".join(sorted({line for line in info if line.startswith(("model name", "flags"))}))
    except OSError:
        pass
    return {
        "sources": sources_digest(),
        "numba": numba.__version__,
        "python": sys.version,
        "machine": f"{platform.machine()} {platform.processor()} {cpu}",
    }


def _caches() -> list[str]:
    """The numba cache files in the package's folders."""
    return sorted(str(p.relative_to(PACKAGE)) for pattern in ("*.nbi", "*.nbc") for p in PACKAGE.rglob(pattern))


def _stamp() -> None:
    """Record the caches a warm-up left (nothing where numba caches elsewhere: the next warm-up runs)."""
    caches = _caches()
    if not caches:
        return
    record = {**_identity(), "caches": caches, "when": time.strftime("%Y-%m-%d %H:%M")}
    try:
        STAMP.write_text(json.dumps(record))
    except OSError:
        pass  # a read-only installation: the next warm-up runs again


def _stamped() -> str | None:
    """When the last warm-up that ended well ran, if its caches stand as it left them (every file, for the same
    sources, numba, Python and processor); else None."""
    try:
        record = json.loads(STAMP.read_text())
        if {key: record.get(key) for key in ("sources", "numba", "python", "machine")} != _identity():
            return None
        if not all((PACKAGE / name).is_file() for name in record["caches"]):
            return None
        return str(record["when"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _files(root: Path) -> dict:
    """The warm-up's data: 600 generated rows as LIBSVM text and as VW text (the README's recipe)."""
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    files = {name: str(root / name.lower()) for name in ("DATA", "VW", "STORE", "MODEL", "GENERATED")}
    files["GENERATED"] += ".bsvm"
    write_libsvm(files["DATA"], SyntheticSpec(rows=600, features=60, nnz=8, seed=1), progress=False)
    with open(files["DATA"]) as text, open(files["VW"], "w") as vw:
        vw.writelines(line.replace(" ", " |f ", 1) for line in text)
    files["root"] = root
    return files


def _chain(chain: tuple, files: dict, index: int, failed: threading.Event) -> None:
    """The commands of ``chain`` in turn, each ``blocksvm ARGS`` in a child process, the warm-up's files in place of
    their names (OUT: this chain's own). A prediction waits for the training chain's model (the conversion chain's:
    the other's), unless that chain failed (its error is the warm-up's)."""
    out = str(files["root"] / f"out-{index}.h5")
    for args in chain:
        while args[0] == "predict" and not Path(files["MODEL"]).exists():
            if failed.wait(0.2):
                return
        try:
            _run(args, files, out)
        except BlocksvmError:
            failed.set()
            raise


def _run(args: list[str], files: dict, out: str) -> None:
    """``blocksvm ARGS`` in a child process."""
    argv = [files.get(a, out if a == "OUT" else f"{out}.bsvm" if a == "OUT.bsvm" else a) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "blocksvm.cli", *argv, "--quiet"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise BlocksvmError(f"warmup: 'blocksvm {' '.join(args)}' failed: {said[0]}")
