"""LIBSVM/svmlight's line grammar, compiled: the row parser that :mod:`._text_kernels`' line loop runs.

One line of the format::

    <label> [qid:<int>] <index>:<value> <index>:<value> ... [# comment]

Indices must increase strictly along a line. Blank lines and comment-only lines are not rows.
``\\r`` counts as white space, so Windows line endings need no special case.

Each byte is read once: numbers are parsed while the line is scanned, and a token's end is looked
for only to report an error. Entries are bounded by the colons (:func:`count_lines_and_pairs`).
"""

from __future__ import annotations

from numba import njit

from blocksvm.io._float_kernels import SLOW, byte_at, parse_float
from blocksvm.io._text_kernels import (
    OK,
    SLOW_LABEL,
    SLOW_VALUE,
    is_blank,
    number_error,
    parse_lines,
    slow_number,
)

MAX_INDEX = 2**31 - 1  # indices are stored as written, in int32 (the bias weight is a slot of w, not a column)
COMMENT = 35  # '#': a comment runs to the end of the line

# Error codes (OK is 0); blocksvm.io.libsvm turns them into sentences.
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


@njit(cache=True, nogil=True, inline="always")
def _ends_token(c):
    """White space, the newline, or '#' (a comment may follow a token directly)."""
    return c == 32 or c == 10 or c == COMMENT or is_blank(c)


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
def parse_libsvm_lines(buf, first_line, min_index, skip_bad, out, slow, error):
    """Parse every line of ``buf`` into CSR rows (:func:`._text_kernels.parse_lines`, whose arguments these are).

    ``min_index``: the smallest feature index accepted, 0 (zero-based or auto) or 1 (one-based). The rows'
    ``columns`` are the indices as written; ``values`` may be float32 (each value rounded as it is stored).
    """
    return parse_lines(buf, first_line, skip_bad, min_index, out, slow, error, _parse_row, _token_end, COMMENT)


@njit(cache=True, nogil=True)
def _parse_row(buf, p, row, k, n_slow, min_index, out, slow):
    """Parse one row from its label at ``p`` up to its newline or comment.

    Each byte is read once: index digits are accumulated on the way to the ':', and the value is
    parsed from there to the delimiter. The arrays are this function's arguments and the helpers it calls for
    every entry take none but ``buf`` (:func:`~._float_kernels.parse_float`): an array handed to an inlined
    helper costs a reference count taken and dropped (two atomic operations) at every call.

    Returns ``(code, p, k, n_slow)``: on success ``p`` is at the newline or '#' and ``k``
    and ``n_slow`` are past the row's entries; on failure ``p`` is the start of the bad token.
    """
    indices, values, labels = out[1], out[2], out[3]
    status, label, end = parse_float(buf, p)
    code = number_error(status, _ends_token(byte_at(buf, end)), BAD_LABEL, NONFINITE_LABEL)
    if code != OK:
        return code, p, k, n_slow
    if status == SLOW:
        n_slow = slow_number(slow, n_slow, SLOW_LABEL, row, p, end, 1.0)
    labels[row] = label
    p = end
    previous = -1
    while True:
        while is_blank(byte_at(buf, p)):
            p += 1
        c = byte_at(buf, p)
        if c == 10 or c == COMMENT:
            return OK, p, k, n_slow
        t_start = p
        if c == 113 and _is_qid(buf, p):  # qid:<int> may precede the features; it is ignored
            p = _qid_end(buf, p + 4)
            if previous >= 0 or p < 0:
                return BAD_QID, t_start, k, n_slow
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
            return _pair_error(buf, t_start), t_start, k, n_slow
        if _ends_token(byte_at(buf, p + 1)):  # "3:" has no value
            return BAD_PAIR, t_start, k, n_slow
        if index > MAX_INDEX:
            return INDEX_TOO_LARGE, t_start, k, n_slow
        if index < min_index:
            return ZERO_INDEX, t_start, k, n_slow
        if index <= previous:
            code = DUPLICATE_INDEX if index == previous else NOT_INCREASING
            return code, t_start, k, n_slow
        # value
        status, value, end = parse_float(buf, p + 1)
        code = number_error(status, _ends_token(byte_at(buf, end)), BAD_VALUE, NONFINITE_VALUE)
        if code != OK:
            return code, t_start, k, n_slow
        if status == SLOW:
            n_slow = slow_number(slow, n_slow, SLOW_VALUE, k, p + 1, end, 1.0)
        indices[k] = index
        values[k] = value
        k += 1
        previous = index
        p = end


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
