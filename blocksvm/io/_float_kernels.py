"""Correctly rounded decimal -> float64 conversion for the numba tokenizer.

A LIBSVM value such as ``0.0384615`` must become exactly the double that C's ``strtod`` (and so
scikit-learn's loader) produces. Two exact methods are combined, as in Lemire's *fast_float*:

1. Clinger's fast path: a mantissa ``w <= 2**53`` and ``|q| <= 22`` give ``w * 10**q`` with one
   IEEE rounding, hence correctly rounded.
2. The Eisel-Lemire algorithm (Lemire, "Number Parsing at a Gigabyte per Second", SPE 2021;
   Mushtak & Lemire, "Fast number parsing without fallback", SPE 2023) for any ``w < 2**64``:
   multiply the normalized mantissa by a 128-bit truncation of ``5**q`` and round.

Inputs with more than 19 significant digits (unless the rest are zeros), or results that are
subnormal, return ``SLOW`` and are converted by Python's ``float`` by the caller (exact, and rare in
practice). Numbers of up to 18 digits, nearly all LIBSVM values, are read in a single int64 pass.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

FAST = 0
SLOW = 1
MALFORMED = 2
NONFINITE = 3

_SMALLEST_POWER = -342
_LARGEST_POWER = 308


def _powers_of_five_128() -> np.ndarray:
    """128-bit approximations of 5**q, q in [-342, 308], as (high, low) uint64 pairs.

    For q >= 0 the power is shifted so that its top bit is bit 127 and truncated; for q < 0 it is
    a rounded-up reciprocal with the same normalization (the table of fast_float).
    """
    table = np.empty((_LARGEST_POWER - _SMALLEST_POWER + 1, 2), dtype=np.uint64)
    mask = (1 << 64) - 1
    for q in range(_SMALLEST_POWER, _LARGEST_POWER + 1):
        if q >= 0:
            power5 = 5**q
            c = (power5 << 128) >> power5.bit_length()  # its top bit at bit 127, truncated (a shift, not a loop)
        else:
            power5 = 5**-q
            z = power5.bit_length()
            if q >= -27:
                c = 2 ** (z + 127) // power5 + 1
            else:
                c = 2 ** (2 * z + 128) // power5 + 1
                c >>= max(0, c.bit_length() - 128)  # at most 128 bits
        table[q - _SMALLEST_POWER, 0] = (c >> 64) & mask
        table[q - _SMALLEST_POWER, 1] = c & mask
    return table


# The kernels read these tables as globals, which numba compiles in as constants: an array handed to a helper
# inlined once a number costs a reference count taken and dropped (two atomic operations) at every call, about a
# third of the time of a LIBSVM value.
POWERS_OF_FIVE = _powers_of_five_128()
EXACT_POWERS_OF_TEN = np.array([10.0**k for k in range(23)], dtype=np.float64)

_U32 = np.uint64(0xFFFFFFFF)
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_TOP_BIT = np.uint64(1) << np.uint64(63)


@njit(cache=True, nogil=True, inline="always")
def byte_at(buf, p):
    """``buf[p]`` for ``p >= 0``. The unsigned index spares numba's negative-index wraparound,
    which costs the tokenizer about a sixth of its time."""
    return buf[np.uint64(p)]


@njit(cache=True, nogil=True, inline="always")
def _mul_64x64(a, b):
    """Full product of two uint64 as (high, low) uint64."""
    a_lo, a_hi = a & _U32, a >> np.uint64(32)
    b_lo, b_hi = b & _U32, b >> np.uint64(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> np.uint64(32)) + (p1 & _U32) + (p2 & _U32)
    low = (p0 & _U32) | (mid << np.uint64(32))
    high = p3 + (p1 >> np.uint64(32)) + (p2 >> np.uint64(32)) + (mid >> np.uint64(32))
    return high, low


@njit(cache=True, nogil=True)
def eisel_lemire(w, q):
    """Correctly rounded ``w * 10**q`` for uint64 ``w > 0`` (by :data:`POWERS_OF_FIVE`).

    Returns ``(ok, value)``; ``ok`` is False for subnormal results, which the caller converts by
    another route.
    """
    if q < _SMALLEST_POWER:
        return True, 0.0
    if q > _LARGEST_POWER:
        return True, math.inf
    lz = 0
    while (w & _TOP_BIT) == np.uint64(0):
        w = w << np.uint64(1)
        lz += 1
    index = q - _SMALLEST_POWER
    high, low = _mul_64x64(w, POWERS_OF_FIVE[index, 0])
    precision_mask = _ONES >> np.uint64(55)  # 52 mantissa bits + 3
    if (high & precision_mask) == precision_mask:
        second_high, _ = _mul_64x64(w, POWERS_OF_FIVE[index, 1])
        low = low + second_high
        if second_high > low:
            high = high + np.uint64(1)
    upperbit = np.int64(high >> np.uint64(63))
    shift = np.uint64(upperbit + 9)
    mantissa = high >> shift
    power2 = (((152170 + 65536) * q) >> 16) + 63 + upperbit - lz + 1023
    if power2 <= 0:
        return False, 0.0
    if low <= np.uint64(1) and -4 <= q <= 23 and (mantissa & np.uint64(3)) == np.uint64(1):
        if (mantissa << shift) == high:
            mantissa = mantissa & ~np.uint64(1)
    mantissa = mantissa + (mantissa & np.uint64(1))
    mantissa = mantissa >> np.uint64(1)
    if mantissa >= (np.uint64(2) << np.uint64(52)):
        mantissa = np.uint64(1) << np.uint64(52)
        power2 += 1
    if power2 >= 0x7FF:
        return True, math.inf
    # mantissa now holds 53 bits including the hidden one: value = mantissa * 2**(power2-1023-52)
    return True, math.ldexp(float(mantissa), power2 - 1075)


_NAN = (110, 97, 110)  # "nan", "inf", "infinity" in lower case
_INF = (105, 110, 102)
_INFINITY = (105, 110, 102, 105, 110, 105, 116, 121)


@njit(cache=True, nogil=True, inline="always")
def parse_float(buf, start):
    """Parse the decimal number that starts at ``buf[start]``.

    The scan stops at the first byte that cannot continue the number; the caller checks that a
    delimiter follows. ``buf`` must hold such a byte after every number (the tokenizer's buffers end
    in a newline), so the scan needs no bounds checks.

    Returns ``(status, value, end)``: status FAST (value is exact), SLOW (valid, but the caller must
    convert ``buf[start:end]`` itself), MALFORMED, or NONFINITE (nan, inf, or an overflowing
    literal); ``end`` is where the scan stopped.
    """
    p = start
    negative = byte_at(buf, p) == 45  # '-'
    if byte_at(buf, p) == 43 or byte_at(buf, p) == 45:  # '+' '-'
        p += 1
    # Every digit goes into an int64 in one pass: up to 18 digits cannot overflow it, and LIBSVM
    # values rarely have more (those are redone below).
    digits_start = p
    mantissa = 0
    while 48 <= byte_at(buf, p) <= 57:
        mantissa = mantissa * 10 + (byte_at(buf, p) - 48)
        p += 1
    n_digits = p - digits_start
    n_fraction = 0
    if byte_at(buf, p) == 46:  # '.'
        p += 1
        fraction_start = p
        while 48 <= byte_at(buf, p) <= 57:
            mantissa = mantissa * 10 + (byte_at(buf, p) - 48)
            p += 1
        n_fraction = p - fraction_start
        n_digits += n_fraction
    digits_end = p
    if n_digits == 0:
        if p == digits_start:
            return _nonfinite_word(buf, p)
        return MALFORMED, 0.0, p
    exponent = 0
    if (byte_at(buf, p) | 0x20) == 101:  # 'e' or 'E'
        ok, p, exponent = _parse_exponent(buf, p + 1)
        if not ok:
            return MALFORMED, 0.0, p

    if n_digits <= 18:
        w = np.uint64(mantissa)
        exp10 = exponent - n_fraction
    else:  # long or zero-padded: keep the first 19 significant digits
        w, exp10, truncated = _significant_digits(buf, digits_start, digits_end)
        if truncated:
            return SLOW, 0.0, p
        exp10 += exponent
    sign = -1.0 if negative else 1.0
    if w == np.uint64(0):
        return FAST, sign * 0.0, p
    if w <= np.uint64(1 << 53) and -22 <= exp10 <= 22:  # Clinger: one exact rounding
        m = float(np.int64(w))  # int64 -> double is one instruction, uint64 -> double is not
        if exp10 >= 0:
            return FAST, sign * (m * EXACT_POWERS_OF_TEN[exp10]), p
        return FAST, sign * (m / EXACT_POWERS_OF_TEN[-exp10]), p
    ok, value = eisel_lemire(w, exp10)
    if not ok:
        return SLOW, 0.0, p
    if math.isinf(value):
        return NONFINITE, 0.0, p
    return FAST, sign * value, p


_EXPONENT_CAP = 100_000  # beyond it every value is 0 or infinite anyway


@njit(cache=True, nogil=True)
def _parse_exponent(buf, p):
    """Read ``[+-]digits`` at ``p``; return ``(ok, end, exponent)``, ok False if no digit."""
    negative = byte_at(buf, p) == 45
    if byte_at(buf, p) == 43 or byte_at(buf, p) == 45:
        p += 1
    if not 48 <= byte_at(buf, p) <= 57:
        return False, p, 0
    e = 0
    while 48 <= byte_at(buf, p) <= 57:
        if e < _EXPONENT_CAP:
            e = e * 10 + (byte_at(buf, p) - 48)
        p += 1
    return True, p, -e if negative else e


@njit(cache=True, nogil=True)
def _significant_digits(buf, p, end):
    """The first 19 significant digits of ``buf[p:end]`` (digits and at most one '.').

    Returns ``(w, exp10, truncated)``: the digits as a uint64 ``w`` (< 10**19 < 2**64), the power
    of ten that scales ``w`` to the written number, and whether a nonzero digit was dropped.
    """
    w = np.uint64(0)
    n_kept = 0
    exp10 = 0
    truncated = False
    after_point = False
    while p < end:
        c = byte_at(buf, p)
        p += 1
        if c == 46:
            after_point = True
            continue
        d = np.uint64(c - 48)
        if n_kept < 19:
            if w != np.uint64(0) or d != np.uint64(0):  # leading zeros are not significant
                w = w * np.uint64(10) + d
                n_kept += 1
            if after_point:
                exp10 -= 1
        else:
            if not after_point:
                exp10 += 1
            truncated = truncated or d != np.uint64(0)
    return w, exp10, truncated


@njit(cache=True, nogil=True)
def _nonfinite_word(buf, p):
    """``nan``, ``inf`` or ``infinity`` (any case) at ``p``: NONFINITE; anything else: MALFORMED."""
    if _word_at(buf, p, _INFINITY):
        return NONFINITE, 0.0, p + 8
    if _word_at(buf, p, _INF) or _word_at(buf, p, _NAN):
        return NONFINITE, 0.0, p + 3
    return MALFORMED, 0.0, p


@njit(cache=True, nogil=True, inline="always")
def _word_at(buf, p, word):
    for i in range(len(word)):
        if (byte_at(buf, p + i) | 0x20) != word[i]:  # stops at the first mismatch, so never past a newline
            return False
    return True
