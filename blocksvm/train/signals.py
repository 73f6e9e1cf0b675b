"""Turn SIGINT/SIGTERM into a request to stop at the next block boundary.

A kernel updates ``w`` and ``alpha`` together; an exception raised between two such updates
would leave a state that no checkpoint should hold. So while training, the first Ctrl-C or
SIGTERM only sets a flag that the outer loop reads after each block; a second Ctrl-C interrupts
at once (once out of numba's glue code: :func:`blocksvm._interrupt.interrupt`). The request is also recorded for
the threads' waits (:func:`blocksvm._interrupt.request_stop`): a block that does not come is not waited for.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from blocksvm._interrupt import interrupt, request_stop


class StopRequest:
    """Set by a signal handler, read by the outer loop."""

    def __init__(self):
        self.signal_name: str | None = None

    def __bool__(self) -> bool:
        return self.signal_name is not None


@contextmanager
def deferred_signals():
    """Yield a :class:`StopRequest` that SIGINT and SIGTERM set while the block runs."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request  # signal handlers can only be installed from the main thread
        return

    def handle(signum, frame):
        if request and signum == signal.SIGINT:
            interrupt(frame)  # a second Ctrl-C: the user insists
        request.signal_name = signal.Signals(signum).name
        request_stop(request.signal_name)

    previous = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    before = request_stop(None)
    try:
        yield request
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        request_stop(before)
