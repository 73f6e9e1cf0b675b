"""A map over threads of this process: the numba kernels release the GIL, so tasks of one pass run side by side.

The threads are the standard library's pool (``concurrent.futures``), started at the first map with more than one
task and kept for the map's life: a pass maps once per block, and joblib's ``Parallel`` costs about 11 ms a call
where the pool's ``map`` costs 0.24 ms (2 threads, measured on this project's machine).
"""

from __future__ import annotations

import weakref
from concurrent.futures import ThreadPoolExecutor


class ThreadMap:
    """``map(function, tasks)``: ``function(task)`` for each task, results in order, on ``threads`` threads (one:
    in the caller's thread). Pickled, it leaves its pool behind and starts one where it lands."""

    def __init__(self, threads: int):
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None

    def map(self, function, tasks) -> list:
        tasks = list(tasks)
        if self.threads == 1 or len(tasks) <= 1:
            return [function(task) for task in tasks]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="blocksvm-engine")
            weakref.finalize(self, self._pool.shutdown, wait=False)  # the threads end with the map
        return list(self._pool.map(function, tasks))

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_pool": None}
