"""HDF5's own filters, decoded outside HDF5: the checksum, the byte shuffle and LZF, as compiled kernels that release
the GIL (so that several threads decode a block's chunks at once; h5py holds one lock around every HDF5 call).

Each is a transcription of the C code HDF5 (``H5checksum.c``, ``H5Zfletcher32.c``, ``H5Zshuffle.c``) and h5py
(``lzf/lzf_d.c``, Marc Lehmann's liblzf) run when they read a chunk, and gives the same bytes: the store's tests
compare every block read this way with h5py's own read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

LANES = 16
STEPS = 256
"""fletcher32 sums 16 interleaved lanes of words at once, for 256 steps (4,096 words) between reductions: no uint32
lane sum overflows (a lane's second sum stays below 256 * 257 / 2 * 65535 < 2**32), and the loop vectorizes."""


@njit(cache=True, nogil=True)
def fletcher32(data: np.ndarray) -> int:
    """HDF5's Fletcher-32 checksum of the bytes ``data`` (uint8), ``H5_checksum_fletcher32``'s value.

    HDF5 reads big-endian 16-bit words w_1 .. w_N (an odd last byte as the high half of one more), sums them
    (``sum1``) and sums the running sums (``sum2 = sum_i (N - i + 1) w_i``), folding both to 16 bits now and
    then; the folds keep each sum's value modulo 65535 and keep a nonzero sum nonzero, so the checksum is
    ``(r(sum2) << 16) | r(sum1)`` with r(0) = 0 and r(s) the residue of s modulo 65535 in 1 .. 65535. Here the
    sums are formed 16 words abreast: lane l's words are w_(kL+l), its ``a`` their running sum and its ``c`` the
    sum of its running sums, from which the block's two sums follow (``sum2 = sum_l L c_l - l a_l``).
    """
    n = len(data)
    words = n // 2
    view = data[: 2 * words].view(np.uint16)  # native byte order: each word's bytes swapped below
    s1 = 0
    s2 = 0
    nonzero = False
    a = np.zeros(LANES, np.uint32)
    c = np.zeros(LANES, np.uint32)
    block = LANES * STEPS
    at = 0
    while at + block <= words:
        a[:] = 0
        c[:] = 0
        for k in range(STEPS):
            base = at + k * LANES
            for lane in range(LANES):
                v = np.uint32(view[base + lane])
                a[lane] += ((v & np.uint32(0xFF)) << np.uint32(8)) | (v >> np.uint32(8))
                c[lane] += a[lane]
        sum_a = 0
        sum_b = 0
        for lane in range(LANES):
            sum_a += np.int64(a[lane])
            sum_b += LANES * np.int64(c[lane]) - lane * np.int64(a[lane])
        s2 = (s2 + block * s1 + sum_b) % 65535
        s1 = (s1 + sum_a) % 65535
        nonzero = nonzero or sum_a != 0
        at += block
    while at < words:  # the last words, one at a time
        v = np.int64(view[at])
        w = ((v & 0xFF) << 8) | (v >> 8)
        s1 = (s1 + w) % 65535
        s2 = (s2 + s1) % 65535
        nonzero = nonzero or w != 0
        at += 1
    if n % 2:
        w = np.int64(data[n - 1]) << 8
        s1 = (s1 + w) % 65535
        s2 = (s2 + s1) % 65535
        nonzero = nonzero or w != 0
    if not nonzero:
        return 0
    return ((s2 if s2 else 65535) << 16) | (s1 if s1 else 65535)


@njit(cache=True, nogil=True)
def fletcher32_matches(chunk: np.ndarray) -> bool:
    """Whether a chunk (uint8) that ends with its 4-byte checksum (little-endian) is intact, as HDF5's filter
    judges it on read: the checksum of the bytes before it, or that checksum with the bytes of each 16-bit half
    swapped (written by HDF5 1.6.0 to 1.6.2 on little-endian machines)."""
    n = len(chunk) - 4
    if n < 0:
        return False
    stored = int(chunk[n]) | (int(chunk[n + 1]) << 8) | (int(chunk[n + 2]) << 16) | (int(chunk[n + 3]) << 24)
    found = fletcher32(chunk[:n])
    if stored == found:
        return True
    swapped = ((found & 0x00FF00FF) << 8) | ((found >> 8) & 0x00FF00FF)
    return stored == swapped


@njit(cache=True, nogil=True)
def shuffle(src: np.ndarray, item: int, out: np.ndarray) -> None:
    """HDF5's byte shuffle of ``item``-byte elements (the inverse of :func:`unshuffle`): ``out`` gets every
    element's first byte, then every second byte, ...; bytes past the last whole element stay at the end."""
    _byte_planes(src, item, out, True)


@njit(cache=True, nogil=True)
def unshuffle(src: np.ndarray, item: int, out: np.ndarray) -> None:
    """Undo HDF5's byte shuffle of ``item``-byte elements: ``src`` holds every element's first byte, then every
    second byte, ...; ``out`` (uint8, the same length) gets the elements back. Bytes past the last whole element
    stay at the end, as HDF5 leaves them; one element or one-byte elements are not shuffled at all."""
    _byte_planes(src, item, out, False)


@njit(cache=True, nogil=True, inline="always")
def _byte_planes(src, item, out, to_planes):
    """Elements of ``item`` bytes to byte planes (``to_planes``: the shuffle) or back (the unshuffle), one plane at
    a time (the planes' side read or written in order). Inlined with ``to_planes`` a constant: each caller's loop
    has no branch."""
    n = len(src)
    count = n // item
    if item <= 1 or count <= 1:
        out[:] = src
        return
    for b in range(item):
        base = b * count
        for i in range(count):
            if to_planes:
                out[base + i] = src[i * item + b]
            else:
                out[i * item + b] = src[base + i]
    whole = count * item
    out[whole:] = src[whole:]


@njit(cache=True, nogil=True)
def lzf_decompress(src: np.ndarray, out: np.ndarray) -> int:
    """Decode LZF ``src`` (uint8) into ``out``; return the bytes written, or -1 if ``src`` is not LZF that fits
    ``out`` (liblzf's ``lzf_decompress``: a control byte below 32 starts a literal run of that many bytes plus 1,
    else a back reference of ``ctrl >> 5`` (7: plus the next byte) plus 2 bytes, at an offset of 13 bits)."""
    ip = 0
    op = 0
    n_in = len(src)
    n_out = len(out)
    while ip < n_in:
        ctrl = int(src[ip])
        ip += 1
        if ctrl < 32:  # literal run
            ctrl += 1
            if op + ctrl > n_out or ip + ctrl > n_in:
                return -1
            out[op : op + ctrl] = src[ip : ip + ctrl]
            op += ctrl
            ip += ctrl
        else:  # back reference
            length = ctrl >> 5
            ref = op - ((ctrl & 0x1F) << 8) - 1
            if ip >= n_in:
                return -1
            if length == 7:
                length += int(src[ip])
                ip += 1
                if ip >= n_in:
                    return -1
            ref -= int(src[ip])
            ip += 1
            length += 2
            if op + length > n_out or ref < 0:
                return -1
            for k in range(length):  # byte by byte: the reference may overlap what it writes
                out[op + k] = out[ref + k]
            op += length
    return op
