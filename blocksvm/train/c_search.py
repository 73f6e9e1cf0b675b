"""Choosing C by K-fold cross-validation out of core (``blocksvm tune``): every fold shares each block read.

::

    problems: K folds x train's problems (one, or one per class), side by side, each with its own alpha and w;
              problem (f, k) is train's problem k without the rows of fold f (a row's fold: Problem.fold_of
              its position in the store and the seed, a documented pure function)
    for C in the grid, increasing:
        the learner moved to C, warm (Chu, Ho, Chen & Lin, KDD 2015): dual CD's alpha and w times C / C_before, the
              primal learners (Newton, OWL-QN, CDN, newGLMNET) from their w as it is
        the trainer's iterations until the stop rules hold      (each visit of a block updates every problem)
            each judged by the folds' evaluation read: each problem's exact primal, each fold's predictions of
            its held-out rows
    best C: the highest CV accuracy (regression: the lowest CV mean squared error), the smallest C of ties

The search is a client of the trainer (:class:`~blocksvm.train.loop.Trainer`): the iterations, their signals,
checkpoints and snapshot are the trainer's; the search keeps the grid, the patience, the best C and the refit.
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
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np

from blocksvm.checkpoint import Checkpoint, read_latest, writing
from blocksvm.errors import CheckpointError, ParameterError
from blocksvm.losses import EPSILON, LOGISTIC, REGRESSION
from blocksvm.model import LinearModel
from blocksvm.solvers import Problem
from blocksvm.solvers.by_columns import loss_at_zero
from blocksvm.solvers.problem import empty_fold
from blocksvm.store import BlockStore, reading
from blocksvm.train.loop import Trainer, TrainResult, checkpointer_of, recorded_memory
from blocksvm.train.params import for_store, settle_tune
from blocksvm.train.signals import StopRequest
from blocksvm.train.snapshot import check_shape, differences

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
    """Where a search stands, besides the trainer's state: what it adds to the trainer's checkpoint.

    The trainer's iterations, counted over every C, draw the block and row orders from ``(seed, iteration)``, so a
    resumed search visits the blocks as an uninterrupted one does and makes the same table.
    """

    values: list = field(default_factory=list)  # the values of C to try, in order (the default grid: to 1024)
    points: list = field(default_factory=list)  # a CVPoint for each value done
    C: float | None = None  # the C of the learner's arrays (None: no pass yet)
    C_started: float = 0.0  # the search's seconds when it moved to C
    best: int | None = None  # the index in points of the best so far
    since_best: int = 0  # values done since it

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> SearchState:
        known = {f.name for f in fields(cls)}
        state = cls(**{k: v for k, v in values.items() if k in known})
        if "C_started" not in values:  # written before the search was the trainer's client: seconds at C
            state.C_started = values["elapsed"] - values["seconds"]
        state.points = [CVPoint(**p) for p in state.points]
        return state


# The tune options a resumed search must share with its checkpoint (patience decides only when it stops).
CHECKED_OPTIONS = ("folds", "C_grid", "warm")


class Tuner:
    """K-fold cross-validation over a grid of C on a block store, every fold's problems side by side: the search,
    a client of one :class:`~blocksvm.train.loop.Trainer` of the folds' problems that it moves from C to C.

    Parameters
    ----------
    store : BlockStore or path
    params : TrainParams
        train's parameters (C aside) for every fold's training.
    options : dict
        The tune options (:data:`blocksvm.run_options.TUNE_OPTIONS`): ``folds``, ``C_grid``, ``patience``, ``warm``.
    verbose : int, default=1
        0 silent, 1 one line per C, 2 also one per iteration.
    progress : bool, optional
        A bar over the blocks of each pass (default: when standard error is a terminal).
    checkpointer : Checkpointer, optional
        Told after every block and every iteration (and C) and at the stop; given the trainer's snapshot.
    """

    def __init__(
        self,
        store,
        params,
        options: dict,
        *,
        verbose: int = 1,
        progress: bool | None = None,
        checkpointer=None,
        memory: float | None = None,
    ):
        store = store if isinstance(store, BlockStore) else BlockStore(store)
        _check_folds(store, options["folds"], params.seed)
        self.trainer = Trainer(
            store,
            params,
            folds=options["folds"],
            verbose=verbose,
            progress=progress,
            checkpointer=checkpointer,
            memory=memory,
        )
        self.trainer.also_saved = self._saved
        self.options, self.progress, self.checkpointer = options, progress, checkpointer
        self.state = SearchState()
        self.best_start: dict | None = None  # the folds' solutions at the best C so far, as a start: refit's

    @property
    def problem(self) -> Problem:
        return self.trainer.problem

    @property
    def solver(self):
        return self.trainer.solver

    @property
    def regression(self) -> bool:
        return self.problem.task == REGRESSION

    # ---- the search -----------------------------------------------------------------------

    def run(self) -> TuneResult:
        """Cross-validate every C of the grid (or LIBLINEAR's range, until ``patience`` runs out); stopped by a
        signal, the result says so and holds the values done."""
        st = self.state
        if not st.values:
            grid = self.options["C_grid"]
            st.values = sorted(grid) if grid else list(_doubling(self.start_C(), MAX_C))
        stopped = None
        with self.trainer.session() as stop:
            while (C := self._next_C()) is not None:
                point = self.solve_at(C, stop)
                if point is not None:
                    self._add(point)
                    self.trainer.checkpoint("after_pass")
                if stop and self._next_C() is not None:  # (a signal during the last pass: the search is done)
                    stopped = f"stopped by {stop.signal_name}"
                    self.trainer.monitor.say(f"{stopped} {self._where()}")
                    break
        return self._result(stopped or self._reason(), interrupted=stopped is not None)

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
        self.trainer.monitor.say(self._line(point))
        if st.best is None or self._better(point.score, st.points[st.best].score):
            st.best, st.since_best = len(st.points) - 1, 0
            if self.options.get("refit") or self.checkpointer:  # (a resumed search may be asked to refit)
                self.best_start = self.solver.warm_state()
        else:
            st.since_best += 1

    def _result(self, reason: str, interrupted: bool = False) -> TuneResult:
        st = self.state
        best = st.points[st.best] if st.best is not None else None
        metric = "mse" if self.regression else "accuracy"
        return TuneResult(
            list(st.points),
            best.C if best else None,
            best.score if best else None,
            metric,
            self.problem.folds,
            reason,
            round(self.trainer.elapsed(), 3),
            interrupted=interrupted,
        )

    def _where(self) -> str:
        """Where the search stands, in words."""
        st, C = self.state, self._next_C()
        if C is None:
            return f"after its last value of C ({len(st.points)} done)"
        passes = self.trainer.state.passes if st.C == C else 0
        return f"at C {C:.4g}, pass {passes + 1}, block {self.trainer.state.position}/{self.trainer.store.n_blocks}"

    def start_C(self) -> float:
        """LIBLINEAR's ``calc_start_C`` for these data (one read): a power of 2 small enough that every fold's
        solution is still near zero, at most 1024. With instance weights, rows count by their weight (its sums
        over rows, and its ``l``, are weighted: the start of duplicated rows)."""
        if self.problem.penalty.l1 > 0:
            return self._start_C_l1()
        loss, n = self.problem.loss, self.problem.total_weight
        bias_sq = self.problem.bias**2 if self.problem.bias > 0 else 0.0
        largest, sum_y, slack = 0.0, 0.0, 0.0
        for block in self.trainer.store.iter_blocks(prefetch=self.trainer.params.prefetch):
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
        largest = self._largest_slope_from_columns()
        if largest is not None:
            start = p.penalty.l1 / largest if largest > 0 else MAX_C
            return min(2.0 ** math.floor(math.log2(start)), MAX_C)
        slope = 0.5 if p.loss.kind == LOGISTIC else 2.0 * p.loss.quadratic + p.loss.linear  # -l'(0) / y
        gradient = np.zeros((p.n_problems, p.n_weights))
        for block in self.trainer.store.iter_blocks(prefetch=self.trainer.params.prefetch):
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

    def _largest_slope_from_columns(self) -> float | None:
        """``max_kj |sum_i c_i l'(0; y_i) x_ij|`` from a column learner's layout statistics (no read of the data),
        or None (another learner, or statistics of totals only)."""
        columns = self.trainer.columns
        if columns is None:
            return None
        found = loss_at_zero(columns, self.problem.at(1.0))
        return None if found is None else float(np.abs(found[0]).max(initial=0.0))

    def _better(self, score: float, best: float) -> bool:
        return score < best if self.regression else score > best

    def _line(self, p: CVPoint) -> str:
        score = f"accuracy {100 * p.score:.2f}% ± {100 * p.spread:.2f}" if not self.regression else f"MSE {p.score:.6g}"
        gap = "" if math.isnan(p.gap) else f"  gap {p.gap:.1e}"
        passes = f"{p.passes} pass{'es' * (p.passes != 1)}"
        return f"C {p.C:<10.4g} {score}  primal {p.primal:.6e}{gap}  {passes}  {p.seconds:.2f} s"

    # ---- one C ----------------------------------------------------------------------------

    def solve_at(self, C: float, stop: StopRequest | None = None) -> CVPoint | None:
        """The trainer's iterations at ``C`` until the stop rules hold, each judged by the folds' evaluation; the
        CVPoint of ``C``, or None if ``stop`` (a set StopRequest) cut them first."""
        st, trainer = self.state, self.trainer
        if st.C != C:  # a new value (else a resumed search goes on with its passes at C)
            trainer.move_to(C, warm=self.options["warm"])
            st.C, st.C_started = C, trainer.elapsed()
        reason, interrupted = trainer.iterate(StopRequest() if stop is None else stop)
        if interrupted:
            return None
        held, record, folds = trainer.held, trainer.state.history[-1], self.problem.folds
        scores = held[:, 2] / held[:, 0] if self.regression else held[:, 1] / held[:, 0]
        pooled = held[:, 2].sum() / held[:, 0].sum() if self.regression else held[:, 1].sum() / held[:, 0].sum()
        primal = float(np.reshape(record["per_problem_primal"], (folds, -1)).sum(axis=1).mean())
        gap = record["gap"] if record["gap"] is not None else math.nan
        seconds = round(trainer.elapsed() - st.C_started, 3)
        return CVPoint(C, float(pooled), scores.tolist(), primal, gap, trainer.state.passes, seconds)

    # ---- the model at the best C ----------------------------------------------------------

    def refit_run(self, C: float, verbose: int = 1) -> TrainResult:
        """Train on every row at ``C``, started from the folds' solutions at ``C`` (kept by the search): the model,
        its history and its stop reason."""
        params = replace(self.trainer.params, C=C)
        trainer = Trainer(self.trainer.store, params, verbose=verbose, progress=self.progress)
        if self.best_start is not None:
            trainer.solver.start_from_state(self.best_start)
        return trainer.run()

    # ---- checkpoints ----------------------------------------------------------------------

    def _saved(self) -> tuple[dict, dict]:
        """The search's part of the trainer's snapshot: its state and options, and refit's start (``refit_*``)."""
        arrays = {f"refit_{name}": array for name, array in (self.best_start or {}).items()}
        return self.state.to_dict() | {"search": self._checked_options()}, arrays

    def restore(self, checkpoint: Checkpoint, source: str = "the checkpoint") -> None:
        """Continue from ``checkpoint``; refuse one made for another store, other training parameters (those of
        SAFE_TO_CHANGE aside) or other tune options (``patience`` aside)."""
        theirs = checkpoint.state.get("search")  # (none: a training run's, which the trainer refuses)
        changed = differences(self._checked_options(), theirs, CHECKED_OPTIONS) if theirs is not None else ""
        if changed:
            raise CheckpointError(
                f"{source} was made with other tune options ({changed}); only patience may change when resuming"
            )
        C = checkpoint.state.get("C")  # the C of the learner's arrays: the learner goes there before they load
        if C is not None:
            self.trainer.move_to(C, warm=False)
        self.trainer.restore(checkpoint, source, search=True)
        self.state = SearchState.from_dict(checkpoint.state)
        start = {name[len("refit_") :]: a for name, a in checkpoint.arrays.items() if name.startswith("refit_")}
        if start and C is None:
            raise CheckpointError(f"{source}: field 'state.C' is null, but the checkpoint holds refit's start")
        if start:  # refit's start, as warm_state makes it at this C
            for name, array in self.trainer.solver.warm_state().items():
                check_shape(checkpoint, f"refit_{name}", array.shape, source)
        self.best_start = start or None
        self.trainer.monitor.say(f"resuming the search {self._where()}")

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
    store = store_or_cached(store, run.cache_dir, say=say, progress=bars, skip_bad_lines=run.skip_bad_lines)
    params = for_store(params, store, say=say)  # (a column learner's layout: before the store is locked)
    # no conversion replaces the store while the search reads it, no other run writes its model (issue 34)
    with reading(store), writing({"the model": options["refit"]}):
        with checkpointer or contextlib.nullcontext():  # the checkpoint's lock, for the whole search
            saved, warning = read_latest(run.resume) if run.resume else (None, None)  # (read once, under it)
            memory = recorded_memory(saved)
            tuner = Tuner(
                store, params, options, verbose=verbose, progress=bars, checkpointer=checkpointer, memory=memory
            )
            if saved is not None:
                if warning:
                    tuner.trainer.monitor.say(f"warning: {warning}")
                tuner.restore(saved, f"checkpoint {run.resume}")
            result = tuner.run()
        if options["refit"] and not result.interrupted:
            refit = tuner.refit_run(result.best_C, verbose=verbose)
            result.model, result.interrupted = refit.model, refit.interrupted
            result.model.summary["tune"] = result.to_dict()
            result.model.save(options["refit"])
        return result
