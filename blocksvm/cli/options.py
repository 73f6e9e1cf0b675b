"""How a command's arguments reach it: declarations in, keyword arguments out.

A command is a function registered with :func:`command`: its positional arguments (:class:`Positional`) and its
options, :class:`~blocksvm.params.Param` declarations (the training parameters and run options of
:mod:`blocksvm.params`, or a command's own, :func:`option`). From them come its parser, its ``--help`` (grouped by
each option's ``group``, the groups in :data:`~blocksvm.params.GROUPS`' order) and the call: the function receives
an :class:`Output` and, as keyword arguments, its positionals and the options given on the command line, each
under its Python name. An option not given is not passed (the function's own default, or the declared one, holds).
Options a command parses but does not read (``hidden``) are not shown: they reach the command, whose one check
refuses them in one line saying why.

Adding a command: a function in a module of this package, its ``@command(...)`` line (name, help, positionals,
options), and the module's name in :data:`blocksvm.cli.entry.MODULES`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the parameters import numpy: not for --version, not before Ctrl-C is handled)
    from blocksvm.params import Param

EXIT_OK, EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


@dataclass(frozen=True)
class Positional:
    """A positional argument: its Python name, help and, if it may be left out, ``optional``."""

    name: str
    help: str
    metavar: str | None = None
    optional: bool = False


def _none() -> tuple:
    return ()


@dataclass(frozen=True)
class Command:
    """A sub-command: ``run(out, **values)`` and what it reads.

    ``options`` and ``hidden`` are functions (called only when this command's parser is built, so that
    ``blocksvm convert`` does not import what ``train`` needs); ``offers`` gives, for an option's alias (``-s``), the
    values the command offers (its help lists those; none: the alias is hidden); ``json`` is the help of ``--json``
    for a command that prints JSON.
    """

    name: str
    help: str
    run: Callable[..., int]
    positionals: tuple[Positional, ...] = ()
    options: Callable[[], tuple[Param, ...]] = _none
    hidden: Callable[[], tuple[Param, ...]] = _none
    offers: Callable[[], dict[str, tuple]] = dict
    json: str | None = None


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, **declared) -> Callable:
    """Register the decorated function as the command ``name`` (see :class:`Command` for ``declared``)."""

    def register(run: Callable[..., int]) -> Callable[..., int]:
        COMMANDS[name] = Command(name, help, run, **declared)
        return run

    return register


def option(name: str, help: str, parse: Callable = str, **more) -> Param:
    """An option of a command that is not a training parameter: argparse parses it, the function it reaches checks
    its value. ``default`` is shown in the help only; the function's own default applies when it is not given."""
    from blocksvm.params import Param

    default = more.pop("default", None)
    return Param(name, default, help, lambda value: True, "", parse=parse, commands=(), **more)


@dataclass
class Output:
    """What every command is told about its output: ``-q``, ``-v``, ``--debug`` and ``--json``."""

    quiet: bool = False
    verbose: bool = False
    debug: bool = False
    json: bool = False

    @property
    def progress(self) -> bool | None:
        """Progress bars: when standard error is a terminal (None), never with ``--quiet``."""
        return False if self.quiet else None

    @property
    def verbosity(self) -> int:
        return 0 if self.quiet else 2 if self.verbose else 1

    def say(self, text: str) -> None:
        """A line for the person at the terminal (standard error), unless ``--quiet``."""
        if not self.quiet:
            print(text, file=sys.stderr)

    def tell(self, text: str) -> None:
        """A line of the command's output (standard output), unless ``--quiet``."""
        if not self.quiet:
            print(text)

    @contextlib.contextmanager
    def warnings_said(self):
        """Inside the block, a warning about the input (:class:`~blocksvm.errors.InputWarning`: features or labels
        the model does not have) is one ``warning:`` line when it is raised; others show as Python shows them."""
        from blocksvm.errors import InputWarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, InputWarning):
                self.say(f"warning: {message}")
            else:
                python_shows(message, category, filename, lineno, file, line)

        with warnings.catch_warnings():
            python_shows = warnings.showwarning
            warnings.simplefilter("always", InputWarning)
            warnings.showwarning = show
            yield

    def report(self, summary) -> int:
        """A command's summary: JSON with ``--json``, text unless ``--quiet``."""
        if self.json:
            print_json(summary.to_dict())
        elif not self.quiet:
            print(summary)
        return EXIT_OK


def print_json(obj) -> None:
    print(json.dumps(obj, indent=1, default=str))


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors in the one-line form of every other error."""

    def error(self, message: str):
        self.exit(EXIT_ERROR, f"blocksvm: error: {message} (see '{self.prog} --help')\n")


def build(parser: argparse.ArgumentParser, spec: Command) -> None:
    """``spec``'s positionals, then its options in their groups, then the output flags."""
    from blocksvm.params import GROUPS

    for p in spec.positionals:
        parser.add_argument(p.name, help=p.help, metavar=p.metavar, nargs="?" if p.optional else None)
    options, offers = spec.options(), spec.offers()
    titles = {group: group for group in GROUPS} | {"": f"{spec.name} options"}  # (argparse's own: "options", -h)
    groups = {name: parser.add_argument_group(titles[name]) for name in ("", *GROUPS) if _in(options, name)}
    for param in options:
        add(groups.get(param.group) or groups[""], param, spec.name, offers)
    for param in spec.hidden():
        add(parser, param, spec.name, offers, shown=False)
    output = groups.get("output") or parser.add_argument_group("output")
    output.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    output.add_argument("-v", "--verbose", action="store_true", help="print more detail")
    output.add_argument("--debug", action="store_true", help="show the traceback of an error")
    if spec.json:
        output.add_argument("--json", action="store_true", help=spec.json)


def _in(options: tuple[Param, ...], group: str) -> bool:
    from blocksvm.params import GROUPS

    return any((p.group if p.group in GROUPS else "") == group for p in options)


def add(parser, param: Param, command: str, offers: dict[str, tuple], shown: bool = True) -> None:
    """``param``'s flags (and its aliases') in ``parser``; not given, a flag leaves no attribute. Choices are
    checked with the other ranges where the value is read, not by argparse."""
    text = param.help_for(command).replace("%", "%%") if shown else argparse.SUPPRESS
    common = {"dest": param.name, "default": argparse.SUPPRESS, "help": text}
    if param.parse is bool:
        parser.add_argument(*param.all_flags, action=argparse.BooleanOptionalAction, **common)
    else:
        action = "append" if param.many else "store"
        metavar = param.metavar or ("{" + ",".join(param.choices) + "}" if param.choices else None)
        parser.add_argument(*param.all_flags, type=param.parse, action=action, metavar=metavar, **common)
    for alias in param.aliases:
        offered = offers.get(alias.flag, ())
        parser.add_argument(
            alias.flag,
            dest=alias.dest,
            type=alias.parse,
            metavar=alias.metavar,
            default=argparse.SUPPRESS,
            help=alias.describe(offered) if shown and offered else argparse.SUPPRESS,
        )


def values_of(args: argparse.Namespace, spec: Command) -> dict:
    """The keyword arguments of ``spec.run``: its positionals, and the options given (a repeated flag's values
    folded; an alias's value under its own name, ``alias_s``)."""
    values = {p.name: getattr(args, p.name) for p in spec.positionals}
    for param in (*spec.options(), *spec.hidden()):
        if hasattr(args, param.name):
            value = getattr(args, param.name)
            values[param.name] = param.many(value) if param.many else value
        for alias in param.aliases:
            if hasattr(args, alias.dest):
                values[alias.dest] = getattr(args, alias.dest)
    return values


def output_of(args: argparse.Namespace) -> Output:
    return Output(args.quiet, args.verbose, args.debug, getattr(args, "json", False))
