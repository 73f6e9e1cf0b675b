"""Errors a user can meet. Each one is a single clear sentence: the CLI prints it without a traceback.

Every error derives from :class:`BlocksvmError`; code that catches it may show ``str(err)`` as is.
"""

from __future__ import annotations


class BlocksvmError(Exception):
    """Base class of every error blocksvm reports to a user."""


class InputFormatError(BlocksvmError, ValueError):
    """A LIBSVM/svmlight text file is malformed at a given line.

    Parameters
    ----------
    path : str
        The file being read.
    line : int
        1-based physical line number in the (decompressed) file.
    reason : str
        What is wrong, e.g. ``"feature index 3 is not greater than the previous index 7"``.
    text : str, optional
        The offending line, shown shortened.
    """

    def __init__(self, path: str, line: int, reason: str, text: str | None = None):
        self.path, self.line, self.reason = str(path), int(line), reason
        message = f"{self.path}:{self.line}: {reason}"
        if text:
            shown = text if len(text) <= 80 else text[:77] + "..."
            message += f"\n    {shown}"
        super().__init__(message)


class StoreError(BlocksvmError):
    """A block store is missing, incomplete, of another format version or corrupted."""


class ModelError(BlocksvmError):
    """A model file is missing, corrupted, or does not fit the data it is applied to."""


class ParameterError(BlocksvmError, ValueError):
    """A parameter value is out of its range or conflicts with another one."""


class CheckpointError(BlocksvmError):
    """A checkpoint is corrupted, locked, or was made for another store or other parameters."""
