"""Choosing C by K-fold cross-validation out of core (``blocksvm tune``): every fold shares each block read.

::

    problems: K folds x train's problems (one, or one per class), side by side, each with its own alpha and w;
              problem (f, k) is train's problem k without the rows of fold f (a row's fold: Problem.fold_of
              its position in the store and the seed, a documented pure function)
    for C in the grid, increasing:
        alpha and w of every problem times C / C_before         (Chu, Ho, Chen & Lin, KDD 2015: a warm start)
        passes of block minimization until the stop rules hold  (each visit of a block updates every problem)
        one evaluation read: each problem's exact primal, each fold's predictions of its held-out rows
    best C: the highest CV accuracy (regression: the lowest CV mean squared error), the smallest C of ties

The CV accuracy is LIBLINEAR's: correct held-out predictions over all rows, each row predicted by the
models of its own fold. The default grid is LIBLINEAR's ``-C`` (``find_parameters`` in its ``linear.cpp``):
from ``calc_start_C`` (a C small for the data, a power of 2) doubling up to 1024; LIBLINEAR stops when no
fold's ``w`` changed over 5 values, this search when the CV score has not improved over ``patience``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from blocksvm._progress import progress_bar
from blocksvm.errors import ParameterError
from blocksvm.losses import EPSILON, LOGISTIC, REGRESSION
from blocksvm.model import LinearModel
from blocksvm.monitor import Monitor
from blocksvm.solvers import SOLVERS, Problem
from blocksvm.solvers.evaluate import evaluate_folds
from blocksvm.solvers.problem import fold_of
from blocksvm.store import BlockStore, ReadStats
from blocksvm.train.driver import run_pass, store_blocks
from blocksvm.train.loop import Trainer
from blocksvm.train.params import settle_tune
from blocksvm.train.records import PassSums, StopRules, relative_gap
from blocksvm.train.schedule import Schedule

MAX_C = 1024.0  # the default grid's last value (LIBLINEAR's max_C for -C)


@dataclass
class CVPoint:
    """Cross-validation at one C.

    Attributes
    ----------
    C : float
    score : float
        Held-out accuracy over all rows (regression: mean squared error).
    fold_scores : list of float
        The score of each fold's held-out rows.
    primal : float
        Mean over the folds of a fold's primal objective (the sum over its problems), exact.
    gap : float
        Largest relative duality gap over the folds' problems, exact.
    passes : int
        Passes over the store (one read each, every fold at once), the evaluation read not counted.
    seconds : float
    """

    C: float
    score: float
    fold_scores: list
    primal: float
    gap: float
    passes: int
    seconds: float

    @property
    def spread(self) -> float:
        """Standard deviation of the folds' scores."""
        return float(np.std(self.fold_scores))


@dataclass
class TuneResult:
    """What :func:`tune` returns: one :class:`CVPoint` per C tried, the best C and, with ``refit``, its model."""

    points: list
    best_C: float
    best_score: float
    metric: str
    folds: int
    stop_reason: str
    seconds: float
    model: LinearModel | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        points = [asdict(p) | {"spread": p.spread} for p in self.points]
        figures = {k: v for k, v in asdict(self).items() if k not in ("points", "model")}
        return figures | {"points": points}

    def table(self) -> str:
        """The search as a text table, the best C marked, and the best C."""
        percent = self.metric == "accuracy"
        name = "CV accuracy" if percent else "CV MSE"
        lines = [
            f"{'C':>12} {'log2 C':>7} {name + ' (± std over folds)':>28} {'primal (mean)':>14} {'passes':>6} "
            f"{'seconds':>8}"
        ]
        for p in self.points:
            score = f"{100 * p.score:.2f}% ± {100 * p.spread:.2f}" if percent else f"{p.score:.6g} ± {p.spread:.2g}"
            mark = "  <- best" if p.C == self.best_C else ""
            lines.append(
                f"{p.C:12.6g} {math.log2(p.C):7.2f} {score:>28} {p.primal:14.6e} {p.passes:6d} {p.seconds:8.2f}{mark}"
            )
        best = f"{100 * self.best_score:.2f}%" if percent else f"{self.best_score:.6g}"
        lines.append(f"best C = {self.best_C:g} ({name} {best}, {self.folds} folds; {self.stop_reason})")
        return "\n".join(lines)


class Tuner:
    """K-fold cross-validation over a grid of C on a block store, every fold's problems side by side.

    Parameters
    ----------
    store : BlockStore or path
    params : TrainParams
        train's parameters (C aside) for every fold's training.
    options : dict
        The tune options (:data:`blocksvm.params.TUNE_OPTIONS`): ``folds``, ``C_grid``, ``patience``, ``warm``.
    verbose : int, default=1
        0 silent, 1 one line per C.
    progress : bool, optional
        A bar over the blocks of each pass (default: when standard error is a terminal).
    """

    def __init__(self, store, params, options: dict, *, verbose: int = 1, progress: bool | None = None):
        self.store = store if isinstance(store, BlockStore) else BlockStore(store)
        self.params, self.options, self.progress = params, options, progress
        solver_class = SOLVERS[params.solver]
        base = Problem.from_store(self.store, params, solver_class.loss_of(params))
        _check_folds(self.store, options["folds"], params.seed)
        self.problem = base.folded(options["folds"], params.seed)
        self.solver_class = solver_class
        self.solver = None
        self.rules = StopRules(params, solver_class.stop_rules)
        self.monitor = Monitor(verbose=verbose)
        self.read_stats = ReadStats()
        self.outer = 0  # passes so far, over every C (each pass's block order is drawn from it)
        self.best_start = None  # the folds' solutions at the best C so far, averaged: refit's start

    @property
    def regression(self) -> bool:
        return self.problem.task == REGRESSION

    # ---- the search -----------------------------------------------------------------------

    def run(self) -> TuneResult:
        """Cross-validate every C of the grid (or LIBLINEAR's range, until ``patience`` runs out)."""
        started = time.perf_counter()
        grid = sorted(self.options["C_grid"]) if self.options["C_grid"] else None
        values = iter(grid) if grid else _doubling(self.start_C(), MAX_C)
        points: list[CVPoint] = []
        best, since_best, reason = None, 0, "every C of the grid"
        for C in values:
            point = self.solve_at(C)
            points.append(point)
            self.monitor.say(self._line(point))
            if best is None or self._better(point.score, best.score):
                best, since_best = point, 0
                self._keep_start()
            else:
                since_best += 1
            if grid is None and since_best >= self.options["patience"]:
                reason = f"no better score over the last {since_best} values of C"
                break
        else:
            if grid is None:
                reason = f"C reached {MAX_C:g}"
        metric = "mse" if self.regression else "accuracy"
        seconds = time.perf_counter() - started
        return TuneResult(points, best.C, best.score, metric, self.problem.folds, reason, round(seconds, 3))

    def start_C(self) -> float:
        """LIBLINEAR's ``calc_start_C`` for these data (one read): a power of 2 small enough that every fold's
        solution is still near zero, at most 1024."""
        loss, n = self.problem.loss, self.store.n_rows
        bias_sq = self.problem.bias**2 if self.problem.bias > 0 else 0.0
        largest, sum_y, slack = 0.0, 0.0, 0.0
        for block in self.store.iter_blocks(prefetch=self.params.prefetch):
            rows = np.repeat(np.arange(block.n_rows), np.diff(block.indptr))
            norms = np.bincount(rows, weights=np.square(block.data, dtype=np.float64), minlength=block.n_rows)
            largest = max(largest, float(norms.max(initial=0.0)) + bias_sq)
            y = np.abs(block.labels)
            sum_y += float(y.sum())
            slack += float(np.sum(np.maximum(y - loss.threshold, 0.0) ** 2))
        largest = max(largest, 1e-300)
        if loss.kind == EPSILON:
            start = 0.01 * slack / (8 * sum_y**2 * largest) if slack > 0 else MAX_C
        elif loss.kind == LOGISTIC or loss.quadratic == 0:
            start = 1.0 / (n * largest)
        else:
            start = 1.0 / (2 * n * largest)
        return min(2.0 ** math.floor(math.log2(start)), MAX_C)

    def _better(self, score: float, best: float) -> bool:
        return score < best if self.regression else score > best

    def _line(self, p: CVPoint) -> str:
        score = f"accuracy {100 * p.score:.2f}% ± {100 * p.spread:.2f}" if not self.regression else f"MSE {p.score:.6g}"
        return f"C {p.C:<10.4g} {score}  primal {p.primal:.6e}  gap {p.gap:.1e}  {p.passes} passes  {p.seconds:.2f} s"

    # ---- one C ----------------------------------------------------------------------------

    def solve_at(self, C: float) -> CVPoint:
        """Passes at ``C`` until the stop rules hold, confirmed by the evaluation read that scores the folds."""
        started = time.perf_counter()
        if self.solver is None:
            self.solver = self.solver_class(self.problem.with_C(C), self.params, self.store)
        else:
            self.solver.move_to(C, warm=self.options["warm"])
        passes, reason = 0, None
        while reason is None:  # every pass is judged exactly: the read that scores the folds is due anyway
            passes += 1
            record = self._pass(C, passes)
            losses, held = self._evaluate()
            primal = self._primals(losses)
            record |= {"primal_exact": True, "gap": relative_gap(primal, self.solver.dual_objectives())}
            reason = self.rules.reason(record, out_of_time=False)
        folds = self.problem.folds
        scores = held[:, 2] / held[:, 0] if self.regression else held[:, 1] / held[:, 0]
        pooled = held[:, 2].sum() / held[:, 0].sum() if self.regression else held[:, 1].sum() / held[:, 0].sum()
        mean_primal = float(primal.reshape(folds, -1).sum(axis=1).mean())
        seconds = time.perf_counter() - started
        return CVPoint(C, float(pooled), scores.tolist(), mean_primal, record["gap"], passes, round(seconds, 3))

    def _pass(self, C: float, passes: int) -> dict:
        """One pass over the store, every fold's problems at each block; the record the stop rules judge."""
        self.outer += 1
        p, n_blocks = self.params, self.store.n_blocks
        schedule = Schedule(p.seed, self.outer, shuffle=p.order == "random")
        sums = PassSums.zeros(self.problem.n_problems)
        bar = progress_bar(n_blocks, f"C {C:.4g} pass {passes}", unit="block", enabled=self.progress, leave=False)

        def after(block, report) -> bool:
            bar.update()
            return False

        blocks = store_blocks(self.store, schedule.order(n_blocks), prefetch=p.prefetch, stats=self.read_stats)
        try:
            run_pass(blocks, self.solver, schedule, sums, after)
        finally:
            blocks.close()
            bar.close()
        return {"outer": passes, "pg_violation": self.solver.pass_figures(sums.figures)["pg_violation"]}

    def _primals(self, loss_sums: np.ndarray) -> np.ndarray:
        """Each problem's primal objective, given its ``sum C_i loss_i`` over its training rows."""
        return sum(self.solver.objective_terms(self.solver.weights(), loss_sums).values())

    def _evaluate(self) -> tuple[np.ndarray, np.ndarray]:
        """One read at the current weights: each problem's loss sum and each fold's held-out counts
        (:func:`~blocksvm.solvers.evaluate.evaluate_folds`)."""
        W, problem = self.solver.weights(), self.solver.problem
        losses, held = np.zeros(problem.n_problems), np.zeros((problem.folds, 3))
        for block in self.store.iter_blocks(prefetch=self.params.prefetch, stats=self.read_stats):
            block_losses, block_held = evaluate_folds(problem, W, block)
            losses += block_losses
            held += block_held
        return losses, held

    # ---- the model at the best C ----------------------------------------------------------

    def _keep_start(self) -> None:
        """Keep the folds' solutions at this C, averaged, as refit's start: each row is a training row of K - 1
        folds, so the mean of its K - 1 alphas is in its box and ``sum_f w_f / (K - 1)`` is their ``w``."""
        if not self.options.get("refit"):
            return
        K, n_k = self.problem.folds, self.problem.per_fold
        alpha = self.solver.alpha.reshape(K, n_k, -1).sum(axis=0) / (K - 1)
        w = self.solver.w.reshape(K, n_k, -1).sum(axis=0) / (K - 1)
        self.best_start = (alpha, w)

    def refit(self, C: float, verbose: int = 1) -> LinearModel:
        """Train on every row at ``C``, started from the folds' solutions at ``C`` (kept by the search)."""
        trainer = Trainer(self.store, replace(self.params, C=C), verbose=verbose, progress=self.progress)
        if self.best_start is not None:
            alpha, w = self.best_start
            trainer.solver.alpha[...] = alpha
            trainer.solver.w[...] = w
        return trainer.run().model


def _doubling(start: float, stop: float):
    """``start, 2 start, 4 start, ...`` up to ``stop``."""
    C = start
    while C <= stop:
        yield C
        C *= 2.0


def _check_folds(store: BlockStore, folds: int, seed: int) -> None:
    """Every fold holds rows (one line saying which does not)."""
    counts = np.zeros(folds, np.int64)
    for first in range(0, store.n_rows, 1 << 20):
        rows = np.arange(first, min(first + (1 << 20), store.n_rows))
        counts += np.bincount(fold_of(rows, seed, folds), minlength=folds)
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        raise ParameterError(
            f"folds={folds}: fold {int(empty[0])} holds none of the {store.n_rows:,} rows of {store.path}; "
            "use fewer folds"
        )


def tune(store, params=None, *, verbose: int = 1, progress: bool | None = None, **options) -> TuneResult:
    """Choose C by K-fold cross-validation on a block store, every fold sharing each block read.

    Parameters
    ----------
    store : BlockStore or path
        Training data, from :func:`blocksvm.convert`; or a LIBSVM text file (cached as for :func:`train`).
    params : TrainParams, optional
        The training parameters of every fold's training (C aside: the grid gives it).
    verbose : int, default=1
        0 silent, 1 one line per C (and refit's lines).
    progress : bool, optional
        A bar over the blocks of each pass (default: when standard error is a terminal).
    **options
        Training parameters (``loss``, ``tol``, ``bias``, ``seed``, ...), ``cache_dir`` and the tune options:
        ``folds`` (default 5), ``C_grid`` (values of C; default: LIBLINEAR's ``-C`` range), ``patience``,
        ``warm``, ``refit`` (a path: train on all rows at the best C and write the model there).
        docs/PARAMETERS.md lists them.

    Returns
    -------
    TuneResult
        The table (``points``), ``best_C``, ``best_score`` and, with ``refit``, the ``model``.

    Examples
    --------
    >>> result = tune("a9a.bsvm", folds=5, C_grid=(0.25, 0.5, 1, 2))   # doctest: +SKIP
    >>> print(result.table())                                            # doctest: +SKIP
    """
    params, run, options = settle_tune(params, options)
    from blocksvm.io.text_cache import say_to_stderr, store_or_cached

    say, bars = (say_to_stderr if verbose else None), (progress if verbose else False)
    store = store_or_cached(store, run.cache_dir, say=say, progress=bars)
    tuner = Tuner(store, params, options, verbose=verbose, progress=bars)
    result = tuner.run()
    if options["refit"]:
        result.model = tuner.refit(result.best_C, verbose=verbose)
        result.model.summary["tune"] = result.to_dict()
        result.model.save(options["refit"])
    return result
