"""``blocksvm demo``: the whole pipeline on generated data larger than the memory budget it announces.

It generates LIBSVM text, then runs the very commands a user would run, each in its own process
so that its peak memory can be read::

    blocksvm convert train.svm train.bsvm --block-mb 16
    blocksvm train train.bsvm model.h5 -C 0.1 --memory-mb <what the process needs + half the data>
    blocksvm predict model.h5 test.svm --output predictions.txt

and prints accuracy, objective, seconds and peak memory. The same commands on a tiny data set
give the fixed memory cost of Python, numba and HDF5, so the cost of the data shows apart.

Each step's peak memory is its own high-water mark, ``VmHWM`` of ``/proc/self/status``, which the
step writes at its exit. ``ru_maxrss`` from ``wait4`` is not the step's own: Linux does not reset
it at exec, it folds in the high-water mark of the memory the process had before (``exec_mmap``
keeps the old mm's ``hiwater_rss`` in ``signal->maxrss``), and with ``subprocess``'s vfork that
is the parent's mm, so every step reports at least the demo's own peak. Measured on Linux 6.18,
Python 3.11: a parent holding 600 MB starts ``python -c pass``; ``wait4`` says 627 MB, and so does
``getrusage(RUSAGE_SELF)`` inside the child, while the child's ``VmHWM`` is 13 MB (the same child
from a 27 MB parent: 27 MB by ``wait4``). Without ``/proc`` (not Linux) the ``wait4`` figure is
used, an upper bound.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.errors import BlocksvmError, ParameterError

BLOCK_MB = 16.0
C = 0.1


# A step: ``blocksvm ARGV[2:]`` (what ``python -m blocksvm.cli`` runs), then its own peak RSS in kB
# (VmHWM, see the module's docstring) written to the file ARGV[1].
_STEP = """\
import sys
from blocksvm.cli import main
try:
    code = main(sys.argv[2:])
finally:
    try:
        with open("/proc/self/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
        with open(sys.argv[1], "w") as out:
            out.write(peak)
    except (OSError, StopIteration):
        pass
sys.exit(code)
"""


def run_measured(args: list[str]) -> tuple[dict | None, float, float]:
    """Run ``blocksvm ARGS --json``; return its JSON output, seconds and its own peak RSS in MB."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="blocksvm-step-") as folder:
        peak_file = Path(folder) / "peak-kb"
        command = [sys.executable, "-c", _STEP, str(peak_file), *args, "--json", "--quiet"]
        with tempfile.TemporaryFile("w+") as errors:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
            output = process.stdout.read()
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            if process.returncode != 0:
                errors.seek(0)
                said = errors.read().strip().removeprefix("blocksvm: error: ") or f"exit {process.returncode}"
                raise BlocksvmError(f"demo step 'blocksvm {' '.join(args)}' failed: {said}")
        peak_kb = float(peak_file.read_text()) if peak_file.exists() else usage.ru_maxrss  # not Linux: wait4's
    return json.loads(output), time.perf_counter() - start, peak_kb / 1024


def training_budget_mb(store: Path) -> float:
    """The demo's ``--memory-mb`` for training: what the process needs before its data (its memory plan's minimum,
    blocksvm/train/plan.py) and half of the store's decoded blocks, so that training keeps some of them and reads the
    others again at every pass, as it does with a store larger than memory."""
    from blocksvm.solvers import SOLVERS
    from blocksvm.store import BlockStore
    from blocksvm.store.kept import block_bytes
    from blocksvm.train.params import settle
    from blocksvm.train.plan import make_plan

    opened = BlockStore(store)
    params, _ = settle("train", None, {"C": C})
    data = sum(block_bytes(opened, b["rows"], b["nnz"]) for b in opened.blocks)
    return round((make_plan(params, opened, SOLVERS["dual-cd"], 1).minimum + data / 2) / 1e6, 1)


def _pipeline(root: Path, spec: SyntheticSpec, rows: int, test_rows: int, say) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    train_text, test_text = root / "train.svm", root / "test.svm"
    start = time.perf_counter()
    text_bytes = write_libsvm(train_text, spec, rows=range(rows), progress=False)
    write_libsvm(test_text, spec, rows=range(rows, rows + test_rows), progress=False)
    steps = {"generate": {"seconds": time.perf_counter() - start}}
    store = root / "train.bsvm"
    commands = {
        "convert": lambda: ["convert", str(train_text), str(store), "--block-mb", str(BLOCK_MB), "--overwrite"],
        "train": lambda: [
            "train",
            str(store),
            str(root / "model.h5"),
            "-C",
            str(C),
            "--memory-mb",
            str(training_budget_mb(store)),
        ],  # fmt: skip
        "predict": lambda: [
            "predict",
            str(root / "model.h5"),
            str(test_text),
            "--output",
            str(root / "predictions.txt"),
        ],
    }
    for name, made in commands.items():
        args = made()  # (train's budget from the store converted)
        say(f"  $ blocksvm {' '.join(args)}")
        output, seconds, rss = run_measured(args)
        steps[name] = {"seconds": seconds, "peak_rss_mb": rss, "output": output}
    steps["text_bytes"] = text_bytes
    steps["budget_mb"] = training_budget_mb(store)
    return steps


def run_demo(
    rows: int = 600_000,
    test_rows: int = 100_000,
    features: int = 20_000,
    nnz: int = 40,
    workdir: str | None = None,
    keep: bool = False,
    out=sys.stdout,
) -> dict:
    """Run the demo and return its figures (also printed to ``out``)."""
    for name, value in (("rows", rows), ("test rows", test_rows)):
        if value < 1:
            raise ParameterError(f"{name} must be a positive integer, not {value}")
    SyntheticSpec(rows=rows + test_rows, features=features, nnz=nnz).validate()
    if workdir and Path(workdir).exists() and not Path(workdir).is_dir():
        raise BlocksvmError(f"--workdir {workdir} is a file, not a folder")
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="blocksvm-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    say = lambda text="": print(text, file=out, flush=True)  # noqa: E731
    data_mb = (rows * 24 + rows * nnz * 8) / 1e6
    try:
        say(
            f"blocksvm demo: {rows:,} training rows x {features:,} features (~{nnz} nonzeros a row), "
            f"about {data_mb:,.0f} MB in memory;"
        )
        say(
            "training runs under a --memory-mb of what the process needs and half of the data: the blocks that fit "
            f"are kept, the others read again at every pass. Files in {root}"
            + ("" if keep or workdir else " while it runs (removed at the end: --keep or --workdir keeps them)")
        )
        say()
        say("1. the fixed cost: the same commands on 2,000 rows")
        tiny = _pipeline(
            root / "tiny",
            SyntheticSpec(rows=3000, features=features, nnz=nnz, seed=2),
            2000,
            1000,
            lambda text: None,
        )
        fixed = ", ".join(f"{k} {tiny[k]['peak_rss_mb']:.0f} MB" for k in ("convert", "train", "predict"))
        say(f"   peak RSS {fixed} (Python, numba, HDF5)")
        say(f"2. the demo data ({rows:,} + {test_rows:,} held-out rows)")
        spec = SyntheticSpec(rows=rows + test_rows, features=features, nnz=nnz, noise=0.05, seed=1)
        steps = _pipeline(root / "data", spec, rows, test_rows, say)
        budget = steps["budget_mb"]
        trained = steps["train"]["output"]
        predicted = steps["predict"]["output"]
        figures = {
            "train_rows": rows,
            "test_rows": test_rows,
            "features": features,
            "text_mb": round(steps["text_bytes"] / 1e6, 1),
            "data_in_memory_mb": round(data_mb, 1),
            "training_budget_mb": budget,
            "kept_blocks": trained.get("kept_blocks"),
            "blocks": trained.get("blocks"),
            "kept_mb": trained.get("kept_mb"),
            "block_mb": BLOCK_MB,
            "objective": trained["primal"],
            "gap": trained["gap"],
            "outer_iterations": trained["outer_iterations"],
            "test_accuracy": predicted["accuracy"],
            "seconds": {k: round(steps[k]["seconds"], 1) for k in ("generate", "convert", "train", "predict")},
            "peak_rss_mb": {k: round(steps[k]["peak_rss_mb"], 1) for k in ("convert", "train", "predict")},
            "fixed_rss_mb": {k: round(tiny[k]["peak_rss_mb"], 1) for k in ("convert", "train", "predict")},
        }
        say()
        say(f"test accuracy   {100 * predicted['accuracy']:.2f}%  ({predicted['correct']:,}/{predicted['rows']:,})")
        say(
            f"objective       {trained['primal']:.6e}  (relative duality gap {trained['gap']:.1e}, "
            f"{trained['outer_iterations']} passes over the blocks)"
        )
        if trained.get("blocks"):
            say(
                f"memory          --memory-mb {budget:g}: kept {trained['kept_blocks']} of the store's "
                f"{trained['blocks']} blocks in memory ({trained['kept_mb']:,.0f} MB decoded), read the others again "
                "every pass"
            )
        s = figures["seconds"]
        say(
            f"seconds         generate {s['generate']}, convert {s['convert']}, train {s['train']}, "
            f"predict {s['predict']}"
        )
        peak, base = figures["peak_rss_mb"], figures["fixed_rss_mb"]
        say(
            "peak memory     "
            + ", ".join(f"{k} {peak[k]:.0f} MB (+{peak[k] - base[k]:.0f} over 2,000 rows)" for k in peak)
        )
        if keep or workdir:
            say(f"files kept in {root}")
        return figures
    except OSError as exc:  # writing the generated text: a full disk names no file
        raise BlocksvmError(f"the demo cannot write its files in {root}: {exc.strerror or exc}") from None
    finally:
        if not keep and workdir is None:
            shutil.rmtree(root, ignore_errors=True)
