"""Drivers of Soft Confidence-Weighted learning, SCW-I and SCW-II, diagonal covariance (the math is in
:mod:`._scw_kernels`)."""

from __future__ import annotations

from blocksvm.losses import HINGE
from blocksvm.params import C, Param, positive
from blocksvm.solvers import _scw_kernels as K
from blocksvm.solvers.base import OnlineSolver, StateArray

PHI = (
    "SCW's confidence phi = Phi^-1(eta): a row moves the model until its margin is at least phi sqrt(x^T Sigma x) "
    "(larger: more aggressive)."
)


class SCW1Solver(OnlineSolver):
    """SCW-I (Wang, Zhao & Hoi, ICML 2012): Confidence-Weighted learning with a hinge-like loss, its steps
    bounded by the aggressiveness ``C`` (``-C``, times a row's class weight): robust to noisy rows, adaptive
    like CW. The model is the mean ``mu``; its objective is the progressive hinge loss of the pass; it stops
    after ``max_outer`` passes.

    State: ``mu`` and ``sigma`` (the diagonal of ``Sigma``), each (n_problems, n_features + 1).
    """

    name = "scw1"
    params = (C, Param("scw_phi", 1.0, PHI, positive, "a positive finite number"))
    fixed_loss = HINGE
    arrays = (StateArray("mu", signed=True), StateArray("sigma", fill=(1.0,)))
    kernel = staticmethod(K.scw1_block)

    def hyper_parameters(self, params, problem) -> tuple[float, float]:
        return float(params.scw_phi), problem.C


class SCW2Solver(SCW1Solver):
    """SCW-II: the squared loss's step, damped by ``1 / (2C)`` instead of capped at ``C``."""

    name = "scw2"
    kernel = staticmethod(K.scw2_block)
