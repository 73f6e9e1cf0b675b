#!/usr/bin/env python
"""What a command costs before it reads a byte: the wall of the quick commands a user types, each a whole process,
numba's cache warm (one run of each first), medians of runs taken in turns.

- ``--help``; ``info`` of a small store;
- ``stream`` of three lines of LIBSVM text; ``predict`` of those lines with the model it wrote;
- ``train`` of a small store (``--quick`` leaves it out).

With ``--base COMMIT`` the same commands of that commit's code (a worktree beside the repository) run in turn with
this checkout's. ::

    python tools/bench_startup.py                 # this checkout, 7 runs a command
    python tools/bench_startup.py --base e7a7178  # against an older commit
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path

from bench_cold import checkout
from harness import report, run

TARGETS = {"--help": 0.4, "info": 0.4, "stream": 0.8, "predict": 0.8}
TEXT = "1 1:0.5 3:1\n-1 2:1 4:0.25\n1 1:1 2:0.3\n"


def commands(folder: Path, with_train: bool) -> dict[str, list[str]]:
    text, store, model = folder / "three.txt", folder / "small.bsvm", folder / "three.model"
    line = {
        "--help": ["--help"],
        "info": ["info", store],
        "stream": ["stream", text, model],
        "predict": ["predict", model, text, folder / "predictions.txt"],
    }
    if with_train:
        line["train"] = ["train", store, folder / "small.model"]
    return {name: [str(a) for a in args] for name, args in line.items()}


def prepare(folder: Path) -> None:
    """Three lines of text and a small store (a few hundred generated rows) in ``folder``."""
    (folder / "three.txt").write_text(TEXT)
    made = run.command(run.cli("generate", folder / "small.bsvm", "--store", "--rows", "600", "--features", "50"))
    if "error" in made:
        raise SystemExit(f"could not make the small store: {made['error']}")


def main() -> None:
    p = run.parser(__doc__)
    p.add_argument("--base", help="an older commit to run in turn with this checkout")
    p.add_argument("--repeat", type=int, default=7)
    run.add_quick(p, "3 runs a command, no train")
    args = run.quick(p, p.parse_args(), repeat=3)
    # A user's interpreter keeps the modules' bytecode (pip writes it, or the first run): so do the commands here,
    # whatever this shell says.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    codes = {"this checkout": None}
    if args.base:
        codes[args.base] = checkout(args.base)
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as name:
        folder = Path(name)
        prepare(folder)
        lines = commands(folder, with_train=not args.quick)
        configs = [(code, command) for command in lines for code in codes]
        for code, command in configs:  # numba's caches written, the page cache warm
            run.command(run.cli(*lines[command]), checkout=codes[code])

        def one(config):
            code, command = config
            result = run.command(run.cli(*lines[command]), checkout=codes[code])
            if "error" in result:
                raise SystemExit(f"{code}: blocksvm {command} failed: {result['error']}")
            return result["seconds"]

        seconds = run.in_turns(configs, args.repeat, one)
    print(report.machine())
    header = ["command", *(f"{code} (median s)" for code in codes), "target"]
    rows = []
    for command in lines:
        medians = [statistics.median(seconds[(code, command)]) for code in codes]
        rows.append([command, *(f"{m:.2f}" for m in medians), TARGETS.get(command, "")])
    print(report.table(header, rows))


if __name__ == "__main__":
    main()
