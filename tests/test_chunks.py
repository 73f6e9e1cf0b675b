"""Chunks encoded and decoded outside HDF5 (blocksvm.store.chunks): the same bytes as HDF5's own filters, both ways,
and a damaged chunk refused, never decoded into garbage or a crash."""

from __future__ import annotations

import io
import os

import h5py
import numpy as np
import pytest

from blocksvm.store import _chunk_kernels as K
from blocksvm.store import chunks
from blocksvm.store import format as F

COMPRESSIONS = ("blosc-lz4", "lzf", "gzip", "gzip-9", "zstd", "zstd-7", "none")


def fletcher32_oracle(data: bytes) -> int:
    """HDF5's H5_checksum_fletcher32 (H5checksum.c), transcribed line by line."""
    words, sum1, sum2, at = len(data) // 2, 0, 0, 0
    while words:
        run = min(words, 360)
        words -= run
        for _ in range(run):
            sum1 += (data[at] << 8) | data[at + 1]
            sum2 += sum1
            at += 2
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    if len(data) % 2:
        sum1 += data[at] << 8
        sum2 += sum1
        sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
        sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    sum1 = (sum1 & 0xFFFF) + (sum1 >> 16)
    sum2 = (sum2 & 0xFFFF) + (sum2 >> 16)
    return (sum2 << 16) | sum1


@pytest.mark.parametrize("n", [0, 1, 2, 3, 719, 720, 721, 8191, 8192, 8193, 8194, 40_001])
@pytest.mark.parametrize("kind", ["random", "zeros", "ones", "one byte set"])
def test_fletcher32_is_hdf5s(n, kind):
    rng = np.random.default_rng(n)
    data = {
        "random": rng.integers(0, 256, n, dtype=np.uint8),
        "zeros": np.zeros(n, np.uint8),
        "ones": np.full(n, 255, np.uint8),
        "one byte set": np.zeros(n, np.uint8),
    }[kind]
    if kind == "one byte set" and n:
        data[n // 2] = 1
    assert K.fletcher32(data) == fletcher32_oracle(data.tobytes())


def test_a_chunk_checksummed_as_hdf5_1_6_wrote_it_is_intact_too():
    data = np.random.default_rng(0).integers(0, 256, 1001, dtype=np.uint8)
    value = fletcher32_oracle(data.tobytes())
    swapped = ((value & 0x00FF00FF) << 8) | ((value >> 8) & 0x00FF00FF)
    for stored in (value, swapped):
        assert K.fletcher32_matches(np.concatenate((data, np.array([stored], "<u4").view(np.uint8))))
    assert not K.fletcher32_matches(np.concatenate((data, np.array([value ^ 1], "<u4").view(np.uint8))))


def arrays() -> dict[str, np.ndarray]:
    """Datasets of each type a block holds, longer than one chunk, the last chunk partial; ``noise`` cannot be
    compressed, so Blosc and LZF skip its full chunks (their filter is optional)."""
    rng = np.random.default_rng(1)
    return {
        "indices": np.sort(rng.integers(0, 5000, 5000)).astype(np.int32),
        "data32": rng.standard_normal(5000).astype(np.float32),
        "data64": np.round(rng.standard_normal(5000), 3),
        "lines": np.arange(1, 5001, dtype=np.int64),
        "noise": rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, 5000, dtype=np.int64),
        "short": np.array([7.5]),
    }


def h5py_image(compression: str) -> bytes:
    """A file of :func:`arrays` in chunks of 2,000 elements, written and compressed by h5py itself."""
    image = io.BytesIO()
    with h5py.File(image, "w", libver=F.BLOCK_LIBVER) as f:
        for name, array in arrays().items():
            f.create_dataset(name, data=array, chunks=(min(len(array), 2000),), **F.compression_filters(compression))
    return image.getvalue()


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_chunks_decode_to_what_h5py_reads(compression, tmp_path):
    path = tmp_path / "f.h5"
    path.write_bytes(h5py_image(compression))
    with h5py.File(path, "r") as f:
        names = list(arrays())
        layout = chunks.plan(f, names)
        expected = {name: f[name][()] for name in names}
        fd = os.dup(f.id.get_vfd_handle())
    try:
        assert layout is not None and [d.name for d in layout] == names
        for dataset in layout:
            out = np.empty(dataset.length, dataset.dtype)
            for chunk in dataset.chunks:
                chunks.decode_chunk(fd, dataset, chunk, out)
            np.testing.assert_array_equal(out, expected[dataset.name])
            assert out.dtype == expected[dataset.name].dtype
    finally:
        os.close(fd)
    skipped = [c.skipped for d in layout for c in d.chunks if d.name == "noise"]
    assert any(skipped) == (compression in ("blosc-lz4", "lzf"))  # chunks stored as they were are read too


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_chunks_encode_to_the_bytes_h5py_writes(compression):
    """Chunks encoded here and written with write_direct_chunk make the very file h5py writes, byte for byte (LZF
    aside: h5py compresses it, encode says so)."""
    filters = F.compression_filters(compression)
    stored = {name: chunks.encode(array, filters, min(len(array), 2000)) for name, array in arrays().items()}
    if compression == "lzf":
        assert all(s is None for s in stored.values())
        return
    image = io.BytesIO()
    with h5py.File(image, "w", libver=F.BLOCK_LIBVER) as f:
        for name, array in arrays().items():
            dataset = f.create_dataset(
                name, shape=array.shape, dtype=array.dtype, chunks=(min(len(array), 2000),), **filters
            )
            for start, data, skipped in stored[name]:
                dataset.id.write_direct_chunk((start,), data, filter_mask=skipped)
    assert image.getvalue() == h5py_image(compression)


def damaged_copy(tmp_path, compression: str, damage) -> tuple[int, chunks.Dataset]:
    """An open descriptor of a copy of :func:`h5py_image` whose first chunk of ``data64`` went through
    ``damage(stored bytes) -> bytes`` (same length), and that dataset's layout."""
    path = tmp_path / "f.h5"
    path.write_bytes(h5py_image(compression))
    with h5py.File(path, "r") as f:
        [dataset] = chunks.plan(f, ["data64"])
    chunk = dataset.chunks[0]
    with open(path, "r+b") as f:
        f.seek(chunk.offset)
        stored = f.read(chunk.size)
        f.seek(chunk.offset)
        f.write(damage(stored))
    return os.open(path, os.O_RDONLY), dataset


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_a_flipped_byte_fails_the_checksum(tmp_path, compression):
    def flip(stored: bytes) -> bytes:
        middle = len(stored) // 2
        return stored[:middle] + bytes([stored[middle] ^ 0x40]) + stored[middle + 1 :]

    fd, dataset = damaged_copy(tmp_path, compression, flip)
    try:
        with pytest.raises(chunks.ChunkError, match="data64, chunk at element 0: data error detected by fletcher32"):
            chunks.decode_chunk(fd, dataset, dataset.chunks[0], np.empty(dataset.length, dataset.dtype))
    finally:
        os.close(fd)


@pytest.mark.parametrize("compression", ["blosc-lz4", "lzf", "gzip", "zstd"])
@pytest.mark.parametrize("where", ["head", "middle"])
def test_a_damaged_stream_with_a_good_checksum_never_crashes(tmp_path, compression, where):
    """Bytes changed and the checksum made to match them (what fletcher32 misses once in 2**32): the codecs that can
    tell refuse the chunk in one error (deflate and Zstandard check their streams, Blosc its header); LZ4 and LZF
    streams have no check of their own, so they decode to other values, as HDF5's filters do, and never past the
    chunk's buffers."""

    def rewrite(stored: bytes) -> bytes:
        body = bytearray(stored[:-4])
        at = 3 if where == "head" else len(body) // 2
        body[at : at + 8] = b"\xff" * 8
        checksum = K.fletcher32(np.frombuffer(bytes(body), np.uint8))
        return bytes(body) + np.array([checksum], "<u4").tobytes()

    fd, dataset = damaged_copy(tmp_path, compression, rewrite)
    refused = compression in ("gzip", "zstd") or (compression, where) == ("blosc-lz4", "head")
    try:
        if refused:
            with pytest.raises(chunks.ChunkError, match="^data64, chunk at element 0: "):
                chunks.decode_chunk(fd, dataset, dataset.chunks[0], np.empty(dataset.length, dataset.dtype))
        else:
            chunks.decode_chunk(fd, dataset, dataset.chunks[0], np.empty(dataset.length, dataset.dtype))
    finally:
        os.close(fd)


def test_a_filter_not_decoded_here_leaves_the_file_to_h5py(tmp_path):
    import hdf5plugin

    path = tmp_path / "f.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("plain", data=np.arange(10))
        f.create_dataset("lz4", data=np.arange(5000), chunks=(1000,), **hdf5plugin.LZ4())
        f.create_dataset("contiguous", data=np.arange(10), chunks=None)
        f.create_dataset("big_endian", data=np.arange(10, dtype=">i8"), chunks=(5,))
    with h5py.File(path, "r") as f:
        for name in ("lz4", "contiguous", "big_endian"):
            assert chunks.plan(f, [name]) is None, name
