"""Streaming LIBSVM/svmlight reader: a file of any size as a sequence of parsed CSR chunks.

The file is read in chunks of whole lines (plain, gzip, bzip2 or xz, recognized by their magic
bytes). A reader thread reads and decompresses ahead while the compiled tokenizer parses, and
chunks are parsed by a small thread pool (the kernel releases the GIL) and handed out in file order.
Memory is bounded by ``(workers + 2) * chunk_bytes`` of text plus the parsed chunks in flight.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import queue
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from blocksvm.errors import InputFormatError
from blocksvm.io import _parse_kernels as K
from blocksvm.io._float_kernels import EXACT_POWERS_OF_TEN, POWERS_OF_FIVE
from blocksvm.rows import Rows

CHUNK_BYTES = 8 << 20

_MAGIC = {  # magic bytes -> opener of a binary stream
    b"\x1f\x8b": lambda stream: gzip.GzipFile(fileobj=stream, mode="rb"),
    b"BZh": bz2.BZ2File,
    b"\xfd7zXZ\x00": lzma.LZMAFile,
}

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"

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


@dataclass
class ParsedChunk(Rows):
    """Rows parsed from consecutive lines of a LIBSVM file: :class:`~blocksvm.rows.Rows` whose
    ``indices`` are as written in the file (not shifted to zero-based) and whose ``lines`` are
    1-based line numbers in the (decompressed) file, with what the parse saw.

    Attributes
    ----------
    max_index, min_index : int
        Largest and smallest feature index seen (-1 and 2**31 when there is none).
    skipped : list of InputFormatError
        Lines skipped because they were malformed (only with ``skip_bad_lines``): at most the first
        one of the chunk is kept, ``n_skipped`` counts them all.
    n_skipped : int
    text_bytes : int
        Bytes of text this chunk came from.
    source_pos : int
        Bytes of the file on disk (compressed size if compressed) consumed up to this chunk.
    """

    max_index: int = -1
    min_index: int = 2**31
    skipped: list = field(default_factory=list)
    n_skipped: int = 0
    text_bytes: int = 0
    source_pos: int = 0


class _CountingReader(io.RawIOBase):
    """A raw file that remembers how many bytes were read, for progress through compressed files.

    Closing it closes the file it reads (unless ``owns`` is false: standard input stays open).
    """

    def __init__(self, raw, owns: bool = True):
        self.raw, self.owns = raw, owns
        self.consumed = 0

    def close(self) -> None:
        if self.owns and not self.closed:
            self.raw.close()
        super().close()

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self.raw.readinto(b)
        self.consumed += n
        return n


def open_input(path: str | os.PathLike):
    """Open a LIBSVM file for binary reading, decompressing gzip, bzip2 or xz by magic bytes.

    Returns ``(stream, counter)``: read text from ``stream``; ``counter.consumed`` is the number of
    bytes taken from the file on disk so far. Close both when done (a decompressor leaves the file
    it reads open; ``counter.close()`` closes it). ``"-"`` is standard input (compressed or not).
    Raises ``InputFormatError`` for a missing file.
    """
    if os.fspath(path) == "-":
        return _open_standard_input()
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed by the caller through the counter
    except FileNotFoundError:
        raise InputFormatError(path, 0, "no such file") from None
    except IsADirectoryError:
        store = os.path.exists(os.path.join(path, "manifest.json"))
        what = "a block store (already converted)" if store else "a directory"
        raise InputFormatError(path, 0, f"is {what}, not a LIBSVM text file") from None
    except PermissionError:
        raise InputFormatError(path, 0, "permission denied") from None
    head = raw.read(8)
    raw.seek(0)
    if head.startswith(_HDF5_MAGIC):
        raw.close()
        raise InputFormatError(path, 0, "is an HDF5 file (a blocksvm model, block or checkpoint?), not LIBSVM text")
    counter = _CountingReader(raw)
    buffered = io.BufferedReader(counter, buffer_size=1 << 20)
    for magic, opener in _MAGIC.items():
        if head.startswith(magic):
            return opener(buffered), counter
    return buffered, counter


def _open_standard_input():
    """Standard input as ``open_input`` returns a file: the magic bytes are peeked, not read."""
    raw = sys.stdin.buffer
    head = raw.peek(8)[:8]
    counter = _CountingReader(raw, owns=False)
    buffered = io.BufferedReader(counter, buffer_size=1 << 20)
    for magic, opener in _MAGIC.items():
        if head.startswith(magic):
            return opener(buffered), counter
    return buffered, counter


def iter_line_chunks(stream, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[np.ndarray, int]]:
    """Yield ``(text, first_line)`` pieces of ``stream`` that end at a line boundary.

    ``text`` is a uint8 array filled by ``readinto``, with no further copy; the partial line at its
    end starts the next piece.
    """
    carry = np.empty(0, np.uint8)
    first_line = 1
    while True:
        text = np.empty(len(carry) + chunk_bytes, np.uint8)
        text[: len(carry)] = carry
        end = len(carry) + _read_into(stream, text[len(carry) :])
        if end == len(carry):
            if len(carry):
                yield carry, first_line
            return
        cut = K.last_newline(text[:end])
        if cut < 0:  # a line longer than a chunk: read on
            carry = text[:end]
            continue
        yield text[: cut + 1], first_line
        first_line += K.count_lines_and_pairs(text[: cut + 1])[0]  # without the GIL
        carry = text[cut + 1 : end].copy()


def _read_into(stream, buffer: np.ndarray) -> int:
    """Fill ``buffer`` from ``stream``; fewer bytes only at the end of the stream."""
    view = memoryview(buffer)
    filled = 0
    while filled < len(view):
        n = stream.readinto(view[filled:])
        if not n:
            break
        filled += n
    return filled


def _line_text(buf: np.ndarray, start: int) -> str:
    end = start
    newline = np.flatnonzero(buf[start:] == 10)
    end = start + (newline[0] if len(newline) else len(buf) - start)
    return bytes(buf[start:end]).decode("utf-8", "replace").rstrip("\r")


CSV_REASON = "looks like CSV (commas between values), not LIBSVM text (label index:value index:value ...)"


def _error_at(path, buf, code, line, t_start, t_end) -> InputFormatError:
    token = bytes(buf[t_start:t_end]).decode("utf-8", "replace")
    if code == K.BAD_LABEL and "," in token:  # a CSV header or row: one line that says so, no echo of the line
        return InputFormatError(path, line, CSV_REASON)
    line_start = int(t_start)
    while line_start > 0 and buf[line_start - 1] != 10:
        line_start -= 1
    return InputFormatError(path, line, _REASONS[code].format(token=token), _line_text(buf, line_start))


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
    """Parse whole lines of LIBSVM text.

    Parameters
    ----------
    text : bytes or ndarray of uint8
        Whole lines; the last may lack its newline.
    first_line : int
        Line number of the first line of ``text`` (for messages and ``ParsedChunk.lines``).
    path : str
        File name for messages.
    one_based : bool, default=False
        Reject index 0. Otherwise any index >= 0 is accepted.
    skip_bad_lines : bool, default=False
        Skip malformed lines and count them instead of raising.
    dtype : float32 or float64
        Type of the returned values. Values overflowing it are errors.

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
    buf.flags.writeable = False  # one array type whatever the text came in: numba compiles the parser once, not twice
    max_rows, max_nnz = K.count_lines_and_pairs(buf)
    indptr = np.empty(max_rows + 1, np.int64)
    indices = np.empty(max_nnz, np.int32)
    values = np.empty(max_nnz, dtype)  # the kernel rounds to float32 as it stores
    labels = np.empty(max_rows, np.float64)
    lines = np.empty(max_rows, np.int64)
    row_starts = np.empty(max_rows, np.int64)
    slow_slots = np.empty(max_nnz + max_rows, np.int64)
    error = np.zeros(4, np.int64)
    n_rows, nnz, n_slow, n_skipped, max_index, min_index = K.parse_lines(
        buf,
        first_line,
        1 if one_based else 0,
        skip_bad_lines,
        indptr,
        indices,
        values,
        labels,
        lines,
        row_starts,
        slow_slots,
        error,
        POWERS_OF_FIVE,
        EXACT_POWERS_OF_TEN,
    )
    skipped = []
    if error[0] != K.OK:
        err = _error_at(path, buf, *error)
        if not skip_bad_lines:
            raise err
        skipped.append(err)
    chunk = ParsedChunk(
        indptr[: n_rows + 1],
        indices[:nnz],
        values[:nnz],
        labels[:n_rows],
        lines[:n_rows],
        max_index=int(max_index),
        min_index=int(min_index),
        skipped=skipped,
        n_skipped=int(n_skipped),
        text_bytes=text_bytes,
        source_pos=source_pos,
    )
    if n_slow:
        _convert_slow(chunk, buf, row_starts, slow_slots[:n_slow])
    _check_finite(chunk, path, skip_bad_lines)
    return chunk


def _convert_slow(chunk: ParsedChunk, buf, row_starts, slots) -> None:
    """Convert the few numbers the kernel left to Python's exact ``float`` (which may overflow)."""
    with np.errstate(over="ignore"):
        for slot in slots:
            if slot < 0:
                row = -slot - 1
                chunk.labels[row] = float(_row_tokens(buf, row_starts[row])[0])
                continue
            row = np.searchsorted(chunk.indptr, slot, side="right") - 1
            wanted = int(chunk.indices[slot])
            for pair in _row_tokens(buf, row_starts[row])[1:]:
                index, _, value = pair.partition(":")
                if index != "qid" and int(index) == wanted:  # int(): "007" and "+7" are 7
                    chunk.data[slot] = float(value)
                    break


def _row_tokens(buf: np.ndarray, start: int) -> list[str]:
    """The tokens of the line at ``start``, without its comment."""
    return _line_text(buf, start).split("#")[0].split()


def _check_finite(chunk: ParsedChunk, path: str, skip_bad_lines: bool) -> None:
    """An infinite value or label is an error of its line.

    The kernel rejects literals that are infinite in float64, so what is left are values beyond
    float32 (rounded as they were stored) and long literals beyond float64 (converted by ``float``).
    """
    bad_rows = ~np.isfinite(chunk.labels)
    bad_values = np.flatnonzero(~np.isfinite(chunk.data))
    bad_rows[np.searchsorted(chunk.indptr, bad_values, side="right") - 1] = True
    if not bad_rows.any():
        return
    first = int(np.argmax(bad_rows))
    if not np.isfinite(chunk.labels[first]):
        reason = "label is too large for float64"
    elif chunk.data.dtype == np.float32:
        reason = "a value does not fit in float32 (convert with --dtype float64)"
    else:
        reason = "a value is too large for float64"
    error = InputFormatError(path, chunk.lines[first], reason)
    if not skip_bad_lines:
        raise error
    _keep_rows(chunk, ~bad_rows)
    chunk.skipped.append(error)
    chunk.n_skipped += int(bad_rows.sum())


def _keep_rows(chunk: ParsedChunk, keep: np.ndarray) -> None:
    lengths = np.diff(chunk.indptr)
    keep_nnz = np.repeat(keep, lengths)
    chunk.indptr = np.concatenate(([0], np.cumsum(lengths[keep])))
    chunk.indices = chunk.indices[keep_nnz]
    chunk.data = chunk.data[keep_nnz]
    chunk.labels = chunk.labels[keep]
    chunk.lines = chunk.lines[keep]
    if chunk.weights is not None:
        chunk.weights = chunk.weights[keep]


def iter_parsed(
    path: str | os.PathLike,
    *,
    one_based: bool = False,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    chunk_bytes: int = CHUNK_BYTES,
    workers: int = 2,
) -> Iterator[ParsedChunk]:
    """Parse a LIBSVM file chunk by chunk, in file order.

    Reading/decompression runs in a thread ahead of the parser, and up to ``workers`` chunks are
    parsed at once (the compiled kernel releases the GIL). See :func:`parse_chunk` for the
    parameters and errors.
    """
    path = os.fspath(path)

    def parse(text, first_line, pos):
        return parse_chunk(
            text,
            first_line,
            path,
            one_based=one_based,
            skip_bad_lines=skip_bad_lines,
            dtype=dtype,
            source_pos=pos,
        )

    return iter_chunks(path, parse, chunk_bytes=chunk_bytes, workers=workers)


def iter_chunks(path: str, parse, *, chunk_bytes: int = CHUNK_BYTES, workers: int = 2) -> Iterator[ParsedChunk]:
    """``parse(text, first_line, source_pos)`` of every chunk of whole lines of the text file ``path``, in file
    order, with :func:`iter_parsed`'s reader thread and parser pool: the one reading loop of every text format."""
    stream, counter = open_input(path)
    texts: queue.Queue = queue.Queue(maxsize=workers + 1)
    stop = threading.Event()

    def put(item) -> bool:
        """Queue ``item`` unless the consumer has stopped (then a full queue never drains)."""
        while not stop.is_set():
            try:
                texts.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read_ahead():
        try:
            for text, first_line in iter_line_chunks(stream, chunk_bytes):
                if not put((text, first_line, counter.consumed)):
                    return
            put(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put(exc)

    reader = threading.Thread(target=read_ahead, name="blocksvm-read", daemon=True)
    reader.start()
    pending = []
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="blocksvm-parse") as pool:
            done_reading = False
            while True:
                while not done_reading and len(pending) < workers:
                    item = texts.get()
                    if item is None:
                        done_reading = True
                    elif isinstance(item, BaseException):
                        raise _read_error(path, item)
                    else:
                        pending.append(pool.submit(parse, *item))
                if not pending:
                    return
                yield pending.pop(0).result()
    finally:
        stop.set()
        for future in pending:
            future.cancel()
        reader.join()
        stream.close()
        counter.close()


def _read_error(path: str, exc: BaseException) -> BaseException:
    if isinstance(exc, (OSError, EOFError, lzma.LZMAError)):
        return InputFormatError(path, 0, f"cannot be read: {exc}")
    return exc


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
