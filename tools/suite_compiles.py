#!/usr/bin/env python
"""What the test suite spends compiling numba's kernels: a pytest plugin that times every outermost compile in each
process it is loaded in (each xdist worker), and a summary of them.

On a fresh clone (no numba cache), or with numba's caches sent to an empty folder, from the repository root::

    NUMBA_CACHE_DIR=$(mktemp -d) PYTHONPATH=tools python -m pytest -p suite_compiles   # one file a worker
    python tools/suite_compiles.py      # seconds by kernel, and what more than one worker compiled

Child processes (the commands the tests run as a user would) are not counted: they load what the workers compiled,
or compile on their own.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from collections import Counter
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "bench-out" / "compiles"


def pytest_configure(config) -> None:
    """Time numba's compiles in this process; write them at its exit."""
    from numba.core import event

    spent: dict[str, float] = {}

    class Timer(event.Listener):
        def __init__(self):
            self.started: list[float] = []

        def on_start(self, ev) -> None:
            self.started.append(time.perf_counter())

        def on_end(self, ev) -> None:
            began = self.started.pop()
            if self.started:  # (a function compiled inside another's compile is counted in it)
                return
            function = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{function.__module__}.{function.__qualname__}" if function else "?"
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - began

    event.register("numba:compile", Timer())

    def write() -> None:
        if spent:
            FOLDER.mkdir(parents=True, exist_ok=True)
            (FOLDER / f"{os.getpid()}.json").write_text(json.dumps(spent))

    atexit.register(write)


def main() -> None:
    runs = [json.loads(path.read_text()) for path in sorted(FOLDER.glob("*.json"))]
    if not runs:
        raise SystemExit(f"no compiles recorded in {FOLDER}: run the suite with -p suite_compiles first")
    total = Counter()
    for run in runs:
        total.update(run)
    again = [name for name in total if sum(name in run for run in runs) > 1]
    twice = sum(min(run[name] for run in runs if name in run) for name in again)
    print(f"{len(runs)} processes, {len(total)} functions, {sum(total.values()):.1f} s compiling")
    print(f"{len(again)} functions compiled in more than one process: {twice:.1f} s of it again at least")
    print("| kernel | seconds |\n|---|---:|")
    for name, seconds in total.most_common(15):
        print(f"| `{name}` | {seconds:.1f} |")


if __name__ == "__main__":
    main()
