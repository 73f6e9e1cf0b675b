"""Solvers: drivers and compiled kernels that update ``w`` (and their own state) on one in-memory block.

Nothing here opens a file: blocks arrive as arrays from the outer loop (:mod:`blocksvm.train`).
The contract is :class:`~blocksvm.solvers.base.Solver`; the list of names is
:data:`~blocksvm.solvers.registry.SOLVERS`.
"""

from blocksvm.solvers.base import BlockReport, Solver
from blocksvm.solvers.problem import Problem
from blocksvm.solvers.registry import SOLVERS

__all__ = ["SOLVERS", "BlockReport", "Problem", "Solver"]
