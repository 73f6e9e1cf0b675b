"""No command writes over one of its inputs: the text, its store (or a text's cached store), a validation file, a
warm-start model, a checkpoint it resumes, a history it plots. ``train hs hs`` replaced the text with the model and
said "it replaced the model there"; ``predict m.h5 hs -o hs`` replaced it with the predictions. Each is refused in one
line before anything is read, whatever path names the input: itself, a symbolic link or a hard link to it; and so is
an output inside an input store, a store written over the folder that holds its text, and two outputs on one file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from conftest import run_cli

from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.errors import ParameterError
from blocksvm.io import convert
from blocksvm.predict import predict


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """In one folder: ``hs`` (LIBSVM text), its links, a store ``s.bsvm``, and a model ``m.h5`` with its history."""
    root = tmp_path_factory.mktemp("inputs")
    write_libsvm(root / "hs", SyntheticSpec(rows=300, features=20, nnz=5, seed=1), progress=False)
    os.symlink("hs", root / "soft")
    os.link(root / "hs", root / "hard")
    convert(root / "hs", root / "s.bsvm", block_rows=100, progress=False)
    assert main(["train", str(root / "s.bsvm"), str(root / "m.h5"), "-q"]) == 0
    return root


def digests(root: Path) -> dict[str, str]:
    """Every file under ``root`` and its SHA-256: what a refused command must leave as it was."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink() and not path.name.endswith(".lock")
    }


CASES = [
    ("train hs hs", "the model hs is the training data hs"),
    ("train hs soft", "the model soft is the training data hs"),
    ("train hs hard", "the model hard is the training data hs"),
    ("train s.bsvm hs --validation hs", "the model hs is the validation data hs"),
    ("train hs m2.h5 --history hard", "the history hard is the training data hs"),
    ("train s.bsvm s.bsvm/manifest.json", "the model s.bsvm/manifest.json is inside the training data s.bsvm"),
    ("train s.bsvm m.h5 -i m.h5 --solver newton", "the model m.h5 is the warm-start model m.h5"),
    ("train s.bsvm m2.h5 --checkpoint m2.h5", "the model and the checkpoint are both m2.h5"),
    ("train s.bsvm m2.h5 --history m.h5 --resume m.h5 --checkpoint c", "the history m.h5 is the checkpoint resumed"),
    ("tune hs --refit soft", "the model soft is the training data hs"),
    ("tune s.bsvm --plot s.bsvm/manifest.json", "the plot s.bsvm/manifest.json is inside the training data s.bsvm"),
    ("stream hs hard", "the model hard is the training data hs"),
    ("predict m.h5 hs -o hs", "the predictions hs is the data hs"),
    ("predict m.h5 hs soft", "the predictions soft is the data hs"),
    ("predict hs m.h5 hs", "the predictions hs is the data hs"),
    ("predict m.h5 hs m.h5", "the predictions m.h5 is the model m.h5"),
    ("predict m.h5 s.bsvm s.bsvm/block-00000.h5", "the predictions s.bsvm/block-00000.h5 is inside the data s.bsvm"),
    ("export m.h5 m.h5", "the LIBLINEAR model m.h5 is the model m.h5"),
    ("plot m.h5.history.jsonl -o m.h5.history.jsonl", "the plot m.h5.history.jsonl is the history"),
    ("convert hs hs", "the store hs is the text hs"),
    ("convert hard soft", "the store soft is the text hard"),
]


@pytest.mark.parametrize("command, refusal", CASES, ids=[command for command, _ in CASES])
def test_an_output_that_is_an_input_is_refused_before_anything_is_written(files, capsys, command, refusal):
    before = digests(files)
    cwd = os.getcwd()
    os.chdir(files)  # the paths as a user types them
    try:
        code, out, err = run_cli(capsys, *command.split())
    finally:
        os.chdir(cwd)
    assert code == 2
    assert err.count("\n") == 1 and refusal in err, err
    assert "no command writes over its input" in err or "give each its own path" in err
    assert digests(files) == before  # nothing written, nothing replaced
    assert not list(files.glob("*.partial*")) and not (files / "m2.h5").exists()


def test_a_store_over_the_folder_that_holds_its_text_is_refused(tmp_path, capsys):
    """``convert d/x.svm d --overwrite`` would have replaced the folder, the text in it."""
    (tmp_path / "d").mkdir()
    write_libsvm(tmp_path / "d" / "x.svm", SyntheticSpec(rows=50, features=5, nnz=2, seed=0), progress=False)
    before = (tmp_path / "d" / "x.svm").read_bytes()
    code, _, err = run_cli(capsys, "convert", str(tmp_path / "d" / "x.svm"), str(tmp_path / "d"), "--overwrite")
    assert code == 2 and "holds the text" in err
    assert (tmp_path / "d" / "x.svm").read_bytes() == before


def test_the_python_api_refuses_too(files):
    """:func:`blocksvm.predict.predict` and :func:`blocksvm.convert` own their outputs: they refuse as the commands."""
    before = digests(files)
    with pytest.raises(ParameterError, match="the predictions .*hard is the data .*hs"):
        predict(files / "m.h5", files / "hs", files / "hard")
    with pytest.raises(ParameterError, match="the store .*soft is the text"):
        convert(files / "hs", files / "soft", overwrite=True)
    assert digests(files) == before


def test_other_paths_are_still_written(files, tmp_path, capsys):
    """The check refuses only what overlaps: a model beside its data, predictions beside their input are written."""
    code, _, err = run_cli(capsys, "export", str(files / "m.h5"), str(tmp_path / "m.txt"))
    assert code == 0, err
    code, _, err = run_cli(capsys, "predict", str(files / "m.h5"), str(files / "hs"), "-o", str(tmp_path / "p.txt"))
    assert code == 0, err
    assert len((tmp_path / "p.txt").read_text().splitlines()) == 300
