"""The external transpose of a store's row blocks into the column layout's files (:mod:`blocksvm.store.columns` writes
and publishes the layout; docs/FORMAT.md, *The column layout*).

:class:`Transpose` writes the layout's files into a folder, in memory bounded by the block size whatever the rows
and features (but for 8 bytes a feature of the store's compact width: each feature's count):

1. pass A reads the row blocks' column indices and counts each feature's entries (or takes the counts a conversion
   made as it wrote the blocks);
2. consecutive feature ranges of about ``block_mb`` MB of entries each are chosen from the counts (a feature
   heavier than that alone makes one);
3. pass B reads the row blocks in store order and deals every entry (its column, store-wide row, value, and where
   the statistics need them the row's class and weight) to its range's bucket: in memory up to a block's bytes, then
   appended to a spill file (:class:`EntrySpill`);
4. each bucket, on ``jobs`` threads, is sorted by column with a counting sort from the known counts (stable: rows
   stay ascending within a column), its statistics summed, and written compressed and checksummed as row blocks
   are (the reader decodes them through :mod:`blocksvm.store.chunks`).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from blocksvm._hdf5 import write_hdf5
from blocksvm._interrupt import sigint_held
from blocksvm._progress import progress_bar
from blocksvm.errors import StoreError
from blocksvm.store import _column_kernels as K
from blocksvm.store import chunks
from blocksvm.store import format as F
from blocksvm.store.column_layout import (
    COLUMNS_DIR,
    COLUMNS_KEY,
    ROWS_FILE,
    ColumnBlock,
    columns_version,
    rows_dtype,
    stat_classes,
)
from blocksvm.store.readahead import read_in_order
from blocksvm.store.reader import BlockStore
from blocksvm.store.writer import chunk_shape, fixed_strings, write_chunked

COLUMN_FILE = "col-{:05d}.h5"
STATISTICS_SHARE = 0.25
"""The statistics are kept when they weigh at most this share of the entries (:func:`statistics_kept`)."""
PIECE_BYTES = 1 << 20
"""Bytes of entries in a piece of a block (the spill's bucket; a larger single column alone): a piece's counting
sort writes inside a window this large, which the cache holds, and a block's pieces are sorted on several threads."""

# Test-only: BLOCKSVM_TEST_KILL_IN_COLUMNS_WRITE=STAGE ends the process as a SIGKILL would (os._exit, nothing
# cleaned up) at STAGE of a column write: "block" (the first column block file written), "written" (every file
# written in the partial folder, nothing installed), "unkeyed" (the old layout's key removed from the manifest, its
# folder still there), "renamed" (the new folder renamed to columns/, the manifest not yet naming it). Unset, the
# hook costs one environment lookup per stage.
TEST_KILL = "BLOCKSVM_TEST_KILL_IN_COLUMNS_WRITE"


def test_kill(stage: str) -> None:
    if os.environ.get(TEST_KILL) == stage:
        os._exit(137)


@dataclass
class Built:
    blocks: list[dict]
    rows: dict
    stat_classes: int


class Transpose:
    """The transpose of one store into the folder ``partial``: pass A (counts), the ranges, pass B (deal), the blocks
    (see the module docstring); :meth:`run` writes the files and returns the manifest entries of what it wrote."""

    def __init__(self, store: BlockStore, block_mb: float, jobs: int, progress, partial: Path):
        self.store, self.jobs, self.progress, self.partial = store, jobs, progress, partial
        self.target = block_mb * 1e6
        self.compression = store.manifest["params"]["compression"]
        self.filters = F.compression_filters(self.compression)
        self.rows_dtype = rows_dtype(store.n_rows)
        self.store_id = store.store_id
        self.stat_classes = 0  # (decided from the counts: statistics_kept)

    def run(self, counts: np.ndarray | None = None) -> Built:
        if counts is None or len(counts) != self.store.n_features or counts.sum() != self.store.nnz:
            counts = self.count_features()
        counts = counts.astype(np.int64)  # (counted in 4 bytes where they fit: count_type)
        entry_bytes = self.rows_dtype.itemsize + self.store.dtype.itemsize
        classes = stat_classes(self.store)
        kept = statistics_kept(int(np.count_nonzero(counts)), classes, self.store.nnz * entry_bytes)
        self.stat_classes = classes if kept else 0
        self.stamp = (self.store_id, columns_version(kept))  # what every file of the layout says it belongs to
        column_bytes = 16 + 16 * self.stat_classes  # its id and pointer, its sums and squares
        blocks = K.choose_ranges(counts, entry_bytes, column_bytes, self.target)
        pieces = _pieces(counts, blocks, entry_bytes, column_bytes, min(PIECE_BYTES, self.target))
        fields = self.fields()
        in_memory = self.target * sum(d.itemsize for d in fields.values()) / entry_bytes  # a block's entries
        spill = EntrySpill(self.partial / "spill.bin", len(pieces), fields, in_memory)
        try:
            with ThreadPoolExecutor(self.jobs, thread_name_prefix="blocksvm-columns") as pool:
                rows = self.deal(pool, pieces, spill)
                entries = self.write_blocks(pool, counts, blocks, pieces, spill)
        finally:
            spill.remove()
        return Built(entries, rows, self.stat_classes)

    @property
    def with_class(self) -> bool:
        """The statistics are kept by class: each entry is dealt with its row's class."""
        return self.stat_classes > 1

    @property
    def with_weight(self) -> bool:
        """The statistics weigh the rows: each entry is dealt with its row's weight."""
        return self.stat_classes > 0 and self.store.weighted

    def fields(self) -> dict[str, np.dtype]:
        """The spill's fields of each entry: column, row, value, and the row's class and weight where the statistics
        need them."""
        fields = {"cols": np.dtype(np.int32), "rows": self.rows_dtype, "vals": self.store.dtype}
        if self.with_class:
            fields["cls"] = np.dtype(np.uint8)
        if self.with_weight:
            fields["wts"] = np.dtype(np.float64)
        return fields

    def count_features(self) -> np.ndarray:
        """Pass A: the entries of each feature (only the row blocks' ``indices`` are read)."""
        store = self.store
        counts = np.zeros(store.n_features, count_type(store.nnz))
        shift = store.index_base if store.feature_map is None else 0

        def read(b: int) -> np.ndarray:
            entry = store.blocks[b]
            try:
                arrays = store.read_arrays(entry["file"], ("indices",), lambda found: store._check_generation(b, found))
            except (OSError, KeyError, ValueError):
                store.read_block(b)  # the block's own message: damaged, missing, replaced
                raise
            if len(arrays["indices"]) != entry["nnz"]:
                store.read_block(b)
                raise StoreError(f"{store.path}: block {b} ({entry['file']}) disagrees with the manifest")
            return arrays["indices"]

        with progress_bar(store.n_blocks, "count columns", unit="block", enabled=self.progress) as bar:
            for b, indices in enumerate(read_in_order(list(range(store.n_blocks)), read, store.blocks, 1, None)):
                if not K.add_counts(counts, indices, shift):
                    entry = store.blocks[b]
                    raise StoreError(
                        f"{store.path}: block {b} ({entry['file']}) is inconsistent: a feature index lies outside "
                        "the store's feature range; convert the store again"
                    )
                bar.update()
        return counts

    def deal(self, pool, stops: np.ndarray, spill: EntrySpill) -> dict:
        """Pass B: every row block's entries dealt to their ranges' buckets (on ``jobs`` threads, each a run of the
        block's rows); every row's label (and weight) into the rows file. Returns the rows file's manifest entry."""
        store = self.store
        labels = _ChunkedArray(store.n_rows, np.float64, self.filters)
        weights = _ChunkedArray(store.n_rows, np.float64, self.filters) if store.weighted else None
        range_of = np.empty(store.n_features, range_type(len(stops)))
        K.range_of_features(stops, range_of)
        with progress_bar(store.n_blocks, "transpose", unit="block", enabled=self.progress) as bar:
            for block in store.iter_blocks(prefetch=1):
                spill.add(*self.dealt(pool, block, range_of, len(stops), spill.fields))
                labels.add(block.labels)
                if weights is not None:
                    weights.add(block.weights)
                bar.update()
        return _write_rows_file(self.partial / ROWS_FILE, labels, weights, self.stamp, store.n_rows)

    def dealt(self, pool, block, range_of: np.ndarray, n_ranges: int, fields: dict) -> tuple[np.ndarray, dict]:
        """A row block's entries dealt to the ranges: ``(bounds, arrays)``, range ``r``'s entries at ``bounds[r] ..
        bounds[r+1]`` of each array. The block's rows are cut into ``jobs`` runs of about equal entries, counted and
        then dealt on the pool's threads, each run from where the runs before it end in each range."""
        no_class, no_weight = np.empty(0, np.uint8), np.empty(0, np.float64)
        out = {name: np.empty(block.nnz, dtype) for name, dtype in fields.items()}
        row_class = self.row_classes(block.labels) if self.with_class else no_class
        row_weight = block.weights if self.with_weight else no_weight
        parts = min(self.jobs, max(1, block.nnz // (1 << 16)))  # a run of fewer entries is not worth a thread
        cuts = np.searchsorted(block.indptr, np.linspace(0, block.nnz, parts + 1)[1:-1])
        runs = list(zip([0, *cuts.tolist()], [*cuts.tolist(), block.n_rows]))
        entry_range = np.empty(block.nnz, range_of.dtype)
        rows_of = (block.indptr, block.indices)
        calls = [(K.count_ranges, rows_of, range_of, n_ranges, run, entry_range) for run in runs]
        counted = self.on_threads(pool, calls)
        counts = np.array(counted).reshape(len(runs), n_ranges)
        bounds = np.concatenate(([0], np.cumsum(counts.sum(axis=0))))
        starts = bounds[:-1] + np.cumsum(counts, axis=0) - counts  # run t's first place in each range
        arrays = (out["cols"], out["rows"], out["vals"], out.get("cls", no_class), out.get("wts", no_weight))
        csr, row_of = (block.indptr, block.indices, block.data), (row_class, row_weight)
        calls = [
            (K.deal_entries, csr, block.row_offset, row_of, entry_range, span, starts[t].copy(), arrays)
            for t, span in enumerate(runs)
        ]
        self.on_threads(pool, calls)
        return bounds, out

    @staticmethod
    def on_threads(pool, calls: list[tuple]) -> list:
        """``f(*args)`` for each ``(f, *args)`` of ``calls``, in order, on the pool's threads (the first in this
        one)."""
        if len(calls) == 1:
            return [calls[0][0](*calls[0][1:])]
        with sigint_held():
            futures = [pool.submit(*call) for call in calls[1:]]
        try:
            first = calls[0][0](*calls[0][1:])
            return [first, *(future.result() for future in futures)]
        finally:
            for future in futures:
                future.cancel()
            wait(futures)

    def row_classes(self, labels: np.ndarray) -> np.ndarray:
        classes = self.store.classes
        at = np.searchsorted(classes, labels)
        if np.any(at >= len(classes)) or np.any(classes[np.minimum(at, len(classes) - 1)] != labels):
            raise StoreError(f"{self.store.path}: a block's label is not among the manifest's classes; convert again")
        return at.astype(np.uint8)

    def write_blocks(self, pool, counts: np.ndarray, blocks: np.ndarray, pieces: np.ndarray, spill: EntrySpill):
        """Build the column blocks in feature order, each from its pieces sorted on ``jobs`` threads and its chunks
        compressed on them; a block's file is written (by one more thread, chunk by chunk as they are compressed)
        while the next one is built. The blocks' manifest entries."""
        firsts = np.concatenate(([0], blocks[:-1]))
        ranges = [(int(a), int(b)) for a, b in zip(firsts, blocks) if counts[a:b].any()]  # none: an empty store
        entries, in_flight, writing = [], [], None  # in_flight: the tasks of the blocks not yet written
        with (
            ThreadPoolExecutor(1, thread_name_prefix="blocksvm-columns-writer") as writer,
            progress_bar(len(ranges), "write columns", unit="block", enabled=self.progress) as bar,
        ):
            try:
                for index, (first, stop) in enumerate(ranges):
                    tasks = []
                    in_flight.append(tasks)
                    block = self.sorted_block(pool, tasks, index, first, stop, counts, pieces, spill)
                    chunks_of = self.encoding(pool, tasks, block)
                    if writing is not None:  # at most one block written while the next is built
                        entries.append(writing.result())
                        del in_flight[0]  # its tasks are done: their results (compressed chunks) go
                        bar.update()
                        test_kill("block")
                    path = self.partial / COLUMN_FILE.format(index)
                    with sigint_held():
                        writing = writer.submit(_write_column_block, path, block, chunks_of, self.filters, self.stamp)
                    tasks.append(writing)
                    del block, chunks_of
                if writing is not None:
                    entries.append(writing.result())
                    bar.update()
            finally:  # after an error or Ctrl-C, no thread writes into the partial folder while it is removed
                futures = [future for tasks in in_flight for future in tasks]
                for future in futures:
                    future.cancel()
                wait(futures)
        return entries

    def sorted_block(self, pool, futures: list, index: int, first: int, stop: int, counts, pieces, spill):
        """The :class:`ColumnBlock` of the features ``first .. stop - 1``: each of its pieces sorted by column into
        its place in the block's arrays, on the pool's threads."""
        block_counts = counts[first:stop]
        stored = np.flatnonzero(block_counts)
        entry_at = np.concatenate(([0], np.cumsum(block_counts)))  # where each feature's entries begin
        slot_at = np.concatenate(([0], np.cumsum(block_counts > 0)))  # and its statistics
        rows, data = np.empty(entry_at[-1], self.rows_dtype), np.empty(entry_at[-1], self.store.dtype)
        sums, squares = np.zeros((len(stored), self.stat_classes)), np.zeros((len(stored), self.stat_classes))
        ends = pieces[(pieces > first) & (pieces <= stop)] - first
        begins = np.concatenate(([0], ends[:-1]))
        numbers = np.flatnonzero((pieces > first) & (pieces <= stop))
        sorts = []
        with sigint_held():
            for p, lo, hi in zip(numbers, begins, ends):
                e, s = slice(entry_at[lo], entry_at[hi]), slice(slot_at[lo], slot_at[hi])
                outputs = (rows[e], data[e], sums[s], squares[s])
                sorts.append(pool.submit(self.sort_piece, spill, p, first + lo, block_counts[lo:hi], *outputs))
        futures.extend(sorts)
        for future in sorts:
            future.result()
        indptr = np.zeros(len(stored) + 1, np.int64)
        np.cumsum(block_counts[stored], out=indptr[1:])
        features = (first + stored).astype(np.int64)
        if not self.stat_classes:
            sums = squares = None
        return ColumnBlock(index, first, stop, features, indptr, rows, data, sums, squares)

    def sort_piece(self, spill, p: int, first: int, counts, rows, data, sums, squares) -> None:
        """Piece ``p``'s entries (its features ``first ..``, each ``counts`` long) sorted by column into ``rows`` and
        ``data``, its stored columns' statistics into ``sums`` and ``squares``."""
        if spill.size(p) != len(rows):  # the two reads of the row blocks disagree: never write past an array
            raise StoreError(f"{self.store.path}: its blocks changed while their columns were written; write again")
        at = np.zeros(len(counts), np.int64)  # where each feature's next entry goes
        np.cumsum(counts[:-1], out=at[1:])
        cls = np.empty(len(rows) if self.with_class else 0, np.uint8)  # each entry's row's class and weight, sorted
        wts = np.empty(len(rows) if self.with_weight else 0, np.float64)
        no_class, no_weight = np.empty(0, np.uint8), np.empty(0, np.float64)
        for entries in spill.segments(p):  # in the order dealt: the sort stays stable across them
            cls_wts = entries.get("cls", no_class), entries.get("wts", no_weight)
            dealt = (entries["cols"], entries["rows"], entries["vals"], *cls_wts)
            K.sort_columns(dealt, first, at, (rows, data, cls, wts))
        spill.forget(p)
        if self.stat_classes:
            K.column_statistics(counts, (data, cls, wts), (sums, squares))

    def encoding(self, pool, futures: list, block: ColumnBlock) -> dict:
        """The block's datasets' chunks being compressed on the pool's threads as HDF5 stores them: for each dataset
        ``(first element, future of chunks.encode's list)`` for each chunk, or None where they are not encoded here
        (LZF: h5py compresses the dataset)."""
        names = block.datasets
        if chunks.encode(np.zeros(1), self.filters, 1) is None:
            return dict.fromkeys(names)
        found = {}
        with sigint_held():
            for name in names:
                array = getattr(block, name)
                length = int(np.prod(chunk_shape(array.shape)))
                flat = array.reshape(-1)
                found[name] = [
                    (start, pool.submit(chunks.encode, flat[start : start + length], self.filters, length))
                    for start in range(0, flat.size, length)
                ]
                futures.extend(future for _, future in found[name])
        return found


def range_type(n_ranges: int) -> np.dtype:
    """The type of a feature's range number: 2 bytes up to 65,536 ranges (a block's deal looks up each entry's range
    in a table of one a feature, read at random: 2 bytes a feature cost 3 ns an entry where 4 cost 9 to 12 ns on a
    million features), else 4."""
    return np.dtype(np.uint16 if n_ranges <= 1 << 16 else np.int32)


def count_type(nnz: int) -> np.dtype:
    """The type that counts each feature's entries among ``nnz``: 4 bytes below 2^32 (the counting reads its table at
    random: 2 ns an entry where 8 bytes cost 8 to 12 ns on a million features), else 8."""
    return np.dtype(np.uint32 if nnz < 1 << 32 else np.int64)


def statistics_kept(stored: int, classes: int, entry_bytes: float) -> bool:
    """Whether a layout of ``stored`` columns keeps their statistics (of ``classes`` classes): when they weigh at most
    :data:`STATISTICS_SHARE` of its entries' ``entry_bytes``. They give the loss's gradient at ``w = 0`` (newGLMNET's
    first iteration, tune's first C) without a read of the data, cheap where columns hold many entries; where most
    columns hold one or two (a power law's tail), they would outweigh the entries, and the learners read the data
    once instead, as LIBLINEAR does."""
    return stored * 16 * classes <= STATISTICS_SHARE * entry_bytes


def _pieces(counts: np.ndarray, blocks: np.ndarray, entry_bytes: int, column_bytes: int, target: float) -> np.ndarray:
    """The ends of the pieces the blocks ending at ``blocks`` are cut into, each about ``target`` bytes (a larger
    column alone): the spill's buckets, sorted one a thread."""
    found, first = [], 0
    for stop in blocks:
        found.append(first + K.choose_ranges(counts[first:stop], entry_bytes, column_bytes, target))
        first = int(stop)
    return np.concatenate(found)


def _write_column_block(path: Path, block: ColumnBlock, chunks_of: dict, filters: dict, stamp: tuple) -> dict:
    """Write one column block file from its chunks compressed elsewhere (:meth:`Transpose.encoding`: as row blocks
    are, h5py only copies the bytes), each as soon as it is ready; its manifest entry."""

    def fill(f: h5py.File) -> None:
        for name in ("first", "stop", "n_columns", "nnz"):
            f.attrs[name] = getattr(block, name)
        f.attrs["block"] = block.index
        for name in block.datasets:
            array = getattr(block, name)
            if array.size == 0:
                f.create_dataset(name, data=array)
                continue
            encoded = chunks_of[name]
            stored = None if encoded is None else ((start, *future.result()[0][1:]) for start, future in encoded)
            write_chunked(f, name, array.shape, array.dtype, filters, stored, array)

    entry = {"first": block.first, "stop": block.stop, "columns": block.n_columns, "nnz": block.nnz}
    return _write_columns_file(path, stamp, fill, entry)


class _ChunkedArray:
    """An array of ``length`` values given piece by piece, kept as the HDF5 chunks it is stored in, each encoded
    once full: its memory is its compressed size and one chunk (or the whole array where the compression is not
    encoded here: LZF)."""

    def __init__(self, length: int, dtype, filters: dict):
        self.length, self.dtype, self.filters = length, np.dtype(dtype), filters
        self.chunk = chunk_shape((length,))[0]
        self.buffer = np.empty(self.chunk, self.dtype)
        self.filled = self.done = 0
        encodable = chunks.encode(np.zeros(1, self.dtype), filters, 1) is not None
        self.stored: list | None = [] if encodable else None
        self.raw: list[np.ndarray] = []

    def add(self, values: np.ndarray) -> None:
        while len(values):
            take = min(self.chunk - self.filled, len(values))
            self.buffer[self.filled : self.filled + take] = values[:take]
            self.filled += take
            values = values[take:]
            if self.filled == self.chunk:
                self._encode()

    def _encode(self) -> None:
        piece = self.buffer[: self.filled]
        if self.stored is None:
            self.raw.append(piece.copy())
        else:
            ((_, data, skipped),) = chunks.encode(piece, self.filters, self.chunk)
            self.stored.append((self.done, data, skipped))
        self.done += self.filled
        self.filled = 0

    def write(self, f: h5py.File, name: str) -> None:
        if self.filled:
            self._encode()
        if self.done != self.length:
            raise StoreError(f"{self.done} values were given for {self.length} rows")
        if self.length == 0:
            f.create_dataset(name, data=np.empty(0, self.dtype))
            return
        array = np.concatenate(self.raw) if self.stored is None else None
        write_chunked(f, name, (self.length,), self.dtype, self.filters, self.stored, array)


def _write_columns_file(path: Path, stamp: tuple, fill, entry: dict | None = None) -> dict:
    """Write one HDF5 file of the column layout (``stamp``: the store's id, or None, and the layout's version): the
    attributes that say so, then ``fill(f)``'s; its manifest entry, ``entry`` between its name and its bytes' size and
    checksum."""

    def write(f: h5py.File) -> None:
        fixed_strings(f, format=F.FORMAT_NAME, layout=COLUMNS_KEY)  # (not in the heap: nothing checks it)
        store_id, f.attrs["version"] = stamp
        if store_id is not None:
            fixed_strings(f, store_id=store_id)
        fill(f)

    data = write_hdf5(path, write, libver=F.BLOCK_LIBVER)
    return {"file": f"{COLUMNS_DIR}/{path.name}", **(entry or {}), "bytes": len(data), "crc32": zlib.crc32(data)}


def _write_rows_file(path: Path, labels: _ChunkedArray, weights: _ChunkedArray | None, stamp, n_rows: int) -> dict:
    def fill(f: h5py.File) -> None:
        f.attrs["rows"] = n_rows
        labels.write(f, "labels")
        if weights is not None:
            weights.write(f, "weights")

    return _write_columns_file(path, stamp, fill)


class EntrySpill:
    """Entries dealt to buckets (one a feature range): kept in memory up to ``flush_bytes``, then appended to one
    file as one record a bucket (its fields one after another), so writes are large and sequential whatever the
    number of buckets. A bucket is read back from its records and what is still in memory."""

    def __init__(self, path: Path, n_buckets: int, fields: dict[str, np.dtype], flush_bytes: float):
        self.path, self.fields, self.flush_bytes = path, fields, flush_bytes
        self.entry_bytes = sum(dtype.itemsize for dtype in fields.values())
        self.file = None
        self.offset = 0
        self.records: list[list[tuple[int, int]]] = [[] for _ in range(n_buckets)]  # (offset, entries)
        self.pending: list[list[dict]] = [[] for _ in range(n_buckets)]
        self.pending_bytes = 0

    def add(self, bounds: np.ndarray, arrays: dict[str, np.ndarray]) -> None:
        """Append entries ``bounds[r]:bounds[r+1]`` of ``arrays`` to bucket ``r``, for every ``r``."""
        for r in np.flatnonzero(np.diff(bounds)):
            lo, hi = bounds[r], bounds[r + 1]
            self.pending[r].append({name: a[lo:hi] for name, a in arrays.items()})
            self.pending_bytes += (hi - lo) * self.entry_bytes
        if self.pending_bytes >= self.flush_bytes:
            self.flush()

    def flush(self) -> None:
        if self.file is None:
            self.file = open(self.path, "wb")  # noqa: SIM115 - closed by remove()
        for r, pieces in enumerate(self.pending):
            if not pieces:
                continue
            self.records[r].append((self.offset, sum(len(p["cols"]) for p in pieces)))
            for name in self.fields:
                for piece in pieces:
                    self.file.write(memoryview(np.ascontiguousarray(piece[name])).cast("B"))
                    self.offset += piece[name].nbytes
            pieces.clear()
        self.file.flush()
        self.pending_bytes = 0

    def size(self, r: int) -> int:
        """Bucket ``r``'s entries."""
        return sum(n for _, n in self.records[r]) + sum(len(p["cols"]) for p in self.pending[r])

    def segments(self, r: int) -> Iterator[dict[str, np.ndarray]]:
        """Bucket ``r``'s entries in the order they were added, as consecutive segments: each record written to the
        file (read back), then what is still in memory (not copied)."""
        if self.records[r]:
            with open(self.path, "rb") as f:
                for offset, n in self.records[r]:
                    f.seek(offset)
                    segment = {name: np.empty(n, dtype) for name, dtype in self.fields.items()}
                    for array in segment.values():
                        if f.readinto(memoryview(array).cast("B")) != array.nbytes:
                            raise OSError(f"spill file {self.path} is shorter than its index")
                    yield segment
        yield from self.pending[r]

    def forget(self, r: int) -> None:
        """Drop bucket ``r``'s entries still in memory (it has been written)."""
        self.pending[r] = []

    def remove(self) -> None:
        if self.file is not None:
            self.file.close()
        self.path.unlink(missing_ok=True)
