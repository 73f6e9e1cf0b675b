"""The schedule: which block comes when, and the seeds of each visit.

Every random choice is a function of ``(seed, outer, block)``, so a run resumed from a checkpoint
takes exactly the path of an uninterrupted one.
"""

from __future__ import annotations

import numpy as np


def block_order(seed: int, outer: int, n_blocks: int, shuffle: bool = True) -> np.ndarray:
    """The order of the blocks in outer iteration ``outer``: random, or the store's (``shuffle=False``)."""
    if not shuffle:
        return np.arange(n_blocks)
    return np.random.default_rng([seed, outer]).permutation(n_blocks)


def kernel_seeds(seed: int, outer: int, block: int, n_problems: int, shuffle: bool = True) -> np.ndarray:
    """Seeds of the row permutations of each problem on ``block`` in iteration ``outer``.

    Without ``shuffle`` every seed is -1: the kernels then visit rows in stored order.
    """
    if not shuffle:
        return np.full(n_problems, -1, np.int64)
    return np.random.SeedSequence([seed, outer, block]).generate_state(n_problems, np.uint64) >> np.uint64(1)


def remaining_blocks(seed: int, outer: int, position: int, n_blocks: int, shuffle: bool = True) -> np.ndarray:
    """The blocks of iteration ``outer`` still to visit after the first ``position``."""
    return block_order(seed, outer, n_blocks, shuffle)[position:]
