"""The rough edges a new user met (issue 24, the smaller command-line items), one test each."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

import blocksvm
from blocksvm.cli import main
from blocksvm.demo import run_demo
from blocksvm.io.text_cache import cache_path
from blocksvm.model import LinearModel


@pytest.fixture(scope="module")
def trained(tmp_path_factory, small_libsvm) -> tuple[Path, Path]:
    """A store of the small generated file and a model trained on it."""
    folder = tmp_path_factory.mktemp("edges")
    store, model = folder / "s.bsvm", folder / "m.h5"
    assert main(["convert", str(small_libsvm), str(store), "--block-size", "1000", "-q"]) == 0
    assert main(["train", str(store), str(model), "-q", "--max-outer", "5"]) == 0
    return store, model


def test_an_unknown_option_points_at_the_command_s_help(capsys, tmp_path):
    """It pointed at ``blocksvm --help``, which does not list the command's options."""
    code, _, err = run_cli(capsys, "convert", tmp_path / "a.svm", tmp_path / "o", "--frobnicate")
    assert (code, err) == (2, "blocksvm: error: unrecognized arguments: --frobnicate (see 'blocksvm convert --help')\n")


def test_liblinear_s_cross_validation_flag_points_at_tune(capsys, small_libsvm, tmp_path):
    """``-v 5`` is LIBLINEAR's 5-fold cross-validation; here ``-v`` is --verbose and 5 became the store."""
    with pytest.raises(SystemExit) as exited:
        main(["train", "-v", "5", str(small_libsvm), str(tmp_path / "m.h5")])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "-v 5 is LIBLINEAR's 5-fold cross-validation" in err
    assert "'blocksvm tune STORE --folds 5'" in err and not (tmp_path / "m.h5").exists()
    assert main(["train", "-v", str(small_libsvm), str(tmp_path / "m.h5"), "--max-outer", "2"]) == 0  # --verbose


def test_a_model_given_as_training_data_is_refused_before_converting(capsys, trained, tmp_path):
    """``blocksvm train model.h5 m.h5`` first said "converting model.h5 into the cached store"."""
    _, model = trained
    code, _, err = run_cli(capsys, "train", model, tmp_path / "m2.h5")
    assert code == 2
    what = "is an HDF5 file (a blocksvm model, block or checkpoint?), not LIBSVM text"
    assert err == f"blocksvm: error: {model}: {what}\n"
    assert not cache_path(model).exists()


def test_plot_of_a_model_points_at_its_history(capsys, trained):
    _, model = trained
    code, _, err = run_cli(capsys, "plot", model)
    assert code == 2 and err.endswith(f"not a training history: plot {model}.history.jsonl\n")
    assert Path(f"{model}.history.jsonl").is_file()  # where it points, a history plot reads


def test_predict_takes_liblinear_s_words_and_order(capsys, trained, small_libsvm, tmp_path):
    """``predict test_file model_file output_file`` (LIBLINEAR's) was refused."""
    _, model = trained
    assert run_cli(capsys, "predict", model, small_libsvm, "--output", tmp_path / "ours.txt")[0] == 0
    assert run_cli(capsys, "predict", model, small_libsvm, tmp_path / "third.txt")[0] == 0
    assert run_cli(capsys, "predict", small_libsvm, model, tmp_path / "liblinear.txt")[0] == 0
    assert run_cli(capsys, "export", model, tmp_path / "m.liblinear", "-q")[0] == 0
    assert run_cli(capsys, "predict", small_libsvm, tmp_path / "m.liblinear", tmp_path / "exported.txt")[0] == 0
    expected = (tmp_path / "ours.txt").read_text()
    for name in ("third.txt", "liblinear.txt", "exported.txt"):
        assert (tmp_path / name).read_text() == expected, name


def test_the_max_outer_warning_names_the_flags_that_lift_it(capsys, trained, tmp_path):
    store, _ = trained
    code, _, err = run_cli(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "1", "--tol", "1e-12")
    assert code == 0
    (warning,) = [line for line in err.splitlines() if line.startswith("WARNING")]
    gap = LinearModel.load(tmp_path / "m.h5").summary["gap"]  # how far: the gap reached, as the model records it
    assert warning == (
        f"WARNING: reached max_outer (1) with relative duality gap {gap:.1e} > tol 1e-12: raise --max-outer or "
        "--time-limit (max_outer=, time_limit= in Python), or loosen the tolerance"
    )


@pytest.mark.slow
@pytest.mark.children  # (the demo runs each step in a child)
def test_the_demo_does_not_present_a_folder_it_deletes_as_kept(monkeypatch, tmp_path):
    """It printed "Files in /tmp/blocksvm-demo-..." and removed the folder at exit."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    out = io.StringIO()
    run_demo(rows=2000, test_rows=500, features=200, nnz=5, out=out)
    (line,) = [x for x in out.getvalue().splitlines() if "Files in" in x]
    folder = line.split("Files in ")[1].split()[0]
    assert line.endswith("while it runs (removed at the end: --keep or --workdir keeps them)")
    assert not Path(folder).exists() and "files kept" not in out.getvalue()


def test_block_svc_predicts_a_text_file_as_it_fits_one(tmp_path, small_libsvm):
    """``BlockSVC().fit("a9a")`` took a text file, ``.predict("a9a.t")`` refused it."""
    text = tmp_path / "train.svm"
    text.write_bytes(small_libsvm.read_bytes())
    svc = blocksvm.BlockSVC(max_outer=5, tol=1e-2).fit(str(text))
    X, y, _ = blocksvm.load_libsvm(text, n_features=svc.n_features_in_)
    np.testing.assert_array_equal(svc.predict(str(text)), svc.predict(X))
    assert svc.score(str(text)) == svc.score(X, y)


def test_rows_per_block_have_one_name(capsys, small_libsvm, tmp_path):
    """``--block-size``, ``convert(block_rows=)`` and ``BlockSVC(block_size=)`` named one thing three ways: it is
    ``block_rows`` / ``--block-rows`` now, ``--block-size`` an older name the commands still accept."""
    for flag in ("--block-rows", "--block-size"):
        assert run_cli(capsys, "convert", small_libsvm, tmp_path / flag, flag, "1000", "-q")[0] == 0
    same = [blocksvm.BlockStore(tmp_path / flag).info()["block_sizes"] for flag in ("--block-rows", "--block-size")]
    assert same[0] == same[1] and len(same[0]) == 3
    assert "block_rows" in blocksvm.BlockSVC().get_params() and "block_size" not in blocksvm.BlockSVC().get_params()
    _, out, _ = run_cli(capsys, "convert", "--help")
    assert "--block-rows ROWS, --block-size ROWS" in out


@pytest.mark.parametrize("at_line", [1, 3])
def test_an_interrupted_stream_names_its_checkpoint_even_before_two_classes(capsys, monkeypatch, tmp_path, at_line):
    """A Ctrl-C before the stream had shown two classes ended as an error (rc 2, 'a classifier needs two or more')
    instead of an interrupted run that names its checkpoint. The SIGINT is sent by the progressive table's
    AT_LINE-th line (no timer); the first rows of the file are all of one class."""
    import signal

    import blocksvm.stream

    data = tmp_path / "d.svm"
    negatives, positives = (f"-1 {i % 7 + 1}:1\n" for i in range(40)), (f"1 {i % 5 + 1}:1\n" for i in range(40))
    data.write_text("".join(negatives) + "".join(positives))
    line = blocksvm.stream.Progressive.line
    lines = []

    def line_then_sigint(self):
        line(self)
        lines.append(1)
        if len(lines) == at_line:
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(blocksvm.stream.Progressive, "line", line_then_sigint)
    ck = tmp_path / "st.ckpt"
    code, _, err = run_cli(capsys, "stream", data, tmp_path / "m.h5", "--checkpoint", ck)
    assert code == 130, err
    assert "no model written: stopped by SIGINT before the stream showed two classes" in err
    assert err.endswith(f"checkpoint in {ck}: continue with --resume {ck}\n")
    monkeypatch.undo()
    assert run_cli(capsys, "stream", data, tmp_path / "m.h5", "--resume", ck, "-q")[0] == 0
    assert (tmp_path / "m.h5").exists()
