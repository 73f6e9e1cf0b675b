"""Instance weights in the data layer (issue 33): kept per row by ``write_store(sample_weight=)``, ``convert --weights
FILE`` and VW's importance weights (tests/test_vw.py), reported by ``info`` (the solvers read them:
tests/test_instance_weights.py). A store without weights, or whose weights are all 1, is the store blocksvm wrote
before weights."""

from __future__ import annotations

import bz2
import json

import h5py
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import SMALL_SPEC

from blocksvm import InputFormatError, ParameterError, convert, write_store
from blocksvm.cli import main
from blocksvm.rows import Rows
from blocksvm.store import BlockStore
from blocksvm.store.format import BLOCK_DATASETS, DENSE_VERSION, MAPPED_VERSION, WEIGHTED_VERSION


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def weights_by_line(path) -> dict[int, float]:
    """Each row's weight, keyed by its source line, read block by block (None: the store has none)."""
    store = BlockStore(path)
    found = {}
    for b in range(store.n_blocks):
        block = store.read_block(b)
        assert block.weights is not None
        found.update(zip(block.lines.tolist(), block.weights.tolist()))
    return found


def datasets(path) -> list[list[str]]:
    """The dataset names of every block file of a store."""
    store = BlockStore(path)
    names = []
    for entry in store.blocks:
        with h5py.File(store.path / entry["file"], "r") as f:
            names.append(sorted(f))
    return names


def arrays(path) -> list[dict[str, np.ndarray]]:
    store = BlockStore(path)
    out = []
    for entry in store.blocks:
        with h5py.File(store.path / entry["file"], "r") as f:
            out.append({name: f[name][()] for name in f} | {"version": f.attrs["version"]})
    return out


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(5)
    X = sp.random(500, 30, density=0.2, format="csr", random_state=6)
    y = np.where(rng.random(500) < 0.5, -1.0, 1.0)
    w = rng.choice([0.0, 0.5, 1.0, 2.0, 7.25], size=500)
    return X, y, w


def test_write_store_keeps_each_rows_weight_through_the_shuffle(tmp_path, rows):
    """Rows spread over blocks at random keep their own weight (keyed by line = row number); the manifest's summary
    is numpy's; format version 3 (a blocksvm that would ignore the weights refuses the store)."""
    X, y, w = rows
    summary = write_store((X, y), tmp_path / "w.bsvm", sample_weight=w, block_rows=60, chunk_rows=77)
    store = BlockStore(tmp_path / "w.bsvm")
    assert store.n_blocks > 5 and store.weighted and store.manifest["version"] == WEIGHTED_VERSION
    assert weights_by_line(tmp_path / "w.bsvm") == {i + 1: float(x) for i, x in enumerate(w)}
    expected = {"sum": float(w.sum()), "min": 0.0, "max": 7.25, "zero_rows": int((w == 0).sum())}
    assert store.manifest["weights"] == pytest.approx(expected) and summary.weights == store.manifest["weights"]
    assert all(names == sorted([*BLOCK_DATASETS, "weights"]) for names in datasets(tmp_path / "w.bsvm"))
    assert store.verify() == []


def test_a_store_without_weights_is_the_store_of_before(tmp_path, rows):
    """No weights, or weights that are all 1: the same block arrays bit for bit, no ``weights`` dataset or manifest
    key, format version 1."""
    X, y, _ = rows
    write_store((X, y), tmp_path / "plain.bsvm", block_rows=100)
    write_store((X, y), tmp_path / "ones.bsvm", block_rows=100, sample_weight=np.ones(len(y)))
    for name in ("plain.bsvm", "ones.bsvm"):
        store = BlockStore(tmp_path / name)
        assert not store.weighted and "weights" not in store.manifest and store.manifest["version"] == DENSE_VERSION
        assert all(names == sorted(BLOCK_DATASETS) for names in datasets(tmp_path / name))
        assert all(store.read_block(b).weights is None for b in range(store.n_blocks))
    plain, ones = arrays(tmp_path / "plain.bsvm"), arrays(tmp_path / "ones.bsvm")
    assert len(plain) == len(ones)
    for a, b in zip(plain, ones):
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_a_compact_weighted_store_is_version_3_with_its_map(tmp_path):
    """A sparse space's feature map and weights together: version 3, the map written with the store's version."""
    X = sp.csr_matrix(([1.0, 2.0, 3.0], ([0, 1, 2], [5, 900_000, 2_000_000])), shape=(3, 2_000_001))
    write_store((X, np.array([1.0, -1.0, 1.0])), tmp_path / "c.bsvm", sample_weight=[1.0, 3.0, 0.0])
    store = BlockStore(tmp_path / "c.bsvm")
    assert store.feature_map is not None and store.manifest["version"] == WEIGHTED_VERSION
    with h5py.File(tmp_path / "c.bsvm" / "features.h5", "r") as f:
        assert f.attrs["version"] == WEIGHTED_VERSION
    assert weights_by_line(tmp_path / "c.bsvm") == {1: 1.0, 2: 3.0, 3: 0.0}
    write_store((X, np.array([1.0, -1.0, 1.0])), tmp_path / "m.bsvm")
    assert BlockStore(tmp_path / "m.bsvm").manifest["version"] == MAPPED_VERSION


def test_a_data_frames_weight_column_and_chunks_with_weights(tmp_path, rows):
    X, y, w = rows
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(X.shape[1])]).assign(w=w)
    write_store((frame, y), tmp_path / "frame.bsvm", sample_weight="w", chunk_rows=128)
    store = BlockStore(tmp_path / "frame.bsvm")
    assert store.n_features == X.shape[1]  # the weight column is not a feature
    assert weights_by_line(tmp_path / "frame.bsvm") == {i + 1: float(x) for i, x in enumerate(w)}
    chunks = [(X[i : i + 100], y[i : i + 100], w[i : i + 100]) for i in range(0, 500, 100)]
    write_store(chunks, tmp_path / "chunks.bsvm")
    assert weights_by_line(tmp_path / "chunks.bsvm") == {i + 1: float(x) for i, x in enumerate(w)}
    with pytest.raises(ParameterError, match=r"every chunk as \(X, y, sample_weight\)"):
        write_store([chunks[0], chunks[1][:2]], tmp_path / "mixed.bsvm")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (-0.5, "the rows given:3: weight -0.5 is negative: instance weights must be >= 0"),
        (np.nan, "the rows given:3: weight nan is not a finite number"),
        (np.inf, "the rows given:3: weight inf is not a finite number"),
    ],
)
def test_write_store_refuses_a_negative_or_non_finite_weight_naming_its_row(tmp_path, rows, bad, message):
    X, y, w = rows
    w = w.copy()
    w[2] = bad
    with pytest.raises(InputFormatError) as caught:
        write_store((X, y), tmp_path / "bad.bsvm", sample_weight=w)
    assert str(caught.value) == message
    assert not (tmp_path / "bad.bsvm").exists()
    with pytest.raises(ParameterError, match="sample_weight 499 weights"):
        write_store((X, y), tmp_path / "short.bsvm", sample_weight=w[1:])


def test_rows_carry_their_weights_through_slice_take_and_stack():
    a = Rows(
        np.array([0, 1, 3]),
        np.array([0, 1, 2], np.int32),
        np.ones(3),
        np.array([1.0, -1.0]),
        None,
        np.array([2.0, 0.0]),
    )
    b = Rows(np.array([0, 1]), np.array([4], np.int32), np.ones(1), np.array([1.0]))
    assert a.slice(1, 2).weights.tolist() == [0.0] and a.take(np.array([1, 0])).weights.tolist() == [0.0, 2.0]
    assert Rows.stack([a, b]).weights.tolist() == [2.0, 0.0, 1.0] and Rows.stack([b, b]).weights is None


# ---- convert --weights FILE ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def weights_file(tmp_path_factory, small_libsvm):
    """One weight a line for small.txt's rows (a blank line among them, which is not a weight)."""
    rng = np.random.default_rng(3)
    w = rng.choice([0.0, 0.25, 1.0, 3.0], size=SMALL_SPEC.rows)
    path = tmp_path_factory.mktemp("w") / "small.w"
    text = "\n".join(repr(float(x)) for x in w[:10]) + "\n\n" + "\n".join(repr(float(x)) for x in w[10:]) + "\n"
    path.write_text(text)
    return path, w


def test_convert_weights_file_pairs_the_kth_weight_with_the_kth_row(tmp_path, small_libsvm, weights_file, capsys):
    path, w = weights_file
    code, out, _ = run(capsys, "convert", small_libsvm, tmp_path / "s.bsvm", "--weights", path, "--block-rows", "400")
    assert code == 0 and "instance weights from 0 to 3" in out
    assert weights_by_line(tmp_path / "s.bsvm") == {i + 1: float(x) for i, x in enumerate(w)}  # row i is line i + 1
    code, out, _ = run(capsys, "info", tmp_path / "s.bsvm")
    assert code == 0 and f"weights      instance weights (weighted store) from 0 to 3, sum {w.sum():,.6g}" in out
    assert f"{int((w == 0).sum()):,} rows weigh 0" in out and "format version 3" in out
    assert json.loads(run(capsys, "info", tmp_path / "s.bsvm", "--json")[1])["weights"]["zero_rows"] == (w == 0).sum()
    compressed = tmp_path / "w.bz2"
    compressed.write_bytes(bz2.compress(path.read_bytes()))
    convert(small_libsvm, tmp_path / "z.bsvm", weights=compressed, chunk_bytes=4096)
    assert weights_by_line(tmp_path / "z.bsvm") == weights_by_line(tmp_path / "s.bsvm")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\n2\n-1\n", "w.txt:3: weight -1 is negative: instance weights must be >= 0"),
        ("1\nnan\n", "w.txt:2: weight nan is not a finite number"),
        ("1\n2 3\n", "w.txt:2: '2 3' is not a number: a weights file holds one a line"),
        (
            "1\n2\n",
            "w.txt: has 2 weights, fewer than the rows of {data} (the row of its line 3 has none): one weight a row",
        ),
        ("1\n2\n3\n4\n\n5\n", "w.txt:6: one weight too many: {data} has 4 rows (one weight a row)"),
    ],
)
def test_convert_refuses_a_bad_weights_file_in_one_line(tmp_path, capsys, text, message):
    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n-1 2:1\n1 1:2\n-1 2:3\n")
    (tmp_path / "w.txt").write_text(text)
    code, _, err = run(capsys, "convert", data, tmp_path / "o.bsvm", "--weights", tmp_path / "w.txt")
    assert code == 2 and err.strip() == f"blocksvm: error: {tmp_path / message.format(data=data)}"
    assert not (tmp_path / "o.bsvm").exists()


def test_convert_refuses_weights_with_skipped_lines_or_vw(tmp_path, small_libsvm, weights_file, capsys):
    path, _ = weights_file
    code, _, err = run(capsys, "convert", small_libsvm, tmp_path / "o", "--weights", path, "--skip-bad-lines")
    assert code == 2 and "--skip-bad-lines" in err and err.count("\n") == 1
    code, _, err = run(capsys, "convert", small_libsvm, tmp_path / "o", "--weights", path, "--format", "vw")
    assert code == 2 and "VW text carries its weights after each label" in err
