"""The store reader: it reads what was written and refuses anything incomplete or damaged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from blocksvm import convert, write_store
from blocksvm.errors import StoreError
from blocksvm.store import BlockStore, ReadStats, chunks
from blocksvm.store import format as F
from blocksvm.store.format import FORMAT_VERSION, MANIFEST, file_crc32


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, small_libsvm) -> Path:
    """A 3-block store of the small generated file; tests work on copies of it."""
    path = tmp_path_factory.mktemp("stores") / "small.bsvm"
    convert(small_libsvm, path, block_rows=1000)
    return path


@pytest.fixture
def store_path(tmp_path, pristine) -> Path:
    copy = tmp_path / "copy.bsvm"
    shutil.copytree(pristine, copy)
    return copy


def _edit_manifest(path: Path, **changes) -> None:
    manifest = json.loads((path / MANIFEST).read_text())
    manifest.update(changes)
    (path / MANIFEST).write_text(json.dumps(manifest))


def _flip_byte_in_data(block_file: Path, dataset: str = "data") -> None:
    """Flip one byte in the middle of a dataset's first stored chunk (not in HDF5 metadata)."""
    with h5py.File(block_file, "r") as f:
        chunk = f[dataset].id.get_chunk_info(0)
        offset = chunk.byte_offset + chunk.size // 2
    with open(block_file, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0xFF]))


# ---------------------------------------------------------------------------------------------
# reading


def test_reads_every_row_once(pristine, read_store, small_libsvm):
    store = BlockStore(pristine)
    assert store.n_blocks == 3 and store.n_rows == 3000
    X, y, lines = read_store(pristine)
    np.testing.assert_array_equal(lines, np.arange(1, 3001))
    assert X.nnz == store.nnz and X.shape == (3000, store.n_features)
    assert store.row_offsets.tolist() == [0, *np.cumsum(store.block_rows).tolist()]


def test_blocks_in_any_order_with_or_without_prefetch(pristine):
    store = BlockStore(pristine)
    order = [2, 0, 1, 2]
    stats = ReadStats()
    ahead = list(store.iter_blocks(order, prefetch=2, stats=stats))
    direct = list(store.iter_blocks(order, prefetch=0))
    assert [b.index for b in ahead] == [b.index for b in direct] == order
    for a, b in zip(ahead, direct, strict=True):
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.data, b.data)
        assert a.row_offset == store.row_offsets[a.index]
    assert stats.blocks_read == 4 and stats.bytes_read > 0


ARRAYS = ("indptr", "indices", "data", "labels", "lines", "weights")


@pytest.fixture(scope="module", params=["blosc-lz4", "lzf", "gzip", "zstd", "none"])
def chunked(request, tmp_path_factory) -> Path:
    """A weighted store of 4 blocks whose datasets hold many chunks (of 1,000 elements, the last one partial)."""
    rng = np.random.default_rng(3)
    X = sp.random(3000, 400, density=0.06, format="csr", random_state=4, dtype=np.float64)
    X.data = np.round(rng.standard_normal(X.nnz), 4)
    y, w = rng.integers(0, 3, 3000).astype(float), rng.random(3000)
    path = tmp_path_factory.mktemp("chunked") / f"{request.param}.bsvm"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(F, "CHUNK_ELEMENTS", 1000)
        write_store((X, y), path, sample_weight=w, block_rows=750, compression=request.param, progress=False)
    with h5py.File(path / "block-00000.h5", "r") as f:
        assert f["data"].id.get_num_chunks() > 10 and f["weights"].id.get_num_chunks() == 1
    return path


def test_a_store_read_with_1_and_8_reader_threads_gives_the_same_blocks_bit_for_bit(chunked, monkeypatch):
    """Every array of every block (weights included), whatever the decoding threads and the blocks read ahead, is
    what h5py reads itself."""
    reads = {}
    for threads in (1, 8):
        store = BlockStore(chunked, read_threads=threads)
        for prefetch in (0, 1, 3):
            reads[threads, prefetch] = list(store.iter_blocks([3, 0, 2, 1, 3], prefetch=prefetch))
    monkeypatch.setattr(chunks, "plan", lambda f, names: None)  # h5py's own read, the reference
    expected = list(BlockStore(chunked).iter_blocks([3, 0, 2, 1, 3], prefetch=0))
    for blocks in reads.values():
        for got, want in zip(blocks, expected, strict=True):
            assert (got.index, got.row_offset) == (want.index, want.row_offset)
            for name in ARRAYS:
                a, b = getattr(got, name), getattr(want, name)
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("prefetch", [1, 2, 5])
def test_at_most_prefetch_blocks_are_read_ahead(pristine, monkeypatch, prefetch):
    started = []
    real = BlockStore.read_block
    monkeypatch.setattr(BlockStore, "read_block", lambda self, b: started.append(b) or real(self, b))
    store = BlockStore(pristine, read_threads=4)
    order = [0, 1, 2, 0, 1, 2, 2]
    for taken, block in enumerate(store.iter_blocks(order, prefetch=prefetch), start=1):
        assert block.index == order[taken - 1]
        assert len(started) <= taken + prefetch  # the block held and at most prefetch more
    assert sorted(started) == sorted(order)


def test_indices_are_zero_based_in_memory(pristine):
    store = BlockStore(pristine)
    assert store.index_base == 1
    block = store.read_block(0)
    assert block.indices.min() >= 0 and block.indices.max() < store.n_features
    assert block.to_csr(store.n_features).shape == (block.n_rows, store.n_features)


def test_info_and_verify_of_a_good_store(pristine):
    store = BlockStore(pristine)
    info = store.info()
    assert {"rows", "features", "nnz", "blocks", "labels"} <= info.keys()
    assert sum(info["labels"].values()) == info["rows"] == 3000
    assert [b["rows"] for b in info["block_sizes"]] == store.block_rows.tolist()
    assert store.verify() == []


def test_fingerprint_survives_a_copy(pristine, store_path):
    assert BlockStore(store_path).fingerprint == BlockStore(pristine).fingerprint


def test_block_out_of_range(pristine):
    with pytest.raises(StoreError, match="no block 3"):
        BlockStore(pristine).read_block(3)


# ---------------------------------------------------------------------------------------------
# refusing


def test_refuses_a_missing_path(tmp_path):
    with pytest.raises(StoreError, match="no such block store"):
        BlockStore(tmp_path / "absent.bsvm")


def test_refuses_a_plain_file(small_libsvm):
    with pytest.raises(StoreError, match="is not a block store"):
        BlockStore(small_libsvm)


def test_refuses_a_partial_directory(store_path):
    partial = store_path.with_name("copy.bsvm.partial-1234abcd")
    store_path.rename(partial)
    (partial / MANIFEST).unlink()
    with pytest.raises(StoreError, match="not a complete block store.*interrupted conversion"):
        BlockStore(partial)


def test_refuses_a_newer_format_version(store_path):
    _edit_manifest(store_path, version=FORMAT_VERSION + 1)
    with pytest.raises(StoreError, match=f"version {FORMAT_VERSION + 1}.*upgrade blocksvm"):
        BlockStore(store_path)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"complete": False}, "not a complete block store"),
        ({"format": "something-else"}, "not a blocksvm store"),
        ({"version": "1"}, "field 'version' is a string"),
    ],
)
def test_refuses_a_wrong_manifest(store_path, changes, message):
    _edit_manifest(store_path, **changes)
    with pytest.raises(StoreError, match=message):
        BlockStore(store_path)


def test_refuses_a_manifest_that_lacks_fields(store_path):
    manifest = json.loads((store_path / MANIFEST).read_text())
    del manifest["nnz"], manifest["blocks"]
    (store_path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="field .nnz. is missing"):
        BlockStore(store_path)


def test_refuses_a_manifest_that_is_not_json(store_path):
    (store_path / MANIFEST).write_text('{"format": "blocksvm-store", "vers')
    with pytest.raises(StoreError, match="is corrupted"):
        BlockStore(store_path)


def test_refuses_a_truncated_block(store_path):
    block = store_path / "block-00001.h5"
    size = block.stat().st_size
    with open(block, "r+b") as f:
        f.truncate(size - 100)
    with pytest.raises(StoreError, match=r"block 1 \(block-00001.h5\) has .* bytes.*truncated"):
        BlockStore(store_path)


def test_refuses_a_missing_block(store_path):
    (store_path / "block-00002.h5").unlink()
    with pytest.raises(StoreError, match=r"block 2 \(block-00002.h5\) is missing"):
        BlockStore(store_path)


@pytest.mark.parametrize("read_threads", [1, 8])
@pytest.mark.parametrize("dataset", ["data", "indices", "labels"])
def test_corrupted_block_fails_its_checksum(store_path, dataset, read_threads):
    _flip_byte_in_data(store_path / "block-00001.h5", dataset)
    store = BlockStore(store_path, read_threads=read_threads)  # sizes still match: only reading finds it
    store.read_block(0)
    message = (
        rf"block 1 \(block-00001.h5\) cannot be read, the file is damaged \({dataset}, chunk at element 0: .*fletcher32"
    )
    with pytest.raises(StoreError, match=message):
        store.read_block(1)
    with pytest.raises(StoreError, match=message):  # read ahead on threads: the same block named
        list(store.iter_blocks([0, 2, 1, 0], prefetch=3))
    problems = store.verify()
    assert len(problems) == 1 and "block 1 (block-00001.h5)" in problems[0]


def test_corruption_is_found_by_hdf5_checksums_alone(store_path):
    """Even when the manifest's file CRC is refreshed, fletcher32 catches the damaged chunk."""
    block = store_path / "block-00000.h5"
    _flip_byte_in_data(block)
    manifest = json.loads((store_path / MANIFEST).read_text())
    manifest["blocks"][0]["crc32"] = file_crc32(block)
    (store_path / MANIFEST).write_text(json.dumps(manifest))
    problems = BlockStore(store_path).verify()
    assert len(problems) == 1 and "block 0 (block-00000.h5) cannot be read" in problems[0]


def test_block_that_disagrees_with_the_manifest(store_path):
    manifest = json.loads((store_path / MANIFEST).read_text())
    manifest["blocks"][2]["rows"] += 1
    manifest["rows"] += 1  # the totals agree: the block file alone disagrees, found when it is read
    manifest["label_counts"][0] += 1
    (store_path / MANIFEST).write_text(json.dumps(manifest))
    store = BlockStore(store_path)
    with pytest.raises(StoreError, match=r"block 2 .* is inconsistent: field 'indptr' .* the manifest says"):
        store.read_block(2)
    assert any("is inconsistent" in p for p in store.verify())
