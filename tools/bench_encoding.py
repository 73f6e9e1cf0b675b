"""Block encodings side by side: size on disk, write and read+decode speed, time per training pass.

The same generated webspam-like blocks are written with every compression (and float32 vs
float64 values), then each store is read back block by block (read + decompress + checks, as the
trainer reads) and trained for a few outer iterations. Page cache: each store is read once before
timing, so the figures are decode-bound, the case where encoding matters most (from a cold disk,
smaller files win by their size ratio).

    python tools/bench_encoding.py [--rows 400000] [--features 1000000] [--nnz 80] [--out DIR]   # docs/FORMAT.md
    python tools/bench_encoding.py --quick         # test the script: 20,000 rows
"""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import numpy as np
from harness import OUT, data, report, run

from blocksvm.datasets import generate_rows
from blocksvm.store import BlockStore, StoreBuilder, write_block
from blocksvm.train import train

ENCODINGS = ["none", "lzf", "gzip-1", "gzip-4", "zstd-1", "zstd-3", "blosc-lz4"]


def write_store(path: Path, blocks: list, compression: str, features: int) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with StoreBuilder(path) as builder:
        entries = [
            write_block(builder.block_path(i), b, index=i, compression=compression, store_id=builder.store_id)
            for i, b in enumerate(blocks)
        ]
        labels, counts = np.unique(np.concatenate([b.labels for b in blocks]), return_counts=True)
        builder.commit(
            features=features,
            index_base=0,
            dtype=blocks[0].data.dtype,
            label_counts=dict(zip(labels.tolist(), counts.tolist())),
            blocks=entries,
            source={"generator": "bench_encoding"},
            params={"compression": compression, "shuffle": False, "seed": 0},
        )


def read_all(path: Path) -> None:
    store = BlockStore(path)
    for b in range(store.n_blocks):
        store.read_block(b)


def main() -> None:
    parser = run.parser(__doc__, full=True)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--features", type=int, default=1_000_000)
    parser.add_argument("--nnz", type=int, default=80)
    parser.add_argument("--block-rows", type=int, default=50_000)
    parser.add_argument("--passes", type=int, default=3, help="outer iterations timed per store")
    parser.add_argument("--out", type=Path, default=OUT / "encoding")
    run.add_quick(parser)
    args = run.quick(parser, parser.parse_args(), rows=20_000, features=100_000, block_rows=5_000, passes=2)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    print(report.machine())
    spec = data.spec(args.rows, args.features, args.nnz, seed=1)
    w_true = spec.hidden_weights()
    blocks32 = [
        generate_rows(spec, start, min(args.block_rows, args.rows - start), "float32", w_true)
        for start in range(0, args.rows, args.block_rows)
    ]
    raw_mb = (
        sum(b.indptr.nbytes + b.indices.nbytes + b.data.nbytes + b.labels.nbytes + b.lines.nbytes for b in blocks32)
        / 1e6
    )
    print(
        f"{args.rows:,} rows x {args.features:,} features, {args.nnz} nnz a row, {len(blocks32)} blocks, "
        f"{raw_mb:,.0f} MB in memory (float32)\n"
    )
    rows = []
    cases = [(e, "float32") for e in ENCODINGS] + [("blosc-lz4", "float64"), ("none", "float64")]
    for encoding, dtype in cases:
        blocks = (
            blocks32
            if dtype == "float32"
            else [type(b)(b.indptr, b.indices, b.data.astype(np.float64), b.labels, b.lines) for b in blocks32]
        )
        mb = (
            sum(b.indptr.nbytes + b.indices.nbytes + b.data.nbytes + b.labels.nbytes + b.lines.nbytes for b in blocks)
            / 1e6
        )
        path = out / f"{encoding}-{dtype}.bsvm"
        write_seconds, _ = run.timed(partial(write_store, path, blocks, encoding, args.features))
        disk_mb = sum(f.stat().st_size for f in path.glob("block-*.h5")) / 1e6
        read_all(path)  # warm the page cache
        read_seconds = min(run.timed(partial(read_all, path))[0] for _ in range(3))
        train(path, max_outer=1, tol=0, verbose=0)  # compiles the kernels for this value type
        result = train(path, max_outer=args.passes, tol=0, verbose=0, prefetch=1)
        pass_seconds = np.median([r["compute_seconds"] + r["wait_seconds"] for r in result.history])
        rows.append([encoding, dtype, f"{disk_mb:,.0f}", f"{mb / disk_mb:.2f}", f"{mb / write_seconds:,.0f}",
                     f"{mb / read_seconds:,.0f}", f"{pass_seconds:.2f}"])  # fmt: skip
        print(f"  {encoding}, {dtype}: done", flush=True)
        shutil.rmtree(path)
    header = ["encoding", "values", "MB on disk", "ratio", "write MB/s", "read+decode MB/s", "s per training pass"]
    print("\n" + report.table(header, rows, "llrrrrr"))


if __name__ == "__main__":
    main()
