"""The one block-pass driver: every path that trains a learner makes its passes here.

::

    for (key, rows) in blocks:                     (a store's blocks, a shard's, a stream's pieces, an array)
        seeds = schedule.seeds(key, n_problems)    (functions of (seed, outer, block): resumable)
        report = learner.visit(rows, seeds)        (all arithmetic on rows: the learner's)
        sums.add(report)                           (loss, correct rows, updates, seconds: the pass's record)
        after(rows, report)                        (the caller's: progress, checkpoints, stop rules)

The trainer's passes (:mod:`.loop`), a CoCoA+ shard's round (:mod:`.parallel`), the stream
(:mod:`blocksvm.stream`) and ``OnlineClassifier.partial_fit`` differ only in the blocks they give, the
schedule and what they do after a visit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from blocksvm.rows import Rows
from blocksvm.train.records import PassSums


def run_pass(
    blocks: Iterable[tuple[int, Rows]],
    learner,
    schedule,
    sums: PassSums,
    after: Callable[[Rows, object], bool] | None = None,
) -> bool:
    """Visit every block of ``blocks`` with ``learner``, adding each visit to ``sums``.

    Parameters
    ----------
    blocks : iterable of (key, rows)
        ``key`` seeds the visit's row orders (a store's block index); ``rows`` are the block's
        (:class:`~blocksvm.rows.Rows`, or a store's :class:`~blocksvm.store.Block`).
    learner
        A solver (:class:`~blocksvm.solvers.Solver`) or :class:`~blocksvm.solvers.growing.GrowingLearner`:
        ``visit(rows, seeds)``, ``n_problems``, ``combine``.
    schedule
        ``seeds(key, n_problems)``: a :class:`~blocksvm.train.schedule.Schedule` or ``DrawnSeeds``.
    sums : PassSums
        The pass's sums so far (a resumed pass continues its own).
    after : callable, optional
        ``after(rows, report)`` after each visit; True stops the pass.

    Returns
    -------
    bool
        True if every block was visited, False if ``after`` stopped the pass.
    """
    for key, rows in blocks:
        seeds = schedule.seeds(key, learner.n_problems)
        start = time.perf_counter()
        report = learner.visit(rows, seeds)
        sums.add(report, rows.n_rows, time.perf_counter() - start, learner.combine)
        if after is not None and after(rows, report):
            return False
    return True


def store_blocks(store, order, *, prefetch: int, stats) -> Iterable[tuple[int, Rows]]:
    """``(block index, block)`` of ``store`` (a :class:`~blocksvm.store.BlockStore`) in ``order``."""
    for block in store.iter_blocks(order, prefetch=prefetch, stats=stats):
        yield block.index, block
