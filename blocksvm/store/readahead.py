"""Reading blocks ahead of their consumer: the next few read at once on threads while the caller works on the
current one (the row blocks of :class:`~blocksvm.store.BlockStore` and the column layout's blocks alike)."""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from blocksvm._interrupt import sigint_held


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


def read_in_order(order: list[int], read, entries: list[dict], prefetch: int, stats: ReadStats | None) -> Iterator:
    """``read(b)`` for each ``b`` in ``order``, read ``prefetch`` ahead as :meth:`BlockStore.iter_blocks` says (the
    column layout's blocks too); ``entries[b]["bytes"]`` are counted in ``stats`` as read."""
    stats = stats if stats is not None else ReadStats()

    def timed_read(b: int) -> tuple[object, float]:
        start = time.perf_counter()
        block = read(b)
        return block, time.perf_counter() - start

    def count(b: int, seconds: float) -> None:  # in the caller's thread: no two threads add at once
        stats.read_seconds += seconds
        stats.bytes_read += entries[b]["bytes"]
        stats.blocks_read += 1

    if prefetch <= 0:
        for b in order:
            block, seconds = timed_read(b)
            count(b, seconds)
            yield block
        return
    yield from _read_ahead(order, timed_read, prefetch, stats, count)


def _read_ahead(order: list[int], read, depth: int, stats: ReadStats, count) -> Iterator:
    """Yield the blocks ``read(b)`` returns for ``b`` in ``order`` while up to ``depth`` of the next ones are read
    at once, on threads of a pool.

    A block's read starts once the consumer has taken the block ``depth`` places before it, so at most ``depth``
    blocks are read ahead of the one the consumer holds.
    """
    if not order:
        return
    pool = ThreadPoolExecutor(min(depth, len(order)), thread_name_prefix="blocksvm-prefetch")
    upcoming, pending = iter(order), deque()
    try:
        with sigint_held():  # a Ctrl-C inside submit would leave a started thread that nobody waits for
            pending.extend((b, pool.submit(read, b)) for b in itertools.islice(upcoming, depth))
        while pending:
            b, future = pending.popleft()
            start = time.perf_counter()
            block, seconds = future.result()
            stats.wait_seconds += time.perf_counter() - start
            count(b, seconds)
            with sigint_held():
                pending.extend((b, pool.submit(read, b)) for b in itertools.islice(upcoming, 1))
            yield block
            del block
    finally:
        for _, future in pending:
            future.cancel()
        pool.shutdown(wait=True)
