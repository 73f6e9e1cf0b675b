"""Drivers of Passive-Aggressive learning: PA, PA-I and PA-II (the math is in :mod:`._passive_aggressive_kernels`)."""

from __future__ import annotations

import math

from blocksvm.losses import HINGE
from blocksvm.params import AVERAGE, C
from blocksvm.solvers import _passive_aggressive_kernels as K
from blocksvm.solvers.base import AVERAGING_ARRAYS, AveragingSolver, StateArray


class PassiveAggressiveSolver(AveragingSolver):
    """PA (Crammer et al., JMLR 2006): on every row with a hinge loss ``l > 0``, the smallest change of
    ``w`` that gives the row a margin of 1, ``w <- w + l / ||x||^2 y x``. Its subclasses PA-I and PA-II
    bound that step by the aggressiveness ``C`` (the user's ``-C``); class weights scale it. It has no
    regularizer and no dual: its objective is the progressive hinge loss of the pass, and it stops after
    ``max_outer`` passes. ``average`` returns the mean of its iterates instead of the last.

    State: ``w`` and ``u`` (n_problems, n_features + 1), ``count`` (n_problems, 1).
    """

    name = "pa"
    params = (AVERAGE,)
    fixed_loss = HINGE
    arrays = (StateArray("w", signed=True), *AVERAGING_ARRAYS)
    kernel = staticmethod(K.pa_block)

    def hyper_parameters(self, params, problem) -> tuple[float, float]:
        """``(cap, damping)`` of ``tau = min(cap, l / (||x||^2 + damping))``: PA's is ``(inf, 0)``."""
        return math.inf, 0.0


class PA1Solver(PassiveAggressiveSolver):
    """PA-I: the step ``min(C, l / ||x||^2)``, at most ``C`` (robust to noisy rows)."""

    name = "pa1"
    params = (C, AVERAGE)

    def hyper_parameters(self, params, problem) -> tuple[float, float]:
        return problem.C, 0.0


class PA2Solver(PassiveAggressiveSolver):
    """PA-II: the step ``l / (||x||^2 + 1/(2C))``, damped by ``1/(2C)``."""

    name = "pa2"
    params = (C, AVERAGE)

    def hyper_parameters(self, params, problem) -> tuple[float, float]:
        return math.inf, 0.5 / problem.C
