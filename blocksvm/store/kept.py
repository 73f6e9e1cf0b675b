"""Row blocks kept in memory across passes, within a budget: the store's blocks as a learner's passes read them.

The blocks a run keeps are planned when it starts: walking the first pass's order, each block that still fits in
the budget is kept (:class:`KeptBlocks`). A planned block is copied, when first read, into buffers that hold every
kept row in that order, one CSR matrix (a learner that sweeps all its resident rows in one random order reads them
there: :meth:`KeptBlocks.resident`); a pass asks for its blocks in its order (:meth:`KeptBlocks.iter`), the kept ones
come from memory, the others are read ahead of the learner on the store's threads. More memory keeps more blocks,
and a pass reads what does not fit, never more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blocksvm.store.readahead import ReadStats


def block_bytes(store, rows: int, nnz: int) -> float:
    """Bytes a block of ``rows`` rows and ``nnz`` entries of ``store`` takes in memory, kept (its row pointers,
    indices, values, labels, instance weights and row ids; not its line numbers, which training does not read)."""
    per_row = 24 + (8 if getattr(store, "weighted", False) else 0)
    return rows * per_row + nnz * (4 + np.dtype(store.dtype).itemsize) + 8


@dataclass
class Resident:
    """The rows kept, as one CSR matrix (``indptr`` over all of them), in the plan's order; ``ids``: each row's
    position in the store; ``weights``: None without instance weights."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    labels: np.ndarray
    weights: np.ndarray | None
    ids: np.ndarray

    @property
    def n_rows(self) -> int:
        return len(self.ids)


class KeptBlocks:
    """The blocks of a run kept in memory after their first read, as many as fit in ``budget`` bytes.

    Parameters
    ----------
    store : BlockStore
        Whose blocks (a shard's view reads them through its store: ``order`` then names them).
    order : array of int
        The blocks the passes read, in the first pass's order: the plan keeps, in this order, each block that still
        fits.
    budget : float
        Bytes.
    row_bytes : float
        What the learner keeps of each row kept, besides the block (dual CD: the row's target and 1 / Qbar_ii).

    Attributes
    ----------
    bytes : float
        Bytes all of ``order`` would take kept.
    fits : bool
        All of them fit: the passes after the first read nothing.
    """

    def __init__(self, store, order, budget: float, row_bytes: float = 0.0):
        entries = store.blocks
        self.budget = max(float(budget), 0.0)
        self.weighted = bool(getattr(store, "weighted", False))
        self.dtype = np.dtype(store.dtype)
        # (a block kept also costs its learner's arrays of the rows it keeps: ``row_bytes`` a row)
        sizes = {int(b): block_bytes(store, entries[b]["rows"], entries[b]["nnz"]) for b in order}
        self.sizes = {b: size + row_bytes * entries[b]["rows"] for b, size in sizes.items()}
        self.bytes = sum(self.sizes.values())
        self.plan: dict[int, tuple[int, int]] = {}  # a planned block's first row and first entry in the buffers
        used, rows, nnz = 0.0, 0, 0
        for b in map(int, order):
            if used + self.sizes[b] <= self.budget:
                self.plan[b] = (rows, nnz)
                used, rows, nnz = used + self.sizes[b], rows + entries[b]["rows"], nnz + entries[b]["nnz"]
        self.fits = len(self.plan) == len(self.sizes)
        self.capacity = (rows, nnz)
        self.kept: dict[int, tuple[int, int]] = {}  # a block read and kept: (its rows, its row offset)
        self._buffers: dict[str, np.ndarray] | None = None

    def summary(self) -> dict:
        """What the plan keeps in memory, for a run's summary: blocks, of how many, and their decoded megabytes."""
        kept = sum(self.sizes[b] for b in self.plan)
        return {"kept_blocks": len(self.plan), "blocks": len(self.sizes), "kept_mb": round(kept / 1e6, 1)}

    def __getstate__(self) -> dict:  # a shard shipped to a worker reads its blocks there
        return {**self.__dict__, "kept": {}, "_buffers": None}

    @property
    def n_kept(self) -> int:
        return len(self.kept)

    def holds(self, b: int) -> bool:
        """Block ``b`` is in memory."""
        return int(b) in self.kept

    def iter(self, store, order, prefetch: int, stats: ReadStats):
        """``(index, block)`` of ``store`` in ``order``: the kept ones from memory, the others read (ahead, by
        ``prefetch`` threads), a planned one kept as it comes."""
        order = [int(b) for b in order]
        read = [b for b in order if b not in self.kept]  # (decided now: the reads ahead are these, in this order)
        missing = iter(store.iter_blocks(read, prefetch=prefetch, stats=stats))
        read = set(read)
        for b in order:
            if b not in read:
                yield b, self.block(b)
                continue
            block = next(missing)  # (read ahead even where the plan was completed since: a resumed run's first visit)
            if b in self.plan and b not in self.kept:
                self._keep(block)
            yield b, self.block(b) if b in self.kept else block

    def complete(self, store, prefetch: int, stats: ReadStats) -> None:
        """Read the planned blocks not in memory yet (a run resumed after its first pass), in the plan's order."""
        for _ in self.iter(store, [b for b in self.plan if b not in self.kept], prefetch, stats):
            pass

    def block(self, b: int):
        """Kept block ``b``: views of the buffers (its row pointers made anew, from 0)."""
        from blocksvm.store.reader import Block  # (the reader's type; the reader does not need this module)

        first, lo = self.plan[b]
        rows, offset = self.kept[b]
        f = self._buffers
        hi = f["indptr"][first + rows]
        weights = f["weights"][first : first + rows] if self.weighted else None
        return Block(
            f["indptr"][first : first + rows + 1] - lo,
            f["indices"][lo:hi],
            f["data"][lo:hi],
            f["labels"][first : first + rows],
            None,
            weights,
            index=b,
            row_offset=offset,
        )

    @property
    def complete_plan(self) -> bool:
        """Every planned block is in memory."""
        return len(self.kept) == len(self.plan)

    def resident(self) -> Resident:
        """Every planned row, one CSR matrix in the plan's order (views of the buffers): once the plan is complete
        (:meth:`complete`)."""
        if not self.plan:
            return Resident(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, self.dtype), np.zeros(0),
                            np.zeros(0) if self.weighted else None, np.zeros(0, np.int64))  # fmt: skip
        assert self.complete_plan, "the plan's blocks are read first"
        f = self._buffers
        return Resident(f["indptr"], f["indices"], f["data"], f["labels"], f.get("weights"), f["ids"])

    def _keep(self, block) -> None:
        """Copy planned ``block`` into the buffers, at its place in the plan's order (the buffers are made at the
        first, as large as the plan): the layout is the plan's, whatever order the blocks are read in."""
        if self._buffers is None:
            rows, nnz = self.capacity
            self._buffers = {
                "indptr": np.zeros(rows + 1, np.int64),
                "indices": np.empty(nnz, np.int32),
                "data": np.empty(nnz, self.dtype),
                "labels": np.empty(rows),
                "ids": np.empty(rows, np.int64),
                **({"weights": np.empty(rows)} if self.weighted else {}),
            }
        f, (first, lo), n = self._buffers, self.plan[block.index], block.n_rows
        f["indptr"][first : first + n + 1] = block.indptr + lo
        f["indices"][lo : lo + block.nnz] = block.indices
        f["data"][lo : lo + block.nnz] = block.data
        f["labels"][first : first + n] = block.labels
        f["ids"][first : first + n] = np.arange(block.row_offset, block.row_offset + n)
        if self.weighted:
            f["weights"][first : first + n] = block.weights
        self.kept[block.index] = (n, block.row_offset)
