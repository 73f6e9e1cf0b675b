"""The compiled Vowpal Wabbit text tokenizer and feature hasher: bytes in, hashed CSR arrays out.

One line of VW's text format (the parts blocksvm reads)::

    <label> [<importance>] ['<tag>]|<namespace>[:<weight>] <name>[:<value>] <name> ... |<namespace> ...

As VW reads it: the words before the first ``|`` are the label, an optional importance weight, and a tag (a
last word that starts with ``'`` or touches the bar); a namespace is the word right after a ``|`` (none when a
space follows the bar), its optional ``:weight`` scales its values; a feature is ``name:value`` or a bare
``name`` (value 1); a value of 0 adds no feature. Blank lines are not rows.

**The hash** is VW's own (its default ``--hash strings``): MurmurHash3, x86 32-bit variant (Appleby; the
function of scikit-learn's ``murmurhash3_32`` and ``FeatureHasher``), of the name's UTF-8 bytes, seeded with the
namespace's hash, which is the same function of the namespace's name seeded with 0 (0 for the default namespace).
A name of decimal digits only is not hashed: it is its integer plus the namespace's hash, unless ``hash_all`` (VW's
``--hash all``) hashes it too. The column is that 32-bit value's lowest ``bits`` bits: the namespace is part of the
key, so ``a|x`` and ``b|x`` are different columns, and different names may share a column (a collision).

Each row's entries are then sorted by column and the entries of one column summed (a repeated name, or a
collision, adds up as it does in VW's dot product); a sum of 0 is dropped.

The line loop is :mod:`._text_kernels`' (this module is the grammar it runs: :func:`parse_vw_lines`); the numbers
left to Python (``SLOW``: over 19 significant digits) are converted by the caller before :func:`merge_rows`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from blocksvm.io._float_kernels import FAST, SLOW, byte_at, parse_float
from blocksvm.io._text_kernels import (
    NO_COMMENT,
    OK,
    SLOW_LABEL,
    SLOW_VALUE,
    SLOW_WEIGHT,
    is_blank,
    number_error,
    parse_lines,
    skip_blanks,
    slow_number,
)

# Error codes (OK is 0); blocksvm.io.vw turns them into sentences.
BAD_LABEL = 1
NONFINITE_LABEL = 2
NO_LABEL = 3
BAD_WEIGHT = 4
NEGATIVE_WEIGHT = 5
NONFINITE_WEIGHT = 6
EXTRA_HEADER = 7
BAD_NAMESPACE_WEIGHT = 8
EMPTY_NAME = 9
BAD_VALUE = 10
NONFINITE_VALUE = 11

_M32 = np.uint64(0xFFFFFFFF)
_C1 = np.uint64(0xCC9E2D51)
_C2 = np.uint64(0x1B873593)
_N1 = np.uint64(0xE6546B64)
_F1 = np.uint64(0x85EBCA6B)
_F2 = np.uint64(0xC2B2AE35)
_5 = np.uint64(5)
_8 = np.uint64(8)
_13 = np.uint64(13)
_15 = np.uint64(15)
_16 = np.uint64(16)
_17 = np.uint64(17)
_19 = np.uint64(19)
_24 = np.uint64(24)
_TEN = np.uint64(10)
_ZERO = np.uint64(0)

_SHORT_ROW = 32  # rows up to this many entries are sorted by insertion, longer ones by argsort


@njit(cache=True, nogil=True, inline="always")
def _ends_word(c):
    """White space, the bar or the newline."""
    return c == 124 or c == 10 or is_blank(c)


@njit(cache=True, nogil=True, inline="always")
def _rotl32(x, r, rest):
    return ((x << r) | (x >> rest)) & _M32


@njit(cache=True, nogil=True)
def murmur3_32(buf, start, end, seed):
    """MurmurHash3_x86_32 of ``buf[start:end]`` with ``seed`` (its low 32 bits), as a uint64 in ``[0, 2**32)``.

    Austin Appleby's public-domain reference; the value of ``sklearn.utils.murmurhash3_32(bytes, seed,
    positive=True)``. Products are taken in 64 bits and masked, so nothing overflows.
    """
    h = np.uint64(seed) & _M32
    n = end - start
    p = start
    stop = start + (n // 4) * 4
    while p < stop:
        k = (
            np.uint64(byte_at(buf, p))
            | (np.uint64(byte_at(buf, p + 1)) << _8)
            | (np.uint64(byte_at(buf, p + 2)) << _16)
            | (np.uint64(byte_at(buf, p + 3)) << _24)
        )
        k = (k * _C1) & _M32
        k = _rotl32(k, _15, _17)
        k = (k * _C2) & _M32
        h ^= k
        h = _rotl32(h, _13, _19)
        h = (h * _5 + _N1) & _M32
        p += 4
    rem = end - stop
    k = _ZERO
    if rem == 3:
        k ^= np.uint64(byte_at(buf, stop + 2)) << _16
    if rem >= 2:
        k ^= np.uint64(byte_at(buf, stop + 1)) << _8
    if rem >= 1:
        k ^= np.uint64(byte_at(buf, stop))
        k = (k * _C1) & _M32
        k = _rotl32(k, _15, _17)
        k = (k * _C2) & _M32
        h ^= k
    h ^= np.uint64(n)
    h ^= h >> _16
    h = (h * _F1) & _M32
    h ^= h >> _13
    h = (h * _F2) & _M32
    h ^= h >> _16
    return h


@njit(cache=True, nogil=True)
def hash_name(buf, start, end, seed, hash_all):
    """VW's hash of the name ``buf[start:end]`` under ``seed`` (a namespace's hash), as a uint64.

    Digits only (and not ``hash_all``): the integer plus ``seed``, modulo 2**64 (only its low bits are used);
    otherwise :func:`murmur3_32`.
    """
    if not hash_all:
        value = _ZERO
        p = start
        while p < end:
            c = byte_at(buf, p)
            if c < 48 or c > 57:
                return murmur3_32(buf, start, end, seed)
            value = value * _TEN + np.uint64(c - 48)
            p += 1
        return value + np.uint64(seed)
    return murmur3_32(buf, start, end, seed)


@njit(cache=True, nogil=True)
def count_vw_bounds(buf):
    """Numbers of newlines and of words (runs of bytes between blanks, bars and newlines) in ``buf``: bounds on
    rows and entries, without the GIL."""
    newlines = 0
    words = 0
    between = True
    for c in buf:
        gap = c == 10 or c == 124 or is_blank(c)
        words += between and not gap
        between = gap
        newlines += c == 10
    return newlines, words


@njit(cache=True, nogil=True, inline="always")
def _word_end(buf, p):
    while not _ends_word(byte_at(buf, p)):
        p += 1
    return p


@njit(cache=True, nogil=True)
def parse_vw_lines(buf, first_line, mask, hash_all, skip_bad, out, slow, error):
    """Parse every line of ``buf`` into hashed CSR rows, each row's entries in the order met
    (:func:`._text_kernels.parse_lines`, whose arguments these are).

    ``mask``: ``2**bits - 1`` (uint64), a column is a hash's lowest ``bits`` bits; ``hash_all``: hash names of
    digits too (VW's ``--hash all``). ``values`` are float64, each times its namespace's weight (unsorted, unmerged:
    :func:`merge_rows` follows); ``weights`` each row's importance weight (1 when the line has none).
    """
    return parse_lines(
        buf, first_line, skip_bad, (mask, hash_all), out, slow, error, _parse_vw_row, _word_end, NO_COMMENT
    )


@njit(cache=True, nogil=True)
def _parse_vw_row(buf, p, row, k, n_slow, grammar, out, slow):
    """Parse one line from its first word at ``p``. Returns ``(code, p, k, n_slow)``: on success ``k`` and
    ``n_slow`` are past the row's entries; on failure ``p`` is the start of the bad word."""
    mask, hash_all = grammar
    columns, values, labels, weights = out[1], out[2], out[3], out[4]
    # the header: up to the first bar, words [label [importance [base]]] [tag]
    starts = np.empty(4, np.int64)
    ends = np.empty(4, np.int64)
    n_words = 0
    q = p
    while True:
        q = skip_blanks(buf, q)
        c = byte_at(buf, q)
        if c == 124 or c == 10:
            break
        end = _word_end(buf, q)
        if n_words == 4:
            return EXTRA_HEADER, q, k, n_slow
        starts[n_words] = q
        ends[n_words] = end
        n_words += 1
        q = end
    bar = q  # the first bar, or the newline
    if n_words > 0 and (
        ends[n_words - 1] == bar and byte_at(buf, bar) == 124 or byte_at(buf, starts[n_words - 1]) == 39
    ):
        n_words -= 1  # VW's tag: a last word that touches the bar or starts with a quote (ignored)
    if n_words == 0:
        return NO_LABEL, p, k, n_slow
    if n_words > 2:
        return EXTRA_HEADER, starts[2], k, n_slow
    status, label, end = parse_float(buf, starts[0])
    code = number_error(status, end == ends[0], BAD_LABEL, NONFINITE_LABEL)
    if code != OK:
        return code, starts[0], k, n_slow
    if status == SLOW:
        n_slow = slow_number(slow, n_slow, SLOW_LABEL, row, starts[0], end, 1.0)
    labels[row] = label
    weight = 1.0
    if n_words == 2:
        status, weight, end = parse_float(buf, starts[1])
        code = number_error(status, end == ends[1], BAD_WEIGHT, NONFINITE_WEIGHT)
        if code != OK:
            return code, starts[1], k, n_slow
        if byte_at(buf, starts[1]) == 45 and weight != 0.0:  # '-': refused, as a negative slow weight is by Python
            return NEGATIVE_WEIGHT, starts[1], k, n_slow
        if status == SLOW:
            n_slow = slow_number(slow, n_slow, SLOW_WEIGHT, row, starts[1], end, 1.0)
    weights[row] = weight
    # the namespaces
    q = bar
    while byte_at(buf, q) == 124:
        q += 1
        seed = _ZERO
        scale = 1.0
        if not _ends_word(byte_at(buf, q)):  # a named namespace
            name_start = q
            while not _ends_word(byte_at(buf, q)) and byte_at(buf, q) != 58:
                q += 1
            seed = hash_name(buf, name_start, q, _ZERO, hash_all) & _M32
            if byte_at(buf, q) == 58:  # ':' its weight
                status, scale, end = parse_float(buf, q + 1)
                if status != FAST or not _ends_word(byte_at(buf, end)):
                    return BAD_NAMESPACE_WEIGHT, name_start, k, n_slow
                q = end
        while True:  # its features, up to the next bar or the newline
            q = skip_blanks(buf, q)
            c = byte_at(buf, q)
            if c == 124 or c == 10:
                break
            t_start = q
            while not _ends_word(byte_at(buf, q)) and byte_at(buf, q) != 58:
                q += 1
            if q == t_start:
                return EMPTY_NAME, t_start, k, n_slow
            column = np.int32(hash_name(buf, t_start, q, seed, hash_all) & mask)
            value = scale
            if byte_at(buf, q) == 58:
                status, value, end = parse_float(buf, q + 1)
                code = number_error(status, _ends_word(byte_at(buf, end)), BAD_VALUE, NONFINITE_VALUE)
                if code != OK:
                    return code, t_start, k, n_slow
                if status == SLOW:
                    n_slow = slow_number(slow, n_slow, SLOW_VALUE, k, q + 1, end, scale)
                    value = 1.0  # a placeholder, not 0: the entry is kept for Python's value
                else:
                    value *= scale
                q = end
            if value == 0.0:  # VW adds no feature of value 0
                continue
            columns[k] = column
            values[k] = value
            k += 1
    return OK, p, k, n_slow


@njit(cache=True, nogil=True)
def merge_rows(indptr, columns, values, n_rows):
    """Sort each row's entries by column, sum those of one column and drop sums of 0, in place (rows move to
    the front: a row's merged entries never outnumber its entries). Returns the new nnz."""
    out = 0
    start = indptr[0]
    for r in range(n_rows):
        stop = indptr[r + 1]
        length = stop - start
        if length > _SHORT_ROW:
            order = np.argsort(columns[start:stop], kind="mergesort")
            sorted_columns = columns[start:stop][order]
            sorted_values = values[start:stop][order]
            columns[start:stop] = sorted_columns
            values[start:stop] = sorted_values
        else:
            for i in range(start + 1, stop):  # insertion sort: stable, so equal columns keep their order
                c, v = columns[i], values[i]
                j = i - 1
                while j >= start and columns[j] > c:
                    columns[j + 1] = columns[j]
                    values[j + 1] = values[j]
                    j -= 1
                columns[j + 1] = c
                values[j + 1] = v
        row_out = out
        i = start
        while i < stop:
            c = columns[i]
            v = values[i]
            i += 1
            while i < stop and columns[i] == c:
                v += values[i]
                i += 1
            if v != 0.0:
                columns[out] = c
                values[out] = v
                out += 1
        indptr[r] = row_out  # (indptr[r + 1] is read above before it is rewritten on the next row)
        start = stop
    indptr[n_rows] = out
    return out
