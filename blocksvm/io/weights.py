"""Instance weights beside the rows: their check, and a weights file read alongside a LIBSVM file.

A weights file holds one weight a line for the data file's rows in order, as the "weights" fork of LIBLINEAR
reads its ``-W FILE`` (the ``k``-th weight belongs to the ``k``-th row; blank lines are not weights). It is read in
chunks of lines, as the data file is, and its weights are handed to each parsed chunk of rows: memory holds one
chunk of each, never the file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from blocksvm.errors import InputFormatError
from blocksvm.io.text import CHUNK_BYTES, ParsedChunk, iter_line_chunks, open_input


def check_weights(weights: np.ndarray, lines: np.ndarray, path: str) -> None:
    """Refuse the first weight that is negative, NaN or infinite, naming ``path`` and its line in ``lines``.

    Zero is allowed: the row is then ignored by training (its cost is 0).
    """
    bad = ~np.isfinite(weights) | (weights < 0)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    w = float(weights[i])
    reason = (
        f"weight {w!r} is not a finite number"
        if not np.isfinite(w)
        else f"weight {w:g} is negative: instance weights must be >= 0"
    )
    raise InputFormatError(path, int(lines[i]), reason)


def iter_weight_file(
    path: str | os.PathLike, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The weights of a weights file, a chunk of lines at a time: ``(weights, lines)`` (float64, and each weight's
    1-based line), every weight checked by :func:`check_weights`. Plain, .gz, .bz2 or .xz, as a data file."""
    path = os.fspath(path)
    stream, counter = open_input(path)
    try:
        for text, first_line, _ in iter_line_chunks(stream, chunk_bytes):
            tokens = bytes(text).split(b"\n")
            if tokens and tokens[-1] == b"":
                tokens.pop()  # the piece's final newline
            stripped = [t.strip() for t in tokens]
            kept = np.flatnonzero([len(t) > 0 for t in stripped])
            lines = first_line + kept.astype(np.int64)
            try:
                weights = np.array([stripped[i] for i in kept], dtype=np.float64)
            except ValueError:
                raise _not_a_number(path, stripped, kept, lines) from None
            check_weights(weights, lines, path)
            yield weights, lines
    finally:
        stream.close()
        counter.close()


def _not_a_number(path: str, stripped: list[bytes], kept: np.ndarray, lines: np.ndarray) -> InputFormatError:
    """The first line of a piece that is not one number (the error path only)."""
    for i, line in zip(kept, lines):
        try:
            float(stripped[i])
        except ValueError:
            text = stripped[i].decode("utf-8", "replace")
            return InputFormatError(path, int(line), f"{text!r} is not a number: a weights file holds one a line")
    return InputFormatError(path, 0, "is not a weights file (one number a line)")


def with_weights(
    chunks: Iterator[ParsedChunk], weights_path: str | os.PathLike, data_path: str | os.PathLike
) -> Iterator[ParsedChunk]:
    """``chunks`` of ``data_path``, each given the next weights of ``weights_path``, one a row in order.

    Raises
    ------
    InputFormatError
        The weights file has fewer weights than the data file has rows, or more (naming the weights file), or a
        weight that is not a number, negative or not finite (naming its line).
    """
    weights_path, data_path = os.fspath(weights_path), os.fspath(data_path)
    source = iter_weight_file(weights_path)
    pending_w, pending_lines = np.zeros(0), np.zeros(0, np.int64)
    rows = 0
    try:
        for chunk in chunks:
            while len(pending_w) < chunk.n_rows:
                piece = next(source, None)
                if piece is None:
                    line = int(chunk.lines[len(pending_w)])
                    raise InputFormatError(
                        weights_path,
                        0,
                        f"has {rows + len(pending_w):,} weights, fewer than the rows of {data_path} (the row of its "
                        f"line {line:,} has none): one weight a row",
                    )
                pending_w = np.concatenate([pending_w, piece[0]])
                pending_lines = np.concatenate([pending_lines, piece[1]])
            chunk.weights = pending_w[: chunk.n_rows]
            pending_w, pending_lines = pending_w[chunk.n_rows :], pending_lines[chunk.n_rows :]
            rows += chunk.n_rows
            yield chunk
        for _, lines in source:  # what is left, if any (blank lines are not weights)
            if len(pending_lines):
                break
            pending_lines = lines
        if len(pending_lines):
            raise InputFormatError(
                weights_path,
                int(pending_lines[0]),
                f"one weight too many: {data_path} has {rows:,} rows (one weight a row)",
            )
    finally:
        source.close()
