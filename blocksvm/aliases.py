"""Other command-line spellings of parameters: an :class:`Alias` (its flag, parser and help), and LIBLINEAR's ``-s``
(a problem's code, as the parameters it sets), which the declarations of :mod:`blocksvm.params` use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Alias:
    """Another command-line spelling of a parameter, with its own parser (LIBLINEAR's ``-s 1|3``). A parser may
    return a dict of parameters instead of the value: the alias sets each (flags given explicitly win).
    ``describe(offered)`` is its help where a command offers the values ``offered`` (LIBLINEAR's codes whose solvers
    run under it)."""

    flag: str
    parse: Callable[[str], Any]
    metavar: str
    describe: Callable[[tuple], str]

    @property
    def dest(self) -> str:
        """Its own argparse attribute (``alias_s`` for ``-s``): apart from the parameter's, so that a flag given
        beside it wins in any order, and a ``-s`` after ``--loss`` cannot drop the penalty or the solver it sets."""
        return "alias_" + self.flag.lstrip("-").replace("-", "_")


def liblinear_problem(text: str) -> dict:
    """LIBLINEAR's ``-s``: the code of a problem blocksvm solves (:data:`blocksvm.penalties.LIBLINEAR_SOLVERS`), as
    the parameters it sets: the loss, the penalty where it is not the default, the solver where LIBLINEAR's is
    not dual CD (Newton for -s 0, 2 and 11, CDN and newGLMNET for -s 5 and 6), and LIBLINEAR's default ``-e`` where
    blocksvm's solver would stop on its own rule (the dual solvers': ``LiblinearSolver.eps``); flags given
    explicitly win."""
    import argparse

    from blocksvm.penalties import LIBLINEAR_CODES

    try:
        row = LIBLINEAR_CODES[int(text)]
    except (ValueError, KeyError):
        known = ", ".join(f"{s.code} ({_problem_words(s)})" for s in LIBLINEAR_CODES.values())
        raise argparse.ArgumentTypeError(f"blocksvm trains LIBLINEAR's -s {known}") from None
    return (
        {"loss": row.loss}
        | ({"penalty": row.penalty} if row.penalty != "l2" else {})
        | ({"solver": row.solver} if row.solver != "dual-cd" else {})
        | ({"eps": row.eps} if row.eps is not None else {})
    )


def _problem_words(row) -> str:
    return row.loss + ("" if row.penalty == "l2" else f", {row.penalty} penalty")


def liblinear_help(offered: tuple[int, ...]) -> str:
    """The ``-s`` alias's help where a command offers the codes ``offered``, from the table: the codes of each
    problem, and the solvers they choose."""
    from blocksvm.penalties import LIBLINEAR_SOLVERS

    problems: dict[str, list[int]] = {}
    solvers: dict[str, list[int]] = {}
    own: list[int] = []  # a loss with a solver of its own (Crammer and Singer's, the one-class SVM's)
    for row in (row for row in LIBLINEAR_SOLVERS if row.code in offered):
        problems.setdefault(_problem_words(row), []).append(row.code)
        if row.solver == row.loss:
            own.append(row.code)
        elif row.solver != "dual-cd":
            solvers.setdefault(row.solver, []).append(row.code)
    codes = sorted(problems.items(), key=lambda item: min(item[1]))
    chosen = "; ".join(f"{listed(map(str, c))} choose --solver {name}" for name, c in solvers.items())
    return (
        "LIBLINEAR's solver code, as the problem it names: "
        + ", ".join(f"{'|'.join(map(str, sorted(c)))} {words}" for words, c in codes)
        + (f"; {chosen}, as LIBLINEAR's primal solvers" if chosen else "")
        + (f"; {listed(map(str, own))} choose their losses' own solvers" if own else "")
        + ". --solver beside it solves its problem by another solver; a --loss or --penalty that would change its "
        "problem is refused (give that problem's code, or the flags alone)"
    )


def listed(words) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    return " and ".join(filter(None, (", ".join(words[:-1]), words[-1])))
