"""The solver contract: what every learner offers the outer loop.

A learner is a driver (a :class:`Solver` subclass, in ``solvers/<name>.py``) and its numba kernels
(``solvers/_<name>_kernels.py``), registered by one line in :mod:`blocksvm.solvers.registry`. The
driver declares

- ``name``, and ``params``: the parameters it reads besides those every learner reads, as
  :class:`~blocksvm.params.Param` declarations: shared ones (``C``, ``LOSS``, ``AVERAGE``, ... of
  :mod:`blocksvm.params`) and its own (the CLI flags, the estimators' parameters and the docs table are
  built from them, and a value no reader reads is refused);
- ``commands``: the commands it runs under (``train`` only, or every command for an online learner);
- ``loss_of(params)``: the :class:`~blocksvm.losses.Loss` it minimizes and reports; ``losses`` and ``penalties``:
  the names of those it minimizes, when it reads ``loss`` and ``penalty`` (:mod:`blocksvm.penalties`);
- ``online``: an online learner, judged by progressive validation: its reports take each row's
  loss (unweighted by C) and mistake *before* the row's update, and each pass record gets
  ``progressive_loss`` (mean loss per row) and ``progressive_accuracy``;
- ``ignores``: the parameters every learner reads that it does not, each with the reason a refusal gives (the
  one-class SVM's ``bias`` and ``class_weight``);
- ``stop_rules``: which of the loop's rules apply to it (``"gap"``: relative duality gap <= tol,
  ``"pg"``: LIBLINEAR's projected-gradient violation <= eps, ``"solver"``: the learner judges its own
  iterations, its record's ``stop`` says why it is done: Newton's and OWL-QN's gradient rule, LIBLINEAR's -e);
  ``max_outer`` and the time limit always apply;
- what it reports: :meth:`objective_terms` (summed into the record's ``primal``),
  :meth:`dual_objectives` (None for a primal method), :meth:`pass_figures` (its own record
  entries);
- its checkpoint state: the arrays named in ``state_names`` (plus :meth:`state` extras);

and the per-block step, :meth:`step`: it takes a block, the weights to start from and the
block's own state (:meth:`local_state`), updates both in place and reports what the visit did.
:meth:`visit` is the serial path the loop calls: the step on the solver's own weights, plus
whatever working set (rows kept from earlier blocks) the solver manages itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from blocksvm.errors import ParameterError
from blocksvm.losses import LOSSES, ROW_LOSSES, Loss
from blocksvm.params import COMMANDS, L1_RATIO, PENALTY, Param
from blocksvm.solvers._common import CORRECT_SEEN, LOSS_SEEN, N_ONLINE_STATS, UPDATES
from blocksvm.solvers.evaluate import correct_predictions, counted, kernel_weights
from blocksvm.sums import TreeSum


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


class Solver:
    """A learner that updates K weight vectors (one per binary problem) one block at a time.

    Parameters
    ----------
    problem : Problem
        The binary problems, their costs and loss.
    params : TrainParams
        All training parameters (a solver reads its own).
    store : BlockStore
        Read access to blocks, for working sets that revisit earlier blocks.
    """

    name: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    commands: ClassVar[tuple[str, ...]] = ("train",)
    stop_rules: ClassVar[frozenset[str]] = frozenset()
    online: ClassVar[bool] = False
    every_pass_an_iteration: ClassVar[bool] = True  # False: an iteration (a record) may take several passes
    state_names: ClassVar[tuple[str, ...]] = ()
    losses: ClassVar[tuple[str, ...]] = ROW_LOSSES  # the user's losses it minimizes (if it reads --loss)
    fixed_loss: ClassVar[Loss | None] = None  # the loss it minimizes, when the user does not choose it
    penalties: ClassVar[tuple[str, ...]] = ("l2",)  # the penalties it minimizes (if it reads --penalty)
    # A block learner that also runs over shards of the blocks: the class that coordinates its shards ("module:Class",
    # as the registry names drivers), built with (problem, params, store, views, engine) (dual CD's CoCoA+ rounds).
    coordinator: ClassVar[str | None] = None
    # The record's entries of its own that the progress line shows: (key, format), e.g. ("cg_steps", "CG {:3d}")
    shown: ClassVar[tuple[tuple[str, str], ...]] = ()
    # Parameters every learner reads that this one does not, each with the reason a message gives (given, refused).
    ignores: ClassVar[dict[str, str]] = {}
    # A learner that does not read instance weights: what to do instead (None: it reads them, C_i = C w_i ...).
    refuses_weights: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a solver that minimizes penalties reads --penalty (and --l1-ratio where one of them is the elastic net)
        implied = (PENALTY,) * bool(cls.penalties) + (L1_RATIO,) * ("elasticnet" in cls.penalties)
        cls.params = (*cls.params, *(p for p in implied if p not in cls.params))

    def __init__(self, problem, params, store=None):
        if problem.weighted and self.refuses_weights:
            raise ParameterError(
                f"the data has instance weights, which --solver {self.name} does not read: {self.refuses_weights}"
            )
        self.problem = problem
        self.store = store

    @property
    def n_problems(self) -> int:
        return self.problem.n_problems

    @classmethod
    def loss_of(cls, params) -> Loss:
        """The loss this solver minimizes under ``params``: its ``fixed_loss``, else the user's ``loss``."""
        return cls.fixed_loss or LOSSES[params.loss]

    # ---- the per-block step ---------------------------------------------------------------

    def local_state(self, block) -> dict[str, np.ndarray]:
        """The state that belongs to ``block``'s rows (views: the step updates it in place)."""
        return {}

    def step(self, block, W: np.ndarray, local: dict, seeds: np.ndarray) -> BlockReport:
        """Update ``W`` (n_problems, n_weights) and ``local`` on ``block``; seeds (n_problems,) seed row orders."""
        raise NotImplementedError

    def visit(self, block, seeds: np.ndarray) -> BlockReport:
        """The serial visit of ``block``: the step on the solver's own weights."""
        return self.step(block, self.weights(), self.local_state(block), seeds)

    @staticmethod
    def map(function, tasks) -> list:
        """``[function(task) for task in tasks]``: how the learner's independent tasks run (dual CD's problems, or
        its replicas' sweeps). The engine that makes its passes replaces it by its own (threads: ``--threads``);
        the learner does not know where they run."""
        return [function(task) for task in tasks]

    # ---- the run --------------------------------------------------------------------------

    def start_pass(self, outer: int) -> None:
        """Called before outer iteration ``outer`` (1-based) begins or resumes."""

    def end_pass(self) -> bool:
        """Called when a pass has visited every block; True if the pass ended an iteration (a record is due:
        always, for a block learner)."""
        return True

    def pass_label(self) -> str:
        """What the coming pass does, in a few words for the progress bar (a pass learner's passes differ)."""
        return ""

    def weights(self) -> np.ndarray:
        """The model's weights, shape (n_problems, n_features + 1); last column: bias feature."""
        raise NotImplementedError

    def start_from(self, W: np.ndarray) -> None:
        """Continue from the weights of a saved model (``--warm-start``), shape as :meth:`weights`."""
        raise ParameterError(
            f"--solver {self.name} cannot continue a saved model (--warm-start): its state is more than the weights"
        )

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


@dataclass
class PassRequest:
    """What a pass of Newton's or OWL-QN's sums: each problem's kind (its kernels' NONE, HV, VALUE), first step and
    vector slots (see the kernels' ``piece_sums``), the weights ``W`` and directions ``D``, and how many vectors of
    sums there are."""

    kinds: np.ndarray
    alphas: np.ndarray
    slots: np.ndarray
    W: np.ndarray
    D: np.ndarray
    n_slots: int


class PieceMapper:
    """A piece of rows' sums for a :class:`PassRequest`, by the ``piece_sums`` of a pass learner's kernels
    (``kernels``, a class attribute: an instance pickles as the problem alone, no state vectors)."""

    kernels = None  # the learner's kernel module

    def __init__(self, problem):
        self.problem = problem

    def hyper(self) -> tuple:
        """The problem's constants the kernels read."""
        return (self.problem.bias, self.problem.loss.table)

    def __call__(self, rows, first_row: int, request: PassRequest) -> dict[str, np.ndarray]:
        p = self.problem
        if p.folds == 1:
            member = np.ones((p.n_problems, rows.n_rows), np.bool_)
        else:
            folds = p.row_folds(np.arange(first_row, first_row + rows.n_rows))
            member = folds[None, :] != p.held_out[:, None]
        scalars = np.zeros((p.n_problems, self.kernels.N_SCALARS))
        vectors = np.zeros((request.n_slots, p.n_weights))
        self.kernels.piece_sums(
            (rows.indptr, rows.indices, rows.data, kernel_weights(rows)),
            p.targets(rows.labels),
            p.costs,
            member,
            request.W,
            request.D,
            (request.kinds, request.alphas, request.slots),
            self.hyper(),
            scalars,
            vectors,
        )
        return {"scalars": scalars, "vectors": vectors}


class PassSolver(Solver):
    """A learner whose pass is a sum over rows (a gradient, a Hessian-vector product, loss values), and whose step
    is taken at the end of the pass from the total.

    Before a pass the learner says what the pass computes (:meth:`request`: a small, picklable question, with
    the vectors it needs); :meth:`mapper` is a pure function from a piece of rows to its sums (a dict of float64
    arrays that add, :mod:`blocksvm.sums`), the same for every piece of the pass; the engines
    (:mod:`blocksvm.train.engines`) run it on threads or dask workers and push the pieces' sums into
    :attr:`tree` in a fixed order, so the total is the same bits for any number of threads or workers; at the
    pass's end :meth:`step` takes the learner's step from the total. An iteration (one history record) may take
    several passes (Newton: a gradient, then one pass per conjugate-gradient step): :meth:`step` says when one
    ended. A checkpoint inside a pass holds the tree's nodes so far (its :meth:`state`).

    A pass learner declares ``memory_budget`` (bytes): when the store fits, its blocks stay in memory after the
    first pass (and on each shard, its share), and the later passes read nothing.
    """

    memory_budget: float = 0.0
    every_pass_an_iteration = False

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.tree = TreeSum()

    def request(self):
        """What the coming pass computes (the same for every block of it): sent to every engine's worker."""
        raise NotImplementedError

    def mapper(self):
        """The pure map of the pass: ``mapper(rows, first_row, request) -> sums`` (``first_row``: the store-wide
        position of the rows' first), with ``mapper.problem``; picklable, light (no state vectors)."""
        raise NotImplementedError

    def step(self, total: dict) -> bool:
        """Take the step from the pass's sums; True if it ended an iteration."""
        raise NotImplementedError

    def end_pass(self) -> bool:
        total, self.tree = self.tree.total(), TreeSum()
        return self.step(total)

    # the shards' face (blocksvm.train.engines.Rounds): every shard sums its pieces from the same request
    def broadcast(self):
        return self.request()

    def reduce(self, results: list) -> None:
        """The shards' nodes, in the shards' order, into the pass's tree."""
        for result in results:
            self.tree.extend(result.nodes)

    def visit(self, block, seeds) -> BlockReport:
        raise TypeError(f"{self.name} makes passes of sums: the engines visit its blocks (blocksvm.train.engines)")

    def state(self) -> dict[str, np.ndarray]:
        return {**super().state(), **self.tree.state()}

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        self.tree = TreeSum.from_state(arrays)


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


class OnlineSolver(Solver):
    """An online learner: its kernel makes one pass over a block, each row judged before its update.

    A learner is this class plus its numbers: ``arrays`` (its state; the first is the array the kernel
    updates as ``w``), ``kernel`` (a function of the online kernel contract of :mod:`._common`), its
    ``hyper_parameters`` and, if the user may not choose it, its ``fixed_loss``. Every problem is visited with
    its targets, the unweighted loss and the class weights (``class_weights``) that scale its updates. Its
    objective is its progressive loss (``objective_terms`` adds a penalty where the learner has one).
    """

    online = True
    commands = COMMANDS
    penalties = ()  # (their penalties are their own learning parameters: l1, l2)
    losses = ("hinge", "squared-hinge", "logistic")
    arrays: ClassVar[tuple[StateArray, ...]] = ()
    kernel: ClassVar = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.state_names = tuple(a.name for a in cls.arrays)

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
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

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
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
