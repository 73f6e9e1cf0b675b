"""The staged pass learner: what Newton, OWL-QN and the column L1 learners share.

Such a learner solves its problems (one-vs-rest, tune's folds) side by side and in step. Each problem is in a
**stage** of its iteration (its ``stage`` entry, a row of the learner's :attr:`StagedSolver.STAGES`); a pass
serves every problem whose stage asks one, and at the pass's end :meth:`StagedSolver.step` hands each of them its
share of the pass's results (:meth:`StagedSolver._serve`, the learner's). A problem whose iteration is over waits
(``WAIT``, asking nothing); when none asks a pass any more, the iteration ends for all at once::

    the pass's end:   each asking problem served            (the learner's _serve: its stages' arithmetic)
    none asks:        each waiting problem judged            (_judge: done by the learner's stopping rule?)
                      the iteration's record                  (_iteration_figures)
                      each waiting problem begins the next   (_begin: its first stage that asks)

The first pass after a (re)start serves the stage ``START`` (the values at ``w``), where a learner has one: it
belongs to the first iteration, and ends none. A learner is its stages, what a pass computes for each
(``request``/``mapper``, or a column learner's rounds), its ``_serve``, ``_begin`` and ``_judge`` numbers, and the
figures it adds to a record; the bookkeeping of iterations and passes, the stop reasons, restarts, ``move_to``
(tune's C path) and the checkpoint's ``at_zero`` are here, written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from blocksvm.losses import REGRESSION
from blocksvm.solvers.base import Resources, Solver

ITERATIONS, PASSES = 0, 1  # the first entries of ``counts``: iterations done, passes in the current one


@dataclass(frozen=True)
class Stage:
    """One stage of a problem's iteration: ``name``, what a pass does for it (``words``, for the progress bar; ""
    for one that asks nothing) and whether it asks a pass (``asks``)."""

    name: str
    words: str = ""
    asks: bool = True


class StagedSolver(Solver):
    """A pass learner whose problems move through stages; see the module docstring.

    A subclass declares ``STAGES`` (a stage's number is its position: the checkpoint's ``stage`` holds them), which
    of its ``numbers`` columns the shared stopping rules read (``F``, ``F_OLD``, ``NORM``, ``NORM0``, ``TOL``,
    ``STEP``), ``n_numbers`` and ``n_counts``, the record's names of its norm and pass count (``norm_figure``,
    ``passes_figure``) and how its stop reason names them (``norm_words``, ``title``), and its ``weight_vectors``.
    """

    warm_starts = True  # (its state between iterations is its weights)
    every_pass_an_iteration = False  # an iteration may take several passes
    STAGES: ClassVar[tuple[Stage, ...]] = ()
    F = F_OLD = NORM = NORM0 = TOL = STEP = 0
    n_numbers: ClassVar[int] = 0
    n_counts: ClassVar[int] = 2
    norm_figure: ClassVar[str] = ""
    passes_figure: ClassVar[str] = ""
    norm_words: ClassVar[str] = ""
    title: ClassVar[str] = ""
    # the learner's vectors of one entry a weight for each problem, zero at the start (among its state_names)
    weight_vectors: ClassVar[tuple[str, ...]] = ()
    # LIBLINEAR's default -e of the learner's problems, by task (classification, regression): its stopping tolerance
    DEFAULT_EPS: ClassVar[dict[str, float]] = {"classification": 0.01, "regression": 0.01}
    # the stop rules in their order, the reason of each (``why``'s values from 1): LIBLINEAR's messages
    WHY: ClassVar[tuple[str, ...]] = ("", "norm met", "line search fails", "objective change too small", "f < -1e32")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        names = [s.name for s in cls.STAGES]
        if names:  # START: values at w that end no iteration (a learner without one begins with its FIRST stage)
            cls.START = names.index("START") if "START" in names else -1
            cls.FIRST = max(cls.START, 0)
            cls.WAIT, cls.DONE = names.index("WAIT"), names.index("DONE")
            cls.STAGE_GRADIENT = names.index("GRADIENT") if "GRADIENT" in names else -1
            cls._asks = np.array([s.asks for s in cls.STAGES])

    def __init__(self, problem, params, resources: Resources | None = None):
        super().__init__(problem, params, resources)
        n_k = problem.n_problems
        self.numbers = np.zeros((n_k, self.n_numbers))
        self.stage = np.full(n_k, self.FIRST, np.int64)
        self.why = np.zeros(n_k, np.int64)
        self.counts = np.zeros(self.n_counts, np.int64)
        for name in self.weight_vectors:
            setattr(self, name, np.zeros((n_k, problem.n_weights)))
        self.eps = params.eps if params.eps is not None else self.DEFAULT_EPS[problem.task]
        self.at_zero = False  # the start's pass also sums the gradient at w = 0 (w is not 0 there)

    def tolerance(self, positive, rows):
        """LIBLINEAR's tolerance of a problem with ``positive`` rows of its ``rows`` positive: ``eps * max(min(#pos,
        #neg), 1) / l`` in classification (numbers, or arrays of each problem's), ``eps`` in regression."""
        rows = np.maximum(rows, 1)
        if self.problem.task == REGRESSION:
            return self.eps * np.ones_like(rows, dtype=np.float64)
        return self.eps * np.maximum(np.minimum(positive, rows - positive), 1) / rows

    # ---- the learner's parts -------------------------------------------------------------------------

    def _serve(self, k: int, total: dict, slots: np.ndarray) -> None:
        """Problem ``k``'s share of the pass just made (its stage asked it; ``slots``: where its sums are)."""
        raise NotImplementedError

    def _begin(self, k: int) -> None:
        """Problem ``k``, judged not done, begins its next iteration (its first stage that asks a pass)."""
        raise NotImplementedError

    def _plan(self) -> tuple[np.ndarray, np.ndarray, int]:
        """Each problem's kind of sums, the rows of the pass's vectors that hold them, and how many there are."""
        raise NotImplementedError

    def _more_figures(self) -> dict:
        """The learner's own entries of an iteration's record."""
        return {}

    # ---- the step at the end of a pass ----------------------------------------------------------------

    def asking(self) -> bool:
        """Some problem's stage asks a pass."""
        return bool(np.any(self._asks[self.stage]))

    def step(self, total: dict) -> bool:
        _, plan, _ = self._plan()  # the pass just made (the state has not moved since)
        started = bool(np.any(self.stage == self.START))  # the start's pass: it ends no iteration
        self.counts[PASSES] += 1
        for k in range(self.n_problems):
            if self._asks[self.stage[k]]:
                self._serve(k, total, plan[k])
        if self.asking():
            return False
        for k in np.flatnonzero(self.stage == self.WAIT):
            self._judge(k, started)
        self.figures = self._iteration_figures()
        if not started:  # (the start's pass counts in the first iteration's passes)
            self.counts[ITERATIONS] += 1
            self.counts[PASSES:] = 0
        for k in np.flatnonzero(self.stage == self.WAIT):
            self._begin(k)
        return not started or not self.asking()

    def _judge(self, k: int, started: bool) -> None:
        """After an iteration (or the start): is problem ``k`` done (LIBLINEAR's tests, in its order)?"""
        n = self.numbers[k]
        if n[self.NORM] <= n[self.TOL] * n[self.NORM0]:
            self.stage[k], self.why[k] = self.DONE, 1
        elif not started and n[self.F] < -1.0e32:
            self.stage[k], self.why[k] = self.DONE, 4
        elif not started and abs(n[self.F_OLD] - n[self.F]) <= 1.0e-12 * abs(n[self.F]):
            self.stage[k], self.why[k] = self.DONE, 3

    # ---- a line search's end (Newton's, OWL-QN's) ------------------------------------------------------
    # A learner with a line search declares the columns of ``numbers`` holding its next step and the halvings so far
    # (``ALPHA``, ``HALVINGS``): each pass tries a few steps, the first with Armijo's decrease is taken.

    ALPHA = HALVINGS = 0
    MAX_HALVINGS: ClassVar[int] = 20  # line-search steps tried (LIBLINEAR's max_num_linesearch)

    def _take_step(self, k: int, f: float, step: float, first: bool, at_w) -> None:
        """Problem ``k`` takes the ``step`` whose objective ``f`` met Armijo's decrease (its ``w`` already moved):
        the first candidate's pass also summed the gradient there (``at_w()`` serves it); another's asks a pass for
        it."""
        n = self.numbers[k]
        n[self.F], n[self.STEP] = f, step
        if first:
            at_w()
        else:
            self.stage[k] = self.STAGE_GRADIENT

    def _no_step(self, k: int, next_step: float, tried: int) -> None:
        """None of the ``tried`` candidates met Armijo's decrease: the next pass tries from ``next_step``; after
        ``MAX_HALVINGS`` in all, problem ``k`` is done (the line search fails, LIBLINEAR's message)."""
        n = self.numbers[k]
        n[self.ALPHA], n[self.HALVINGS] = next_step, n[self.HALVINGS] + tried
        if n[self.HALVINGS] >= self.MAX_HALVINGS:
            n[self.F], n[self.STEP] = n[self.F_OLD], 0.0
            self.stage[k], self.why[k] = self.DONE, 2

    def pass_label(self) -> str:
        stages = {self.STAGES[s].words for s in self.stage if self.STAGES[s].words}
        return " / ".join(sorted(stages))

    # ---- records --------------------------------------------------------------------------------------

    def norm_ratio(self) -> np.ndarray:
        """Each problem's norm of its stopping rule, relative to the start's."""
        n = self.numbers
        return n[:, self.NORM] / np.maximum(n[:, self.NORM0], 1e-300)

    def _iteration_figures(self) -> dict:
        ratio = self.norm_ratio()
        figures = {
            "primal_exact": True,
            "per_problem_primal": self.numbers[:, self.F].tolist(),
            self.norm_figure: float(ratio.max()),
            "step_size": float(self.numbers[:, self.STEP].min()),
            self.passes_figure: int(self.counts[PASSES]),
            **self._more_figures(),
        }
        if np.all(self.stage == self.DONE):
            figures["stop"] = self._stop_reason(ratio)
        return figures

    def _rule_words(self) -> str:
        """The stopping rule met, in words, after the norm's ratio."""
        return f"<= eps {self.eps:g} x max(min(#pos, #neg), 1) / l"

    def _stop_reason(self, ratio: np.ndarray) -> str:
        met = f"{self.norm_words} {ratio.max():.2e} of the start's {self._rule_words()}"
        others = sorted({self.WHY[why] for why in self.why if why > 1})
        if not others:
            return met
        if np.any(self.why == 1):
            return f"{met} for {np.count_nonzero(self.why == 1)} of {self.n_problems} problems; the others: " + (
                ", ".join(others)
            )
        return f"{self.title} stopped: {', '.join(others)} (f = {self.numbers[:, self.F].sum():.6e})"

    def pass_figures(self, total: dict) -> dict:
        figures = dict(getattr(self, "figures", {}))
        if "per_problem_primal" in figures:
            figures["primal"] = float(np.sum(figures["per_problem_primal"]))
        return figures

    # ---- the run --------------------------------------------------------------------------------------

    def weights(self) -> np.ndarray:
        return self.w

    def start_from(self, W: np.ndarray) -> None:
        self.w[...] = W
        self.restart()

    def restart(self) -> None:
        """Start over from the current ``w``: its values first (and the gradient at 0 for the stopping rule)."""
        self.stage[:] = self.FIRST
        self.why[:] = 0
        self.numbers[:] = 0.0
        self.counts[:] = 0
        self.at_zero = bool(np.any(self.w))

    def move_to(self, C: float, warm: bool = True) -> None:
        """Solve the same problems at cost ``C`` next, from the current ``w`` (``warm``; Chu et al., KDD 2015, for
        the primal) or from zero."""
        self.problem = self.problem.at(C)
        if not warm:
            self.w[...] = 0.0
        self.restart()

    def state(self) -> dict[str, np.ndarray]:
        return {**super().state(), "at_zero": np.array([self.at_zero])}

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        super().load_state(arrays)
        self.at_zero = bool(arrays["at_zero"][0])
