"""CSV text (plain, .gz, .bz2, .xz or standard input) as chunks of dense rows and their labels.

The first line names the columns; the label column is chosen by name (or by its 0-based position). Every
other column is a feature, in order: column ``j`` of the rows is the ``j``-th feature column. Empty cells
are zeros. A cell that is not a number stops the read with one line naming the file, the line and the column.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator

import numpy as np

from blocksvm.errors import InputFormatError
from blocksvm.io.text import open_input

CSV_CHUNK_ROWS = 1 << 14


def iter_csv(
    path: str | os.PathLike, label: str, *, chunk_rows: int = CSV_CHUNK_ROWS
) -> Iterator[tuple[np.ndarray, np.ndarray, int, int]]:
    """``(X, y, first_line, consumed)`` chunks of a CSV file with a header: ``X`` float64 (rows, features),
    ``y`` the label column, ``first_line`` the 1-based line of the chunk's first row, ``consumed`` the bytes
    of the file on disk read so far (for progress)."""
    stream, counter = open_input(path)
    reader = csv.reader(io.TextIOWrapper(stream, encoding="utf-8", newline=""))
    try:
        yield from _chunks(path, reader, label, chunk_rows, counter)
    except UnicodeDecodeError:
        line = reader.line_num + 1
        raise InputFormatError(path, line, "is not UTF-8 text (a binary file, or another encoding?)") from None
    finally:
        stream.close()
        counter.close()


def _chunks(path, reader, label: str, chunk_rows: int, counter):
    """The chunks of ``iter_csv`` from the rows ``reader`` reads."""
    header = next(reader, None)
    if header is None:
        raise InputFormatError(path, 0, "is empty: a CSV file starts with a line of column names")
    column = _label_column(path, header, label)
    rows: list[list[str]] = []
    first = 2
    for line, cells in enumerate(reader, start=2):
        if not cells:
            continue
        if len(cells) != len(header):
            raise InputFormatError(path, line, f"has {len(cells)} cells, the header {len(header)}")
        rows.append(cells)
        if len(rows) == chunk_rows:
            yield (*_numbers(path, first, rows, column, header), first, counter.consumed)
            rows, first = [], line + 1
    if rows:
        yield (*_numbers(path, first, rows, column, header), first, counter.consumed)


def _label_column(path, header: list[str], label: str) -> int:
    names = [name.strip() for name in header]
    if label in names:
        return names.index(label)
    if label.isdigit() and int(label) < len(names):
        return int(label)
    raise InputFormatError(path, 1, f"has no column {label!r} (its columns: {', '.join(names[:10])}); --csv NAME")


def _numbers(path, first: int, rows: list[list[str]], column: int, header: list[str]):
    """The chunk's features and labels as numbers (empty cells: 0); numpy parses the cells, and only a chunk
    that fails is searched cell by cell for the one to name."""
    cells = np.char.strip(np.array(rows, dtype=str))
    cells[cells == ""] = "0"
    try:
        values = cells.astype(np.float64)
    except ValueError:
        for (i, j), text in np.ndenumerate(cells):  # the first cell that is not a number, to name it
            try:
                float(text)
            except ValueError:
                reason = f"column {header[j].strip()!r}: {str(text)!r} is not a number"
                raise InputFormatError(path, first + i, reason) from None
        raise
    return np.delete(values, column, axis=1), values[:, column]
