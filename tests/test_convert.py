"""LIBSVM text -> block store: exact round trips, shuffling, and interrupted conversions."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL_SPEC, assert_store_matches_sklearn

from blocksvm import convert
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.errors import InputFormatError, ParameterError, StoreError
from blocksvm.store import BlockStore
from blocksvm.store.format import COMPRESSIONS

# ---------------------------------------------------------------------------------------------
# round trips, checked against scikit-learn row for row


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_compressed_input(tmp_path, small_libsvm, suffix):
    packed = tmp_path / f"small.txt{suffix}"
    write_libsvm(packed, SMALL_SPEC, progress=False)
    summary = convert(packed, tmp_path / "store", block_rows=700)
    assert summary.source_bytes < summary.text_bytes == small_libsvm.stat().st_size
    assert_store_matches_sklearn(tmp_path / "store", small_libsvm)


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("block_rows", [450, 1000, 5000])
def test_shuffle_and_block_sizes(tmp_path, small_libsvm, shuffle, block_rows):
    summary = convert(small_libsvm, tmp_path / "store", block_rows=block_rows, shuffle=shuffle)
    store = BlockStore(tmp_path / "store")
    expected_blocks = -(-SMALL_SPEC.rows // block_rows)
    assert summary.blocks == store.n_blocks == expected_blocks
    if not shuffle:
        assert store.block_rows.tolist()[:-1] == [block_rows] * (expected_blocks - 1)
    assert_store_matches_sklearn(tmp_path / "store", small_libsvm)


def test_block_size_in_megabytes(tmp_path, small_libsvm):
    convert(small_libsvm, tmp_path / "store", block_mb=0.1, shuffle=False)
    store = BlockStore(tmp_path / "store")
    csr_bytes = [24 * b["rows"] + 8 * b["nnz"] for b in store.blocks]
    assert store.n_blocks > 3
    assert max(csr_bytes) <= 0.1e6 + 24 + 8 * SMALL_SPEC.features  # one row may spill over
    assert_store_matches_sklearn(tmp_path / "store", small_libsvm)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_value_dtypes(tmp_path, small_libsvm, dtype):
    convert(small_libsvm, tmp_path / "store", dtype=dtype, block_rows=1000)
    assert BlockStore(tmp_path / "store").dtype == np.dtype(dtype)
    assert_store_matches_sklearn(tmp_path / "store", small_libsvm, dtype=np.dtype(dtype))


@pytest.mark.parametrize("compression", [*COMPRESSIONS, "gzip-6", "zstd-1"])
def test_compressions(tmp_path, small_libsvm, compression):
    convert(small_libsvm, tmp_path / "store", compression=compression, block_rows=1000)
    store = BlockStore(tmp_path / "store")
    assert store.manifest["params"]["compression"] == compression
    assert store.verify() == []
    assert_store_matches_sklearn(tmp_path / "store", small_libsvm)


def test_awkward_text_round_trips(tmp_path, write_text):
    text = (
        "# a header comment\n+1 qid:1 1:1e-3 4:2.5E+2 # tail\r\n\n-1 2:-0.5 3:007\r\n"
        "2.5 1:0.1000000000000000055511151231257827021181583404541015625\n   \n1e0 5:1"
    )
    path = write_text(text)
    convert(path, tmp_path / "store", chunk_bytes=16, block_rows=2, dtype="float64")
    assert_store_matches_sklearn(tmp_path / "store", path, dtype=np.float64)
    store = BlockStore(tmp_path / "store")
    lines = sorted(np.concatenate([store.read_block(b).lines for b in range(store.n_blocks)]))
    assert lines == [2, 4, 5, 7]


def test_zero_based_and_n_features(tmp_path, write_text):
    path = write_text("1 0:1 2:1\n-1 1:1\n")
    summary = convert(path, tmp_path / "auto", n_features=10)
    assert summary.features == 10
    store = BlockStore(tmp_path / "auto")
    assert store.index_base == 0
    assert_store_matches_sklearn(tmp_path / "auto", path, n_features=10)
    with pytest.raises(InputFormatError, match=":1: feature index 0"):
        convert(path, tmp_path / "one", zero_based=False)
    with pytest.raises(ParameterError, match="n_features=2 is smaller"):
        convert(path, tmp_path / "narrow", n_features=2)
    assert not (tmp_path / "one").exists() and not (tmp_path / "narrow").exists()
    assert list(tmp_path.glob("*.partial-*")) == []


def test_real_data_sets(tmp_path, shared_data):
    expected = {  # from shared/data/MANIFEST.md
        "a9a": (32_561, 451_592, {"-1": 24_720, "1": 7_841}),
        "a9a.t": (16_281, 225_731, {"-1": 12_435, "1": 3_846}),
        "w8a": (49_749, 579_586, {"-1": 48_270, "1": 1_479}),
    }
    for name, (rows, nnz, labels) in expected.items():
        width = {"a9a": 123, "a9a.t": 123, "w8a": 300}[name]
        out = tmp_path / name
        summary = convert(shared_data / name, out, n_features=width, block_rows=10_000)
        info = BlockStore(out).info()
        assert (summary.rows, summary.nnz, info["labels"]) == (rows, nnz, labels)
        assert info["features"] == width and info["index_base"] == 1
        assert_store_matches_sklearn(out, shared_data / name, n_features=width)


def test_a9a_test_file_width_comes_from_the_data_without_n_features(tmp_path, shared_data):
    summary = convert(shared_data / "a9a.t", tmp_path / "store")
    assert summary.features == 122  # feature 123 never occurs in a9a.t


# ---------------------------------------------------------------------------------------------
# shuffling


def _label_sorted_file(path: Path, rows: int = 2000) -> Path:
    with open(path, "w") as f:
        for i in range(rows):
            f.write(f"{-1 if i < rows // 2 else 1} {1 + i % 50}:1 {60 + i % 7}:0.5\n")
    return path


def _blocks(path: Path) -> list:
    store = BlockStore(path)
    return [store.read_block(b) for b in range(store.n_blocks)]


def test_shuffle_mixes_a_label_sorted_file(tmp_path):
    src = _label_sorted_file(tmp_path / "sorted.txt")
    convert(src, tmp_path / "mixed", block_rows=200, seed=3)
    blocks = _blocks(tmp_path / "mixed")
    assert len(blocks) >= 8
    for block in blocks:
        assert set(block.labels.tolist()) == {-1.0, 1.0}
        assert np.any(np.diff(block.lines) < 0)  # rows are permuted within blocks too
    convert(src, tmp_path / "plain", block_rows=200, shuffle=False)
    plain = _blocks(tmp_path / "plain")
    assert set(plain[0].labels.tolist()) == {-1.0}
    assert np.all(np.diff(plain[0].lines) > 0)


def test_same_seed_same_blocks_other_seed_other_blocks(tmp_path):
    src = _label_sorted_file(tmp_path / "sorted.txt")
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        convert(src, tmp_path / name, block_rows=300, seed=seed)
    a, b, c = (_blocks(tmp_path / name) for name in "abc")
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for field in ("indptr", "indices", "data", "labels", "lines"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field))
    assert not np.array_equal(a[0].lines, c[0].lines)


def test_the_store_is_the_same_byte_for_byte_whatever_the_jobs(tmp_path, small_libsvm, monkeypatch):
    """--jobs 1 and --jobs 4 (parser threads over 4 kB chunks of text, block writers) write identical files: every
    block, with its weights, and the manifest but for the time it was made and took. The store id, random by design,
    is fixed here so that the blocks, which carry it, can be compared."""
    weights = tmp_path / "weights.txt"
    weights.write_text("".join(f"{(i % 7) / 3:g}\n" for i in range(SMALL_SPEC.rows)))
    monkeypatch.setattr("blocksvm.store.writer.uuid.uuid4", lambda: uuid.UUID(int=31))
    stores = []
    for jobs in (1, 4):
        stores.append(tmp_path / f"jobs{jobs}.bsvm")
        convert(small_libsvm, stores[-1], block_rows=400, weights=weights, jobs=jobs, chunk_bytes=4096)
    one, four = stores
    files = sorted(p.name for p in one.iterdir())
    assert files == sorted(p.name for p in four.iterdir()) and len(files) > 8
    for name in files:
        if name != "manifest.json":
            assert (one / name).read_bytes() == (four / name).read_bytes(), name
    manifests = [json.loads((store / "manifest.json").read_text()) for store in stores]
    for manifest in manifests:
        assert manifest.pop("created") and manifest.pop("convert_seconds") >= 0
    assert manifests[0] == manifests[1] and "weights" in manifests[0]


# ---------------------------------------------------------------------------------------------
# failures leave nothing that looks like a store


def test_empty_file_is_an_error(tmp_path, write_text):
    for text in ("", "\n\n# only comments\n"):
        path = write_text(text)
        with pytest.raises(InputFormatError, match="contains no data rows"):
            convert(path, tmp_path / "store")
        assert not (tmp_path / "store").exists()


def test_bad_line_removes_the_partial_store(tmp_path, write_text):
    path = write_text("1 1:1\n" * 100 + "1 2:1 1:1\n")
    with pytest.raises(InputFormatError, match=r":101: .*follows a larger index"):
        convert(path, tmp_path / "store", chunk_bytes=64)
    assert list(tmp_path.iterdir()) == [path]


def test_skip_bad_lines_counts_them(tmp_path, write_text):
    path = write_text("1 1:1\nfoo\n-1 2:1\n1 3:1 3:2\n1 1:1e39\n-1 1:2\n")
    summary = convert(path, tmp_path / "store", skip_bad_lines=True)
    assert (summary.rows, summary.skipped_lines) == (3, 3)
    assert summary.skipped_examples[0].startswith(f"{path}:2: ")
    store = BlockStore(tmp_path / "store")
    assert store.info()["skipped_lines"] == 3
    assert sorted(store.read_block(0).lines.tolist()) == [1, 3, 6]


def test_existing_output_is_kept_unless_overwrite(tmp_path, small_libsvm):
    out = tmp_path / "store"
    convert(small_libsvm, out)
    first_id = BlockStore(out).store_id
    with pytest.raises(StoreError, match="already exists"):
        convert(small_libsvm, out)
    assert BlockStore(out).store_id == first_id
    convert(small_libsvm, out, overwrite=True, block_rows=500)
    assert BlockStore(out).store_id != first_id and BlockStore(out).n_blocks == 6


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"block_rows": 0}, "block_rows must be a positive integer"),
        ({"block_rows": 10, "block_mb": 1.0}, "not both"),
        ({"block_mb": -1.0}, "block_mb must be positive"),
        ({"dtype": "float16"}, "dtype must be one of"),
        ({"compression": "brotli"}, "unknown compression"),
        ({"compression": "gzip-10"}, "level must be an integer in 1..9"),
        ({"zero_based": "maybe"}, "zero_based must be"),
        ({"n_features": 0}, "n_features must be a positive integer"),
    ],
)
def test_bad_parameters(tmp_path, small_libsvm, kwargs, message):
    with pytest.raises(ParameterError, match=message):
        convert(small_libsvm, tmp_path / "store", **kwargs)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# a conversion killed mid-way is never taken for a complete store


@pytest.fixture(scope="module")
def big_libsvm(tmp_path_factory) -> Path:
    """About 40 MB of text: several chunks to parse (8 MB each) and 15 blocks to write."""
    path = tmp_path_factory.mktemp("big") / "big.txt"
    write_libsvm(path, SyntheticSpec(rows=60_000, features=100_000, nnz=50, seed=2), progress=False)
    return path


# A conversion in a child that SIGKILLs itself at a fixed point, so the kill lands in the same stage
# on any machine (polling for files from outside would race a fast conversion on a loaded machine).
_KILLED_CONVERSION = """
import importlib, os, signal, sys
from blocksvm.cli import main
from blocksvm.io.spill import SpillWriter

def kill_after(owner, name, calls):
    original, seen = getattr(owner, name), []
    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        seen.append(1)
        if len(seen) == calls:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    setattr(owner, name, wrapper)

if sys.argv[1] == "parsing":
    kill_after(SpillWriter, "add", 2)  # two chunks parsed and spilled, more to come
else:
    kill_after(importlib.import_module("blocksvm.io.conversion"), "_build_block", 1)  # a block file written
sys.exit(main(["convert", *sys.argv[2:], "-q", "--block-size", "4000"]))
"""


def _partials(out: Path) -> list[Path]:
    return list(out.parent.glob(out.name + ".partial-*"))


@pytest.mark.parametrize("stage", ["parsing", "writing"])
def test_killed_conversion_is_never_a_complete_store(tmp_path, big_libsvm, stage):
    out = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_CONVERSION, stage, str(big_libsvm), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    partials = _partials(out)
    assert len(partials) == 1
    blocks = list(partials[0].glob("block-*.h5"))
    assert (partials[0] / "spill.bin").exists() and (stage == "writing") == bool(blocks)
    for path in (out, partials[0]):
        with pytest.raises(StoreError, match="no such block store|not a complete block store"):
            BlockStore(path)
    # the leftover directory does not stand in the way of a new conversion
    summary = convert(big_libsvm, out, block_rows=20_000)
    assert BlockStore(out).n_rows == summary.rows == 60_000


def test_manifest_is_the_last_thing_written(tmp_path, small_libsvm):
    out = tmp_path / "store"
    convert(small_libsvm, out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is True
    assert sorted(p.name for p in out.iterdir()) == sorted(["manifest.json"] + [b["file"] for b in manifest["blocks"]])
