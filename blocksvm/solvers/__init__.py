"""Solvers: compiled kernels that update ``w`` (and ``alpha``) on one in-memory block.

Nothing here opens a file: blocks arrive as arrays from the outer loop (:mod:`blocksvm.train`).
"""

from blocksvm.solvers.base import BlockReport, BlockSolver
from blocksvm.solvers.dual_cd import DualCDSolver
from blocksvm.solvers.pegasos import PegasosSolver
from blocksvm.solvers.problem import Problem

SOLVERS: dict[str, type[BlockSolver]] = {"dual-cd": DualCDSolver, "pegasos": PegasosSolver}

__all__ = ["SOLVERS", "BlockReport", "BlockSolver", "DualCDSolver", "PegasosSolver", "Problem"]
