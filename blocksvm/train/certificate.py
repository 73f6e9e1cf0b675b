"""A pass's exact evaluation made while the next pass reads the store: a certificate one pass late, no read of its own.

The duality gap rule confirms a pass's estimate by an exact evaluation at the weights ``W_t`` where the pass ended
(:meth:`~blocksvm.train.records.StopRules.exact_due`). Evaluated at once, that is a second read of every block the
budget does not keep in memory. Instead the weights are kept, with the dual at that point, and as pass ``t + 1``
brings each block (read for its own sweep, or from memory), the block is measured at ``W_t``
(:func:`~blocksvm.solvers.evaluate.evaluate_block`: its loss sums, correct rows and squared errors). At the end of pass
``t + 1`` record ``t`` is exact; if it meets the tolerance, the run ends with ``W_t``, the certified model, and pass
``t + 1``'s moves are left aside.

Each block's figures are kept apart and added in block order once all are in, as the immediate evaluation adds them:
the same bits whatever the order the blocks came in and wherever a run was cut and resumed (the figures so far are
in the checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blocksvm.errors import CheckpointError
from blocksvm.solvers.evaluate import evaluate_block
from blocksvm.train.snapshot import check_shape

ARRAYS = ("certify_weights", "certify_dual", "certify_parts", "certify_done")


@dataclass
class Certificate:
    """The exact evaluation of iteration ``outer``'s weights, made as the next pass goes by.

    Attributes
    ----------
    outer : int
        The iteration (record) it makes exact.
    weights, dual : ndarray
        That iteration's weights (n_problems, n_features + 1) and dual objectives (n_problems,).
    parts : ndarray (n_blocks, n_problems + 2)
        Each block's loss sums (one a problem), correct rows and squared errors at ``weights``, once measured.
    done : ndarray of bool (n_blocks,)
        The blocks measured.
    certified : bool
        Its record met the tolerance: the run's model is ``weights``.
    """

    outer: int
    weights: np.ndarray
    dual: np.ndarray
    parts: np.ndarray
    done: np.ndarray
    certified: bool = False

    @classmethod
    def begin(cls, outer: int, weights: np.ndarray, dual: np.ndarray, n_blocks: int) -> Certificate:
        n_problems = weights.shape[0]
        parts = np.zeros((n_blocks, n_problems + 2))
        return cls(outer, weights.copy(), np.asarray(dual, float).copy(), parts, np.zeros(n_blocks, np.bool_))

    @property
    def complete(self) -> bool:
        return bool(self.done.all())

    def measure(self, problem, block) -> None:
        """Measure ``block`` (a store's, with its ``index``) at the kept weights, once."""
        b = block.index
        if self.done[b]:
            return
        losses, correct, squared = evaluate_block(problem, self.weights, block)
        self.parts[b, :-2], self.parts[b, -2], self.parts[b, -1] = losses, correct, squared
        self.done[b] = True

    def figures(self, weighted: bool) -> tuple[np.ndarray, int | float, float]:
        """The evaluation's ``(losses, correct, squared)``, the blocks' figures added in block order (as
        :func:`~blocksvm.train.engines.add_up` adds an immediate evaluation's); ``weighted``: correct rows are sums
        of instance weights, not a count."""
        losses, correct, squared = self.parts[0, :-2].copy(), self.parts[0, -2], self.parts[0, -1]
        for row in self.parts[1:]:
            losses, correct, squared = losses + row[:-2], correct + row[-2], squared + row[-1]
        return losses, (float(correct) if weighted else int(correct)), float(squared)

    # ---- checkpoints ------------------------------------------------------------------------------------------

    def state(self) -> dict:
        return {"certificate": {"outer": self.outer, "certified": self.certified}}

    def arrays(self) -> dict[str, np.ndarray]:
        return dict(zip(ARRAYS, (self.weights, self.dual, self.parts, self.done.astype(np.uint8))))

    @classmethod
    def restored(cls, checkpoint, weights_shape: tuple, dual_shape: tuple, n_blocks: int, source: str):
        """The certificate a checkpoint holds (None: none), its arrays checked against this run's shapes."""
        found = checkpoint.state.get("certificate")
        if found is None:
            return None
        shapes = (weights_shape, dual_shape, (n_blocks, weights_shape[0] + 2), (n_blocks,))
        for name, shape in zip(ARRAYS, shapes):
            if name not in checkpoint.arrays:
                raise CheckpointError(f"{source}: field '{name}' is missing (its pending certificate's)")
            check_shape(checkpoint, name, shape, source)
        weights, dual, parts, done = (np.array(checkpoint.arrays[name]) for name in ARRAYS)
        return cls(found["outer"], weights.astype(float), dual.astype(float), parts.astype(float), done.astype(bool),
                   found["certified"])  # fmt: skip
