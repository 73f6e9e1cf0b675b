"""Drivers of Passive-Aggressive learning: PA, PA-I and PA-II (the math is in :mod:`._passive_aggressive_kernels`)."""

from __future__ import annotations

import math

import numpy as np

from blocksvm.losses import HINGE, Loss
from blocksvm.solvers import _passive_aggressive_kernels as K
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.evaluate import correct_predictions

UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


class PassiveAggressiveSolver(Solver):
    """PA (Crammer et al., JMLR 2006): on every row with a hinge loss ``l > 0``, the smallest change of
    ``w`` that gives the row a margin of 1, ``w <- w + l / ||x||^2 y x``. Its subclasses PA-I and PA-II
    bound that step by the aggressiveness ``C`` (the user's ``-C``); class weights scale it. It has no
    regularizer and no dual: its objective is the progressive hinge loss of the pass, and it stops after
    ``max_outer`` passes.

    State: ``w`` (n_problems, n_features + 1).
    """

    name = "pa"
    online = True
    state_names = ("w",)

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.cap, self.damping = self.variant(problem.C)
        self.w = np.zeros((problem.n_problems, problem.n_weights))

    @staticmethod
    def variant(C: float) -> tuple[float, float]:
        """``(cap, damping)`` of ``tau = min(cap, l / (||x||^2 + damping))``: PA's is ``(inf, 0)``."""
        return math.inf, 0.0

    @classmethod
    def loss_of(cls, params) -> Loss:
        return HINGE

    def step(self, block, W, local, seeds) -> BlockReport:
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        stats = np.empty((p.n_problems, 3))
        for k in range(p.n_problems):
            stats[k] = K.pa_block(
                block.indptr,
                block.indices,
                block.data,
                targets[k],
                W[k],
                p.bias,
                p.loss.table,
                UNWEIGHTED,
                p.costs[k] / p.C,
                self.cap,
                self.damping,
                int(seeds[k]),
            )
        correct = int(stats[0, K.CORRECT_SEEN]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, K.UPDATES].sum())
        )

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.w, {}, seeds)

    def start_from(self, W: np.ndarray) -> None:
        self.w[...] = W

    def weights(self) -> np.ndarray:
        return self.w

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        return {"loss": np.asarray(loss_sums, dtype=float)}


class PA1Solver(PassiveAggressiveSolver):
    """PA-I: the step ``min(C, l / ||x||^2)``, at most ``C`` (robust to noisy rows)."""

    name = "pa1"

    @staticmethod
    def variant(C: float) -> tuple[float, float]:
        return C, 0.0


class PA2Solver(PassiveAggressiveSolver):
    """PA-II: the step ``l / (||x||^2 + 1/(2C))``, damped by ``1/(2C)``."""

    name = "pa2"

    @staticmethod
    def variant(C: float) -> tuple[float, float]:
        return math.inf, 0.5 / C
