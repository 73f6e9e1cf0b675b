"""Engines: how each family's pass is made, and how the pieces of that work add up (where it runs:
:mod:`.executors`).

Three families of learner make passes (docs/ARCHITECTURE.md), told apart by what they read (``reads``):

- a **block learner** (dual CD, Pegasos, the online learners) visits one block at a time and changes its state
  as it goes: a pass is :func:`~blocksvm.train.pass_loop.run_pass` over the blocks in this process
  (:class:`BlockPasses`); dual CD also runs as CoCoA+ shards (:mod:`blocksvm.solvers.cocoa`), each a block
  learner over a share of the blocks, their rounds on an executor (:class:`Rounds`);
- a **row-sum learner** (Newton, OWL-QN) maps rows to sums and steps at the end of the pass
  (:class:`~blocksvm.solvers.base.RowSumSolver`): in this process, each block's pieces are summed on threads
  (:class:`PieceVisits`, each thread its own vectors), and on shards, each shard sums its blocks' pieces
  (:class:`PassShard`) where it runs. Either way the sums add in the fixed tree of :mod:`blocksvm.sums`, so the model
  does not depend on the number of threads or workers, to the last bit;
- a **column learner** (CDN, newGLMNET, -s 5/6) makes rounds over pieces of the store's column layout
  (:class:`ColumnRounds`).
"""

from __future__ import annotations

import os

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.solvers.base import BLOCKS, COLUMNS, ROW_SUMS, BlockReport, Resources, Solver
from blocksvm.solvers.evaluate import evaluate_block
from blocksvm.solvers.registry import driver
from blocksvm.store import BlockStore, ColumnPieces, KeptBlocks, ReadStats, ShardView
from blocksvm.sums import Node, PieceLayout, TreeSum, range_nodes, split
from blocksvm.train.executors import DaskEngine, ThreadEngine
from blocksvm.train.pass_loop import PassRun, run_pass
from blocksvm.train.plan import Budget, block_memory, memory_note
from blocksvm.train.records import PassSums
from blocksvm.train.schedule import FILE_ORDER, Schedule

# Test-only fault: "ROUND,SHARD,MARKER" makes that shard's task end its process (os._exit, as a
# SIGKILL would) in that round, once: the first time, when MARKER does not exist yet.
FAULT_VARIABLE = "BLOCKSVM_TEST_EXIT_IN_ROUND"
# ---- how a learner's passes are made -----------------------------------------------------------------------


def build(solver_class: type[Solver], problem, params, store: BlockStore, budget: Budget, client=None):
    """The learner the loop drives and how its passes are made, ``(learner, passes)``, decided once by what the
    learner reads (its family: ``solver_class.reads``); the learner is built with its :class:`Resources`.

    ``params.workers`` > 1 or a dask ``client``: shards of the blocks, their rounds on threads or the cluster's
    workers (CoCoA+ for dual CD, :class:`PassShard` for a row-sum learner), or the column pieces on the cluster's
    workers. Otherwise passes in this process, on ``params.threads`` threads. ``budget``: what the run's data may take
    of its memory plan (:mod:`.plan`).
    """
    return BUILDERS[solver_class.reads](solver_class, problem, params, store, client, budget)


def _kept_blocks(solver_class, params, store: BlockStore, budget: Budget, first):
    """The learner's parameters at its own defaults, the blocks kept in memory (planned along the first pass's
    order: the blocks it keeps first) and its own share of the budget: the defaults for rows kept in memory where at
    least its ``enough_kept`` share of the rows fits beside them, else those for blocks streamed (dual CD: several
    sweeps a visit with a cache of support vectors), which keep what fits beside their cache; or, with
    ``--inner-passes 1`` given and one more block's room, none kept (dual CD: the streamed blocks swept in pairs)."""
    own = solver_class.own_defaults(params, keeps_rows=True)
    cache, room = block_memory(own, store, budget)
    kept = KeptBlocks(store, first, room, solver_class.kept_row_bytes)
    streamed = solver_class.own_defaults(params, keeps_rows=False)
    if kept.capacity[0] < solver_class.enough_kept * store.n_rows and streamed != own:
        if params.inner_passes == 1 and room >= max(kept.sizes.values(), default=0.0):  # (one held beside those
            return own, KeptBlocks(store, first, 0.0), cache  # in flight)
        own = streamed  # (again, beside the cache)
        cache, room = block_memory(own, store, budget)
        kept = KeptBlocks(store, first, room, solver_class.kept_row_bytes)
    return own, kept, cache


def _in_shards(params, client) -> bool:
    return client is not None or (params.workers or 1) > 1


def _engine(params, client, threads: int):
    return DaskEngine(client) if client is not None else ThreadEngine(threads)


def _build_blocks(solver_class, problem, params, store: BlockStore, client, budget: Budget):
    """A block learner: its passes over the store's blocks in this process (its tasks on ``--threads`` threads), as
    many blocks kept in memory as fit its budget, or its coordinator's rounds of shards (dual CD's CoCoA+), each shard
    a dealt share of the blocks."""
    if not _in_shards(params, client):
        first = Schedule(params.seed, 1, shuffle=params.order == "random").order(store.n_blocks)
        own, kept, cache = _kept_blocks(solver_class, params, store, budget, first)
        threads = ThreadEngine(params.threads)
        resources = Resources(blocks=store, memory=cache, map=threads.map, kept=kept)
        learner = solver_class(problem, own, resources)
        return learner, BlockPasses(learner, store, kept, budget, threads.map)
    if solver_class.coordinator is None:
        raise ParameterError(f"--solver {solver_class.name} does not run in shards")
    workers = params.workers or 1
    engine = _engine(params, client, workers)
    n_shards = _check_shards(workers, store.n_blocks)
    views = [ShardView(store, np.arange(k, store.n_blocks, n_shards)) for k in range(n_shards)]  # dealt
    cache, _ = block_memory(solver_class.own_defaults(params, keeps_rows=False), store, budget, n_shards)
    # (each shard's learner keeps its working set as one learner in this process would)
    learner = driver(solver_class.coordinator)(problem, params, views, engine, cache)
    return learner, Rounds(learner, engine, store)


def _build_row_sums(solver_class, problem, params, store: BlockStore, client, budget: Budget):
    """A row-sum learner: each pass's pieces summed on ``--threads`` threads in this process, or on shards (each a
    contiguous range of blocks), the store's blocks kept in memory as they fit the budget (each shard its share)."""
    learner = solver_class(problem, params)
    layout = PieceLayout.of(store.block_rows, store.nnz, problem.n_weights)
    if not _in_shards(params, client):
        kept = KeptBlocks(store, range(store.n_blocks), budget.bytes)  # (a pass of sums reads in store order)
        return learner, PiecePasses(learner, store, layout, ThreadEngine(params.threads), kept, budget)
    workers = params.workers or 1
    engine = _engine(params, client, workers)
    ranges = split(0, store.n_blocks, _check_shards(workers, store.n_blocks))
    views = [ShardView(store, np.arange(a, b)) for a, b in ranges]  # contiguous: each a range of the tree
    share = budget.bytes / workers
    engine.keep([PassShard(k, v, learner, layout, params, share) for k, v in enumerate(views)])
    return learner, Rounds(learner, engine, store)


def _build_columns(solver_class, problem, params, store: BlockStore, client, budget: Budget):
    """A column learner and its rounds: ``column_pieces`` pieces of the store's column layout
    (:class:`~blocksvm.store.ColumnPieces`), on ``max(threads, workers)`` threads (or the cluster's workers), each
    piece's separable work on the threads left to it."""
    threads = max(params.threads, params.workers or 1)
    pieces = params.column_pieces
    inner = params.threads if client is not None else max(1, threads // pieces)
    columns = ColumnPieces(store, pieces, problem.bias, budget.bytes, inner, params.prefetch)
    engine = _engine(params, client, min(threads, pieces))
    engine.keep(columns.pieces)
    learner = solver_class(problem, params, Resources(columns=columns))
    return learner, ColumnRounds(learner, engine, store, columns, budget)


BUILDERS = {BLOCKS: _build_blocks, ROW_SUMS: _build_row_sums, COLUMNS: _build_columns}


def _check_shards(workers: int, n_blocks: int) -> int:
    if workers > n_blocks:
        raise ParameterError(
            f"workers ({workers}) must be at most the store's blocks ({n_blocks}): each "
            "shard is whole blocks; convert with a smaller --block-rows for more"
        )
    return workers


class BlockPasses:
    """A block learner's passes in this process: its blocks in the schedule's order, as many kept in memory as fit
    its budget (``kept``), the others read ahead by the store's threads."""

    columns = None  # (the column learners' passes read columns through a door: ColumnRounds.columns)

    def __init__(self, learner, store: BlockStore, kept: KeptBlocks, budget: Budget, map_=None):
        self.learner, self.store, self.kept, self.budget = learner, store, kept, budget
        self.map = map_ or (lambda function, tasks: [function(task) for task in tasks])

    def run(self, run: PassRun, outer: int, read: ReadStats) -> bool:
        p = run.params
        schedule = Schedule(p.seed, outer, shuffle=p.order == "random")
        order = schedule.order(self.store.n_blocks, run.state.position)
        return run.run(self.kept.iter(self.store, order, p.prefetch, read), self.learner, schedule)

    def evaluate(self, problem, W: np.ndarray, prefetch: int, measure=evaluate_block) -> tuple:
        """An exact pass at ``W``: ``measure(problem, W, block)`` of the kept blocks on the engine's threads, of the
        others as they are read; the blocks' figures added in store order (the same bits for any number of
        threads)."""
        n = self.store.n_blocks
        kept = [b for b in range(n) if self.kept.holds(b)]
        parts = dict(zip(kept, self.map(lambda b: measure(problem, W, self.kept.block(b)), kept)))
        for b, block in self.kept.iter(self.store, [b for b in range(n) if b not in parts], prefetch, ReadStats()):
            parts[b] = measure(problem, W, block)
        return add_up(parts[b] for b in range(n))

    def budget_note(self) -> str:
        """How the run's memory budget is spent and where the passes' blocks come from (its first line)."""
        return memory_note(self.learner.name, self.budget, self.kept, ("the store", "pass", "it"))


def evaluate_blocks(problem, W: np.ndarray, blocks, measure=evaluate_block) -> tuple:
    """``measure`` of ``blocks`` at ``W``, added up (:func:`evaluate_block`'s: loss sums per problem, correct rows and
    squared errors; :func:`~blocksvm.solvers.evaluate.evaluate_folds`'s: loss sums and the folds' held-out counts)."""
    return add_up(measure(problem, W, block) for block in blocks)


def add_up(parts) -> tuple:
    """The blocks' figures ``parts`` (tuples alike) added element by element in their order (a store has a block)."""
    total = None
    for part in parts:
        total = part if total is None else tuple(a + b for a, b in zip(total, part))
    return total


# ---- a row-sum learner's passes ------------------------------------------------------------------------------


class PieceVisits:
    """What :func:`~blocksvm.train.pass_loop.run_pass` visits for a pass learner: a block's pieces summed by
    ``mapper`` (the learner's pure map from rows to sums, :meth:`~blocksvm.solvers.row_sums.RowSumSolver.mapper`) on
    ``engine``'s threads, each thread a contiguous range of pieces into its own sums, the ranges' nodes pushed in
    order into ``tree``. Blocks come with their store-wide index and row offset."""

    combine = staticmethod(Solver.combine)

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

    columns = None  # (the column learners' passes read columns through a door: ColumnRounds.columns)

    def __init__(self, learner, store: BlockStore, layout: PieceLayout, engine, kept: KeptBlocks, budget: Budget):
        self.learner, self.store, self.layout, self.engine, self.kept = learner, store, layout, engine, kept
        self.budget = budget

    def run(self, run: PassRun, outer: int, read: ReadStats) -> bool:
        visits = PieceVisits(self.learner.mapper(), self.layout, self.engine, self.learner.tree, self.learner.request())
        blocks = self.kept.iter(self.store, range(run.state.position, self.store.n_blocks), run.params.prefetch, read)
        return run.run(blocks, visits, FILE_ORDER)

    def evaluate(self, problem, W: np.ndarray, prefetch: int, measure=evaluate_block) -> tuple:
        blocks = self.kept.iter(self.store, range(self.store.n_blocks), prefetch, ReadStats())
        return evaluate_blocks(problem, W, (block for _, block in blocks), measure)

    def budget_note(self) -> str:
        """How the run's memory budget is spent and where the passes' blocks come from (its first line)."""
        return memory_note(self.learner.name, self.budget, self.kept, ("the store", "pass", "it"))


class PassShard:
    """A pass learner's shard: a contiguous range of blocks (so of pieces), summed where the shard runs, its
    blocks kept in memory there when they fit; a round returns the aligned nodes of its range
    (:class:`ShardNodes`), which :class:`Rounds` pushes into the learner's tree."""

    mutable = False  # its kept blocks are a cache: a round run twice gives the same nodes

    def __init__(self, index: int, view: ShardView, learner, layout: PieceLayout, params, memory: float):
        self.index, self.view, self.layout, self.params = index, view, layout, params
        self.mapper = learner.mapper()  # its problem and kernels, not its vectors
        self.kept = KeptBlocks(view.store, view.blocks, memory)
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


def column_round(piece, worker, request) -> dict:
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

    def __init__(self, learner, engine, store: BlockStore, columns: ColumnPieces, budget: Budget):
        self.learner, self.engine, self.store, self.columns, self.budget = learner, engine, store, columns, budget

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

    def evaluate(self, problem, W: np.ndarray, prefetch: int, measure=evaluate_block) -> tuple:
        return evaluate_blocks(problem, W, self.store.iter_blocks(prefetch=prefetch), measure)

    def budget_note(self) -> str:
        """How the run's memory budget is spent and where the rounds' columns come from (its first line)."""
        return memory_note(self.learner.name, self.budget, self.columns, ("the columns", "round", "them"))


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


def evaluate_shard(shard, W: np.ndarray, measure=evaluate_block) -> tuple:
    """``measure`` of the shard's blocks at ``W``, added up (:func:`evaluate_blocks`)."""
    order = np.arange(shard.view.n_blocks)
    blocks = shard.view.iter_blocks(order, prefetch=shard.params.prefetch, stats=ReadStats())
    return evaluate_blocks(shard.problem, W, blocks, measure)


class Rounds:
    """A pass as one round of every shard at once, on ``engine``: each shard's round from ``learner.broadcast()``,
    then ``learner.reduce(results)`` (CoCoA+'s step; a pass learner's nodes into its tree). Signals and the
    time limit wait for the round's end."""

    columns = None  # (the column learners' passes read columns through a door: ColumnRounds.columns)

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

    def budget_note(self) -> str | None:
        """What dual CD's CoCoA+ rounds cost (a pass learner's shards make the serial passes, bit for bit)."""
        if self.learner.reads == ROW_SUMS:
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

    def evaluate(self, problem, W: np.ndarray, prefetch: int, measure=evaluate_block) -> tuple:
        return add_up(self.engine.read_kept(evaluate_shard, W, measure))


def _inject_fault(outer: int, shard: int) -> None:
    spec = os.environ.get(FAULT_VARIABLE)
    if not spec:
        return
    at_round, at_shard, marker = spec.split(",", 2)
    if (outer, shard) == (int(at_round), int(at_shard)) and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(137)
