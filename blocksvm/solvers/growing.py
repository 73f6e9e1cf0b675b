"""An online learner whose problem grows with the classes and features it meets: a stream, ``partial_fit``.

The model grows with the data: a feature index beyond the model's adds zero weights; a new class label
changes the problem (:meth:`blocksvm.solvers.Problem.build`) at the label's first row, and every problem
that already existed keeps its state:

- one class seen: its problem ("that class against the rest to come") learns alone;
- the second class: the problem is binary, its positive class the larger label. The rows so far are all of
  the first class, and a problem learned with that class as positive is the binary problem with its signed
  state negated (:meth:`~blocksvm.solvers.base.OnlineSolver.flip`): when the new label is the larger, the
  state is flipped, so nothing learned is lost and the result equals the binary learner from the first row;
- a third class and more: one-vs-rest. The binary problem becomes its positive class's problem, and, flipped,
  the other class's; a new class's problem starts from zero weights at its first row (the rows before it,
  all negatives for it, are gone). Declaring the classes up front (``--classes``, ``partial_fit(classes=)``)
  makes every problem learn from the first row.

With class weights the carried problems are exact for two classes; in one-vs-rest, LIBLINEAR's costs give
"the rest" weight 1, so a carried binary state is the start of its problem, not its exact past.
"""

from __future__ import annotations

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.solvers.base import BlockReport, OnlineSolver, Solver
from blocksvm.solvers.problem import Problem
from blocksvm.solvers.registry import SOLVERS


class GrowingLearner:
    """An online solver over a problem that grows (see the module docstring).

    Parameters
    ----------
    params : TrainParams
        ``solver`` names an online learner.
    classes : sequence of float
        The labels known at the start (sorted here).
    n_features : int
        Features known at the start.
    dtype : numpy dtype
        Type of the rows' values.
    """

    combine = staticmethod(Solver.combine)

    def __init__(self, params, classes=(), n_features: int = 0, dtype=np.float32):
        self.params = params
        self.solver_class = SOLVERS[params.solver]
        if params.class_weight == "balanced":
            raise ParameterError(
                "class_weight='balanced' needs the class counts of the whole data: a stream has them only at its "
                "end; give the weights (-w LABEL=WEIGHT)"
            )
        self.dtype = np.dtype(dtype)
        self.classes = np.array(sorted(classes), dtype=np.float64)
        self.n_features = n_features
        self.solver: OnlineSolver | None = self._new_solver() if len(self.classes) else None

    @property
    def problem(self) -> Problem | None:
        return None if self.solver is None else self.solver.problem

    @property
    def n_problems(self) -> int:
        return 0 if self.solver is None else self.solver.n_problems

    def _new_solver(self) -> OnlineSolver:
        loss = self.solver_class.loss_of(self.params)
        problem = Problem.build(
            self.classes, self.params, loss, n_features=self.n_features, dtype=self.dtype, strict=False
        )
        return self.solver_class(problem, self.params)

    def make_room(self, labels: np.ndarray, max_column: int) -> None:
        """Grow for new class labels and for features up to column ``max_column`` (zero-based)."""
        new_classes = np.setdiff1d(np.unique(labels), self.classes)
        if not len(new_classes) and max_column < self.n_features and self.solver is not None:
            return
        old = self.solver
        self.classes = np.union1d(self.classes, new_classes)
        self.n_features = max(self.n_features, max_column + 1)
        self.solver = self._new_solver()
        if old is not None:
            _carry(old, self.solver)

    def visit(self, rows, seeds: np.ndarray) -> BlockReport:
        """Learn ``rows`` (zero-based indices): a new class joins at its first row, new features before them.

        Its report sums the problems' losses into one figure: the problems change as classes come. New
        classes come in file order only (a stream; ``partial_fit`` declares its classes), so the seeds of the
        problems after a change are -1 (file order).
        """
        self.make_room(rows.labels[:0], int(rows.indices.max()) if rows.nnz else -1)
        loss, correct, updates, start = 0.0, 0, 0, 0
        while start < rows.n_rows:
            unseen = np.flatnonzero(~np.isin(rows.labels[start:], self.classes))
            if len(unseen) and unseen[0] == 0:
                self.make_room(rows.labels[start : start + 1], self.n_features - 1)
                seeds = np.full(self.problem.n_problems, -1, np.int64)
                continue
            stop = start + unseen[0] if len(unseen) else rows.n_rows
            report = self.solver.visit(rows.slice(start, stop), seeds)
            loss, correct, updates = (
                loss + float(np.sum(report.loss)),
                correct + report.correct,
                updates + report.updates,
            )
            start = stop
        return BlockReport(loss=np.array([loss]), correct=correct, passes=1.0, updates=updates)

    def start_from(self, W: np.ndarray, classes, n_features: int) -> None:
        """Continue the weights ``W`` (n_problems, n_features + 1) of a model of ``classes``."""
        self.classes, self.n_features = np.asarray(classes, dtype=np.float64), n_features
        self.solver = self._new_solver()
        self.solver.start_from(W)

    def weights(self) -> np.ndarray:
        return self.solver.weights()


def _positives(classes: list) -> list:
    """The class each problem recognizes: the larger label of two, else each class."""
    return classes[1:] if len(classes) == 2 else classes


def _source(old_classes: list, new_classes: list, positive: float) -> tuple[int, bool] | None:
    """The old problem (and whether flipped) that is the start of the new problem of ``positive``, if any."""
    if positive in _positives(old_classes):
        return _positives(old_classes).index(positive), False
    if len(old_classes) == 2 and positive == old_classes[0]:
        return 0, True  # binary to one-vs-rest: the negative class's problem is the binary one, flipped
    if len(old_classes) == 1 and len(new_classes) == 2:
        return 0, True  # the second class is the larger label: the first class's problem, flipped
    return None


def _carry(old: OnlineSolver, new: OnlineSolver) -> None:
    """Start each problem of the fresh solver ``new`` from its source in ``old`` (see the module docstring).

    State arrays are per problem along their first axis; an axis of ``n_features + 1`` entries has the bias
    feature last, and new features go before it.
    """
    old_classes, new_classes = old.problem.classes.tolist(), new.problem.classes.tolist()
    old_n_w, new_n_w = old.problem.n_weights, new.problem.n_weights
    kept = []
    for new_k, positive in enumerate(_positives(new_classes)):
        source = _source(old_classes, new_classes, positive)
        if source is not None:
            kept.append((new_k, *source))
    old_state, new_state = old.state(), new.state()
    for name, target in new_state.items():
        source = old_state[name]
        for new_k, old_k, _ in kept:
            if source.ndim >= 2 and source.shape[-1] == old_n_w and target.shape[-1] == new_n_w:
                target[new_k, ..., : old_n_w - 1] = source[old_k, ..., :-1]
                target[new_k, ..., -1] = source[old_k, ..., -1]
            else:
                target[new_k] = source[old_k]
    new.load_state(new_state)
    for new_k, _, flipped in kept:
        if flipped:
            new.flip(new_k)
