"""Driver of FTRL-Proximal over blocks (the math is in :mod:`._ftrl_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import Param, non_negative, positive
from blocksvm.solvers import _ftrl_kernels as K
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.evaluate import correct_predictions

UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


class FTRLSolver(Solver):
    """FTRL-Proximal (McMahan et al., KDD 2013, Algorithm 1) on the user's loss (hinge or squared hinge).

    It follows the regularized leader of ``sum_t g_t.w + lambda1 ||w||_1 + lambda2/2 ||w||^2`` plus
    per-coordinate proximal terms (learning rate ``alpha / (beta + sqrt(sum g_i^2))``), where ``g_t`` is the
    sub-gradient of the row's hinge-family loss (the paper uses the logistic loss): a sparse model when
    ``l1 > 0``. Every weight has the same penalty, the bias feature's too. C plays no part; class weights scale
    each row's gradient. Its objective is the pass's progressive loss plus ``l1 ||w||_1 + l2/2 ||w||^2``
    at the pass's end; it stops after ``max_outer`` passes.

    State: ``z`` and ``n`` (n_problems, n_features + 1); the weights are computed from them.
    """

    name = "ftrl"
    online = True
    params = (
        Param(
            "ftrl_alpha",
            0.1,
            "FTRL-Proximal's alpha: the scale of the per-coordinate learning rate "
            "alpha / (beta + sqrt(sum of squared gradients)).",
            positive,
            "a positive finite number",
            solvers=("ftrl",),
        ),
        Param(
            "ftrl_beta",
            1.0,
            "FTRL-Proximal's beta: smooths the first steps of each coordinate's learning "
            "rate (McMahan et al.: 1 is usually good).",
            positive,
            "a positive finite number",
            solvers=("ftrl",),
        ),
        Param(
            "l2",
            0.0,
            "FTRL-Proximal's lambda2: the penalty l2/2 w.w, against the sum of the losses.",
            non_negative,
            "a number >= 0",
            solvers=("ftrl",),
        ),
    )
    state_names = ("z", "n")

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.alpha, self.beta = float(params.ftrl_alpha), float(params.ftrl_beta)
        self.l1, self.l2 = float(params.l1), float(params.l2)
        self.z = np.zeros((problem.n_problems, problem.n_weights))
        self.n = np.zeros((problem.n_problems, problem.n_weights))

    def step(self, block, W, local, seeds) -> BlockReport:
        """One FTRL pass over ``block``; ``W`` is ``z`` (the weights are computed from ``z`` and ``n``)."""
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        stats = np.empty((p.n_problems, 3))
        for k in range(p.n_problems):
            stats[k] = K.ftrl_block(
                block.indptr,
                block.indices,
                block.data,
                targets[k],
                W[k],
                self.n[k],
                p.bias,
                p.loss.table,
                UNWEIGHTED,
                p.costs[k] / p.C,
                self.alpha,
                self.beta,
                self.l1,
                self.l2,
                int(seeds[k]),
            )
        correct = int(stats[0, K.CORRECT_SEEN]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, K.UPDATES].sum())
        )

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.z, {}, seeds)

    def weights(self) -> np.ndarray:
        return np.stack(
            [K.ftrl_weights(self.z[k], self.n[k], self.alpha, self.beta, self.l1, self.l2) for k in range(len(self.z))]
        )

    def start_from(self, W: np.ndarray) -> None:
        # with n = 0, w_i = -(z_i - sgn(z_i) l1) / (beta / alpha + l2): solve for z_i
        self.n[...] = 0.0
        self.z[...] = -W * (self.beta / self.alpha + self.l2) - np.sign(W) * self.l1

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        return {
            "loss": np.asarray(loss_sums, dtype=float),
            "l1": self.l1 * np.abs(W).sum(axis=1),
            "l2": 0.5 * self.l2 * np.einsum("kj,kj->k", W, W),
        }

    def pass_figures(self, total: dict) -> dict:
        return {"nonzero_weights": int(np.count_nonzero(self.weights()[:, :-1]))}
