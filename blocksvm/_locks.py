"""File locks between processes: ``flock`` on a lock file, exclusive for a writer, shared for readers.

A run that writes a file (a model, a history, a checkpoint, a store being converted over) holds an exclusive
lock; a run that reads one (a store it trains on, a model it warm-starts from) a shared one. Both are taken
without waiting (``LOCK_NB``): a lock held elsewhere is refused in one line by the caller, never waited for.

Why ``flock``: the operating system releases it when its process dies, even by SIGKILL, so a lock file left
behind by a dead process locks nothing: the next run takes it (a stale lock is recognized by nobody holding
it, not by a process id that may have been reused). A holder that ends removes the file when it is the last
one holding it; it first makes sure, by a non-blocking exclusive lock, that nobody else holds it, and a run that
opened the file just before it was removed notices that the path names another file (or none) and opens the
path again, so two runs never hold two different files of one path.

Where the lock file lives: :func:`lock_path` (``PATH.lock`` beside a file, ``.lock`` inside a directory: a
store swapped for a new one takes its lock file with it, and the new store starts unlocked).
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from pathlib import Path

# The reentrant exclusive locks this process holds, by lock file: a shared lock on one of them is granted at once
# (a run that writes MODEL and warm-starts from it, say), and a reentrant exclusive one counts up. An flock taken on
# a second open file would refuse the process itself.
_HELD: dict[str, FileLock] = {}

# Errors that mean the lock file cannot be created where it goes (a read-only store, a folder of someone else's):
# an optional lock is then skipped, since the process that could overwrite the file could also ignore the lock.
_CANNOT_CREATE = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR)
_NO_FLOCK = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL)


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of ``path``: ``.lock`` inside a directory (a store), ``PATH.lock`` beside a file."""
    path = Path(path)
    return path / ".lock" if path.is_dir() else path.with_name(path.name + ".lock")


class FileLock:
    """An ``flock`` on the file ``path``, exclusive or ``shared``, taken by :meth:`try_acquire`.

    Parameters
    ----------
    path : path
        The lock file itself (see :func:`lock_path`).
    shared : bool, default=False
        A reader's lock: any number of them at once, none while an exclusive one is held.
    holder : str, default=""
        What an exclusive holder writes into the file (``"convert pid 123"``), for the message of a run that
        it refuses. Shared holders write nothing.
    optional : bool, default=False
        When the lock file cannot be created (a read-only folder), go on without a lock instead of raising.
    reentrant : bool, default=False
        An exclusive lock this process already holds on ``path`` through another reentrant FileLock is granted
        (a command and the function it calls both lock the model they write), and so is a shared one (a run
        that warm-starts from the model it writes). Otherwise a second lock is refused, even in one process.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        shared: bool = False,
        holder: str = "",
        optional: bool = False,
        reentrant: bool = False,
    ):
        self.path = Path(path)
        self.shared, self.holder, self.optional, self.reentrant = shared, holder, optional, reentrant
        self.file = None
        self._borrowed: FileLock | None = None  # the exclusive lock of this process that grants this one

    def _open(self):
        return open(self.path, "a+")  # noqa: SIM115 - held until release()

    def try_acquire(self) -> str | None:
        """Take the lock without waiting; None when taken, else the holder's text ("" when it wrote none)."""
        held = _HELD.get(_key(self.path))
        if held is not None and (self.shared or self.reentrant):
            self._borrowed = held
            held.count += 1
            return None
        while True:
            try:
                file = self._open()
            except OSError as exc:
                if self.optional and exc.errno in _CANNOT_CREATE:
                    return None  # no lock: see _CANNOT_CREATE
                raise
            try:
                fcntl.flock(file.fileno(), (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            except BlockingIOError:
                file.seek(0)
                holder = file.read().strip()
                file.close()
                return holder
            except OSError as exc:
                empty = os.fstat(file.fileno()).st_size == 0  # nobody can hold a lock there: no holder wrote in it
                file.close()
                if self.optional and exc.errno in _NO_FLOCK:
                    if empty:
                        self.path.unlink(missing_ok=True)
                    return None  # a file system without flock (some network ones): no lock, as where none can be made
                raise
            if _same_file(self.path, file):
                break
            file.close()  # its holder removed it once we had opened it: lock the file now at the path
        self.file = file
        if not self.shared:
            try:  # unbuffered: nothing is left to fail when the file closes
                os.ftruncate(file.fileno(), 0)
                os.pwrite(file.fileno(), self.holder.encode(), 0)
            except OSError:
                pass  # the text only names the holder in a refusal: a full disk is the run's to report, not the lock's
            self.count = 1
            if self.reentrant:
                _HELD[_key(self.path)] = self
        return None

    def acquire_or_raise(self, refusal: Callable[[str], Exception]) -> FileLock:
        """Take the lock without waiting, or raise ``refusal(holder)`` (the holder's text, "" when it wrote none)
        where another holds it; returns the lock."""
        holder = self.try_acquire()
        if holder is not None:
            raise refusal(holder)
        return self

    def release(self) -> None:
        """Let the lock go; remove its file when no one else holds it."""
        if self._borrowed is not None:
            self._borrowed._release_one()
            self._borrowed = None
            return
        if self.file is None:
            return
        if not self.shared:
            self._release_one()
            return
        self._let_go()

    def _release_one(self) -> None:
        self.count -= 1
        if self.count == 0:
            _HELD.pop(_key(self.path), None)
            self._let_go()

    def _let_go(self) -> None:
        file, self.file = self.file, None
        try:
            alone = True
            if self.shared:  # the last reader out removes the file; readers still in keep theirs
                try:
                    fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    alone = False
            if alone and _same_file(self.path, file):  # a store swapped under this lock has another file there
                self.path.unlink(missing_ok=True)  # still locked: see the module's note
        finally:
            fcntl.flock(file.fileno(), fcntl.LOCK_UN)
            file.close()


def _key(path: Path) -> str:
    return os.path.realpath(path)


def _same_file(path: Path, file) -> bool:
    """Whether ``path`` still names the open ``file``."""
    try:
        st, ours = os.stat(path), os.fstat(file.fileno())
    except FileNotFoundError:
        return False
    return (st.st_dev, st.st_ino) == (ours.st_dev, ours.st_ino)
