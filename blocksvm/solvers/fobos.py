"""Driver of L1-FOBOS / truncated gradient over blocks (the math is in :mod:`._fobos_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import L1, LOSS, Param, positive
from blocksvm.solvers import _fobos_kernels as K
from blocksvm.solvers.base import OnlineSolver, StateArray


class FOBOSSolver(OnlineSolver):
    """L1-FOBOS (Duchi & Singer, JMLR 2009), the truncated gradient of Langford, Li & Zhang (JMLR 2009).

    Each row: a (sub)gradient step on the user's loss (hinge, squared hinge or logistic), ``eta / sqrt(t)`` or
    ``eta`` long, then every weight, the bias feature's too, is soft-thresholded by ``eta_t l1`` (lazily: a
    row costs O(nnz)). It minimizes, online, the mean loss plus ``l1 ||w||_1``: a sparse model when ``l1 > 0``.
    C plays no part; class weights scale each row's gradient. Its objective is the pass's progressive loss
    plus ``rows * l1 ||w||_1`` at the pass's end; it stops after ``max_outer`` passes.

    State: ``w`` and ``last`` (n_problems, n_features + 1), ``w`` short of the shrinkage ``U - last`` it is
    owed, and ``clock`` (n_problems, 2): the step count ``t`` and the shrinkage ``U`` so far.
    """

    name = "fobos"
    params = (
        LOSS,
        L1,
        Param(
            "fobos_eta",
            0.1,
            "FOBOS's step size eta: steps eta / sqrt(t), or eta with --fobos-schedule constant.",
            positive,
            "a positive finite number",
        ),
        Param(
            "fobos_schedule",
            "sqrt",
            "FOBOS's steps: eta / sqrt(t) at the t-th row (sqrt) or eta (constant).",
            None,
            "one of sqrt, constant",
            choices=("sqrt", "constant"),
            parse=str,
        ),
    )
    arrays = (StateArray("w", signed=True), StateArray("last"), StateArray("clock", K.N_CLOCK))
    kernel = staticmethod(K.fobos_block)

    def hyper_parameters(self, params, problem) -> tuple[float, float, float]:
        return float(params.fobos_eta), float(params.fobos_schedule == "sqrt"), float(params.l1)

    def weights(self) -> np.ndarray:
        return np.stack([K.fobos_weights(self.w[k], self.last[k], self.clock[k, K.SHRINK]) for k in range(len(self.w))])

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        # the mean loss's penalty l1 ||w||_1, times the rows of a pass like the loss sums
        return {
            "loss": np.asarray(loss_sums, dtype=float),
            "l1": self.problem.n_rows * self.hyper[2] * np.abs(W).sum(axis=1),
        }

    def pass_figures(self, total: dict) -> dict:
        return {"nonzero_weights": int(np.count_nonzero(self.weights()[:, :-1]))}
