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


class InputWarning(UserWarning):
    """The input is not what the model was (or is being) trained on: ``predict`` and ``train --validation`` say it in
    one line, and ``--strict`` (``strict=True``) makes it an error."""


class FeatureSpaceWarning(InputWarning):
    """The input has features outside the model's feature space: they were ignored."""


class LabelWarning(InputWarning):
    """The input has labels that are not among a classifier's classes: their rows count as predicted wrong."""


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


def refuse_writing_over(outputs: dict[str, object], inputs: dict[str, object]) -> None:
    """Raise :class:`ParameterError` if an output of a command is one of its inputs, lies inside an input store, or
    holds an input inside it (a store written over a folder of its input), or if two outputs are one file: before
    anything is read or written.

    ``outputs`` and ``inputs`` name each path (``{"the model": path}``; None and ``-``, standard input, skipped). Paths
    are compared resolved, links followed, and by identity (device and inode) where both exist: a hard link or a
    symbolic link to an input is that input.
    """
    outs = [(what, Path(path)) for what, path in outputs.items() if path is not None and str(path) != "-"]
    ins = [(what, Path(path)) for what, path in inputs.items() if path is not None and str(path) != "-"]
    for k, (what, out) in enumerate(outs):
        for source, given in ins:
            relation = _overlap(out, given)
            if relation:
                raise ParameterError(
                    f"{what} {out} {relation} {source} {given}: no command writes over its input; "
                    f"give {what} another path"
                )
        for other, earlier in outs[:k]:
            if _overlap(out, earlier) == "is":
                raise ParameterError(f"{other} and {what} are both {out}: give each its own path")


def _overlap(out: Path, given: Path) -> str:
    """How writing ``out`` would touch ``given``: "is" (the same file), "is inside" (a file of the store ``given``),
    "holds" (``out`` a folder that holds ``given``), or "" (it would not)."""
    real_out, real_given = os.path.realpath(out), os.path.realpath(given)
    if real_out == real_given:
        return "is"
    try:
        if os.path.samefile(out, given):
            return "is"
    except OSError:  # one of them does not exist (yet)
        pass
    if os.path.isdir(real_given) and real_out.startswith(real_given.rstrip(os.sep) + os.sep):
        return "is inside"
    if os.path.isdir(real_out) and real_given.startswith(real_out.rstrip(os.sep) + os.sep):
        return "holds"
    return ""
