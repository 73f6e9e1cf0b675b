"""Driver of FTRL-Proximal over blocks (the math is in :mod:`._ftrl_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import L1, LOSS, Param, non_negative, positive
from blocksvm.solvers import _ftrl_kernels as K
from blocksvm.solvers.base import OnlineSolver, StateArray


class FTRLSolver(OnlineSolver):
    """FTRL-Proximal (McMahan et al., KDD 2013, Algorithm 1) on the user's loss (hinge, squared hinge or logistic).

    It follows the regularized leader of ``sum_t g_t.w + lambda1 ||w||_1 + lambda2/2 ||w||^2`` plus
    per-coordinate proximal terms (learning rate ``alpha / (beta + sqrt(sum g_i^2))``), where ``g_t`` is the
    (sub-)gradient of the row's loss (the paper's is the logistic loss): a sparse model when
    ``l1 > 0``. Every weight has the same penalty, the bias feature's too. C plays no part; class weights scale
    each row's gradient. Its objective is the pass's progressive loss plus ``l1 ||w||_1 + l2/2 ||w||^2``
    at the pass's end; it stops after ``max_outer`` passes.

    State: ``z`` and ``n`` (n_problems, n_features + 1); the weights are computed from them.
    """

    name = "ftrl"
    params = (
        LOSS,
        L1,
        Param(
            "ftrl_alpha",
            0.1,
            "FTRL-Proximal's alpha: the scale of the per-coordinate learning rate alpha / (beta + sqrt(sum of "
            "squared gradients)).",
            positive,
            "a positive finite number",
        ),
        Param(
            "ftrl_beta",
            1.0,
            "FTRL-Proximal's beta: smooths the first steps of each coordinate's learning rate (McMahan et al.: 1 "
            "is usually good).",
            positive,
            "a positive finite number",
        ),
        Param(
            "l2",
            0.0,
            "FTRL-Proximal's lambda2: the penalty lambda2/2 w.w, against the sum of the losses.",
            non_negative,
            "a number >= 0",
            flags=("--lambda2",),
            metavar="LAMBDA2",
        ),
    )
    arrays = (StateArray("z", signed=True), StateArray("n"))
    kernel = staticmethod(K.ftrl_block)

    def hyper_parameters(self, params, problem) -> tuple[float, float, float, float]:
        return float(params.ftrl_alpha), float(params.ftrl_beta), float(params.l1), float(params.l2)

    def weights(self) -> np.ndarray:
        return np.stack([K.ftrl_weights(self.z[k], self.n[k], *self.hyper) for k in range(len(self.z))])

    def start_from(self, W: np.ndarray) -> None:
        # with n = 0, w_i = -(z_i - sgn(z_i) l1) / (beta / alpha + l2): solve for z_i
        alpha, beta, l1, l2 = self.hyper
        self.reset()
        self.z[...] = -W * (beta / alpha + l2) - np.sign(W) * l1

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        _, _, l1, l2 = self.hyper
        return {
            "loss": np.asarray(loss_sums, dtype=float),
            "l1": l1 * np.abs(W).sum(axis=1),
            "l2": 0.5 * l2 * np.einsum("kj,kj->k", W, W),
        }

    def pass_figures(self, total: dict) -> dict:
        return {"nonzero_weights": int(np.count_nonzero(self.weights()[:, :-1]))}
