"""``blocksvm stream``: one pass from text, progressive validation, growth, checkpoints, warm starts."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from oracle import last_iterate

from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.io import convert
from blocksvm.model import LinearModel
from blocksvm.stream import stream
from blocksvm.train import train

# The oracles here transcribe the last iterate: average=False for the learners that read it.
stream = last_iterate(stream)
train = last_iterate(train)

SPEC = SyntheticSpec(rows=6000, features=300, nnz=12, seed=8)


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "train.svm"
    write_libsvm(path, SPEC, progress=False)
    return path


def file_order_model(text, tmp_path, **params):
    """The oracle path: a store in file order, one pass with ``--order file``."""
    convert(text, tmp_path / "ordered.bsvm", shuffle=False, block_rows=1000, progress=False)
    return train(tmp_path / "ordered.bsvm", order="file", max_outer=1, verbose=0, **params).model


def numpy_perceptron(X, y, classes):
    """One pass, file order: one row of weights per problem (binary: the larger class), bias feature last."""
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    positives = classes[1:] if len(classes) == 2 else classes
    W = np.zeros((len(positives), Xb.shape[1]))
    for k, c in enumerate(positives):
        t = np.where(y == c, 1.0, -1.0)
        for i in range(len(t)):
            if t[i] * (W[k] @ Xb[i]) <= 0:
                W[k] += t[i] * Xb[i]
    return W


def test_stream_equals_one_pass_in_file_order(text, tmp_path):
    result = stream(text, solver="perceptron", verbose=0, chunk_bytes=1 << 16)
    expected = file_order_model(text, tmp_path, solver="perceptron")
    np.testing.assert_array_equal(result.model.coef, expected.coef)
    np.testing.assert_array_equal(result.model.intercept, expected.intercept)
    assert result.summary["examples"] == SPEC.rows


def test_summary_counts_progressive_mistakes_by_hand(tmp_path):
    # Perceptron, no bias, w = 0. Row 1 (y=+1, x=(1,0)): decision 0, predicted -1: a mistake, w = (1,0). Row 2
    # (y=-1, x=(0,1)): decision 0, predicted -1 (as predict reads 0): right, but margin 0 updates, w = (1,-1).
    # Row 3 (y=+1, x=(2,0)): margin 2, right. Row 4 (y=-1, x=(1,0)): margin -1, a mistake of loss 1, w = (0,-1).
    (tmp_path / "t.svm").write_text("1 1:1\n-1 2:1\n1 1:2\n-1 1:1\n")
    assert main(["stream", str(tmp_path / "t.svm"), str(tmp_path / "m.h5"), "--bias", "-1", "--no-average", "-q"]) == 0
    model = LinearModel.load(tmp_path / "m.h5")
    np.testing.assert_array_equal(model.coef, [[0.0, -1.0]])
    s = model.summary
    assert (s["examples"], s["mistakes"], s["progressive_loss"], s["nonzero_weights"]) == (4, 2, 0.25, 1)
    assert s["progressive_accuracy"] == 0.5


def test_compressed_and_standard_input(text, tmp_path):
    plain = stream(text, solver="perceptron", verbose=0).model
    gz = tmp_path / "train.svm.gz"
    gz.write_bytes(gzip.compress(text.read_bytes()))
    np.testing.assert_array_equal(stream(gz, solver="perceptron", verbose=0).model.coef, plain.coef)
    with open(text, "rb") as f:
        done = subprocess.run(
            [sys.executable, "-m", "blocksvm.cli", "stream", "-", str(tmp_path / "m.h5"), "--no-average", "--json"],
            stdin=f,
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert {"examples", "progressive_accuracy", "progressive_loss", "nonzero_weights", "seconds"} <= set(summary)
    np.testing.assert_array_equal(LinearModel.load(tmp_path / "m.h5").coef, plain.coef)


def test_progressive_table_at_doubling_counts(text, capsys):
    lines = []
    stream(text, solver="perceptron", say=lines.append, chunk_bytes=1 << 15)
    counts = [int(line.split()[2]) for line in lines[1:]]
    assert counts == [2**k for k in range(13)] + [SPEC.rows]


def test_progressive_table_lines_fall_on_powers_of_two_past_65536_examples(tmp_path):
    """Vowpal Wabbit's habit: a line at every doubling of the examples, not where a chunk happens to end."""
    write_libsvm(tmp_path / "big.svm", SyntheticSpec(rows=140_000, features=50, nnz=3, seed=1), progress=False)
    lines = []
    stream(tmp_path / "big.svm", solver="perceptron", say=lines.append, chunk_bytes=1 << 20)
    counts = [int(line.split()[2]) for line in lines[1:]]
    assert counts == [2**k for k in range(18)] + [140_000]


def test_new_features_and_classes_grow_the_model(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for i in range(900):
        label = 1 if i < 300 else rng.choice([1, 2]) if i < 600 else rng.choice([1, 2, 3])
        width = 5 if i < 450 else 40  # features beyond the first 5 appear half way
        cols = np.sort(rng.choice(width, size=3, replace=False)) + 1
        rows.append(f"{label} " + " ".join(f"{c}:{rng.integers(1, 4)}" for c in cols))
    (tmp_path / "grow.svm").write_text("\n".join(rows) + "\n")
    model = stream(tmp_path / "grow.svm", solver="perceptron", verbose=0, chunk_bytes=2048).model
    assert model.classes.tolist() == [1.0, 2.0, 3.0] and model.n_features == 40
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(tmp_path / "grow.svm"), n_features=40)
    X = X.toarray()
    # class 3's problem starts from zero weights at its first row (row 600 on), as if it were alone from there
    first = int(np.argmax(y == 3))
    expected = numpy_perceptron(X[first:], y[first:], np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(model.coef[2], expected[2, :-1], atol=1e-9)


def test_checkpoint_and_resume_end_at_the_uninterrupted_model(text, tmp_path):
    whole = stream(text, solver="perceptron", average=True, verbose=0, chunk_bytes=1 << 14).model

    def stop_half_way(line):  # deterministic: a SIGTERM when the table reaches 2048 examples
        if line.split()[2:3] == ["2048"]:
            os.kill(os.getpid(), signal.SIGTERM)

    cut = stream(
        text,
        solver="perceptron",
        average=True,
        say=stop_half_way,
        chunk_bytes=1 << 14,
        checkpoint=tmp_path / "ck.h5",
        checkpoint_every=1,
    )
    assert cut.stopped_by == "SIGTERM" and 2048 <= cut.summary["examples"] < SPEC.rows
    resumed = stream(text, solver="perceptron", average=True, verbose=0, chunk_bytes=1 << 14, resume=tmp_path / "ck.h5")
    np.testing.assert_array_equal(resumed.model.coef, whole.coef)
    assert resumed.summary["examples"] == SPEC.rows
    assert resumed.summary["mistakes"] == stream(text, solver="perceptron", verbose=0).summary["mistakes"]


def test_a_new_stream_over_an_existing_checkpoint_is_refused_as_train_refuses_it(text, tmp_path):
    """The stream opens its checkpoint as train does: a typo must not overwrite another run's checkpoint, and a resume
    from one that is not there says so."""
    from blocksvm.errors import CheckpointError

    ck = tmp_path / "ck.h5"
    stream(text, solver="perceptron", verbose=0, checkpoint=ck)
    before = ck.read_bytes()
    with pytest.raises(CheckpointError, match=f"checkpoint {ck} exists: pass resume="):
        stream(text, solver="perceptron", verbose=0, checkpoint=ck)
    assert ck.read_bytes() == before
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        stream(text, solver="perceptron", verbose=0, resume=tmp_path / "missing.h5")


def test_warm_start_continues_the_model(text, tmp_path):
    lines = text.read_text().splitlines(keepends=True)
    (tmp_path / "a.svm").write_text("".join(lines[:3000]))
    (tmp_path / "b.svm").write_text("".join(lines[3000:]))
    first = stream(tmp_path / "a.svm", solver="perceptron", verbose=0).model
    first.save(tmp_path / "a.h5")
    both = stream(tmp_path / "b.svm", solver="perceptron", verbose=0, warm_start=tmp_path / "a.h5").model
    np.testing.assert_array_equal(both.coef, stream(text, solver="perceptron", verbose=0).model.coef)


def test_train_warm_start_continues_on_a_store(text, tmp_path):
    convert(text, tmp_path / "s.bsvm", shuffle=False, block_rows=1000, progress=False)
    one = train(tmp_path / "s.bsvm", solver="perceptron", order="file", max_outer=1, verbose=0).model
    one.save(tmp_path / "one.h5")
    two = train(tmp_path / "s.bsvm", solver="perceptron", order="file", max_outer=2, verbose=0).model
    again = train(
        tmp_path / "s.bsvm", solver="perceptron", order="file", max_outer=1, verbose=0, warm_start=tmp_path / "one.h5"
    ).model
    # in file order every pass visits the rows alike: pass 2 is one pass from pass 1's weights
    np.testing.assert_array_equal(again.coef, two.coef)


def test_solvers_without_an_online_form_are_refused(text, tmp_path, capsys):
    assert main(["stream", str(text), str(tmp_path / "m.h5"), "--solver", "dual-cd"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "stream needs an online learner" in err[0]


def test_a_stream_of_one_class_is_refused(tmp_path, capsys):
    (tmp_path / "one.svm").write_text("1 1:1\n1 2:1\n")
    assert main(["stream", str(tmp_path / "one.svm"), str(tmp_path / "m.h5")]) == 2
    assert "a classifier needs two or more" in capsys.readouterr().err
    assert not (tmp_path / "m.h5").exists()


# ---- the second class arriving late, declared classes, and parameters stream does not read (issue 20) ----


def negatives_first(source: Path, path: Path, n: int = 1000) -> Path:
    """``source``'s lines with ``n`` of its -1 rows moved to the front (each group in file order)."""
    lines = source.read_text().splitlines(keepends=True)
    first = [i for i, line in enumerate(lines) if line.split()[0] == "-1"][:n]
    rest = sorted(set(range(len(lines))) - set(first))
    path.write_text("".join(lines[i] for i in first + rest))
    return path


def scikit_learn_one_pass(path: Path, solver: str, C: float):
    """scikit-learn's Perceptron, PA-I or PA-II: one pass in file order, no intercept."""
    from sklearn.datasets import load_svmlight_file
    from sklearn.linear_model import SGDClassifier

    X, y = load_svmlight_file(str(path))
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    kind = {"perceptron": dict(loss="perceptron", learning_rate="constant", eta0=1.0)}.get(
        solver, dict(loss="hinge", learning_rate=solver, eta0=C)
    )
    oracle = SGDClassifier(penalty=None, shuffle=False, max_iter=1, tol=None, fit_intercept=False, **kind)
    return oracle.fit(X, y).coef_[0], X.shape[1]


@pytest.fixture(scope="module", params=["generated", "a9a"])
def late_positives(request, tmp_path_factory, text):
    root = tmp_path_factory.mktemp("late")
    if request.param == "a9a":
        source = Path(__file__).resolve().parents[2] / "shared" / "data" / "a9a"
        if not source.exists():
            pytest.skip("no a9a in ../shared/data")
    else:
        source = text
    return negatives_first(source, root / f"{request.param}.svm")


@pytest.mark.parametrize("solver, C", [("perceptron", None), ("pa1", 0.05), ("pa2", 0.05)])
def test_rows_before_the_second_class_are_kept(late_positives, solver, C):
    """The first 1,000 rows are all -1: the stream learns them as the only class, then flips them into the
    binary problem when +1 comes; one pass equals scikit-learn's from the first row."""
    expected, n_features = scikit_learn_one_pass(late_positives, solver, C)
    cost = {} if C is None else {"C": C}
    model = stream(
        late_positives, solver=solver, bias=-1, verbose=0, chunk_bytes=1 << 16, dtype="float64", **cost
    ).model
    np.testing.assert_allclose(model.coef[0, :n_features], expected[: model.n_features], rtol=0, atol=1e-9)


def test_declared_classes_learn_every_problem_from_the_first_row(tmp_path):
    """Classes 1 and 3 first, class 2 from row 300 on. Declared, every one-vs-rest problem sees every row; not
    declared, the problems of 1 and 3 are still exact (3's carried, 1's the binary one flipped) and 2's starts
    at its first row."""
    from sklearn.datasets import load_svmlight_file

    rng = np.random.default_rng(5)
    labels = np.concatenate([rng.choice([1, 3], 300), rng.choice([1, 2, 3], 600)])
    lines = [
        f"{c} " + " ".join(f"{j}:{rng.integers(1, 4)}" for j in sorted(rng.choice(30, 4, replace=False) + 1))
        for c in labels
    ]
    (tmp_path / "three.svm").write_text("\n".join(lines) + "\n")
    X, y = load_svmlight_file(str(tmp_path / "three.svm"), n_features=30)
    X = X.toarray()
    classes = np.array([1.0, 2.0, 3.0])
    everything = numpy_perceptron(X, y, classes)
    declared = stream(tmp_path / "three.svm", classes=(1, 2, 3), verbose=0, chunk_bytes=2048).model
    np.testing.assert_allclose(declared.coef, everything[:, :-1], atol=1e-9)
    grown = stream(tmp_path / "three.svm", verbose=0, chunk_bytes=2048).model
    np.testing.assert_allclose(grown.coef[[0, 2]], everything[[0, 2], :-1], atol=1e-9)
    first = int(np.argmax(y == 2))
    late = numpy_perceptron(X[first:], y[first:], classes)
    np.testing.assert_allclose(grown.coef[1], late[1, :-1], atol=1e-9)


def test_a_label_outside_the_declared_classes_is_refused_with_its_line(tmp_path, capsys):
    (tmp_path / "t.svm").write_text("1 1:1\n-1 2:1\n2 1:1\n")
    assert main(["stream", str(tmp_path / "t.svm"), str(tmp_path / "m.h5"), "--classes", "-1,1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"blocksvm: error: {tmp_path / 't.svm'}:3: label 2 is not among the classes declared by "
        "--classes (-1, 1): declare every label of the stream, or none"
    ]


def test_class_weights_of_labels_still_to_come(text, tmp_path):
    """``-w 1=2`` on a stream: the weight waits for its class (it failed at the first row before)."""
    assert (
        main(["stream", str(text), str(tmp_path / "m.h5"), "--solver", "pa1", "-w", "1=2", "--no-average", "-q"]) == 0
    )
    weighted = LinearModel.load(tmp_path / "m.h5")
    plain = stream(text, solver="pa1", verbose=0).model
    ordered = file_order_model(text, tmp_path, solver="pa1", class_weight={1: 2.0})
    np.testing.assert_array_equal(weighted.coef, ordered.coef)
    assert not np.array_equal(weighted.coef, plain.coef)


@pytest.mark.parametrize(
    "flags, owner",
    [
        (["--max-outer", "3"], "train"),
        (["--workers", "4"], "train"),
        (["--working-set", "pair"], "train"),
        (["--order", "random"], "train"),
        (["--time-limit", "1"], "train"),
        (["--tol", "0.5"], "train"),
        (["--eps", "0.1"], "train"),
        (["--seed", "3"], "train"),
        (["--prefetch", "2"], "train"),
        (["--eval-every", "2"], "train"),
        (["--batch-size", "4"], "train"),
        (["--inner-passes", "2"], "train"),
        (["--validation", "v.bsvm"], "train"),
        (["--checkpoint-seconds", "5"], "train and tune"),
        (["--history", "h.jsonl"], "train"),
        (["--cache-dir", "c"], "train and tune"),
    ],
)
def test_train_options_given_to_stream_are_refused_with_one_line(text, tmp_path, capsys, flags, owner):
    assert main(["stream", str(text), str(tmp_path / "m.h5"), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"blocksvm: error: {flags[0]} is a {owner} option; stream makes one pass over text, in file order"]
    assert not (tmp_path / "m.h5").exists()


def test_stream_help_shows_its_own_parameters_and_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["stream", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default perceptron)" in text and "(default dual-cd)" not in text
    assert "--checkpoint-every N Checkpoint every this many 8 MB chunks of text" in text
    assert "(default 16)" in text
    for flag in ("--max-outer", "--workers", "--tol", "--working-set", "--time-limit", "--order", "--seed"):
        assert flag not in text
    assert "{perceptron,pa,pa1,pa2,cw,arow,ogd,ftrl,fobos" in text and "dual-cd," not in text
