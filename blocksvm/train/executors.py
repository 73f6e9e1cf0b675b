"""Executors: where a pass's work runs. One small protocol (:class:`Executor`) that threads of this process
(:class:`ThreadEngine`) and dask workers (:class:`DaskEngine`) implement, and a third (Ray, Spark) could:

- ``map(function, tasks)`` runs ``function(task)`` for each task, results in order;
- ``keep(shards)`` holds shards where they run;
- ``run_kept(function, *shared)`` runs ``function(shard, *shared)`` on each kept shard (a shard that changes is
  changed on a copy where the executor may run a task twice);
- ``read_kept(function, *shared)`` the same, without keeping changes;
- ``collect()`` brings the shards back.

Which executor a run takes: a dask client means dask (``connect``), else threads. How each family's passes use it is
:mod:`.engines`'.
"""

from __future__ import annotations

import copy
import operator
import warnings
from typing import Protocol

from blocksvm._threads import ThreadMap
from blocksvm.errors import ParameterError
from blocksvm.solvers.base import ROW_SUMS


class Executor(Protocol):
    """Where work runs: what :mod:`.engines` asks of threads or a cluster (the module docstring says each)."""

    def map(self, function, tasks: list) -> list: ...

    def keep(self, shards: list) -> None: ...

    def run_kept(self, function, *shared) -> list: ...

    def read_kept(self, function, *shared) -> list: ...

    def collect(self) -> list: ...


# Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_SECONDS = 20.0


class ThreadEngine(ThreadMap):
    """Tasks and shards in this process, on ``threads`` threads (the numba kernels release the GIL): a
    :class:`~blocksvm._threads.ThreadMap` that keeps shards."""

    def __init__(self, threads: int):
        super().__init__(threads)
        self.shards: list = []

    def keep(self, shards: list) -> None:
        self.shards = shards

    def run_kept(self, function, *shared) -> list:
        return self.map(lambda shard: function(shard, *shared), self.shards)

    read_kept = run_kept

    def collect(self) -> list:
        return self.shards


def _same(value):
    return value


def _on_a_copy(function, shard, *shared):
    """``function(shard, *shared)`` that leaves its input alone (dask may run it again from the same shard): the
    shard it changed, and the result."""
    shard = copy.deepcopy(shard) if shard.mutable else shard
    return shard, function(shard, *shared)


class DaskEngine:
    """Each shard a future on a dask worker (its state stays there between rounds).

    A round submits one task per shard, pinned to the shard's worker (another may take it if that one is gone),
    with the shared arguments as one task's result that every worker fetches; only the results come back. A
    worker that dies loses its shards' futures; the scheduler runs their tasks again from the shards' roots
    (the tasks are pure), so the run goes on. The roots are the shards as last kept (the start, or the last
    checkpoint): the scheduler keeps the tasks of every round since and forgets the rest.
    """

    def __init__(self, client):
        self.client = client
        try:
            client.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except TimeoutError:
            raise ParameterError(
                f"the dask scheduler at {client.scheduler.address} has no workers (waited "
                f"{CONNECT_SECONDS:g} s): start some ('dask worker ADDRESS')"
            ) from None
        # asked of the scheduler now: the client's scheduler_info() is a copy it refreshes now and then, which can
        # still be empty just after the workers arrived (a fresh cluster: the shards had no worker to be pinned to)
        self.workers = sorted(client.nthreads())
        self.shards: list = []

    def _submit(self, function, *args, shard: int):
        with warnings.catch_warnings():
            # arguments and shards go into the task graph on purpose: a lost shard is recomputed from it
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            pin = [self.workers[shard % len(self.workers)]]
            return self.client.submit(function, *args, workers=pin, allow_other_workers=True, pure=False)

    def _shared(self, shared: tuple) -> list:
        """Arguments every task reads: an array (or what holds arrays) as one task's result that every worker
        fetches once; numbers as they are."""
        small = (int, float, str, type(None))
        return [value if isinstance(value, small) else self.client.submit(_same, value, pure=False) for value in shared]

    def map(self, function, tasks: list) -> list:
        return self.client.gather([self._submit(function, task, shard=k) for k, task in enumerate(tasks)])

    def keep(self, shards: list) -> None:
        # submitted, not scattered: a lost shard can be rebuilt from its task
        self.shards = [self._submit(_same, shard, shard=k) for k, shard in enumerate(shards)]
        self.mutable = any(shard.mutable for shard in shards)

    def run_kept(self, function, *shared) -> list:
        if not self.mutable:  # the shards stay as they are (a cache aside): one task each, no new roots
            return self.read_kept(function, *shared)
        shared = self._shared(shared)
        tasks = [self._submit(_on_a_copy, function, s, *shared, shard=k) for k, s in enumerate(self.shards)]
        self.shards = [self._submit(operator.itemgetter(0), t, shard=k) for k, t in enumerate(tasks)]
        return self.client.gather([self._submit(operator.itemgetter(1), t, shard=k) for k, t in enumerate(tasks)])

    def read_kept(self, function, *shared) -> list:
        shared = self._shared(shared)
        return self.client.gather([self._submit(function, s, *shared, shard=k) for k, s in enumerate(self.shards)])

    def collect(self) -> list:
        return self.client.gather(self.shards)


def connect(address: str):
    """A ``dask.distributed.Client`` of the scheduler at ``address`` (one clear error if there is none)."""
    try:
        from distributed import Client
    except ImportError:
        raise ParameterError("--scheduler needs dask.distributed: pip install 'blocksvm[dask]'") from None
    try:
        return Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as exc:
        raise ParameterError(
            f"cannot reach a dask scheduler at {address} ({type(exc).__name__}): start one "
            "('dask scheduler') or check the address"
        ) from None


def check_solver(solver: str) -> None:
    """A cluster runs shards of dual CD (CoCoA+ rounds) or of a pass learner; refuse the others before connecting."""
    from blocksvm.solvers import SOLVERS  # (the registry imports every driver: not for every use of engines)

    if not _shardable(SOLVERS[solver]):
        able = ", ".join(name for name, s in SOLVERS.items() if _shardable(s))
        raise ParameterError(f"--scheduler runs shards of --solver {able}, not of {solver}")


def _shardable(solver_class) -> bool:
    return solver_class.reads == ROW_SUMS or getattr(solver_class, "coordinator", None) is not None
