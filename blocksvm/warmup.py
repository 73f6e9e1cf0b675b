"""``blocksvm warmup``: compile every command's kernels once, on every core, so that no first run waits for them.

numba compiles a kernel the first time a process calls it and caches the machine code beside its module
(``__pycache__``): a fresh installation's first run of each command pays for the kernels it uses, tens of seconds
where the run itself takes a few. Here the very commands a user runs (the same kernels, with the same argument
types) run once on a few hundred generated rows, each in a process of its own, as many at once as there are cores
(numba compiles one function at a time in a process). The conversion comes first: the other commands read its
store, and its kernels (the checksums, the encoders) are theirs too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from blocksvm.errors import BlocksvmError
from blocksvm.params import cores

# The commands whose kernels a run may need, after ``convert DATA STORE``; DATA, VW, STORE, MODEL and OUT are the
# warm-up's files. Every -s code, the threads of dual CD and Newton, each online learner, tune, predict and info.
CODES = (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21)
ONLINE = ("perceptron", "pa", "pa1", "pa2", "cw", "arow", "ogd", "ftrl", "fobos", "scw1", "scw2")
FIRST = (["train", "STORE", "MODEL", "-s", "1"],)  # the kernels every other run shares: reading and evaluating
JOBS = (
    ["predict", "MODEL", "DATA", "-o", "OUT"],
    ["predict", "MODEL", "STORE"],
    ["info", "STORE", "--verify"],
    ["convert", "VW", "OUT.bsvm", "--format", "vw"],
    *(["train", "STORE", "OUT", "-s", str(code)] for code in CODES if code != 1),
    ["train", "STORE", "OUT", "--threads", "2"],
    ["train", "STORE", "OUT", "-s", "2", "--threads", "2"],
    ["train", "STORE", "OUT", "--solver", "pegasos"],
    ["tune", "STORE", "--C-grid", "0.5,1", "--folds", "2"],
    *(["stream", "DATA", "OUT", "--solver", solver] for solver in ONLINE),
    ["stream", "DATA", "OUT", "--solver", "ftrl", "--loss", "logistic"],
)


def warmup(jobs: int | None = None, say=print) -> dict:
    """Run every command of :data:`FIRST` and :data:`JOBS` once on generated rows, ``jobs`` processes at a time
    (default: one a core); return the seconds and the commands run."""
    from blocksvm.datasets import SyntheticSpec, write_libsvm

    jobs = jobs or cores()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="blocksvm-warmup-") as tmp:
        root = Path(tmp)
        files = {name: str(root / name.lower()) for name in ("DATA", "VW", "STORE", "MODEL")}
        spec = SyntheticSpec(rows=600, features=60, nnz=8, classes=2, seed=1)
        write_libsvm(files["DATA"], spec, progress=False)
        with open(files["DATA"]) as text, open(files["VW"], "w") as vw:
            vw.writelines(line.replace(" ", " |f ", 1) for line in text)
        say(f"compiling the kernels of {len(FIRST) + len(JOBS) + 1} commands, {jobs} at a time")
        _run(["convert", "DATA", "STORE", "--block-rows", "200"], files, root, 0)
        for phase in (FIRST, JOBS):
            with ThreadPoolExecutor(jobs) as pool:
                list(pool.map(lambda job: _run(job[1], files, root, job[0]), enumerate(phase)))
    seconds = time.perf_counter() - started
    say(f"warm: every command's kernels compiled and cached in {seconds:.0f} s")
    return {"seconds": round(seconds, 1), "commands": len(FIRST) + len(JOBS) + 1, "jobs": jobs}


def _run(args: list[str], files: dict, root: Path, index: int) -> None:
    """``blocksvm ARGS`` in a child process, the warm-up's files in place of their names."""
    out = str(root / f"out-{index}.h5")
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
