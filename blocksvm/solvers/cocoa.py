"""CoCoA+ rounds of dual CD: its shards (each a dual-CD solver over a share of the blocks) and their coordinator's step.

CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtarik & Takac, ICML 2015; Smith et al., JMLR 2018) with adding
(gamma = 1) and sigma' = K. The store's blocks are dealt to K shards (block ``b`` to shard ``b mod K``). Each
round, every shard

1. starts from the current ``w`` (:meth:`CoCoAShard.begin`, after taking the last round's scaled step),
2. makes one pass of block minimization over its blocks (blocks in a random order, its working set
   included) on its local subproblem: dual CD whose steps move the local ``w_k = w + sigma' dw_k`` and whose
   curvature is ``sigma' ||x_i||^2 + D_ii``,
3. returns ``w_k`` and its blocks' dual sums (:meth:`CoCoAShard.end`).

The coordinator (:class:`CoCoASolver`) adds the updates: ``w + sum_k dw_k = mean_k w_k`` (with sigma' = K), so ``w =
sum_i alpha_i y_i x_i`` still holds and the dual objective stays exact from the per-block sums: the duality
gap, the stop rule and the certificate are the serial trainer's. With the line search (the hinge family) it
scales the summed step by the ``gamma`` that maximizes the dual instead. With K = 1 a round is a serial pass,
bit for bit. docs/PARALLEL.md has the guarantee, the costs and the scale on paper.

Where the rounds run (threads or dask workers) is the engines' business (:mod:`blocksvm.train.engines`): a
round of a shard is a pure function of (shard, w, round) there, so dask may run it again after a worker dies.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from blocksvm._threads import ThreadMap
from blocksvm.errors import ParameterError
from blocksvm.losses import MARGIN
from blocksvm.solvers.base import Resources, Solver
from blocksvm.solvers.dual_cd import DualCDSolver, dual_step, pass_violation, step_terms


@dataclass
class ShardRound:
    """What a shard sends back after a round: ``w`` is its local ``w + sigma' dw``."""

    w: np.ndarray
    sums: object  # the round's PassSums
    block_sums: np.ndarray  # (n_problems, the shard's blocks, 2)
    support_vectors: int
    read: object  # its ReadStats
    steps: np.ndarray | None = None  # the line search's per-block sums (CoCoAShard.step_sums)
    limits: np.ndarray | None = None  # ... and the largest step in the box, per problem


class CoCoAShard:
    """One shard: its blocks (a view with ``n_blocks``, ``n_rows``, ``row_offsets``, ``read_block``), their dual
    variables and working set (a dual-CD solver over the shard, with curvature ``sigma``), and, with the line
    search, the start of its round: the step the coordinator scales is ``alpha - alpha_start``."""

    mutable = True  # a round changes it: an engine that may run a round twice runs it on a copy

    def __init__(self, index: int, view, problem, params, sigma: float, line_search: bool, memory: float):
        self.index, self.view, self.params = index, view, params
        local = dataclasses.replace(problem, n_rows=view.n_rows, n_blocks=view.n_blocks, row_offsets=view.row_offsets)
        self.problem = local
        # its tasks on --threads threads where the shard runs (pickled without them: a worker starts its own)
        resources = Resources(blocks=view, memory=memory, map=ThreadMap(params.threads).map)
        self.solver = DualCDSolver(local, params, resources)
        self.solver.sigma = float(sigma)
        # each row's class in each problem (1: positive), for its D_ii and upper bound in the line search, and
        # its instance weight (C_i = C weight_i)
        self.positive = np.zeros((local.n_problems, view.n_rows), np.int8) if line_search else None
        self.row_weights = np.ones(view.n_rows) if line_search and local.weighted else None
        self.start: tuple[np.ndarray, np.ndarray] | None = None  # (alpha, block sums) while a step is pending
        self.steps: np.ndarray | None = None  # the pending step's sums per block, (n_problems, blocks, 3)

    # ---- a round ----------------------------------------------------------------------------------

    def begin(self, broadcast: tuple, outer: int, engine):
        """Start a round from the coordinator's ``(W, gamma)``: first the last round's step scaled by ``gamma``;
        return the learner that visits the shard's blocks and what to do after each visit (``engine``: the shard's
        threads, which its learner's resources already have)."""
        W, gamma = broadcast
        self.take_step(gamma)
        self.solver.w[...] = W
        self.solver.start_pass(outer)
        if self.positive is None:
            return self.solver, None
        self.start = (self.solver.alpha.copy(), self.solver.block_sums.copy())

        def after(block, report) -> bool:  # each row's class (and weight), from the blocks as they pass
            rows = slice(block.row_offset, block.row_offset + block.n_rows)
            self.positive[:, rows] = self.problem.targets(block.labels) > 0
            if self.row_weights is not None:
                self.row_weights[rows] = block.weights
            return False

        return self.solver, after

    def blocks(self, order: np.ndarray, stats):
        """``(store-wide index, block as the shard's)`` in ``order`` (the store-wide index seeds the visit)."""
        return self.view.keyed_blocks(order, prefetch=self.params.prefetch, stats=stats)

    def end(self, sums, read) -> ShardRound:
        solver = self.solver
        result = ShardRound(solver.w.copy(), sums, solver.block_sums.copy(), solver.support_vectors(), read)
        if self.positive is not None:
            result.steps, result.limits = self.step_sums()
            self.steps = result.steps
        return result

    # ---- the line search's step ---------------------------------------------------------------------

    def take_step(self, gamma: np.ndarray | None) -> None:
        """Apply the pending step scaled by the coordinator's ``gamma`` (n_problems,): ``alpha = alpha_start +
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
            D, U = diag[self.positive[k]], upper[self.positive[k]]
            if self.row_weights is not None:  # D_ii = D / weight_i, U_i = U weight_i (weight 0: d_i = 0, no terms)
                w = self.row_weights
                with np.errstate(invalid="ignore"):  # (inf * 0: a row of weight 0 has no bound, and no step)
                    D, U = np.divide(D, w, out=np.zeros(len(w)), where=w > 0), U * w
            terms, limits[k] = step_terms(start[k], d[k], D, U)
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


class CoCoASolver(Solver):
    """Dual CD over K shards in CoCoA+ rounds, seen by the loop as one solver that makes whole passes.

    The coordinator holds ``w`` and every block's dual sums; the shards hold ``alpha`` and their working sets, kept by
    an engine (``keep(shards)``, ``collect()``: in this process or on dask workers), which runs the rounds:
    each pass, every shard's round from :meth:`broadcast`, then :meth:`reduce` of their results.
    """

    name = DualCDSolver.name
    stop_rules = DualCDSolver.stop_rules
    combine = staticmethod(DualCDSolver.combine)

    def __init__(self, problem, params, views: list, engine, memory: float):
        super().__init__(problem, params)
        self.n_shards = len(views)
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
        self.views = views
        self.engine = engine
        shards = [CoCoAShard(k, v, problem, params, self.sigma, self.line_search, memory) for k, v in enumerate(views)]
        engine.keep(shards)
        self.w = np.zeros((problem.n_problems, problem.n_weights))
        self.block_sums = np.zeros((problem.n_problems, problem.n_blocks, 2))
        self.gamma: np.ndarray | None = None  # the last round's step, which the shards take at the next
        self.nsv = 0

    def broadcast(self) -> tuple:
        """What every shard starts a round from: ``w`` and the last round's step."""
        return self.w, self.gamma

    def reduce(self, results: list[ShardRound]) -> None:
        """The round's step: the shards' updates added (``w`` = the mean of theirs, with sigma' = K), or scaled by
        the exact line search on the dual."""
        if self.line_search:
            self._line_search(results)
        else:
            self.w = np.mean([r.w for r in results], axis=0)  # of one shard: its w, bit for bit
            for view, r in zip(self.views, results):
                self.block_sums[:, view.blocks] = r.block_sums
        self.nsv = sum(r.support_vectors for r in results)

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

    def weights(self) -> np.ndarray:
        return self.w

    dual_objectives = DualCDSolver.dual_objectives

    def refresh_resident_sums(self) -> None:
        """(The shards keep no rows of their own in memory: their dual sums are all in block_sums.)"""

    def pass_figures(self, total: dict) -> dict:
        return {**pass_violation(total, self.problem.loss), "nsv": self.nsv}

    def state(self) -> dict[str, np.ndarray]:
        arrays = {"w": self.w, "block_sums": self.block_sums}
        shards = self.engine.collect()
        for shard in shards:  # the pending step taken: the shards' alphas are those of w
            shard.take_step(self.gamma)
        self.gamma = None
        # kept again as they are: on dask they become the roots of the shards' futures, so the scheduler
        # forgets the rounds before and a lost shard is recomputed from this checkpoint
        self.engine.keep(shards)
        for k, shard in enumerate(shards):
            arrays |= {f"shard{k}.{name}": value for name, value in shard.solver.state().items() if name != "w"}
        return arrays

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        for name in ("w", "block_sums"):
            if arrays[name].shape != getattr(self, name).shape:
                raise ValueError(f"state {name!r} has shape {arrays[name].shape}")
            setattr(self, name, np.array(arrays[name]))
        shards = self.engine.collect()
        for k, shard in enumerate(shards):
            prefix = f"shard{k}."
            own = {name[len(prefix) :]: value for name, value in arrays.items() if name.startswith(prefix)}
            shard.solver.load_state({"w": shard.solver.w, **own})
        self.engine.keep(shards)
        self.nsv = sum(s.solver.support_vectors() for s in shards)
