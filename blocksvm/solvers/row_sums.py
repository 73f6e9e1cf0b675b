"""The row-sum learners: passes that are sums over rows (Newton, OWL-QN), on the staged bookkeeping.

Such a learner says before a pass what the pass computes (:meth:`RowSumSolver.request`: small and picklable);
:meth:`RowSumSolver.mapper` is a pure function from a piece of rows to its sums (a dict of arrays that add), the
engines (:mod:`blocksvm.train.engines`) run it on threads or dask workers and push the pieces' sums into the
learner's tree in a fixed order (:mod:`blocksvm.sums`), and at the pass's end the staged base's ``step`` takes the
learner's step from the total.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blocksvm.solvers.base import ROW_SUMS, Resources
from blocksvm.solvers.evaluate import kernel_weights
from blocksvm.solvers.staged import StagedSolver
from blocksvm.sums import TreeSum


@dataclass
class PassRequest:
    """What a pass of Newton's or OWL-QN's sums: each problem's kind (its kernels' NONE, HV, VALUE), first step and
    vector slots (see the kernels' ``piece_sums``), the weights ``W`` and directions ``D``, and how many vectors of
    sums there are."""

    kinds: np.ndarray
    alphas: np.ndarray
    slots: np.ndarray
    W: np.ndarray
    D: np.ndarray
    n_slots: int


class PieceMapper:
    """A piece of rows' sums for a :class:`PassRequest`, by the ``piece_sums`` of a pass learner's kernels
    (``kernels``, a class attribute: an instance pickles as the problem alone, no state vectors)."""

    kernels = None  # the learner's kernel module

    def __init__(self, problem):
        self.problem = problem

    def hyper(self) -> tuple:
        """The problem's constants the kernels read."""
        return (self.problem.bias, self.problem.loss.table)

    def __call__(self, rows, first_row: int, request: PassRequest) -> dict[str, np.ndarray]:
        p = self.problem
        if p.folds == 1:
            member = np.ones((p.n_problems, rows.n_rows), np.bool_)
        else:
            folds = p.row_folds(np.arange(first_row, first_row + rows.n_rows))
            member = folds[None, :] != p.held_out[:, None]
        scalars = np.zeros((p.n_problems, self.kernels.N_SCALARS))
        vectors = np.zeros((request.n_slots, p.n_weights))
        self.kernels.piece_sums(
            (rows.indptr, rows.indices, rows.data, kernel_weights(rows)),
            p.targets(rows.labels),
            p.costs,
            member,
            request.W,
            request.D,
            (request.kinds, request.alphas, request.slots),
            self.hyper(),
            scalars,
            vectors,
        )
        return {"scalars": scalars, "vectors": vectors}


class RowSumSolver(StagedSolver):
    """A learner whose pass is a sum over rows (a gradient, a Hessian-vector product, loss values), and whose step
    is taken at the end of the pass from the total.

    Before a pass the learner says what the pass computes (:meth:`request`: a small, picklable question, with
    the vectors it needs); :meth:`mapper` is a pure function from a piece of rows to its sums (a dict of float64
    arrays that add, :mod:`blocksvm.sums`), the same for every piece of the pass; the engines
    (:mod:`blocksvm.train.engines`) run it on threads or dask workers and push the pieces' sums into
    :attr:`tree` in a fixed order, so the total is the same bits for any number of threads or workers; at the
    pass's end the staged base's ``step`` takes the learner's step from the total. An iteration (one history
    record) may take several passes (Newton: a gradient, then one pass per conjugate-gradient step): ``step`` says
    when one ended. A checkpoint inside a pass holds the tree's nodes so far (its :meth:`state`).

    The engines keep the store's blocks in memory after the first pass when they fit in the run's memory budget
    (:class:`blocksvm.store.KeptBlocks`; on each shard, its share), and the later passes read nothing.
    """

    reads = ROW_SUMS

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.tree = TreeSum()

    def request(self):
        """What the coming pass computes (the same for every block of it): sent to every engine's worker."""
        raise NotImplementedError

    def mapper(self):
        """The pure map of the pass: ``mapper(rows, first_row, request) -> sums`` (``first_row``: the store-wide
        position of the rows' first), with ``mapper.problem``; picklable, light (no state vectors)."""
        raise NotImplementedError

    def end_pass(self) -> bool:
        total, self.tree = self.tree.total(), TreeSum()
        return self.step(total)

    # the shards' face (blocksvm.train.engines.Rounds): every shard sums its pieces from the same request
    def broadcast(self):
        return self.request()

    def reduce(self, results: list) -> None:
        """The shards' nodes, in the shards' order, into the pass's tree."""
        for result in results:
            self.tree.extend(result.nodes)

    def state(self) -> dict[str, np.ndarray]:
        return {**super().state(), **self.tree.state()}

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        self.tree = TreeSum.from_state(arrays)
