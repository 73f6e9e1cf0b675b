"""The one text reader: a file of any size as a sequence of parsed CSR chunks, by a format's line grammar.

The file is read in chunks of whole lines (plain, gzip, bzip2 or xz, recognized by their magic bytes). A reader
thread reads and decompresses ahead while the compiled line loop (:mod:`blocksvm.io._text_kernels`) parses, and
chunks are parsed by a small thread pool (the kernel releases the GIL) and handed out in file order. Memory is
bounded by ``(workers + 2) * chunk_bytes`` of text plus the parsed chunks in flight.

What differs between formats is a :class:`Grammar`: LIBSVM's (:mod:`blocksvm.io.libsvm`) and VW's
(:mod:`blocksvm.io.vw`). Everything else is here once: the reading, the chunks, the numbers left to Python, the
error that names the file, the line and the bad token, the check of what the kernel cannot see (values beyond
float32), and the skipping of bad lines.
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
from typing import Protocol

import numpy as np

from blocksvm._page_cache import read_soon_fd
from blocksvm.errors import InputFormatError
from blocksvm.io import _text_kernels as K
from blocksvm.rows import Rows

CHUNK_BYTES = 8 << 20

_MAGIC = {  # magic bytes -> opener of a binary stream
    b"\x1f\x8b": lambda stream: gzip.GzipFile(fileobj=stream, mode="rb"),
    b"BZh": bz2.BZ2File,
    b"\xfd7zXZ\x00": lzma.LZMAFile,
}

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_SLOW_ROOM = 64  # numbers left to Python recorded in a parse; a chunk with more is parsed again with room for all


@dataclass
class ParsedChunk(Rows):
    """Rows parsed from consecutive lines of a text file: :class:`~blocksvm.rows.Rows` whose ``indices`` are as
    the grammar gives them (LIBSVM's as written in the file, not shifted to zero-based; VW's hashed columns) and
    whose ``lines`` are 1-based line numbers in the (decompressed) file, with what the parse saw.

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


@dataclass
class Skipped:
    """The malformed lines a read skipped (``skip_bad_lines``): how many, and the first one's message."""

    lines: int = 0
    first: str | None = None

    def add(self, chunk: ParsedChunk) -> None:
        self.lines += chunk.n_skipped
        if self.first is None and chunk.skipped:
            self.first = str(chunk.skipped[0]).splitlines()[0]

    def summary(self) -> dict:
        return {"skipped_lines": self.lines, "first_skipped": self.first} if self.lines else {}


class Grammar(Protocol):
    """A text format's line grammar: what :func:`parse_text` asks of a format.

    Attributes
    ----------
    weighted : bool
        Its lines carry instance weights (the chunks' ``weights``; else None).
    """

    weighted: bool

    def bounds(self, buf: np.ndarray) -> tuple[int, int]:
        """The newlines of ``buf`` (a bound on its rows) and an upper bound on its entries."""

    def values_dtype(self, dtype) -> np.dtype:
        """The type its kernel stores values in, for chunks of ``dtype``."""

    def parse(self, buf: np.ndarray, first_line: int, skip_bad: bool, out: tuple, slow: tuple, error) -> tuple:
        """Its kernel over ``buf``: ``(n_rows, nnz, n_slow, n_skipped)`` (:func:`._text_kernels.parse_lines`)."""

    def finish(self, out: tuple, n_rows: int) -> int:
        """The entries made final once Python's numbers are in (VW's are merged): returns their count."""

    def reason(self, code: int, token: str) -> tuple[str, bool]:
        """The error ``code`` at ``token`` in words, and whether the line follows it in the message."""

    def check(self, chunk: ParsedChunk, path: str, n_slow: int) -> None:
        """Refuse what only Python's numbers show (a negative weight left to Python)."""


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
    """Open a text file for binary reading, decompressing gzip, bzip2 or xz by magic bytes.

    Returns ``(stream, counter)``: read text from ``stream``; ``counter.consumed`` is the number of
    bytes taken from the file on disk so far. Close both when done (a decompressor leaves the file
    it reads open; ``counter.close()`` closes it). ``"-"`` is standard input (compressed or not).
    Raises ``InputFormatError`` for a missing file.
    """
    if os.fspath(path) == "-":
        raw = sys.stdin.buffer
        return _decompressed(raw.peek(8)[:8], _CountingReader(raw, owns=False))  # peeked, not read
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
    return _decompressed(head, _CountingReader(raw))


def _decompressed(head: bytes, counter: _CountingReader):
    """``(stream, counter)`` of a file whose first bytes are ``head``: decompressed if they are a magic number."""
    buffered = io.BufferedReader(counter, buffer_size=1 << 20)
    for magic, opener in _MAGIC.items():
        if head.startswith(magic):
            return opener(buffered), counter
    return buffered, counter


def iter_line_chunks(stream, chunk_bytes: int = CHUNK_BYTES, count=None) -> Iterator[tuple[np.ndarray, int, tuple]]:
    """Yield ``(text, first_line, counts)`` pieces of ``stream`` that end at a line boundary.

    ``text`` is a uint8 array filled by ``readinto``, with no further copy; the partial line at its
    end starts the next piece. ``counts`` is ``count(text)``, whose first item is its newlines (a grammar's
    :meth:`Grammar.bounds`), else ``(newlines,)``: one pass over the text gives the next piece's first line and the
    parser's bounds.
    """
    count = count or (lambda text: (K.count_newlines(text),))
    carry = np.empty(0, np.uint8)
    first_line = 1
    while True:
        text = np.empty(len(carry) + chunk_bytes, np.uint8)
        text[: len(carry)] = carry
        end = len(carry) + _read_into(stream, text[len(carry) :])
        if end == len(carry):
            if len(carry):
                yield carry, first_line, count(carry)
            return
        cut = K.last_newline(text[:end])
        if cut < 0:  # a line longer than a chunk: read on
            carry = text[:end]
            continue
        counts = count(text[: cut + 1])  # without the GIL
        yield text[: cut + 1], first_line, counts
        first_line += int(counts[0])
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


def parse_text(
    grammar: Grammar,
    text: bytes | np.ndarray,
    first_line: int,
    path: str = "<text>",
    *,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    source_pos: int = 0,
    bounds: tuple | None = None,
) -> ParsedChunk:
    """Parse whole lines of text by ``grammar``.

    Parameters
    ----------
    grammar : Grammar
    text : bytes or ndarray of uint8
        Whole lines; the last may lack its newline.
    first_line : int
        Line number of the first line of ``text`` (for messages and ``ParsedChunk.lines``).
    path : str
        File name for messages.
    skip_bad_lines : bool, default=False
        Skip malformed lines and count them instead of raising.
    dtype : float32 or float64
        Type of the returned values. Values overflowing it are errors.
    source_pos : int
        Bytes of the file on disk consumed up to this chunk (the chunk's ``source_pos``).
    bounds : tuple, optional
        ``grammar.bounds(text)``, when the reader counted them already.

    Raises
    ------
    InputFormatError
        On the first malformed line, naming file, line and what is wrong.
    """
    buf = np.frombuffer(text, dtype=np.uint8)
    text_bytes = len(buf)
    max_rows, max_entries = grammar.bounds(buf) if bounds is None else bounds
    if not text_bytes or buf[-1] != 10:  # the kernel's scans stop at a final newline
        buf = np.append(buf, np.uint8(10))
        max_rows += 1
    buf = buf.view()
    buf.flags.writeable = False  # one array type whatever the text came in: numba compiles the parser once, not twice
    out = (
        np.empty(max_rows + 1, np.int64),  # indptr
        np.empty(max_entries, np.int32),  # columns
        np.empty(max_entries, grammar.values_dtype(dtype)),  # values
        np.empty(max_rows, np.float64),  # labels
        np.empty(max_rows, np.float64),  # weights
        np.empty(max_rows, np.int64),  # lines
    )
    error = np.zeros(4, np.int64)
    room = _SLOW_ROOM
    while True:
        slow = (np.empty((room, 4), np.int64), np.empty(room, np.float64))
        n_rows, _, n_slow, n_skipped = grammar.parse(buf, first_line, skip_bad_lines, out, slow, error)
        if n_slow <= room:
            break
        room = int(n_slow)  # rare: parse again with room for every number left to Python
    skipped = []
    if error[0] != K.OK:
        err = _error_at(grammar, path, buf, *error)
        if not skip_bad_lines:
            raise err
        skipped.append(err)
    _convert_slow(buf, out, slow, n_slow)
    nnz = grammar.finish(out, n_rows)
    indptr, columns, values, labels, weights, lines = out
    columns = columns[:nnz]
    min_index, max_index = K.index_range(columns)
    with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused by _check_finite below
        data = values[:nnz].astype(dtype, copy=False)
    chunk = ParsedChunk(
        indptr[: n_rows + 1],
        columns,
        data,
        labels[:n_rows],
        lines[:n_rows],
        weights[:n_rows] if grammar.weighted else None,
        max_index=int(max_index),
        min_index=int(min_index),
        skipped=skipped,
        n_skipped=int(n_skipped),
        text_bytes=text_bytes,
        source_pos=source_pos,
    )
    grammar.check(chunk, path, n_slow)
    _check_finite(chunk, path, skip_bad_lines)
    return chunk


def _convert_slow(buf: np.ndarray, out: tuple, slow: tuple, n_slow: int) -> None:
    """Convert the few numbers the kernel left to Python's exact ``float`` (which may overflow), each to its
    place (a label, a weight or a value) times its scale."""
    where, scales = slow
    targets = {K.SLOW_LABEL: out[3], K.SLOW_WEIGHT: out[4], K.SLOW_VALUE: out[2]}
    with np.errstate(over="ignore"):
        for (kind, at, start, end), scale in zip(where[:n_slow].tolist(), scales[:n_slow].tolist()):
            targets[kind][at] = float(bytes(buf[start:end])) * scale


def _line_text(buf: np.ndarray, start: int) -> str:
    newline = np.flatnonzero(buf[start:] == 10)
    end = start + (newline[0] if len(newline) else len(buf) - start)
    return bytes(buf[start:end]).decode("utf-8", "replace").rstrip("\r")


BINARY = "is not UTF-8 text (a binary file?): blocksvm reads LIBSVM or VW text, plain or .gz, .bz2 or .xz"
_CONTROL = bytes(c for c in range(32) if c not in b"\t\n\v\f\r\x1b")  # (never in a text line)


def _error_at(grammar: Grammar, path: str, buf: np.ndarray, code, line, t_start, t_end) -> InputFormatError:
    line_start = int(t_start)
    while line_start > 0 and buf[line_start - 1] != 10:
        line_start -= 1
    if _binary(buf, line_start):  # a binary file: one line saying so, never its bytes escaped
        return InputFormatError(path, line, BINARY)
    token = bytes(buf[t_start:t_end]).decode("utf-8", "replace")
    reason, shows_line = grammar.reason(int(code), token)
    if not shows_line:
        return InputFormatError(path, line, reason)
    return InputFormatError(path, line, reason, _line_text(buf, line_start))


def _binary(buf: np.ndarray, start: int) -> bool:
    """The line at ``start`` (its first 4 KB) holds control characters, or bytes that are not UTF-8 before a comment
    (a comment in another encoding is text): binary data, not text."""
    newline = np.flatnonzero(buf[start : start + 4096] == 10)
    line = bytes(buf[start : start + (newline[0] if len(newline) else 4096)])
    if any(c in _CONTROL for c in line):
        return True
    data = line.split(b"#", 1)[0]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(data) - 4 or len(data) < len(line)  # (a character cut at 4 KB is text)
    return False


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


def read_text(
    path: str | os.PathLike,
    grammar: Grammar,
    *,
    skip_bad_lines: bool = False,
    dtype=np.float32,
    chunk_bytes: int = CHUNK_BYTES,
    workers: int = 2,
) -> Iterator[ParsedChunk]:
    """Parse the text file ``path`` by ``grammar`` chunk by chunk, in file order (:func:`parse_text` for the
    parameters and errors).

    Reading and decompression run in a thread ahead of the parsers, and up to ``workers`` chunks are parsed at once
    (the compiled kernel releases the GIL).
    """
    path = os.fspath(path)

    def parse(text, first_line, counts, pos):
        options = {"skip_bad_lines": skip_bad_lines, "dtype": dtype, "source_pos": pos, "bounds": counts}
        return parse_text(grammar, text, first_line, path, **options)

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
            if counter.owns:  # the disk reads while the kernels load (the command line asked before its imports)
                read_soon_fd(counter.raw.fileno())
            for text, first_line, counts in iter_line_chunks(stream, chunk_bytes, grammar.bounds):
                if not put((text, first_line, counts, counter.consumed)):
                    return
            put(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put(exc)

    reader = threading.Thread(target=read_ahead, name="blocksvm-read", daemon=True)
    reader.start()
    pending = []
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="blocksvm-parse")
    try:
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
        # Not waited for: a consumer that drops this generator unfinished leaves it to the garbage collector, which
        # can close it inside another thread's start while that thread holds threading's lock of shutdown locks,
        # and joining a parser there (Thread._stop takes that lock) hung the process. A parse still running ends on
        # its own; its chunk is dropped.
        pool.shutdown(wait=False, cancel_futures=True)
        reader.join()
        stream.close()
        counter.close()


def _read_error(path: str, exc: BaseException) -> BaseException:
    if isinstance(exc, (OSError, EOFError, lzma.LZMAError)):
        return InputFormatError(path, 0, f"cannot be read: {exc}")
    return exc
