"""Learners that read the store by columns: LIBLINEAR's coordinate descent solvers of the L1 problems.

LIBLINEAR's -s 5 (CDN) and -s 6 (newGLMNET) move one weight at a time, each move reading one column of the data
and updating one number per row (the slacks ``b_i`` or the decision values ``t_i``, kept for every row). Here the
columns come from the store's column layout (:mod:`blocksvm.store.columns`, blocks of consecutive features), and a
pass is one **round** over a fixed partition of the features into ``column_pieces`` pieces (contiguous ranges of
column blocks, :class:`blocksvm.store.ColumnPieces`): every piece starts from the round's request (the weights and
the per-row vectors), works on its own features with a private copy of the per-row vectors, and returns its
weights and its per-row vectors; the driver combines them in the pieces' order (:meth:`ColumnSolver.reduce`). With
one piece this is LIBLINEAR's algorithm; with more it is a block-Jacobi step (d-GLMNET, Trofimov & Genkin 2016)
whose model depends on the partition only, never on the threads or workers that ran the pieces.

A learner is a :class:`~blocksvm.solvers.staged.StagedSolver` (its problems' stages, its ``_serve``, ``_begin``)
whose passes are rounds: :meth:`ColumnSolver.broadcast` is the round's :class:`ColumnRequest`, its
:meth:`ColumnSolver.worker` (small, picklable: the kernels' constants) does a piece's work where the piece runs
(:meth:`ColumnWorker.round`), and the engines (:class:`blocksvm.train.engines.ColumnRounds`) run the pieces
(:class:`blocksvm.store.ColumnPieces`) on threads or dask workers.

Rows enter the kernels as one number each per problem, ``yc_i = y_i C_i`` (``y_i`` the ±1 target, ``C_i`` its
class's cost times its instance weight; 0 for a row the problem does not train on: a held-out fold's, or of weight
0): :func:`signed_costs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from blocksvm.params import COLUMN_PIECES, EPS, LOSS, THREADS, WORKERS, C
from blocksvm.solvers._cdn_kernels import decisions_add
from blocksvm.solvers._glmnet_kernels import curvature_at_zero, slope_at_zero
from blocksvm.solvers.base import COLUMNS, Resources
from blocksvm.solvers.staged import ITERATIONS, PASSES, StagedSolver

NONE = 0  # what a problem asks of a round: nothing
READ = 2  # the third entry of ``counts``: column entries read in the current iteration
# A problem's numbers that every column learner keeps, the first columns of ``numbers`` (a learner's own follow):
# the objective now and before, the largest violation now and at the last iteration, their 1-norm now and at the
# start, the tolerance, the last step, the rows trained on.
F, F_OLD, GMAX, GMAX_OLD, GNORM1, GNORM1_INIT, TOL, STEP, ROWS = range(9)
N_SHARED = 9


@dataclass
class ColumnRequest:
    """What every piece of a round starts from.

    Attributes
    ----------
    kinds : ndarray (n_problems,)
        What each problem asks (the learner's codes; NONE: nothing).
    yc : ndarray (n_problems, n_rows)
        ``y_i C_i`` of every row (:func:`signed_costs`).
    W : ndarray (n_problems, n_weights)
        The weights.
    rows : dict of ndarray (n_problems, n_rows)
        The learner's per-row vectors (CDN's slacks ``b``; newGLMNET's ``tau``, ``D``).
    features : dict of ndarray (n_problems, n_weights)
        The learner's per-feature vectors (the active sets, newGLMNET's gradient and Hessian diagonal).
    numbers : ndarray (n_problems, n)
        The learner's per-problem numbers the pieces read.
    key : tuple of int
        The round's identity ``(seed, iteration, pass)``: with a block's index and the problem, the seed of its
        columns' random order (:func:`block_seed`).
    """

    kinds: np.ndarray
    yc: np.ndarray
    W: np.ndarray
    rows: dict = field(default_factory=dict)
    features: dict = field(default_factory=dict)
    numbers: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    key: tuple = (0, 0, 0)


def block_seed(key: tuple, block: int, k: int) -> np.ndarray:
    """The random state (a uint64 array of one, for ``_common.shuffle_prefix``) of problem ``k``'s column order in
    ``block`` in the round ``key``: a pure function of them, whoever runs the piece."""
    return np.random.SeedSequence([*key, block, k]).generate_state(1, np.uint64)


NO_COLUMN = (np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))
"""A column block of no column: what a block's sweep is given for the bias column where another block carries it."""


def bias_carriers(piece, key: tuple, n_problems: int) -> np.ndarray:
    """Each problem's block (its position among ``piece``'s blocks) whose random order takes the bias column this
    round (``key``), -1 where the piece owns none: drawn with odds as the blocks' stored columns, so that the bias
    feature takes a place about uniformly among the piece's columns, as in LIBLINEAR's order of every feature (always
    last, it took the classes' balance after every other weight had moved: -s 6 ended further from the optimum)."""
    if piece.bias_column() is None:
        return np.full(n_problems, -1)
    ends = np.cumsum(piece.block_columns)
    draws = [int(block_seed(key, piece.layout.n_blocks, k)[0] % np.uint64(ends[-1])) for k in range(n_problems)]
    return np.searchsorted(ends, draws, side="right")


def signed_costs(problem, labels: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """``yc`` (n_problems, n_rows): each row's target times its cost (class cost times instance weight), 0 where
    the problem does not train on it (its held-out fold)."""
    targets = problem.targets(labels)
    cost = np.where(targets > 0, problem.costs[:, 1:2], problem.costs[:, 0:1])
    yc = targets * cost
    if weights is not None:
        yc = yc * weights[None, :]
    if problem.folds > 1:
        member = problem.row_folds(np.arange(len(labels)))[None, :] != problem.held_out[:, None]
        yc = np.where(member, yc, 0.0)
    return np.ascontiguousarray(yc)


def loss_at_zero(columns, problem):
    """The loss's gradient and Hessian diagonal at ``w = 0``, ``sum_i C_i l'(y_i, 0) x_ij`` and ``sum_i C_i
    l''(y_i, 0) x_ij^2`` (each (n_problems, n_weights), the bias feature's last), from the statistics of the store's
    columns (``columns``: :class:`blocksvm.store.ColumnPieces`, with the rows' labels and weights) with no read of
    the data; None when they cannot give it (a layout that keeps totals only, of more classes than it keeps apart).

    At ``t = 0`` every row of class ``c`` has ``C_i l' = C_kc w_i l'(y_kc, 0)`` (``C_kc``: problem ``k``'s cost of
    class ``c``, ``w_i`` its instance weight), so the sums over rows are sums over classes of the layout's ``sums``
    and ``squares`` (weighted sums by class); the bias column's from the rows' classes and weights."""
    labels, weights = columns.labels, columns.row_weights
    classes = problem.classes
    if columns.stat_classes != len(classes):
        return None
    targets = problem.targets(classes)  # (n_problems, n_classes): each class's target in each problem
    cost = np.where(targets > 0, problem.costs[:, 1:2], problem.costs[:, 0:1])
    table = problem.loss.table
    slope = cost * np.vectorize(lambda y: slope_at_zero(table, y))(targets)
    curvature = cost * np.vectorize(lambda y: curvature_at_zero(table, y))(targets)
    grad = np.zeros((problem.n_problems, problem.n_weights))
    hdiag = np.zeros_like(grad)
    for b in range(columns.n_blocks):
        stats = columns.statistics(b)
        grad[:, stats.features] = slope @ stats.sums.T
        hdiag[:, stats.features] = curvature @ stats.squares.T
    if problem.bias > 0:  # the bias column: every row of class c, value B
        per_class = np.bincount(np.searchsorted(classes, labels), weights, len(classes))
        grad[:, -1] = slope @ per_class * problem.bias
        hdiag[:, -1] = curvature @ per_class * problem.bias**2
    return grad, hdiag


class ColumnWorker:
    """A piece's work in a round (:meth:`round`): a learner's is a subclass holding the kernels' constants only, so
    that it pickles small for dask workers."""

    def __init__(self, loss, bias: float, n_rows: int):
        self.n_rows = n_rows

    def round(self, piece, request: ColumnRequest) -> dict:
        """The piece's results: arrays over its weights (``piece.weights``) and per-row vectors, and ``read``."""
        raise NotImplementedError


class ColumnSolver(StagedSolver):
    """A staged learner whose passes are rounds over the pieces of the column layout; see the module docstring.

    Its columns come with its resources (``resources.columns``: :class:`blocksvm.store.ColumnPieces`, the layout's
    door: the rows' labels and weights, the statistics, the pieces' weights); ``yc`` is kept for every row. What the
    column learners share is here, written once: their parameters, their numbers' first columns (:data:`F` ...
    :data:`ROWS`) and LIBLINEAR's tolerance of each problem, the active features, the restart from ``w`` (the
    learner's per-row vectors made from ``w.x``: :meth:`_rows_at`), the record's figures. A subclass declares its
    ``worker_class`` and ``STAGES`` and writes :meth:`kinds`, :meth:`request_for` (its part of the round's request),
    :meth:`_rows_at`, :meth:`_right` and the staged learner's ``_serve``, ``_begin`` and ``_judge``; ``_serve`` reads
    the round's results from ``total`` (the pieces' in order, combined by :meth:`combined`).
    """

    reads = COLUMNS
    params = (C, LOSS, EPS, COLUMN_PIECES, WORKERS, THREADS)
    penalties = ("l1",)
    stop_rules = frozenset({"solver"})
    worker_class: type[ColumnWorker] = ColumnWorker
    n_counts = 3  # iterations done, passes in the current one, column entries read in it
    n_numbers = N_SHARED
    F, F_OLD, NORM, NORM0, TOL, STEP = F, F_OLD, GNORM1, GNORM1_INIT, TOL, STEP
    norm_figure, passes_figure = "subgradient_norm", "rounds"
    norm_words = "subgradient norm"
    weight_vectors = ("w",)

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.columns = self.resources.columns
        self.labels, self.row_weights = self.columns.labels, self.columns.row_weights
        self.yc = signed_costs(problem, self.labels, self.row_weights)
        self.n_rows = len(self.labels)
        self.active = np.ones((problem.n_problems, problem.n_weights), np.bool_)
        self.seed = params.seed
        self.piece_weights = self.columns.piece_weights  # the weights of each piece, in the pieces' order
        self.n_pieces = len(self.piece_weights)
        self.results: list = []
        self._work = np.empty(problem.n_weights)  # (a vector of the weights' size reused, not allocated each time)

    def _start_numbers(self) -> None:
        """Each problem's rows trained on and its tolerance, LIBLINEAR's ``eps * max(min(#pos, #neg), 1) / l``, and
        no last violation yet (nothing shrunk in the first iteration)."""
        positive = np.count_nonzero(self.yc > 0, axis=1)
        rows = positive + np.count_nonzero(self.yc < 0, axis=1)
        self.numbers[:, ROWS] = np.maximum(rows, 1)
        self.numbers[:, TOL] = self.tolerance(positive, rows)
        self.numbers[:, GMAX_OLD] = np.inf

    def l1(self, v: np.ndarray) -> float:
        """``||v||_1`` of a vector of the weights' size (numpy's sum of its absolute values, in an array kept for
        them)."""
        return float(np.abs(v, out=self._work).sum())

    def _rows_at(self, t) -> None:
        """The learner's per-row vectors at decision values ``t`` ((n_problems, n_rows), or 0.0 at ``w = 0``)."""
        raise NotImplementedError

    def _right(self, k: int) -> np.ndarray:
        """Which rows problem ``k`` classifies right (its per-row vectors say)."""
        raise NotImplementedError

    # ---- rounds -------------------------------------------------------------------------------------

    def worker(self) -> ColumnWorker:
        return self.worker_class(self.problem.loss.table, self.problem.bias, self.n_rows)

    def request_for(self, kinds: np.ndarray) -> dict:
        """The learner's parts of the round's request (``rows``, ``features``, ``numbers``)."""
        return {}

    def kinds(self) -> np.ndarray:
        """What each problem asks of the coming round."""
        raise NotImplementedError

    def broadcast(self) -> ColumnRequest:
        kinds = self.kinds()
        key = (int(self.seed), int(self.counts[ITERATIONS]), int(self.counts[PASSES]))
        return ColumnRequest(kinds, self.yc, self.w, key=key, **self.request_for(kinds))

    def request(self) -> ColumnRequest:
        return self.broadcast()

    def reduce(self, results: list) -> None:
        """The pieces' results of the round, in the pieces' order (the step comes with :meth:`end_pass`)."""
        self.results = results
        self.counts[READ] += sum(int(r["read"]) for r in results)

    def end_pass(self) -> bool:
        total, self.results = {"pieces": self.results}, []
        return self.step(total)

    def _plan(self) -> tuple[np.ndarray, np.ndarray, int]:
        n_k = self.n_problems
        return self.kinds(), np.zeros((n_k, 0), np.int64), 0

    @staticmethod
    def combined(results: list, name: str, start: np.ndarray, k: int) -> np.ndarray:
        """Problem ``k``'s array ``name`` over every weight: the pieces' values over their weights (each result's
        ``index``), ``start[k]``'s where no piece gives one. One piece over every weight gives its own row (no
        copy: its arrays are fresh from its round)."""
        if len(results) == 1 and results[0]["index"] == slice(0, start.shape[1]):
            return results[0][name][k]
        out = start[k].copy()
        for result in results:
            out[result["index"]] = result[name][k]
        return out

    def passes_read(self) -> float:
        """Column entries read in the current iteration, in passes over the data (entries / nnz)."""
        return float(self.counts[READ]) / max(self.columns.nnz, 1)

    # ---- the run --------------------------------------------------------------------------------------

    def restart(self) -> None:
        """Start over from the current ``w``: the per-row vectors at ``w.x`` (a warm start's: one read of the
        columns), every feature active, the tolerances."""
        super().restart()
        self._rows_at(self.decisions() if np.any(self.w) else 0.0)
        self.active[:] = True
        self._start_numbers()

    def move_to(self, C: float, warm: bool = True) -> None:
        """Solve the same problems at cost ``C`` next (the rows' costs with it), from the current ``w`` or zero."""
        self.problem = self.problem.at(C)
        self.yc = signed_costs(self.problem, self.labels, self.row_weights)
        if not warm:
            self.w[...] = 0.0
        self.restart()

    def decisions(self) -> np.ndarray:
        """``w.x_i`` of every row and problem, (n_problems, n_rows): one read of the columns (a warm start's), counted
        in the iteration's entries read."""
        t = np.zeros((self.n_problems, self.n_rows))
        for block in self.columns.iter_blocks(statistics=False):
            for k in range(self.n_problems):
                self.counts[READ] += decisions_add(block.csc, self.w[k], t[k])
        if self.problem.bias > 0:
            t += self.w[:, -1:] * self.problem.bias
        return t

    # ---- records --------------------------------------------------------------------------------------

    def _more_figures(self) -> dict:
        one = self.n_problems == 1 and self.problem.folds == 1
        return {
            "column_passes": round(self.passes_read(), 4),
            "active_features": int(self.active.sum()),
            "nonzero_weights": int(np.count_nonzero(self.w[:, :-1])),
            "train_accuracy": self.accuracy(0, self._right(0)) if one else None,
        }

    def accuracy(self, k: int, right: np.ndarray) -> float:
        """The share of problem ``k``'s trained rows (by instance weight) where ``right`` is True."""
        trained = self.yc[k] != 0
        weight = trained.astype(np.float64) if self.row_weights is None else np.where(trained, self.row_weights, 0.0)
        return float(weight[right].sum()) / max(float(weight.sum()), 1e-300)
