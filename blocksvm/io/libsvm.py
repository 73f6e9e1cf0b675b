"""LIBSVM/svmlight text: its line grammar for the one text reader (:mod:`blocksvm.io.text`), and the readers of
whole LIBSVM files (:func:`iter_parsed`, :func:`load_libsvm`).

One line of the format is ``<label> [qid:<int>] <index>:<value> <index>:<value> ... [# comment]``, indices
increasing along the line (the compiled row parser: :mod:`blocksvm.io._parse_kernels`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from blocksvm.errors import InputFormatError
from blocksvm.io import _parse_kernels as K
from blocksvm.io.text import CHUNK_BYTES, ParsedChunk, parse_text, read_text

_REASONS = {
    K.BAD_LABEL: "label {token!r} is not a number",
    K.NONFINITE_LABEL: "label {token!r} is not a finite number",
    K.BAD_PAIR: "{token!r} is not an index:value pair",
    K.BAD_INDEX: "feature index in {token!r} is not an integer",
    K.NEGATIVE_INDEX: "feature index in {token!r} is negative",
    K.ZERO_INDEX: "feature index 0 in {token!r}, but the file is read as one-based "
    "(convert without --no-zero-based, or with --zero-based; zero_based='auto' or True in Python)",
    K.INDEX_TOO_LARGE: f"feature index in {{token!r}} is larger than {K.MAX_INDEX}, the largest 32-bit index: "
    "renumber or hash the features into a smaller range",
    K.NOT_INCREASING: "feature indices must increase along a line, but {token!r} follows a larger index",
    K.DUPLICATE_INDEX: "feature index in {token!r} appears twice on the line",
    K.BAD_VALUE: "value in {token!r} is not a number",
    K.NONFINITE_VALUE: "value in {token!r} is NaN or infinite",
    K.BAD_QID: "{token!r} is not a valid qid:<integer> before the features",
}


VW_REASON = (
    "{token!r} is not an index:value pair: it looks like Vowpal Wabbit text (features after a '|namespace'): read it "
    "with --format vw (text_format='vw' in Python)"
)
CSV_REASON = "looks like CSV (commas between values), not LIBSVM text (label index:value index:value ...)"


@dataclass(frozen=True)
class LibsvmGrammar:
    """LIBSVM's line grammar (:class:`~blocksvm.io.text.Grammar`): ``one_based`` rejects index 0."""

    one_based: bool = False
    weighted = False

    def bounds(self, buf: np.ndarray) -> tuple[int, int]:
        return K.count_lines_and_pairs(buf)

    def values_dtype(self, dtype) -> np.dtype:
        return np.dtype(dtype)  # the kernel rounds to float32 as it stores

    def parse(self, buf, first_line, skip_bad, out, slow, error) -> tuple:
        min_index = 1 if self.one_based else 0
        return K.parse_libsvm_lines(buf, first_line, min_index, skip_bad, out, slow, error)

    def finish(self, out: tuple, n_rows: int) -> int:
        return int(out[0][n_rows])

    def reason(self, code: int, token: str) -> tuple[str, bool]:
        if code == K.BAD_LABEL and "," in token:  # a CSV header or row: one line that says so, no echo of the line
            return CSV_REASON, False
        if code in (K.BAD_PAIR, K.BAD_LABEL) and token.startswith("|"):  # VW's namespace bar
            return VW_REASON.format(token=token), True
        return _REASONS[code].format(token=token), True

    def check(self, chunk: ParsedChunk, path: str, n_slow: int) -> None:
        pass


def parse_chunk(
    text: bytes | np.ndarray,
    first_line: int,
    path: str = "<text>",
    *,
    one_based: bool = False,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    source_pos: int = 0,
) -> ParsedChunk:
    """Parse whole lines of LIBSVM text: :func:`~blocksvm.io.text.parse_text` (the parameters, the errors) by
    :class:`LibsvmGrammar`; ``one_based`` rejects index 0 (otherwise any index >= 0 is accepted). The chunk's indices
    are as written."""
    return parse_text(
        LibsvmGrammar(one_based),
        text,
        first_line,
        path,
        skip_bad_lines=skip_bad_lines,
        dtype=dtype,
        source_pos=source_pos,
    )


def iter_parsed(
    path: str | os.PathLike,
    *,
    one_based: bool = False,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    chunk_bytes: int = CHUNK_BYTES,
    workers: int = 2,
) -> Iterator[ParsedChunk]:
    """Parse a LIBSVM file chunk by chunk, in file order (:func:`~blocksvm.io.text.read_text`: a reader thread
    ahead of ``workers`` parsers). See :func:`parse_chunk` for the parameters and errors."""
    options = {"skip_bad_lines": skip_bad_lines, "dtype": dtype, "chunk_bytes": chunk_bytes, "workers": workers}
    return read_text(path, LibsvmGrammar(one_based), **options)


def load_libsvm(
    path: str | os.PathLike,
    n_features: int | None = None,
    *,
    zero_based: bool | str = "auto",
    dtype=np.float64,
):
    """Read a whole (small) LIBSVM file into memory, like ``sklearn.datasets.load_svmlight_file``.

    Meant for tests and small files; large files go through :func:`blocksvm.convert`.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
    y : ndarray of float64, shape (n_rows,)
    lines : ndarray of int64, shape (n_rows,)
    """
    import scipy.sparse as sp

    chunks = list(iter_parsed(path, one_based=zero_based is False, dtype=dtype))
    offset = 0
    pieces = [np.zeros(1, np.int64)]
    for chunk in chunks:
        pieces.append(chunk.indptr[1:] + offset)
        offset += chunk.nnz
    indptr = np.concatenate(pieces)
    indices = np.concatenate([c.indices for c in chunks] or [np.zeros(0, np.int32)])
    values = np.concatenate([c.data for c in chunks] or [np.zeros(0, dtype)])
    labels = np.concatenate([c.labels for c in chunks] or [np.zeros(0)])
    lines = np.concatenate([c.lines for c in chunks] or [np.zeros(0, np.int64)])
    min_index = min((c.min_index for c in chunks), default=1)
    base = resolve_index_base(zero_based, min_index)
    indices = indices - base
    width = int(indices.max()) + 1 if len(indices) else 0
    if n_features is not None:
        if n_features < width:
            raise InputFormatError(
                path, 0, f"has feature index {width - 1 + base}, more than n_features={n_features} allows"
            )
        width = n_features
    X = sp.csr_matrix((values, indices, indptr), shape=(len(labels), width))
    return X, labels, lines


def resolve_index_base(zero_based: bool | str, min_index: int) -> int:
    """The index base: 0 or 1. ``'auto'`` means zero-based iff some index is 0 (scikit-learn's rule)."""
    if zero_based == "auto":
        return 0 if min_index == 0 else 1
    return 0 if zero_based else 1
