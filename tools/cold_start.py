#!/usr/bin/env python
"""The first run after a fresh install against the second: what compiling numba's kernels costs a new user.

numba caches each compiled kernel in the ``__pycache__`` folder beside its module (``cache=True``); a fresh clone or
a fresh install has none, so its first run of each command compiles every kernel that run calls. To measure that as a
new user meets it, every measurement runs in a fresh copy of this checkout's ``blocksvm`` package (its sources
alone: no ``__pycache__``, so no numba cache and no bytecode), in child processes, ``NUMBA_CACHE_DIR`` unset:

- ``demo``: the first ``blocksvm demo`` (its defaults: 600,000 rows) in a fresh copy, then the second in the same;
- ``-s CODE``: for each of LIBLINEAR's codes, in a fresh copy of its own, what a new user runs: ``blocksvm convert
  DATA STORE`` (a9a by default), then ``blocksvm train STORE m.h5 -s CODE`` twice (the first compiles what the
  conversion did not, the second finds the cache);
- ``--warmup``: ``blocksvm warmup`` in a fresh copy, then the conversion and each ``-s`` code there.

The machine's load average is printed beside each figure: the machines this project runs on are shared, and a
busy machine compiles at half the speed. Usage::

    python tools/cold_start.py                       # the demo and every -s code on ../shared/data/a9a
    python tools/cold_start.py --skip-demo --codes 0,5,21 --json cold.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODES = (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21)
EXTRA = {21: ["-n", "0.1"]}  # (-s 21 reads nu; its default is LIBLINEAR's, given here as the README does)


SOURCE = REPO  # the checkout whose package is measured (--source)


def fresh_copy(root: Path, name: str) -> Path:
    """A folder holding a copy of the package's sources only (no compiled kernels, no bytecode)."""
    folder = root / name
    shutil.copytree(SOURCE / "blocksvm", folder / "blocksvm", ignore=shutil.ignore_patterns("__pycache__", "*.nb?"))
    return folder


def timed(folder: Path, args: list[str], cwd: Path) -> float:
    """Seconds of ``blocksvm ARGS`` run from the package in ``folder``; fails loudly if the command does."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"PYTHONPATH": str(folder)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "blocksvm.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"blocksvm {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def measure_demo(root: Path) -> dict:
    folder = fresh_copy(root, "demo")
    before = load()
    first = timed(folder, ["demo", "-q"], root)
    second = timed(folder, ["demo", "-q"], root)
    return {"first": round(first, 1), "warm": round(second, 1), "load": f"{before} .. {load()}"}


def measure_code(root: Path, data: str, code: int, warmed: Path | None) -> dict:
    folder = warmed or fresh_copy(root, f"s{code}")
    store = root / f"s{code}.bsvm"
    before = load()
    convert = timed(folder, ["convert", data, str(store), "-q", "--overwrite"], root)
    args = ["train", str(store), str(root / f"s{code}.h5"), "-s", str(code), "-q", *EXTRA.get(code, [])]
    first = timed(folder, args, root)
    second = timed(folder, args, root)
    return {
        "convert": round(convert, 1),
        "first": round(first, 1),
        "warm": round(second, 1),
        "load": f"{before} .. {load()}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "a9a"), help="LIBSVM text to train")
    parser.add_argument("--codes", default=",".join(map(str, CODES)), help="the -s codes to measure")
    parser.add_argument("--skip-demo", action="store_true", help="do not measure the demo")
    parser.add_argument("--warmup", action="store_true", help="also: 'blocksvm warmup', then the -s codes after it")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--source", default=str(REPO), help="the checkout to measure (default: this one)")
    args = parser.parse_args()
    global SOURCE
    SOURCE = Path(args.source)
    codes = [int(c) for c in args.codes.split(",") if c]
    figures: dict = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="blocksvm-cold-") as tmp:
        root = Path(tmp)
        if not args.skip_demo:
            figures["demo"] = measure_demo(root)
            print(f"demo      first {figures['demo']['first']:6.1f} s   warm {figures['demo']['warm']:6.1f} s   "
                  f"load {figures['demo']['load']}", flush=True)  # fmt: skip
        warmed = None
        if args.warmup:
            warmed = fresh_copy(root, "warmed")
            before = load()
            figures["warmup"] = {"seconds": round(timed(warmed, ["warmup", "-q"], root), 1), "load": before}
            print(f"warmup    {figures['warmup']['seconds']:6.1f} s   load {before}", flush=True)
        for code in codes:
            row = measure_code(root, args.data, code, warmed)
            figures[f"-s {code}"] = row
            ratio = row["first"] / max(row["warm"], 1e-9)
            print(f"-s {code:<6} first {row['first']:6.1f} s   warm {row['warm']:6.1f} s   {ratio:4.1f}x   "
                  f"(convert before it {row['convert']:5.1f} s)   load {row['load']}", flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
