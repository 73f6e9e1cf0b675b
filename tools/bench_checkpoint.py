"""What a checkpoint costs: its size, the seconds to write and read it, and its share of a pass.

A dual CD checkpoint holds ``alpha`` (8 bytes a row) and ``w`` (8 bytes a feature) besides a few
kilobytes of state, so its size depends on the store's shape only. The first part writes and
reads such a checkpoint (no training); with ``--train`` a store of that shape is generated and
trained for two passes, checkpointing once per pass and then after every block, and the summary's
``checkpoint_seconds`` is set against the seconds of a pass.

    python tools/bench_checkpoint.py [--rows 2000000] [--features 1000000] [--train --nnz 50 --blocks 20]
    python tools/bench_checkpoint.py --train --quick      # test the script: 20,000 rows
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
from harness import OUT, data, report, run

from blocksvm.checkpoint import Checkpoint, read_checkpoint, write_checkpoint
from blocksvm.train import train


def checkpoint_cost(rows: int, features: int, folder: Path, repeat: int = 5) -> dict:
    """A real run's checkpoint (a tiny store's: its fields as training writes them) holding ``alpha`` and ``w`` of
    this size, written and read ``repeat`` times."""
    tiny = data.generated_store(folder / "tiny.bsvm", data.spec(1000, 100, 5), 250)
    path = folder / "bench.ckpt"
    path.unlink(missing_ok=True)
    Path(f"{path}.prev").unlink(missing_ok=True)
    train(tiny, max_outer=1, verbose=0, checkpoint=path)
    saved, rng = read_checkpoint(path), np.random.default_rng(0)
    arrays = {**saved.arrays, "alpha": rng.random((1, rows)), "w": rng.random((1, features + 1))}
    checkpoint = Checkpoint(saved.params, saved.store, saved.state, arrays)
    writes = [write_checkpoint(path, checkpoint) for _ in range(repeat)]
    reads = [run.timed(lambda: read_checkpoint(path))[0] for _ in range(repeat)]
    return {"mb": path.stat().st_size / 1e6, "write": statistics.median(writes), "read": statistics.median(reads)}


def training_cost(rows: int, features: int, nnz: int, blocks: int, folder: Path) -> list[dict]:
    """Seconds of the second pass with one checkpoint per pass and with one after every block."""
    spec = data.spec(rows, features, nnz, seed=0)
    store = data.generated_store(folder / f"gen-{rows}x{features}x{nnz}-{blocks}.bsvm", spec, -(-rows // blocks))
    results = []
    for every in (0, 1):
        ck = folder / f"every{every}.ckpt"
        ck.unlink(missing_ok=True)
        Path(f"{ck}.prev").unlink(missing_ok=True)
        result = train(store, C=1.0, tol=0.0, max_outer=2, verbose=0, checkpoint=ck, checkpoint_every=every)
        s = result.model.summary
        first, second = result.history
        results.append(
            {
                "every": every,
                "each": s["checkpoint_seconds"] / s["checkpoints"],
                "per_pass": s["checkpoints"] / 2,
                "pass": second["train_time"] - first["train_time"],
            }
        )
    # the second pass of the first run holds one checkpoint (the end of pass 1): take it out
    bare = results[0]["pass"] - results[0]["each"]
    for r in results:
        r["share"] = r["per_pass"] * r["each"] / bare
        r["bare"] = bare
    return results


def main() -> None:
    parser = run.parser(__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--features", type=int, default=1_000_000)
    parser.add_argument("--train", action="store_true", help="also generate a store and train two passes")
    parser.add_argument("--nnz", type=int, default=50, help="mean nonzeros a row of the generated store")
    parser.add_argument("--blocks", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT / "checkpoint", help="working folder (default bench-out/)")
    run.add_quick(parser)
    args = run.quick(parser, parser.parse_args(), rows=20_000, features=10_000, nnz=20, blocks=4)
    folder = args.out
    folder.mkdir(parents=True, exist_ok=True)
    print(report.machine())
    cost = checkpoint_cost(args.rows, args.features, folder)
    print(
        f"checkpoint of {args.rows:,} rows x {args.features:,} features: {cost['mb']:.1f} MB, "
        f"written in {cost['write']:.3f} s, read in {cost['read']:.3f} s (medians of 5)"
    )
    if args.train:
        print(f"training {args.blocks} blocks, ~{args.nnz} nonzeros a row, 2 passes:")
        for r in training_cost(args.rows, args.features, args.nnz, args.blocks, folder):
            label = "after every block" if r["every"] else "once per pass"
            print(
                f"  {label:18s} {r['per_pass']:4.0f} checkpoints a pass, {r['each']:.3f} s each: "
                f"{100 * r['share']:.1f} % of a {r['bare']:.1f} s pass"
            )


if __name__ == "__main__":
    main()
