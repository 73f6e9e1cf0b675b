#!/usr/bin/env python
"""Dual CD where the budget keeps under a tenth of the rows: passes and seconds to a 1e-3 gap of the streamed blocks
swept in pairs (the default there), of the older visits (``--inner-passes 5``: five sweeps of a block beside a cache),
of the blocks swept alone (the pairing turned off in this process: what the pairs replace) and of every row kept.

Each run trains in this process (the page cache warm), under the plan's minimum plus 1.3 blocks (none kept: the
pairs' budget) or 4,000 MB (every row kept).

    python tools/bench_pairs.py ../shared/data/a9a ../shared/data/w8a --blocks 20
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

from gap_share import budget_for  # noqa: E402

from blocksvm.io.conversion import convert  # noqa: E402
from blocksvm.solvers import resident  # noqa: E402
from blocksvm.store import BlockStore  # noqa: E402
from blocksvm.train import train  # noqa: E402


def run(store: Path, memory_mb: float, max_outer: int, loss: str, paired: bool = True, **params) -> dict:
    original = resident.ResidentRows.start_resident

    def start(self, *args):
        original(self, *args)
        self.paired = self.paired and paired

    resident.ResidentRows.start_resident = start
    try:
        began = time.perf_counter()
        result = train(store, tol=1e-3, loss=loss, verbose=0, memory_mb=memory_mb, max_outer=max_outer, **params)
        seconds = time.perf_counter() - began
    finally:
        resident.ResidentRows.start_resident = original
    last = result.history[-1]
    return {"passes": len(result.history), "seconds": seconds, "gap": last["gap"], "primal": last["primal"]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", nargs="+", type=Path, help="LIBSVM files or stores")
    p.add_argument("--blocks", type=int, default=20, help="blocks of a LIBSVM file's store")
    p.add_argument("--max-outer", type=int, default=1000)
    p.add_argument("--losses", nargs="+", default=["squared-hinge", "hinge"])
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench_pairs-"))
    print("| store (blocks) | loss | every row kept | pairs | older visits | blocks alone |")
    print("|---|---|---:|---:|---:|---:|")
    for data in args.data:
        store = data
        if not (data / "manifest.json").exists():
            rows = sum(1 for _ in open(data))
            store = folder / f"{data.name}.bsvm"
            convert(data, store, block_rows=-(-rows // args.blocks), progress=False)
        opened = BlockStore(store)
        pairs_mb = budget_for(opened, 1.3 / opened.n_blocks) + 0.01
        for loss in args.losses:
            runs = [
                run(store, 4000, args.max_outer, loss),
                run(store, pairs_mb, args.max_outer, loss),
                run(store, pairs_mb, args.max_outer, loss, inner_passes=5),
                run(store, pairs_mb, args.max_outer, loss, paired=False),
            ]
            cells = [
                f"{r['passes']:,} ({r['seconds']:.1f} s)" + (f", gap {r['gap']:.1e}" if r["gap"] > 1e-3 else "")
                for r in runs
            ]
            print(f"| {data.name} ({opened.n_blocks}) | {loss} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
