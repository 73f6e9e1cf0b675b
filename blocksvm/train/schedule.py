"""The schedule: which block comes when, and the seeds of each visit.

Every random choice is a function of ``(seed, outer, block)``, so a run resumed from a checkpoint
takes exactly the path of an uninterrupted one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Schedule:
    """The order of the blocks in outer iteration ``outer`` and the seeds of each visit.

    ``shuffle=False`` (``--order file``, a stream): the blocks in stored order, and every seed -1, with which
    the kernels visit rows in stored order.
    """

    seed: int = 0
    outer: int = 1
    shuffle: bool = True

    def order(self, n_blocks: int, position: int = 0) -> np.ndarray:
        """The blocks of this iteration still to visit after the first ``position``."""
        if not self.shuffle:
            return np.arange(position, n_blocks)
        return np.random.default_rng([self.seed, self.outer]).permutation(n_blocks)[position:]

    def seeds(self, block: int, n_problems: int) -> np.ndarray:
        """Seeds of the row permutations of each problem on ``block``."""
        if not self.shuffle:
            return np.full(n_problems, -1, np.int64)
        state = np.random.SeedSequence([self.seed, self.outer, block]).generate_state(n_problems, np.uint64)
        return state >> np.uint64(1)


FILE_ORDER = Schedule(shuffle=False)


class DrawnSeeds:
    """Seeds drawn from ``rng`` (a ``numpy.random.RandomState``) at every visit: ``partial_fit``, whose calls
    have no block index; -1 (file order) when ``shuffle`` is False."""

    def __init__(self, rng, shuffle: bool = True):
        self.rng, self.shuffle = rng, shuffle

    def seeds(self, block: int, n_problems: int) -> np.ndarray:
        if not self.shuffle:
            return np.full(n_problems, -1, np.int64)
        return self.rng.randint(0, np.iinfo(np.int32).max, size=n_problems).astype(np.int64)
