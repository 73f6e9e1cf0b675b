"""The compiled LIBSVM/svmlight tokenizer: bytes in, CSR arrays out.

One line of the format::

    <label> [qid:<int>] <index>:<value> <index>:<value> ... [# comment]

Indices must increase strictly along a line. Blank lines and comment-only lines are not rows.
``\\r`` counts as white space, so Windows line endings need no special case. The kernel writes
into arrays the caller sized from upper bounds (``rows <= newlines + 1``, ``nnz <= colons``) and
returns the first error as an ``(code, line, token start, token end)`` record instead of raising,
so that Python can phrase the message with the file name and the offending text.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.io._float_kernels import FAST, MALFORMED, NONFINITE, SLOW, parse_float

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

MAX_INDEX = 2**31 - 2  # the bias feature needs one column after the largest index


@njit(cache=True, nogil=True, inline="always")
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def parse_lines(
    buf, first_line, min_index, skip_bad,
    indptr, indices, values, labels, lines, row_starts, slow_slots,
    error, powers, exact_tens,
):  # fmt: skip
    """Parse every line of ``buf`` (uint8) into CSR rows.

    Parameters
    ----------
    buf : ndarray of uint8
        Whole lines; the last one may lack its newline.
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
    row = 0
    k = 0
    n_slow = 0
    n_skipped = 0
    max_seen = -1
    min_seen = 2**31
    indptr[0] = 0
    error[0] = OK
    while pos < n:
        line += 1
        line_start = pos
        end = pos  # end of data: first '#' or the newline
        while end < n and buf[end] != 10 and buf[end] != 35:
            end += 1
        eol = end
        while eol < n and buf[eol] != 10:
            eol += 1
        next_pos = eol + 1

        p = pos
        while p < end and _is_space(buf[p]):
            p += 1
        if p == end:  # blank or comment-only line
            pos = next_pos
            continue

        code = OK
        t_start = p
        t_end = p
        slow_mark = n_slow
        row_max = -1
        row_min = 2**31

        # label
        while t_end < end and not _is_space(buf[t_end]):
            t_end += 1
        status, label = parse_float(buf, t_start, t_end, powers, exact_tens)
        if status == MALFORMED:
            code = BAD_LABEL
        elif status == NONFINITE:
            code = NONFINITE_LABEL
        elif status == SLOW:
            slow_slots[n_slow] = -row - 1
            n_slow += 1
        p = t_end

        previous = -1
        while code == OK:
            while p < end and _is_space(buf[p]):
                p += 1
            if p == end:
                break
            t_start = p
            colon = -1
            while p < end and not _is_space(buf[p]):
                if buf[p] == 58 and colon < 0:  # ':'
                    colon = p
                p += 1
            t_end = p
            if colon <= t_start or colon == t_end - 1:
                code = BAD_PAIR
                break
            # qid:<int> may stand before the features; its value is ignored
            if (
                colon - t_start == 3
                and buf[t_start] == 113
                and buf[t_start + 1] == 105
                and buf[t_start + 2] == 100
            ):
                if previous >= 0:
                    code = BAD_QID
                    break
                q = colon + 1
                if buf[q] == 45 or buf[q] == 43:
                    q += 1
                if q == t_end:
                    code = BAD_QID
                    break
                while q < t_end and 48 <= buf[q] <= 57:
                    q += 1
                if q != t_end:
                    code = BAD_QID
                    break
                continue
            # index
            q = t_start
            if buf[q] == 45:
                code = NEGATIVE_INDEX
                break
            if buf[q] == 43:
                q += 1
            if q == colon:
                code = BAD_INDEX
                break
            index = 0
            while q < colon and 48 <= buf[q] <= 57:
                if index <= MAX_INDEX:
                    index = index * 10 + (buf[q] - 48)
                q += 1
            if q != colon:
                code = BAD_INDEX
                break
            if index > MAX_INDEX:
                code = INDEX_TOO_LARGE
                break
            if index < min_index:
                code = ZERO_INDEX
                break
            if index == previous:
                code = DUPLICATE_INDEX
                break
            if index < previous:
                code = NOT_INCREASING
                break
            # value
            status, value = parse_float(buf, colon + 1, t_end, powers, exact_tens)
            if status == MALFORMED:
                code = BAD_VALUE
                break
            if status == NONFINITE:
                code = NONFINITE_VALUE
                break
            if status == SLOW:
                slow_slots[n_slow] = k
                n_slow += 1
            indices[k] = index
            values[k] = value
            k += 1
            previous = index
            if index > row_max:
                row_max = index
            if index < row_min:
                row_min = index

        if code != OK:
            if error[0] == OK:
                error[0] = code
                error[1] = line
                error[2] = t_start
                error[3] = t_end
            if not skip_bad:
                return row, indptr[row], slow_mark, n_skipped, max_seen, min_seen
            n_skipped += 1
            k = indptr[row]
            n_slow = slow_mark
            pos = next_pos
            continue

        labels[row] = label
        lines[row] = line
        row_starts[row] = line_start
        row += 1
        indptr[row] = k
        if row_max > max_seen:
            max_seen = row_max
        if row_min < min_seen:
            min_seen = row_min
        pos = next_pos
    return row, k, n_slow, n_skipped, max_seen, min_seen
