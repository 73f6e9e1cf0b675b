"""write_store: numpy arrays, scipy matrices, iterables of chunks, dask arrays and data frames into a store.

The oracle is the data itself: every stored row, found by its line number, equals row ``line - 1`` of the
matrix given; the store's blocks, shuffle and compaction are convert's (tested in test_convert.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from blocksvm.errors import InputFormatError, ParameterError
from blocksvm.io import write_store
from blocksvm.store import BlockStore
from blocksvm.train import train


def matrix(rows: int = 3000, features: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = sp.random(rows, features, density=0.2, random_state=seed, format="csr", dtype=np.float64)
    y = np.where(X @ rng.normal(size=features) > 0, 1.0, -1.0)
    return X, y


def stored(path, first_line: int = 1) -> tuple[sp.csr_matrix, np.ndarray]:
    """The store's rows in line order, and their labels; the lines are ``first_line`` on, each once."""
    store = BlockStore(path)
    blocks = [store.read_block(b) for b in range(store.n_blocks)]
    lines = np.concatenate([b.lines for b in blocks])
    X = sp.vstack([b.to_csr(store.n_features) for b in blocks]).tocsr()
    y = np.concatenate([b.labels for b in blocks])
    order = np.argsort(lines)
    np.testing.assert_array_equal(lines[order], np.arange(first_line, first_line + len(lines)))
    return X[order], y[order]


def same_rows(path, X, y) -> None:
    Xs, ys = stored(path)
    assert Xs.shape == X.shape
    np.testing.assert_allclose(Xs.toarray(), sp.csr_matrix(X).toarray().astype(np.float32), rtol=0, atol=0)
    np.testing.assert_array_equal(ys, y)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_one_pair_is_every_row_in_its_line(tmp_path, kind):
    X, y = matrix()
    given = X.toarray() if kind == "dense" else X
    summary = write_store((given, y), tmp_path / "s.bsvm", chunk_rows=700, block_rows=500, progress=False)
    assert (summary.rows, summary.features) == (3000, 40)
    assert BlockStore(tmp_path / "s.bsvm").n_blocks >= 5  # shuffled into blocks of about 500 rows
    same_rows(tmp_path / "s.bsvm", X, y)


def test_an_iterable_of_chunks(tmp_path):
    X, y = matrix()
    chunks = ((X[a : a + 450], y[a : a + 450]) for a in range(0, 3000, 450))  # a generator: read once
    write_store(chunks, tmp_path / "s.bsvm", block_rows=800, shuffle=False, progress=False)
    same_rows(tmp_path / "s.bsvm", X, y)


def test_a_dask_array_one_slice_at_a_time(tmp_path):
    da = pytest.importorskip("dask.array")
    X, y = matrix()
    dense = X.toarray()
    computed = []

    def tracked(block):
        computed.append(len(block))
        return block

    lazy = da.from_array(dense, chunks=(600, 40)).map_blocks(tracked, dtype=dense.dtype)
    write_store((lazy, da.from_array(y, chunks=600)), tmp_path / "s.bsvm", chunk_rows=600, progress=False)
    same_rows(tmp_path / "s.bsvm", X, y)
    assert max(computed) <= 600  # never the whole array


def test_a_dask_data_frame_one_partition_at_a_time(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = matrix(rows=1200, features=6)
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(6)]).assign(label=y)
    computed = []

    def tracked(part):
        computed.append(len(part))
        return part

    lazy = dd.from_pandas(frame, npartitions=4).map_partitions(tracked)
    write_store((lazy.drop(columns="label"), lazy["label"]), tmp_path / "s.bsvm", block_rows=500, progress=False)
    same_rows(tmp_path / "s.bsvm", X, y)
    assert 0 < max(computed) <= 300  # a partition at a time, never the whole frame
    write_store((frame.drop(columns="label"), frame["label"]), tmp_path / "p.bsvm", chunk_rows=500, progress=False)
    same_rows(tmp_path / "p.bsvm", X, y)  # a pandas frame and series: rows by position
    with pytest.raises(ParameterError, match="give y as a dask series partitioned as X"):
        write_store((lazy.drop(columns="label"), y), tmp_path / "q.bsvm", progress=False)


def test_a_store_of_arrays_trains_as_the_text_does(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from blocksvm.io import convert

    X, y = matrix()
    dump_svmlight_file(X, y, str(tmp_path / "t.svm"), zero_based=True)
    convert(tmp_path / "t.svm", tmp_path / "text.bsvm", block_rows=500, zero_based=True, progress=False)
    write_store((X, y), tmp_path / "arrays.bsvm", block_rows=500, progress=False)
    a = train(tmp_path / "arrays.bsvm", tol=1e-8, max_outer=300, verbose=0).model
    b = train(tmp_path / "text.bsvm", tol=1e-8, max_outer=300, verbose=0).model
    assert a.summary["primal"] == pytest.approx(b.summary["primal"], rel=1e-6)


def test_bad_rows_are_named(tmp_path):
    X, y = matrix(rows=50)
    with pytest.raises(ParameterError, match="X has 50 rows and y 49 labels"):
        write_store((X, y[:-1]), tmp_path / "a.bsvm", progress=False)
    y[17] = np.nan
    with pytest.raises(InputFormatError, match="18"):
        write_store((X, y), tmp_path / "b.bsvm", progress=False)
    assert not (tmp_path / "b.bsvm").exists()
    wide = sp.csr_matrix((2, 2**31 + 5))  # no feature index of a store (int32) could name its last columns
    with pytest.raises(ParameterError, match="at most 2,147,483,647 features"):
        write_store((wide, [1.0, -1.0]), tmp_path / "c.bsvm", progress=False)


def test_convert_reads_csv_with_a_named_label_column(tmp_path):
    """CSV: a header, the label column by name, empty cells as zeros; the rows equal numpy's reading of it."""
    from blocksvm.cli import main

    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(300, 4)), 3) * (rng.random((300, 4)) < 0.6)
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    lines = ["f1,label,f2,f3,f4"]
    for row, label in zip(X, y):
        cells = ["" if v == 0 else repr(float(v)) for v in row]  # empty cells are zeros
        lines.append(",".join([cells[0], f"{label:g}", *cells[1:]]))
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    assert main(["convert", str(tmp_path / "d.csv"), str(tmp_path / "d.bsvm"), "--csv", "label", "-q"]) == 0
    Xs, ys = stored(tmp_path / "d.bsvm", first_line=2)  # the data rows' lines, after the header
    np.testing.assert_allclose(Xs.toarray()[:, : X.shape[1]], X.astype(np.float32), rtol=0, atol=0)
    np.testing.assert_array_equal(ys, y)


def test_a_csv_cell_that_is_not_a_number_is_named(tmp_path):
    from blocksvm.io import convert

    (tmp_path / "d.csv").write_text("label,a,b\n1,0.5,\n-1,x1,2\n")
    with pytest.raises(InputFormatError, match=r"d.csv:3: column 'a': 'x1' is not a number"):
        convert(tmp_path / "d.csv", tmp_path / "d.bsvm", csv_label="label", progress=False)
    with pytest.raises(InputFormatError, match="has no column 'y'"):
        convert(tmp_path / "d.csv", tmp_path / "e.bsvm", csv_label="y", progress=False)
