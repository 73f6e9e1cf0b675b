"""Row blocks kept in memory across passes, within a budget: the store's blocks as a learner's passes read them."""

from __future__ import annotations

import numpy as np

from blocksvm.store.readahead import ReadStats


class KeptBlocks:
    """Blocks kept in memory after their first read when all of them fit in the budget (the later passes then read
    nothing), else read again at every pass.

    Parameters
    ----------
    store : BlockStore
        Whose blocks (for the estimate of their size in memory).
    rows : int
        Rows of the blocks to keep (a shard's, or the store's).
    budget : float
        Bytes.
    """

    def __init__(self, store, rows: int, budget: float):
        per_row = store.nnz / max(store.n_rows, 1) * (4 + np.dtype(store.dtype).itemsize) + 32
        self.bytes = rows * per_row
        self.budget = budget
        self.fits = self.bytes <= budget
        self.blocks: dict[int, object] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "blocks": {}}  # a shard shipped to a worker reads its blocks there

    def iter(self, store, order, prefetch: int, stats: ReadStats):
        """``(index, block)`` of ``store`` in ``order``: the kept ones from memory, the others read (and kept if
        they fit)."""
        order = [int(b) for b in order]
        missing = iter(store.iter_blocks([b for b in order if b not in self.blocks], prefetch=prefetch, stats=stats))
        for b in order:
            block = self.blocks.get(b)
            if block is None:
                block = next(missing)
                if self.fits:
                    self.blocks[b] = block
            yield b, block
