"""The column layout of a store (docs/FORMAT.md, *The column layout*): its columns are scipy's ``tocsc()`` of the
store's rows, its statistics numpy's sums, and its writes are safe (killed at named points, refused while a run
reads the store, the store's identity kept)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

import blocksvm.store.columns as columns_module
import blocksvm.store.transpose as transpose_module
from blocksvm import convert, write_columns, write_store
from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, make_store, write_libsvm
from blocksvm.errors import InUseError, StoreError, StoreReplacedError
from blocksvm.store import BlockStore, ensure_columns, reading
from blocksvm.train import train


def store_matrix(store: BlockStore) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The store's rows in store order, read with BlockStore: ``(X, labels, weights)`` (weights 1 without)."""
    blocks = [store.read_block(b) for b in range(store.n_blocks)]
    X = sp.vstack([b.to_csr(store.n_features) for b in blocks], format="csr")
    labels = np.concatenate([b.labels for b in blocks])
    weights = np.concatenate([b.weights for b in blocks]) if store.weighted else np.ones(store.n_rows)
    return X, labels, weights


def assert_columns_match(store: BlockStore) -> None:
    """Every column block is scipy's CSC of the store's rows over its range (rows ascending, values exact), the
    blocks tile the features, and the statistics are numpy's sums by class where the layout keeps them: unless they
    would weigh more than a quarter of the entries (32 bytes a stored column of two classes, 8 an entry)."""
    layout = store.columns
    assert layout is not None
    n_stat = len(store.classes) if len(store.classes) <= 256 else 1
    kept = layout.n_columns * 16 * n_stat <= 0.25 * layout.nnz * (4 + store.dtype.itemsize)
    assert layout.stat_classes == (n_stat if kept else 0) and layout.entry["version"] == (1 if kept else 2)
    X, labels, weights = store_matrix(store)
    csc = X.tocsc()
    csc.sort_indices()
    nonempty = np.flatnonzero(np.diff(csc.indptr))
    classes = store.classes if len(store.classes) <= 256 else None
    seen, previous_stop = [], 0
    for block in layout.iter_blocks(prefetch=2):
        assert previous_stop <= block.first < block.stop <= store.n_features
        previous_stop = block.stop
        inside = nonempty[(nonempty >= block.first) & (nonempty < block.stop)]
        np.testing.assert_array_equal(block.features, inside)
        part = csc[:, block.features]
        np.testing.assert_array_equal(block.indptr, part.indptr)
        np.testing.assert_array_equal(block.rows, part.indices)
        np.testing.assert_array_equal(block.data, part.data)
        assert block.data.dtype == store.dtype and block.rows.dtype == np.int32
        if not kept:
            assert block.sums is None and block.squares is None
            seen.append(block.features)
            continue
        dense = part.toarray().astype(np.float64)
        masks = [np.ones(len(labels), bool)] if classes is None else [labels == c for c in classes]
        sums = np.stack([(weights[m][:, None] * dense[m]).sum(axis=0) for m in masks], axis=1)
        squares = np.stack([(weights[m][:, None] * dense[m] ** 2).sum(axis=0) for m in masks], axis=1)
        np.testing.assert_allclose(block.sums, sums, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(block.squares, squares, rtol=1e-10, atol=1e-12)
        seen.append(block.features)
    np.testing.assert_array_equal(np.concatenate(seen) if seen else [], nonempty)
    assert layout.nnz == store.nnz == csc.nnz
    got_labels, got_weights = layout.row_labels()
    np.testing.assert_array_equal(got_labels, labels)
    if store.weighted:
        np.testing.assert_array_equal(got_weights, weights)
    else:
        assert got_weights is None
    assert layout.verify() == [] and store.verify() == []


def filters_of(path: Path, name: str) -> tuple[int, ...]:
    """The HDF5 filter ids of dataset ``name`` of the file ``path``."""
    with h5py.File(path, "r") as f:
        dcpl = f[name].id.get_create_plist()
        return tuple(dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters()))


def random_rows(rows: int, features: int, density: float, seed: int, dtype=np.float32) -> sp.csr_matrix:
    X = sp.random(rows, features, density=density, format="csr", random_state=seed, dtype=np.float64)
    X.data = np.round(X.data * 8 - 4, 3)
    X.eliminate_zeros()
    return X.astype(dtype)


@pytest.fixture(scope="module")
def text_store(tmp_path_factory) -> Path:
    """A dense (version 1) store converted from generated LIBSVM text, 4 row blocks."""
    folder = tmp_path_factory.mktemp("columns")
    write_libsvm(folder / "d.txt", SyntheticSpec(rows=3000, features=500, nnz=15, seed=4), progress=False)
    convert(folder / "d.txt", folder / "d.bsvm", block_rows=800, progress=False)
    return folder / "d.bsvm"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_dense_store_s_columns_are_its_csc(text_store, tmp_path, dtype):
    path = tmp_path / "s.bsvm"
    convert(text_store.parent / "d.txt", path, block_rows=800, dtype=dtype, progress=False)
    store = BlockStore(path)
    summary = write_columns(store, block_mb=0.05, jobs=2)
    assert summary.blocks == store.columns.n_blocks > 2 and summary.nnz == store.nnz
    assert store.manifest["version"] == 1  # the store's format version does not change
    assert_columns_match(store)
    assert_columns_match(BlockStore(path))  # as read back from disk


@pytest.mark.parametrize("compression", ["lzf", "gzip-1", "zstd", "none"])
def test_the_columns_are_compressed_as_the_rows(tmp_path, compression):
    """The store's compression, by h5py where blocksvm does not encode it (LZF), and decoded as row blocks are."""
    X = random_rows(900, 80, 0.1, seed=7)
    write_store((X, np.arange(900) % 2), tmp_path / "c.bsvm", block_rows=200, compression=compression, progress=False)
    write_columns(tmp_path / "c.bsvm", block_mb=0.01)
    store = BlockStore(tmp_path / "c.bsvm")
    column_file, row_file = store.path / store.columns.blocks[0]["file"], store.path / store.blocks[0]["file"]
    assert filters_of(column_file, "data") == filters_of(row_file, "data") == filters_of(column_file, "sums")
    assert filters_of(column_file, "data")[-1] == 3  # fletcher32
    assert_columns_match(store)


def test_a_compact_store_keeps_its_compact_columns(tmp_path):
    """Indices up to 2**30: the store has a feature map, and its columns are its compact ids."""
    rng = np.random.default_rng(5)
    pool = np.sort(rng.choice(2**30, 300, replace=False)) + 1
    lines = []
    for i in range(600):
        picked = np.sort(rng.choice(pool, rng.integers(0, 8), replace=False))
        pairs = " ".join(f"{j}:{v:.3g}" for j, v in zip(picked, rng.normal(size=len(picked))))
        lines.append(f"{(-1, 1)[i % 2]} {pairs}".rstrip())
    (tmp_path / "wide.txt").write_text("\n".join(lines) + "\n")
    convert(tmp_path / "wide.txt", tmp_path / "w.bsvm", block_rows=150, progress=False)
    store = BlockStore(tmp_path / "w.bsvm")
    assert store.feature_map is not None and store.space_features > 2**29
    write_columns(store, block_mb=0.01)
    assert_columns_match(store)
    assert store.columns.n_features == len(store.feature_map)


def test_a_weighted_multiclass_store(tmp_path):
    X = random_rows(2000, 120, 0.05, seed=1, dtype=np.float64)
    y = np.random.default_rng(2).choice([1.0, 2.0, 3.0, 7.0], 2000)
    w = np.random.default_rng(3).uniform(0, 3, 2000)
    w[::50] = 0.0
    write_store((X, y), tmp_path / "m.bsvm", sample_weight=w, block_rows=300, dtype="float64", progress=False)
    store = BlockStore(tmp_path / "m.bsvm")
    assert store.weighted and len(store.classes) == 4
    write_columns(store, block_mb=0.02)
    assert store.columns.stat_classes == 4
    assert_columns_match(store)


def test_regression_labels_give_statistics_as_totals(tmp_path):
    X = random_rows(1500, 60, 0.1, seed=4)
    y = np.random.default_rng(4).normal(size=1500)  # 1,500 distinct labels
    summary = write_store((X, y), tmp_path / "r.bsvm", block_rows=400, progress=False, columns=True)
    store = BlockStore(tmp_path / "r.bsvm")
    assert summary.columns["blocks"] == 1 and summary.columns["store"] == str(tmp_path / "r.bsvm")
    assert store.columns.stat_classes == 1 and store.columns.n_blocks == 1
    assert_columns_match(store)


def test_a_tiny_block_size_gives_many_blocks_and_a_large_column_alone(tmp_path):
    X = random_rows(3000, 200, 0.02, seed=6).tolil()
    X[:, 7] = 1.5  # 3,000 entries: 24 kB of row ids and values, over the target below
    X = X.tocsr()
    y = np.where(np.arange(3000) % 3 == 0, 1.0, -1.0)
    write_store((X, y), tmp_path / "t.bsvm", block_rows=700, progress=False)
    store = BlockStore(tmp_path / "t.bsvm")
    write_columns(store, block_mb=0.004, jobs=3)
    layout = store.columns
    assert layout.n_blocks > 20
    alone = [b for b in layout.blocks if 7 in range(b["first"], b["stop"])]
    assert len(alone) == 1 and alone[0]["columns"] == 1 and alone[0]["nnz"] == 3000
    assert all(b["nnz"] * 8 <= 4000 + 24 * 8 for b in layout.blocks if b is not alone[0])  # about the target each
    assert_columns_match(store)


def test_the_layout_is_the_same_whatever_the_threads(text_store, tmp_path):
    shutil.copytree(text_store, tmp_path / "a.bsvm")
    write_columns(tmp_path / "a.bsvm", block_mb=0.03, jobs=1)
    one = BlockStore(tmp_path / "a.bsvm").manifest["columns"]["blocks"]
    write_columns(tmp_path / "a.bsvm", block_mb=0.03, jobs=4)
    four = BlockStore(tmp_path / "a.bsvm").manifest["columns"]["blocks"]
    assert one == four  # the files' bytes too (crc32)


@pytest.mark.parametrize("kind, wide", [("range_type", np.int32), ("count_type", np.int64)])
def test_the_layout_is_the_same_with_the_wide_types(text_store, tmp_path, monkeypatch, kind, wide):
    """Past 65,536 pieces their numbers take 4 bytes, and from 2^32 entries a feature's count 8: the same files (tested
    here by forcing the type, in write_columns' pass A and in convert --columns' counts)."""
    assert transpose_module.range_type(1 << 16) == np.uint16 and transpose_module.range_type((1 << 16) + 1) == np.int32
    assert transpose_module.count_type((1 << 32) - 1) == np.uint32 and transpose_module.count_type(1 << 32) == np.int64
    shutil.copytree(text_store, tmp_path / "a.bsvm")
    write_columns(tmp_path / "a.bsvm", block_mb=0.03, jobs=2)
    short = BlockStore(tmp_path / "a.bsvm").manifest["columns"]["blocks"]
    monkeypatch.setattr(transpose_module, kind, lambda n: np.dtype(wide))
    monkeypatch.setattr(columns_module, kind, lambda n: np.dtype(wide), raising=False)
    write_columns(tmp_path / "a.bsvm", block_mb=0.03, jobs=2)
    assert BlockStore(tmp_path / "a.bsvm").manifest["columns"]["blocks"] == short  # the files' bytes too (crc32)
    assert_columns_match(BlockStore(tmp_path / "a.bsvm"))
    convert(text_store.parent / "d.txt", tmp_path / "b.bsvm", block_rows=800, columns=True, progress=False)
    assert_columns_match(BlockStore(tmp_path / "b.bsvm"))


def test_convert_with_columns_equals_convert_then_columns(text_store, tmp_path, capsys):
    source = text_store.parent / "d.txt"
    assert main(["convert", str(source), str(tmp_path / "a.bsvm"), "--block-mb", "0.05", "--columns"]) == 0
    assert "columns in" in capsys.readouterr().out
    assert main(["convert", str(source), str(tmp_path / "b.bsvm"), "--block-mb", "0.05", "-q"]) == 0
    assert not (tmp_path / "b.bsvm" / "columns").exists() and BlockStore(tmp_path / "b.bsvm").columns is None
    assert main(["columns", str(tmp_path / "b.bsvm"), "--jobs", "2"]) == 0
    assert "columns of" in capsys.readouterr().out
    a, b = BlockStore(tmp_path / "a.bsvm").columns, BlockStore(tmp_path / "b.bsvm").columns
    assert a.n_blocks == b.n_blocks > 1
    for x, y in zip(a.iter_blocks(), b.iter_blocks()):
        for name in ("features", "indptr", "rows", "data", "sums", "squares"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name))
    assert [e["first"] for e in a.blocks] == [e["first"] for e in b.blocks]
    assert sorted(p.name for p in (tmp_path / "a.bsvm").iterdir()) == sorted(
        p.name for p in (tmp_path / "b.bsvm").iterdir()
    )


def test_info_describes_the_columns(text_store, tmp_path, capsys):
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    assert main(["info", str(store)]) == 0
    assert "columns      none" in capsys.readouterr().out
    write_columns(store, block_mb=0.05)
    assert main(["info", str(store)]) == 0
    out = capsys.readouterr().out
    layout = BlockStore(store).columns
    assert f"columns      {layout.n_blocks} blocks by feature, 500 of 500 features stored" in out
    assert main(["info", str(store), "--json", "--verify"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["columns"]["blocks"] == layout.n_blocks and info["columns"]["nnz"] == layout.nnz
    assert info["verify"] == {"ok": True, "problems": []}


def test_info_verify_names_a_damaged_column_file(text_store, tmp_path, capsys):
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    write_columns(store, block_mb=0.05)
    damaged = store / "columns" / "col-00001.h5"
    with h5py.File(damaged, "r") as f:
        offset = f["data"].id.get_chunk_info(0).byte_offset + 10
    with open(damaged, "r+b") as f:
        f.seek(offset)
        f.write(b"\xde\xad\xbe\xef")
    assert main(["info", str(store), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "verify       FAILED" in out
    assert f"{store}: column block 1 (columns/col-00001.h5): file checksum differs from the manifest" in out
    assert "column block 1 (columns/col-00001.h5) cannot be read, the file is damaged (data, chunk at element 0" in out
    with pytest.raises(StoreError, match=r"col-00001\.h5\) cannot be read, the file is damaged") as caught:
        BlockStore(store).columns.read_block(1)
    assert "\n" not in str(caught.value)
    BlockStore(store).columns.read_block(0)  # the others read


def test_a_missing_or_cut_column_file_is_named_when_the_layout_opens(text_store, tmp_path):
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    write_columns(store, block_mb=0.05)
    os.truncate(store / "columns" / "col-00000.h5", 100)
    with pytest.raises(StoreError, match=r"column block 0 \(columns/col-00000\.h5\) has 100 bytes, the manifest says"):
        BlockStore(store).columns  # noqa: B018
    (store / "columns" / "rows.h5").unlink()
    write_columns(store)  # written again: whole
    assert BlockStore(store).columns.verify() == []


def test_a_column_file_of_another_generation_is_refused(text_store, tmp_path):
    source = text_store.parent / "d.txt"
    for name in ("a", "b"):
        convert(source, tmp_path / f"{name}.bsvm", block_rows=800, columns=True, progress=False)
    a, b = tmp_path / "a.bsvm", tmp_path / "b.bsvm"
    shutil.copy(b / "columns" / "col-00000.h5", a / "columns" / "col-00000.h5")  # same size, another store's
    layout = BlockStore(a).columns
    with pytest.raises(StoreReplacedError, match=r"column block 0 \(columns/col-00000\.h5\) is of generation"):
        layout.read_block(0)


def test_the_manifest_key_is_checked(text_store, tmp_path):
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    write_columns(store)
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["columns"]["blocks"][0]["nnz"] = "many"
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=r"its 'columns' entry is damaged \(blocks\[0\]\): write the columns again"):
        BlockStore(store).columns  # noqa: B018
    assert BlockStore(store).n_rows == 3000  # the rows still read
    manifest["columns"]["version"] = 3
    (store / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="its column layout is version 3; this blocksvm reads version 2"):
        BlockStore(store).columns  # noqa: B018
    write_columns(store)  # replaced
    assert BlockStore(store).columns.verify() == []


def test_writing_columns_keeps_the_store_s_identity_and_its_checkpoints(tmp_path):
    path = tmp_path / "s.bsvm"
    make_store(path, SyntheticSpec(rows=6000, features=300, nnz=10, seed=2), block_rows=1000, progress=False)
    before = BlockStore(path)
    params = {"C": 0.5, "loss": "hinge", "tol": 0.0, "max_outer": 2, "seed": 3}
    whole = train(path, verbose=0, **params)
    ck = tmp_path / "ck.h5"
    cut = train(path, verbose=0, checkpoint=ck, time_limit=1e-9, **params)  # stops after one block
    assert cut.interrupted
    write_columns(path, block_mb=0.02)
    after = BlockStore(path)
    assert after.fingerprint == before.fingerprint and after.store_id == before.store_id
    assert after.manifest["version"] == before.manifest["version"]
    assert {k: v for k, v in after.manifest.items() if k != "columns"} == before.manifest
    resumed = train(path, verbose=0, resume=ck, **params)
    assert not resumed.interrupted
    np.testing.assert_array_equal(resumed.model.coef, whole.model.coef)


def test_refused_in_one_line_while_a_run_reads_the_store(text_store, tmp_path, capsys):
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    with reading(store):
        with pytest.raises(InUseError, match=f"cannot write the columns of {store}: a run is reading it"):
            write_columns(store)
        assert main(["columns", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"blocksvm: error: cannot write the columns of {store}"), err
    assert BlockStore(store).columns is None and not (store / "columns").exists()
    write_columns(store)  # once the run has ended


def test_ensure_columns_writes_them_once_saying_so(text_store, tmp_path, monkeypatch):
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store, said = BlockStore(tmp_path / "s.bsvm"), []
    layout = ensure_columns(store, say=said.append)
    assert len(said) == 1 and said[0].startswith(f"writing the column layout of {store.path}")
    assert layout.nnz == store.nnz and store.columns is not None
    ensure_columns(tmp_path / "s.bsvm", say=said.append)
    assert len(said) == 1
    shutil.copytree(text_store, tmp_path / "r.bsvm")
    monkeypatch.setattr(columns_module.os, "access", lambda path, mode: False)  # a folder this process cannot write
    with pytest.raises(StoreError, match="this process cannot write in the store's folder") as caught:
        ensure_columns(tmp_path / "r.bsvm")
    assert f"run 'blocksvm columns {tmp_path / 'r.bsvm'}' as a user who can" in str(caught.value)


@pytest.mark.parametrize("stage", ["block", "renamed", "unkeyed"])
def test_a_killed_write_leaves_no_columns_and_the_next_write_succeeds(text_store, tmp_path, stage):
    """The write ends as by SIGKILL at a named point (the test hook of blocksvm.store.columns)."""
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    if stage == "unkeyed":  # replacing a layout: the old one is dropped from the manifest first
        write_columns(store)
    env = {**os.environ, "BLOCKSVM_TEST_KILL_IN_COLUMNS_WRITE": stage}
    done = subprocess.run(
        [sys.executable, "-m", "blocksvm.cli", "columns", str(store), "--block-mb", "0.05", "-q"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 137, done.stderr
    left = sorted(p.name for p in store.iterdir() if p.name.startswith("columns"))
    assert left, "the kill left nothing to clean: it happened too early"
    assert BlockStore(store).columns is None
    assert BlockStore(store).verify() == []
    summary = write_columns(store, block_mb=0.05)
    assert sorted(p.name for p in store.iterdir() if p.name.startswith("columns")) == ["columns"]
    assert summary.blocks > 1
    assert_columns_match(BlockStore(store))


def test_an_empty_store_has_an_empty_layout(tmp_path):
    X = sp.csr_matrix((50, 10), dtype=np.float32)  # rows without a single entry
    write_store((X, np.ones(50)), tmp_path / "e.bsvm", progress=False)
    summary = write_columns(tmp_path / "e.bsvm")
    layout = BlockStore(tmp_path / "e.bsvm").columns
    assert (summary.blocks, layout.n_blocks, layout.nnz) == (0, 0, 0)
    assert layout.row_labels()[0].tolist() == [1.0] * 50 and layout.verify() == []


def test_a_failed_write_keeps_the_columns_the_store_had(text_store, tmp_path, monkeypatch):
    """A full disk while the new layout is written: one line, and the store's previous layout still reads."""
    shutil.copytree(text_store, tmp_path / "s.bsvm")
    store = tmp_path / "s.bsvm"
    write_columns(store, block_mb=0.05)
    before = BlockStore(store).manifest["columns"]

    def full_disk(path, fill, libver=None):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(transpose_module, "write_hdf5", full_disk)
    with pytest.raises(StoreError) as caught:
        write_columns(store, block_mb=0.02)
    assert str(caught.value) == (
        f"cannot write the column layout of {store}: No space left on device (its rows are unchanged; its columns "
        "are those it had)"
    )
    assert BlockStore(store).manifest["columns"] == before and BlockStore(store).columns.verify() == []
    assert sorted(p.name for p in store.iterdir() if p.name.startswith("columns")) == ["columns"]


@pytest.mark.parametrize("damage", ["rows out of order", "statistics off", "a row past the store"])
def test_verify_finds_a_column_file_that_lies(text_store, tmp_path, damage):
    """A column file rewritten whole (its checksums right) with one invariant broken: verify names it."""
    from blocksvm.store import format as F
    from blocksvm.store.column_layout import COLUMN_DATASETS

    shutil.copytree(text_store, tmp_path / "s.bsvm")
    path = tmp_path / "s.bsvm"
    write_columns(path, block_mb=0.05)
    store = BlockStore(path)
    block = store.columns.read_block(1)
    s = int(np.flatnonzero(block.counts >= 2)[0])
    at = block.indptr[s]
    if damage == "rows out of order":
        block.rows[at], block.rows[at + 1] = block.rows[at + 1], block.rows[at]
    elif damage == "statistics off":
        block.sums[s, 0] += 1.0
    else:
        block.rows[block.indptr[s + 1] - 1] = store.n_rows
    filters = F.compression_filters(store.manifest["params"]["compression"])
    file = path / store.columns.blocks[1]["file"]
    stamp = (store.store_id, store.columns.entry["version"])
    entry = transpose_module._write_column_block(file, block, dict.fromkeys(COLUMN_DATASETS), filters, stamp)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["columns"]["blocks"][1] = entry
    (path / "manifest.json").write_text(json.dumps(manifest))
    problems = BlockStore(path).verify()
    expected = {
        "rows out of order": "rows do not increase within a column, or lie beyond the store's rows",
        "statistics off": "the statistics disagree with the data",
        "a row past the store": "rows do not increase within a column, or lie beyond the store's rows",
    }[damage]
    assert problems == [f"{path}: column block 1 (columns/col-00001.h5): {expected}"]
