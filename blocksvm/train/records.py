"""Records and stop rules: sums over a pass, one history record per pass, and when to stop.

Which figures are exact (see docs/ALGORITHMS.md):

- ``dual`` is exact: the solver keeps what it needs (dual CD: per-block sums of ``alpha``) and
  ``||w||^2`` is computed from the ``w`` in memory at the end of the pass.
- ``primal`` (the sum of the solver's objective terms), ``gap`` and ``train_accuracy`` are *pass
  estimates* unless ``primal_exact`` is true: each row's loss is taken when the pass reaches it,
  with a ``w`` that moved during the pass. An exact evaluation pass recomputes them at the final
  ``w`` of the iteration; it runs to confirm the gap rule and every ``eval_every`` iterations.
- ``time`` is wall-clock seconds since training began; ``train_time`` leaves out the exact
  evaluation and validation passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from blocksvm.errors import NegativeGapError
from blocksvm.losses import CLASSIFICATION, LOGISTIC, NOVELTY, REGRESSION

TIME_LIMIT = "time limit reached"
NEAR, FAR, EVERY = 2.0, 30.0, 3  # when an estimated gap asks for an exact evaluation (StopRules.exact_due)
NEGATIVE_GAP = -1e-10
"""The relative duality gap below which an exact evaluation is refused: weak duality (P(w) >= D(alpha)) holds for
every w and alpha of one data set, so a gap below minus the rounding of the sums means the rows changed."""


@dataclass
class PassSums:
    """Sums over the blocks visited so far in the current outer iteration.

    With instance weights every row counts ``weight_i`` times: ``correct`` is then the weight of the rows predicted
    right and ``weight`` the weight of the rows visited (None while every row visited weighed 1: ``rows``).
    """

    loss: list
    correct: int | float = 0
    rows: int = 0
    blocks: int = 0
    passes: float = 0.0
    updates: int = 0
    compute_seconds: float = 0.0
    figures: dict = field(default_factory=dict)  # the solver's own, combined by Solver.combine
    weight: float | None = None
    sweep_seconds: float = 0.0  # of compute_seconds, in the learner's kernels

    @classmethod
    def zeros(cls, n_problems: int) -> PassSums:
        return cls([0.0] * n_problems)

    @property
    def seen(self) -> int | float:
        """What the visited rows count for: their number, or their total weight."""
        return self.rows if self.weight is None else self.weight

    def add(self, report, n_rows: int, seconds: float, combine, weight: float | None = None) -> None:
        """Add a visit of ``n_rows`` rows (of total instance weight ``weight``: None, they have none). Sums of one
        loss take the total of a visit's problems (a learner whose problems grow with the classes it meets)."""
        loss = np.asarray(report.loss, dtype=float)
        if len(self.loss) == 1 < len(loss):
            loss = np.array([loss.sum()])
        self.loss = (np.asarray(self.loss) + loss).tolist()
        self.figures = combine(self.figures, report.figures) if report.figures else self.figures
        self.correct += report.correct if weight is not None or self.weight is not None else int(report.correct)
        self._add_weight(n_rows, weight)
        self.rows += n_rows
        self.blocks += 1
        self.passes += report.passes
        self.updates += report.updates
        self.compute_seconds += seconds
        self.sweep_seconds += report.sweep_seconds

    def merge(self, other: PassSums, combine) -> None:
        """Add the sums of ``other``, a pass over other blocks (a shard's round), as if one pass."""
        self.loss = (np.asarray(self.loss) + other.loss).tolist()
        self.figures = combine(self.figures, other.figures) if other.figures else self.figures
        self.correct += other.correct
        self._add_weight(other.rows, other.weight)
        self.rows += other.rows
        self.blocks += other.blocks
        self.passes += other.passes
        self.updates += other.updates
        self.compute_seconds += other.compute_seconds
        self.sweep_seconds += other.sweep_seconds

    def _add_weight(self, n_rows: int, weight: float | None) -> None:
        if weight is not None or self.weight is not None:  # (the rows before weighed 1 each)
            self.weight = self.seen + (n_rows if weight is None else weight)

    def to_dict(self) -> dict:
        values = asdict(self)
        if self.weight is None:  # (the sums of rows without weights, as written before weights)
            del values["weight"]
        return values


def share(part: float, whole: float) -> float:
    """``part / whole``, 0 for nothing seen."""
    return part / whole if whole > 0 else 0.0


def relative_gap(primal: np.ndarray, dual: np.ndarray) -> float:
    """Largest ``(P - D) / |P|`` over the problems."""
    return float(np.max((primal - dual) / np.maximum(np.abs(primal), 1e-300)))


def pass_record(solver, sums: PassSums, timing: dict, blocks_visited: int, first: dict | None = None) -> dict:
    """The history record of a pass from its sums (estimates: see the module's docstring); ``first``: the first record
    of the run (None: this is it), which a violation measured as a 1-norm is judged against
    (:func:`relative_violation`)."""
    W = solver.weights()
    primal = sum(solver.objective_terms(W, np.asarray(sums.loss)).values())
    dual = solver.dual_objectives()
    record = {
        **timing,
        "primal": float(primal.sum()),
        "primal_exact": False,
        "dual": None if dual is None else float(dual.sum()),
        "gap": None if dual is None else relative_gap(primal, dual),
        "pg_violation": None,
        "nsv": None,
        "train_accuracy": share(sums.correct, sums.seen) if solver.problem.task == CLASSIFICATION else None,
        **({"train_inliers": share(sums.correct, sums.seen)} if solver.problem.task == NOVELTY else {}),
        "validation_accuracy": None,
        "inner_passes": sums.passes / max(sums.blocks, 1),
        "updates": sums.updates,
        "blocks_visited": blocks_visited,
        **solver.pass_figures(sums.figures),
        **(progressive(sums, solver.problem.loss.kind == LOGISTIC) if solver.online else {}),
    }
    relative_violation(record, first)
    return record


def relative_violation(record: dict, first: dict | None) -> None:
    """LIBLINEAR's rule of its SVR duals (-s 12 and 13, ``solve_l2r_l1l2_svr``): a pass's violation is the 1-norm of
    its rows' violations (``pg_norm1``, each problem's) over the first pass's, and ``-e`` bounds that ratio. Where the
    record has a 1-norm, its ``pg_violation`` becomes the largest ratio over the problems (a problem whose first pass
    had no violation: 0 while it has none). A run resumed from a history without 1-norms keeps the spread ``max PG -
    min PG`` and drops the 1-norm, so that the rule is one rule through the run."""
    norms = record.get("pg_norm1")
    if norms is None:
        return
    base = norms if first is None else first.get("pg_norm1")
    if base is None or len(base) != len(norms):
        del record["pg_norm1"]
        return
    record["pg_violation"] = max(n / b if b > 0 else (0.0 if n == 0 else math.inf) for n, b in zip(norms, base))


def pass_seconds(wall: float, sums: PassSums, read, evaluation: float, checkpoints: float) -> dict:
    """Where an iteration's ``wall`` seconds went, on the trainer's thread: the learner's kernels (``sweep``), the
    rest of its visits (``upkeep``: working sets, sums, per-block arrays), waiting for blocks (``wait``), the exact
    evaluation and validation passes, checkpoints, and the rest (``other``: the loop's bookkeeping, records,
    progress). ``reading`` is the readers' own seconds, beside the trainer's (read ahead on other threads): each
    block's read from its first byte to its checks, and its parts (``open``: h5py's file and metadata; ``io``: its
    chunks' bytes; ``decode``: their filters, on the decoding threads, added up; ``checks``)."""
    parts = {
        "sweep": sums.sweep_seconds,
        "upkeep": sums.compute_seconds - sums.sweep_seconds,
        "wait": read.wait_seconds,
        "evaluation": evaluation,
        "checkpoints": checkpoints,
    }
    parts["other"] = max(wall - sum(parts.values()), 0.0)
    reading = {"blocks": read.read_seconds, **read.parts}
    rounded = {k: round(v, 4) for k, v in parts.items()}
    return {"wall": round(wall, 4), **rounded, "reading": {k: round(v, 4) for k, v in reading.items()}}


def progressive(sums: PassSums, logistic: bool = False) -> dict:
    """Progressive validation of an online learner over a pass: each row judged before it was learned (with the
    logistic loss the mean loss is the log loss, also given under that name). With instance weights, means
    weighted by them (Vowpal Wabbit's average loss)."""
    seen = sums.seen
    figures = {
        "progressive_loss": share(float(np.sum(sums.loss)), seen),
        "progressive_accuracy": share(sums.correct, seen),
    }
    return figures | ({"progressive_log_loss": figures["progressive_loss"]} if logistic else {})


def make_exact(
    record: dict, solver, figures: tuple, n_rows: float, each_problem: bool = True, at: tuple | None = None
) -> None:
    """Replace the pass estimates of ``record`` by the figures of an exact evaluation at the current w (``at``: at
    the weights and dual objectives given, a pass before: :mod:`.certificate`): ``(losses, correct, squared)`` (loss
    sums per problem, correct rows, sum of squared errors; one-class: the rows it calls inliers; None: not counted, a
    search's folds are scored by their held-out rows); ``n_rows``: the rows evaluated (their total weight, with
    instance weights). A negative gap is refused (:func:`refuse_negative_gap`): ``each_problem``'s, else the largest
    (a search's folds, judged by their largest gap, as the rules judge it)."""
    losses, correct, squared = figures
    weights, dual = at if at is not None else (solver.weights(), solver.dual_objectives())
    primal = sum(solver.objective_terms(weights, losses).values())
    estimated = not record.get("primal_exact") and record.get("gap") is not None
    record["primal"] = float(primal.sum())
    record["primal_exact"] = True
    if correct is None:
        pass
    elif solver.problem.task == CLASSIFICATION:
        record["train_accuracy"] = correct / n_rows
    elif solver.problem.task == REGRESSION:
        record["train_mse"] = squared / n_rows
    else:  # one-class: the share of rows with w.x - rho > 0
        record["train_inliers"] = correct / n_rows
    if dual is not None:
        if estimated:  # (what the pass estimated: the next evaluations are judged by it)
            record["gap_estimate"] = record["gap"]
        record["gap"] = relative_gap(primal, dual)
        record["per_problem_dual"] = dual.tolist()
        if each_problem:  # every problem's gap, not only the largest: each must hold
            refuse_negative_gap(float(np.min((primal - dual) / np.maximum(np.abs(primal), 1e-300))), record)
    record["per_problem_primal"] = primal.tolist()


def refuse_negative_gap(gap: float, record: dict) -> None:
    """Stop the run when an exact relative duality ``gap`` is negative beyond rounding (:data:`NEGATIVE_GAP`).

    A negative gap is no convergence: the dual objective exceeds the primal, which no single data set allows. The
    rows the dual's ``alpha`` was made on are not the rows the primal was just evaluated on (a store replaced or a
    text file edited during the run; a resume on another data set), or the state is damaged.

    Raises
    ------
    NegativeGapError
        One line: the gap, the pass, and the likely causes.
    """
    if gap < NEGATIVE_GAP:
        where = f" in pass {record['outer']}" if "outer" in record else ""
        raise NegativeGapError(
            f"relative duality gap {gap:.2e}{where}: the dual objective exceeds the primal, which no single data "
            "set allows: the data changed under the run (a store converted again or copied over, a text file "
            "edited) or it resumed from a damaged checkpoint; no model written: train again on the data as it is now"
        )


def liblinear_objective(summary: dict) -> float | None:
    """The objective as LIBLINEAR prints it ("Objective value"): a primal solver's primal (Newton, OWL-QN: -s 0, 2, 5,
    6, 11), and a dual solver's dual value in its minimized form, ``-D`` (dual CD, Crammer and Singer's, the one-class
    SVM's: -s 1, 3, 4, 7, 12, 13, 21), the primal's negative at the optimum (``1/2 alpha^T Q alpha`` for -s 21)."""
    if summary.get("dual") is not None:
        return -float(summary["dual"])
    return summary.get("primal")


DEFAULT_TOL = 1e-3
"""The relative duality gap ``tol`` stands for when it is None and ``eps`` was not given (:class:`StopRules`)."""


class StopRules:
    """The rules that end training, judged on each pass record.

    ``tol`` (relative duality gap, confirmed exactly) and ``eps`` (PG violation) apply to the
    solvers that declare them in ``stop_rules``, and ``"solver"`` to a solver that judges its own iterations
    (Newton's gradient rule, LIBLINEAR's -e): its record says ``stop`` when it is done; ``max_outer`` and the
    time limit apply to all.

    ``tol`` None is :data:`DEFAULT_TOL`, but beside a PG rule (``eps`` given to a solver that has one): then ``-e``
    alone stops the run, as LIBLINEAR's ``-e`` does, and a tighter ``-e`` makes more passes (the default gap rule
    would stop them first). Both given, either stops the run, and the reason says when the gap stopped it before
    ``eps`` was met.
    """

    def __init__(self, params, solver_rules: frozenset[str]):
        self.params = params.with_solver_defaults()  # (a TrainParams made by hand: max_outer None, its solver's own)
        self.pg = "pg" in solver_rules and params.eps is not None
        self.tol = params.tol if params.tol is not None else 0.0 if self.pg else DEFAULT_TOL
        self.gap = "gap" in solver_rules and self.tol > 0
        self.own = "solver" in solver_rules

    @property
    def has_tolerance(self) -> bool:
        """A rule other than max_outer and the time limit can end the run."""
        return self.gap or self.pg or self.own

    def unused_note(self, solver_name: str) -> str | None:
        """A note when the user set a rule this solver does not have."""
        if not self.has_tolerance and (self.tol > 0 or self.params.eps is not None):
            return f"{solver_name} has no dual: it stops after max_outer passes or the time limit"
        return None

    def short_of(self, record: dict) -> str:
        """How far the last record is from the rules that would have ended the run (a warning at max_outer)."""
        p, far = self.params, []
        if self.gap and record.get("gap") is not None:
            far.append(f"relative duality gap {record['gap']:.1e} > tol {self.tol:g}")
        if self.pg and record.get("pg_violation") is not None:
            far.append(f"PG violation {record['pg_violation']:.2g} > eps {p.eps:g}")
        if self.own and record.get("gradient_norm") is not None:
            far.append(f"gradient norm {record['gradient_norm']:.1e} of its start's")
        return ", ".join(far) or "no tolerance met"

    def pg_met(self, record: dict) -> bool:
        """The PG rule holds over the rows the pass swept (LIBLINEAR's ``-e``)."""
        return self.pg and record.get("pg_violation") is not None and record["pg_violation"] <= self.params.eps

    def every_row_due(self, record: dict) -> bool:
        """LIBLINEAR's rule of its SVR duals (the 1-norm's: ``pg_norm1``) holds over the rows swept but rows were
        shrunk: as its loop, every row comes back and the next pass, over them all, decides (its ``active_size ==
        l``). (The spread of the classification codes stops where it holds over the rows swept: brought back, -s 1
        on a9a ended further from the optimum, a median 1.56x LIBLINEAR's distance over 7 draws against 0.91x.)"""
        return self.pg_met(record) and "pg_norm1" in record and bool(record.get("rows_shrunk"))

    def gap_met(self, record: dict) -> bool:
        return self.gap and record.get("gap") is not None and record["gap"] <= self.tol

    def exact_due(self, record: dict, history: list) -> bool:
        """Whether the gap rule wants ``record`` evaluated exactly (its estimate may meet the tolerance): the pass's
        estimate takes each row's loss when the pass reached it, at a ``w`` that moved after, and trails the exact
        gap, by more as the gap closes (2x at 1e-1, 10x at 1e-4 on generated sets). Scaled by what the last exact
        evaluation found of it (``history``'s, exact and estimated), the estimate within :data:`NEAR` of the
        tolerance asks for one; within :data:`FAR`, one every :data:`EVERY` passes (the estimate may stall above the
        tolerance while the exact gap closes). A pure function of the history: a resumed run evaluates where an
        uninterrupted one does."""
        if not self.gap or record.get("gap") is None:
            return False
        tol = self.tol
        last = next((h for h in reversed(history) if h.get("gap_estimate") is not None), None)
        ratio = 1.0 if last is None else min(max(last["gap"] / max(last["gap_estimate"], 1e-300), 0.01), 1.0)
        if record["gap"] * ratio <= NEAR * tol:
            return True
        since = record["outer"] - (last["outer"] if last is not None else 0)
        return record["gap"] <= FAR * tol and since >= EVERY

    def reason(self, record: dict, out_of_time: bool) -> str | None:
        p = self.params
        if record.get("primal_exact") and record.get("gap") is not None:
            refuse_negative_gap(record["gap"], record)  # never "optimization finished" (issue 34)
        if self.own and record.get("stop"):
            return record["stop"]
        pg_met = self.pg_met(record) and not self.every_row_due(record)
        if record["primal_exact"] and self.gap_met(record):
            reason = f"relative duality gap {record['gap']:.2e} <= tol {self.tol:g}"
            if self.pg and not pg_met and record.get("pg_violation") is not None:  # -e given, and not what stopped it
                pg = record["pg_violation"]
                reason += f" (PG violation {pg:.3g} not yet <= eps {p.eps:g}: --tol 0 leaves -e alone)"
            return reason
        if pg_met:
            what = "PG violation's 1-norm over the first pass's" if "pg_norm1" in record else "PG violation"
            return f"{what} {record['pg_violation']:.3g} <= eps {p.eps:g}"
        if record["outer"] >= p.max_outer:
            return f"max_outer ({p.max_outer}) reached"
        if out_of_time:
            return TIME_LIMIT
        return None
