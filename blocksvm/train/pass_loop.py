"""The one block-pass driver: every path that trains a learner makes its passes here.

::

    for (key, rows) in blocks:                     (a store's blocks, a shard's, a stream's pieces, an array)
        seeds = schedule.seeds(key, n_problems)    (functions of (seed, outer, block): resumable)
        report = learner.visit(rows, seeds)        (all arithmetic on rows: the learner's)
        sums.add(report)                           (loss, correct rows, updates, seconds, weight: the pass's record)
        after(rows, report)                        (the caller's: progress, checkpoints, stop rules)

The trainer's passes (:mod:`.loop`), the search of C (:mod:`.tune`), a shard's round (:mod:`.engines`), the
stream (:mod:`blocksvm.stream`) and ``OnlineClassifier.partial_fit`` differ only in the blocks they give, the
schedule and what they do after a visit; what train, tune and the stream do after a visit (count the position,
move the progress bar, checkpoint when due, stop on a signal or the time limit) is :class:`PassRun`, written
once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from blocksvm._interrupt import StoppedWhileWaiting
from blocksvm._progress import progress_bar
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
        weight = None if rows.weights is None else float(rows.weights.sum())
        sums.add(report, rows.n_rows, time.perf_counter() - start, learner.combine, weight)
        if after is not None and after(rows, report):
            return False
    return True


@dataclass
class PassRun:
    """One pass, or the rest of one, as train, tune and the stream run it: :func:`run_pass` with what each of them
    does after a visit.

    Attributes
    ----------
    state
        Where the run stands: ``position`` (blocks of the pass done, or rows with ``by_rows``), ``sums`` (the
        pass's :class:`PassSums`), and ``blocks_visited`` if it counts them.
    params
        The run's TrainParams (the passes' makers read ``seed``, ``order``, ``prefetch``).
    stop
        The :class:`~blocksvm.train.signals.StopRequest` of the run: set, the pass stops after the block.
    total : int, optional
        The pass's blocks: a progress bar over them, and checkpoints told when the pass ends.
    label : str
        The progress bar's.
    progress : bool or None
        Show the bar (None: when standard error is a terminal).
    checkpoint : callable, optional
        ``checkpoint(at_pass_end)`` after each visit: writes one if due.
    out_of_time : callable, optional
        True when the run's time is up: the pass stops after the block.
    by_rows : bool
        ``position`` counts rows, not blocks (the stream).
    on_block : callable, optional
        ``on_block(rows)`` after each visit, before the checkpoint (the stream's progressive table).
    """

    state: object
    params: object
    stop: object
    total: int | None = None
    label: str = ""
    progress: bool | None = None
    checkpoint: Callable[[bool], None] | None = None
    out_of_time: Callable[[], bool] | None = None
    by_rows: bool = False
    on_block: Callable[[Rows], None] | None = None

    def run(self, blocks: Iterable[tuple[int, Rows]], learner, schedule) -> bool:
        """:func:`run_pass` over ``blocks`` from ``state.position``; True if the pass got to its end."""
        st = self.state
        shown = self.progress if self.total else False
        bar = progress_bar(self.total, self.label, unit="block", enabled=shown, leave=False)
        bar.update(st.position if self.total else 0)
        history = getattr(st, "history", None)
        if history:  # the last pass's figures, while this one runs
            last = history[-1]
            gap = f" gap {last['gap']:.1e}" if last.get("gap") else ""
            bar.set_postfix_str(f"primal {last['primal']:.4e}{gap}")

        def after(rows, report) -> bool:
            self.advance(rows.n_rows if self.by_rows else 1)
            bar.update()
            if self.on_block is not None:
                self.on_block(rows)
            if self.checkpoint is not None:
                self.checkpoint(self.total is not None and st.position == self.total)
            return bool(self.stop) or (self.out_of_time is not None and self.out_of_time())

        try:
            completed = run_pass(blocks, learner, schedule, st.sums, after)
        except StoppedWhileWaiting:  # the stop came while a block was awaited: the pass stops where it stands
            completed = False
        finally:
            if hasattr(blocks, "close"):
                blocks.close()
            bar.close()
        return completed or (self.total is not None and st.position == self.total and not self.stop)

    def advance(self, count: int) -> None:
        """Count ``count`` blocks (or rows) done, also when a whole pass was made elsewhere (shards' rounds)."""
        self.state.position += count
        if hasattr(self.state, "blocks_visited") and not self.by_rows:
            self.state.blocks_visited += count
