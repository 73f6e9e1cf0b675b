"""The text a command will read, asked of the system before the command has started.

A command spends its first second importing numba and loading its kernels, on one core, while the disk idles; asked
to read the text ahead (``posix_fadvise``'s WILLNEED: the kernel reads in the background, and the call returns at
once), the disk reads during that second. A cold 250 MB file then parses as if warm for most of its bytes (read
0.21 s after a second's wait against 0.6 s cold, measured). This module imports nothing heavy: the command line
calls it before its own imports (a module of the package, not of blocksvm.io, which imports the converter).
"""

from __future__ import annotations

import os
import stat
import threading

AHEAD_BYTES = 512 << 20
"""At most this much of a file is asked for: what a second of start-up can overlap, and no more of the page cache."""


def read_soon(path: str | os.PathLike) -> threading.Thread | None:
    """Ask the system to read the first :data:`AHEAD_BYTES` of the file ``path`` into the page cache, from a
    background thread; nothing for standard input, what is not a regular file, a file that cannot be opened or a
    system without ``posix_fadvise`` (the reader reports a file it cannot read, as before). Returns the thread
    (None when nothing is asked)."""
    if os.fspath(path) == "-" or not hasattr(os, "posix_fadvise"):
        return None

    def advise() -> None:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return  # a pipe or a device: nothing to read ahead (and opening a FIFO waits for its writer)
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return
        try:
            read_soon_fd(fd)
        finally:
            os.close(fd)

    thread = threading.Thread(target=advise, name="blocksvm-read-soon", daemon=True)
    thread.start()
    return thread


def read_soon_fd(fd: int) -> None:
    """:func:`read_soon` of an open file, in this thread (the call returns at once; a pipe is passed over)."""
    try:
        os.posix_fadvise(fd, 0, AHEAD_BYTES, os.POSIX_FADV_WILLNEED)
    except (OSError, AttributeError):  # a pipe; a system without posix_fadvise
        pass
