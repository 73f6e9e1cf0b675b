"""Reading a block store: open, validate, read blocks (their chunks decoded on several threads, several blocks
ahead of the caller)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from blocksvm._hdf5 import check_global_heaps
from blocksvm._interrupt import sigint_held
from blocksvm._locks import FileLock, lock_path
from blocksvm.errors import InUseError, StoreError, StoreReplacedError
from blocksvm.features import translate
from blocksvm.params import cores
from blocksvm.rows import Rows
from blocksvm.store import chunks
from blocksvm.store import format as F
from blocksvm.store.column_layout import ColumnLayout, verify_columns
from blocksvm.store.readahead import ReadStats, read_in_order
from blocksvm.store.writer import complete_swap


@dataclass
class Block(Rows):
    """One block in memory, as the solvers see it: its rows and where they sit in the store.

    Attributes
    ----------
    index : int
        Position of the block in the store.
    row_offset : int
        Store-wide position of the block's first row; row ``i`` of the block owns ``alpha[row_offset + i]``.

    and the :class:`~blocksvm.rows.Rows` fields, indices zero-based.
    """

    index: int = -1
    row_offset: int = 0
    timing: dict | None = field(default=None, compare=False, repr=False)
    """Seconds its read took: ``open`` (the file and its metadata, through h5py), ``io`` (its chunks' bytes),
    ``decode`` (their filters, on the decoding threads: summed), ``checks`` (the block against its manifest)."""


class BlockStore:
    """A block store opened for reading.

    Parameters
    ----------
    path : str or PathLike
        The store directory written by :func:`blocksvm.convert` or :func:`blocksvm.datasets.make_store`.
    read_threads : int, optional
        Threads that decode a block's chunks at once (:mod:`blocksvm.store.chunks`); None: one a core. The
        attribute of the same name may be set later (a run sets it from its ``read_threads`` parameter).

    Raises
    ------
    StoreError
        If the path is not a complete store of a format version this blocksvm reads.

    Examples
    --------
    >>> store = BlockStore("train.bsvm")                       # doctest: +SKIP
    >>> store.n_rows, store.n_features, store.n_blocks         # doctest: +SKIP
    (32561, 123, 8)
    >>> X = store.read_block(0).to_csr(store.n_features)       # doctest: +SKIP

    A compact store (format version 2, docs/FORMAT.md) numbers its blocks' columns ``0 ..
    n_features - 1`` and ``feature_map[j]`` is column ``j``'s original (zero-based) column in a
    space of ``space_features``; without a map, ``feature_map`` is None and the two widths agree.

    A weighted store (format version 3) has ``weighted`` True and its blocks' ``weights``; ``text_format`` is
    how its text was read into columns when that was not LIBSVM's indices (VW's hashed names: the manifest's
    ``text``), else None.
    """

    def __init__(self, path: str | os.PathLike, *, read_threads: int | None = None):
        self.path = Path(path)
        self._read_threads, self._pool = cores(), None
        self.read_threads = read_threads
        self.manifest = _read_manifest(self.path)
        m = self.manifest
        self.n_rows: int = m["rows"]
        self.space_features: int = m["features"]
        self.nnz: int = m["nnz"]
        self.index_base: int = m["index_base"]
        self.dtype = np.dtype(m["dtype"])
        self.classes = np.array(m["classes"], dtype=np.float64)
        self.label_counts = np.array(m["label_counts"], dtype=np.int64)
        self.blocks: list[dict] = m["blocks"]
        self.weighted: bool = "weights" in m
        self.text_format: dict | None = m.get("text")
        self.block_rows = np.array([b["rows"] for b in self.blocks], dtype=np.int64)
        self.row_offsets = np.concatenate(([0], np.cumsum(self.block_rows)))
        F.ensure_filters_available(m["params"]["compression"])
        self._block_arrays = F.block_arrays(self.dtype, self.weighted)
        self._check_files()
        self.feature_map: np.ndarray | None = self._read_feature_map()
        self.n_features: int = self.space_features if self.feature_map is None else len(self.feature_map)

    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    @property
    def read_threads(self) -> int:
        """Threads that decode a block's chunks at once (1: in the reading thread)."""
        return self._read_threads

    @read_threads.setter
    def read_threads(self, threads: int | None) -> None:
        threads = cores() if threads is None else int(threads)
        if threads < 1:
            raise StoreError(f"read_threads must be a positive integer, not {threads}")
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        self._read_threads, self._pool = threads, None
        if threads > 1:  # the pool's threads start with the first chunks given to them, and are kept: a pass reads a
            # block at a time, and threads started per block would cost more than decoding its smallest chunks
            self._pool = ThreadPoolExecutor(threads, thread_name_prefix="blocksvm-decode")
            weakref.finalize(self, self._pool.shutdown, wait=False)  # the threads end with the store

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_pool": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.read_threads = state["_read_threads"]

    @property
    def store_id(self) -> str | None:
        """The store's generation: a random id of each store written, in its manifest and every block file (None
        for a store written without one)."""
        return self.manifest.get("store_id")

    @property
    def columns(self):
        """The store's column layout (:class:`~blocksvm.store.columns.ColumnLayout`, docs/FORMAT.md), opened anew at
        each access (keep it), or None when the store has none (:func:`~blocksvm.store.columns.ensure_columns`)."""
        if "columns" not in self.manifest:
            return None
        return ColumnLayout(self)

    @property
    def fingerprint(self) -> str:
        """A digest of the store's identity and content checksums (stable across copies)."""
        ident = {k: self.manifest.get(k) for k in ("store_id", "rows", "features", "nnz", "index_base")}
        ident["blocks"] = [(b["rows"], b["nnz"], b["crc32"]) for b in self.blocks]
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]

    def __repr__(self) -> str:
        return (
            f"BlockStore({str(self.path)!r}: {self.n_rows} rows, {self.n_features} features, "
            f"{self.nnz} nnz, {self.n_blocks} blocks)"
        )

    def _check_files(self) -> None:
        for b in range(self.n_blocks):
            problem = self._file_problem(b)
            if problem:
                raise StoreError(problem)

    def _file_problem(self, b: int) -> str | None:
        """Why block ``b``'s file is not the one the manifest describes (missing, other size), or None.

        Checked when the store opens and again when a read fails: a file deleted or cut while
        training runs is named as such, and restoring it lets a checkpoint of the store resume.
        """
        entry = self.blocks[b]
        where = f"{self.path}: block {b} ({entry['file']})"
        remedy = "restore the store from a copy (its checkpoints stay valid) or convert again"
        try:
            size = (self.path / entry["file"]).stat().st_size
        except FileNotFoundError:
            return f"{where} is missing: {remedy}"
        if size != entry["bytes"]:
            return (
                f"{where} has {size} bytes, the manifest says {entry['bytes']}: the file is truncated "
                f"or was replaced; {remedy}"
            )
        return None

    def _read_feature_map(self) -> np.ndarray | None:
        entry = self.manifest.get("feature_map")
        if entry is None:
            return None
        file = self.path / entry["file"]
        try:
            size = file.stat().st_size
            if size != entry["bytes"]:
                raise StoreError(f"it has {size} bytes, the manifest says {entry['bytes']}")
            with h5py.File(file, "r") as f:
                F.FEATURE_MAP_ARRAYS.check({n: f[n] for n in ("features",) if n in f}, "", StoreError, entry)
                feature_map = f["features"][()]
            if not _sorted_within(feature_map, self.space_features):
                raise StoreError("its columns are not sorted within the store's features")
        except (OSError, KeyError, RuntimeError, ValueError, StoreError) as exc:
            raise StoreError(
                f"{self.path}: the feature map ({entry['file']}) is damaged ({_short(exc)}): convert the store again"
            ) from None
        return feature_map

    def read_block(self, b: int) -> Block:
        """Read block ``b`` into memory (indices shifted to zero-based), its chunks decoded on ``read_threads``
        threads.

        Raises
        ------
        StoreError
            If the block fails its checksum or does not match the manifest.
        """
        if not 0 <= b < self.n_blocks:
            raise StoreError(f"{self.path}: no block {b} (the store has {self.n_blocks})")
        _test_stall(b)
        entry = self.blocks[b]
        where = self._where(b)
        start = time.perf_counter()
        _decoded.seconds, _decoded.begun = (0.0, 0.0), None
        try:
            arrays = self._read_arrays(b, entry)
        except (OSError, KeyError, RuntimeError, ValueError, _Disagrees) as exc:  # h5py's errors of damaged metadata
            self._check_generation(b, _manifest_id(self.path))  # the whole store replaced since it was opened?
            problem = self._file_problem(b)  # deleted or cut since the store was opened?
            if problem is None and isinstance(exc, _Disagrees):
                problem = f"{where} is inconsistent: {exc}"
            raise StoreError(
                problem or f"{where} cannot be read, the file is damaged ({_short(exc)}): convert the store again"
            ) from None
        read = time.perf_counter()
        block = Block(**arrays, index=b, row_offset=int(self.row_offsets[b]))
        problem = self._check_block(block, entry)
        if problem:
            self._check_generation(b, _manifest_id(self.path))
            raise StoreError(f"{where} is inconsistent: {problem}")
        if self.index_base and self.feature_map is None:  # a compact store's columns are zero-based
            block.indices -= np.int32(self.index_base)
        io, decode = _decoded.seconds  # (on several decoding threads: their seconds added)
        opened = (_decoded.begun or read) - start  # h5py: the file, its metadata and its chunks' places
        block.timing = {"open": opened, "io": io, "decode": decode, "checks": time.perf_counter() - read}
        return block

    def _read_arrays(self, b: int, entry: dict) -> dict[str, np.ndarray]:
        """Block ``b``'s arrays: h5py reads the file's metadata (under its lock), the chunks are decoded outside
        HDF5 on the decoding threads (:mod:`blocksvm.store.chunks`); h5py reads the arrays itself where a filter is
        not decoded there. The datasets' types and lengths are checked against the manifest before any is read."""
        names = (*F.BLOCK_DATASETS, *((F.WEIGHTS,) if self.weighted else ()))
        check = lambda found: self._check_generation(b, found)  # noqa: E731
        return self.read_arrays(entry["file"], names, check, self._block_arrays, entry)

    def read_arrays(self, file: str, names, check_generation, declared=None, entry=None) -> dict[str, np.ndarray]:
        """The datasets ``names`` of the store's file ``file`` (its path in the store), read as a block's are (the
        column layout's files too): ``check_generation(found)`` is given the file's ``store_id`` attribute before
        any array is read, and the datasets are checked against ``declared`` (:class:`blocksvm.schema.Arrays`, of
        the manifest's ``entry``) from the file's metadata, before any is allocated."""
        with h5py.File(self.path / file, "r") as f:
            check_generation(_store_id(f))  # one attribute: before the arrays
            problem = declared.problem({n: f[n] for n in names if n in f}, entry) if declared is not None else None
            if problem is not None:
                raise _Disagrees(f"field '{problem[0]}' {problem[1]}")
            layout = chunks.plan(f, names)
            fd = _descriptor(f) if layout is not None else None  # the file h5py opened, whatever is at the path now
            if fd is None:
                return {name: f[name][()] for name in names}
        try:
            return self._decode(fd, layout)
        finally:
            os.close(fd)

    def _decode(self, fd: int, layout: list[chunks.Dataset]) -> dict[str, np.ndarray]:
        """Every chunk of ``layout`` decoded into its dataset's array; the largest chunks start first, and the first
        damaged chunk (datasets in order, chunks in order) is the one reported, whatever the threads."""
        _decoded.begun = time.perf_counter()
        arrays = {d.name: np.empty(d.length, d.dtype) for d in layout}
        tasks = [(d, c) for d in layout for c in d.chunks]
        if min(self._read_threads, len(tasks)) <= 1:
            seconds = [chunks.decode_chunk(fd, d, c, arrays[d.name]) for d, c in tasks]
            _decoded.seconds = tuple(map(sum, zip((0.0, 0.0), *seconds)))
            return _shaped(arrays, layout)
        pool, futures = self._pool, {}
        try:
            with sigint_held():  # no chunk is left undecoded by a Ctrl-C between two submits
                for i in sorted(range(len(tasks)), key=lambda i: -tasks[i][1].size):
                    d, c = tasks[i]
                    futures[i] = pool.submit(chunks.decode_chunk, fd, d, c, arrays[d.name])
            seconds = [futures[i].result() for i in range(len(tasks))]
            _decoded.seconds = tuple(map(sum, zip((0.0, 0.0), *seconds)))
        finally:  # the file is closed after this: no thread may still read it
            for future in futures.values():
                future.cancel()
            wait(futures.values())
        return _shaped(arrays, layout)

    def _check_generation(self, b: int, found) -> None:
        """Refuse block ``b`` (or the store on disk) when its generation ``found`` is not the one this store was
        opened with: the store was converted again or copied over meanwhile, and a run that went on would mix the
        rows of two data sets. Without an id on either side (a store written without them) nothing is checked
        here: the block's lengths are, as before ids were checked."""
        if found is None or self.store_id is None:
            return
        found = found.decode() if isinstance(found, bytes) else str(found)
        if found != self.store_id:
            raise StoreReplacedError(
                f"{self.path} was replaced while this run read it: block {b} ({self.blocks[b]['file']}) is of "
                f"generation {found}, the run began on generation {self.store_id} (the store was converted again "
                "or copied over); no model or predictions were written: run again on the store as it is now"
            )

    def _check_block(self, block: Block, entry: dict) -> str | None:
        if block.n_rows != entry["rows"] or block.nnz != entry["nnz"]:
            return f"{block.n_rows} rows and {block.nnz} nnz, the manifest says {entry['rows']} and {entry['nnz']}"
        if len(block.indptr) != block.n_rows + 1 or len(block.lines) != block.n_rows or len(block.data) != block.nnz:
            return "array lengths disagree"
        if block.weights is not None and len(block.weights) != block.n_rows:
            return "array lengths disagree"
        if block.indptr[0] != 0 or block.indptr[-1] != block.nnz or np.any(np.diff(block.indptr) < 0):
            return "row pointers are not monotone from 0 to nnz"
        if block.data.dtype != self.dtype:
            return f"values are {block.data.dtype}, the manifest says {self.dtype}"
        first = self.index_base if self.feature_map is None else 0
        if block.nnz and (block.indices.min() < first or block.indices.max() >= self.n_features + first):
            return "a feature index lies outside the store's feature range"
        return None

    def iter_blocks(
        self, order: Iterable[int] | None = None, *, prefetch: int = 1, stats: ReadStats | None = None
    ) -> Iterator[Block]:
        """Yield blocks in ``order`` (default: store order), reading up to ``prefetch`` ahead.

        With ``prefetch >= 1`` the next ``prefetch`` blocks are read at once, each by a thread of its own (its
        chunks decoded on the store's ``read_threads``), while the caller works on the current one: at most
        ``prefetch`` blocks are read ahead of the one the caller holds. ``prefetch = 0`` reads each block in the
        caller's thread. ``stats`` accumulates read and wait seconds.
        """
        order = list(range(self.n_blocks) if order is None else order)
        yield from read_in_order(order, self.read_block, self.blocks, prefetch, stats, self._where)

    def _where(self, b: int) -> str:
        return f"{self.path}: block {b} ({self.blocks[b]['file']})"

    def verify(self) -> list[str]:
        """Read every block and check checksums and invariants; return the problems found."""
        from blocksvm._rows_kernels import rows_sorted_increasing  # (numba: only where blocks are checked)

        problems = []
        entry = self.manifest.get("feature_map")
        if entry is not None and F.file_crc32(self.path / entry["file"]) != entry["crc32"]:
            problems.append(f"the feature map ({entry['file']}): file checksum differs from the manifest")
        for b, entry in enumerate(self.blocks):
            file = self.path / entry["file"]
            if F.file_crc32(file) != entry["crc32"]:
                problems.append(f"block {b} ({entry['file']}): file checksum differs from the manifest")
                continue
            try:
                block = self.read_block(b)
            except StoreError as exc:
                problems.append(str(exc))
                continue
            if not rows_sorted_increasing(block.indptr, block.indices):
                problems.append(f"block {b}: feature indices do not increase along a row")
            if not np.isfinite(block.data).all():
                problems.append(f"block {b}: a value is NaN or infinite")
            if block.weights is not None and not (np.isfinite(block.weights) & (block.weights >= 0)).all():
                problems.append(f"block {b}: a weight is negative, NaN or infinite")
            if not np.isin(block.labels, self.classes).all():
                problems.append(f"block {b}: a label is not in the manifest's label set")
        if int(self.block_rows.sum()) != self.n_rows:
            problems.append("block rows do not add up to the store's rows")
        if sum(b["nnz"] for b in self.blocks) != self.nnz:
            problems.append("block nnz do not add up to the store's nnz")
        if "columns" in self.manifest:
            problems += verify_columns(self)
        return problems

    def info(self) -> dict:
        """The manifest's facts as one JSON-able dict (keys rows, features, nnz, blocks, labels, ...)."""
        m = self.manifest
        return {
            "path": str(self.path),
            "format_version": m["version"],
            "store_id": m.get("store_id"),
            "created": m.get("created"),
            "rows": self.n_rows,
            "features": self.space_features,
            "features_used": self.n_features if self.feature_map is not None else None,
            "nnz": self.nnz,
            "blocks": self.n_blocks,
            "labels": {_label_key(c): int(n) for c, n in zip(self.classes, self.label_counts)},
            "index_base": self.index_base,
            "dtype": str(self.dtype),
            "bytes_on_disk": sum(b["bytes"] for b in self.blocks),
            "source": m.get("source"),
            "params": m["params"],
            "skipped_lines": m.get("skipped_lines", 0),
            "weights": m.get("weights"),
            "text": m.get("text"),
            "block_sizes": [{"rows": b["rows"], "nnz": b["nnz"], "bytes": b["bytes"]} for b in self.blocks],
        }


@contextmanager
def reading(*stores) -> Iterator[None]:
    """Hold a shared lock on each store of ``stores`` (paths or opened stores; None and text files skipped) for
    the block, so that no ``convert --overwrite`` or ``write_store(overwrite=True)`` replaces them meanwhile.

    Any number of runs read a store at once. The lock is the file ``.lock`` inside the store (:mod:`blocksvm._locks`):
    a store in a folder this process cannot write is read without one (its generation is still checked block by
    block).

    Raises
    ------
    InUseError
        A conversion is replacing one of the stores now.
    """
    held = []
    try:
        for store in stores:
            path = getattr(store, "path", store)
            if path is not None and not Path(path).exists():
                complete_swap(path)
            if path is None or not Path(path).is_dir():
                continue
            lock = FileLock(lock_path(path), shared=True, optional=True)
            held.append(
                lock.acquire_or_raise(
                    lambda owner, path=path: InUseError(
                        f"{path} is being replaced by a conversion ({owner or 'another process'}): run again once it "
                        "has ended"
                    )
                )
            )
        yield
    finally:
        for lock in reversed(held):
            lock.release()


def same_space(a: BlockStore, b: BlockStore) -> bool:
    """Whether two stores number their columns alike (both dense, or compact with the same map)."""
    if a.feature_map is None or b.feature_map is None:
        return a.feature_map is None and b.feature_map is None
    return np.array_equal(a.feature_map, b.feature_map)


class SpaceView:
    """A store whose blocks are read with their columns in another store's space: ``feature_map`` (None:
    dense) of ``n_features`` columns; a feature that space lacks gets column ``n_features`` or beyond,
    which the kernels ignore. Otherwise it is the store (its attributes pass through)."""

    def __init__(self, store: BlockStore, feature_map: np.ndarray | None, n_features: int):
        self.store, self.target_map, self.target_features = store, feature_map, n_features

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def read_block(self, b: int) -> Block:
        return self._translated(self.store.read_block(b))

    def iter_blocks(self, order=None, *, prefetch: int = 1, stats: ReadStats | None = None) -> Iterator[Block]:
        for block in self.store.iter_blocks(order, prefetch=prefetch, stats=stats):
            yield self._translated(block)

    def _translated(self, block: Block) -> Block:
        block.indices = translate(block.indices, self.store.feature_map, self.target_map, self.target_features)
        return block


class ShardView:
    """Some blocks of a store as a store of their own: local block indices ``0 .. n_blocks - 1`` and row offsets.

    Pickled, it keeps the store's path and fingerprint, and reopens the store where it lands (a dask worker reads
    the block files from the same path: a shared file system).
    """

    def __init__(self, store: BlockStore, blocks: np.ndarray):
        self.path, self.fingerprint = store.path, store.fingerprint
        self.blocks = np.asarray(blocks, dtype=np.int64)
        self.row_offsets = np.concatenate(([0], np.cumsum(store.block_rows[self.blocks])))
        self._store: BlockStore | None = store

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_store": None}

    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    @property
    def n_rows(self) -> int:
        return int(self.row_offsets[-1])

    @property
    def store(self) -> BlockStore:
        if self._store is None:
            store = BlockStore(self.path)
            if store.fingerprint != self.fingerprint:
                raise StoreError(
                    f"{self.path} on this worker is not the store being trained: the workers must "
                    "read the same store at the same path (a shared file system)"
                )
            self._store = store
        return self._store

    def localize(self, block: Block, local: int) -> Block:
        """``block`` renumbered as the view's block ``local``."""
        return dataclasses.replace(block, index=local, row_offset=int(self.row_offsets[local]))

    def read_block(self, local: int) -> Block:
        return self.localize(self.store.read_block(int(self.blocks[local])), local)

    def iter_blocks(self, local_order: np.ndarray, *, prefetch: int, stats: ReadStats) -> Iterator[Block]:
        blocks = self.store.iter_blocks(self.blocks[local_order], prefetch=prefetch, stats=stats)
        for local, block in zip(local_order, blocks):
            yield self.localize(block, int(local))

    def keyed_blocks(self, local_order: np.ndarray, *, prefetch: int, stats: ReadStats):
        """``(store-wide index, block as the view's)``: the store-wide index seeds the visit, as in a serial pass."""
        for block in self.iter_blocks(local_order, prefetch=prefetch, stats=stats):
            yield int(self.blocks[block.index]), block


def _shaped(arrays: dict[str, np.ndarray], layout: list[chunks.Dataset]) -> dict[str, np.ndarray]:
    """The decoded arrays in their datasets' shapes (a two-dimensional one was decoded as its elements)."""
    return {d.name: arrays[d.name] if d.shape is None else arrays[d.name].reshape(d.shape) for d in layout}


_decoded = threading.local()  # this thread's last block: its chunks' seconds (read, filters), when decoding began


class _Disagrees(Exception):
    """A block file whose datasets are not those its manifest entry describes (their types, their lengths)."""


def _store_id(f: h5py.File):
    """The block file's ``store_id`` attribute, or None. A store written before blocksvm kept its strings at a fixed
    length has it in the file's global heap, checked first (:func:`blocksvm._hdf5.check_global_heaps`)."""
    if "store_id" not in f.attrs:
        return None
    kind = h5py.check_string_dtype(f.attrs.get_id("store_id").dtype)
    if kind is not None and kind.length is None:  # of variable length: in the global heap
        fd = _descriptor(f)
        try:
            problem = check_global_heaps(fd if fd is not None else f.filename)
        finally:
            if fd is not None:
                os.close(fd)
        if problem is not None:
            raise chunks.ChunkError(problem)
    return f.attrs["store_id"]


def _descriptor(f: h5py.File) -> int | None:
    """A descriptor of its own of the file ``f`` (HDF5's default driver, sec2, has one), or None."""
    try:
        return os.dup(f.id.get_vfd_handle())
    except (OSError, TypeError, ValueError, RuntimeError):  # another driver (HDF5_DRIVER): h5py reads the file
        return None


def _sorted_within(columns: np.ndarray, width: int) -> bool:
    """Whether ``columns`` increase strictly and lie in ``0 .. width - 1``."""
    return len(columns) == 0 or (columns[0] >= 0 and columns[-1] < width and bool(np.all(np.diff(columns) > 0)))


def _label_key(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _manifest_id(path: Path) -> str | None:
    """The store id of the manifest now at ``path``, or None if none can be read."""
    try:
        return json.loads((path / F.MANIFEST).read_text()).get("store_id")
    except (OSError, ValueError, AttributeError):
        return None


def _read_manifest(path: Path) -> dict:
    if not path.exists():
        complete_swap(path)  # a conversion killed in the middle of its swap left the path empty
    if not path.exists():
        raise StoreError(f"{path}: no such block store")
    if not path.is_dir():
        raise StoreError(
            f"{path} is not a block store (a store is a directory made by 'blocksvm convert'; "
            "convert a LIBSVM file first)"
        )
    manifest_path = path / F.MANIFEST
    if not manifest_path.exists():
        hint = " (an interrupted conversion leaves such a .partial directory)" if F.PARTIAL_SUFFIX in path.name else ""
        raise StoreError(f"{path} is not a complete block store: it has no {F.MANIFEST}{hint}")
    try:
        manifest = json.loads(manifest_path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreError(f"{manifest_path} is corrupted: {exc}") from None
    except PermissionError:
        raise StoreError(f"{manifest_path}: permission denied") from None
    if not isinstance(manifest, dict) or (
        isinstance(manifest.get("format"), str) and manifest["format"] != F.FORMAT_NAME
    ):
        raise StoreError(f"{path} is not a blocksvm store (its manifest names another format)")
    version = manifest.get("version")
    if type(version) is int and version > F.FORMAT_VERSION:
        raise StoreError(
            f"{path} was written in store format version {version}; this blocksvm reads "
            f"version {F.FORMAT_VERSION} and older (upgrade blocksvm)"
        )
    if manifest.get("complete") is False:
        raise StoreError(f"{path} is not a complete block store (the conversion did not finish)")
    return F.MANIFEST_SCHEMA.check(
        manifest, str(manifest_path), StoreError, remedy="restore the store from a copy, or convert it again"
    )


def _test_stall(b: int) -> None:
    """Test-only: with ``BLOCKSVM_TEST_STALL_IN_READ="BLOCK:MARKER"``, the read of block BLOCK creates the file MARKER
    and never ends (as a read from a disk that stopped answering: the thread waits, the GIL released), so that tests
    stop or time out a run whose reader hangs whatever the machine's speed. Unset, one environment lookup a read."""
    spec = os.environ.get("BLOCKSVM_TEST_STALL_IN_READ")
    if spec is None:
        return
    block, marker = spec.split(":", 1)
    if int(block) == b:
        Path(marker).touch()
        threading.Event().wait()
