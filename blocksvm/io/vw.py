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

from blocksvm.errors import ParameterError
from blocksvm.io import _vw_kernels as K
from blocksvm.io.libsvm import LibsvmGrammar
from blocksvm.io.text import CHUNK_BYTES, ParsedChunk, parse_text, read_text
from blocksvm.io.weights import check_weights

FORMATS = ("libsvm", "vw")
HASH = "murmurhash3_x86_32"
"""The name of the hash the manifest and the model record (MurmurHash3, x86 32-bit variant, VW's)."""
DEFAULT_BITS = 18
"""VW's default ``-b``: 2**18 columns."""
MAX_BITS = 30
"""At most 2**30 columns: a store's width must fit its int32 columns (2**31 - 1)."""

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


@dataclass(frozen=True)
class VWGrammar:
    """VW's line grammar (:class:`~blocksvm.io.text.Grammar`), names hashed by ``hashing``."""

    hashing: Hashing = Hashing()  # noqa: RUF009 - frozen
    weighted = True

    def bounds(self, buf: np.ndarray) -> tuple[int, int]:
        return K.count_vw_bounds(buf)

    def values_dtype(self, dtype) -> np.dtype:
        return np.dtype(np.float64)  # summed by merge_rows, then rounded to dtype

    def parse(self, buf, first_line, skip_bad, out, slow, error) -> tuple:
        mask = np.uint64((1 << self.hashing.bits) - 1)
        return K.parse_vw_lines(buf, first_line, mask, self.hashing.hash_all, skip_bad, out, slow, error)

    def finish(self, out: tuple, n_rows: int) -> int:
        indptr, columns, values = out[0], out[1], out[2]
        return K.merge_rows(indptr, columns, values, n_rows)

    def reason(self, code: int, token: str) -> tuple[str, bool]:
        looks_libsvm = code in (K.BAD_WEIGHT, K.EXTRA_HEADER) and ":" in token
        return (_LIBSVM_LOOK if looks_libsvm else _REASONS[code]).format(token=token), True

    def check(self, chunk: ParsedChunk, path: str, n_slow: int) -> None:
        if n_slow:
            check_weights(chunk.weights, chunk.lines, path)  # a slow weight's sign is only known now


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
    """Parse whole lines of VW text into hashed rows with their importance weights: :func:`~blocksvm.io.text.
    parse_text` (the parameters, the errors) by :class:`VWGrammar` of ``hashing``. The chunk's columns are zero-based,
    in ``0 .. 2**bits - 1`` and increasing along each row; its ``weights`` are 1 where a line has none."""
    return parse_text(
        VWGrammar(hashing), text, first_line, path, skip_bad_lines=skip_bad_lines, dtype=dtype, source_pos=source_pos
    )


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
    options = {"skip_bad_lines": skip_bad_lines, "dtype": dtype, "chunk_bytes": chunk_bytes, "workers": workers}
    return read_text(path, VWGrammar(hashing), **options)


def iter_text(
    path: str | os.PathLike, text_format: dict | None = None, *, one_based: bool = False, **options
) -> Iterator[ParsedChunk]:
    """Parse text of either format chunk by chunk, on ``workers`` threads, in file order: LIBSVM's (``text_format``
    None; ``one_based`` as :func:`~blocksvm.io.libsvm.iter_parsed` takes it) or VW's (a :meth:`Hashing.to_dict`
    record). ``options``: :func:`~blocksvm.io.text.read_text`'s (``skip_bad_lines``, ``dtype``, ``chunk_bytes``,
    ``workers``)."""
    if text_format is None:
        return read_text(path, LibsvmGrammar(one_based), **options)
    return read_text(path, VWGrammar(Hashing.from_dict(text_format, os.fspath(path))), **options)
