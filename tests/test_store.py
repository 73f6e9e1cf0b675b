"""The store reader: it reads what was written and refuses anything incomplete or damaged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from blocksvm import convert
from blocksvm.errors import StoreError
from blocksvm.store import BlockStore, ReadStats
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
        ({"version": "1"}, "store format version"),
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
    with pytest.raises(StoreError, match="lacks nnz, blocks"):
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


@pytest.mark.parametrize("dataset", ["data", "indices", "labels"])
def test_corrupted_block_fails_its_checksum(store_path, dataset):
    _flip_byte_in_data(store_path / "block-00001.h5", dataset)
    store = BlockStore(store_path)  # sizes still match: only reading finds it
    store.read_block(0)
    with pytest.raises(StoreError, match=r"block 1 \(block-00001.h5\) cannot be read"):
        store.read_block(1)
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
    (store_path / MANIFEST).write_text(json.dumps(manifest))
    store = BlockStore(store_path)
    with pytest.raises(StoreError, match=r"block 2 .* is inconsistent: .* the manifest says"):
        store.read_block(2)
    assert any("do not add up" in p for p in store.verify())
