"""What every block solver offers the outer loop."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BlockReport:
    """What one visit of a block did, per problem (arrays of shape (n_problems,)).

    ``loss`` and ``correct`` (an int: rows predicted right) are measured at the ``w`` each row
    saw when the visit reached it, so they describe a moving ``w``. ``pg_max``/``pg_min`` are
    the first inner pass's extreme projected gradients (NaN for solvers without a dual).
    """

    loss: np.ndarray
    correct: int
    pg_max: np.ndarray
    pg_min: np.ndarray
    passes: float
    updates: int


class BlockSolver:
    """Interface of a solver: state for K problems, updated one block at a time.

    Subclasses keep all their state in the arrays named by :attr:`state_names`, so that a
    checkpoint is just those arrays.
    """

    name: str = ""
    state_names: tuple[str, ...] = ()
    has_dual: bool = False

    def solve(self, block, seeds: np.ndarray, companion=None) -> BlockReport:
        """Update the state on ``block`` (and on ``companion``, a block kept in memory, if given).

        ``seeds`` (shape (n_problems,)) seed the row orders. The report covers ``block``'s rows.
        """
        raise NotImplementedError

    def start_pass(self, outer: int) -> None:
        """Called before outer iteration ``outer`` (1-based) begins or resumes."""

    def weights(self) -> np.ndarray:
        """The model's weights, shape (n_problems, n_features + 1); last column: bias feature."""
        raise NotImplementedError

    def dual_objectives(self) -> np.ndarray | None:
        """Dual objective of each problem (exact for the current state), or None."""
        return None

    def support_vectors(self) -> int:
        """Rows with a nonzero dual variable in any problem (0 for primal solvers)."""
        return 0

    def state(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.state_names}

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        for name in self.state_names:
            current = getattr(self, name)
            if current.shape != arrays[name].shape:
                raise ValueError(f"state {name!r} has shape {arrays[name].shape}, expected {current.shape}")
            current[...] = arrays[name]
