"""The solver contract: what every learner offers the outer loop, and the three families of learners.

A learner is a driver (a :class:`Solver` subclass, in ``solvers/<name>.py``) and its numba kernels
(``solvers/_<name>_kernels.py``), registered by one line in :mod:`blocksvm.solvers.registry`. The
driver declares

- ``name``, and ``params``: the parameters it reads besides those every learner reads, as
  :class:`~blocksvm.params.Param` declarations: shared ones (``C``, ``LOSS``, ``AVERAGE``, ... of
  :mod:`blocksvm.params`) and its own (the CLI flags, the estimators' parameters and the docs table are
  built from them, and a value no reader reads is refused);
- ``reads``: its family, what its passes read (:data:`BLOCKS`, :data:`ROW_SUMS`, :data:`COLUMNS`), the one field
  the engines (:func:`blocksvm.train.engines.build`) dispatch on;
- ``commands``: the commands it runs under (``train`` only, or every command for an online learner);
- ``loss_of(params)``: the :class:`~blocksvm.losses.Loss` it minimizes and reports; ``losses`` and ``penalties``:
  the names of those it minimizes, when it reads ``loss`` and ``penalty`` (:mod:`blocksvm.penalties`);
- ``online``: an online learner, judged by progressive validation: its reports take each row's
  loss (unweighted by C) and mistake *before* the row's update, and each pass record gets
  ``progressive_loss`` (mean loss per row) and ``progressive_accuracy``;
- ``ignores``: the parameters every learner reads that it does not, each with the reason a refusal gives (the
  one-class SVM's ``bias`` and ``class_weight``);
- ``warm_starts``: it continues a saved model's weights (``--warm-start``, :meth:`start_from`): a learner whose state
  is its weights;
- ``stop_rules``: which of the loop's rules apply to it (``"gap"``: relative duality gap <= tol,
  ``"pg"``: LIBLINEAR's projected-gradient violation <= eps, ``"solver"``: the learner judges its own
  iterations, its record's ``stop`` says why it is done: Newton's and OWL-QN's gradient rule, LIBLINEAR's -e);
  ``max_outer`` and the time limit always apply;
- what it reports: :meth:`objective_terms` (summed into the record's ``primal``),
  :meth:`dual_objectives` (None for a primal method), :meth:`pass_figures` (its own record
  entries);
- its checkpoint state: the arrays named in ``state_names`` (plus :meth:`state` extras).

The families, siblings under :class:`Solver`, differ in what a pass hands them:

- a **block learner** (:class:`BlockSolver`: dual CD, Pegasos, the online learners) visits one block at a time,
  :meth:`BlockSolver.visit`, and changes its state as it goes;
- a **row-sum learner** (:class:`blocksvm.solvers.row_sums.RowSumSolver`: Newton, OWL-QN) says what a pass sums
  over rows, and steps from the total at the pass's end;
- a **column learner** (:class:`blocksvm.solvers.by_columns.ColumnSolver`: CDN, newGLMNET) makes rounds over the
  pieces of the store's column layout.

The last two share the staged bookkeeping (:mod:`blocksvm.solvers.staged`). An engine builds a learner with its
:class:`Resources` (the memory it may keep, how its tasks run, what it reads): the learner reads them and hands
nothing back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.losses import LOSSES, ROW_LOSSES, Loss
from blocksvm.params import COMMANDS, L1_RATIO, PENALTY, Param
from blocksvm.solvers._common import CORRECT_SEEN, LOSS_SEEN, N_ONLINE_STATS, UPDATES
from blocksvm.solvers.evaluate import correct_predictions, counted, kernel_weights

BLOCKS, ROW_SUMS, COLUMNS = "blocks", "row sums", "columns"  # the families: what a learner's passes read


def serial_map(function, tasks) -> list:
    """``[function(task) for task in tasks]``: a learner's independent tasks, one after another."""
    return [function(task) for task in tasks]


@dataclass(frozen=True)
class Resources:
    """What an engine hands a learner when it builds it (:func:`blocksvm.train.engines.build`); the learner reads
    them and hands nothing back.

    Attributes
    ----------
    blocks : object, optional
        The blocks a block learner may read again (``read_block(i)``, ``n_blocks``: the store, or a shard's view):
        dual CD's ``pair`` working set.
    memory : float
        Bytes of rows the learner may keep itself (dual CD's working set): its share of the run's memory budget.
    map : callable
        ``map(function, tasks) -> list``: how the learner's independent tasks run (dual CD's problems or replicas:
        on the engine's threads, ``--threads``).
    columns : object, optional
        A column learner's columns (:class:`blocksvm.store.ColumnPieces`: the layout's door, its pieces, the rows'
        labels and the per-feature statistics).
    kept : object, optional
        The blocks the engine keeps in memory (:class:`blocksvm.store.KeptBlocks`): dual CD sweeps their rows in
        one random order.
    """

    blocks: object = None
    memory: float = 0.0
    map: Callable = serial_map
    columns: object = None
    kept: object = None


@dataclass
class BlockReport:
    """What one visit of a block did.

    ``loss`` (per problem: ``sum_i C_i loss_i``) and ``correct`` (rows predicted right; with instance weights, their
    weight) are measured at the ``w`` each row saw when the visit reached it. ``figures`` holds the solver's
    own per-visit numbers, combined over a pass by :meth:`Solver.combine` (e.g. dual CD's
    extreme projected gradients).
    """

    loss: np.ndarray
    correct: int | float
    passes: float
    updates: int
    figures: dict = field(default_factory=dict)
    sweep_seconds: float = 0.0  # of the visit, in the learner's kernels (the rest is its upkeep)


class Solver:
    """A learner of K weight vectors (one per binary problem): what every family shares (module docstring).

    Parameters
    ----------
    problem : Problem
        The binary problems, their costs and loss.
    params : TrainParams
        All training parameters (a solver reads its own).
    resources : Resources, optional
        What the engine hands it (default: nothing kept, tasks one after another).
    """

    name: ClassVar[str] = ""
    reads: ClassVar[str] = ""  # its family: BLOCKS, ROW_SUMS or COLUMNS
    params: ClassVar[tuple[Param, ...]] = ()
    commands: ClassVar[tuple[str, ...]] = ("train",)
    stop_rules: ClassVar[frozenset[str]] = frozenset()
    online: ClassVar[bool] = False
    every_pass_an_iteration: ClassVar[bool] = True  # False: an iteration (a record) may take several passes
    state_names: ClassVar[tuple[str, ...]] = ()
    losses: ClassVar[tuple[str, ...]] = ROW_LOSSES  # the user's losses it minimizes (if it reads --loss)
    fixed_loss: ClassVar[Loss | None] = None  # the loss it minimizes, when the user does not choose it
    penalties: ClassVar[tuple[str, ...]] = ("l2",)  # the penalties it minimizes (if it reads --penalty)
    # The record's entries of its own that the progress line shows, as it shows them: "label {key:spec}  ...", e.g.
    # "CG {cg_steps:3d}  step {step_size:.2g}"; a part whose key the record lacks is left out
    shown: ClassVar[str] = ""
    # Parameters every learner reads that this one does not, each with the reason a message gives (given, refused).
    ignores: ClassVar[dict[str, str]] = {}
    # A learner that does not read instance weights: what to do instead (None: it reads them, C_i = C w_i ...).
    refuses_weights: ClassVar[str | None] = None
    # It continues a saved model's weights (--warm-start: start_from); False: its state is more than its weights.
    warm_starts: ClassVar[bool] = False
    # What it keeps in memory besides the data (blocksvm.train.plan): bytes a row and problem, weight vectors a problem,
    # and bytes of each row kept in memory besides the row itself (counted with the blocks kept)
    row_bytes: ClassVar[float] = 0.0
    weight_copies: ClassVar[int] = 2
    kept_row_bytes: ClassVar[float] = 0.0
    # The least share of the rows kept in memory for which its defaults sweep the rows kept (own_defaults)
    enough_kept: ClassVar[float] = 0.0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a solver that minimizes penalties reads --penalty (and --l1-ratio where one of them is the elastic net)
        implied = (PENALTY,) * bool(cls.penalties) + (L1_RATIO,) * ("elasticnet" in cls.penalties)
        cls.params = (*cls.params, *(p for p in implied if p not in cls.params))

    def __init__(self, problem, params, resources: Resources | None = None):
        if problem.weighted and self.refuses_weights:
            raise ParameterError(
                f"the data has instance weights, which --solver {self.name} does not read: {self.refuses_weights}"
            )
        self.problem = problem
        self.resources = resources or Resources()

    @property
    def n_problems(self) -> int:
        return self.problem.n_problems

    @classmethod
    def loss_of(cls, params) -> Loss:
        """The loss this solver minimizes under ``params``: its ``fixed_loss``, else the user's ``loss``."""
        return cls.fixed_loss or LOSSES[params.loss]

    # ---- the run --------------------------------------------------------------------------

    def start_pass(self, outer: int) -> None:
        """Called before outer iteration ``outer`` (1-based) begins or resumes."""

    def end_pass(self) -> bool:
        """Called when a pass has visited every block; True if the pass ended an iteration (a record is due:
        always, for a block learner)."""
        return True

    def bring_back_rows(self) -> None:
        """Every row back in the next pass: the stop rule held over the rows swept while some were shrunk, and, as in
        LIBLINEAR's loop, a pass over every row decides (a learner that carries no shrinking from pass to pass has
        none to bring back)."""

    def pass_label(self) -> str:
        """What the coming pass does, in a few words for the progress bar (a pass learner's passes differ)."""
        return ""

    def weights(self) -> np.ndarray:
        """The model's weights, shape (n_problems, n_features + 1); last column: bias feature."""
        raise NotImplementedError

    @classmethod
    def check_warm_starts(cls) -> None:
        """Refuse a warm start (``--warm-start``) of a learner that does not declare ``warm_starts``."""
        if not cls.warm_starts:
            raise ParameterError(
                f"--solver {cls.name} cannot continue a saved model (--warm-start): its state is more than the weights"
            )

    def start_from(self, W: np.ndarray) -> None:
        """Continue from the weights of a saved model (``--warm-start``), shape as :meth:`weights` (a learner that
        declares ``warm_starts``)."""
        self.check_warm_starts()

    def objective_terms(self, W: np.ndarray, loss_sums: np.ndarray) -> dict[str, np.ndarray]:
        """The objective's terms per problem at ``W``, given ``sum_i C_i loss_i`` per problem: the problem's penalty
        (:mod:`blocksvm.penalties`) and the loss."""
        return {"regularizer": self.problem.penalty.value(W), "loss": np.asarray(loss_sums, dtype=float)}

    def dual_objectives(self) -> np.ndarray | None:
        """Dual objective of each problem (exact for the current state), or None."""
        return None

    @staticmethod
    def combine(total: dict, figures: dict) -> dict:
        """Fold one visit's ``figures`` into the pass's ``total`` (lists, for JSON checkpoints)."""
        return total

    def pass_figures(self, total: dict) -> dict:
        """The solver's own entries of a pass record, from the pass's combined figures."""
        return {}

    def state(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.state_names}

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        for name in self.state_names:
            current = getattr(self, name)
            if current.shape != arrays[name].shape:
                raise ValueError(f"state {name!r} has shape {arrays[name].shape}, expected {current.shape}")
            current[...] = arrays[name]

    # ---- a search of C (blocksvm tune) ----------------------------------------------------
    # A learner that can be tuned has ``move_to(C, warm=True)``: the same problems at C next, from its solution at
    # the C before (warm) or from zero (:func:`tunable`). The refit at the best C starts from the folds' solutions
    # there: :meth:`warm_state` of the folds' learner, :meth:`start_from_state` of the refit's.

    def warm_state(self) -> dict[str, np.ndarray]:
        """The start of these problems on every row, from the folds' solutions (the problems of a search, once per
        fold): the mean of the folds' weights, ``{"w": ...}``."""
        p = self.problem
        return {"w": self.weights().reshape(p.folds, p.per_fold, -1).mean(axis=0)}

    def start_from_state(self, arrays: dict[str, np.ndarray]) -> None:
        """Start from a :meth:`warm_state` of the folds' learner."""
        self.start_from(arrays["w"])


def tunable(solver_class: type[Solver]) -> bool:
    """Whether a search of C can move the learner from value to value (it has ``move_to``)."""
    return callable(getattr(solver_class, "move_to", None))


class BlockSolver(Solver):
    """A block learner: it visits one block at a time and changes its state as it goes (dual CD, Pegasos, the
    online learners).

    :meth:`step` takes a block, the weights to start from and the block's own state (:meth:`local_state`), updates
    both in place and reports what the visit did; :meth:`visit` is the serial path the pass loop calls: the step on
    the learner's own weights, plus whatever working set (rows kept from earlier blocks) it manages itself.
    """

    reads = BLOCKS
    # A block learner that also runs over shards of the blocks: the class that coordinates its shards ("module:Class",
    # as the registry names drivers), built with (problem, params, resources, views, engine) (dual CD's CoCoA+ rounds).
    coordinator: ClassVar[str | None] = None

    @classmethod
    def own_defaults(cls, params, keeps_rows: bool):
        """``params`` with the learner's own defaults where it has them (dual CD's working set and inner passes, which
        depend on whether the engine keeps rows in memory: ``keeps_rows``); the engine sizes the learner's share of the
        budget by them."""
        return params

    def local_state(self, block) -> dict[str, np.ndarray]:
        """The state that belongs to ``block``'s rows (views: the step updates it in place)."""
        return {}

    def step(self, block, W: np.ndarray, local: dict, seeds: np.ndarray) -> BlockReport:
        """Update ``W`` (n_problems, n_weights) and ``local`` on ``block``; seeds (n_problems,) seed row orders."""
        raise NotImplementedError

    def visit(self, block, seeds: np.ndarray) -> BlockReport:
        """The serial visit of ``block``: the step on the solver's own weights."""
        return self.step(block, self.weights(), self.local_state(block), seeds)

    def map(self, function, tasks) -> list:
        """``function(task)`` for each task, in order: how the learner's independent tasks run (dual CD's problems,
        or its replicas' sweeps), the engine's map of its resources; the learner does not know where they run."""
        return self.resources.map(function, tasks)


@dataclass(frozen=True)
class StateArray:
    """One array of an online learner's state, per problem: ``(n_problems, width)``.

    Attributes
    ----------
    name : str
        The solver's attribute (and the checkpoint's array name).
    width : int or None
        Entries per problem; None: one per weight (``n_features + 1``, the bias feature's last).
    fill : tuple of float
        The start value, one number or one per entry.
    signed : bool
        The array changes sign with the problem's positive class (a model array, or a sum of them): a
        problem learned with the other class as positive is the same state with these arrays negated.
    """

    name: str
    width: int | None = None
    fill: tuple[float, ...] = (0.0,)
    signed: bool = False

    def start(self, n_problems: int, n_weights: int) -> np.ndarray:
        return np.tile(np.array(self.fill, dtype=np.float64), (n_problems, (self.width or n_weights) // len(self.fill)))


UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


class OnlineSolver(BlockSolver):
    """An online learner: its kernel makes one pass over a block, each row judged before its update.

    A learner is this class plus its numbers: ``arrays`` (its state; the first is the array the kernel
    updates as ``w``), ``kernel`` (a function of the online kernel contract of :mod:`._common`), its
    ``hyper_parameters`` and, if the user may not choose it, its ``fixed_loss``. Every problem is visited with
    its targets, the unweighted loss and the class weights (``class_weights``) that scale its updates. Its
    objective is its progressive loss (``objective_terms`` adds a penalty where the learner has one).
    """

    online = True
    warm_starts = True  # (its state is its arrays, the first of them the model)
    commands = COMMANDS
    penalties = ()  # (their penalties are their own learning parameters: l1, l2)
    losses = ("hinge", "squared-hinge", "logistic")
    arrays: ClassVar[tuple[StateArray, ...]] = ()
    kernel: ClassVar = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.state_names = tuple(a.name for a in cls.arrays)

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.hyper = np.array(self.hyper_parameters(params, problem), dtype=np.float64)
        self.reset()

    def hyper_parameters(self, params, problem) -> tuple[float, ...]:
        """The kernel's ``hyper`` array."""
        return ()

    def reset(self) -> None:
        """Every state array at its start value."""
        for a in self.arrays:
            setattr(self, a.name, a.start(self.problem.n_problems, self.problem.n_weights))

    def step(self, block, W, local, seeds) -> BlockReport:
        """One pass of the kernel over ``block``; ``W`` is the first state array."""
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        rows = (block.indptr, block.indices, block.data, kernel_weights(block))
        others = [getattr(self, a.name) for a in self.arrays[1:]]
        stats = np.empty((p.n_problems, N_ONLINE_STATS))
        for k in range(p.n_problems):
            setup = (p.bias, p.loss.table, UNWEIGHTED, p.class_weights[k])
            state = tuple(array[k] for array in others)
            stats[k] = self.kernel(rows, targets[k], W[k], state, self.hyper, setup, int(seeds[k]))
        correct = counted(stats[0, CORRECT_SEEN], block) if seen_correct is None else seen_correct
        return BlockReport(loss=stats[:, LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, UPDATES].sum()))

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, getattr(self, self.arrays[0].name), {}, seeds)

    def weights(self) -> np.ndarray:
        return getattr(self, self.arrays[0].name)

    def start_from(self, W: np.ndarray) -> None:
        """A fresh state whose model is ``W``."""
        self.reset()
        getattr(self, self.arrays[0].name)[...] = W

    def flip(self, k: int) -> None:
        """Make problem ``k`` the same learner with its classes swapped: its signed arrays negated."""
        for a in self.arrays:
            if a.signed:
                getattr(self, a.name)[k] *= -1.0

    def objective_terms(self, W: np.ndarray, loss_sums: np.ndarray) -> dict[str, np.ndarray]:
        return {"loss": np.asarray(loss_sums, dtype=float)}


# Daume's sum and the step count of an averaging learner (AveragingSolver): its kernel adds ``c d x`` to ``u``
# wherever it adds ``d x`` to the model at step ``c`` (counted from 1), and counts the rows in ``count``.
AVERAGING_ARRAYS = (StateArray("u", signed=True), StateArray("count", 1, (1.0,)))


class AveragingSolver(OnlineSolver):
    """An online learner whose updates add to its model (``w <- w + d x``), which with ``average`` returns the
    mean of its iterates (the model after each row seen), the averaged Perceptron's online-to-batch conversion
    (Freund & Schapire 1999) for any such learner. It costs O(nnz) per update by Daume's trick: ``u``
    (:data:`AVERAGING_ARRAYS`) sums ``c d x`` over the updates, and after ``T`` rows the mean is ``((T + 1) w -
    u) / T``. Its ``arrays`` end with :data:`AVERAGING_ARRAYS`; the kernel receives them last in ``state``."""

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        self.average = params.average

    def weights(self) -> np.ndarray:
        w = super().weights()
        if not self.average:
            return w
        return w + (w - self.u) / np.maximum(self.count - 1.0, 1.0)

    def start_from(self, W: np.ndarray) -> None:
        """A fresh state whose model, and whose mean of iterates, is ``W`` (``u = W``: the start counts as the
        update of step 1, which the mean then weighs as every iterate's)."""
        super().start_from(W)
        self.u[...] = W
