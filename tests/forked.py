"""The command line in a forked child of the test process: a process of its own, so that a hang is a timeout (the
child is killed and the test fails), a signal reaches the child alone, and a stuck thread dies with it; and one that
starts in milliseconds, its modules imported and its kernels compiled by the test process already.

The child runs :func:`blocksvm.cli.main` with the environment given, its standard output and error written to files,
and ends with ``os._exit`` (nothing of pytest's runs in it). A test that calls the command in-process first (any
``main`` call) makes the children's start cheap.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from dataclasses import dataclass

# What a bug prints, never a good error: a traceback, the command line's line for an exception it did not expect
# (blocksvm.cli.entry), a crash. Phrases, not words: a good message may quote a codec's "unexpected end of data".
BUG_SIGNS = ("Traceback", "blocksvm: error: unexpected ", "(a bug in blocksvm", "Fatal Python error", "forked child")
HANG_BOUND = 120.0  # seconds: a command this long on the tests' tiny files hangs (a loaded machine is slow, not this)


@dataclass
class Done:
    code: int  # the exit code; -N when a signal N ended the child
    out: str
    err: str


class Child:
    """A command (``argv``) running in a forked child, or a function of the Python API (``target``); :meth:`wait`
    for its end."""

    def __init__(self, argv, env: dict | None = None, target=None):
        self._files = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        self._status: int | None = None
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            code = 70
            try:
                os.dup2(self._files[0].fileno(), 1)
                os.dup2(self._files[1].fileno(), 2)
                sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)  # noqa: SIM115
                os.environ.update(env or {})
                signal.signal(signal.SIGINT, signal.default_int_handler)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                if target is not None:  # a function of the Python API instead of a command: exit 0 when it returns
                    target()
                    code = 0
                else:
                    from blocksvm.cli import main

                    code = main([str(a) for a in argv])
            except BaseException as exc:  # a bug of the test harness, not of blocksvm: say it on the child's stderr
                print(f"forked child: {type(exc).__name__}: {exc}", file=sys.stderr)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def poll(self) -> int | None:
        """The child's wait status if it has ended, else None."""
        if self._status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._status = status
        return self._status

    def wait(self, timeout: float = HANG_BOUND) -> Done:
        """The child's end; a child still running after ``timeout`` seconds hangs: it is killed and the test fails."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                raise AssertionError(f"the command hung (still running after {timeout:g} s): {self.read()[1]}")
            time.sleep(0.005)
        code = os.waitstatus_to_exitcode(self._status)
        return Done(code, *self.read())

    def read(self) -> tuple[str, str]:
        texts = []
        for f in self._files:
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
        return texts[0], texts[1]


def run(argv, env: dict | None = None, timeout: float = HANG_BOUND) -> Done:
    """The command ``argv`` in a forked child, to its end (or a failure after ``timeout`` seconds)."""
    return Child(argv, env).wait(timeout)
