"""Drivers of Confidence-Weighted learning and AROW, diagonal covariance (the math is in
:mod:`._confidence_weighted_kernels`)."""

from __future__ import annotations

from statistics import NormalDist

from blocksvm.losses import HINGE
from blocksvm.params import AVERAGE, Param, positive
from blocksvm.solvers import _confidence_weighted_kernels as K
from blocksvm.solvers.base import AVERAGING_ARRAYS, AveragingSolver, StateArray

CW_ETA = (
    "Confidence-Weighted learning's eta: the probability, in (0.5, 1), with which a weight vector drawn from the "
    "learned Gaussian must classify each row right (phi = Phi^-1(eta)); larger is more aggressive."
)
AROW_R = "AROW's r: the regularization of each update (larger: smaller, steadier steps, for noisy data)."


def probability(x) -> bool:
    """A confidence ``eta`` in (0.5, 1): ``phi = Phi^-1(eta)`` is then positive and finite."""
    return positive(x) and 0.5 < x < 1


class ConfidenceWeightedSolver(AveragingSolver):
    """Confidence-Weighted learning (Dredze, Crammer & Pereira, ICML 2008, the diagonal "Variance" version).

    A Gaussian ``N(mu, Sigma)`` over weight vectors, ``Sigma`` diagonal (1 at the start); each row moves it
    as little as possible (in KL divergence) for a weight vector drawn from it to classify the row right
    with probability ``eta`` (``--cw-eta``): rare features keep a large variance and move fast, frequent ones
    settle. The model is ``mu`` (with ``average``, the mean of its iterates). C plays no part; a class weight
    ``c`` asks its rows for more confidence (``c phi`` in place of ``phi``). Its objective is the progressive
    hinge loss of the pass; it stops after ``max_outer`` passes.

    State: ``mu``, ``sigma`` (the diagonal of ``Sigma``) and ``u``, each (n_problems, n_features + 1), ``count``.
    """

    name = "cw"
    params = (Param("cw_eta", 0.9, CW_ETA, probability, "a number in (0.5, 1)"), AVERAGE)
    fixed_loss = HINGE
    arrays = (StateArray("mu", signed=True), StateArray("sigma", fill=(1.0,)), *AVERAGING_ARRAYS)
    kernel = staticmethod(K.cw_block)

    def hyper_parameters(self, params, problem) -> tuple[float]:
        """CW reads ``phi = Phi^-1(eta)``."""
        return (NormalDist().inv_cdf(float(params.cw_eta)),)


class AROWSolver(ConfidenceWeightedSolver):
    """AROW (Crammer, Kulesza & Dredze, NIPS 2009), diagonal covariance: Confidence-Weighted learning made
    robust to noise. Rows with a margin below 1 move ``mu`` by their hinge loss over ``x^T Sigma x + r`` and
    shrink the variance of their features; ``r`` (``--arow-r``) is the regularization (larger: smaller,
    steadier steps). C plays no part; a class weight ``c`` replaces ``r`` by ``r / c`` on its rows.

    State: as CW's.
    """

    name = "arow"
    params = (Param("arow_r", 1.0, AROW_R, positive, "a positive finite number"), AVERAGE)
    kernel = staticmethod(K.arow_block)

    def hyper_parameters(self, params, problem) -> tuple[float]:
        return (float(params.arow_r),)
