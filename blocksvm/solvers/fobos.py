"""Driver of L1-FOBOS / truncated gradient over blocks (the math is in :mod:`._fobos_kernels`)."""

from __future__ import annotations

import numpy as np

from blocksvm.params import Param, positive
from blocksvm.solvers import _fobos_kernels as K
from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.evaluate import correct_predictions

UNWEIGHTED = np.ones(2)  # progressive loss per row, not C-weighted


class FOBOSSolver(Solver):
    """L1-FOBOS (Duchi & Singer, JMLR 2009), the truncated gradient of Langford, Li & Zhang (JMLR 2009).

    Each row: a (sub)gradient step on the user's loss (hinge or squared hinge), ``eta / sqrt(t)`` or
    ``eta`` long, then every weight, the bias feature's too, is soft-thresholded by ``eta_t l1`` (lazily: a
    row costs O(nnz)). It minimizes, online, the mean loss plus ``l1 ||w||_1``: a sparse model when ``l1 > 0``.
    C plays no part; class weights scale each row's gradient. Its objective is the pass's progressive loss
    plus ``rows * l1 ||w||_1`` at the pass's end; it stops after ``max_outer`` passes.

    State: ``w`` and ``last`` (n_problems, n_features + 1), ``w`` short of the shrinkage ``U - last`` it is
    owed, and ``clock`` (n_problems, 2): the step count ``t`` and the shrinkage ``U`` so far.
    """

    name = "fobos"
    online = True
    params = (
        Param(
            "fobos_eta",
            0.1,
            "FOBOS's step size eta: steps eta / sqrt(t), or eta with --fobos-schedule constant.",
            positive,
            "a positive finite number",
            solvers=("fobos",),
        ),
        Param(
            "fobos_schedule",
            "sqrt",
            "FOBOS's steps: eta / sqrt(t) at the t-th row (sqrt) or eta (constant).",
            None,
            "one of sqrt, constant",
            choices=("sqrt", "constant"),
            parse=str,
            solvers=("fobos",),
        ),
    )
    state_names = ("w", "last", "clock")

    def __init__(self, problem, params, store=None):
        super().__init__(problem, params, store)
        self.eta, self.l1 = float(params.fobos_eta), float(params.l1)
        self.sqrt_steps = params.fobos_schedule == "sqrt"
        n_k = problem.n_problems
        self.w = np.zeros((n_k, problem.n_weights))
        self.last = np.zeros((n_k, problem.n_weights))
        self.clock = np.zeros((n_k, K.N_CLOCK))

    def step(self, block, W, local, seeds) -> BlockReport:
        """One FOBOS pass over ``block``; ``W`` is ``w`` before the shrinkage it is owed."""
        p = self.problem
        targets = p.targets(block.labels)
        # one problem counts its own positive margins; one-vs-rest needs the arg-max first
        seen_correct = correct_predictions(p, self.weights(), block) if p.n_problems > 1 else None
        stats = np.empty((p.n_problems, 3))
        for k in range(p.n_problems):
            stats[k] = K.fobos_block(
                block.indptr,
                block.indices,
                block.data,
                targets[k],
                W[k],
                self.last[k],
                self.clock[k],
                p.bias,
                p.loss.table,
                UNWEIGHTED,
                p.costs[k] / p.C,
                self.eta,
                self.sqrt_steps,
                self.l1,
                int(seeds[k]),
            )
        correct = int(stats[0, K.CORRECT_SEEN]) if seen_correct is None else seen_correct
        return BlockReport(
            loss=stats[:, K.LOSS_SEEN], correct=correct, passes=1.0, updates=int(stats[:, K.UPDATES].sum())
        )

    def visit(self, block, seeds) -> BlockReport:
        return self.step(block, self.w, {}, seeds)

    def weights(self) -> np.ndarray:
        return np.stack([K.fobos_weights(self.w[k], self.last[k], self.clock[k, K.SHRINK]) for k in range(len(self.w))])

    def start_from(self, W: np.ndarray) -> None:
        self.w[...] = W
        self.last[...] = 0.0
        self.clock[...] = 0.0

    def objective_terms(self, W, loss_sums) -> dict[str, np.ndarray]:
        # the mean loss's penalty l1 ||w||_1, times the rows of a pass like the loss sums
        return {"loss": np.asarray(loss_sums, dtype=float), "l1": self.problem.n_rows * self.l1 * np.abs(W).sum(axis=1)}

    def pass_figures(self, total: dict) -> dict:
        return {"nonzero_weights": int(np.count_nonzero(self.weights()[:, :-1]))}
