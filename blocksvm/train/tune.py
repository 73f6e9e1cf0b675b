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
models of its own fold (with instance weights, each row counted by its weight). The default grid is LIBLINEAR's
``-C`` (``find_parameters`` in its ``linear.cpp``): from ``calc_start_C`` (a C small for the data, a power of 2)
doubling up to 1024 (LIBLINEAR's -C does not search its L1 problems, -s 5 and 6: with an L1 penalty the start is
the power of 2 below the largest C whose solution is zero, glmnet's lambda_max); LIBLINEAR stops when no fold's
``w`` changed over 5 values, this search when the CV score has not improved over ``patience``.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np

from blocksvm.checkpoint import Checkpoint, writing
from blocksvm.errors import CheckpointError, ParameterError
from blocksvm.losses import EPSILON, LOGISTIC, REGRESSION
from blocksvm.model import LinearModel
from blocksvm.monitor import Monitor
from blocksvm.solvers import SOLVERS, Problem
from blocksvm.solvers.evaluate import evaluate_folds
from blocksvm.solvers.problem import empty_fold
from blocksvm.store import BlockStore, ReadStats, reading
from blocksvm.train import engines
from blocksvm.train.driver import PassRun
from blocksvm.train.loop import Trainer, TrainResult, checkpointer_of, read_resumed
from blocksvm.train.params import settle_tune
from blocksvm.train.records import PassSums, StopRules, relative_gap
from blocksvm.train.signals import StopRequest, deferred_signals
from blocksvm.train.snapshot import check_fits, differences, store_identity

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
        Largest relative duality gap over the folds' problems, exact (NaN for Newton, which has no dual).
    passes : int
        Passes over the data (every fold at once; dual CD: one read each; Newton: from memory when the store fits),
        the evaluation read not counted.
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
    """What :func:`tune` returns: one :class:`CVPoint` per C tried, the best C and, with ``refit``, its model.

    A search stopped by a signal (``interrupted``; with a checkpoint only) holds the values of C finished before
    it; ``best_C`` and ``best_score`` are None if none was. A refit stopped by a signal is ``interrupted`` too, its
    ``model`` written all the same (what it learned is kept; its ``summary["stop_reason"]`` says it was cut).
    """

    points: list
    best_C: float | None
    best_score: float | None
    metric: str
    folds: int
    stop_reason: str
    seconds: float
    model: LinearModel | None = field(default=None, repr=False)
    interrupted: bool = False

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
        if self.best_C is None:
            lines.append(f"no value of C finished ({self.stop_reason})")
            return "\n".join(lines)
        best = f"{100 * self.best_score:.2f}%" if percent else f"{self.best_score:.6g}"
        lines.append(f"best C = {self.best_C:g} ({name} {best}, {self.folds} folds; {self.stop_reason})")
        return "\n".join(lines)


@dataclass
class SearchState:
    """Where a search stands, besides the solver's arrays and refit's start: what its checkpoint holds.

    A pass's block order and row orders are drawn from ``(seed, outer)``, ``outer`` counting passes over every
    C, so a resumed search visits the blocks as an uninterrupted one does and makes the same table.
    """

    values: list = field(default_factory=list)  # the values of C to try, in order (the default grid: to 1024)
    points: list = field(default_factory=list)  # a CVPoint for each value done
    C: float | None = None  # the C of the solver's arrays (None: no pass yet)
    passes: int = 0  # passes done at C
    iterations: int = 0  # of them, those that ended an iteration (dual CD: every pass; Newton: one of several)
    seconds: float = 0.0  # seconds spent at C before this process
    outer: int = 1  # the pass in progress, counted over every C
    position: int = 0  # its blocks done
    sums: PassSums | None = None  # its sums so far
    best: int | None = None  # the index in points of the best so far
    since_best: int = 0  # values done since it
    elapsed: float = 0.0  # seconds of the search before this process

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> SearchState:
        known = {f.name for f in fields(cls)}
        state = cls(**{k: v for k, v in values.items() if k in known})
        if "iterations" not in values:  # written before Newton: every pass was an iteration
            state.iterations = state.passes
        state.points = [CVPoint(**p) for p in state.points]
        state.sums = PassSums(**state.sums)
        return state


# The tune options a resumed search must share with its checkpoint (patience decides only when it stops).
CHECKED_OPTIONS = ("folds", "C_grid", "warm")


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
    checkpointer : Checkpointer, optional
        Told after every block and every pass (with its evaluation) and at the stop; given :meth:`snapshot`.
        With one, a first Ctrl-C or SIGTERM stops the search at the next block, after its checkpoint.
    """

    def __init__(
        self, store, params, options: dict, *, verbose: int = 1, progress: bool | None = None, checkpointer=None
    ):
        self.store = store if isinstance(store, BlockStore) else BlockStore(store)
        if params.read_threads is not None:  # else the store's own (one a core, unless its opener chose)
            self.store.read_threads = params.read_threads
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
        self.checkpointer = checkpointer
        self.state = SearchState(sums=PassSums.zeros(self.problem.n_problems))
        self.best_start = None  # the folds' solutions at the best C so far, averaged: refit's start
        self._started = self._C_started = time.perf_counter()  # this process's search, and its part at C

    @property
    def regression(self) -> bool:
        return self.problem.task == REGRESSION

    # ---- the search -----------------------------------------------------------------------

    def run(self) -> TuneResult:
        """Cross-validate every C of the grid (or LIBLINEAR's range, until ``patience`` runs out); stopped by a
        signal (with a checkpointer), the result says so and holds the values done."""
        st = self.state
        self._started = time.perf_counter()
        if not st.values:
            grid = self.options["C_grid"]
            st.values = sorted(grid) if grid else list(_doubling(self.start_C(), MAX_C))
        stopped = None
        with self._signals() as stop:
            while (C := self._next_C()) is not None:
                point = self.solve_at(C, stop)
                if point is not None:
                    self._add(point)
                    self._checkpoint("after_pass")
                if stop and self._next_C() is not None:  # (a signal during the last pass: the search is done)
                    stopped = f"stopped by {stop.signal_name}"
                    self.monitor.say(f"{stopped} {self._where()}")
                    break
        self._checkpoint("on_stop")
        return self._result(stopped or self._reason(), interrupted=stopped is not None)

    def _signals(self):
        """Signals become a stop request read between blocks if the search has a checkpoint to write (else
        Ctrl-C interrupts at once: nothing would be kept)."""
        return deferred_signals() if self.checkpointer else contextlib.nullcontext(StopRequest())

    def _next_C(self) -> float | None:
        """The C in progress or next; None when the search is over."""
        st = self.state
        if len(st.points) == len(st.values) or (not self.options["C_grid"] and self._patience_out()):
            return None
        return st.values[len(st.points)]

    def _patience_out(self) -> bool:
        return self.state.since_best >= self.options["patience"]

    def _reason(self) -> str:
        if self.options["C_grid"]:
            return "every C of the grid"
        if self._patience_out():
            return f"no better score over the last {self.state.since_best} values of C"
        return f"C reached {MAX_C:g}"

    def _add(self, point: CVPoint) -> None:
        """Count a finished C: its line, and the best so far."""
        st = self.state
        st.points.append(point)
        self.monitor.say(self._line(point))
        if st.best is None or self._better(point.score, st.points[st.best].score):
            st.best, st.since_best = len(st.points) - 1, 0
            self._keep_start()
        else:
            st.since_best += 1

    def _result(self, reason: str, interrupted: bool = False) -> TuneResult:
        st = self.state
        best = st.points[st.best] if st.best is not None else None
        metric = "mse" if self.regression else "accuracy"
        seconds = round(st.elapsed + time.perf_counter() - self._started, 3)
        return TuneResult(
            list(st.points),
            best.C if best else None,
            best.score if best else None,
            metric,
            self.problem.folds,
            reason,
            seconds,
            interrupted=interrupted,
        )

    def _where(self) -> str:
        """Where the search stands, in words."""
        st, C = self.state, self._next_C()
        if C is None:
            return f"after its last value of C ({len(st.points)} done)"
        passes = st.passes if st.C == C else 0
        return f"at C {C:.4g}, pass {passes + 1}, block {st.position}/{self.store.n_blocks}"

    def start_C(self) -> float:
        """LIBLINEAR's ``calc_start_C`` for these data (one read): a power of 2 small enough that every fold's
        solution is still near zero, at most 1024. With instance weights, rows count by their weight (its sums
        over rows, and its ``l``, are weighted: the start of duplicated rows)."""
        if self.problem.penalty.l1 > 0:
            return self._start_C_l1()
        loss, n = self.problem.loss, self.problem.total_weight
        bias_sq = self.problem.bias**2 if self.problem.bias > 0 else 0.0
        largest, sum_y, slack = 0.0, 0.0, 0.0
        for block in self.store.iter_blocks(prefetch=self.params.prefetch):
            rows = np.repeat(np.arange(block.n_rows), np.diff(block.indptr))
            norms = np.bincount(rows, weights=np.square(block.data, dtype=np.float64), minlength=block.n_rows)
            largest = max(largest, float(norms.max(initial=0.0)) + bias_sq)
            y = np.abs(block.labels)
            if block.weights is None:
                sum_y += float(y.sum())
                slack += float(np.sum(np.maximum(y - loss.threshold, 0.0) ** 2))
            else:
                sum_y += float(np.dot(block.weights, y))
                slack += float(np.dot(block.weights, np.maximum(y - loss.threshold, 0.0) ** 2))
        largest = max(largest, 1e-300)
        if loss.kind == EPSILON:
            start = 0.01 * slack / (8 * sum_y**2 * largest) if slack > 0 else MAX_C
        elif loss.kind == LOGISTIC or loss.quadratic == 0:
            start = 1.0 / (n * largest)
        else:
            start = 1.0 / (2 * n * largest)
        return min(2.0 ** math.floor(math.log2(start)), MAX_C)

    def _start_C_l1(self) -> float:
        """The start of a penalty with an L1 term (LIBLINEAR's -C does not search -s 5 and 6): the power of 2 at or
        below the largest C whose solution is w = 0 on all rows, ``l1 / max_kj |sum_i c_i l'(0; y_i) x_ij|``
        (glmnet's lambda_max; ``c_i`` the row's cost over C: class and instance weights), at most 1024."""
        p = self.problem
        slope = 0.5 if p.loss.kind == LOGISTIC else 2.0 * p.loss.quadratic + p.loss.linear  # -l'(0) / y
        gradient = np.zeros((p.n_problems, p.n_weights))
        for block in self.store.iter_blocks(prefetch=self.params.prefetch):
            y = p.targets(block.labels)  # (n_problems, rows): +-1
            costs = np.where(y > 0, p.class_weights[:, 1:2], p.class_weights[:, 0:1])
            if block.weights is not None:
                costs = costs * block.weights[None, :]
            X = block.to_csr(p.n_features).astype(np.float64)
            scaled = costs * y * slope
            gradient[:, :-1] += (X.T @ scaled.T).T
            if p.bias > 0:
                gradient[:, -1] += p.bias * scaled.sum(axis=1)
        largest = float(np.abs(gradient).max(initial=0.0))
        start = p.penalty.l1 / largest if largest > 0 else MAX_C
        return min(2.0 ** math.floor(math.log2(start)), MAX_C)

    def _better(self, score: float, best: float) -> bool:
        return score < best if self.regression else score > best

    def _line(self, p: CVPoint) -> str:
        score = f"accuracy {100 * p.score:.2f}% ± {100 * p.spread:.2f}" if not self.regression else f"MSE {p.score:.6g}"
        gap = "" if math.isnan(p.gap) else f"  gap {p.gap:.1e}"
        passes = f"{p.passes} pass{'es' * (p.passes != 1)}"
        return f"C {p.C:<10.4g} {score}  primal {p.primal:.6e}{gap}  {passes}  {p.seconds:.2f} s"

    # ---- one C ----------------------------------------------------------------------------

    def solve_at(self, C: float, stop=None) -> CVPoint | None:
        """Passes at ``C`` until the stop rules hold, each iteration judged (dual CD: by the evaluation read that scores
        the folds, due at each C anyway; Newton: by its own rule, then that read); a checkpoint after each pass the
        rules do not end. None if ``stop`` (a set StopRequest) cut them first."""
        st = self.state
        self._C_started = time.perf_counter()
        if st.C != C:  # a new value (else a resumed search goes on with its passes at C)
            self._move_to(C)
            st.C, st.passes, st.iterations, st.seconds = C, 0, 0, 0.0
        while True:
            if not self._pass(C, stop):
                return None
            if self.solver.end_pass():
                st.iterations += 1
                record = {"outer": st.iterations, "primal_exact": False, "gap": None, "pg_violation": None}
                record |= self.solver.pass_figures(st.sums.figures)
                st.sums = PassSums.zeros(self.problem.n_problems)
                judged = self._judged(record)
                if judged is not None:
                    return judged
            self._checkpoint("after_pass")
            if stop:
                return None

    def _judged(self, record: dict) -> CVPoint | None:
        """The CVPoint of the current C if the stop rules end it after this iteration, else None. A solver with a dual
        needs the evaluation read for its gap (the exact primal); one that judges itself reads only at its end."""
        dual = self.solver.dual_objectives()
        if dual is None and self.rules.reason(record, out_of_time=False) is None:
            return None
        losses, held = self._evaluate()
        primal = self._primals(losses)
        record |= {"primal_exact": True, "gap": relative_gap(primal, dual) if dual is not None else None}
        if self.rules.reason(record, out_of_time=False) is None:
            return None
        return self._point(self.state.C, held, primal, record["gap"] if record["gap"] is not None else math.nan)

    def _point(self, C: float, held: np.ndarray, primal: np.ndarray, gap: float) -> CVPoint:
        """The CVPoint of ``C`` from the last evaluation read: the held-out counts and each problem's primal."""
        folds = self.problem.folds
        scores = held[:, 2] / held[:, 0] if self.regression else held[:, 1] / held[:, 0]
        pooled = held[:, 2].sum() / held[:, 0].sum() if self.regression else held[:, 1].sum() / held[:, 0].sum()
        mean_primal = float(primal.reshape(folds, -1).sum(axis=1).mean())
        seconds = self.state.seconds + time.perf_counter() - self._C_started
        return CVPoint(C, float(pooled), scores.tolist(), mean_primal, gap, self.state.passes, round(seconds, 3))

    def _move_to(self, C: float) -> None:
        """The solver at ``C``: made there, or moved from the C before (warm: scaled, or from its weights)."""
        if self.solver is None:
            self._build(self.problem.at(C))
        else:
            self.solver.move_to(C, warm=self.options["warm"])

    def _build(self, problem: Problem) -> None:
        self.solver, self.passes = engines.build(self.solver_class, problem, self.params, self.store)

    def _pass(self, C: float, stop) -> bool:
        """The pass in progress over the store (its remaining blocks), every fold's problems at each block; False if
        ``stop`` was set first."""
        st, n_blocks = self.state, self.store.n_blocks
        self.solver.start_pass(st.outer)
        run = PassRun(
            st,
            self.params,
            stop,
            total=n_blocks,
            label=f"C {C:.4g} pass {st.passes + 1}",
            progress=self.progress,
            checkpoint=lambda at_pass_end: self._checkpoint("after_block", at_pass_end=at_pass_end),
        )
        self.passes.run(run, st.outer, self.read_stats)
        if st.position < n_blocks:
            return False
        st.passes += 1
        st.outer, st.position = st.outer + 1, 0
        return True

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
        """Keep the folds' solutions at this C, averaged, as refit's start. Dual CD: each row is a training row of
        K - 1 folds, so the mean of its K - 1 alphas is in its box and ``sum_f w_f / (K - 1)`` is their ``w``. A
        primal solver (Newton): the mean of the folds' ``w`` (no alpha)."""
        if not (self.options.get("refit") or self.checkpointer):  # a resumed search may be asked to refit
            return
        K, n_k = self.problem.folds, self.problem.per_fold
        w = self.solver.weights().reshape(K, n_k, -1)
        alpha = getattr(self.solver, "alpha", None)
        if alpha is None:
            self.best_start = (None, w.mean(axis=0))
        else:
            self.best_start = (alpha.reshape(K, n_k, -1).sum(axis=0) / (K - 1), w.sum(axis=0) / (K - 1))

    def refit_run(self, C: float, verbose: int = 1) -> TrainResult:
        """Train on every row at ``C``, started from the folds' solutions at ``C`` (kept by the search): the model,
        its history and its stop reason."""
        trainer = Trainer(self.store, replace(self.params, C=C), verbose=verbose, progress=self.progress)
        if self.best_start is not None:
            alpha, w = self.best_start
            if alpha is None:
                trainer.solver.start_from(w)
            else:
                trainer.solver.alpha[...] = alpha
                trainer.solver.w[...] = w
        return trainer.run()

    # ---- checkpoints ----------------------------------------------------------------------

    def _checkpoint(self, when: str, **more) -> None:
        """Let the checkpointer write if due (``when``: its method, after_block, after_pass or on_stop)."""
        if self.checkpointer is None:
            return
        seconds = getattr(self.checkpointer, when)(self.snapshot, **more)
        if seconds is not None:
            self.monitor.detail(f"checkpoint written to {self.checkpointer.path} in {seconds:.3f} s")

    def snapshot(self) -> Checkpoint:
        """The whole search, for :mod:`blocksvm.checkpoint`: the state, the solver's arrays, refit's start."""
        st, now = self.state, time.perf_counter()
        state = replace(st, seconds=st.seconds + now - self._C_started, elapsed=st.elapsed + now - self._started)
        arrays = dict(self.solver.state())
        if self.best_start is not None:
            alpha, arrays["refit_w"] = self.best_start
            if alpha is not None:
                arrays["refit_alpha"] = alpha
        meta = state.to_dict() | {"search": self._checked_options()}
        return Checkpoint(self.params.to_dict(), store_identity(self.store), meta, arrays)

    def restore(self, checkpoint: Checkpoint, source: str = "the checkpoint") -> None:
        """Continue from ``checkpoint``; refuse one made for another store, other training parameters (those of
        SAFE_TO_CHANGE aside) or other tune options (``patience`` aside)."""
        check_fits(checkpoint, self.params, store_identity(self.store), source, search=True)
        changed = differences(self._checked_options(), checkpoint.state["search"], CHECKED_OPTIONS)
        if changed:
            raise CheckpointError(
                f"{source} was made with other tune options ({changed}); only patience may change when resuming"
            )
        state = SearchState.from_dict(checkpoint.state)
        if state.C is not None:
            self._build(self.problem.at(state.C))
            try:
                self.solver.load_state(checkpoint.arrays)
            except (KeyError, ValueError) as exc:
                raise CheckpointError(f"{source} does not fit this problem: {exc}") from None
        if "refit_w" in checkpoint.arrays:
            self.best_start = (checkpoint.arrays.get("refit_alpha"), checkpoint.arrays["refit_w"])
        self.state = state
        self.monitor.say(f"resuming the search {self._where()}")

    def _checked_options(self) -> dict:
        """The tune options a checkpoint holds and a resume compares (the grid sorted: the order tried)."""
        grid = self.options["C_grid"]
        return {name: self.options[name] for name in CHECKED_OPTIONS} | {"C_grid": sorted(grid) if grid else None}


def _doubling(start: float, stop: float):
    """``start, 2 start, 4 start, ...`` up to ``stop``."""
    C = start
    while C <= stop:
        yield C
        C *= 2.0


def _check_folds(store: BlockStore, folds: int, seed: int) -> None:
    """Every fold holds rows (one line saying which does not)."""
    empty = empty_fold(store.n_rows, seed, folds)
    if empty is not None:
        raise ParameterError(
            f"folds={folds}: fold {empty} holds none of the {store.n_rows:,} rows of {store.path}; use fewer folds"
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
        Training parameters (``loss``, ``tol``, ``bias``, ``seed``, ...), the run options ``cache_dir``,
        ``checkpoint`` (written after every pass, every ``checkpoint_every`` blocks, every ``checkpoint_seconds``
        and when the search stops), ``resume`` (continue from this checkpoint: the same table as an uninterrupted
        search), and the tune options: ``folds`` (default 5), ``C_grid`` (values of C; default: LIBLINEAR's
        ``-C`` range), ``patience``, ``warm``, ``refit`` (a path: train on all rows at the best C and write the
        model there). docs/PARAMETERS.md lists them.

    Returns
    -------
    TuneResult
        The table (``points``), ``best_C``, ``best_score`` and, with ``refit``, the ``model``. With a checkpoint, a
        first Ctrl-C or SIGTERM stops the search after its next block: the result is ``interrupted``, without a
        model, and ``resume`` continues it.

    Examples
    --------
    >>> result = tune("a9a.bsvm", folds=5, C_grid=(0.25, 0.5, 1, 2))   # doctest: +SKIP
    >>> print(result.table())                                            # doctest: +SKIP
    """
    params, run, options = settle_tune(params, options)
    checkpointer = checkpointer_of(run)
    from blocksvm.io.text_cache import say_to_stderr, store_or_cached

    say, bars = (say_to_stderr if verbose else None), (progress if verbose else False)
    store = store_or_cached(store, run.cache_dir, say=say, progress=bars)
    # no conversion replaces the store while the search reads it, no other run writes its model (issue 34)
    with reading(store), writing({"the model": options["refit"]}):
        tuner = Tuner(store, params, options, verbose=verbose, progress=bars, checkpointer=checkpointer)
        with checkpointer or contextlib.nullcontext():  # the checkpoint's lock, for the whole search
            if run.resume:
                tuner.restore(read_resumed(run.resume, tuner.monitor), f"checkpoint {run.resume}")
            result = tuner.run()
        if options["refit"] and not result.interrupted:
            refit = tuner.refit_run(result.best_C, verbose=verbose)
            result.model, result.interrupted = refit.model, refit.interrupted
            result.model.summary["tune"] = result.to_dict()
            result.model.save(options["refit"])
        return result
