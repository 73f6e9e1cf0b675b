"""The binary problems a training run solves, and how block labels become ±1 targets.

Two classes give one problem whose positive class is the larger label (``classes[1]``), as in
scikit-learn. More classes give one-vs-rest: problem ``k`` separates ``classes[k]`` from the rest,
with LIBLINEAR's costs (``C * weight_k`` for class ``k``, ``C`` for the rest). A regression loss gives one
problem whose targets are the labels themselves, with cost C for every row. Crammer and Singer's loss gives one
weight vector per class, two classes included, each class's rows costing ``C * weight_k`` (the costs' positive
column); its solver reads each row's class, not ±1 targets. The one-class loss gives one problem whose targets are all
+1 whatever the labels, ``classes`` ``[-1, 1]`` (what its model predicts) and a bias of 1 that is not a bias
feature: the last weight is ``-rho``, the offset of ``w.x - rho``, which the solver keeps out of the regularizer.

C and the class weights are kept apart: a problem holds ``C`` and each side's ``class_weights``, and its
``costs`` are their product, made where a kernel needs them; :meth:`Problem.at` is the same problems at
another C (a search of C moves from value to value, each value's costs made from it alone).

K-fold cross-validation (``blocksvm tune``) solves these problems once per fold, side by side
(:meth:`Problem.folded`): problem ``f * per_fold + k`` is problem ``k`` trained without the rows of fold
``f``, and a row's fold is :func:`fold_of` its store-wide position and the seed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.losses import CLASSIFICATION, LOSSES, MULTICLASS, NOVELTY, REGRESSION, Loss
from blocksvm.penalties import L2, Penalty, penalty_of


@dataclass
class Problem:
    """K binary problems over the rows of a store.

    Attributes
    ----------
    n_rows, n_features, n_blocks : int
    classes : ndarray of float64, shape (n_classes,)
        Sorted labels.
    class_weights : ndarray of float64, shape (n_problems, 2)
        The multiplier of C of the negative and the positive rows of each problem (1 without class weights).
    loss : Loss
        The loss the solver minimizes and reports (:mod:`blocksvm.losses`).
    bias : float
        Value of the bias feature (<= 0: none).
    C : float
        The cost of a row of class weight 1 (the one-class problem's is 1: its nu sets the rest).
    row_offsets : ndarray of int64, shape (n_blocks + 1,)
        Store-wide position of each block's first row (and the row count at the end).
    dtype : numpy dtype
        Type of the store's values.
    folds : int
        1, or K of K-fold cross-validation: the problems are K copies of ``per_fold`` problems, copy ``f``
        trained without the rows of fold ``f`` (:func:`fold_of` with ``fold_seed``).
    fold_seed : int
    weight : float or None
        The rows' total instance weight when they have weights (a weighted store): row ``i``'s cost is then
        ``C_i = C * class_weight(y_i) * weight_i``, which the solvers read from the rows' ``weights``; None: every
        row weighs 1.
    penalty : Penalty
        The penalty of the weights beside the loss (:mod:`blocksvm.penalties`; L2 unless the parameters say).
    """

    n_rows: int
    n_features: int
    n_blocks: int
    classes: np.ndarray
    class_weights: np.ndarray
    loss: Loss
    bias: float
    C: float
    row_offsets: np.ndarray | None = None
    dtype: np.dtype = np.dtype(np.float32)
    folds: int = 1
    fold_seed: int = 0
    weight: float | None = None
    penalty: Penalty = L2

    @property
    def task(self) -> str:
        """``"classification"``, ``"regression"`` or ``"one-class"`` (the loss's)."""
        return self.loss.task

    @property
    def weighted(self) -> bool:
        """The rows have instance weights."""
        return self.weight is not None

    @property
    def total_weight(self) -> float:
        """The rows' total weight: their number when they have no weights."""
        return float(self.n_rows) if self.weight is None else float(self.weight)

    @property
    def n_problems(self) -> int:
        return len(self.class_weights)

    @property
    def costs(self) -> np.ndarray:
        """C of the negative and the positive rows of each problem, shape (n_problems, 2): ``C * class_weights``
        (a row's cost is then this times its instance weight)."""
        return self.C * self.class_weights

    @property
    def per_fold(self) -> int:
        """Problems of one fold (all of them without folds)."""
        return self.n_problems // self.folds

    @property
    def held_out(self) -> np.ndarray:
        """The fold each problem leaves out, shape (n_problems,), int64; -1 without folds."""
        if self.folds == 1:
            return np.full(self.n_problems, -1, np.int64)
        return np.repeat(np.arange(self.folds, dtype=np.int64), self.per_fold)

    def row_folds(self, rows: np.ndarray) -> np.ndarray:
        """The fold of each store-wide row (all 0 without folds)."""
        if self.folds == 1:
            return np.zeros(len(rows), np.int64)
        return fold_of(rows, self.fold_seed, self.folds)

    def folded(self, folds: int, seed: int) -> Problem:
        """These problems once per fold of ``folds``-fold cross-validation, the rows split by ``seed``."""
        return replace(self, class_weights=np.tile(self.class_weights, (folds, 1)), folds=folds, fold_seed=seed)

    def at(self, C: float) -> Problem:
        """The same problems at cost ``C`` (the class weights kept)."""
        return replace(self, C=float(C))

    @property
    def n_weights(self) -> int:
        """Length of a weight vector: the features and one bias slot."""
        return self.n_features + 1

    @classmethod
    def build(
        cls,
        classes,
        params,
        loss: Loss,
        *,
        counts=None,
        n_rows: int = 1,
        n_features: int = 0,
        n_blocks: int = 1,
        row_offsets=None,
        dtype=np.float32,
        strict: bool = True,
    ) -> Problem:
        """The problems of ``classes`` (sorted labels) under ``params``: the one place class weights are made.

        ``counts``: rows per class (for ``class_weight="balanced"``). ``strict``: a class weight must name one
        of ``classes`` (a stream is not strict: its weights name labels still to come). Two classes give one
        problem; one class (a stream that has seen one so far) or more than two give one per class.
        """
        classes = np.asarray(classes, dtype=np.float64)
        C = float(params.C)
        penalty = penalty_of(params.penalty, params.l1_ratio)
        if loss.task == NOVELTY:  # the labels are not read: every row is a target of +1; the bias slot holds -rho
            offsets = np.array([0, n_rows]) if row_offsets is None else row_offsets
            return cls(
                n_rows,
                n_features,
                n_blocks,
                np.array([-1.0, 1.0]),
                np.ones((1, 2)),
                loss,
                1.0,
                1.0,  # (its costs are 1: nu, not C, weighs its rows)
                offsets,
                np.dtype(dtype),
                penalty=penalty,
            )
        if loss.task == REGRESSION:
            if params.class_weight is not None:
                raise ParameterError(f"class_weight weighs classes; loss {loss.name!r} is regression: drop it")
            loss = loss.with_epsilon(params.epsilon)
            offsets = np.array([0, n_rows]) if row_offsets is None else row_offsets
            return cls(
                n_rows,
                n_features,
                n_blocks,
                np.zeros(0),  # no classes: the targets are the labels
                np.ones((1, 2)),
                loss,
                float(params.bias),
                C,
                offsets,
                np.dtype(dtype),
                penalty=penalty,
            )
        weights = class_weights(params.class_weight, classes, counts, strict=strict)
        if len(classes) == 2 and loss.kind != MULTICLASS:
            sides = np.array([[weights[0], weights[1]]])
        else:
            sides = np.array([[1.0, weights[k]] for k in range(len(classes))])
        offsets = np.array([0, n_rows]) if row_offsets is None else row_offsets
        return cls(
            n_rows,
            n_features,
            n_blocks,
            classes,
            sides,
            loss,
            float(params.bias),
            C,
            offsets,
            np.dtype(dtype),
            penalty=penalty,
        )

    @classmethod
    def from_store(cls, store, params, loss: Loss | None = None) -> Problem:
        """The problems of ``store`` (a :class:`~blocksvm.store.BlockStore`) under ``params``.

        ``loss``: the solver's (default: the user's ``params.loss``).
        """
        loss = loss or LOSSES[params.loss]
        weight = weight_of(store) if getattr(store, "weighted", False) else None
        if weight is not None and not weight > 0:
            raise ParameterError(f"{store.path}: every row's instance weight is zero: there is nothing to train on")
        if loss.task == CLASSIFICATION and looks_continuous(store.classes):  # (one-class reads no labels)
            regression = " or ".join(name for name, each in LOSSES.items() if each.task == REGRESSION)
            raise ParameterError(
                f"{store.path} has {len(store.classes):,} distinct labels, most of them not integers: real-valued "
                f"targets? A classifier would train one problem per value; for regression choose the loss {regression}"
            )
        if loss.task == CLASSIFICATION and len(store.classes) < 2:
            raise ParameterError(
                f"{store.path} holds a single class ({store.classes.tolist()}); an SVM needs two or more"
            )
        counts = store.label_counts
        if weight is not None and params.class_weight == "balanced":
            counts = weighted_counts(store)
        problem = cls.build(
            store.classes,
            params,
            loss,
            counts=counts,
            n_rows=store.n_rows,
            n_features=store.n_features,
            n_blocks=store.n_blocks,
            row_offsets=store.row_offsets,
            dtype=store.dtype,
        )
        return problem if weight is None else replace(problem, weight=weight)

    def block_of(self, rows: np.ndarray) -> np.ndarray:
        """Index of the block holding each store-wide row."""
        return np.searchsorted(self.row_offsets, rows, side="right") - 1

    def targets(self, labels: np.ndarray) -> np.ndarray:
        """±1 targets of each problem, shape (n_problems, n_rows), float64 (the same for every fold).

        One problem: the last (largest) class is positive — ``classes[1]`` of two, or the only
        class of a stream that has seen one so far. Regression: the labels themselves. One-class: +1.
        """
        if self.task == NOVELTY:
            one = np.ones((1, len(labels)))
        elif self.task == REGRESSION:
            one = np.asarray(labels, dtype=np.float64)[None, :]
        elif self.per_fold == 1:
            one = np.where(labels == self.classes[-1], 1.0, -1.0)[None, :]
        else:
            one = np.where(labels[None, :] == self.classes[:, None], 1.0, -1.0)
        return one if self.folds == 1 else np.tile(one, (self.folds, 1))


def weight_of(store) -> float:
    """The total weight of a store's rows: the sum of their instance weights (the manifest's), else their number."""
    return float(store.manifest["weights"]["sum"]) if getattr(store, "weighted", False) else float(store.n_rows)


def weighted_counts(store) -> np.ndarray:
    """Each class's total instance weight in a weighted store (one read of its blocks): ``class_weight="balanced"``
    weighs classes by these, as scikit-learn's ``compute_class_weight`` does with ``sample_weight``."""
    counts = np.zeros(len(store.classes))
    for block in store.iter_blocks():
        counts += np.bincount(np.searchsorted(store.classes, block.labels), block.weights, len(store.classes))
    return counts


_GOLDEN = 0x9E3779B97F4A7C15
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def fold_of(rows: np.ndarray, seed: int, folds: int) -> np.ndarray:
    """The cross-validation fold of each store-wide row index: splitmix64's output for the row and the seed, mod
    ``folds``. In words, with 64-bit unsigned arithmetic (wrapping)::

        z = row + (seed + 1) * 0x9E3779B97F4A7C15
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB
        fold = (z ^ (z >> 31)) % folds

    A pure function of ``(row, seed)``: the split does not depend on the block size, the order of visits or the
    machine, and anyone can rebuild it (the rows are the store's, in stored order: ``blocksvm convert`` shuffles
    them with its own ``--seed``). Folds hold ``n_rows / folds`` rows each, up to the binomial spread.
    """
    z = np.asarray(rows, dtype=np.int64).astype(np.uint64) + np.uint64((seed + 1) * _GOLDEN % 2**64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
    return ((z ^ (z >> np.uint64(31))) % np.uint64(folds)).astype(np.int64)


def empty_fold(n_rows: int, seed: int, folds: int) -> int | None:
    """The first fold that :func:`fold_of` gives none of rows ``0 .. n_rows - 1``, or None (a million rows at a
    time: memory does not grow with the rows)."""
    counts = np.zeros(folds, np.int64)
    for first in range(0, n_rows, 1 << 20):
        counts += np.bincount(fold_of(np.arange(first, min(first + (1 << 20), n_rows)), seed, folds), minlength=folds)
    empty = np.flatnonzero(counts == 0)
    return int(empty[0]) if len(empty) else None


def looks_continuous(classes: np.ndarray) -> bool:
    """Labels that look like real-valued targets: more than 100 distinct values, most of them not integers."""
    classes = np.asarray(classes, dtype=np.float64)
    return len(classes) > 100 and np.count_nonzero(classes != np.round(classes)) > len(classes) / 2


def class_weights(class_weight, classes: np.ndarray, counts: np.ndarray | None, strict: bool = True) -> np.ndarray:
    """Multiplier of C per class: 1, a user's ``{label: weight}``, or ``"balanced"``.

    ``"balanced"`` gives ``n_rows / (n_classes * count_k)``, scikit-learn's rule (it needs ``counts``).
    ``strict``: a label of ``class_weight`` that is not among ``classes`` is an error (else it waits for its
    class).
    """
    weights = np.ones(len(classes))
    if class_weight is None:
        return weights
    if class_weight == "balanced":
        return counts.sum() / (len(classes) * counts.astype(float))
    for label, weight in class_weight.items():
        try:
            value = float(label)
        except (TypeError, ValueError):
            raise ParameterError(f"class_weight names label {label!r}, which is not a number") from None
        hits = np.flatnonzero(classes == value)
        if len(hits):
            weights[hits[0]] = float(weight)
        elif strict:
            raise ParameterError(
                f"class_weight names label {label!r}, which is not among the labels {[_label_text(c) for c in classes]}"
            )
    return weights


def _label_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
