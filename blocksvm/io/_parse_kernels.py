"""The compiled LIBSVM/svmlight tokenizer: bytes in, CSR arrays out.

One line of the format::

    <label> [qid:<int>] <index>:<value> <index>:<value> ... [# comment]

Indices must increase strictly along a line. Blank lines and comment-only lines are not rows.
``\\r`` counts as white space, so Windows line endings need no special case.

Each byte is read once: numbers are parsed while the line is scanned, and a token's end is looked
for only to report an error. The buffer ends in a newline, which stops every scan, so the loops
need no bounds checks. The kernel writes into arrays the caller sized from upper bounds
(``rows <= newlines``, ``nnz <= colons``) and returns the first error as a
``(code, line, token start, token end)`` record instead of raising,
so that Python can phrase the message with the file name and the offending text.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.io._float_kernels import MALFORMED, NONFINITE, SLOW, byte_at, parse_float

# Error codes; blocksvm.io.libsvm turns them into sentences.
OK = 0
BAD_LABEL = 1
BAD_PAIR = 2
BAD_INDEX = 3
NEGATIVE_INDEX = 4
ZERO_INDEX = 5
INDEX_TOO_LARGE = 6
NOT_INCREASING = 7
DUPLICATE_INDEX = 8
BAD_VALUE = 9
NONFINITE_VALUE = 10
NONFINITE_LABEL = 11
BAD_QID = 12

MAX_INDEX = 2**31 - 1  # indices are stored as written, in int32 (the bias weight is a slot of w, not a column)


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True, inline="always")
def _ends_token(c):
    """White space, the newline, or '#' (a comment may follow a token directly)."""
    return c == 32 or c == 10 or c == 35 or _is_space(c)


@njit(cache=True, nogil=True, inline="always")
def _skip_spaces(buf, p):
    while _is_space(byte_at(buf, p)):
        p += 1
    return p


@njit(cache=True, nogil=True, inline="always")
def _line_end(buf, p):
    while byte_at(buf, p) != 10:
        p += 1
    return p


@njit(cache=True, nogil=True)
def _token_end(buf, p):
    while not _ends_token(byte_at(buf, p)):
        p += 1
    return p


@njit(cache=True, nogil=True)
def count_lines_and_pairs(buf):
    """Numbers of newlines and of colons in ``buf``: bounds on rows and nnz, without the GIL."""
    newlines = 0
    colons = 0
    for c in buf:
        newlines += c == 10
        colons += c == 58
    return newlines, colons


@njit(cache=True, nogil=True)
def last_newline(buf):
    """Position of the last newline in ``buf``, or -1."""
    for i in range(buf.shape[0] - 1, -1, -1):
        if byte_at(buf, i) == 10:
            return i
    return -1


@njit(cache=True, nogil=True)
def parse_lines(
    buf,
    first_line,
    min_index,
    skip_bad,
    indptr,
    indices,
    values,
    labels,
    lines,
    row_starts,
    slow_slots,
    error,
    powers,
    exact_tens,
):
    """Parse every line of ``buf`` (uint8) into CSR rows.

    Parameters
    ----------
    buf : ndarray of uint8
        Whole lines; the last byte must be a newline (it stops every scan without bounds checks).
    first_line : int
        Line number of ``buf``'s first line (1-based).
    min_index : int
        Smallest accepted feature index: 0 (zero-based or auto) or 1 (one-based).
    skip_bad : bool
        Skip a malformed line (and count it) instead of stopping at it.
    indptr : ndarray of int64, shape (max_rows + 1,)
    indices : ndarray of int32, shape (max_nnz,)
        Feature indices as written in the file.
    values : ndarray of float64, shape (max_nnz,)
    labels : ndarray of float64, shape (max_rows,)
    lines : ndarray of int64, shape (max_rows,)
        Each row's line number in the file.
    row_starts : ndarray of int64, shape (max_rows,)
        Byte offset of each row's line in ``buf``.
    slow_slots : ndarray of int64, shape (max_nnz + max_rows,)
        Out: the value slots (``k >= 0``) and label slots (``-row - 1``) that Python must convert.
    error : ndarray of int64, shape (4,)
        Out: code, line, token start, token end of the first bad line (code 0 if none).
    powers, exact_tens : tables of :mod:`blocksvm.io._float_kernels`.

    Returns
    -------
    n_rows, nnz, n_slow, n_skipped, max_index, min_index_seen : int
        ``max_index`` is -1 and ``min_index_seen`` is 2**31 when no feature was read. When
        ``skip_bad`` is False, parsing stops at the first bad line and ``n_rows`` counts the rows
        before it.
    """
    n = buf.shape[0]
    pos = 0
    line = first_line - 1
    row = np.int64(0)  # typed, not the literal 0: numba would compile _parse_row for a literal row and count too
    n_slow = np.int64(0)
    n_skipped = 0
    max_seen = -1
    min_seen = 2**31
    indptr[0] = 0
    error[0] = OK
    while pos < n:
        line += 1
        p = _skip_spaces(buf, pos)
        if byte_at(buf, p) == 10 or byte_at(buf, p) == 35:  # blank or comment-only line: not a row
            pos = _line_end(buf, p) + 1
            continue
        k = indptr[row]
        code, p, k_end, n_slow_end, label = _parse_row(
            buf, p, row, k, n_slow, min_index, indices, values, slow_slots, powers, exact_tens
        )
        if code != OK:  # p is the start of the offending token
            if error[0] == OK:
                error[0], error[1], error[2], error[3] = code, line, p, _token_end(buf, p)
            if not skip_bad:
                return row, k, n_slow, n_skipped, max_seen, min_seen
            n_skipped += 1
            pos = _line_end(buf, p) + 1
            continue
        if k_end > k:  # indices increase along the row: its extremes are its ends
            min_seen = min(min_seen, indices[k])
            max_seen = max(max_seen, indices[k_end - 1])
        labels[row] = label
        lines[row] = line
        row_starts[row] = pos
        row += 1
        indptr[row] = k_end
        n_slow = n_slow_end
        pos = _line_end(buf, p) + 1
    return row, indptr[row], n_slow, n_skipped, max_seen, min_seen


@njit(cache=True, nogil=True)
def _parse_row(buf, p, row, k, n_slow, min_index, indices, values, slow_slots, powers, exact_tens):
    """Parse one row from its label at ``p`` up to its newline or comment.

    Each byte is read once: index digits are accumulated on the way to the ':', and the value is
    parsed from there to the delimiter.

    Returns ``(code, p, k, n_slow, label)``: on success ``p`` is at the newline or '#' and ``k``
    and ``n_slow`` are past the row's entries; on failure ``p`` is the start of the bad token.
    """
    status, label, end = parse_float(buf, p, powers, exact_tens)
    if status == MALFORMED or not _ends_token(byte_at(buf, end)):
        return BAD_LABEL, p, k, n_slow, label
    if status == NONFINITE:
        return NONFINITE_LABEL, p, k, n_slow, label
    if status == SLOW:
        slow_slots[n_slow] = -row - 1
        n_slow += 1
    p = end
    previous = -1
    while True:
        p = _skip_spaces(buf, p)
        c = byte_at(buf, p)
        if c == 10 or c == 35:
            return OK, p, k, n_slow, label
        t_start = p
        if c == 113 and _is_qid(buf, p):  # qid:<int> may precede the features; it is ignored
            p = _qid_end(buf, p + 4)
            if previous >= 0 or p < 0:
                return BAD_QID, t_start, k, n_slow, label
            continue
        # index: [+]digits, then ':'
        if c == 43:
            p += 1
        digits_start = p
        index = 0
        while 48 <= byte_at(buf, p) <= 57:
            if index <= MAX_INDEX:
                index = index * 10 + (byte_at(buf, p) - 48)
            p += 1
        if p == digits_start or byte_at(buf, p) != 58:
            return _pair_error(buf, t_start), t_start, k, n_slow, label
        if _ends_token(byte_at(buf, p + 1)):  # "3:" has no value
            return BAD_PAIR, t_start, k, n_slow, label
        if index > MAX_INDEX:
            return INDEX_TOO_LARGE, t_start, k, n_slow, label
        if index < min_index:
            return ZERO_INDEX, t_start, k, n_slow, label
        if index <= previous:
            code = DUPLICATE_INDEX if index == previous else NOT_INCREASING
            return code, t_start, k, n_slow, label
        # value
        status, value, p = parse_float(buf, p + 1, powers, exact_tens)
        if status == MALFORMED or not _ends_token(byte_at(buf, p)):
            return BAD_VALUE, t_start, k, n_slow, label
        if status == NONFINITE:
            return NONFINITE_VALUE, t_start, k, n_slow, label
        if status == SLOW:
            slow_slots[n_slow] = k
            n_slow += 1
        indices[k] = index
        values[k] = value
        k += 1
        previous = index


@njit(cache=True, nogil=True)
def _is_qid(buf, p):
    """``qid:`` at ``p`` (each test stops at a mismatch, so never reads past a newline)."""
    return (
        byte_at(buf, p) == 113
        and byte_at(buf, p + 1) == 105
        and byte_at(buf, p + 2) == 100
        and byte_at(buf, p + 3) == 58
    )


@njit(cache=True, nogil=True)
def _qid_end(buf, p):
    """End of the ``[+-]digits`` of a qid at ``p``, or -1 if they are not a lone integer."""
    if byte_at(buf, p) == 43 or byte_at(buf, p) == 45:
        p += 1
    digits_start = p
    while 48 <= byte_at(buf, p) <= 57:
        p += 1
    if p == digits_start or not _ends_token(byte_at(buf, p)):
        return -1
    return p


@njit(cache=True, nogil=True)
def _pair_error(buf, t_start):
    """Why the token at ``t_start`` has no valid ``index:`` prefix (the error path only)."""
    t_end = _token_end(buf, t_start)
    colon = t_start
    while colon < t_end and byte_at(buf, colon) != 58:
        colon += 1
    if colon == t_end or colon == t_start or colon == t_end - 1:
        return BAD_PAIR
    if byte_at(buf, t_start) == 45:
        return NEGATIVE_INDEX
    return BAD_INDEX
