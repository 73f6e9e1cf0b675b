"""Ctrl-C that never lands inside numba's glue code.

Python runs a SIGINT handler in the main thread at the next bytecode boundary. While a compiled
function returns, numba runs Python helpers (``_numba_unpickle`` when it boxes a result); a
KeyboardInterrupt raised there is mishandled: the call fails with ``SystemError: CPUDispatcher(...)
returned a result with an exception set``, or returns a tuple holding NULL and the interrupt is lost.

:func:`interrupt` is what a handler calls instead of ``raise KeyboardInterrupt``: outside numba it
raises at once; inside numba (a numba frame on the stack) it raises at the first function call or
return once the stack is clear of numba again, through a one-shot profile hook on the main thread.
:func:`sigint_held` holds Ctrl-C over a few lines that must not be cut in two (starting a thread).

A run that stops at its next block boundary on a signal (:func:`blocksvm.train.signals.deferred_signals`) also says
so here (:func:`request_stop`), so that code waiting on another thread, a block being read, gives up its wait
(:class:`StoppedWhileWaiting`) instead of waiting for a thread that may never come back.
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from types import FrameType


class StoppedWhileWaiting(Exception):
    """Raised in a thread waiting for another (a block's read) when a signal asked the run to stop: the run ends
    without what it waited for. ``signal_name``: the signal's (``"SIGTERM"``)."""

    def __init__(self, signal_name: str, waiting_for: str = ""):
        super().__init__(f"stopped by {signal_name}" + (f" while waiting for {waiting_for}" if waiting_for else ""))
        self.signal_name = signal_name


_stop_requested: str | None = None


def request_stop(signal_name: str | None) -> str | None:
    """Record that a signal asked the run to stop (None: no request); return the request this one replaces."""
    global _stop_requested
    previous, _stop_requested = _stop_requested, signal_name
    return previous


def stop_requested() -> str | None:
    """The signal that asked the run to stop (``"SIGTERM"``), or None."""
    return _stop_requested


def inside_numba(frame: FrameType | None) -> bool:
    """True if ``frame`` or one of its callers is numba's code (then numba's C code may be between them)."""
    numba = sys.modules.get("numba")
    if numba is None or not getattr(numba, "__file__", None):
        return False
    folder = str(Path(numba.__file__).parent)
    while frame is not None:
        if frame.f_code.co_filename.startswith(folder):
            return True
        frame = frame.f_back
    return False


def interrupt(frame: FrameType | None) -> None:
    """Raise KeyboardInterrupt in ``frame`` (the frame a signal handler received), or as soon as the main
    thread has left numba if ``frame`` is inside it."""
    if not inside_numba(frame):
        raise KeyboardInterrupt
    previous = sys.getprofile()

    def deliver(frame: FrameType, event: str, arg) -> None:
        if not inside_numba(frame):
            sys.setprofile(previous)
            raise KeyboardInterrupt

    sys.setprofile(deliver)


def on_sigint(signum: int, frame: FrameType | None) -> None:
    """A SIGINT handler: Python's default (KeyboardInterrupt), kept out of numba's glue code."""
    interrupt(frame)


@contextmanager
def sigint_handled():
    """Install :func:`on_sigint` for the block (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def sigint_held():
    """Hold SIGINT for a few lines that must not be cut in two (threads being started and registered), then
    hand it to the handler it was meant for. Main thread only; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held and callable(previous):
            previous(signal.SIGINT, sys._getframe())
        elif held and previous == signal.SIG_DFL:
            raise KeyboardInterrupt
