"""Vowpal Wabbit text, read chunk by chunk into hashed CSR rows with their importance weights.

A VW user's file runs as it is: ``label [importance] ['tag]|namespace name:value name ...`` (the format and the
hash are laid out in :mod:`blocksvm.io._vw_kernels`). Every name becomes a column of a space of ``2**bits``
columns by VW's own hash, MurmurHash3 (x86, 32-bit) seeded with its namespace's hash: the namespace is part of the
key, and two names may share a column (a collision; more likely with fewer bits). Labels are kept as written
(``-1``/``1`` or ``0``/``1`` for classification, any number for regression); a line without an importance weight
weighs 1.

The store and the model keep how the text was read (:class:`Hashing`'s :meth:`~Hashing.to_dict`: the format, the
hash, the bits), so that ``predict`` and ``stream`` read new text into the same columns, and refuse text declared
otherwise. :func:`iter_text` is the one reader of every text format but CSV: LIBSVM's or VW's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from blocksvm.errors import InputFormatError, ParameterError
from blocksvm.io import _vw_kernels as K
from blocksvm.io._float_kernels import EXACT_POWERS_OF_TEN, POWERS_OF_FIVE
from blocksvm.io.libsvm import CHUNK_BYTES, ParsedChunk, _check_finite, _line_text, iter_chunks, iter_parsed
from blocksvm.io.weights import check_weights

FORMATS = ("libsvm", "vw")
HASH = "murmurhash3_x86_32"
"""The name of the hash the manifest and the model record (MurmurHash3, x86 32-bit variant, VW's)."""
DEFAULT_BITS = 18
"""VW's default ``-b``: 2**18 columns."""
MAX_BITS = 30
"""At most 2**30 columns: a store's width must fit its int32 columns (2**31 - 1)."""

_INITIAL_SLOW = 64  # slots for numbers left to Python; a chunk with more is parsed again with room for all

_REASONS = {
    K.BAD_LABEL: "label {token!r} is not a number",
    K.NONFINITE_LABEL: "label {token!r} is not a finite number",
    K.NO_LABEL: "no label before the first '|' (a last word that touches the bar is VW's tag, not a label)",
    K.BAD_WEIGHT: "importance weight {token!r} is not a number",
    K.NEGATIVE_WEIGHT: "importance weight {token!r} is negative: instance weights must be >= 0",
    K.NONFINITE_WEIGHT: "importance weight {token!r} is not a finite number",
    K.EXTRA_HEADER: "{token!r} is one word too many before the first '|': VW's label, importance weight and tag are "
    "read (an initial prediction, VW's third number, is not supported)",
    K.BAD_NAMESPACE_WEIGHT: "the weight of namespace {token!r} is not a number (|namespace:weight)",
    K.EMPTY_NAME: "feature {token!r} has no name",
    K.BAD_VALUE: "value in {token!r} is not a number",
    K.NONFINITE_VALUE: "value in {token!r} is NaN or infinite",
}
_LIBSVM_LOOK = (
    "{token!r} before the first '|' looks like LIBSVM's index:value: VW's features follow a '|' (convert LIBSVM text "
    "without --format vw)"
)


@dataclass(frozen=True)
class Hashing:
    """How VW text becomes columns: names hashed into ``2**bits`` columns.

    Attributes
    ----------
    bits : int
        Columns are the hash's lowest ``bits`` bits (1 to 30; VW's ``-b``, default 18).
    hash_all : bool
        Hash names made of digits too (VW's ``--hash all``); by default such a name is its integer plus its
        namespace's hash (VW's ``--hash strings``), so integer-indexed features keep their index in the default
        namespace (modulo ``2**bits``).
    """

    bits: int = DEFAULT_BITS
    hash_all: bool = False

    def __post_init__(self) -> None:
        if (
            isinstance(self.bits, bool)
            or not isinstance(self.bits, (int, np.integer))
            or not 1 <= self.bits <= MAX_BITS
        ):
            raise ParameterError(f"hash_bits must be an integer in 1..{MAX_BITS} (--hash-bits), not {self.bits!r}")

    @property
    def n_features(self) -> int:
        return 1 << int(self.bits)

    def to_dict(self) -> dict:
        """The record a store's manifest (``text``) and a model keep."""
        return {"format": "vw", "hash": HASH, "bits": int(self.bits), "hash_all": bool(self.hash_all)}

    @classmethod
    def from_dict(cls, record: dict, where: str) -> Hashing:
        """The hashing a manifest or a model recorded; ``where`` names it in the refusal of one this blocksvm does not
        know."""
        if record.get("format") != "vw" or record.get("hash") != HASH:
            raise ParameterError(
                f"{where} records {record.get('format')!r} text hashed by {record.get('hash')!r}; this blocksvm reads "
                f"VW text hashed by {HASH} only"
            )
        return cls(int(record["bits"]), bool(record.get("hash_all", False)))


def describe(text_format: dict | None) -> str:
    """A text format record in words: ``LIBSVM indices`` or ``VW names hashed into 2^18 columns (...)``."""
    if text_format is None:
        return "LIBSVM text (integer indices)"
    spelled = " and digit names" if text_format.get("hash_all") else ""
    return f"VW text, names{spelled} hashed into 2^{text_format['bits']} columns by {text_format['hash']}"


def text_format_of(text_format: str = "libsvm", hash_bits: int | None = None, hash_all: bool = False) -> dict | None:
    """The record of a text format as a user names it: None for LIBSVM's indices, :meth:`Hashing.to_dict` for VW
    (``hash_bits`` None: VW's default 18).

    Raises
    ------
    ParameterError
        An unknown format, or hashing options for LIBSVM text (whose indices are columns already).
    """
    if text_format not in FORMATS:
        raise ParameterError(f"the text format must be one of {', '.join(FORMATS)} (--format), not {text_format!r}")
    if text_format == "libsvm":
        if hash_bits is not None or hash_all:
            raise ParameterError(
                "--hash-bits and --hash-all hash VW's feature names: give --format vw (LIBSVM's indices are columns)"
            )
        return None
    return Hashing(DEFAULT_BITS if hash_bits is None else hash_bits, bool(hash_all)).to_dict()


def parse_vw_chunk(
    text: bytes | np.ndarray,
    first_line: int,
    path: str = "<text>",
    *,
    hashing: Hashing = Hashing(),  # noqa: B008 - frozen
    skip_bad_lines: bool = False,
    dtype=np.float32,
    source_pos: int = 0,
) -> ParsedChunk:
    """Parse whole lines of VW text into hashed rows with their importance weights.

    Parameters
    ----------
    text : bytes or ndarray of uint8
        Whole lines; the last may lack its newline.
    first_line : int
        Line number of the first line of ``text`` (for messages and ``ParsedChunk.lines``).
    path : str
        File name for messages.
    hashing : Hashing
    skip_bad_lines : bool, default=False
        Skip malformed lines and count them instead of raising.
    dtype : float32 or float64
        Type of the returned values. Values overflowing it are errors.

    Returns
    -------
    ParsedChunk
        Zero-based columns in ``0 .. 2**bits - 1``, increasing along each row; ``weights`` (1 where a line has
        none).

    Raises
    ------
    InputFormatError
        On the first malformed line, naming file, line and what is wrong.
    """
    buf = np.frombuffer(text, dtype=np.uint8)
    text_bytes = len(buf)
    if not text_bytes or buf[-1] != 10:  # the kernel's scans stop at a final newline
        buf = np.append(buf, np.uint8(10))
    buf = buf.view()
    buf.flags.writeable = False  # one array type whatever the text came in: one compilation
    max_rows, max_words = K.count_vw_bounds(buf)
    indptr = np.empty(max_rows + 1, np.int64)
    columns = np.empty(max_words, np.int32)
    values = np.empty(max_words, np.float64)
    labels = np.empty(max_rows, np.float64)
    weights = np.empty(max_rows, np.float64)
    lines = np.empty(max_rows, np.int64)
    error = np.zeros(4, np.int64)
    capacity = _INITIAL_SLOW
    while True:
        slow_kind, slow_at = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
        slow_span, slow_scale = np.empty((capacity, 2), np.int64), np.empty(capacity, np.float64)
        n_rows, nnz, n_slow, n_skipped = K.parse_vw_lines(
            buf,
            first_line,
            np.uint64((1 << hashing.bits) - 1),
            hashing.hash_all,
            skip_bad_lines,
            indptr,
            columns,
            values,
            labels,
            weights,
            lines,
            slow_kind,
            slow_at,
            slow_span,
            slow_scale,
            error,
            POWERS_OF_FIVE,
            EXACT_POWERS_OF_TEN,
        )
        if n_slow <= capacity:
            break
        capacity = int(n_slow)  # rare: parse again with room for every number left to Python
    skipped = []
    if error[0] != K.OK:
        err = _error_at(path, buf, *error)
        if not skip_bad_lines:
            raise err
        skipped.append(err)
    with np.errstate(over="ignore"):
        for kind, at, (start, end), scale in zip(slow_kind[:n_slow], slow_at[:n_slow], slow_span[:n_slow], slow_scale):
            number = float(bytes(buf[start:end]))  # exact where the kernel's 19 digits were not enough
            (labels if kind == K.SLOW_LABEL else weights if kind == K.SLOW_WEIGHT else values)[at] = number * scale
    nnz = K.merge_rows(indptr, columns, values, n_rows)
    columns = columns[:nnz]
    with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused by _check_finite below
        data = values[:nnz].astype(dtype)
    chunk = ParsedChunk(
        indptr[: n_rows + 1],
        columns,
        data,
        labels[:n_rows],
        lines[:n_rows],
        weights[:n_rows],
        max_index=int(columns.max()) if nnz else -1,
        min_index=int(columns.min()) if nnz else 2**31,
        skipped=skipped,
        n_skipped=int(n_skipped),
        text_bytes=text_bytes,
        source_pos=source_pos,
    )
    if n_slow:
        check_weights(chunk.weights, chunk.lines, path)  # a slow weight's sign is only known now
    _check_finite(chunk, path, skip_bad_lines)
    return chunk


def _error_at(path: str, buf: np.ndarray, code: int, line: int, t_start: int, t_end: int) -> InputFormatError:
    token = bytes(buf[t_start:t_end]).decode("utf-8", "replace")
    reason = (_LIBSVM_LOOK if code in (K.BAD_WEIGHT, K.EXTRA_HEADER) and ":" in token else _REASONS[code]).format(
        token=token
    )
    line_start = int(t_start)
    while line_start > 0 and buf[line_start - 1] != 10:
        line_start -= 1
    return InputFormatError(path, line, reason, _line_text(buf, line_start))


def iter_vw(
    path: str | os.PathLike,
    hashing: Hashing = Hashing(),  # noqa: B008 - frozen
    *,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    chunk_bytes: int = CHUNK_BYTES,
    workers: int = 2,
) -> Iterator[ParsedChunk]:
    """Parse a VW text file (plain, .gz, .bz2, .xz, or ``-``) chunk by chunk, in file order, as
    :func:`~blocksvm.io.libsvm.iter_parsed` reads LIBSVM text; see :func:`parse_vw_chunk`."""
    path = os.fspath(path)

    def parse(text, first_line, pos):
        return parse_vw_chunk(
            text, first_line, path, hashing=hashing, skip_bad_lines=skip_bad_lines, dtype=dtype, source_pos=pos
        )

    return iter_chunks(path, parse, chunk_bytes=chunk_bytes, workers=workers)


def iter_text(
    path: str | os.PathLike,
    text_format: dict | None = None,
    *,
    one_based: bool = False,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    chunk_bytes: int = CHUNK_BYTES,
    workers: int = 2,
) -> Iterator[ParsedChunk]:
    """Parse text of either format chunk by chunk, on ``workers`` threads, in file order: LIBSVM's (``text_format``
    None; ``one_based`` as :func:`~blocksvm.io.libsvm.iter_parsed` takes it) or VW's (a :meth:`Hashing.to_dict`
    record)."""
    options = {"skip_bad_lines": skip_bad_lines, "dtype": dtype, "chunk_bytes": chunk_bytes, "workers": workers}
    if text_format is None:
        return iter_parsed(path, one_based=one_based, **options)
    return iter_vw(path, Hashing.from_dict(text_format, os.fspath(path)), **options)
