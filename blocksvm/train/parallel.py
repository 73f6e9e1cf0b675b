"""CoCoA+ rounds: dual CD on K shards of the blocks at once, on joblib threads or a dask cluster.

CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtarik & Takac, ICML 2015; Smith et al., JMLR 2018) with
adding (gamma = 1) and sigma' = K. The store's blocks are dealt to K shards (block ``b`` to shard
``b mod K``). Each round, every worker

1. starts from the current ``w``,
2. makes one pass of block minimization over its shard's blocks (blocks in a random order, its
   working set included) on its local subproblem: dual CD whose steps move the local
   ``w_k = w + sigma' dw_k`` and whose curvature is ``sigma' ||x_i||^2 + D_ii``,
3. returns ``w_k`` and its blocks' dual sums.

The driver adds the updates: ``w + sum_k dw_k = mean_k w_k`` (with sigma' = K), so ``w = sum_i
alpha_i y_i x_i`` still holds and the dual objective stays exact from the per-block sums: the
duality gap, the stop rule and the certificate are the serial trainer's. With K = 1 a round is a
serial pass, bit for bit. docs/PARALLEL.md has the guarantee, the costs and the scale on paper.

Engines: :class:`ThreadEngine` runs the shards on joblib threads in this process (the kernels
release the GIL); :class:`DaskEngine` keeps each shard (its ``alpha`` and working set) on a dask
worker as a future, sends ``w`` out and gets ``w_k`` back. A shard's round is a pure function of
(shard, w, round), so dask may run it again after a worker dies: no update is lost or applied twice.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
import os
import warnings
from dataclasses import dataclass

import numpy as np

from blocksvm.errors import ParameterError, StoreError
from blocksvm.losses import MARGIN
from blocksvm.solvers.base import Solver
from blocksvm.solvers.dual_cd import DualCDSolver, dual_step, step_terms
from blocksvm.solvers.evaluate import evaluate_block
from blocksvm.store import BlockStore, ReadStats
from blocksvm.train.driver import run_pass
from blocksvm.train.records import PassSums
from blocksvm.train.schedule import Schedule

# Test-only fault: "ROUND,SHARD,MARKER" makes that shard's task end its process (os._exit, as a
# SIGKILL would) in that round, once: the first time, when MARKER does not exist yet.
FAULT_VARIABLE = "BLOCKSVM_TEST_EXIT_IN_ROUND"
# Seconds to reach a scheduler, and to wait for its first worker.
CONNECT_SECONDS = 20.0


def shard_blocks(n_blocks: int, n_shards: int) -> list[np.ndarray]:
    """The blocks of each shard: block ``b`` goes to shard ``b mod n_shards``."""
    if n_shards > n_blocks:
        raise ParameterError(
            f"workers ({n_shards}) must be at most the store's blocks ({n_blocks}): each "
            "shard is whole blocks; convert with a smaller --block-rows for more"
        )
    return [np.arange(k, n_blocks, n_shards) for k in range(n_shards)]


class ShardView:
    """The blocks of one shard as a store of their own: local block indices and row offsets.

    Pickled, it keeps the store's path and fingerprint, and reopens the store where it lands (a
    dask worker reads the block files from the same path: a shared file system).
    """

    def __init__(self, store: BlockStore, blocks: np.ndarray):
        self.path, self.fingerprint = store.path, store.fingerprint
        self.blocks = np.asarray(blocks, dtype=np.int64)
        self.row_offsets = np.concatenate(([0], np.cumsum(store.block_rows[self.blocks])))
        self._store: BlockStore | None = store

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_store": None}

    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    @property
    def n_rows(self) -> int:
        return int(self.row_offsets[-1])

    @property
    def store(self) -> BlockStore:
        if self._store is None:
            store = BlockStore(self.path)
            if store.fingerprint != self.fingerprint:
                raise StoreError(
                    f"{self.path} on this worker is not the store being trained: the workers must "
                    "read the same store at the same path (a shared file system)"
                )
            self._store = store
        return self._store

    def localize(self, block, local: int):
        """``block`` renumbered as the shard's block ``local``."""
        return dataclasses.replace(block, index=local, row_offset=int(self.row_offsets[local]))

    def read_block(self, local: int):
        return self.localize(self.store.read_block(int(self.blocks[local])), local)

    def iter_blocks(self, local_order: np.ndarray, *, prefetch: int, stats: ReadStats):
        blocks = self.store.iter_blocks(self.blocks[local_order], prefetch=prefetch, stats=stats)
        for local, block in zip(local_order, blocks):
            yield self.localize(block, int(local))

    def keyed_blocks(self, local_order: np.ndarray, *, prefetch: int, stats: ReadStats):
        """``(store-wide index, block as the shard's)``: the store-wide index seeds the visit, as in a serial
        pass."""
        for block in self.iter_blocks(local_order, prefetch=prefetch, stats=stats):
            yield int(self.blocks[block.index]), block


class Shard:
    """One worker's part: its blocks, their dual variables and its working set (a dual-CD solver over the
    shard, with curvature ``sigma``), and, with the line search, the start of its round: the step the driver
    scales is ``alpha - alpha_start``."""

    def __init__(self, index: int, view: ShardView, problem, params, sigma: float, line_search: bool):
        self.index, self.view, self.params = index, view, params
        local = dataclasses.replace(problem, n_rows=view.n_rows, n_blocks=view.n_blocks, row_offsets=view.row_offsets)
        self.solver = DualCDSolver(local, params, view)
        self.solver.sigma = float(sigma)
        # each row's class in each problem (1: positive), for its D_ii and upper bound in the line search
        self.positive = np.zeros((local.n_problems, view.n_rows), np.int8) if line_search else None
        self.start: tuple[np.ndarray, np.ndarray] | None = None  # (alpha, block sums) while a step is pending
        self.steps: np.ndarray | None = None  # the pending step's sums per block, (n_problems, blocks, 3)

    def take_step(self, gamma: np.ndarray | None) -> None:
        """Apply the pending step scaled by the driver's ``gamma`` (n_problems,): ``alpha = alpha_start +
        gamma (alpha - alpha_start)``, and the block sums that go with it."""
        if self.start is None or gamma is None:
            return
        alpha, sums = self.start
        self.solver.alpha[...] = alpha + gamma[:, None] * (self.solver.alpha - alpha)
        self.solver.block_sums[...] = stepped_sums(sums, self.steps, gamma)
        self.start = self.steps = None

    def step_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """The round's step ``d = alpha - alpha_start``: its line-search sums per block (n_problems, blocks, 3;
        :func:`~blocksvm.solvers.dual_cd.step_terms`) and the largest ``gamma`` in the box (n_problems,)."""
        start, _ = self.start
        d = self.solver.alpha - start
        blocks = np.searchsorted(self.view.row_offsets, np.arange(self.view.n_rows), side="right") - 1
        steps = np.zeros((len(d), self.view.n_blocks, 3))
        limits = np.empty(len(d))
        for k, (upper, diag) in enumerate(self.solver.tables):
            terms, limits[k] = step_terms(start[k], d[k], diag[self.positive[k]], upper[self.positive[k]])
            for column in range(3):
                steps[k, :, column] = np.bincount(blocks, terms[:, column], minlength=self.view.n_blocks)
        return steps, limits


def stepped_sums(sums: np.ndarray, steps: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Block sums ``[sum alpha, sum D alpha^2]`` after the step ``gamma d`` from ``sums``: ``sum alpha + gamma sum d``
    and ``sum D alpha^2 + 2 gamma sum D alpha d + gamma^2 sum D d^2``."""
    g = gamma[:, None]
    return np.stack(
        [sums[..., 0] + g * steps[..., 0], sums[..., 1] + 2 * g * steps[..., 1] + g * g * steps[..., 2]], -1
    )


@dataclass
class ShardRound:
    """What a worker sends back after a round: ``w`` is its local ``w + sigma' dw``."""

    w: np.ndarray
    sums: PassSums
    block_sums: np.ndarray  # (n_problems, the shard's blocks, 2)
    support_vectors: int
    read: ReadStats
    steps: np.ndarray | None = None  # the line search's per-block sums (Shard.step_sums)
    limits: np.ndarray | None = None  # ... and the largest step in the box, per problem


def run_round(shard: Shard, W: np.ndarray, outer: int, gamma: np.ndarray | None = None) -> ShardRound:
    """One round of ``shard`` from the weights ``W``: first the last round's step scaled by ``gamma``, then a
    pass over its blocks, as the serial loop makes one."""
    p, solver, view = shard.params, shard.solver, shard.view
    _inject_fault(outer, shard.index)
    shard.take_step(gamma)
    solver.w[...] = W
    solver.start_pass(outer)
    schedule = Schedule(p.seed, outer, shuffle=p.order == "random")
    sums, read = PassSums.zeros(solver.n_problems), ReadStats()
    after = None
    if shard.positive is not None:
        shard.start = (solver.alpha.copy(), solver.block_sums.copy())

        def after(block, report) -> bool:  # each row's class, from the blocks as they pass
            rows = slice(block.row_offset, block.row_offset + block.n_rows)
            shard.positive[:, rows] = solver.problem.targets(block.labels) > 0
            return False

    blocks = view.keyed_blocks(schedule.order(view.n_blocks), prefetch=p.prefetch, stats=read)
    run_pass(blocks, solver, schedule, sums, after)
    result = ShardRound(solver.w.copy(), sums, solver.block_sums.copy(), solver.support_vectors(), read)
    if shard.positive is not None:
        result.steps, result.limits = shard.step_sums()
        shard.steps = result.steps
    return result


def evaluate_shard(shard: Shard, W: np.ndarray) -> tuple[np.ndarray, int, float]:
    """Loss sums per problem, correct rows and squared errors of the shard's blocks at ``W``."""
    total = (np.zeros(W.shape[0]), 0, 0.0)
    for block in shard.view.iter_blocks(
        np.arange(shard.view.n_blocks), prefetch=shard.params.prefetch, stats=ReadStats()
    ):
        total = tuple(a + b for a, b in zip(total, evaluate_block(shard.solver.problem, W, block)))
    return total


def _inject_fault(outer: int, shard: int) -> None:
    spec = os.environ.get(FAULT_VARIABLE)
    if not spec:
        return
    at_round, at_shard, marker = spec.split(",", 2)
    if (outer, shard) == (int(at_round), int(at_shard)) and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(137)


def check_solver(solver: str) -> None:
    """CoCoA+ rounds are dual CD's (a cluster given to another solver is refused: ``--workers`` is by its reader)."""
    if solver != DualCDSolver.name:
        raise ParameterError(f"--scheduler runs CoCoA+, which needs --solver dual-cd, not {solver}")


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


# ---- engines: where the shards' rounds run -------------------------------------------------------


class ThreadEngine:
    """The shards in this process, their rounds on joblib threads (the numba kernels release the GIL)."""

    def __init__(self, shards: list[Shard]):
        self.shards = shards

    def _map(self, function, *args) -> list:
        from joblib import Parallel, delayed

        with Parallel(n_jobs=len(self.shards), backend="threading") as pool:
            return pool(delayed(function)(shard, *args) for shard in self.shards)

    def round(self, W: np.ndarray, outer: int, gamma: np.ndarray | None) -> list[ShardRound]:
        return self._map(run_round, W, outer, gamma)

    def evaluate(self, W: np.ndarray) -> list[tuple[np.ndarray, int, float]]:
        return self._map(evaluate_shard, W)

    def get(self) -> list[Shard]:
        return self.shards

    def put(self, shards: list[Shard]) -> None:
        self.shards = shards


def _pure_round(shard: Shard, W: np.ndarray, outer: int, gamma: np.ndarray | None) -> tuple[Shard, ShardRound]:
    """A round that leaves its input alone: dask may run it again from the same shard."""
    shard = copy.deepcopy(shard)
    return shard, run_round(shard, W, outer, gamma)


def _same(value):
    return value


class DaskEngine:
    """Each shard a future on a dask worker (its ``alpha`` and working set stay there between rounds).

    A round submits one task per shard, pinned to the shard's worker (another may take it if that
    one is gone), with ``w`` as one task's result that every worker fetches; only the ``w_k`` and
    the dual sums come back. A worker that dies loses its shards' futures; the scheduler runs
    their rounds again from the shards' roots (the tasks are pure), so the run goes on. The roots
    are the shards as last gathered (the start, or the last checkpoint): the scheduler keeps the
    tasks of every round since, ``w`` included, and forgets the rest.
    """

    def __init__(self, client, shards: list[Shard]):
        self.client = client
        try:
            client.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except TimeoutError:
            raise ParameterError(
                f"the dask scheduler at {client.scheduler.address} has no workers (waited "
                f"{CONNECT_SECONDS:g} s): start some ('dask worker ADDRESS')"
            ) from None
        workers = sorted(client.scheduler_info()["workers"])
        self.pins = [[workers[k % len(workers)]] for k in range(len(shards))]
        self.put(shards)

    def _submit(self, function, *args, shard: int):
        with warnings.catch_warnings():
            # w and the shards go into the task graph on purpose: a lost shard is recomputed from it
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            return self.client.submit(function, *args, workers=self.pins[shard], allow_other_workers=True, pure=False)

    def round(self, W: np.ndarray, outer: int, gamma: np.ndarray | None) -> list[ShardRound]:
        w = self.client.submit(_same, W, pure=False)
        tasks = [self._submit(_pure_round, state, w, outer, gamma, shard=k) for k, state in enumerate(self.states)]
        self.states = [self._submit(operator.itemgetter(0), t, shard=k) for k, t in enumerate(tasks)]
        return self.client.gather([self._submit(operator.itemgetter(1), t, shard=k) for k, t in enumerate(tasks)])

    def evaluate(self, W: np.ndarray) -> list[tuple[np.ndarray, int, float]]:
        w = self.client.submit(_same, W, pure=False)
        return self.client.gather([self._submit(evaluate_shard, s, w, shard=k) for k, s in enumerate(self.states)])

    def get(self) -> list[Shard]:
        return self.client.gather(self.states)

    def put(self, shards: list[Shard]) -> None:
        # submitted, not scattered: a lost shard can be rebuilt from its task
        self.states = [self._submit(_same, shard, shard=k) for k, shard in enumerate(shards)]


# ---- the driver's view: one solver for the loop --------------------------------------------------


class CoCoASolver(Solver):
    """Dual CD over K shards in CoCoA+ rounds, seen by the loop as one solver that makes whole passes.

    The driver holds ``w`` and every block's dual sums; the shards hold ``alpha`` and their working
    sets (in this process or on dask workers).
    """

    name = DualCDSolver.name
    stop_rules = DualCDSolver.stop_rules
    combine = staticmethod(DualCDSolver.combine)

    def __init__(self, problem, params, store: BlockStore, client=None):
        super().__init__(problem, params, store)
        check_solver(params.solver)
        self.n_shards = params.workers
        # One shard: the serial pass, bit for bit. The search is exact where the dual is quadratic along the step
        # (the margin kind); the logistic and epsilon duals are not, and add with the safe sigma' = K.
        quadratic = problem.loss.kind == MARGIN
        self.line_search = params.line_search and self.n_shards > 1 and quadratic
        self.sigma = float(params.cocoa_sigma or self.n_shards)
        if self.sigma < self.n_shards and not self.line_search and self.n_shards > 1:
            remedy = "or keep --line-search" if quadratic else f"(loss {problem.loss.name!r} has no line search)"
            raise ParameterError(
                f"cocoa_sigma {self.sigma:g} is below the {self.n_shards} shards: without the line search the shards' "
                f"added updates may overshoot; raise it to the number of shards {remedy}"
            )
        views = [ShardView(store, blocks) for blocks in shard_blocks(store.n_blocks, self.n_shards)]
        shards = [Shard(k, view, problem, params, self.sigma, self.line_search) for k, view in enumerate(views)]
        self.engine = DaskEngine(client, shards) if client is not None else ThreadEngine(shards)
        self.views = views
        self.w = np.zeros((problem.n_problems, problem.n_weights))
        self.block_sums = np.zeros((problem.n_problems, problem.n_blocks, 2))
        self.gamma: np.ndarray | None = None  # the last round's step, which the shards take at the next
        self.nsv = 0

    def round(self, outer: int) -> tuple[PassSums, ReadStats]:
        """One CoCoA+ round: every shard's pass from the current ``w``, then the step: the shards' updates added
        (``w`` = the mean of theirs, with sigma' = K), or scaled by the exact line search on the dual."""
        results = self.engine.round(self.w, outer, self.gamma)
        if self.line_search:
            self._line_search(results)
        else:
            self.w = np.mean([r.w for r in results], axis=0)  # of one shard: its w, bit for bit
            for view, r in zip(self.views, results):
                self.block_sums[:, view.blocks] = r.block_sums
        sums, read = PassSums.zeros(self.problem.n_problems), ReadStats()
        for r in results:
            sums = _merged(sums, r.sums)
            read.read_seconds += r.read.read_seconds
            read.wait_seconds += r.read.wait_seconds
            read.bytes_read += r.read.bytes_read
        self.nsv = sum(r.support_vectors for r in results)
        return sums, read

    def _line_search(self, results: list[ShardRound]) -> None:
        """The step ``gamma`` along the shards' summed update that maximizes the dual
        (:func:`~blocksvm.solvers.dual_cd.dual_step`, from the sums the shards return), capped where the first
        alpha leaves its box; ``w`` and the block sums move exactly with it."""
        u = sum(r.w - self.w for r in results) / self.sigma
        sums = sum(r.steps.sum(axis=1) for r in results)
        self.gamma = dual_step(self.w, u, sums, np.min([r.limits for r in results], axis=0))
        self.w = self.w + self.gamma[:, None] * u
        for view, r in zip(self.views, results):
            self.block_sums[:, view.blocks] = stepped_sums(self.block_sums[:, view.blocks], r.steps, self.gamma)

    def evaluate(self) -> tuple[np.ndarray, int, float]:
        """Exact loss sums, correct rows and squared errors at ``w``, each shard evaluating its blocks."""
        parts = self.engine.evaluate(self.w)
        return tuple(sum(figures) for figures in zip(*parts))

    def weights(self) -> np.ndarray:
        return self.w

    dual_objectives = DualCDSolver.dual_objectives

    def pass_figures(self, total: dict) -> dict:
        violation = float(np.max(np.subtract(total["pg_max"], total["pg_min"]))) if total else None
        return {"pg_violation": violation, "nsv": self.nsv}

    def state(self) -> dict[str, np.ndarray]:
        arrays = {"w": self.w, "block_sums": self.block_sums}
        shards = self.engine.get()
        for shard in shards:  # the pending step taken: the shards' alphas are those of w
            shard.take_step(self.gamma)
        self.gamma = None
        # put back as they are: on dask they become the roots of the shards' futures, so the scheduler
        # forgets the rounds before and a lost shard is recomputed from this checkpoint
        self.engine.put(shards)
        for k, shard in enumerate(shards):
            arrays |= {f"shard{k}.{name}": value for name, value in shard.solver.state().items() if name != "w"}
        return arrays

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        for name in ("w", "block_sums"):
            if arrays[name].shape != getattr(self, name).shape:
                raise ValueError(f"state {name!r} has shape {arrays[name].shape}")
            setattr(self, name, np.array(arrays[name]))
        shards = self.engine.get()
        for k, shard in enumerate(shards):
            prefix = f"shard{k}."
            own = {name[len(prefix) :]: value for name, value in arrays.items() if name.startswith(prefix)}
            shard.solver.load_state({"w": shard.solver.w, **own})
        self.engine.put(shards)
        self.nsv = sum(s.solver.support_vectors() for s in shards)


def _merged(a: PassSums, b: PassSums) -> PassSums:
    """The sums of two shards' passes as one pass."""
    return PassSums(
        loss=(np.asarray(a.loss) + b.loss).tolist(),
        correct=a.correct + b.correct,
        rows=a.rows + b.rows,
        blocks=a.blocks + b.blocks,
        passes=a.passes + b.passes,
        updates=a.updates + b.updates,
        compute_seconds=a.compute_seconds + b.compute_seconds,
        figures=DualCDSolver.combine(a.figures, b.figures),
    )
