"""Models: files, LIBLINEAR interchange, streaming prediction in source order, the CLI faces."""

from __future__ import annotations

import json
import signal
import subprocess

import numpy as np
import pytest
from conftest import cli, split_text
from sklearn.datasets import load_svmlight_file

from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec
from blocksvm.errors import ModelError
from blocksvm.io import convert
from blocksvm.liblinear_format import read_liblinear_model, write_liblinear_model
from blocksvm.model import LinearModel
from blocksvm.predict import predict
from blocksvm.train import train


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    spec = SyntheticSpec(rows=5000, features=300, nnz=15, seed=4)
    root = split_text(tmp_path_factory.mktemp("model"), spec, 4000, block_rows=500)
    convert(root / "test.svm", root / "test.bsvm", block_rows=300, n_features=300, progress=False)
    result = train(root / "train.bsvm", C=0.5, tol=1e-4, verbose=0)
    result.model.save(root / "model.h5")
    return root, result.model


def test_model_file_round_trip(trained):
    root, model = trained
    loaded = LinearModel.load(root / "model.h5")
    np.testing.assert_array_equal(loaded.coef, model.coef)
    np.testing.assert_array_equal(loaded.intercept, model.intercept)
    np.testing.assert_array_equal(loaded.classes, model.classes)
    assert loaded.summary == json.loads(json.dumps(model.summary))
    assert loaded.params["C"] == 0.5 and loaded.index_base == 1


def test_liblinear_reads_our_export_and_predicts_the_same(trained, tmp_path):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    root, model = trained
    path = write_liblinear_model(model, tmp_path / "model.txt")
    theirs = liblinear.load_model(str(path))
    X, y = load_svmlight_file(str(root / "test.svm"), n_features=300)
    labels, _, values = liblinear.predict(y, X, theirs, "-q")
    np.testing.assert_array_equal(np.array(labels), model.predict(X))
    np.testing.assert_allclose(np.array(values)[:, 0], model.decision_function(X), rtol=1e-9, atol=1e-12)


def test_we_read_a_liblinear_model(trained, tmp_path):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    root, _ = trained
    X, y = load_svmlight_file(str(root / "train.svm"), n_features=300)
    y3 = np.where(y > 0, 2.0, np.where(X[:, 0].toarray().ravel() > 0, 0.0, 1.0))  # three classes
    for labels in (y, y3):
        theirs = liblinear.train(liblinear.problem(labels, X), "-s 1 -c 1 -B 1 -q")
        liblinear.save_model(str(tmp_path / "ll.model"), theirs)
        ours = LinearModel.load(tmp_path / "ll.model")
        expected, _, _ = liblinear.predict(labels, X, theirs, "-q")
        np.testing.assert_array_equal(ours.predict(X), np.array(expected))
    assert read_liblinear_model(tmp_path / "ll.model")["classes"].tolist() == [0.0, 1.0, 2.0]


def test_predict_text_and_store_agree_in_source_order(trained, tmp_path):
    root, model = trained
    from_text = predict(root / "model.h5", root / "test.svm", tmp_path / "a.txt", decision_values=True)
    from_store = predict(root / "model.h5", root / "test.bsvm", tmp_path / "b.txt", decision_values=True)
    text_rows = np.loadtxt(tmp_path / "a.txt")
    store_rows = np.loadtxt(tmp_path / "b.txt")  # float32 values in the store, float64 from text
    np.testing.assert_array_equal(text_rows[:, 0], store_rows[:, 0])
    np.testing.assert_allclose(text_rows[:, 1], store_rows[:, 1], rtol=1e-5, atol=1e-6)
    assert from_text.correct == from_store.correct and from_text.rows == 1000
    X, y = load_svmlight_file(str(root / "test.svm"), n_features=300)
    lines = (tmp_path / "a.txt").read_text().splitlines()
    labels = np.array([float(line.split()[0]) for line in lines])
    values = np.array([float(line.split()[1]) for line in lines])
    np.testing.assert_array_equal(labels, model.predict(X))
    np.testing.assert_allclose(values, model.decision_function(X), rtol=1e-6)
    assert from_text.accuracy == pytest.approx(np.mean(labels == y))


def test_model_refuses_a_store_of_another_feature_space(trained, tmp_path):
    root, _ = trained
    (tmp_path / "zero.svm").write_text("1 0:1\n-1 1:1\n")
    convert(tmp_path / "zero.svm", tmp_path / "zero.bsvm", progress=False)
    with pytest.raises(ModelError, match="different feature spaces"):
        predict(root / "model.h5", tmp_path / "zero.bsvm")


def test_missing_or_foreign_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(ModelError, match="no such model file"):
        LinearModel.load(tmp_path / "nope.h5")
    (tmp_path / "junk.txt").write_text("hello\n")
    with pytest.raises(ModelError, match="neither a blocksvm model nor a LIBLINEAR"):
        LinearModel.load(tmp_path / "junk.txt")


def test_cli_train_predict_export_plot(trained, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    root, _ = trained
    model = tmp_path / "m.h5"
    assert (
        main(
            [
                "train",
                str(root / "train.bsvm"),
                str(model),
                "-c",
                "0.5",
                "-s",
                "3",
                "-B",
                "1",
                "--max-outer",
                "5",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["outer_iterations"] <= 5 and LinearModel.load(model).params["loss"] == "hinge"
    history = tmp_path / "m.h5.history.jsonl"
    assert len(history.read_text().splitlines()) == summary["outer_iterations"]
    assert main(["predict", str(model), str(root / "test.svm"), "-o", str(tmp_path / "p.txt"), "--json", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == 1000
    assert main(["export", str(model), str(tmp_path / "m.txt"), "-q"]) == 0
    assert (tmp_path / "m.txt").read_text().startswith("solver_type L2R_L1LOSS_SVC_DUAL\n")
    assert main(["plot", str(history), "-o", str(tmp_path / "h.png"), "-q"]) == 0
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_errors_are_one_line_without_traceback(tmp_path, capsys):
    assert main(["train", str(tmp_path / "missing.bsvm"), str(tmp_path / "m.h5")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("blocksvm: error:") and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_sigint_saves_the_model_so_far_beside_the_output_and_exits_130(trained, tmp_path, wait_for):
    root, _ = trained
    model = tmp_path / "m.h5"
    process = subprocess.Popen(
        cli("train", root / "train.bsvm", model, "--tol", "0", "--max-outer", "100000"),
        stderr=subprocess.PIPE,
        text=True,
    )
    history = tmp_path / "m.h5.history.jsonl"
    try:
        wait_for(lambda: history.exists() and history.read_text().count("\n") >= 2, process, "two passes")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()  # only if something above failed: it has ended otherwise
        process.wait()
    assert process.returncode == 130, err
    assert "stopped by SIGINT" in err and "Traceback" not in err
    assert f"the model so far written to {tmp_path / 'm.partial.h5'}, not to {model}" in err
    assert "without --checkpoint this run cannot be resumed exactly" in err and not model.exists()
    assert LinearModel.load(tmp_path / "m.partial.h5").summary["stop_reason"].startswith("stopped by SIGINT")
