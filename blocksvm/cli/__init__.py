"""The ``blocksvm`` command line: a thin face over the Python API.

Every user-facing failure is a :class:`~blocksvm.errors.BlocksvmError` printed as one line
(``blocksvm: error: ...``) with exit code 2; ``--debug`` shows the traceback instead.
Exit codes: 0 success, 1 a check failed (``info --verify``), 2 an error, 130 interrupted by
Ctrl-C (SIGINT), 143 stopped by SIGTERM (training saves its checkpoint first).

The commands live in modules by what they work on (:mod:`.data`: convert, info, generate; :mod:`.training`:
train, tune, stream; :mod:`.models`: predict, export, plot; :mod:`.demo`: demo, warmup), each a function that
receives its arguments as keyword arguments; :mod:`.options` makes the parsers and the calls from the declarations
(:mod:`blocksvm.params`), and :mod:`.entry` runs a command and ends it.
"""

from blocksvm.cli.entry import build_parser, liblinear_weight_options, main
from blocksvm.cli.options import (
    EXIT_CHECK_FAILED,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
)

__all__ = [
    "EXIT_CHECK_FAILED",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TERMINATED",
    "build_parser",
    "liblinear_weight_options",
    "main",
]
