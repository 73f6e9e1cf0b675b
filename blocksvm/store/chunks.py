"""A block file's chunks read and decoded outside HDF5, so that several threads decode one block at once.

h5py holds one lock around every call into HDF5, decompression included: threads that read blocks through h5py
take turns. A block file's datasets are chunked and filtered (docs/FORMAT.md, *Compression*: a compressor,
HDF5's byte shuffle, the fletcher32 checksum), so :meth:`~blocksvm.store.BlockStore.read_block` reads a block in
two steps. h5py reads the file's metadata, under its lock: the attributes, and each dataset's type, length,
filters and chunks (:func:`plan`: where each chunk lies in the file, and which filters it skipped). Then each
chunk's stored bytes are read with ``pread`` and its filters undone in reverse order (:func:`decode_chunk`), by
code that releases the GIL:

========================  =================================================================================
filter (HDF5 id)          undone by
========================  =================================================================================
fletcher32 (3)            ``_chunk_kernels.fletcher32_matches`` (numba): a damaged chunk is refused first
shuffle (2)               ``_chunk_kernels.unshuffle`` (numba)
lzf (32000)               ``_chunk_kernels.lzf_decompress`` (numba)
deflate, gzip (1)         :mod:`zlib` (the standard library's, which releases the GIL)
blosc (32001)             c-blosc's ``blosc_decompress_ctx`` in hdf5plugin's filter library, through ctypes
zstd (32015)              ``ZSTD_decompress`` in hdf5plugin's filter library, through ctypes
========================  =================================================================================

The libraries are those HDF5 itself calls for these filters (hdf5plugin's, which wrote the chunks), loaded a
second time by ctypes, which releases the GIL during the call; their thread-safe entry points keep no state
between calls. A dataset with a filter not in this table, a type of another byte order, or contiguous storage,
and every dataset of a file when hdf5plugin's library lacks the function, make :func:`plan` answer None: the
block is then read by h5py as before, the same arrays one thread at a time.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

FLETCHER32, SHUFFLE, DEFLATE, LZF, BLOSC, ZSTD = 3, 2, 1, 32000, 32001, 32015


class ChunkError(OSError):
    """A chunk whose stored bytes do not decode: the block file is damaged (read_block names the block)."""


@dataclass(frozen=True)
class Chunk:
    """One stored chunk: its first element, where its bytes lie in the file, and the filters it skipped (bit
    ``i``: the ``i``-th filter of its dataset was not applied, as HDF5 does when an optional filter fails, a
    compressor that could not shrink the chunk)."""

    start: int
    offset: int
    size: int
    skipped: int


@dataclass(frozen=True)
class Dataset:
    """A dataset's layout: its name, type and length, its chunks' length, its filters (``(id, parameters)``, in
    the order they were applied when written) and chunks; a two-dimensional dataset (chunked by whole rows) as the
    row-major sequence of its elements, and its ``shape``."""

    name: str
    dtype: np.dtype
    length: int
    chunk_length: int
    filters: tuple
    chunks: tuple
    shape: tuple | None = None
    """The dataset's shape, when it is not ``(length,)``."""

    @property
    def chunk_bytes(self) -> int:
        return self.chunk_length * self.dtype.itemsize


def plan(f: h5py.File, names) -> list[Dataset] | None:
    """The layout of the datasets ``names`` of the open file ``f``, or None if one of them cannot be decoded
    here (then h5py reads the file as it always did)."""
    if not hasattr(os, "preadv") or sys.byteorder != "little":  # Windows; the checksum kernel reads little-endian
        return None
    found, file_size = [], f.id.get_filesize()
    for name in names:
        dataset = f[name]
        dtype = dataset.dtype
        if dataset.ndim not in (1, 2) or not dtype.isnative or dtype.kind not in "iuf":
            return None
        # a two-dimensional dataset chunked by whole rows is the sequence of its elements in row-major order
        width = 1 if dataset.ndim == 1 else dataset.shape[1]
        shape = None if dataset.ndim == 1 else dataset.shape
        if dataset.size == 0:  # stored without data
            found.append(Dataset(name, dtype, 0, 0, (), (), shape))
            continue
        if dataset.chunks is None or dataset.chunks[1:] != dataset.shape[1:]:
            return None
        dcpl = dataset.id.get_create_plist()
        filters = tuple(dcpl.get_filter(i)[::2] for i in range(dcpl.get_nfilters()))  # (id, parameters)
        if any(not _decodable(fid) for fid, _ in filters):
            return None
        chunks = []
        for i in range(dataset.id.get_num_chunks()):
            info = dataset.id.get_chunk_info(i)
            chunks.append(Chunk(info.chunk_offset[0] * width, info.byte_offset, info.size, info.filter_mask))
        layout = Dataset(name, dtype, dataset.size, dataset.chunks[0] * width, filters, tuple(chunks), shape)
        problem = _layout_problem(layout, file_size)
        if problem is not None:
            raise ChunkError(f"{name}: {problem}")
        found.append(layout)
    return found


def _layout_problem(dataset: Dataset, file_size: int) -> str | None:
    """Why the chunks of ``dataset`` (from the file's chunk index) would not fill its array exactly once from bytes
    inside the file, or None: checked before any memory is allocated for a chunk."""
    length, step = dataset.length, dataset.chunk_length
    if not 1 <= step <= length:
        return f"chunks of {step:,} elements in a dataset of {length:,}"
    starts = sorted(c.start for c in dataset.chunks)
    if starts != list(range(0, length, step)):
        return f"{len(starts):,} chunks do not cover its {length:,} elements once each"
    if len(dataset.filters) > 32:
        return f"{len(dataset.filters)} filters"
    for c in dataset.chunks:
        if c.offset is None or c.offset < 0 or c.size < 0 or c.offset + c.size > file_size:
            return f"the chunk at element {c.start:,} lies outside the file"
    return None


def decode_chunk(fd: int, dataset: Dataset, chunk: Chunk, out: np.ndarray) -> tuple[float, float]:
    """Read ``chunk`` of ``dataset`` from the file open as ``fd``, undo its filters, and write its elements into
    ``out`` (the dataset's whole array); the seconds of the read and of the filters. Releases the GIL for all but a
    few microseconds.

    Raises
    ------
    ChunkError
        The chunk's bytes are damaged (its checksum, or a codec's own checks) or cut short.
    """
    where = f"{dataset.name}, chunk at element {chunk.start}"
    raw = _scratch(chunk.size)
    start = time.perf_counter()
    if _read_at(fd, raw, chunk.offset) != chunk.size:
        raise ChunkError(f"{where}: the file ends inside the chunk")
    read = time.perf_counter()
    count = min(dataset.chunk_length, dataset.length - chunk.start)
    target = out[chunk.start : chunk.start + count].view(np.uint8)
    whole = count == dataset.chunk_length  # the last chunk holds fewer elements than its stored length
    applied = [filt for i, filt in enumerate(dataset.filters) if not chunk.skipped >> i & 1]
    data = raw
    for k, (fid, parameters) in enumerate(reversed(applied)):
        into = target if whole and k == len(applied) - 1 else None
        data = _DECODERS[fid](data, parameters, dataset.chunk_bytes, into, where)
    if len(data) != dataset.chunk_bytes:
        raise ChunkError(f"{where}: {len(data)} bytes decoded, {dataset.chunk_bytes} expected")
    if data is not target:
        target[:] = data[: len(target)]
    return read - start, time.perf_counter() - read


_local = threading.local()


def _scratch(size: int) -> np.ndarray:
    """This thread's buffer for a chunk's stored bytes, grown to the largest chunk it has read (fresh memory for
    each chunk would cost a page fault every 4 kB: a third of the time of reading a block from the page cache)."""
    buffer = getattr(_local, "buffer", None)
    if buffer is None or len(buffer) < size:
        buffer = _local.buffer = np.empty(size, np.uint8)
    return buffer[:size]


def _read_at(fd: int, buffer: np.ndarray, offset: int) -> int:
    """Fill ``buffer`` with the file's bytes from ``offset`` without moving its position (threads share ``fd``);
    return the bytes read."""
    done = 0
    while done < len(buffer):
        n = os.preadv(fd, [buffer[done:]], offset + done)
        if n == 0:
            break
        done += n
    return done


# ---------------------------------------------------------------------------------------------
# decoders: (bytes, the filter's parameters, the chunk's decoded bytes, the place to write them or None, where)
# -> the bytes with this filter undone


def _kernels():
    """The compiled filters (numba: loaded by the first chunk decoded or written, not by a command that reads none)."""
    from blocksvm.store import _chunk_kernels

    return _chunk_kernels


def _fletcher32(data, parameters, nbytes, into, where):
    if not _kernels().fletcher32_matches(data):
        raise ChunkError(f"{where}: data error detected by fletcher32 checksum")
    return data[:-4]


def _shuffle(data, parameters, nbytes, into, where):
    out = into if into is not None and len(into) == len(data) else np.empty(len(data), np.uint8)
    _kernels().unshuffle(data, int(parameters[0]), out)
    return out


def _lzf(data, parameters, nbytes, into, where):
    out = into if into is not None else np.empty(nbytes, np.uint8)
    if _kernels().lzf_decompress(data, out) != nbytes:
        raise ChunkError(f"{where}: the LZF stream is damaged")
    return out


def _deflate(data, parameters, nbytes, into, where):
    try:
        return np.frombuffer(zlib.decompress(data, bufsize=nbytes), np.uint8)
    except zlib.error as exc:
        raise ChunkError(f"{where}: {exc}") from None


def _blosc(data, parameters, nbytes, into, where):
    # the header (c-blosc 1.x): version, versionlz, flags, typesize, then uint32 LE nbytes, blocksize, cbytes
    if len(data) < 16:
        raise ChunkError(f"{where}: the Blosc header is cut short")
    header = data[:16].view("<u4")
    if int(header[1]) != nbytes or int(header[3]) > len(data):
        raise ChunkError(f"{where}: the Blosc header does not describe this chunk")
    out = into if into is not None else np.empty(nbytes, np.uint8)
    if _libraries().blosc(data.ctypes.data, out.ctypes.data, nbytes, 1) != nbytes:
        raise ChunkError(f"{where}: the Blosc stream is damaged")
    return out


def _zstd(data, parameters, nbytes, into, where):
    libraries = _libraries()
    out = into if into is not None else np.empty(nbytes, np.uint8)
    n = libraries.zstd(out.ctypes.data, nbytes, data.ctypes.data, len(data))
    if libraries.zstd_error(n) or n != nbytes:
        raise ChunkError(f"{where}: the Zstandard stream is damaged")
    return out


_DECODERS = {FLETCHER32: _fletcher32, SHUFFLE: _shuffle, LZF: _lzf, DEFLATE: _deflate, BLOSC: _blosc, ZSTD: _zstd}


@dataclass(frozen=True)
class _Libraries:
    blosc: object | None
    zstd: object | None
    zstd_error: object | None
    blosc_compress: object | None
    zstd_compress: object | None
    zstd_bound: object | None


@functools.cache
def _libraries() -> _Libraries:
    """The functions of hdf5plugin's filter libraries used here (None where a library or function is absent)."""
    size, pointer, integer = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int
    zstd_error = _function("h5zstd", "ZSTD_isError", ctypes.c_uint, [size])
    has_errors = zstd_error is not None
    return _Libraries(
        blosc=_function("h5blosc", "blosc_decompress_ctx", integer, [pointer, pointer, size, integer]),
        zstd=_function("h5zstd", "ZSTD_decompress", size, [pointer, size, pointer, size]) if has_errors else None,
        zstd_error=zstd_error,
        blosc_compress=_function(
            "h5blosc",
            "blosc_compress_ctx",
            integer,
            [integer, integer, size, size, pointer, pointer, size, ctypes.c_char_p, size, integer],
        ),
        zstd_compress=_function("h5zstd", "ZSTD_compress", size, [pointer, size, pointer, size, integer])
        if has_errors
        else None,
        zstd_bound=_function("h5zstd", "ZSTD_compressBound", size, [size]),
    )


def _function(library: str, name: str, restype, argtypes: list):
    """The C function ``name`` of hdf5plugin's filter library ``library`` (``h5blosc``: ``libh5blosc.so``), or
    None."""
    try:
        import hdf5plugin

        paths = sorted(Path(hdf5plugin.PLUGIN_PATH).glob(f"*{library}.*"))
    except (ImportError, AttributeError, OSError):
        return None
    for path in paths:
        try:
            function = getattr(ctypes.CDLL(str(path)), name)
        except (OSError, AttributeError):
            continue
        function.restype, function.argtypes = restype, argtypes
        return function
    return None


def _decodable(fid: int) -> bool:
    """Whether chunks with the filter ``fid`` are decoded here (a compressor's library may be missing)."""
    if fid == BLOSC:
        return _libraries().blosc is not None
    if fid == ZSTD:
        return _libraries().zstd is not None
    return fid in _DECODERS


# ---------------------------------------------------------------------------------------------
# encoding: what HDF5's filters would store, computed before h5py is called (so writers compress at once)

BLOSC_COMPRESSORS = {0: b"blosclz", 1: b"lz4", 2: b"lz4hc", 3: b"snappy", 4: b"zlib", 5: b"zstd"}
"""hdf5-blosc's compressor codes (its ``cd_values[6]``) and c-blosc's names for them."""


def encode(array: np.ndarray, filters: dict, chunk_length: int) -> list[tuple[int, np.ndarray, int]] | None:
    """The chunks HDF5 would store for ``array`` in a dataset of ``chunk_length``-element chunks created with
    h5py's keyword arguments ``filters`` (:func:`~blocksvm.store.format.compression_filters`): ``(first element,
    stored bytes, filters skipped)`` for each, to be written with ``write_direct_chunk``. None when a filter is not
    encoded here (LZF, an unknown one, or a compressor library without the function): h5py then writes the array.

    The filters run in h5py's order (shuffle, the compressor, fletcher32), each as HDF5 runs it on write: the last
    chunk padded with zeros to its full length, an optional compressor that cannot shrink a chunk (Blosc) skipped
    for that chunk, the checksum appended little-endian. Releases the GIL but for a few microseconds a chunk.
    """
    item = array.dtype.itemsize
    pipeline = _pipeline(filters, item)
    if pipeline is None or not array.dtype.isnative or sys.byteorder != "little":
        return None
    nbytes = chunk_length * item
    stored = []
    for start in range(0, len(array), chunk_length):
        data = np.ascontiguousarray(array[start : start + chunk_length]).view(np.uint8)
        if len(data) < nbytes:
            data = np.concatenate((data, np.zeros(nbytes - len(data), np.uint8)))
        skipped = 0
        for i, (_, encoder) in enumerate(pipeline):
            result = encoder(data)
            if result is None:
                skipped |= 1 << i
            else:
                data = result
        if any(data.base is buffer for buffer in _encode_buffers()):  # a stage's scratch: the next chunk reuses it
            data = data.copy()
        stored.append((start, data, skipped))
    return stored


def _encode_buffers() -> list[np.ndarray]:
    """This thread's scratch buffers of the encoding stages (a shuffle's and a compressor's output, consumed by the
    next stage): fresh memory for each chunk would cost its page faults, as in decoding (:func:`_scratch`)."""
    buffers = getattr(_local, "encode_buffers", None)
    if buffers is None:
        buffers = _local.encode_buffers = [np.empty(0, np.uint8), np.empty(0, np.uint8)]
    return buffers


def _encode_scratch(stage: int, size: int) -> np.ndarray:
    """Scratch buffer ``stage`` (0: shuffle, 1: compressor) of this thread, at least ``size`` bytes."""
    buffers = _encode_buffers()
    if len(buffers[stage]) < size:
        buffers[stage] = np.empty(size, np.uint8)
    return buffers[stage][:size]


def pipeline_ids(filters: dict, item: int) -> tuple[int, ...] | None:
    """The HDF5 ids of the filters :func:`encode` applies, in order (None: not encoded here)."""
    pipeline = _pipeline(filters, item)
    return None if pipeline is None else tuple(fid for fid, _ in pipeline)


def _pipeline(filters: dict, item: int) -> list | None:
    """``(filter id, encoder)`` in the order h5py sets the filters; an encoder returns the encoded bytes, or None
    where an optional filter gives up on a chunk."""
    known = {"compression", "compression_opts", "shuffle", "fletcher32"}
    if set(filters) - known:
        return None
    libraries = _libraries()
    pipeline = []
    if filters.get("shuffle"):
        pipeline.append((SHUFFLE, functools.partial(_shuffled, item=item)))
    compression, options = filters.get("compression"), filters.get("compression_opts")
    if compression == "gzip":
        pipeline.append((DEFLATE, functools.partial(_deflated, level=int(options))))
    elif compression == BLOSC and libraries.blosc_compress is not None and options[6] in BLOSC_COMPRESSORS:
        level, shuffle, code = options[4], options[5], options[6]
        typesize = item if item <= 255 else 1
        encoder = functools.partial(_blosced, level=level, shuffle=shuffle, typesize=typesize, code=code)
        pipeline.append((BLOSC, encoder))
    elif compression == ZSTD and libraries.zstd_compress is not None and libraries.zstd_bound is not None:
        pipeline.append((ZSTD, functools.partial(_zstded, level=int(options[0]))))
    elif compression is not None:
        return None
    if filters.get("fletcher32"):
        pipeline.append((FLETCHER32, _checksummed))
    return pipeline


def _shuffled(data: np.ndarray, item: int) -> np.ndarray:
    out = _encode_scratch(0, len(data))
    _kernels().shuffle(data, item, out)
    return out


def _deflated(data: np.ndarray, level: int) -> np.ndarray:
    return np.frombuffer(zlib.compress(data, level), np.uint8)


def _blosced(data: np.ndarray, level: int, shuffle: int, typesize: int, code: int) -> np.ndarray | None:
    # hdf5-blosc's filter: an output buffer as long as the input; a chunk that does not fit is stored as it is
    out = _encode_scratch(1, len(data))
    compress = _libraries().blosc_compress
    n = compress(
        level, shuffle, typesize, len(data), data.ctypes.data, out.ctypes.data, len(out), BLOSC_COMPRESSORS[code], 0, 1
    )
    return out[:n] if n > 0 else None


def _zstded(data: np.ndarray, level: int) -> np.ndarray | None:
    libraries = _libraries()
    bound = libraries.zstd_bound(len(data))
    out = _encode_scratch(1, bound)
    n = libraries.zstd_compress(out.ctypes.data, bound, data.ctypes.data, len(data), level)
    return None if libraries.zstd_error(n) else out[:n]


def _checksummed(data: np.ndarray) -> np.ndarray:
    out = np.empty(len(data) + 4, np.uint8)
    out[:-4] = data
    out[-4:] = np.array([_kernels().fletcher32(data)], "<u4").view(np.uint8)
    return out
