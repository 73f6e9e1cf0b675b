"""The synthetic data generator: deterministic, chunking-free, the same as text or as a store."""

from __future__ import annotations

import bz2
import gzip
import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import SMALL_SPEC, assert_same_rows
from sklearn.datasets import load_svmlight_file

from blocksvm import convert
from blocksvm.datasets import SyntheticSpec, generate_rows, make_store, write_libsvm
from blocksvm.errors import ParameterError, StoreError
from blocksvm.store import BlockStore


def test_text_is_deterministic_and_depends_on_the_seed(tmp_path, small_libsvm):
    again = tmp_path / "again.txt"
    write_libsvm(again, SMALL_SPEC, progress=False, threads=1)
    assert again.read_bytes() == small_libsvm.read_bytes()
    other = tmp_path / "other.txt"
    write_libsvm(other, SyntheticSpec(**{**SMALL_SPEC.__dict__, "seed": 12}), progress=False)
    assert other.read_bytes() != small_libsvm.read_bytes()


@pytest.mark.parametrize("suffix, opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed_text_holds_the_same_lines(tmp_path, small_libsvm, suffix, opener):
    path = tmp_path / f"data.txt{suffix}"
    written = write_libsvm(path, SMALL_SPEC, progress=False)
    assert path.stat().st_size < written
    with opener(path, "rb") as f:
        assert f.read() == small_libsvm.read_bytes()
    assert not path.with_name(path.name + ".partial").exists()


def test_text_equals_the_rows_it_was_made_from(small_libsvm):
    X_text, y_text = load_svmlight_file(
        str(small_libsvm), n_features=SMALL_SPEC.features, dtype=np.float32, zero_based=False
    )
    rows = generate_rows(SMALL_SPEC, 0, SMALL_SPEC.rows)
    X = _csr(rows, SMALL_SPEC.features)
    assert_same_rows(X, rows.labels, X_text, y_text)
    np.testing.assert_array_equal(rows.lines, np.arange(1, SMALL_SPEC.rows + 1))


def test_rows_do_not_depend_on_chunking():
    whole = generate_rows(SMALL_SPEC, 100, 300)
    parts = [generate_rows(SMALL_SPEC, 100, 120), generate_rows(SMALL_SPEC, 220, 180)]
    np.testing.assert_array_equal(whole.indices, np.concatenate([p.indices for p in parts]))
    np.testing.assert_array_equal(whole.data, np.concatenate([p.data for p in parts]))
    np.testing.assert_array_equal(whole.labels, np.concatenate([p.labels for p in parts]))
    np.testing.assert_array_equal(whole.lines, np.arange(101, 401))


def test_rows_are_sparse_sorted_unit_vectors():
    rows = generate_rows(SMALL_SPEC, 0, 2000, dtype="float64")
    lengths = np.diff(rows.indptr)
    assert 0.7 * SMALL_SPEC.nnz < lengths.mean() < 1.3 * SMALL_SPEC.nnz
    for r in range(0, 2000, 97):
        indices = rows.indices[rows.indptr[r] : rows.indptr[r + 1]]
        values = rows.data[rows.indptr[r] : rows.indptr[r + 1]]
        assert np.all(np.diff(indices) > 0)
        assert 0 <= indices.min() and indices.max() < SMALL_SPEC.features
        assert np.all(values > 0) and abs(np.sum(values**2) - 1) < 1e-4


def test_labels_follow_a_hidden_separator_with_noise():
    spec = SyntheticSpec(rows=20_000, features=300, nnz=20, noise=0.1, seed=4)
    rows = generate_rows(spec, 0, spec.rows, dtype="float64")
    X = _csr(rows, spec.features)
    margins = X @ spec.hidden_weights()
    agree = np.mean(np.sign(margins) == rows.labels)
    assert 0.87 < agree < 0.93  # 1 - noise
    assert set(np.unique(rows.labels).tolist()) == {-1.0, 1.0}


def test_dense_rows_hold_every_feature():
    spec = SyntheticSpec(rows=200, features=30, dense=True, seed=1)
    rows = generate_rows(spec, 0, spec.rows, dtype="float64")
    assert rows.nnz > 0.97 * 200 * 30
    assert (rows.data < 0).any() and (rows.data > 0).any()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"rows": 0}, "rows and features must be positive"),
        ({"nnz": 500}, "nnz must be in 1..features"),
        ({"noise": 0.5}, "noise must be in"),
    ],
)
def test_bad_specs(tmp_path, changes, message):
    spec = SyntheticSpec(**{**SMALL_SPEC.__dict__, **changes})
    with pytest.raises(ParameterError, match=message):
        write_libsvm(tmp_path / "x.txt", spec)
    assert list(tmp_path.iterdir()) == []


def test_make_store_equals_converting_the_text(tmp_path, small_libsvm):
    made = make_store(tmp_path / "made", SMALL_SPEC, block_rows=700, jobs=1)
    convert(small_libsvm, tmp_path / "converted", shuffle=False, block_rows=700, n_features=SMALL_SPEC.features)
    a, b = BlockStore(made), BlockStore(tmp_path / "converted")
    assert (a.n_rows, a.n_features, a.nnz, a.n_blocks) == (b.n_rows, b.n_features, b.nnz, 5)
    np.testing.assert_array_equal(a.label_counts, b.label_counts)
    for i in range(a.n_blocks):
        x, y = a.read_block(i), b.read_block(i)
        for field in ("indptr", "indices", "data", "labels", "lines"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field), err_msg=field)


def test_make_store_refuses_an_existing_output(tmp_path):
    spec = SyntheticSpec(rows=50, features=10, nnz=3)
    make_store(tmp_path / "s", spec, jobs=1)
    with pytest.raises(StoreError, match="already exists"):
        make_store(tmp_path / "s", spec, jobs=1)


def _csr(rows, width: int) -> sp.csr_matrix:
    return sp.csr_matrix((rows.data, rows.indices, rows.indptr), shape=(rows.n_rows, width))
