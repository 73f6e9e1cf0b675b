"""``train --validation`` checks its data as ``predict`` checks its input: labels the training store does not have
and features outside its space are said in one warning line each (a +-1 training set validated against a 3-class
file with other features printed "val acc 61.72%" and nothing else), and ``--strict`` refuses them, before training.
The counts are scikit-learn's reading of the files."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import run_cli
from sklearn.datasets import load_svmlight_file

from blocksvm.errors import FeatureSpaceWarning, InputWarning, LabelWarning, ModelError
from blocksvm.io import convert
from blocksvm.train import train


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A +-1 training text of 20 features, a 3-class validation text of 30, and one that matches the training."""
    root = tmp_path_factory.mktemp("validation")
    rng = np.random.default_rng(2)

    def write(name: str, rows: int, features: int, labels) -> None:
        lines = []
        for _ in range(rows):
            cols = np.sort(rng.choice(features, 4, replace=False)) + 1
            lines.append(f"{rng.choice(labels)} " + " ".join(f"{c}:{rng.random():.3f}" for c in cols))
        (root / name).write_text("\n".join(lines) + "\n")

    write("train.svm", 400, 20, [-1, 1])
    write("other.svm", 150, 30, [1, 2, 3])
    write("same.svm", 150, 20, [-1, 1])
    convert(root / "train.svm", root / "train.bsvm", progress=False)
    return root


def test_labels_and_features_the_training_store_lacks_are_warned(files):
    X, y = load_svmlight_file(str(files / "other.svm"))
    with pytest.warns(InputWarning) as caught:
        result = train(files / "train.bsvm", validation=files / "other.svm", max_outer=3, verbose=0)
    messages = {w.category: str(w.message) for w in caught}
    assert set(messages) == {LabelWarning, FeatureSpaceWarning}
    stray = int(np.count_nonzero(~np.isin(y, [-1, 1])))
    assert (
        f": {stray} rows have labels the training store does not have (2, 3; its classes: -1, 1)"
        in messages[LabelWarning]
    )
    assert (
        "its features of indices 21 to 30 are outside the training store's features (indices 1 to 20)"
        in (messages[FeatureSpaceWarning])
    )
    right = np.mean(result.model.predict(X[:, :20]) == y)  # its features ignored, its other labels never right
    assert result.history[-1]["validation_accuracy"] == pytest.approx(right, abs=1e-12)
    assert right <= 1 - stray / len(y)


@pytest.mark.parametrize("solver", ["crammer-singer", "newton"])
def test_other_learners_score_such_rows_as_wrong_too(files, solver):
    """Crammer and Singer's evaluation indexed its classes by the label (an unknown one: past the end)."""
    X, y = load_svmlight_file(str(files / "other.svm"))
    loss = {"loss": "crammer-singer"} if solver == "crammer-singer" else {"solver": solver}
    with pytest.warns(InputWarning):
        result = train(files / "train.bsvm", validation=files / "other.svm", max_outer=2, verbose=0, **loss)
    right = np.mean(result.model.predict(X[:, :20]) == y)
    assert result.history[-1]["validation_accuracy"] == pytest.approx(right, abs=1e-12)


def test_strict_refuses_them_before_training(files):
    with pytest.raises(ModelError, match=r"rows have labels the training store does not have .*\(--strict;"):
        train(files / "train.bsvm", validation=files / "other.svm", strict=True, verbose=0)


def test_a_validation_that_fits_is_scored_without_a_word(files):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputWarning)
        train(files / "train.bsvm", validation=files / "same.svm", strict=True, max_outer=2, verbose=0)


def test_the_command_says_each_in_one_line_and_strict_exits_2(files, tmp_path, capsys):
    argv = ["train", files / "train.bsvm", tmp_path / "m.h5", "--validation", files / "other.svm", "--max-outer", "2"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0
    lines = [line for line in err.splitlines() if line.startswith("warning: the validation data")]
    assert len(lines) == 2, err
    code, _, err = run_cli(capsys, *argv, "--strict")
    errors = [line for line in err.splitlines() if line.startswith("blocksvm: error:")]
    assert code == 2 and len(errors) == 1 and errors[0].startswith("blocksvm: error: the validation data")
    assert "Traceback" not in err
    assert not (tmp_path / "m.h5.partial.h5").exists()
