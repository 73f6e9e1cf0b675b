"""Engines: where a pass's work runs, and how the pieces of that work add up.

Two kinds of learner make passes (docs/ARCHITECTURE.md):

- a **block learner** (dual CD, Pegasos, the online learners) visits one block at a time and changes its state
  as it goes: a pass is :func:`~blocksvm.train.pass_loop.run_pass` over the blocks in this process
  (:class:`BlockPasses`); dual CD also runs as CoCoA+ shards (:mod:`blocksvm.solvers.cocoa`), each a block
  learner over a share of the blocks, their rounds on an engine (:class:`Rounds`);
- a **pass learner** (Newton) maps rows to sums and steps at the end of the pass (:class:`~blocksvm.solvers.base.
  PassSolver`): in this process, each block's pieces are summed on threads (:class:`PieceVisits`, each thread its
  own vectors), and on shards, each shard sums its blocks' pieces (:class:`PassShard`) where it runs. Either
  way the sums add in the fixed tree of :mod:`blocksvm.sums`, so the model does not depend on the number of
  threads or workers, to the last bit.

An engine maps work and keeps shards: :class:`ThreadEngine` (threads of this process: the numba
kernels release the GIL) and :class:`DaskEngine` (each shard a future on a dask worker). ``map(function,
tasks)`` runs ``function(task)`` for each task, results in order; ``keep(shards)`` holds shards where they run,
``run_kept(function, *shared)`` runs ``function(shard, *shared)`` on each (a shard that changes is changed on
a copy where the engine may run a task twice) and ``read_kept`` the same without keeping changes;
``collect()`` brings the shards back.
"""

from __future__ import annotations

import copy
import operator
import os
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.solvers.base import BlockReport, PassSolver
from blocksvm.solvers.by_columns import feature_pieces
from blocksvm.solvers.evaluate import evaluate_block
from blocksvm.solvers.registry import driver
from blocksvm.store import BlockStore, ReadStats, ShardView
from blocksvm.sums import Node, PieceLayout, TreeSum, range_nodes, split
from blocksvm.train.pass_loop import PassRun, run_pass, store_blocks
from blocksvm.train.records import PassSums
from blocksvm.train.schedule import FILE_ORDER, Schedule

# Test-only fault: "ROUND,SHARD,MARKER" makes that shard's task end its process (os._exit, as a
# SIGKILL would) in that round, once: the first time, when MARKER does not exist yet.
FAULT_VARIABLE = "BLOCKSVM_TEST_EXIT_IN_ROUND"
# Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_SECONDS = 20.0


# ---- engines ---------------------------------------------------------------------------------------------


class ThreadEngine:
    """Tasks and shards in this process, on ``threads`` threads (the numba kernels release the GIL).

    The threads are the standard library's pool (``concurrent.futures``), started at the first map with more than
    one task and kept for the engine's life: a pass maps once per block, and joblib's ``Parallel`` costs about
    11 ms a call where the pool's ``map`` costs 0.24 ms (2 threads, measured on this project's machine).
    """

    def __init__(self, threads: int):
        self.threads = threads
        self.shards: list = []
        self._pool: ThreadPoolExecutor | None = None

    def map(self, function, tasks: list) -> list:
        if self.threads == 1 or len(tasks) <= 1:
            return [function(task) for task in tasks]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="blocksvm-engine")
            weakref.finalize(self, self._pool.shutdown, wait=False)  # the threads end with the engine
        return list(self._pool.map(function, tasks))

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_pool": None}

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
        self.workers = sorted(client.scheduler_info()["workers"])
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
    return issubclass(solver_class, PassSolver) or solver_class.coordinator is not None


# ---- how a learner's passes are made -----------------------------------------------------------------------


def build(solver_class, problem, params, store: BlockStore, client=None):
    if getattr(solver_class, "layout", "rows") == "columns":
        return _build_columns(solver_class, problem, params, store, client)
    return _build_rows(solver_class, problem, params, store, client)


def _build_rows(solver_class, problem, params, store: BlockStore, client=None):
    """The learner the loop drives and how its passes are made: ``(learner, passes)``.

    ``params.workers`` > 1 or a dask ``client``: shards of the blocks, their rounds on threads or the cluster's
    workers (CoCoA+ for dual CD, :class:`PassShard` for a pass learner). Otherwise passes in this process, a
    pass learner's pieces on ``params.threads`` threads.
    """
    workers = params.workers or 1
    in_shards = client is not None or workers > 1
    if issubclass(solver_class, PassSolver):
        learner = solver_class(problem, params, store)
        layout = PieceLayout.of(store.block_rows, store.nnz, problem.n_weights)
        if not in_shards:
            return learner, PiecePasses(learner, store, layout, ThreadEngine(params.threads))
        engine = DaskEngine(client) if client is not None else ThreadEngine(workers)
        ranges = split(0, store.n_blocks, _check_shards(workers, store.n_blocks))
        views = [ShardView(store, np.arange(a, b)) for a, b in ranges]  # contiguous: each a range of the tree
        engine.keep([PassShard(k, v, learner, layout, params) for k, v in enumerate(views)])
        return learner, Rounds(learner, engine, store)
    if not in_shards:
        learner = solver_class(problem, params, store)
        learner.map = ThreadEngine(params.threads).map  # its tasks (dual CD's) on --threads threads
        return learner, BlockPasses(learner, store)
    if solver_class.coordinator is None:
        raise ParameterError(f"--solver {solver_class.name} does not run in shards")
    engine = DaskEngine(client) if client is not None else ThreadEngine(workers)
    n_shards = _check_shards(workers, store.n_blocks)
    views = [ShardView(store, np.arange(k, store.n_blocks, n_shards)) for k in range(n_shards)]  # dealt
    learner = driver(solver_class.coordinator)(problem, params, store, views, engine)
    return learner, Rounds(learner, engine, store)


def _check_shards(workers: int, n_blocks: int) -> int:
    if workers > n_blocks:
        raise ParameterError(
            f"workers ({workers}) must be at most the store's blocks ({n_blocks}): each "
            "shard is whole blocks; convert with a smaller --block-rows for more"
        )
    return workers


def with_columns(params, store, say=None):
    """``params`` for ``store``: a column learner's store gets its column layout (written once, said in one line
    through ``say``); a store without one whose folder cannot be written is trained by OWL-QN over its rows instead
    (said why). Before the store is locked for reading: writing the layout locks it."""
    from blocksvm.solvers import SOLVERS
    from blocksvm.store.columns import ensure_columns

    if getattr(SOLVERS[params.solver], "layout", "rows") != "columns":
        return params
    store = store if isinstance(store, BlockStore) else BlockStore(store)
    if store.columns is not None:
        return params
    if not _can_write(store.path):
        if say is not None:
            say(
                f"note: {store.path} has no column layout and its folder cannot be written: owl-qn trains the "
                f"problem over its rows instead of {params.solver} over its columns ('blocksvm columns STORE' where "
                "the store can be written gives it columns)"
            )
        return replace(params, solver="owl-qn")
    ensure_columns(store, say=say)
    return params


def _can_write(folder) -> bool:
    return os.access(folder, os.W_OK)


def _build_columns(solver_class, problem, params, store: BlockStore, client=None):
    """A column learner and its rounds: ``column_pieces`` pieces of the column layout, on ``max(threads, workers)``
    threads (or the cluster's workers), each piece's separable work on the threads left to it."""
    learner = solver_class(problem, params, store)
    layout = learner.columns
    groups = feature_pieces(layout.blocks, learner.n_pieces)
    threads = max(params.threads, params.workers or 1)
    engine = DaskEngine(client) if client is not None else ThreadEngine(min(threads, len(groups)))
    inner = params.threads if client is not None else max(1, threads // len(groups))
    budget = learner.memory_budget / len(groups)
    pieces = [
        ColumnPiece(p, layout, ids, p == len(groups) - 1, problem, budget, inner, params.prefetch)
        for p, ids in enumerate(groups)
    ]
    engine.keep(pieces)
    learner.piece_weights = [piece.weights for piece in pieces]
    return learner, ColumnRounds(learner, engine, store, pieces)


class BlockPasses:
    """A block learner's passes in this process: its blocks in the schedule's order, read ahead by a thread."""

    def __init__(self, learner, store: BlockStore):
        self.learner, self.store = learner, store

    def run(self, run: PassRun, outer: int, read: ReadStats) -> bool:
        p = run.params
        schedule = Schedule(p.seed, outer, shuffle=p.order == "random")
        blocks = store_blocks(self.store, schedule.order(self.store.n_blocks, run.state.position), p.prefetch, read)
        return run.run(blocks, self.learner, schedule)

    def evaluate(self, problem, W: np.ndarray, prefetch: int) -> tuple:
        return evaluate_blocks(problem, W, self.store.iter_blocks(prefetch=prefetch))

    def note(self) -> str | None:
        return None


def evaluate_blocks(problem, W: np.ndarray, blocks) -> tuple[np.ndarray, int, float]:
    """Loss sums per problem, correct rows and squared errors of ``blocks`` at ``W``."""
    total = (np.zeros(W.shape[0]), 0, 0.0)
    for block in blocks:
        total = tuple(a + b for a, b in zip(total, evaluate_block(problem, W, block)))
    return total


# ---- a pass learner's passes -------------------------------------------------------------------------------


class KeptBlocks:
    """Blocks kept in memory after their first read when all of them fit in the budget (a pass learner's later
    passes then read nothing), else read again at every pass.

    Parameters
    ----------
    store : BlockStore
        Whose blocks (for the estimate of their size in memory).
    rows : int
        Rows of the blocks to keep (a shard's, or the store's).
    budget : float
        Bytes.
    """

    def __init__(self, store, rows: int, budget: float):
        per_row = store.nnz / max(store.n_rows, 1) * (4 + np.dtype(store.dtype).itemsize) + 32
        self.bytes = rows * per_row
        self.fits = self.bytes <= budget
        self.blocks: dict[int, object] = {}

    def __getstate__(self) -> dict:
        return {**self.__dict__, "blocks": {}}  # a shard shipped to a worker reads its blocks there

    def iter(self, store, order, prefetch: int, stats: ReadStats):
        """``(index, block)`` of ``store`` in ``order``: the kept ones from memory, the others read (and kept if
        they fit)."""
        order = [int(b) for b in order]
        missing = iter(store.iter_blocks([b for b in order if b not in self.blocks], prefetch=prefetch, stats=stats))
        for b in order:
            block = self.blocks.get(b)
            if block is None:
                block = next(missing)
                if self.fits:
                    self.blocks[b] = block
            yield b, block


class PieceVisits:
    """What :func:`~blocksvm.train.pass_loop.run_pass` visits for a pass learner: a block's pieces summed by
    ``mapper`` (the learner's pure map from rows to sums, :meth:`~blocksvm.solvers.base.PassSolver.mapper`) on
    ``engine``'s threads, each thread a contiguous range of pieces into its own sums, the ranges' nodes pushed in
    order into ``tree``. Blocks come with their store-wide index and row offset."""

    combine = staticmethod(PassSolver.combine)

    def __init__(self, mapper, layout: PieceLayout, engine, tree: TreeSum, request):
        self.mapper, self.n_problems = mapper, mapper.problem.n_problems
        self.layout, self.engine, self.tree, self.request = layout, engine, tree, request

    def visit(self, block, seeds) -> BlockReport:
        first, stop = self.layout.pieces(block.index)

        def leaf(piece: int):
            start, end = self.layout.rows(block.index, piece)
            return self.mapper(block.slice(start, end), block.row_offset + start, self.request)

        for nodes in self.engine.map(
            lambda bounds: range_nodes(*bounds, leaf), split(first, stop, self.engine.threads)
        ):
            self.tree.extend(nodes)
        return BlockReport(np.zeros(self.n_problems), 0, 1.0, 0)


class PiecePasses:
    """A pass learner's passes in this process: the blocks in store order (from memory when the store fits in the
    learner's memory budget), each block's pieces on threads, into the learner's tree."""

    def __init__(self, learner: PassSolver, store: BlockStore, layout: PieceLayout, engine: ThreadEngine):
        self.learner, self.store, self.layout, self.engine = learner, store, layout, engine
        self.kept = KeptBlocks(store, store.n_rows, learner.memory_budget)

    def run(self, run: PassRun, outer: int, read: ReadStats) -> bool:
        visits = PieceVisits(self.learner.mapper(), self.layout, self.engine, self.learner.tree, self.learner.request())
        blocks = self.kept.iter(self.store, range(run.state.position, self.store.n_blocks), run.params.prefetch, read)
        return run.run(blocks, visits, FILE_ORDER)

    def evaluate(self, problem, W: np.ndarray, prefetch: int) -> tuple:
        blocks = self.kept.iter(self.store, range(self.store.n_blocks), prefetch, ReadStats())
        return evaluate_blocks(problem, W, (block for _, block in blocks))

    def note(self) -> str | None:
        """Where the passes' blocks come from, said once: memory, or the store at every pass."""
        return memory_note(self.learner, self.kept.bytes / 1e6, self.kept.fits, ("the store", "pass", "it"))


def memory_note(learner, needed: float, fits: bool, words: tuple[str, str, str]) -> str:
    """Where a learner's data comes from, said once: kept in memory, or read again at every pass (or round), and then
    the ``--cache-mb`` that would keep it when this machine has twice that memory available. ``words``: what is kept
    ("the store"), what reads it ("pass") and its pronoun ("it")."""
    what, each, it = words
    if fits:
        return f"{learner.name} keeps {what} in memory ({needed:,.0f} MB): its later {each}es read nothing"
    need = "needs" if it == "it" else "need"
    budget = f"{what} {need} {needed:,.3g} MB in memory, more than --cache-mb {learner.memory_budget / 1e6:g}"
    available = available_mb()
    if available is not None and needed < available / 2:  # it would fit, with room for the rest of the run
        return (
            f"{budget}: every {each} of {learner.name} reads {it} again; --cache-mb {_round_up(needed)} keeps {it} in "
            f"memory ({available:,.0f} MB available), and its later {each}es read nothing"
        )
    return f"{budget}: every {each} of {learner.name} reads {it} again (a larger --cache-mb keeps {it})"


def available_mb() -> float | None:
    """Megabytes of memory available to a new allocation without swapping (Linux's MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as meminfo:
            kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return None
    return kb / 1024


def _round_up(mb: float) -> int:
    """A budget a little above ``mb``, in round figures: 0.3 -> 1, 63 -> 67, 180.3 -> 190, 1234 -> 1300."""
    step = 10 ** max(0, len(str(int(mb))) - 2)
    return int((mb * 1.05 // step + 1) * step)


class PassShard:
    """A pass learner's shard: a contiguous range of blocks (so of pieces), summed where the shard runs, its
    blocks kept in memory there when they fit; a round returns the aligned nodes of its range
    (:class:`ShardNodes`), which :class:`Rounds` pushes into the learner's tree."""

    mutable = False  # its kept blocks are a cache: a round run twice gives the same nodes

    def __init__(self, index: int, view: ShardView, learner: PassSolver, layout: PieceLayout, params):
        self.index, self.view, self.layout, self.params = index, view, layout, params
        self.mapper = learner.mapper()  # its problem and kernels, not its vectors
        self.kept = KeptBlocks(view.store, view.n_rows, learner.memory_budget / max(params.workers or 1, 1))
        self.tree: TreeSum | None = None

    @property
    def problem(self):
        return self.mapper.problem

    def begin(self, request, outer: int, engine: ThreadEngine):
        self.tree = TreeSum(self.layout.pieces(int(self.view.blocks[0]))[0])
        return PieceVisits(self.mapper, self.layout, engine, self.tree, request), None

    def blocks(self, order: np.ndarray, stats: ReadStats):
        """The shard's blocks as the store's (store-wide index and row offset: the pieces and folds are the
        store's)."""
        return self.kept.iter(self.view.store, self.view.blocks[order], self.params.prefetch, stats)

    def end(self, sums: PassSums, read: ReadStats) -> ShardNodes:
        nodes, self.tree = self.tree.nodes, None
        return ShardNodes(nodes, sums, read)


class ShardNodes:
    """A pass shard's round: the nodes of its pieces, and the round's sums and reads."""

    def __init__(self, nodes: list[Node], sums: PassSums, read: ReadStats):
        self.nodes, self.sums, self.read = nodes, sums, read


# ---- a column learner's rounds -------------------------------------------------------------------------------


class ColumnPiece:
    """A piece of the features for a column learner (:mod:`blocksvm.solvers.by_columns`): a contiguous range of the
    column layout's blocks (and the bias feature, for the last piece), kept in memory where the piece runs when they
    fit in its share of the budget, else read at every use.

    ``weights`` are the indices of the weights it owns (its blocks' feature range, and the bias's last); ``blocks()``
    yields its column blocks in order, then the bias column (every row, value B) when it owns one; ``engine`` runs
    separable work (the gradient) on the piece's threads.
    """

    mutable = False  # its kept blocks are a cache: a round run twice gives the same results

    def __init__(self, index: int, layout, block_ids: np.ndarray, last: bool, problem, budget: float, threads: int,
                 prefetch: int):  # fmt: skip
        entries = layout.blocks
        self.index, self.layout, self.block_ids, self.prefetch = index, layout, np.asarray(block_ids), prefetch
        lo = entries[int(block_ids[0])]["first"] if index > 0 else 0
        hi = problem.n_features if last else entries[int(block_ids[-1])]["stop"]
        self.bias = problem.bias if last else 0.0
        # the piece's weights, its features and (the last piece) the bias slot after them: a range, so that the
        # learners' arrays over them are views, not copies of the size of the features
        self.weights = slice(lo, problem.n_weights if last else hi)
        self.n_rows, self.threads = layout.n_rows, threads
        item = layout.rows_dtype.itemsize + np.dtype(layout.store.dtype).itemsize  # a row id and a value an entry
        self.bytes = sum(entries[int(b)]["nnz"] * item for b in block_ids)
        self.fits = self.bytes <= budget
        self.kept: dict[int, object] = {}
        self.read = ReadStats()

    def __getstate__(self) -> dict:  # a piece shipped to a worker reads its blocks there
        return {**self.__dict__, "kept": {}, "_engine": None, "_bias_column": None}

    @property
    def engine(self) -> ThreadEngine:
        if getattr(self, "_engine", None) is None:
            self._engine = ThreadEngine(self.threads)
        return self._engine

    def blocks(self):
        """The piece's column blocks in order (kept, or read ahead), then its bias column."""
        missing = [int(b) for b in self.block_ids if int(b) not in self.kept]
        read = self.layout.iter_blocks(missing, prefetch=self.prefetch, stats=self.read, statistics=False)
        fresh = iter(read) if missing else None
        for b in self.block_ids:
            block = self.kept.get(int(b))
            if block is None:
                block = next(fresh)
                if self.fits:
                    self.kept[int(b)] = block
            yield block
        if self.bias > 0:
            yield self.bias_column()

    def bias_column(self):
        """The bias feature as a column: every row, value B (kept: a row id and a value a row)."""
        if getattr(self, "_bias_column", None) is None:
            n = self.n_rows
            self._bias_column = BiasColumn(  # (its index: after the layout's blocks, for its columns' seeds)
                self.layout.n_blocks,
                np.array([self.weights.stop - 1]),
                np.array([0, n]),
                np.arange(n),
                np.full(n, self.bias),
            )
        return self._bias_column


@dataclass
class BiasColumn:
    """The bias feature as a column block (the kernels read ``features``, ``indptr``, ``rows``, ``data``)."""

    index: int
    features: np.ndarray
    indptr: np.ndarray
    rows: np.ndarray
    data: np.ndarray


def column_round(piece: ColumnPiece, worker, request) -> dict:
    """One round of ``piece``: its learner's work on its columns (``worker.round``), with what it read."""
    before = (piece.read.bytes_read, piece.read.read_seconds, piece.read.wait_seconds, piece.read.blocks_read)
    result = worker.round(piece, request)
    after = (piece.read.bytes_read, piece.read.read_seconds, piece.read.wait_seconds, piece.read.blocks_read)
    result["stats"] = tuple(b - a for a, b in zip(before, after))
    return result


class ColumnRounds:
    """A column learner's pass: one round of every piece at once on ``engine`` (threads or dask workers), from the
    learner's ``broadcast()``, the results to its ``reduce`` in the pieces' order. Signals and the time limit wait
    for the round's end."""

    def __init__(self, learner, engine, store: BlockStore, pieces: list[ColumnPiece]):
        self.learner, self.engine, self.store, self.pieces = learner, engine, store, pieces

    def run(self, run: PassRun, outer: int, read: ReadStats) -> bool:
        results = self.engine.run_kept(column_round, self.learner.worker(), self.learner.broadcast())
        for r in results:
            read.bytes_read += r["stats"][0]
            read.read_seconds += r["stats"][1]
            read.wait_seconds += r["stats"][2]
            read.blocks_read += r["stats"][3]
        self.learner.reduce(results)
        run.advance(self.store.n_blocks - run.state.position)
        return True

    def evaluate(self, problem, W: np.ndarray, prefetch: int) -> tuple:
        return evaluate_blocks(problem, W, self.store.iter_blocks(prefetch=prefetch))

    def note(self) -> str | None:
        """Where the rounds' columns come from, said once."""
        needed = sum(p.bytes for p in self.pieces) / 1e6
        return memory_note(self.learner, needed, all(p.fits for p in self.pieces), ("the columns", "round", "them"))


# ---- shards' rounds -----------------------------------------------------------------------------------------


def shard_round(shard, broadcast, outer: int):
    """One round of ``shard``: its learner's pass over its blocks through :func:`~blocksvm.train.pass_loop.run_pass`,
    from the coordinator's ``broadcast``, its tasks on the shard's threads; the shard's result (its ``end``)."""
    _inject_fault(outer, shard.index)
    learner, after = shard.begin(broadcast, outer, ThreadEngine(shard.params.threads))  # the shard's --threads
    p = shard.params  # a block learner's shard visits its blocks in the pass's random order; a pass learner's in order
    schedule = FILE_ORDER if isinstance(shard, PassShard) else Schedule(p.seed, outer, shuffle=p.order == "random")
    sums, read = PassSums.zeros(learner.n_problems), ReadStats()
    run_pass(shard.blocks(schedule.order(shard.view.n_blocks), read), learner, schedule, sums, after)
    return shard.end(sums, read)


def evaluate_shard(shard, W: np.ndarray) -> tuple[np.ndarray, int, float]:
    """Loss sums per problem, correct rows and squared errors of the shard's blocks at ``W``."""
    order = np.arange(shard.view.n_blocks)
    return evaluate_blocks(
        shard.problem, W, shard.view.iter_blocks(order, prefetch=shard.params.prefetch, stats=ReadStats())
    )


class Rounds:
    """A pass as one round of every shard at once, on ``engine``: each shard's round from ``learner.broadcast()``,
    then ``learner.reduce(results)`` (CoCoA+'s step; a pass learner's nodes into its tree). Signals and the
    time limit wait for the round's end."""

    def __init__(self, learner, engine, store: BlockStore):
        self.learner, self.engine, self.store = learner, engine, store

    def run(self, run: PassRun, outer: int, read: ReadStats) -> bool:
        for r in self.round(outer):
            run.state.sums.merge(r.sums, self.learner.combine)
            read.read_seconds += r.read.read_seconds
            read.wait_seconds += r.read.wait_seconds
            read.bytes_read += r.read.bytes_read
            read.blocks_read += r.read.blocks_read
        run.advance(self.store.n_blocks - run.state.position)
        return True

    def note(self) -> str | None:
        """What dual CD's CoCoA+ rounds cost (a pass learner's shards make the serial passes, bit for bit)."""
        if isinstance(self.learner, PassSolver):
            return None
        return (
            "dual CD on shards runs CoCoA+ rounds, many more passes than the serial run (15x its passes, 0.11x its "
            "speed on a generated set, 2 cores: docs/PARALLEL.md): they pay where the blocks are spread over machines; "
            "--solver newton sums the serial passes on shards (squared-hinge, logistic)"
        )

    def round(self, outer: int) -> list:
        results = self.engine.run_kept(shard_round, self.learner.broadcast(), outer)
        self.learner.reduce(results)
        return results

    def evaluate(self, problem, W: np.ndarray, prefetch: int) -> tuple:
        parts = self.engine.read_kept(evaluate_shard, W)
        return tuple(sum(figures) for figures in zip(*parts))


def _inject_fault(outer: int, shard: int) -> None:
    spec = os.environ.get(FAULT_VARIABLE)
    if not spec:
        return
    at_round, at_shard, marker = spec.split(",", 2)
    if (outer, shard) == (int(at_round), int(at_shard)) and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(137)
