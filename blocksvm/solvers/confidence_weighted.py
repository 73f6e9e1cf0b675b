"""Drivers of Confidence-Weighted learning and AROW, diagonal covariance (the math is in
:mod:`._confidence_weighted_kernels`)."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from blocksvm.losses import HINGE, Loss
from blocksvm.params import Param, positive
from blocksvm.solvers import _confidence_weighted_kernels as K
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.evaluate import correct_predictions

UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


def probability(x) -> bool:
    """A confidence ``eta`` in (0.5, 1): ``phi = Phi^-1(eta)`` is then positive and finite."""
    return positive(x) and 0.5 < x < 1


class ConfidenceWeightedSolver(Solver):
    """Confidence-Weighted learning (Dredze, Crammer & Pereira, ICML 2008, the diagonal "Variance" version).

    A Gaussian ``N(mu, Sigma)`` over weight vectors, ``Sigma`` diagonal (1 at the start); each row moves it
    as little as possible (in KL divergence) for a weight vector drawn from it to classify the row right
    with probability ``eta`` (``--cw-eta``): rare features keep a large variance and move fast, frequent ones
    settle. The model is ``mu``. C plays no part; a class weight ``c`` asks its rows for more confidence
    (``c phi`` in place of ``phi``). Its objective is the progressive hinge loss of the pass; it stops after
    ``max_outer`` passes.

    State: ``mu`` and ``sigma`` (the diagonal of ``Sigma``), each (n_problems, n_features + 1).
    """

    name = "cw"
    online = True
    params = (
        Param(
            "cw_eta",
            0.9,
            "Confidence-Weighted learning's eta: the probability, in (0.5, 1), with which a "
            "weight vector drawn from the learned Gaussian must classify each row right (phi = Phi^-1(eta)); "
            "larger is more aggressive.",
            probability,
            "a number in (0.5, 1)",
            solvers=("cw",),
        ),
    )
    rule = K.CW
    state_names = ("mu", "sigma")

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.phi, self.r = self.rule_parameters(params)
        self.mu = np.zeros((problem.n_problems, problem.n_weights))
        self.sigma = np.ones((problem.n_problems, problem.n_weights))

    @staticmethod
    def rule_parameters(params) -> tuple[float, float]:
        """``(phi, r)`` of the kernel: CW reads ``phi = Phi^-1(eta)``."""
        return NormalDist().inv_cdf(float(params.cw_eta)), 1.0

    @classmethod
    def loss_of(cls, params) -> Loss:
        return HINGE

    def step(self, block, W, local, seeds) -> BlockReport:
        """One pass over ``block``; ``W`` is ``mu``."""
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        stats = np.empty((p.n_problems, 3))
        for k in range(p.n_problems):
            stats[k] = K.confidence_block(
                block.indptr,
                block.indices,
                block.data,
                targets[k],
                W[k],
                self.sigma[k],
                p.bias,
                p.loss.table,
                UNWEIGHTED,
                p.costs[k] / p.C,
                self.rule,
                self.phi,
                self.r,
                int(seeds[k]),
            )
        correct = int(stats[0, K.CORRECT_SEEN]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, K.UPDATES].sum())
        )

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.mu, {}, seeds)

    def start_from(self, W: np.ndarray) -> None:
        # the model's weights as the mean, with the variance of a fresh start
        self.mu[...] = W
        self.sigma[...] = 1.0

    def weights(self) -> np.ndarray:
        return self.mu

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        return {"loss": np.asarray(loss_sums, dtype=float)}


class AROWSolver(ConfidenceWeightedSolver):
    """AROW (Crammer, Kulesza & Dredze, NIPS 2009), diagonal covariance: Confidence-Weighted learning made
    robust to noise. Rows with a margin below 1 move ``mu`` by their hinge loss over ``x^T Sigma x + r`` and
    shrink the variance of their features; ``r`` (``--arow-r``) is the regularization (larger: smaller,
    steadier steps). C plays no part; a class weight ``c`` replaces ``r`` by ``r / c`` on its rows.

    State: ``mu`` and ``sigma`` (the diagonal of ``Sigma``), each (n_problems, n_features + 1).
    """

    name = "arow"
    params = (
        Param(
            "arow_r",
            1.0,
            "AROW's r: the regularization of each update (larger: smaller, steadier steps, for noisy data).",
            positive,
            "a positive finite number",
            solvers=("arow",),
        ),
    )
    rule = K.AROW

    @staticmethod
    def rule_parameters(params) -> tuple[float, float]:
        return 1.0, float(params.arow_r)
