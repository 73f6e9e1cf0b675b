#!/usr/bin/env python
"""Which rows carry the duality gap, out of core: dual CD at its defaults (squared hinge, C = 1) under a budget that
keeps a share of the rows in memory (a tenth, a third), and after passes 2, 4 and 8:

- the share of the rows that holds 90% (and 50%) of the sum of the per-row gaps, and how many of the next pass's
  90%-rows were already among them (the gap's rows are the same rows from pass to pass: a working set pays);
- the share of that sum on the rows the budget keeps, against their share of the rows;
- where the pass's seconds went (the history's ``seconds``: the sweep, the upkeep, the waits for blocks, the
  evaluation; and the readers' own: open, io, decode).

The per-row gap of the hinge family (Fenchel-Young, ``w = sum_i alpha_i y_i x_i``, margins ``m_i = y_i w.x_i``)::

    gap_i = C l(m_i) + alpha_i (m_i - 1) + D_ii alpha_i^2 / 2  >= 0,   sum_i gap_i = P(w) - D(alpha)

with ``D_ii = 1 / (2 C)`` for the squared hinge (0 for the hinge). The weights and alphas are a checkpoint's after
each pass (the run resumed pass to pass, bit for bit); the margins are read from the store.

    python tools/gap_share.py STORE [STORE ...] --shares 0.1 0.333
    python tools/gap_share.py --generate 2000000 500000 60   # a generated store of those rows, features, nonzeros
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from blocksvm.checkpoint import read_checkpoint  # noqa: E402
from blocksvm.datasets import SyntheticSpec, make_store  # noqa: E402
from blocksvm.decision import decision_values  # noqa: E402
from blocksvm.io import convert  # noqa: E402
from blocksvm.losses import LOSSES  # noqa: E402
from blocksvm.solvers import SOLVERS  # noqa: E402
from blocksvm.store import BlockStore  # noqa: E402
from blocksvm.store.kept import block_bytes  # noqa: E402
from blocksvm.train import train  # noqa: E402
from blocksvm.train.params import settle  # noqa: E402
from blocksvm.train.plan import make_plan  # noqa: E402

PASSES = (2, 4, 8)


def budget_for(store: BlockStore, share: float) -> float:
    """The --memory-mb that keeps about ``share`` of the rows: that share of the decoded blocks, beside what the
    process needs before its data (its memory plan's minimum: blocksvm/train/plan.py)."""
    sizes = [block_bytes(store, b["rows"], b["nnz"]) for b in store.blocks]
    params, _ = settle("train", None, {})
    minimum = make_plan(params, store, SOLVERS["dual-cd"], 1).minimum
    return round((share * sum(sizes) * 1.001 + minimum) / 1e6, 3)


def per_row_gaps(store: BlockStore, W: np.ndarray, alpha: np.ndarray, C: float, loss: str, bias: float):
    """Each row's gap and whether its block is ``kept`` (a set of block indices), in store order."""
    table = LOSSES[loss]
    D = 1.0 / (2.0 * C) if loss == "squared-hinge" else 0.0
    gaps, blocks = [], []
    for b in range(store.n_blocks):
        block = store.read_block(b)
        y = np.where(block.labels == store.classes[-1], 1.0, -1.0)
        m = y * decision_values(block.indptr, block.indices, block.data, W, bias)[:, 0]
        a = alpha[block.row_offset : block.row_offset + block.n_rows]
        gaps.append(C * table.value(m) + a * (m - 1.0) + 0.5 * D * a * a)
        blocks.append(np.full(block.n_rows, b))
    return np.concatenate(gaps), np.concatenate(blocks)


def carriers(gaps: np.ndarray, part: float) -> np.ndarray:
    """The fewest rows whose gaps sum to ``part`` of the total (their indices)."""
    order = np.argsort(-gaps, kind="stable")
    cumulative = np.cumsum(np.maximum(gaps[order], 0.0))
    return order[: int(np.searchsorted(cumulative, part * cumulative[-1])) + 1]


def measure(store_path: Path, share: float, folder: Path) -> list[dict]:
    store = BlockStore(store_path)
    memory = budget_for(store, share)
    checkpoint = folder / f"{store_path.name}-{share:g}.ckpt"
    checkpoint.unlink(missing_ok=True)
    rows, previous, done = [], None, 0
    for passes in PASSES:
        run = {"memory_mb": memory, "max_outer": passes, "tol": 1e-9, "verbose": 0, "checkpoint": checkpoint}
        result = train(store_path, **run, **({"resume": checkpoint} if done else {}))
        done = passes
        saved = read_checkpoint(checkpoint)
        summary, record = result.model.summary, result.history[-1]
        W, alpha = saved.arrays["w"], saved.arrays["alpha"][0]
        gaps, block_of = per_row_gaps(store, W, alpha, 1.0, "squared-hinge", 1.0)
        top = carriers(gaps, 0.9)
        kept_share = summary["kept_blocks"] / summary["blocks"]
        kept = np.isin(block_of, kept_blocks(saved, summary))
        rows.append({
            "store": store_path.name, "budget_share": share, "memory_mb": memory, "pass": passes,
            "kept_rows": float(kept.mean()), "kept_blocks": f"{summary['kept_blocks']}/{summary['blocks']}",
            "gap": record.get("gap"),
            "sum_gaps_over_P_minus_D": float(gaps.sum() / (record["primal"] - record["dual"])),
            "rows_90": len(top) / len(gaps), "rows_50": len(carriers(gaps, 0.5)) / len(gaps),
            "again_90": None if previous is None else float(np.isin(top, previous).mean()),
            "gap_on_kept": float(gaps[kept].sum() / gaps.sum()), "kept_share_plan": kept_share,
            "seconds": record.get("seconds"),
        })  # fmt: skip
        previous = top
        print(json.dumps(rows[-1]), flush=True)
    return rows


def kept_blocks(saved, summary) -> np.ndarray:
    """The blocks the run's budget kept: its plan, made along the first pass's order (the first that fit)."""
    from blocksvm.train.schedule import Schedule

    params = saved.params
    first = Schedule(params["seed"], 1, shuffle=params["order"] == "random").order(summary["blocks"])
    return np.asarray(first[: summary["kept_blocks"]])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stores", nargs="*", type=Path, help="stores, or LIBSVM files (converted into --out)")
    p.add_argument("--generate", nargs=3, type=int, metavar=("ROWS", "FEATURES", "NNZ"))
    p.add_argument("--block-rows", type=int, default=None, help="blocks of a converted or generated store")
    p.add_argument("--shares", nargs="+", type=float, default=[0.1, 1 / 3])
    p.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "gap_share")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    stores = []
    for path in args.stores:
        if path.is_dir():
            stores.append(path)
            continue
        store = args.out / f"{path.name}.bsvm"
        if not store.exists():  # ten blocks at least: a tenth of the rows is a block
            rows = sum(1 for line in open(path) if line.strip())
            convert(path, store, block_rows=args.block_rows or max(rows // 20, 1), progress=False)
        stores.append(store)
    if args.generate:
        rows, features, nnz = args.generate
        store = args.out / f"generated-{rows}-{features}-{nnz}.bsvm"
        if not store.exists():
            spec = SyntheticSpec(rows=rows, features=features, nnz=nnz, seed=7)
            make_store(store, spec, block_rows=args.block_rows or max(rows // 40, 1), progress=True)
        stores.append(store)
    results = [row for store in stores for share in args.shares for row in measure(store, share, args.out)]
    (args.out / "gap_share.json").write_text(json.dumps(results, indent=1))
    head = (
        "| store | budget | kept rows | pass | gap | rows with 90% of the gap | 50% | again (90%) | gap on kept rows |"
    )
    print("\n" + head)
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        again = "" if r["again_90"] is None else f"{100 * r['again_90']:.0f}%"
        print(f"| {r['store']} | {r['memory_mb']:g} MB ({r['budget_share']:.2g}) | {100 * r['kept_rows']:.0f}% | "
              f"{r['pass']} | {r['gap']:.1e} | {100 * r['rows_90']:.1f}% | {100 * r['rows_50']:.1f}% | {again} | "
              f"{100 * r['gap_on_kept']:.0f}% |")  # fmt: skip


if __name__ == "__main__":
    main()
