"""predict and features outside the model's feature space (issue 11): allowed, counted, warned about once;
refused with ``strict``.

The oracle is a hand-written 5-feature model and rows whose outside features are known: indices 6, 7, 7
and 9, so 3 distinct indices and 4 nonzeros; the decision values are computed by hand.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import json
import lzma
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import blocksvm.predict
from blocksvm.cli import main
from blocksvm.errors import ModelError
from blocksvm.io import convert
from blocksvm.io.vw import iter_text
from blocksvm.model import LinearModel
from blocksvm.predict import FeatureSpaceWarning, PredictSummary, predict

DOC = Path(__file__).resolve().parents[1] / "docs" / "TROUBLESHOOTING.md"

COEF = [0.5, -1.0, 0.25, 2.0, -0.75]  # features 1..5
INTERCEPT = 0.1
ROWS = [  # label, features; outside the model: 6, 7 (row 1), 7 (row 2), 9 (row 3)
    (1, {1: 1.0, 6: 2.0, 7: -1.0}),
    (-1, {2: 0.5, 7: 3.0}),
    (1, {3: -2.0, 5: 1.0, 9: 4.0}),
    (-1, {4: 1.5}),
    (1, {}),
]
# x . COEF + 0.1 over features 1..5, by hand: 0.5 + 0.1; -0.5 + 0.1; -0.5 - 0.75 + 0.1; 3 + 0.1; 0.1
DECISIONS = [0.6, -0.4, -1.15, 3.1, 0.1]
LABELS = [1, -1, -1, 1, 1]


def libsvm_text(rows, keep=lambda index: True) -> str:
    return "".join(
        f"{label} " + " ".join(f"{i}:{v:g}" for i, v in sorted(x.items()) if keep(i)) + "\n" for label, x in rows
    )


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "five.h5"
    LinearModel(np.array([COEF]), np.array([INTERCEPT]), np.array([-1.0, 1.0]), bias=1.0, index_base=1).save(path)
    return path


def write_input(tmp_path: Path, kind: str, text: str) -> Path:
    """``text`` as a plain, .gz, .bz2 or .xz file, or a store converted from it."""
    plain = tmp_path / "data.svm"
    plain.write_text(text)
    compressors = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}
    if kind in compressors:
        path = tmp_path / f"data.svm.{kind}"
        path.write_bytes(compressors[kind](text.encode()))
        return path
    if kind == "store":
        convert(plain, tmp_path / "data.bsvm", block_rows=2, progress=False)  # 3 blocks, rows shuffled
        return tmp_path / "data.bsvm"
    return plain


KINDS = ["text", "gz", "bz2", "xz", "store"]


@pytest.mark.parametrize("kind", KINDS)
def test_outside_features_are_counted_and_warned_about_once(tmp_path, model, kind):
    data = write_input(tmp_path, kind, libsvm_text(ROWS))
    with pytest.warns(FeatureSpaceWarning) as caught:
        summary = predict(model, data, tmp_path / "p.txt", decision_values=True, progress=False)
    assert (summary.outside_indices, summary.outside_nonzeros) == (3, 4)
    ours = [w for w in caught if w.category is FeatureSpaceWarning]  # (io.libsvm leaks a ResourceWarning)
    assert len(ours) == 1
    message = str(ours[0].message)
    assert message.startswith(f"{data}: 3 distinct feature indices (4 nonzeros) are outside the model {model}, ")
    assert "5 features are indices 1 to 5" in message
    assert summary.to_dict()["outside_indices"] == 3 and summary.to_dict()["outside_nonzeros"] == 4
    # the predictions are those of the hand-computed decision values: outside features count as zero
    lines = [line.split() for line in (tmp_path / "p.txt").read_text().splitlines()]
    assert [int(label) for label, _ in lines] == LABELS
    np.testing.assert_allclose([float(value) for _, value in lines], DECISIONS, rtol=1e-7)


@pytest.mark.parametrize("kind", ["text", "store"])
def test_predictions_equal_those_of_the_data_without_the_outside_features(tmp_path, model, kind):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    data = write_input(tmp_path / "a", kind, libsvm_text(ROWS))
    trimmed = write_input(tmp_path / "b", kind, libsvm_text(ROWS, keep=lambda i: i <= 5))
    with pytest.warns(FeatureSpaceWarning):
        predict(model, data, tmp_path / "with.txt", decision_values=True, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureSpaceWarning)  # all inside: no warning
        summary = predict(model, trimmed, tmp_path / "without.txt", decision_values=True, progress=False)
    assert (summary.outside_indices, summary.outside_nonzeros) == (0, 0)
    assert (tmp_path / "with.txt").read_text() == (tmp_path / "without.txt").read_text()


@pytest.mark.parametrize("kind", ["text", "store"])
def test_strict_refuses_the_first_outside_feature_and_writes_nothing(tmp_path, model, kind):
    data = write_input(tmp_path, kind, libsvm_text(ROWS))
    with pytest.raises(ModelError) as raised:
        predict(model, data, tmp_path / "p.txt", strict=True, progress=False)
    message = str(raised.value)
    if kind == "text":  # the first one in the file: index 6 on line 1
        assert message.startswith(f"{data}:1: feature index 6 is outside the model {model}, whose 5 features")
    else:  # blocks come shuffled: one of the three rows, named by its source line
        found = re.match(
            rf"{re.escape(str(data))} \(the row of source line (\d+)\): feature index (\d+) is outside "
            rf"the model {re.escape(str(model))}, whose 5 features",
            message,
        )
        assert found, message
        assert (int(found[1]), int(found[2])) in {(1, 6), (2, 7), (3, 9)}  # the first outside feature of its row
    assert not list(tmp_path.glob("p.txt*"))
    # a file that is all inside passes with strict
    inside = tmp_path / "inside.svm"
    inside.write_text(libsvm_text(ROWS, keep=lambda i: i <= 5))
    assert predict(model, inside, strict=True, progress=False).rows == 5


def test_distinct_indices_are_counted_across_chunks(tmp_path, model, monkeypatch):
    """Tiny chunks: the same outside indices recur in later chunks, the largest index grows."""
    rng = random.Random(3)
    rows = [(rng.choice([-1, 1]), {i: 1.0 for i in sorted(rng.sample(range(1, 3000), 4))}) for _ in range(400)]
    outside = [i for _, x in rows for i in x if i > 5]
    path = tmp_path / "many.svm"
    path.write_text(libsvm_text(rows))
    monkeypatch.setattr(blocksvm.predict, "iter_text", functools.partial(iter_text, chunk_bytes=256))
    assert sum(1 for _ in blocksvm.predict.iter_text(path)) > 20  # many chunks indeed
    with pytest.warns(FeatureSpaceWarning):
        summary = predict(model, path, progress=False)
    assert (summary.outside_indices, summary.outside_nonzeros) == (len(set(outside)), len(outside))


def test_the_largest_index_is_counted(tmp_path, model):
    path = tmp_path / "far.svm"
    path.write_text("1 2:1 2147483647:1\n-1 2147483647:2\n")
    with pytest.warns(FeatureSpaceWarning):
        summary = predict(model, path, progress=False)
    assert (summary.outside_indices, summary.outside_nonzeros) == (1, 2)


def test_a_model_object_is_named_as_such(tmp_path, model):
    path = write_input(tmp_path, "text", libsvm_text(ROWS))
    with pytest.warns(FeatureSpaceWarning, match=r"are outside the model, whose 5 features are indices 1 to 5"):
        predict(LinearModel.load(model), path, progress=False)


# ---- the command line ------------------------------------------------------------------------------


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def documented_warning() -> re.Pattern:
    """The warning as the troubleshooting page quotes it, ``<word>`` standing for any text."""
    quoted = re.search(r"^`(warning: <file>: <n> distinct feature indices .+)`$", DOC.read_text(), re.MULTILINE)
    assert quoted, "docs/TROUBLESHOOTING.md does not quote the warning"
    parts = re.split(r"<[a-z][a-z0-9 _.-]*>", quoted.group(1))
    return re.compile(".+?".join(re.escape(p) for p in parts))


@pytest.mark.parametrize("kind", ["text", "store"])
def test_cli_prints_one_warning_line_and_exits_0(tmp_path, model, capsys, kind):
    data = write_input(tmp_path, kind, libsvm_text(ROWS))
    code, out, err = run(capsys, "predict", model, data)
    assert code == 0
    assert err == (
        f"warning: {data}: 3 distinct feature indices (4 nonzeros) are outside the model {model}, whose 5 "
        "features are indices 1 to 5: they were ignored (--strict or strict=True makes this an error)\n"
    )
    assert documented_warning().fullmatch(err.rstrip("\n"))
    assert out.startswith("Accuracy = 60.0000% (3/5)")  # LABELS against the file's labels: rows 1, 4, 5 wrong
    code, out, err = run(capsys, "predict", model, data, "--json", "--quiet")
    assert code == 0 and err == ""
    summary = json.loads(out)
    assert (summary["outside_indices"], summary["outside_nonzeros"]) == (3, 4)


def test_cli_is_silent_when_every_feature_is_inside(tmp_path, model, capsys):
    data = write_input(tmp_path, "text", libsvm_text(ROWS, keep=lambda i: i <= 5))
    code, out, err = run(capsys, "predict", model, data, "--json", "--strict")
    assert (code, err) == (0, "")
    assert (json.loads(out)["outside_indices"], json.loads(out)["outside_nonzeros"]) == (0, 0)


def test_cli_strict_is_a_one_line_error(tmp_path, model, capsys):
    data = write_input(tmp_path, "gz", libsvm_text(ROWS))
    code, out, err = run(capsys, "predict", model, data, "--strict", "-o", tmp_path / "p.txt")
    assert (code, out) == (2, "")
    assert err == (
        f"blocksvm: error: {data}:1: feature index 6 is outside the model {model}, whose 5 features are "
        "indices 1 to 5 (--strict; without it such features are ignored, with a warning)\n"
    )
    assert not list(tmp_path.glob("p.txt*"))


def test_summary_fields_default_to_zero():
    assert PredictSummary(1, 1, 0.0, None).to_dict()["outside_nonzeros"] == 0
