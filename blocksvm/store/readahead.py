"""Reading blocks ahead of their consumer: the next few read at once on threads while the caller works on the
current one (the row blocks of :class:`~blocksvm.store.BlockStore` and the column layout's blocks alike).

The consumer waits for a block in short steps: a stop request (a signal, while a run defers it to the next block)
ends the wait, and a read that takes longer than ``BLOCKSVM_READ_STALL_SECONDS`` fails naming the block. A read
given up on is never waited for: its thread is left to end on its own (:func:`reads_still_running` says whether one
has not, so that the command exits without it).
"""

from __future__ import annotations

import itertools
import os
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from blocksvm._interrupt import StoppedWhileWaiting, sigint_held, stop_requested
from blocksvm.errors import StoreError


@dataclass
class ReadStats:
    """Seconds spent reading blocks (each block's read, from its first byte to its checks: with several blocks in
    flight these overlap, and their sum may exceed the time that passed), and seconds the consumer waited for
    them."""

    read_seconds: float = 0.0
    wait_seconds: float = 0.0
    bytes_read: int = 0
    blocks_read: int = 0
    per_block: list = field(default_factory=list)
    parts: dict = field(default_factory=dict)  # the reads' seconds by part (a Block's ``timing``), added

    def add_parts(self, timing: dict | None) -> None:
        for part, seconds in (timing or {}).items():
            self.parts[part] = self.parts.get(part, 0.0) + seconds


def read_in_order(
    order: list[int], read, entries: list[dict], prefetch: int, stats: ReadStats | None, where=None
) -> Iterator:
    """``read(b)`` for each ``b`` in ``order``, read ``prefetch`` ahead as :meth:`BlockStore.iter_blocks` says (the
    column layout's blocks too); ``entries[b]["bytes"]`` are counted in ``stats`` as read; ``where(b)`` names block
    ``b`` in the line of a read that stalls (default: its entry's file)."""
    where = where or (lambda b: f"block {b} ({entries[b].get('file', '?')})")
    stats = stats if stats is not None else ReadStats()

    def timed_read(b: int) -> tuple[object, float]:
        start = time.perf_counter()
        block = read(b)
        return block, time.perf_counter() - start

    def count(b: int, seconds: float, block) -> None:  # in the caller's thread: no two threads add at once
        stats.read_seconds += seconds
        stats.bytes_read += entries[b]["bytes"]
        stats.blocks_read += 1
        stats.add_parts(getattr(block, "timing", None))

    if prefetch <= 0:
        for b in order:
            block, seconds = timed_read(b)
            count(b, seconds, block)
            yield block
        return
    yield from _read_ahead(order, timed_read, prefetch, stats, count, where)


STALL_VARIABLE = "BLOCKSVM_READ_STALL_SECONDS"
DEFAULT_STALL_SECONDS = 600.0
"""How long a block's read may take before the run fails naming the block (``BLOCKSVM_READ_STALL_SECONDS`` sets
another bound): a read of a healthy block takes a second or less, and one that takes minutes hangs on its disk (a
network file system that stopped answering)."""
_POLL_SECONDS = 0.05  # how often a wait for a read looks for a stop request
_abandoned: list = []  # reads given up on (a stop, a stall) that may still be running


def stall_seconds() -> float:
    """The bound on a block's read: ``BLOCKSVM_READ_STALL_SECONDS``, or :data:`DEFAULT_STALL_SECONDS`."""
    try:
        seconds = float(os.environ.get(STALL_VARIABLE, DEFAULT_STALL_SECONDS))
    except ValueError:
        return DEFAULT_STALL_SECONDS
    return seconds if seconds > 0 else DEFAULT_STALL_SECONDS


def reads_still_running() -> int:
    """Reads this process gave up waiting for that have not ended (their threads would hold up its exit)."""
    _abandoned[:] = [future for future in _abandoned if not future.done()]
    return len(_abandoned)


def _awaited(future, where: str):
    """The result of a block's read ``future``, waited for in short steps: a stop request ends the wait, and so does
    a read that takes longer than :func:`stall_seconds`."""
    start, bound = time.monotonic(), stall_seconds()
    while True:
        # wait, not result(timeout=...): a read that ended just after that timeout passed for one that raised the
        # TimeoutError itself (done by the time it was asked), a failure on a loaded machine; result() raises its own
        if wait((future,), timeout=_POLL_SECONDS).done:
            return future.result()
        signal_name = stop_requested()
        if signal_name is not None:
            raise StoppedWhileWaiting(signal_name, where) from None
        if time.monotonic() - start >= bound:
            raise StoreError(
                f"{where} was not read in {bound:g} s: its file or the disk under it does not answer (a network file "
                f"system that stopped?); no model or predictions were written ({STALL_VARIABLE} sets how long a read "
                "may take)"
            ) from None


def _read_ahead(order: list[int], read, depth: int, stats: ReadStats, count, where) -> Iterator:
    """Yield the blocks ``read(b)`` returns for ``b`` in ``order`` while up to ``depth`` of the next ones are read
    at once, on threads of a pool.

    A block's read starts once the consumer has taken the block ``depth`` places before it, so at most ``depth``
    blocks are read ahead of the one the consumer holds. A read that fails fails the consumer with its block's
    error; one that stalls (or a stop requested meanwhile) ends the wait (:func:`_awaited`: ``where(b)`` names the
    block), and the reads still running are left to end on their own, never waited for.
    """
    if not order:
        return
    pool = ThreadPoolExecutor(min(depth, len(order)), thread_name_prefix="blocksvm-prefetch")
    upcoming, pending = iter(order), deque()
    try:
        with sigint_held():  # a Ctrl-C inside submit would leave a started thread that nobody waits for
            pending.extend((b, pool.submit(read, b)) for b in itertools.islice(upcoming, depth))
        while pending:
            b, future = pending[0]
            start = time.perf_counter()
            block, seconds = _awaited(future, where(b))
            pending.popleft()
            stats.wait_seconds += time.perf_counter() - start
            count(b, seconds, block)
            with sigint_held():
                pending.extend((b, pool.submit(read, b)) for b in itertools.islice(upcoming, 1))
            yield block
            del block
    finally:
        for _, future in pending:
            if not future.cancel():
                _abandoned.append(future)
        pool.shutdown(wait=False)
