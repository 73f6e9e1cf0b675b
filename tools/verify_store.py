#!/usr/bin/env python
"""Check, in bounded memory, that a block store holds exactly the rows of its LIBSVM text file.

For each block in turn, the source lines of its rows (the store's ``lines``) are cut out of the
memory-mapped text, parsed by blocksvm's tokenizer, and compared exactly with the block: labels,
row lengths, feature indices and values. The first ``--sklearn-blocks`` blocks are also compared
with ``sklearn.datasets.load_svmlight_file`` on the same lines, an independent parser. Finally every
line of the file must be either a row of exactly one block or a line without data.

Memory: one block, its lines of text, and 9 bytes per line of the file.

    python tools/verify_store.py data.txt data.bsvm
"""

from __future__ import annotations

import argparse
import io
import mmap
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

from blocksvm.io.libsvm import parse_chunk
from blocksvm.store import Block, BlockStore


def line_starts(path: Path, chunk_bytes: int = 64 << 20) -> np.ndarray:
    """Byte offset of every line, plus the file size: line ``l`` (1-based) is
    ``[starts[l - 1], starts[l])``."""
    pieces, base = [np.zeros(1, np.int64)], 0
    with open(path, "rb") as f:
        while data := f.read(chunk_bytes):
            newlines = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
            pieces.append(newlines.astype(np.int64) + base + 1)
            base += len(data)
    starts = np.concatenate(pieces)
    if starts[-1] != base:  # a last line without newline
        starts = np.append(starts, base)
    return starts


def block_text(text: mmap.mmap, starts: np.ndarray, lines: np.ndarray) -> bytes:
    return b"".join(text[starts[line - 1] : starts[line]] for line in lines.tolist())


def compare(block, store: BlockStore, text: bytes, use_sklearn: bool) -> list[str]:
    """Differences between a block (rows sorted by line) and the parse of its lines' text."""
    parsed = parse_chunk(text, 1, dtype=store.dtype)
    problems = []
    if parsed.n_rows != block.n_rows:
        return [f"{parsed.n_rows} rows in the text, {block.n_rows} in the block"]
    checks = {
        "labels": (parsed.labels, block.labels),
        "row lengths": (np.diff(parsed.indptr), np.diff(block.indptr)),
        "indices": (parsed.indices - store.index_base, block.indices),
        "values": (parsed.data, block.data),
    }
    for name, (expected, got) in checks.items():
        if not np.array_equal(expected, got):
            problems.append(f"{name} differ")
    if use_sklearn:
        X, y = load_svmlight_file(
            io.BytesIO(text), n_features=store.n_features, zero_based=store.index_base == 0, dtype=store.dtype
        )
        if (X != block.to_csr(store.n_features)).nnz or not np.array_equal(y, block.labels):
            problems.append("scikit-learn reads the lines differently")
    return problems


def verify(text_path: Path, store_path: Path, sklearn_blocks: int = 1) -> list[str]:
    store = BlockStore(store_path)
    starts = line_starts(text_path)
    n_lines = len(starts) - 1
    seen = np.zeros(n_lines + 1, np.uint8)
    problems = []
    with open(text_path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as text:
        for b in range(store.n_blocks):
            block = store.read_block(b)
            order = np.argsort(block.lines, kind="stable")
            rows = _sorted_rows(block, order)
            if rows.lines.min() < 1 or rows.lines.max() > n_lines:
                problems.append(f"block {b}: line numbers outside the file")
                continue
            seen[rows.lines] += 1
            found = compare(rows, store, block_text(text, starts, rows.lines), b < sklearn_blocks)
            problems += [f"block {b}: {p}" for p in found]
        if (seen > 1).any():
            problems.append(f"{int((seen > 1).sum())} lines appear in more than one row")
        unseen = np.flatnonzero(seen[1:] == 0) + 1
        for piece in np.array_split(unseen, max(1, len(unseen) // 100_000)):
            if len(piece) and parse_chunk(block_text(text, starts, piece), 1, skip_bad_lines=True).n_rows:
                problems.append("some lines with data are in no block")
                break
    skipped = store.info()["skipped_lines"]
    print(
        f"{store.n_rows:,} rows in {store.n_blocks} blocks checked against {n_lines:,} lines "
        f"of text ({len(unseen):,} without data or skipped; the store counts {skipped:,} "
        "skipped)"
    )
    return problems


def _sorted_rows(block: Block, order: np.ndarray) -> Block:
    """The block with its rows in ``order``."""
    rows = block.take(order)
    return Block(
        rows.indptr, rows.indices, rows.data, rows.labels, rows.lines, index=block.index, row_offset=block.row_offset
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("text", type=Path, help="the LIBSVM file (uncompressed)")
    p.add_argument("store", type=Path, help="the store converted from it")
    p.add_argument("--sklearn-blocks", type=int, default=1, help="blocks also compared with scikit-learn (default 1)")
    args = p.parse_args(argv)
    start = time.perf_counter()
    problems = verify(args.text, args.store, args.sklearn_blocks)
    for problem in problems:
        print(f"  - {problem}")
    verdict = "FAILED" if problems else "exact: every row matches"
    print(f"read-back check: {verdict} ({time.perf_counter() - start:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
