"""``main``: the parser of every command, the call, and how it ends (exit codes, one-line errors, Ctrl-C)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from importlib import import_module

from blocksvm.cli.options import (
    COMMANDS,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    Parser,
    build,
    output_of,
    values_of,
)
from blocksvm.errors import BlocksvmError

# The modules whose commands ``blocksvm`` offers, in the order ``blocksvm --help`` lists them.
MODULES = ("data", "training", "models", "demo")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``blocksvm`` parser; with ``only``, the options of that command alone (the others keep their name
    and help line), so that ``blocksvm --version`` or ``convert`` does not import what ``train`` needs."""
    from blocksvm._version import __version__

    for module in MODULES:
        import_module(f"blocksvm.cli.{module}")
    parser = Parser(
        prog="blocksvm",
        description="Linear models on data larger than memory: LIBLINEAR's problems trained over compressed HDF5 "
        "blocks, and online learners straight from text.",
    )
    parser.add_argument("--version", action="version", version=f"blocksvm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, spec in COMMANDS.items():
        words = " ".join(f"[{p.metavar or p.name}]" if p.optional else p.metavar or p.name for p in spec.positionals)
        usage = f"blocksvm {name} [options] {words}".rstrip()
        command_parser = sub.add_parser(name, help=spec.help, description=spec.help, usage=usage)
        if only is None or only == name:
            build(command_parser, spec)
    return parser


def _command_of(argv: list[str]) -> str:
    """The command ``argv`` names: its first word that is not an option ("" if none)."""
    return next((token for token in argv if not token.startswith("-")), "")


def _parse(argv: list[str]) -> argparse.Namespace:
    """The arguments of ``argv``; an argument the command does not know is an error that points at the
    command's ``--help``."""
    command = _command_of(argv)
    parser = build_parser(command)
    commands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    folds = _liblinear_folds(argv) if command == "train" else None
    if folds:
        commands.choices[command].error(
            f"-v {folds} is LIBLINEAR's {folds}-fold cross-validation, -v alone --verbose here: cross-validate with "
            f"'blocksvm tune STORE --folds {folds}' (--C-grid C for one C; docs/TUNE.md)"
        )
    if command == "train" and _liblinear_search(argv):
        commands.choices[command].error(
            "argument -C/-c: expected a number (LIBLINEAR's -C without a number, its search of C, is 'blocksvm tune "
            "STORE'; here -C VALUE is the cost, LIBLINEAR's -c)"
        )
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        hint = next((f": {text}" for flag, text in FOREIGN.get(args.command, {}).items() if flag in unknown), "")
        commands.choices[args.command].error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    return args


# Other tools' flags that blocksvm spells otherwise, answered where a command does not know them: Vowpal Wabbit's
# (LIBLINEAR's -v K and -C are answered by train's parser and -C's own parse; -i is --warm-start's other spelling).
_VW = {
    "-b": "Vowpal Wabbit's -b BITS is --hash-bits BITS here (with --format vw)",
    "-f": "Vowpal Wabbit's -f MODEL is the model argument here (blocksvm stream INPUT MODEL)",
    "-d": "Vowpal Wabbit's -d DATA is the input argument here",
    "--passes": "stream makes one pass, as VW's default; several passes over a store: 'blocksvm train' (--max-outer)",
    "--loss_function": "Vowpal Wabbit's --loss_function is --loss here",
}
FOREIGN = {
    "convert": {"-b": _VW["-b"]},
    "stream": _VW,
    "train": {
        "-b": "Vowpal Wabbit's -b BITS is convert's --hash-bits BITS (blocksvm convert FILE STORE --format vw "
        "--hash-bits BITS; then train the store)",
        "--loss_function": _VW["--loss_function"],
    },
}


def _liblinear_folds(argv: list[str]) -> str | None:
    """K of LIBLINEAR's ``-v K`` in ``argv`` (before ``--``), or None."""
    argv = argv[: argv.index("--")] if "--" in argv else argv
    return next((k for flag, k in zip(argv, argv[1:]) if flag == "-v" and k.isdigit()), None)


def _liblinear_search(argv: list[str]) -> bool:
    """LIBLINEAR's ``-C`` without a number (its search of C) in ``argv`` (before ``--``): the last word, or one
    followed by an option (argparse would say only that it expects an argument)."""
    argv = argv[: argv.index("--")] if "--" in argv else argv
    following = (*argv[1:], None)
    return any(flag == "-C" and (after is None or (after.startswith("-") and not _is_number(after)))
               for flag, after in zip(argv, following))  # fmt: skip


def liblinear_weight_options(argv: list[str]) -> list[str]:
    """``argv`` with the flags whose values argparse cannot read joined to them: LIBLINEAR's ``-wLABEL WEIGHT``
    (``-w1 5``, ``-w-1 0.5``) written as ``--class-weight=LABEL=WEIGHT`` (an option whose name carries a value),
    and ``--classes -1,1`` as ``--classes=-1,1`` (a value that looks like an option).

    Only after the ``train``, ``stream`` or ``tune`` command and before ``--``; everything else is returned as it was.
    """
    argv = list(argv)
    command = next((i for i, token in enumerate(argv) if not token.startswith("-")), None)
    if command is None or argv[command] not in ("train", "stream", "tune"):
        return argv
    out = argv[: command + 1]
    i = command + 1
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return out + argv[i:]
        if token.startswith("-w") and _is_number(token[2:]) and i + 1 < len(argv) and _is_number(argv[i + 1]):
            out.append(f"--class-weight={token[2:]}={argv[i + 1]}")  # one token: the label may be negative
            i += 2
            continue
        if token == "--classes" and i + 1 < len(argv):
            out.append(f"--classes={argv[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``blocksvm`` command; returns the exit code.

    Ctrl-C at any moment, imports included, ends with one line and exit code 130 (never inside numba's
    glue code: :mod:`blocksvm._interrupt`).
    """
    from blocksvm._interrupt import sigint_handled

    as_command, argv = argv is None, liblinear_weight_options(sys.argv[1:] if argv is None else argv)
    if as_command:  # a process of its own: its garbage collector is the command's
        # numba, scipy and h5py make some 130,000 objects as they are imported and as numba loads its first kernel,
        # and at 700 new objects a collection the collector went through them all 2-3 times and through the young
        # ones 290 times: 0.1-0.2 s of a command's start
        gc.set_threshold(10_000, 10, 10)
    debug = "--debug" in argv
    with sigint_handled(), _quiet_when_read_no_more():
        try:
            if not argv:
                build_parser("").print_help()
                return EXIT_ERROR
            code = _run(_parse(argv))
        except KeyboardInterrupt:
            if debug:
                raise
            code = _interrupted()
    if as_command:
        gc.freeze()  # the interpreter's last collection would go through every one of them again: 0.25 s at exit
        _exit_past_stalled_reads(code)
    return code


def _exit_past_stalled_reads(code: int) -> None:
    """End the command now if a block's read it gave up on still runs (a stalled disk): the interpreter would wait for
    its thread at exit, for ever. Its outputs are written and closed by now."""
    reader = sys.modules.get("blocksvm.store.readahead")  # (a command that read no store imported none)
    if reader is not None and reader.reads_still_running():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class _QuietWhenClosed:
    """A text stream that goes quiet when its reader has gone (``blocksvm train ... 2>&1 | head -2``): the run
    goes on and writes its model and history as if nothing was printed; its printing is not the run."""

    def __init__(self, stream):
        self.stream = stream
        self.reader_gone = False

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._gone()

    def _gone(self) -> None:
        self.reader_gone = True
        with contextlib.suppress(OSError, ValueError):  # the interpreter's last flush must not meet the pipe
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def _quiet_when_read_no_more():
    """Standard output and error as :class:`_QuietWhenClosed` streams for the block."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _QuietWhenClosed(sys.stdout), _QuietWhenClosed(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _interrupted() -> int:
    print("blocksvm: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _run(args: argparse.Namespace) -> int:
    """Run the command; a user error is one line (the traceback with ``--debug``)."""
    from blocksvm._interrupt import StoppedWhileWaiting

    spec = COMMANDS[args.command]
    try:
        return spec.run(output_of(args), **values_of(args, spec))
    except StoppedWhileWaiting as exc:  # a stop while a block was awaited, outside a pass (an evaluation, a round)
        if args.debug:
            raise
        print(f"blocksvm: {exc}; the last checkpoint is kept", file=sys.stderr)
        return EXIT_TERMINATED if exc.signal_name == "SIGTERM" else EXIT_INTERRUPTED
    except BlocksvmError as exc:
        if args.debug:
            raise
        print(f"blocksvm: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        if args.debug:
            raise
        print(f"blocksvm: error: {_os_error_text(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        if args.debug:
            raise
        print(
            "blocksvm: error: out of memory (smaller blocks need less: convert with a smaller --block-mb)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except Exception as exc:  # a bug: one line, and the traceback with --debug
        if args.debug:
            raise
        if _caused_by_interrupt(exc):  # a C extension that wrapped a KeyboardInterrupt
            return _interrupted()
        print(
            f"blocksvm: error: unexpected {type(exc).__name__}: {exc} (a bug in blocksvm: run again with "
            "--debug and report the traceback)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _caused_by_interrupt(exc: BaseException) -> bool:
    """True if a KeyboardInterrupt is among the causes or contexts of ``exc``."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _os_error_text(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"
