"""The one list of solvers: one line per driver. The loop, the CLI and the estimator ask it.

A driver is named ``module:Class``; the class's ``name`` is the solver's name (``--solver``).
"""

from __future__ import annotations

from importlib import import_module

from blocksvm.solvers.base import Solver

DRIVERS = (
    "blocksvm.solvers.dual_cd:DualCDSolver",
    "blocksvm.solvers.newton:NewtonSolver",
    "blocksvm.solvers.owlqn:OWLQNSolver",
    "blocksvm.solvers.cdn:CDNSolver",
    "blocksvm.solvers.glmnet:GLMNETSolver",
    "blocksvm.solvers.pegasos:PegasosSolver",
    "blocksvm.solvers.perceptron:PerceptronSolver",
    "blocksvm.solvers.passive_aggressive:PassiveAggressiveSolver",
    "blocksvm.solvers.passive_aggressive:PA1Solver",
    "blocksvm.solvers.passive_aggressive:PA2Solver",
    "blocksvm.solvers.confidence_weighted:ConfidenceWeightedSolver",
    "blocksvm.solvers.confidence_weighted:AROWSolver",
    "blocksvm.solvers.ogd:OGDSolver",
    "blocksvm.solvers.ftrl:FTRLSolver",
    "blocksvm.solvers.fobos:FOBOSSolver",
    "blocksvm.solvers.scw:SCW1Solver",
    "blocksvm.solvers.scw:SCW2Solver",
    "blocksvm.solvers.crammer_singer:CrammerSingerSolver",
    "blocksvm.solvers.one_class:OneClassSolver",
)


def driver(path: str) -> type[Solver]:
    """The class a ``module:Class`` path names (a registry line, or a solver's ``coordinator``)."""
    module, _, name = path.partition(":")
    return getattr(import_module(module), name)


SOLVERS: dict[str, type[Solver]] = {each.name: each for each in map(driver, DRIVERS)}
