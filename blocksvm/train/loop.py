"""The outer loop of block minimization (Yu, Hsieh, Chang & Lin, KDD 2010, Algorithm 1).

::

    for outer = 1, 2, ...:                         (one pass over the store)
        for b in a fresh random permutation of the blocks:
            load block b                           (a reader thread loads the next one meanwhile)
            run the inner solver on block b        (updates w, and alpha of b's rows)
        record the pass; stop if a rule says so

The loop moves blocks and decides when to stop; all arithmetic on rows happens in
:mod:`blocksvm.solvers`. Every random choice is a function of ``(seed, outer, block)``, so a run
resumed from a checkpoint takes exactly the path of an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from blocksvm._progress import progress_bar
from blocksvm.checkpoint import Checkpoint, Checkpointer, read_latest
from blocksvm.errors import CheckpointError, ModelError, ParameterError
from blocksvm.model import LinearModel
from blocksvm.monitor import Monitor, PassSums, relative_gap
from blocksvm.solvers import SOLVERS, Problem
from blocksvm.solvers.evaluate import correct_predictions, evaluate_block
from blocksvm.store import BlockStore, ReadStats
from blocksvm.train.params import SAFE_TO_CHANGE, TrainParams
from blocksvm.train.signals import deferred_signals

TIME_LIMIT = "time limit reached"


def block_order(seed: int, outer: int, n_blocks: int) -> np.ndarray:
    """The random order of the blocks in outer iteration ``outer``."""
    return np.random.default_rng([seed, outer]).permutation(n_blocks)


def kernel_seeds(seed: int, outer: int, block: int, n_problems: int) -> np.ndarray:
    """Seeds of the row permutations of each problem on ``block`` in iteration ``outer``."""
    return np.random.SeedSequence([seed, outer, block]).generate_state(n_problems, np.uint64) >> np.uint64(1)


@dataclass
class TrainState:
    """Where training stands, besides the solver's arrays: what a checkpoint must hold."""

    outer: int = 1
    position: int = 0  # blocks of iteration ``outer`` already solved
    sums: PassSums | None = None
    history: list = field(default_factory=list)
    elapsed: float = 0.0  # seconds trained before the current process started
    blocks_visited: int = 0
    eval_seconds: float = 0.0  # of the elapsed seconds, those spent in evaluation passes


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


class Trainer:
    """Block-minimization training of a linear SVM on a block store.

    Parameters
    ----------
    store : BlockStore or path
    params : TrainParams
    validation : BlockStore or path, optional
        Accuracy on it is recorded after every outer iteration.
    history_path : path, optional
        JSON-lines history file.
    verbose : int, default=1
    progress : bool, optional
        tqdm bar over the blocks of a pass (default: when standard error is a terminal).
    checkpointer : optional
        Object with ``after_block(trainer)``, ``after_pass(trainer)`` and ``on_stop(trainer)``
        (:class:`blocksvm.checkpoint.Checkpointer`).
    """

    def __init__(self, store, params: TrainParams, *, validation=None, history_path=None,
                 verbose: int = 1, progress: bool | None = None, checkpointer=None):  # fmt: skip
        self.store = store if isinstance(store, BlockStore) else BlockStore(store)
        self.params = params.validate()
        self.validation = _open_validation(validation, self.store)
        self.problem = Problem.from_store(self.store, self.params)
        self.solver = SOLVERS[self.params.solver](self.problem, self.params)
        self.state = TrainState(sums=PassSums.zeros(self.problem.n_problems))
        self.monitor = Monitor(history_path, verbose=verbose)
        self.progress = progress
        self.checkpointer = checkpointer
        self.read_stats = ReadStats()
        self._started = time.perf_counter()
        self._previous = None  # the block visited last, kept for working_set="pair"
        if self.params.solver == "pegasos" and (self.params.eps is not None or self.params.tol > 0):
            self.stop_rules_note = "pegasos has no dual: it stops after max_outer passes or the time limit"
        else:
            self.stop_rules_note = None

    # ---- the loop -----------------------------------------------------------------------

    def run(self) -> TrainResult:
        """Train until a stopping rule, the time limit or a signal; return the model."""
        st = self.state
        self._started = time.perf_counter()
        self.monitor.rewrite(st.history)  # now, not before: a refused resume must not touch the file
        if self.stop_rules_note and st.outer == 1 and st.position == 0:
            self.monitor.say(f"note: {self.stop_rules_note}")
        reason, interrupted = None, False
        if st.history and st.position == 0:  # resumed at a pass boundary: the rules may already hold
            reason = self._stop_reason(st.history[-1])
        with deferred_signals() as stop:
            while reason is None:
                completed = self._run_pass(stop)
                if not completed:
                    interrupted = True
                    reason = f"stopped by {stop.signal_name}" if stop else TIME_LIMIT
                    self.monitor.say(f"{reason} in iteration {st.outer} after "
                                     f"{st.position}/{self.store.n_blocks} blocks")  # fmt: skip
                    break
                record = self._finish_pass()
                reason = self._stop_reason(record)
                interrupted = reason == TIME_LIMIT  # the run is cut, not finished
                if reason is not None and not record["primal_exact"]:
                    self._exact_into(record)  # the final objective is reported exactly
                self.monitor.record(record)
                st.history.append(record)
                st.outer += 1
                st.position = 0
                st.sums = PassSums.zeros(self.problem.n_problems)
                if self.checkpointer:
                    self.checkpointer.after_pass(self)
                if reason is None and stop:
                    interrupted, reason = True, f"stopped by {stop.signal_name}"
        if self.checkpointer:
            self.checkpointer.on_stop(self)
        model = self.model(reason)
        self.monitor.say(_final_line(model.summary))
        if reason.startswith("max_outer") and self.params.solver == "dual-cd":
            self.monitor.say("WARNING: reached max_outer; the solution may not meet the tolerance")
        return TrainResult(model, st.history, reason, interrupted)

    def _run_pass(self, stop) -> bool:
        """Solve the remaining blocks of the current outer iteration; False if stopped early."""
        p, st, store = self.params, self.state, self.store
        order = block_order(p.seed, st.outer, store.n_blocks)
        self.solver.start_pass(st.outer)
        n_k = self.problem.n_problems
        bar = progress_bar(store.n_blocks, f"iter {st.outer}", unit="block", enabled=self.progress, leave=False)
        bar.update(st.position)
        if st.history:  # the last pass's figures, while this one runs
            last = st.history[-1]
            bar.set_postfix_str(f"primal {last['primal']:.4e}" + (f" gap {last['gap']:.1e}" if last["gap"] else ""))
        try:
            blocks = store.iter_blocks(order[st.position:], prefetch=p.prefetch, stats=self.read_stats)
            for block in blocks:
                seeds = kernel_seeds(p.seed, st.outer, block.index, n_k)
                companion = self._companion_for(block)
                start = time.perf_counter()
                report = self.solver.solve(block, seeds, companion)
                st.sums.add(report, block.n_rows, time.perf_counter() - start)
                self._previous = block if p.working_set == "pair" else None
                st.position += 1
                st.blocks_visited += 1
                bar.update()
                if self.checkpointer:
                    self.checkpointer.after_block(self)
                if stop or self._out_of_time():
                    return st.position == store.n_blocks and not stop
        finally:
            bar.close()
        return True

    def _companion_for(self, block):
        """The block solved together with ``block``: the one visited just before it ("pair").

        After a resume the previous block is not in memory yet; it is read again, so a resumed
        run pairs exactly the blocks an uninterrupted one did.
        """
        if self.params.working_set != "pair" or self.store.n_blocks < 2:
            return None
        st = self.state
        if self._previous is None and st.blocks_visited > 0:
            if st.position > 0:
                index = block_order(self.params.seed, st.outer, self.store.n_blocks)[st.position - 1]
            else:
                index = block_order(self.params.seed, st.outer - 1, self.store.n_blocks)[-1]
            self._previous = self.store.read_block(int(index))
        previous = self._previous
        return previous if previous is not None and previous.index != block.index else None

    def _out_of_time(self) -> bool:
        limit = self.params.time_limit
        return limit is not None and time.perf_counter() - self._started >= limit

    def _finish_pass(self) -> dict:
        """The history record of the pass just completed (an exact evaluation when due)."""
        st, sums, solver = self.state, self.state.sums, self.solver
        W = solver.weights()
        half_sq_norm = 0.5 * np.einsum("kj,kj->k", W, W)
        primal = half_sq_norm + np.asarray(sums.loss)
        dual = solver.dual_objectives()
        record = {
            "outer": st.outer,
            "time": round(self.elapsed(), 4),
            "train_time": round(self.elapsed() - st.eval_seconds, 4),
            "compute_seconds": round(sums.compute_seconds, 4),
            "read_seconds": round(self.read_stats.read_seconds, 4),
            "wait_seconds": round(self.read_stats.wait_seconds, 4),
            "bytes_read": self.read_stats.bytes_read,
            "primal": float(primal.sum()),
            "primal_exact": False,
            "dual": None if dual is None else float(dual.sum()),
            "gap": None if dual is None else relative_gap(primal, dual),
            "pg_violation": None,
            "nsv": solver.support_vectors() if solver.has_dual else None,
            "train_accuracy": sums.correct / max(sums.rows, 1),
            "validation_accuracy": None,
            "inner_passes": sums.passes / max(sums.blocks, 1),
            "updates": sums.updates,
            "blocks_visited": st.blocks_visited,
        }
        if solver.has_dual:
            record["pg_violation"] = float(np.max(np.subtract(sums.pg_max, sums.pg_min)))
        self.read_stats = ReadStats()
        due = self.params.eval_every and st.outer % self.params.eval_every == 0
        if due or self._gap_rule_met(record):
            self._exact_into(record)
        if self.validation is not None:
            start = time.perf_counter()
            record["validation_accuracy"] = self.accuracy(self.validation)
            st.eval_seconds += time.perf_counter() - start
        return record

    def _gap_rule_met(self, record: dict) -> bool:
        return self.params.tol > 0 and record["gap"] is not None and record["gap"] <= self.params.tol

    def _exact_into(self, record: dict) -> None:
        """Replace the pass estimates of ``record`` by an exact evaluation at the current w."""
        dual = self.solver.dual_objectives()
        start = time.perf_counter()
        losses, correct = self.evaluate()
        seconds = time.perf_counter() - start
        self.state.eval_seconds += seconds
        self.monitor.detail(f"exact evaluation pass: {seconds:.2f} s")
        W = self.solver.weights()
        primal = 0.5 * np.einsum("kj,kj->k", W, W) + losses
        record["primal"] = float(primal.sum())
        record["primal_exact"] = True
        record["train_accuracy"] = correct / self.store.n_rows
        if dual is not None:
            record["gap"] = relative_gap(primal, dual)
            record["per_problem_dual"] = dual.tolist()
        record["per_problem_primal"] = primal.tolist()

    def _stop_reason(self, record: dict) -> str | None:
        """The stopping rules, judged on the pass just recorded."""
        p = self.params
        if record["primal_exact"] and self._gap_rule_met(record):
            return f"relative duality gap {record['gap']:.2e} <= tol {p.tol:g}"
        if p.eps is not None and record["pg_violation"] is not None and record["pg_violation"] <= p.eps:
            return f"PG violation {record['pg_violation']:.3g} <= eps {p.eps:g}"
        if record["outer"] >= p.max_outer:
            return f"max_outer ({p.max_outer}) reached"
        if self._out_of_time():
            return TIME_LIMIT
        return None

    # ---- checkpoints --------------------------------------------------------------------

    def snapshot(self) -> Checkpoint:
        """The whole training state, for :mod:`blocksvm.checkpoint`."""
        st = self.state
        state = {"outer": st.outer, "position": st.position, "sums": st.sums.to_dict(),
                 "history": st.history, "elapsed": self.elapsed(), "blocks_visited": st.blocks_visited,
                 "eval_seconds": st.eval_seconds}  # fmt: skip
        store = {"fingerprint": self.store.fingerprint, "rows": self.store.n_rows, "nnz": self.store.nnz,
                 "blocks": self.store.n_blocks, "path": str(self.store.path)}  # fmt: skip
        return Checkpoint(self.params.to_dict(), store, state, self.solver.state())

    def restore(self, checkpoint: Checkpoint, source: str = "the checkpoint") -> None:
        """Continue from ``checkpoint``; refuse one made for another store or other parameters."""
        store = checkpoint.store
        if store["fingerprint"] != self.store.fingerprint:
            raise CheckpointError(
                f"{source} was made for the store {store['path']} ({store['rows']} rows, {store['nnz']} nnz), "
                f"not for {self.store.path} ({self.store.n_rows} rows, {self.store.nnz} nnz)"
            )
        ours = self.params.to_dict()
        changed = [k for k in ours if k not in SAFE_TO_CHANGE and _json_value(ours[k]) != checkpoint.params.get(k)]
        if changed:
            details = ", ".join(f"{k}={checkpoint.params.get(k)!r} there, {ours[k]!r} here" for k in changed)
            raise CheckpointError(
                f"{source} was made with other parameters ({details}); only "
                f"{', '.join(sorted(SAFE_TO_CHANGE))} may change when resuming"
            )
        try:
            self.solver.load_state(checkpoint.arrays)
        except (KeyError, ValueError) as exc:
            raise CheckpointError(f"{source} does not fit this problem: {exc}") from None
        s = checkpoint.state
        self.state = TrainState(outer=s["outer"], position=s["position"], sums=PassSums(**s["sums"]),
                                history=list(s["history"]), elapsed=s["elapsed"],
                                blocks_visited=s["blocks_visited"], eval_seconds=s["eval_seconds"])  # fmt: skip
        self._previous = None

    # ---- evaluation ---------------------------------------------------------------------

    def evaluate(self) -> tuple[np.ndarray, int]:
        """Exact pass: loss sums per problem and correct rows, at the current weights."""
        W = self.solver.weights()
        losses = np.zeros(self.problem.n_problems)
        correct = 0
        for block in self.store.iter_blocks(prefetch=self.params.prefetch):
            block_losses, block_correct = evaluate_block(self.problem, W, block)
            losses += block_losses
            correct += block_correct
        return losses, correct

    def accuracy(self, store: BlockStore) -> float:
        """Accuracy of the current weights on ``store``."""
        W = self.solver.weights()
        correct = sum(correct_predictions(self.problem, W, block)
                      for block in store.iter_blocks(prefetch=self.params.prefetch))  # fmt: skip
        return correct / store.n_rows

    def elapsed(self) -> float:
        return self.state.elapsed + time.perf_counter() - self._started

    def model(self, stop_reason: str | None = None) -> LinearModel:
        """The model at the current weights, with a training summary."""
        history = self.state.history
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
            "nsv": self.solver.support_vectors() if self.solver.has_dual else None,
            "train_accuracy": last.get("train_accuracy"),
            "validation_accuracy": last.get("validation_accuracy"),
            "blocks_visited": self.state.blocks_visited,
            "rows": self.store.n_rows,
        }
        return LinearModel.from_weights(
            self.solver.weights(), self.problem.classes, self.problem.bias,
            index_base=self.store.index_base, params=self.params.to_dict(), summary=summary,
            store_fingerprint=self.store.fingerprint,
        )  # fmt: skip


def _json_value(value):
    """A parameter as it reads back from JSON (dict keys become strings)."""
    return json.loads(json.dumps(value))


def _final_line(summary: dict) -> str:
    parts = [f"optimization finished: {summary['stop_reason']}",
             f"#iter = {summary['outer_iterations']}"]  # fmt: skip
    if summary["primal"] is not None:
        mark = "" if summary.get("primal_exact") else "~"
        parts.append(f"objective{mark} = {summary['primal']:.6e}")
    if summary["nsv"] is not None:
        parts.append(f"nSV = {summary['nsv']}")
    if summary["gap"] is not None:
        parts.append(f"gap = {summary['gap']:.2e}")
    return ", ".join(parts)


def _open_validation(validation, store: BlockStore) -> BlockStore | None:
    if validation is None:
        return None
    validation = validation if isinstance(validation, BlockStore) else BlockStore(validation)
    if validation.index_base != store.index_base:
        raise ModelError(
            f"validation store {validation.path} has {validation.index_base}-based feature indices, "
            f"the training store {store.path} {store.index_base}-based: they are different feature spaces"
        )
    return validation


def train(store, params: TrainParams | None = None, *, validation=None,
          history_path: str | os.PathLike | None = None, verbose: int = 1, progress: bool | None = None,
          checkpoint: str | os.PathLike | None = None, checkpoint_every: int = 0,
          checkpoint_seconds: float | None = None, resume: str | os.PathLike | None = None,
          **overrides) -> TrainResult:  # fmt: skip
    """Train a linear SVM on a block store by block minimization.

    Parameters
    ----------
    store : BlockStore or path
        Training data, from :func:`blocksvm.convert`.
    params : TrainParams, optional
        Hyper-parameters and stopping rules; keyword ``overrides`` (``C=0.1``, ``loss="hinge"``,
        ...) replace its fields.
    validation : BlockStore or path, optional
    history_path : path, optional
        Where to write the JSON-lines history.
    verbose : int, default=1
        0 silent, 1 one line per outer iteration.
    progress : bool, optional
    checkpoint : path, optional
        Write checkpoints here: at the end of every outer iteration, every ``checkpoint_every``
        blocks, every ``checkpoint_seconds``, and when training stops. Defaults to ``resume``.
    resume : path, optional
        Continue from this checkpoint (or its ``.prev`` if it is damaged). Only the parameters in
        :data:`~blocksvm.train.params.SAFE_TO_CHANGE` may differ from the checkpoint's.

    Returns
    -------
    TrainResult

    Examples
    --------
    >>> result = train("a9a.bsvm", C=1.0, loss="hinge", tol=1e-4)   # doctest: +SKIP
    >>> result.model.coef.shape                                        # doctest: +SKIP
    (1, 123)
    """
    params = params or TrainParams()
    if overrides:
        unknown = set(overrides) - set(params.to_dict())
        if unknown:
            raise ParameterError(f"unknown training parameter(s): {', '.join(sorted(unknown))}")
        params = TrainParams.from_dict({**params.to_dict(), **overrides})
    checkpoint = checkpoint or resume
    if checkpoint and not resume and os.path.exists(checkpoint):
        raise CheckpointError(f"checkpoint {checkpoint} exists: pass resume={checkpoint!s} (--resume) to "
                              "continue that run, or remove it to start anew")  # fmt: skip
    checkpointer = (Checkpointer(checkpoint, every_blocks=checkpoint_every, every_seconds=checkpoint_seconds)
                    if checkpoint else None)  # fmt: skip
    trainer = Trainer(store, params, validation=validation, history_path=history_path,
                      verbose=verbose, progress=progress, checkpointer=checkpointer)  # fmt: skip
    if checkpointer is None:
        return trainer.run()
    if resume and not (os.path.exists(resume) or os.path.exists(f"{resume}.prev")):
        raise CheckpointError(f"{resume}: no such checkpoint")
    with checkpointer:  # holds the lock for the whole run
        if resume:
            saved, warning = read_latest(resume)
            if warning:
                trainer.monitor.say(f"warning: {warning}")
            trainer.restore(saved, f"checkpoint {resume}")
            trainer.monitor.say(f"resuming at iteration {trainer.state.outer}, block "
                                f"{trainer.state.position}/{trainer.store.n_blocks}")  # fmt: skip
        result = trainer.run()
    result.model.summary["checkpoints"] = checkpointer.count
    result.model.summary["checkpoint_seconds"] = round(checkpointer.seconds, 4)
    return result
