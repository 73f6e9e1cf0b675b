"""The schedule: which block comes when, and the seeds of each visit.

Every random choice is a function of ``(seed, outer, block)``, so a run resumed from a checkpoint
takes exactly the path of an uninterrupted one.
"""

from __future__ import annotations

import numpy as np


def block_order(seed: int, outer: int, n_blocks: int) -> np.ndarray:
    """The random order of the blocks in outer iteration ``outer``."""
    return np.random.default_rng([seed, outer]).permutation(n_blocks)


def kernel_seeds(seed: int, outer: int, block: int, n_problems: int) -> np.ndarray:
    """Seeds of the row permutations of each problem on ``block`` in iteration ``outer``."""
    return np.random.SeedSequence([seed, outer, block]).generate_state(n_problems, np.uint64) >> np.uint64(1)


def remaining_blocks(seed: int, outer: int, position: int, n_blocks: int) -> np.ndarray:
    """The blocks of iteration ``outer`` still to visit after the first ``position``."""
    return block_order(seed, outer, n_blocks)[position:]
