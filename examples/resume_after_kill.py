"""Resuming after a kill: the resumed run ends with the very model of an uninterrupted one.

1. ``blocksvm train ... --checkpoint run.ckpt --checkpoint-every 1`` starts in a subprocess and
   writes a checkpoint after every block;
2. once it has written a few, the process is killed with SIGKILL (nothing is saved at that moment:
   no signal handler runs);
3. ``blocksvm train ... --resume run.ckpt`` with the same parameters continues from the last
   checkpoint and finishes;
4. the same training without interruption gives a bit-identical model (``coef`` and
   ``intercept`` equal to the last bit), and the history has every pass exactly once.

See docs/CHECKPOINTS.md. Run: ``python examples/resume_after_kill.py [--workdir DIR] [--small]``.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from blocksvm.checkpoint import read_latest
from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.errors import CheckpointError
from blocksvm.model import LinearModel
from blocksvm.train import train

BLOCKSVM = [sys.executable, "-m", "blocksvm.cli"]


def main(workdir: Path, small: bool = False) -> dict:
    """Kill a run, resume it, compare with an uninterrupted run; return what was found."""
    workdir = Path(workdir)
    rows = 24_000 if small else 1_000_000
    store = workdir / "train.bsvm"
    make_store(
        store,
        SyntheticSpec(rows=rows, features=5_000, nnz=20, seed=4),
        block_rows=rows // 12,
        overwrite=True,
        progress=False,
    )
    options = ["-C", "0.5", "--loss", "hinge", "--tol", "0", "--max-outer", "6", "--seed", "1", "-q"]
    ck, model, history = workdir / "run.ckpt", workdir / "model.h5", workdir / "model.h5.history.jsonl"
    for stale in (ck, ck.with_name("run.ckpt.prev")):
        stale.unlink(missing_ok=True)

    # 1-2. train with a checkpoint after every block, and kill the process once 5 blocks are saved
    run = subprocess.Popen(
        [*BLOCKSVM, "train", str(store), str(model), *options, "--checkpoint", str(ck), "--checkpoint-every", "1"]
    )
    blocks_saved = 0
    while blocks_saved < 5 and run.poll() is None:
        time.sleep(0.02)
        try:
            blocks_saved = read_latest(ck)[0].state["blocks_visited"]
        except CheckpointError:  # not written yet
            continue
    run.send_signal(signal.SIGKILL)
    run.wait()
    saved = read_latest(ck)[0].state  # a kill between two renames leaves only run.ckpt.prev
    print(f"killed (exit {run.returncode}); last checkpoint: pass {saved['outer']}, {saved['position']} blocks into it")

    # 3. resume with the same parameters (--resume also keeps writing the checkpoint)
    subprocess.run([*BLOCKSVM, "train", str(store), str(model), *options, "--resume", str(ck)], check=True)
    resumed = LinearModel.load(model)
    passes = [json.loads(line)["outer"] for line in history.read_text().splitlines()]

    # 4. the same run without a kill (the Python API takes the same parameters)
    uninterrupted = train(store, C=0.5, loss="hinge", tol=0.0, max_outer=6, seed=1, verbose=0).model
    identical = np.array_equal(resumed.coef, uninterrupted.coef) and np.array_equal(
        resumed.intercept, uninterrupted.intercept
    )
    print(f"resumed model bit-identical to the uninterrupted one: {identical}; passes in the history: {passes}")
    return {"killed_at": (saved["outer"], saved["position"]), "identical": identical, "passes": passes}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="keep the files here (default: a temporary folder)")
    parser.add_argument("--small", action="store_true", help="a small store: seconds, not a minute")
    args = parser.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        main(args.workdir, args.small)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder), args.small)
