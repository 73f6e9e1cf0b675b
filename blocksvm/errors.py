"""Errors a user can meet. Each one is a single clear sentence: the CLI prints it without a traceback.

Every error derives from :class:`BlocksvmError`; code that catches it may show ``str(err)`` as is.
"""

from __future__ import annotations

import os
from pathlib import Path


class BlocksvmError(Exception):
    """Base class of every error blocksvm reports to a user."""


class InputFormatError(BlocksvmError, ValueError):
    """A LIBSVM/svmlight text file is malformed at a given line.

    Parameters
    ----------
    path : str
        The file being read.
    line : int
        1-based physical line number in the (decompressed) file; 0 for the file as a whole.
    reason : str
        What is wrong, e.g. ``"feature index 3 is not greater than the previous index 7"``.
    text : str, optional
        The offending line, shown shortened.
    """

    def __init__(self, path: str, line: int, reason: str, text: str | None = None):
        self.path, self.line, self.reason, self.text = str(path), int(line), reason, text
        message = f"{self.path}:{self.line}: {reason}" if self.line else f"{self.path}: {reason}"
        if text:
            shown = _printable(text)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            message += f"\n    {shown}"
        super().__init__(message)

    def hinted(self, hint: str) -> InputFormatError:
        """The same error, ``hint`` (what to do) added to its reason."""
        return InputFormatError(self.path, self.line, f"{self.reason} ({hint})", self.text)


def _printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x00``), so binary input cannot garble a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class StoreError(BlocksvmError):
    """A block store is missing, incomplete, of another format version or corrupted."""


class StoreReplacedError(StoreError):
    """A store was replaced (converted again, copied over) while a run read it: its blocks are of two data sets."""


class InUseError(BlocksvmError):
    """A file or store that this command would write or read is being written or read by another run."""


class NegativeGapError(BlocksvmError):
    """The dual objective exceeds the primal, which no single data set allows: the data or the state changed."""


class ModelError(BlocksvmError):
    """A model file is missing, corrupted, or does not fit the data it is applied to."""


class ParameterError(BlocksvmError, ValueError):
    """A parameter value is out of its range or conflicts with another one."""


class CheckpointError(BlocksvmError):
    """A checkpoint is corrupted, locked, or was made for another store or other parameters."""


def check_writable(path: str | os.PathLike, what: str, error: type[BlocksvmError] = BlocksvmError) -> None:
    """Raise ``error`` unless a file can be created at ``path``, before any work is spent on it.

    ``what`` names the file in the message (``"the model"``). The folder must exist and be
    writable (``os.access`` also says no on a read-only file system, even to root), and ``path``
    must not be a directory.
    """
    path = Path(path)
    folder = path.parent
    if path.is_dir():
        raise error(f"cannot write {what} {path}: it is a directory")
    if not folder.is_dir():
        raise error(f"cannot write {what} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise error(
            f"cannot write {what} {path}: folder {folder} is not writable "
            "(permission denied or a read-only file system)"
        )
