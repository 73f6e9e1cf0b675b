"""The largest feature index: 2**31 - 1 as written in the file, the largest int32.

Every index up to 2,147,483,647 fits whatever the base: one-based, it is column 2,147,483,646 of
2,147,483,647 features; zero-based, column 2,147,483,647 of 2,147,483,648. Anything larger is refused
where it is read, with one message naming file and line, the limit and what to do. (Such a sparse
space is stored compactly, with a feature map: tests/test_compact_features.py trains on it.)

Oracle: scikit-learn's ``load_svmlight_file``, which reads indices up to the same limit.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_same_rows, store_rows
from sklearn.datasets import load_svmlight_file

from blocksvm.cli import main
from blocksvm.store import BlockStore

LARGEST = 2**31 - 1
HINT = "the largest 32-bit index: renumber or hash the features into a smaller range"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "text, base, features",
    [
        (f"1 1:0.5 {LARGEST}:2\n-1 3:1\n", 1, LARGEST),
        (f"1 0:0.5 {LARGEST}:2\n-1 3:1\n", 0, LARGEST + 1),
    ],
    ids=["one-based", "zero-based"],
)
def test_index_2147483647_is_accepted_end_to_end(tmp_path, capsys, text, base, features):
    source = tmp_path / "wide.txt"
    source.write_text(text)
    store = tmp_path / "wide.bsvm"
    assert run(capsys, "convert", source, store, "-q") == (0, "", "")
    code, out, _ = run(capsys, "info", store, "--json")
    info = json.loads(out)
    assert code == 0 and (info["features"], info["index_base"], info["nnz"]) == (features, base, 3)
    opened = BlockStore(store)
    block = opened.read_block(0)
    assert block.indices.dtype == np.int32 and opened.feature_map[block.indices.max()] == LARGEST - base
    X, y, _ = store_rows(store)
    X_ref, y_ref = load_svmlight_file(str(source), dtype=np.float32)
    assert_same_rows(X, y, X_ref, y_ref)
    assert X[0, LARGEST - base] == 2.0


@pytest.mark.parametrize("index", ["2147483648", "99999999999", "+2147483648", "0002147483648", "9" * 40])
@pytest.mark.parametrize("zero_based", [[], ["--zero-based"], ["--no-zero-based"]])
def test_a_larger_index_is_refused_with_file_line_and_limit(tmp_path, capsys, index, zero_based):
    source = tmp_path / "wide.txt"
    source.write_text(f"# ids\n1 1:1\n\n-1 2:1 {index}:0.5 7:1\n1 3:1\n")
    store = tmp_path / "wide.bsvm"
    code, out, err = run(capsys, "convert", source, store, *zero_based)
    assert (code, out) == (2, "")
    assert "Traceback" not in err
    message, shown = err.rstrip("\n").split("\n")
    assert message == (f"blocksvm: error: {source}:4: feature index in '{index}:0.5' is larger than 2147483647, {HINT}")
    assert shown == f"    -1 2:1 {index}:0.5 7:1"  # the offending line, under the message
    assert not store.exists()


def test_predict_refuses_a_larger_index_in_a_text_file(tmp_path, capsys):
    train = tmp_path / "train.txt"
    train.write_text("1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n")
    assert run(capsys, "convert", train, tmp_path / "s.bsvm", "-q")[0] == 0
    assert run(capsys, "train", tmp_path / "s.bsvm", tmp_path / "m.h5", "-q")[0] == 0
    test = tmp_path / "test.txt"
    test.write_text("1 1:1\n-1 2147483648:1\n")
    code, out, err = run(capsys, "predict", tmp_path / "m.h5", test)
    assert code == 2 and "Traceback" not in err
    assert err.splitlines()[0] == (
        f"blocksvm: error: {test}:2: feature index in '2147483648:1' is larger than 2147483647, {HINT}"
    )
    assert len(err.splitlines()) == 2
