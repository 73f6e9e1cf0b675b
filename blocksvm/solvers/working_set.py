"""The rows a dual block learner solves beside each visited block (``--working-set``), shared by the solvers of
dual CD, Crammer and Singer's multiclass SVM and the one-class SVM.

- ``cache``: a :class:`~blocksvm.solvers.cache.RowCache` of rows with a nonzero dual variable, refilled from each
  block after its visit;
- ``pair``: the block visited just before (its index is state, so a resumed run reads it again and pairs exactly
  the blocks an uninterrupted one did);
- ``block``: none, plain block minimization.
"""

from __future__ import annotations

import numpy as np

from blocksvm.solvers.cache import RowCache


class WorkingSet:
    """A mixin for a :class:`~blocksvm.solvers.base.Solver`: the companion rows of each visit and their state.

    The solver calls :meth:`start_working_set` in ``__init__``, :meth:`companion_of` before solving a block and
    :meth:`remember` after; ``previous`` belongs in its ``state_names``, and the cache's arrays are saved and loaded
    with the solver's (:meth:`state`, :meth:`load_state`).
    """

    def start_working_set(self, params, problem) -> None:
        """No companion yet: ``params.working_set``, and for ``cache`` an empty cache of ``problem``'s rows (with
        their instance weights, if it has some) as large as the memory the engine gave the learner."""
        self.working_set = params.working_set
        self.previous = np.full(1, -1, np.int64)  # "pair": the block visited last (-1: none yet)
        self._previous_block = None  # ... and its rows, once in memory
        self.cache = None
        if self.working_set == "cache":
            self.cache = RowCache(self.resources.memory, problem.dtype, weighted=problem.weighted)

    def companion_of(self, block):
        """The rows solved with ``block``: the cache less the block's own rows (a RowCache), the block visited
        before (its Rows, or None on the first visit or when it is this block), or None."""
        if self.working_set == "cache":  # the block's own rows are solved as the block's
            return self.cache.excluding(block.row_offset, block.row_offset + block.n_rows)
        if self.working_set == "pair":
            return self._previous_of(block)
        return None

    def remember(self, block, companion, alpha: np.ndarray, upper_of, seeds) -> None:
        """After the visit of ``block``: the cache (``companion``, now less ``block``'s rows) refilled from the block
        with the rows whose ``alpha`` is nonzero (bounds by ``upper_of``), or ``block`` kept as the next pair."""
        if self.cache is not None:
            self.cache = companion
            # (file order: seed -1, and the refill's draws from seed 0)
            self.cache.refill(block, alpha, upper_of, np.random.default_rng(max(int(seeds[0]), 0)))
        if self.working_set == "pair":
            self.previous[0], self._previous_block = block.index, block

    def forget_companions(self) -> None:
        """No pair and an empty cache of the same capacity (a cold start)."""
        self.previous[0], self._previous_block = -1, None
        if self.cache is not None:
            self.cache = self.cache.emptied()

    def _previous_of(self, block):
        """The block visited just before ``block`` ("pair"); after a resume it is read again."""
        blocks = self.resources.blocks
        if self.previous[0] < 0 or blocks is None or blocks.n_blocks < 2:
            return None
        if self._previous_block is None or self._previous_block.index != self.previous[0]:
            self._previous_block = blocks.read_block(int(self.previous[0]))
        previous = self._previous_block
        return previous if previous.index != block.index else None

    def state(self) -> dict[str, np.ndarray]:
        arrays = super().state()
        return {**arrays, **self.cache.state()} if self.cache is not None else arrays

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        self._previous_block = None
        if self.cache is not None:
            self.cache.load_state(arrays)
