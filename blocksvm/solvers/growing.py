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

Features are weight columns ``0 .. n_features - 1`` as long as the space stays dense. When a row's index would
widen it into a sparse space (:func:`blocksvm.features.compact_learner`: a hashed feature, index 2**31 - 1), the
learner switches to **slots**: weight ``s`` belongs to the original column ``slots[s]``, the columns known so far
keep their weights and each new feature takes the next slot, so growing appends columns as before and memory
follows the features met, not the largest index. :meth:`GrowingLearner.model_weights` sorts them into a
model's feature map.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.features import compact_learner, positions
from blocksvm.solvers.base import OnlineSolver, Solver
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
    slots : ndarray of int64, optional
        The original column of each weight, in a sparse space (see the module docstring); None: dense.
    """

    combine = staticmethod(Solver.combine)

    def __init__(self, params, classes=(), n_features: int = 0, dtype=np.float32, slots: np.ndarray | None = None):
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
        self.slots: np.ndarray | None = None
        self._use_slots(slots)
        self.solver: OnlineSolver | None = self._new_solver() if len(self.classes) else None

    def _use_slots(self, slots: np.ndarray | None) -> None:
        """Set the slots (None: dense) and the lookup that finds a column's slot."""
        self.slots = None if slots is None else np.asarray(slots, dtype=np.int64)
        if self.slots is not None:
            self._slot_order = np.argsort(self.slots, kind="stable")
            self._sorted_columns = self.slots[self._slot_order]

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

    @property
    def visit(self):
        """The visit of the solver of the moment (rows reach it through :meth:`pieces`, which grows it first)."""
        return self.solver.visit

    def pieces(self, blocks):
        """``blocks`` (``(key, rows)``, zero-based columns) as this learner visits them: each block's columns as
        weight columns (room made for new features), cut where a new class joins, room made for the class before its
        first row. New classes come in file order only (a stream; ``partial_fit`` declares its classes): the visits
        after one are in file order too (a stream's seeds are -1)."""
        for key, rows in blocks:
            rows = self._in_weight_columns(rows)
            start = 0
            while start < rows.n_rows:
                unseen = np.flatnonzero(~np.isin(rows.labels[start:], self.classes))
                if len(unseen) and unseen[0] == 0:
                    self.make_room(rows.labels[start : start + 1], self.n_features - 1)
                    continue
                stop = start + unseen[0] if len(unseen) else rows.n_rows
                yield key, rows.slice(start, stop)
                start = stop

    def _in_weight_columns(self, rows):
        """``rows`` with their (zero-based) columns as weight columns, after making room for their features."""
        if not rows.nnz:
            return rows
        largest = int(rows.indices.max())
        if self.slots is None:
            if largest < self.n_features:
                return rows
            met = len(np.unique(rows.indices[rows.indices >= self.n_features]))
            if not compact_learner(self.n_features + met, largest + 1):
                self.make_room(rows.labels[:0], largest)
                return rows
            self._use_slots(np.arange(self.n_features))  # the columns so far keep their weights
        return replace(rows, indices=self._slots_of(rows))

    def _slots_of(self, rows) -> np.ndarray:
        """The slots of the rows' columns, new features taking the next ones."""
        found = positions(self._sorted_columns, rows.indices, len(self.slots))
        new = found == len(self.slots)
        if new.any():
            self._use_slots(np.concatenate([self.slots, np.unique(rows.indices[new])]))
            self.make_room(rows.labels[:0], len(self.slots) - 1)
            found = positions(self._sorted_columns, rows.indices, len(self.slots))
        return self._slot_order[found].astype(np.int32)

    def start_from(self, W: np.ndarray, classes, n_features: int, slots: np.ndarray | None = None) -> None:
        """Continue the weights ``W`` (n_problems, n_features + 1) of a model of ``classes``; ``slots``: a
        compact model's feature map."""
        self.classes, self.n_features = np.asarray(classes, dtype=np.float64), n_features
        self._use_slots(slots)
        self.solver = self._new_solver()
        self.solver.start_from(W)

    def weights(self) -> np.ndarray:
        return self.solver.weights()

    def model_weights(self) -> tuple[np.ndarray, np.ndarray | None, int]:
        """The weights as a model keeps them: ``(W, feature_map, space_features)``, W's feature columns sorted by
        original column (``feature_map`` None: dense, ``space_features`` = ``n_features``)."""
        W = self.weights()
        if self.slots is None:
            return W, None, self.n_features
        order = np.append(self._slot_order, len(self.slots))  # the bias feature's weight stays last
        return W[:, order], self._sorted_columns, int(self._sorted_columns[-1]) + 1


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
