"""The compiled line loop of every text format: bytes in, CSR rows out, one grammar's row parser at a time.

A text format is a grammar of one line (LIBSVM's in :mod:`._parse_kernels`, VW's in :mod:`._vw_kernels`); what a
chunk of whole lines needs around it is written here once: lines counted, blank lines (and comment lines, where the
format has them) passed over, each row's entries placed in CSR arrays, the first bad line recorded, bad lines skipped
or the parse stopped.

The buffer ends in a newline, which stops every scan, so the loops need no bounds checks. The caller sizes the
arrays from upper bounds (rows <= newlines; entries by the grammar's count). A grammar is two functions
and a value, handed to :func:`parse_lines` by its entry point (``parse_libsvm_lines``, ``parse_vw_lines``: those are
the functions Python calls, and the ones numba caches; :func:`parse_lines` is inlined into each, so that it calls
its grammar's functions directly, as code written for that grammar alone would):

``parse_row(buf, p, row, k, n_slow, grammar, out, slow) -> (code, p, k, n_slow)``
    Parse the line whose first word is at ``p``: its label into ``labels[row]`` (and its weight into
    ``weights[row]``), its entries into ``columns[k:]`` and ``values[k:]``, the numbers left to Python into
    ``slow`` (:func:`slow_number`). ``grammar`` is the format's own value (LIBSVM's smallest index, VW's mask and
    hashing). Returns ``OK`` and the entries' and numbers' new ends, or an error code and the start of the bad
    token.
``token_end(buf, p)``
    Where the token at ``p`` ends (for the error record).

Errors are returned as a ``(code, line, token start, token end)`` record, for Python to phrase with the file name
and the offending text. Numbers that :func:`blocksvm.io._float_kernels.parse_float` leaves to Python (``SLOW``: over
19 significant digits) are recorded as ``(kind, index, start, end)`` and a scale, for the caller to convert.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.io._float_kernels import MALFORMED, NONFINITE, byte_at

OK = 0  # the code of a good line; each grammar numbers its errors from 1

# Kinds of the numbers left to Python: where the converted number goes.
SLOW_LABEL = 0
SLOW_WEIGHT = 1
SLOW_VALUE = 2

NO_COMMENT = 10  # the comment byte of a format without comments: the newline, which ends a blank line anyway


@njit(cache=True, nogil=True, inline="always")
def is_blank(c):
    """White space within a line: space, tab, and the other ASCII blanks (``\\r`` too, for Windows lines)."""
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True, inline="always")
def skip_blanks(buf, p):
    while is_blank(byte_at(buf, p)):
        p += 1
    return p


@njit(cache=True, nogil=True, inline="always")
def line_end(buf, p):
    """The newline that ends the line of ``p``."""
    while byte_at(buf, p) != 10:
        p += 1
    return p


@njit(cache=True, nogil=True)
def count_newlines(buf):
    """Newlines in ``buf``, without the GIL."""
    newlines = 0
    for c in buf:
        newlines += c == 10
    return newlines


@njit(cache=True, nogil=True)
def last_newline(buf):
    """Position of the last newline in ``buf``, or -1."""
    for i in range(buf.shape[0] - 1, -1, -1):
        if byte_at(buf, i) == 10:
            return i
    return -1


@njit(cache=True, nogil=True)
def index_range(columns):
    """The smallest and the largest of ``columns`` (2**31 and -1 when it is empty)."""
    lowest = 2**31
    highest = -1
    for c in columns:
        lowest = min(lowest, c)
        highest = max(highest, c)
    return lowest, highest


@njit(cache=True, nogil=True, inline="always")
def number_error(status, ends, bad, nonfinite):
    """The error of a number that :func:`~blocksvm.io._float_kernels.parse_float` read with ``status``, whose token
    ends where the grammar wants it or not (``ends``): ``bad`` (malformed, or more follows), ``nonfinite``, or OK."""
    if status == MALFORMED or not ends:
        return bad
    if status == NONFINITE:
        return nonfinite
    return OK


@njit(cache=True, nogil=True, inline="always")
def slow_number(slow, n_slow, kind, at, start, end, scale):
    """Record the number ``buf[start:end]`` for Python to convert, if there is room: it goes to entry ``at`` of the
    labels, the weights or the values (``kind``), multiplied by ``scale``. Returns the count of such numbers (past
    the room: the caller parses again with room for all)."""
    where, scales = slow
    if n_slow < scales.shape[0]:
        where[n_slow, 0] = kind
        where[n_slow, 1] = at
        where[n_slow, 2] = start
        where[n_slow, 3] = end
        scales[n_slow] = scale
    return n_slow + 1


@njit(cache=True, nogil=True, inline="always")  # inlined: its grammar's functions are then called directly
def parse_lines(buf, first_line, skip_bad, grammar, out, slow, error, parse_row, token_end, comment):
    """Parse every line of ``buf`` (uint8) into CSR rows by one grammar's ``parse_row`` and ``token_end``.

    Parameters
    ----------
    buf : ndarray of uint8
        Whole lines; the last byte must be a newline (it stops every scan without bounds checks).
    first_line : int
        Line number of ``buf``'s first line (1-based).
    skip_bad : bool
        Skip a malformed line (and count it) instead of stopping at it.
    grammar
        The format's own value, handed to ``parse_row``.
    out : tuple of arrays
        ``(indptr, columns, values, labels, weights, lines)``: ``indptr`` int64 (max_rows + 1,); ``columns`` int32
        and ``values`` (max_entries,); ``labels`` and ``weights`` float64 and ``lines`` int64 (max_rows,), each
        row's line number in the file.
    slow : tuple of arrays
        ``(where, scales)``: int64 (room, 4) and float64 (room,); out: the numbers left to Python
        (:func:`slow_number`), the first ``room`` of them.
    error : ndarray of int64, shape (4,)
        Out: code, line, token start, token end of the first bad line (code 0 if none).
    parse_row, token_end : functions
        The grammar (the module's docstring).
    comment : int
        The byte that makes a line a comment when it is the line's first (LIBSVM's ``#``), or ``NO_COMMENT``.

    Returns
    -------
    n_rows, nnz, n_slow, n_skipped : int
        When ``skip_bad`` is False, parsing stops at the first bad line and ``n_rows`` counts the rows before it.
        ``n_slow`` may exceed the room in ``slow``: then only the first were recorded.
    """
    indptr, lines = out[0], out[5]
    n = buf.shape[0]
    pos = 0
    line = first_line - 1
    row = np.int64(0)  # typed, not the literal 0: numba would compile parse_row for a literal row and count too
    n_slow = np.int64(0)
    n_skipped = 0
    indptr[0] = 0
    error[0] = OK
    while pos < n:
        line += 1
        p = skip_blanks(buf, pos)
        c = byte_at(buf, p)
        if c == 10 or c == comment:  # a blank or comment line: not a row
            pos = line_end(buf, p) + 1
            continue
        k = indptr[row]
        code, p, k_end, n_slow_end = parse_row(buf, p, row, k, n_slow, grammar, out, slow)
        if code != OK:  # p is the start of the offending token
            if error[0] == OK:
                error[0], error[1], error[2], error[3] = code, line, p, token_end(buf, p)
            if not skip_bad:
                return row, k, n_slow, n_skipped
            n_skipped += 1
            pos = line_end(buf, p) + 1
            continue
        lines[row] = line
        row += 1
        indptr[row] = k_end
        n_slow = n_slow_end
        pos = line_end(buf, p) + 1
    return row, indptr[row], n_slow, n_skipped
