"""Every script of examples/ runs on small data and shows what its docstring says."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_tested_and_documented():
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    for path in EXAMPLES.glob("*.py"):
        assert path.stem in tested, f"{path.name} has no test"
        assert load(path.stem).__doc__, f"{path.name} has no docstring"


def test_out_of_core(tmp_path):
    result = load("out_of_core").main(tmp_path, small=True)
    assert result["blocks"] > 3  # several blocks: training held a few at a time
    assert result["gap"] <= 1e-3
    assert result["test_accuracy"] > 0.8
    assert abs(result["test_accuracy"] - result["validation_accuracy"]) < 0.01  # float32 store, float64 text
    assert len(result["predictions"].read_text().splitlines()) == 5_000


def test_grid_search_c(tmp_path):
    result = load("grid_search_c").main(tmp_path, small=True)
    accuracy = result["accuracy"]
    assert result["best_C"] == max(accuracy, key=accuracy.get)
    assert min(accuracy.values()) < accuracy[result["best_C"]]  # the grid makes a difference
    assert result["model"].exists()


@pytest.mark.slow
def test_resume_after_kill(tmp_path, monkeypatch):
    # The first training child pauses before its 6th checkpoint at the latest (a test-only hook), so
    # the example's kill, which waits for 5 saved blocks, lands after exactly 5 however fast or loaded
    # the machine; the resumed child runs without the hook.
    example = load("resume_after_kill")
    paused = {**os.environ, "BLOCKSVM_TEST_PAUSE_IN_CHECKPOINT_WRITE": f"6:before:{tmp_path / 'paused'}"}
    launch = SimpleNamespace(Popen=functools.partial(subprocess.Popen, env=paused), run=subprocess.run)
    monkeypatch.setattr(example, "subprocess", launch)
    result = example.main(tmp_path, small=True)
    assert result["identical"]
    assert result["passes"] == list(range(1, 7))  # no pass lost or repeated
    assert result["killed_at"] == (1, 5)  # killed in the middle of training, 5 blocks into it


def test_multiclass(tmp_path):
    result = load("multiclass").main(tmp_path, small=True)
    np.testing.assert_array_equal(result["classes"], [1, 2, 3, 4])
    confusion = result["confusion"]
    assert confusion.sum() == 3_000
    assert result["accuracy"] > 0.7
    assert np.all(np.diag(confusion) > confusion.sum(axis=1) / 2)  # every class mostly right


def test_plot_history(tmp_path):
    result = load("plot_history").main(tmp_path, small=True)
    assert result["records"] >= 2
    for png in (result["standard"], result["by_hand"]):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_pipeline_blocksvc(tmp_path):
    result = load("pipeline_blocksvc").main(tmp_path, small=True)
    assert result["best_C"] in (0.01, 0.1, 1.0)
    assert result["test_accuracy"] > 0.75
    assert abs(result["test_accuracy"] - result["liblinear_accuracy"]) <= 0.01
    assert result["difference"] < 0.02  # the same optimum as LIBLINEAR, to the tolerance


def test_an_example_runs_as_a_script(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "multiclass.py"), "--small", "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "confusion matrix" in done.stdout and (tmp_path / "train.bsvm").is_dir()
