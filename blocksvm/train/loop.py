"""The trainer: the one iteration loop of every run on a store, ``train``'s and each value of C of ``tune``'s search.

Block minimization (Yu, Hsieh, Chang & Lin, KDD 2010, Algorithm 1), its iterations as the trainer makes them::

    for iteration = 1, 2, ...:
        for b in a fresh random permutation of the blocks:   (a pass; a pass learner's: several, in store order)
            load block b                                      (the store reads ahead on its own threads)
            the learner visits block b                        (updates w and its own state of b's rows)
        the iteration's record, judged                        (exact when due: see below)
        stop if a rule says so; else a checkpoint

What ends an iteration is its record: ``train``'s own (pass estimates, made exact every ``eval_every``
iterations and to confirm the gap rule), or, for a search of C, the folds' evaluation (one read scoring every
fold's held-out rows and each problem's exact primal: at every iteration of a learner with a dual, else when
its own rule ends it). The loop moves blocks and decides when to stop; all arithmetic on rows happens in the
learner (:mod:`blocksvm.solvers`), and a pass is made by an engine (:mod:`.engines`) through the one pass loop
(:mod:`.pass_loop`). Its other parts: the schedule (:mod:`.schedule`: block order and seeds), the records and
stop rules (:mod:`.records`), and checkpoint snapshot/restore (:mod:`.snapshot`).

A run (:meth:`Trainer.session`) reads SIGINT and SIGTERM at block boundaries and writes its checkpoints through
:meth:`Trainer.checkpoint`, one snapshot of its state. The search of C (:mod:`.tune`) is the trainer's client:
it moves the trainer from value to value (:meth:`Trainer.move_to`) and adds its own state to the snapshot.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace

import numpy as np

from blocksvm.checkpoint import Checkpoint, Checkpointer, read_latest, writing
from blocksvm.errors import CheckpointError, ModelError
from blocksvm.losses import NOVELTY, REGRESSION
from blocksvm.model import LinearModel, load_warm_start
from blocksvm.monitor import Monitor, format_record
from blocksvm.solvers import SOLVERS, Problem
from blocksvm.solvers.evaluate import evaluate_folds
from blocksvm.solvers.problem import weight_of
from blocksvm.store import BlockStore, ReadStats, reading
from blocksvm.train import engines, executors
from blocksvm.train.certificate import Certificate
from blocksvm.train.params import FASTER, TrainParams, faster_solver, for_store, settle
from blocksvm.train.pass_loop import PassRun
from blocksvm.train.plan import make_plan
from blocksvm.train.records import (
    TIME_LIMIT,
    PassSums,
    StopRules,
    liblinear_objective,
    make_exact,
    pass_record,
    pass_seconds,
)
from blocksvm.train.signals import StopRequest, deferred_signals
from blocksvm.train.snapshot import TrainState, check_warm_start, load_arrays, restore, snapshot, store_identity
from blocksvm.train.validation import check_validation, open_validation


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes
    ----------
    model : LinearModel
    history : list of dict
        One record per completed outer iteration (see :mod:`blocksvm.monitor`).
    stop_reason : str
    interrupted : bool
        True if a signal or the time limit stopped training before a rule was met.
    """

    model: LinearModel
    history: list
    stop_reason: str
    interrupted: bool


class Run:
    """What every run shares, the trainer's and a stream's: where it stands (:class:`~.snapshot.TrainState`), the one
    signal policy (:meth:`session`), its checkpoints (:meth:`checkpoint`) and their one snapshot (:meth:`snapshot`).

    Parameters
    ----------
    params : TrainParams
    identity : dict
        What the run reads (:func:`~.snapshot.store_identity`, :func:`~.snapshot.stream_identity`).
    arrays : callable
        The learner's arrays, for a snapshot.
    state : TrainState
    checkpointer : Checkpointer, optional
    monitor : Monitor, optional
        Where a checkpoint's line goes (default: nowhere).

    Attributes
    ----------
    also_saved : callable or None
        A client's own ``(state, arrays)``, added to every snapshot (the search's grid, points and refit start).
    """

    def __init__(
        self,
        params,
        identity: dict,
        arrays: Callable[[], dict],
        state: TrainState,
        *,
        checkpointer=None,
        monitor: Monitor | None = None,
    ):
        self.params, self.identity, self.arrays, self.state = params, identity, arrays, state
        self.checkpointer = checkpointer
        self.monitor = monitor or Monitor(verbose=0)
        self.also_saved: Callable[[], tuple[dict, dict]] | None = None
        self._started = time.perf_counter()

    @contextmanager
    def session(self) -> Iterator[StopRequest]:
        """A run: its clock started, SIGINT and SIGTERM turned into the stop request it yields (read at block
        boundaries, :mod:`.signals`), and a checkpoint at its end."""
        self._started = time.perf_counter()
        with deferred_signals() as stop:
            yield stop
        self.checkpoint("on_stop")

    def elapsed(self) -> float:
        """Seconds of the run, those before a resume included."""
        return self.state.elapsed + time.perf_counter() - self._started

    def checkpoint(self, when: str, **more) -> None:
        """Let the checkpointer write if due (``when``: its method, after_block, after_pass or on_stop)."""
        if self.checkpointer is None:
            return
        seconds = getattr(self.checkpointer, when)(self.snapshot, **more)
        if seconds is not None:
            self.monitor.detail(f"checkpoint written to {self.checkpointer.path} in {seconds:.3f} s")

    def snapshot(self) -> Checkpoint:
        """The whole state of the run, for :mod:`blocksvm.checkpoint` (with a client's own, :attr:`also_saved`)."""
        state, arrays = self.also_saved() if self.also_saved is not None else ({}, {})
        checkpoint = snapshot(self.state, self.elapsed(), self.params, self.identity, {**self.arrays(), **arrays})
        checkpoint.state |= state
        return checkpoint


class Trainer(Run):
    """Block-minimization training of a linear model on a block store.

    Parameters
    ----------
    store : BlockStore or path
    params : TrainParams
    folds : int, optional
        K: the problems once per fold of K-fold cross-validation, side by side (:meth:`Problem.folded`), each
        iteration ended by the folds' evaluation (the search of C, :mod:`.tune`).
    validation : BlockStore or path, optional
        Accuracy on it is recorded after every outer iteration.
    history_path : path, optional
        JSON-lines history file.
    verbose : int, default=1
    progress : bool, optional
        tqdm bar over the blocks of a pass (default: when standard error is a terminal).
    checkpointer : Checkpointer, optional
        Told after every block, every iteration and at the stop; given :meth:`snapshot` to write.
    client : dask.distributed.Client, optional
        Run shards on this cluster (:mod:`.engines`: CoCoA+ rounds of dual CD, a pass learner's sums);
        ``params.workers`` shards (default: one per worker of the cluster). Without a client, ``workers > 1``
        runs them on threads.

    Attributes
    ----------
    held : ndarray of shape (folds, 3) or None
        With folds: each fold's held-out weight, correct rows and squared errors at the last folds' evaluation.
    """

    def __init__(
        self,
        store,
        params: TrainParams,
        *,
        folds: int | None = None,
        validation=None,
        history_path=None,
        verbose: int = 1,
        progress: bool | None = None,
        checkpointer=None,
        client=None,
        memory: float | None = None,
    ):
        self.store = store if isinstance(store, BlockStore) else BlockStore(store)
        params = params.with_solver_defaults().validate()
        self.params = params if folds else _with_workers(params, client)  # (a search: no shards)
        self.validation = open_validation(validation, self.store, self.params.read_threads)
        if self.params.read_threads is not None:  # else the store's own (one a core, unless its opener chose)
            self.store.read_threads = self.params.read_threads
        solver_class = SOLVERS[self.params.solver]
        problem = Problem.from_store(self.store, self.params, solver_class.loss_of(self.params))
        self.problem = problem if folds is None else problem.folded(folds, self.params.seed)
        # the memory plan, made once (a resumed run: with its data bytes as recorded, whatever its own runtime)
        plan = make_plan(self.params, self.store, solver_class, self.problem.n_problems, memory)
        plan.check(given=self.params.memory_mb is not None)
        budget = plan.budget()
        self.solver, self.passes = engines.build(solver_class, self.problem, self.params, self.store, budget, client)
        self.columns = self.passes.columns  # the store's columns, when the learner reads them (ColumnPieces)
        self.rules = StopRules(self.params, solver_class.stop_rules)
        super().__init__(
            self.params,
            store_identity(self.store),
            self.solver.state,
            TrainState(sums=PassSums.zeros(self.problem.n_problems), memory={"data_mb": plan.data / 1e6}),
            checkpointer=checkpointer,
            monitor=Monitor(history_path, verbose=verbose, shown=solver_class.shown),
        )
        self.progress = progress
        self.read_stats = ReadStats()
        self.held: np.ndarray | None = None
        self.certificate: Certificate | None = None  # a record's exact evaluation, made as the next pass goes by

    # ---- the run ------------------------------------------------------------------------

    def run(self) -> TrainResult:
        """Train until a stopping rule, the time limit or a signal; return the model."""
        st = self.state
        self.monitor.rewrite(st.history)  # now, not before: a refused resume must not touch the file
        if st.outer == 1 and st.position == 0:
            self._say_notes()
        with self.session() as stop:
            reason, interrupted = self.iterate(stop)
            where = self.where()
            if interrupted and where:
                self.monitor.say(f"{reason} {where}")
        model = self.model(reason)
        self.monitor.say(_final_line(model.summary))
        if reason.startswith("max_outer") and self.solver.stop_rules:
            self.monitor.say(
                f"WARNING: reached max_outer ({self.params.max_outer}) with {self.rules.short_of(st.history[-1])}: "
                "raise --max-outer or --time-limit (max_outer=, time_limit= in Python), or loosen the tolerance"
            )
            if faster := faster_solver(self.params):  # (scaled or dense data: dual CD's many passes)
                self.monitor.say(f"note: {FASTER.format(solver=faster)}")
        return TrainResult(model, st.history, reason, interrupted)

    def _say_notes(self) -> None:
        """What a run says before its first pass: how its memory budget is spent and where its data comes from (what
        every pass reads again where the data does not all fit), and a rule it does not have."""
        for note in (self.passes.budget_note(), self.rules.unused_note(self.solver.name)):
            if note:
                self.monitor.say(f"note: {note}")

    def iterate(self, stop: StopRequest) -> tuple[str, bool]:
        """Iterations until a stop rule, the time limit or ``stop`` ends them: ``(reason, interrupted)``; a checkpoint
        after each."""
        st = self.state
        reason = None
        self._pass_began = self.elapsed()  # (where each iteration's seconds went: its record's "seconds")
        self._written = self.checkpointer.seconds if self.checkpointer is not None else 0.0
        if st.history and st.position == 0:  # resumed at a pass boundary: the rules may already hold
            reason = self.rules.reason(st.history[-1], out_of_time=False)  # (the time limit: after a block)
            if reason is not None and self.problem.folds > 1:
                self._exact_into(st.history[-1])  # the folds' evaluation again: the same weights, the same counts
        while reason is None:
            if not self._run_pass(stop) and st.position < self.store.n_blocks:  # (cut at its last block: done)
                return self._stopped(stop)
            st.passes += 1
            if not self.solver.end_pass():  # a pass inside an iteration (a pass learner's): no record yet
                st.position = 0  # (a checkpoint at the pass's last block holds it whole: resumed, it ends again)
                if stop or self._out_of_time():
                    return self._stopped(stop)
                continue
            reason = self._certify()
            if reason is not None:  # the last record, exact now, meets the tolerance: its weights are the model
                st.position, st.sums = 0, PassSums.zeros(self.problem.n_problems)
                self.checkpoint("after_pass")
                break
            record = self._end_iteration()
            reason = self.rules.reason(record, self._out_of_time())
            if reason is None and self.rules.every_row_due(record):
                self.solver.bring_back_rows()
            if reason is not None and not record["primal_exact"]:
                self._exact_into(record)  # the final objective is reported exactly
            if self.problem.folds == 1:
                self.monitor.record(record)
            else:  # a search's iterations are its detail: its values of C are its lines
                self.monitor.detail(format_record(record))
            st.history.append(record)
            st.outer += 1
            st.position = 0
            st.sums = PassSums.zeros(self.problem.n_problems)
            self.checkpoint("after_pass")
            if reason is None and stop:
                return self._stopped(stop)
        return reason, reason == TIME_LIMIT  # (the time limit cuts the run: it is not finished)

    def _stopped(self, stop: StopRequest) -> tuple[str, bool]:
        return (f"stopped by {stop.signal_name}" if stop else TIME_LIMIT), True

    def where(self) -> str | None:
        """Where an iteration stands, in words, if inside one (after some blocks of a pass, or between passes)."""
        st = self.state
        if st.position:
            return f"in iteration {st.outer} after {st.position}/{self.store.n_blocks} blocks"
        return f"in iteration {st.outer} between passes" if st.sums.blocks else None

    def move_to(self, C: float, warm: bool = True) -> None:
        """Solve the same problems at ``C`` next (a search of C): the learner moved there (``warm``: from its solution
        at the C before, as it scales it; else from zero) and a new history, the passes counted from 0."""
        self.solver.move_to(C, warm=warm)
        self.problem = self.problem.at(C)
        self.state.history, self.state.passes = [], 0
        self.certificate = None

    def _run_pass(self, stop: StopRequest) -> bool:
        """Solve the remaining blocks of the current pass; False if stopped early."""
        st = self.state
        self.solver.start_pass(st.outer)
        label = f"iter {len(st.history) + 1} {self.solver.pass_label()}".rstrip()
        certificate = self.certificate if self.certificate is not None and not self.certificate.complete else None
        run = PassRun(
            st,
            self.params,
            stop,
            total=self.store.n_blocks,
            label=label if self.problem.folds == 1 else f"C {self.problem.C:.4g} {label}",
            progress=self.progress,
            checkpoint=self._checkpoint_block if self.checkpointer else None,
            out_of_time=self._out_of_time,
            on_block=(lambda block: certificate.measure(self.problem, block)) if certificate is not None else None,
        )
        return self.passes.run(run, st.outer, self.read_stats)

    def _checkpoint_block(self, at_pass_end: bool) -> None:
        """A block is done: a checkpoint if one is due (the iteration's end writes one anyway, unless a pass learner's
        pass is one of several in its iteration)."""
        self.checkpoint("after_block", at_pass_end=at_pass_end and self.solver.every_pass_an_iteration)

    def _out_of_time(self) -> bool:
        limit = self.params.time_limit
        return limit is not None and time.perf_counter() - self._started >= limit

    # ---- an iteration's end -------------------------------------------------------------

    def _end_iteration(self) -> dict:
        """The history record of the iteration just completed (exact when its evaluation is due), with where its
        seconds went (:func:`~.records.pass_seconds`)."""
        st = self.state
        evaluated = st.eval_seconds
        timing = {
            "outer": len(st.history) + 1,
            "time": round(self.elapsed(), 4),
            "train_time": round(self.elapsed() - st.eval_seconds, 4),
            "compute_seconds": round(st.sums.compute_seconds, 4),
            "read_seconds": round(self.read_stats.read_seconds, 4),
            "wait_seconds": round(self.read_stats.wait_seconds, 4),
            "bytes_read": self.read_stats.bytes_read,
        }
        first = st.history[0] if st.history else None
        record = pass_record(self.solver, st.sums, timing, st.blocks_visited, first)
        read, self.read_stats = self.read_stats, ReadStats()
        if self._late_evaluation_due(record):  # made as the next pass reads the blocks: no read of its own
            self.certificate = Certificate.begin(
                record["outer"], self.solver.weights(), self.solver.dual_objectives(), self.store.n_blocks
            )
        elif self._evaluation_due(record):
            self._exact_into(record)
        if self.validation is not None:
            start = time.perf_counter()
            record.update(self.validation_score(self.validation))
            st.eval_seconds += time.perf_counter() - start
        checkpoints = self.checkpointer.seconds if self.checkpointer is not None else 0.0
        record["seconds"] = pass_seconds(
            self.elapsed() - self._pass_began, st.sums, read, st.eval_seconds - evaluated, checkpoints - self._written
        )
        self._pass_began, self._written = self.elapsed(), checkpoints
        return record

    def _evaluation_due(self, record: dict) -> bool:
        """Whether ``record`` is made exact now: the folds' evaluation at every iteration of a learner with a dual
        (its exact gap judges it), else when the rules end the iteration; train's every ``eval_every`` iterations
        and when the gap estimate may meet the tolerance (:meth:`~.records.StopRules.exact_due`: to confirm it)."""
        if self.problem.folds > 1:
            return record["dual"] is not None or self.rules.reason(record, False) is not None
        every = self.params.eval_every
        return bool(every and self.state.outer % every == 0) or self.rules.exact_due(record, self.state.history)

    def _late_evaluation_due(self, record: dict) -> bool:
        """Whether the gap rule's exact evaluation of ``record`` is made as the next pass goes by
        (:mod:`.certificate`): where the next pass reads blocks from the store (the budget does not keep them all),
        the run goes on (``max_outer`` not reached) and no other rule wants it now (``eval_every``, a search's
        folds)."""
        kept = getattr(self.passes, "kept", None)
        if kept is None or kept.fits or self.problem.folds > 1 or record["outer"] >= self.params.max_outer:
            return False
        every = self.params.eval_every
        if every and self.state.outer % every == 0:
            return False
        return self.rules.exact_due(record, self.state.history) and self.rules.reason(record, False) is None

    def _certify(self) -> str | None:
        """At a pass's end, the pending certificate of the record before (when every block went by): that record made
        exact, and the reason to stop when it meets the tolerance (its weights become the model), else None."""
        certificate, history = self.certificate, self.state.history
        if certificate is None or not certificate.complete or certificate.certified:
            return None
        self.certificate = None
        record = history[-1] if history and history[-1]["outer"] == certificate.outer else None
        if record is None:  # (a record the run no longer holds: a search moved on)
            return None
        figures = certificate.figures(self.store.weighted)
        make_exact(record, self.solver, figures, weight_of(self.store), at=(certificate.weights, certificate.dual))
        self.monitor.rewrite(history)  # its line in the history file, exact now
        self.monitor.say(f"{format_record(record, self.monitor.shown)}  (exact: measured as the next pass read)")
        if not self.rules.gap_met(record):
            return None
        certificate.certified = True
        self.certificate = certificate
        return self.rules.reason(record, False)

    def _exact_into(self, record: dict) -> None:
        """Replace the pass estimates of ``record`` by an exact evaluation at the current w (with folds: the folds'
        evaluation, whose held-out counts are kept in :attr:`held`)."""
        start = time.perf_counter()
        if self.problem.folds > 1:
            losses, self.held = self._evaluate_folds()
            make_exact(record, self.solver, (losses, None, None), 1.0, each_problem=False)
        else:
            make_exact(record, self.solver, self.evaluate(), weight_of(self.store))
        seconds = time.perf_counter() - start
        self.state.eval_seconds += seconds
        self.monitor.detail(f"exact evaluation pass: {seconds:.2f} s")

    def _evaluate_folds(self) -> tuple[np.ndarray, np.ndarray]:
        """One exact pass at the current weights (the engine's: the kept blocks and those read): each problem's loss
        sum and each fold's held-out counts (:func:`~blocksvm.solvers.evaluate.evaluate_folds`)."""
        return self.passes.evaluate(self.problem, self.solver.weights(), self.params.prefetch, evaluate_folds)

    def start_from(self, model: LinearModel, source: str) -> None:
        """Begin from ``model``'s weights (``--warm-start``): same classes, features padded with zeros."""
        self.solver.check_warm_starts()
        p = self.problem
        check_warm_start(model, source, p.loss, p.bias, self.store.text_format)
        if not np.array_equal(np.asarray(model.classes, dtype=float), p.classes):
            raise ModelError(
                f"{source} has the classes {model.classes.tolist()}; {self.store.path} has "
                f"{p.classes.tolist()}: a warm start needs the same classes"
            )
        W, lost = model.weights_in(self.store.feature_map, p.n_features)
        if lost and self.store.feature_map is None and model.feature_map is None:
            raise ModelError(f"{source} has {model.n_features} features, more than the store's {p.n_features}")
        if lost:
            raise ModelError(
                f"{source} has {lost} features that {self.store.path} does not use: a warm start needs the "
                "store's features to include the model's"
            )
        self.solver.start_from(W)

    # ---- checkpoints --------------------------------------------------------------------

    def restore(self, checkpoint: Checkpoint, source: str = "the checkpoint", search: bool = False) -> None:
        """Continue from ``checkpoint``; refuse one made for another store or other parameters, or by a search of C
        unless ``search`` (by a training run if it is), or whose arrays do not fit this run's."""
        state = restore(checkpoint, self.params, self.identity, source, search)
        load_arrays(self.solver, checkpoint, source, self.store.n_rows)
        self.state = state
        dual = self.solver.dual_objectives()
        shapes = (self.solver.weights().shape, np.shape(dual) if dual is not None else (0,), self.store.n_blocks)
        self.certificate = Certificate.restored(checkpoint, *shapes, source)

    def snapshot(self) -> Checkpoint:
        """The run's state, with its pending (or certified) exact evaluation's."""
        checkpoint = super().snapshot()
        if self.certificate is not None:
            checkpoint.state |= self.certificate.state()
            checkpoint.arrays |= self.certificate.arrays()
        return checkpoint

    # ---- evaluation ---------------------------------------------------------------------

    def evaluate(self, store: BlockStore | None = None) -> tuple[np.ndarray, int, float]:
        """Exact pass over ``store`` (default: the training store): loss sums per problem, correct rows and the sum
        of squared errors (regression), at the current weights."""
        W, prefetch = self.solver.weights(), self.params.prefetch
        if store is None:
            return self.passes.evaluate(self.problem, W, prefetch)
        return engines.evaluate_blocks(self.problem, W, store.iter_blocks(prefetch=prefetch))

    def validation_score(self, store: BlockStore) -> dict:
        """The current weights on ``store``: ``validation_accuracy``, or ``validation_mse`` in regression, or the share
        of its rows a one-class model calls inliers, ``validation_inliers`` (weighted by the store's instance weights,
        if it has them)."""
        _, correct, squared = self.evaluate(store)
        if self.problem.task == REGRESSION:
            return {"validation_mse": squared / weight_of(store)}
        if self.problem.task == NOVELTY:
            return {"validation_inliers": correct / weight_of(store)}
        return {"validation_accuracy": correct / weight_of(store)}

    def model(self, stop_reason: str | None = None) -> LinearModel:
        """The model at the current weights (or at the certified ones of the last record, :mod:`.certificate`), with
        a training summary."""
        history = self.state.history
        certified = self.certificate is not None and self.certificate.certified
        last = history[-1] if history else {}
        summary = {
            "outer_iterations": len(history),
            "stop_reason": stop_reason,
            "seconds": round(self.elapsed(), 3),
            "primal": last.get("primal"),
            "primal_exact": last.get("primal_exact"),
            "dual": last.get("dual"),
            "gap": last.get("gap"),
            "pg_violation": last.get("pg_violation"),
            "nsv": last.get("nsv") if certified else self.solver.pass_figures({}).get("nsv"),
            "train_accuracy": last.get("train_accuracy"),
            "validation_accuracy": last.get("validation_accuracy"),
            **{key: last[key] for key in ("train_mse", "validation_mse", "train_inliers", "rho") if key in last},
            "blocks_visited": self.state.blocks_visited,
            "rows": self.store.n_rows,
            "memory_mb": self.params.memory_mb,  # the run's budget, and what its passes kept of the store within it
            **(self.passes.kept.summary() if getattr(self.passes, "kept", None) is not None else {}),
            **({"nonzero_weights": last["nonzero_weights"]} if "nonzero_weights" in last else {}),
        }
        model = LinearModel.from_weights(
            self.certificate.weights if certified else self.solver.weights(),
            self.problem.classes,
            self.problem.bias,
            index_base=self.store.index_base,
            params=self.params.to_dict(),
            summary=summary,
            store_fingerprint=self.store.fingerprint,
            loss=self.problem.loss.name,
            feature_map=self.store.feature_map,
            space_features=self.store.space_features,
            text_format=self.store.text_format,
        )
        return model.keep_nonzero() if self.problem.penalty.sparse else model  # an L1 model: its nonzero weights


def _final_line(summary: dict) -> str:
    parts = [f"optimization finished: {summary['stop_reason']}", f"#iter = {summary['outer_iterations']}"]
    if summary["primal"] is not None:
        mark = "" if summary.get("primal_exact") else "~"
        objective = liblinear_objective(summary)  # LIBLINEAR's "Objective value": a dual solver's is its dual's
        if objective == summary["primal"]:
            parts.append(f"objective{mark} = {objective:.6e}")
        else:
            parts += [f"objective = {objective:.6e}", f"primal{mark} = {summary['primal']:.6e}"]
    if summary["nsv"] is not None:
        parts.append(f"nSV = {summary['nsv']}")
    if summary.get("nonzero_weights") is not None:
        parts.append(f"#nonzeros = {summary['nonzero_weights']}")
    if summary["gap"] is not None:
        parts.append(f"gap = {summary['gap']:.2e}")
    return ", ".join(parts)


def _with_workers(params: TrainParams, client) -> TrainParams:
    """``params`` with the number of shards settled: as given, else one per worker of ``client``'s cluster, else 1."""
    if params.workers is not None:
        return params
    workers = len(client.scheduler_info()["workers"]) if client is not None else 1
    return replace(params, workers=max(workers, 1))


def train(
    store, params: TrainParams | None = None, *, verbose: int = 1, progress: bool | None = None, client=None, **options
) -> TrainResult:
    """Train a linear model on a block store by block minimization.

    Parameters
    ----------
    store : BlockStore or path
        Training data, from :func:`blocksvm.convert`; or a LIBSVM text file, converted once into a
        cached store (:mod:`blocksvm.io.text_cache`) and reused while the file is unchanged.
    params : TrainParams, optional
        Hyper-parameters and stopping rules; keyword ``options`` (``C=0.1``, ``loss="hinge"``, ...)
        replace its fields.
    verbose : int, default=1
        0 silent, 1 one line per outer iteration.
    progress : bool, optional
        A progress bar over the blocks of each pass (default: when standard error is a terminal).
    client : dask.distributed.Client, optional
        Train on this dask cluster by CoCoA+ rounds (``workers`` shards, default one per worker;
        docs/PARALLEL.md). The workers read the store at the same path. ``workers=K`` without a
        client runs the K shards on threads of this process.
    **options
        The training parameters that ``train`` reads and its run options: ``validation`` (a store whose
        accuracy is recorded each pass), ``history_path``, ``checkpoint`` (written after every pass, every
        ``checkpoint_every`` blocks, every ``checkpoint_seconds``, and when training stops; defaults to
        ``resume``), ``resume`` (continue from this checkpoint: only the parameters in
        :data:`~blocksvm.train.params.SAFE_TO_CHANGE` may differ), ``warm_start`` (a model to start from,
        for the online learners), ``cache_dir`` (where text inputs' stores are cached). docs/PARAMETERS.md
        lists them all; a parameter that ``train`` or the chosen solver does not read is refused.

    Returns
    -------
    TrainResult

    Examples
    --------
    >>> result = train("a9a.bsvm", C=1.0, loss="hinge", tol=1e-4)   # doctest: +SKIP
    >>> result.model.coef.shape                                        # doctest: +SKIP
    (1, 123)
    """
    params, run = settle("train", params, options)  # a bad parameter must not wait for a text input's conversion
    if run.scheduler is not None and client is None:  # a cluster by its address: connected for this run
        executors.check_solver(params.solver)
        with executors.connect(run.scheduler) as client:
            return train(
                store, params, verbose=verbose, progress=progress, client=client, **_given_but_scheduler(options)
            )
    resume, warm_start = run.resume, run.warm_start
    checkpointer = checkpointer_of(run)
    from blocksvm.io.text_cache import say_to_stderr, store_or_cached

    say, bars = (say_to_stderr if verbose else None), (progress if verbose else False)
    store = store_or_cached(store, run.cache_dir, say=say, progress=bars, skip_bad_lines=run.skip_bad_lines)
    validation = store_or_cached(run.validation, run.cache_dir, say=say, progress=bars)
    params = for_store(params, store, say=say)  # (a column learner's layout: before the store is locked)
    # no conversion replaces the stores while this run reads them, no other run writes its history (issue 34); the
    # checkpoint's lock for the whole run, and the checkpoint resumed read once under it
    lock = checkpointer or nullcontext()
    with reading(store, validation), writing({"the history": run.history_path}), lock:
        saved, warning = read_latest(resume) if resume else (None, None)
        trainer = Trainer(
            store,
            params,
            validation=validation,
            history_path=run.history_path,
            verbose=verbose,
            progress=progress,
            checkpointer=checkpointer,
            client=client,
            memory=recorded_memory(saved),
        )
        if validation is not None:
            check_validation(trainer.validation, trainer.store, trainer.problem, run.strict, run.validation)
        if warm_start and not resume:
            trainer.start_from(load_warm_start(warm_start), str(warm_start))
        if saved is not None:
            if warning:
                trainer.monitor.say(f"warning: {warning}")
            trainer.restore(saved, f"checkpoint {resume}")
            st = trainer.state
            trainer.monitor.say(f"resuming at iteration {st.outer}, block {st.position}/{trainer.store.n_blocks}")
        result = trainer.run()
        if checkpointer is not None:
            result.model.summary["checkpoints"] = checkpointer.count
            result.model.summary["checkpoint_seconds"] = round(checkpointer.seconds, 4)
        return result


def _given_but_scheduler(options: dict) -> dict:
    return {name: value for name, value in options.items() if name != "scheduler"}


def checkpointer_of(run) -> Checkpointer | None:
    """The :class:`Checkpointer` of a run's options (``checkpoint``, defaulting to ``resume``), or None.

    Refuses, before any work: a new run over an existing checkpoint (a typo must not overwrite another run's),
    and a resume from a checkpoint that is not there (nor its ``.prev``).
    """
    checkpoint, resume = run.checkpoint or run.resume, run.resume
    if checkpoint and not resume and os.path.exists(checkpoint):
        raise CheckpointError(
            f"checkpoint {checkpoint} exists: pass resume={checkpoint!s} (--resume) to "
            "continue that run, or remove it to start anew"
        )
    if resume and not (os.path.exists(resume) or os.path.exists(f"{resume}.prev")):
        raise CheckpointError(f"{resume}: no such checkpoint")
    if not checkpoint:
        return None
    return Checkpointer(checkpoint, every_blocks=run.checkpoint_every, every_seconds=run.checkpoint_seconds)


def recorded_memory(saved) -> float | None:
    """The data bytes of the memory plan the run resumed from checkpoint ``saved`` made when it started, so that it
    keeps the same blocks in memory and ends where an uninterrupted run does; None: a new run (``saved`` None), or a
    checkpoint written before plans were recorded (its run plans anew)."""
    data = saved.state.get("memory", {}).get("data_mb") if saved is not None else None
    return data * 1e6 if isinstance(data, (int, float)) else None


def read_resumed(path, say: Callable[[str], None]):
    """The checkpoint to resume from at ``path`` (or its ``.prev``, saying why through ``say``)."""
    saved, warning = read_latest(path)
    if warning:
        say(f"warning: {warning}")
    return saved
