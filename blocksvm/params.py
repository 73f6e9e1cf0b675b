"""Every training parameter, declared once: name, default, range, help, command-line flags.

:class:`Param` is the declaration. The parameters every run has are :data:`COMMON`; each solver
declares its own in its driver (``Solver.params``). From these declarations come
:class:`blocksvm.train.TrainParams` and its checks, the flags of ``blocksvm train``, the
parameters of :class:`blocksvm.BlockSVC` and the table in docs/PARAMETERS.md
(:func:`markdown_table`); tests/test_params.py fails if any of them disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def positive(x) -> bool:
    return _is_number(x) and x > 0 and math.isfinite(x)


def non_negative(x) -> bool:
    return _is_number(x) and x >= 0


def count(x) -> bool:
    """An integer >= 1."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def natural(x) -> bool:
    """An integer >= 0."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def finite(x) -> bool:
    return _is_number(x) and math.isfinite(x)


def boolean(x) -> bool:
    return isinstance(x, bool)


@dataclass(frozen=True)
class Alias:
    """Another command-line spelling of a parameter, with its own parser (LIBLINEAR's ``-s 1|3``)."""

    flag: str
    parse: Callable[[str], Any]
    metavar: str
    help: str


@dataclass(frozen=True)
class Param:
    """One training parameter.

    Attributes
    ----------
    name : str
        Python name (``train(..., name=...)``, ``BlockSVC(name=...)``); the flag is ``--name``
        with dashes.
    default : object
    help : str
        One or two sentences: what it does and when to change it.
    check : callable
        ``check(value) -> bool``: is the value in range.
    expects : str
        The range in words, for the error message (``"a positive finite number"``).
    choices : tuple, optional
        The allowed values, when they are a list.
    none_ok : bool
        None is allowed (it disables what the parameter does).
    parse : callable
        Parses the command-line text (``float``, ``int``, ``str``).
    flags : tuple of str
        The command-line spellings, first the main one (default: ``--name`` with dashes).
    aliases : tuple of Alias
        Spellings with their own parser.
    metavar : str, optional
    safe_to_change : bool
        A resumed run may change it: it decides when training stops or what it prints, never
        the path the optimizer takes.
    solvers : tuple of str
        The solvers that read it (empty: every solver).
    cli : bool
        Built into ``blocksvm train``'s flags (False: the command line spells it its own way).
    """

    name: str
    default: Any
    help: str
    check: Callable[[Any], bool]
    expects: str
    choices: tuple | None = None
    none_ok: bool = False
    parse: Callable[[str], Any] = float
    flags: tuple[str, ...] = ()
    aliases: tuple[Alias, ...] = ()
    metavar: str | None = None
    safe_to_change: bool = False
    solvers: tuple[str, ...] = ()
    cli: bool = True

    @property
    def all_flags(self) -> tuple[str, ...]:
        return self.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def range(self) -> str:
        """The allowed values in words."""
        return f"one of {', '.join(map(str, self.choices))}" if self.choices else self.expects

    def accepts(self, value) -> bool:
        if value is None:
            return self.none_ok
        if self.choices is not None:
            return value in self.choices
        return self.check(value)

    def add_to(self, parser) -> None:
        """Add this parameter's flags to an ``argparse`` parser."""
        import argparse

        if self.parse is bool:
            parser.add_argument(
                *self.all_flags,
                dest=self.name,
                action=argparse.BooleanOptionalAction,
                default=self.default,
                help=self.cli_help(),
            )
        else:
            parser.add_argument(
                *self.all_flags,
                dest=self.name,
                type=self.parse,
                default=self.default,
                choices=self.choices,
                metavar=self.metavar,
                help=self.cli_help(),
            )
        for alias in self.aliases:
            parser.add_argument(alias.flag, dest=self.name, type=alias.parse, metavar=alias.metavar, help=alias.help)

    def cli_help(self) -> str:
        default = "" if self.default is None else f" (default {self.default})"
        return (self.help + default).replace("%", "%%")


def _liblinear_loss(text: str) -> str:
    """LIBLINEAR's ``-s``: 1 is the squared hinge (L2-loss) SVM, 3 the hinge (L1-loss) one."""
    import argparse

    choices = {"1": "squared-hinge", "3": "hinge"}
    if text not in choices:
        raise argparse.ArgumentTypeError("blocksvm trains LIBLINEAR's -s 1 (squared hinge) and -s 3 (hinge)")
    return choices[text]


# Parameters of every run (a solver's own are declared in its driver).
COMMON: tuple[Param, ...] = (
    Param(
        "C",
        1.0,
        "Cost of a unit of loss (LIBLINEAR's -c); larger C fits the training data closer and takes more passes.",
        positive,
        "a positive finite number",
        flags=("-C", "-c"),
    ),
    Param(
        "loss",
        "squared-hinge",
        "hinge (L1-loss SVM, LIBLINEAR -s 3) or squared-hinge (L2-loss, -s 1); "
        "solvers with a loss of their own ignore it.",
        None,
        "one of hinge, squared-hinge",
        choices=("hinge", "squared-hinge"),
        parse=str,
        aliases=(Alias("-s", _liblinear_loss, "1|3", "LIBLINEAR alias: 1 = squared-hinge, 3 = hinge"),),
    ),
    Param(
        "solver",
        "dual-cd",
        "The learner that solves each block.",
        None,
        "a solver of blocksvm.solvers.registry (blocksvm train --help lists them)",
        parse=str,
    ),
    Param(
        "bias",
        1.0,
        "Value of the constant bias feature appended to every row (LIBLINEAR's -B); <= 0: no bias term.",
        finite,
        "a finite number (<= 0: no bias)",
        flags=("--bias", "-B"),
    ),
    Param(
        "tol",
        1e-3,
        "Stop when the relative duality gap (P - D) / P is at most this (solvers with a dual; "
        "confirmed by an exact evaluation pass); 0 disables the rule.",
        non_negative,
        "a number >= 0",
        safe_to_change=True,
    ),
    Param(
        "eps",
        None,
        "Stop when LIBLINEAR's projected-gradient violation max PG - min PG over a pass is at "
        "most this (LIBLINEAR's -e rule; dual CD); None disables it.",
        positive,
        "a positive number or None",
        none_ok=True,
        flags=("--eps", "-e"),
        safe_to_change=True,
    ),
    Param(
        "max_outer",
        50,
        "Outer iterations (passes over the store) at most.",
        count,
        "an integer >= 1",
        parse=int,
        safe_to_change=True,
    ),
    Param(
        "average",
        False,
        "Average the iterates (Pegasos: block ends from the second pass on; Perceptron: "
        "every step, the averaged Perceptron; ogd: every step, the online-to-batch average).",
        boolean,
        "True or False",
        parse=bool,
        solvers=("pegasos", "perceptron", "ogd"),
    ),
    Param(
        "l1",
        0.0,
        "L1 penalty lambda1 of the sparse learners (> 0: weights exactly zero). ftrl: against the "
        "sum of the losses (McMahan et al.'s lambda1: it grows with the rows, e.g. 10 to 300 for 10^4 to 10^5 "
        "rows); fobos: against the mean loss, each step shrinks by eta_t l1 (e.g. 1e-4 to 1e-2).",
        non_negative,
        "a number >= 0",
        solvers=("ftrl", "fobos"),
    ),
    Param(
        "order",
        "random",
        "Visit blocks and rows in a fresh random order each pass (random), or as stored "
        "(file: with a store converted --no-shuffle, the rows of the text file in order, as online learners "
        "and their textbook results assume).",
        None,
        "one of random, file",
        choices=("random", "file"),
        parse=str,
    ),
    Param(
        "class_weight",
        None,
        "Multiplier of C per class label (LIBLINEAR's -wi), or 'balanced': "
        "n_rows / (n_classes * count) for each class. Command line: -w LABEL=WEIGHT, repeatable.",
        None,
        "a dict, 'balanced' or None",
        none_ok=True,
        cli=False,
    ),
    Param(
        "seed",
        0,
        "Seed of the block order and of the row order within blocks (the estimator's random_state).",
        natural,
        "an integer >= 0",
        parse=int,
    ),
    Param(
        "time_limit",
        None,
        "Seconds of wall-clock time; training stops at the next block boundary after it "
        "(a checkpoint, if any, lets it resume).",
        positive,
        "a positive number of seconds or None",
        none_ok=True,
        metavar="SECONDS",
        safe_to_change=True,
    ),
    Param(
        "eval_every",
        0,
        "Make an exact evaluation pass (objective at a fixed w) every this many outer "
        "iterations; 0: only to confirm the gap rule.",
        natural,
        "an integer >= 0",
        parse=int,
        metavar="K",
        safe_to_change=True,
    ),
    Param(
        "prefetch",
        1,
        "Blocks read ahead by a reader thread (0: read in the training thread).",
        natural,
        "an integer >= 0",
        parse=int,
        safe_to_change=True,
    ),
)


# Training parameters the estimators name as scikit-learn does.
ESTIMATOR_NAMES = {"seed": "random_state", "workers": "n_jobs"}


def markdown_table(params: tuple[Param, ...], estimator_names: dict[str, str]) -> str:
    """The reference table of docs/PARAMETERS.md."""
    lines = [
        "| parameter | `blocksvm train` | `BlockSVC` | default | range | solvers | what it does |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in params:
        flags = (
            ", ".join(f"`{f}`" for f in (*p.all_flags, *(a.flag for a in p.aliases)))
            if p.cli
            else ("`--class-weight`, `-w`" if p.name == "class_weight" else "")
        )
        lines.append(
            f"| `{p.name}` | {flags} | `{estimator_names.get(p.name, p.name)}` | `{p.default!r}` "
            f"| {p.expects} | {', '.join(p.solvers) or 'all'} | {p.help} |"
        )
    return "\n".join(lines) + "\n"
