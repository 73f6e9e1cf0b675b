"""What runs leave behind: a text input's cached store goes to the user's cache folder, never beside the input (a
read-only or a shared data folder); a conversion killed half-way leaves its partial folder, which the next conversion
of the same output removes once it can tell that its writer is dead (its lock is free), and never while it runs; and
the model so far that a stopped run wrote beside its output is removed by the next run that finishes that output."""

from __future__ import annotations

import signal
from pathlib import Path

import forked
import numpy as np
import pytest
from conftest import cutting_after, run_cli

from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.io.text_cache import CACHE_VARIABLE, cache_path, default_cache_dir
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore
from blocksvm.store.writer import remove_dead_partials

SPEC = SyntheticSpec(rows=2000, features=50, nnz=6, seed=3)


@pytest.fixture
def text(tmp_path) -> Path:
    data = tmp_path / "data" / "d.txt"
    data.parent.mkdir()
    write_libsvm(data, SPEC, progress=False)
    return data


def test_a_text_input_is_cached_in_the_users_cache_folder_not_beside_it(text, tmp_path, capsys, text_caches):
    before = sorted(p.name for p in text.parent.iterdir())
    code, _, err = run_cli(capsys, "train", text, tmp_path / "m.h5", "--max-outer", "2")
    assert code == 0, err
    cache = cache_path(text)
    assert cache.parent == text_caches and BlockStore(cache).n_rows == SPEC.rows
    assert f"converting {text} into the cached store {cache}" in err  # said, once
    assert sorted(p.name for p in text.parent.iterdir()) == before  # nothing written beside the input


def test_the_cache_folder_follows_the_conventions(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "blocksvm"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "blocksvm"


def test_a_killed_conversions_partial_folder_is_removed_by_the_next_once_its_writer_is_dead(text, tmp_path, wait_for):
    store = tmp_path / "s.bsvm"
    marker = tmp_path / "paused"
    argv = ["convert", text, store, "--block-rows", "500", "-q"]
    child = forked.Child(argv, {"BLOCKSVM_TEST_PAUSE_WRITING": f"block-00001.h5:{marker}"})
    wait_for(lambda: marker.exists() or child.poll() is not None, None, "the conversion's second block")
    (partial,) = [p for p in tmp_path.glob("s.bsvm.partial-*") if p.is_dir()]
    remove_dead_partials(store)  # its writer runs: left alone
    assert partial.is_dir()
    child.signal(signal.SIGKILL)
    assert child.wait().code == -signal.SIGKILL
    assert partial.is_dir()  # what the kill left
    assert main([str(a) for a in argv]) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("s.bsvm")) == ["s.bsvm"]
    assert BlockStore(store).verify() == []


def test_a_stopped_runs_model_so_far_is_removed_by_the_next_run_that_finishes(text, tmp_path, capsys):
    store, model = tmp_path / "s.bsvm", tmp_path / "m.h5"
    assert main(["convert", str(text), str(store), "--block-rows", "500", "-q"]) == 0
    with cutting_after(2, signal.SIGINT):  # (its checkpointer stops the run)
        code, _, err = run_cli(capsys, "train", store, model, "--checkpoint", tmp_path / "ck")
    partial = tmp_path / "m.partial.h5"
    assert code == 130 and partial.exists() and not model.exists(), err
    code, _, err = run_cli(capsys, "train", store, model, "--max-outer", "3")
    assert code == 0
    assert f"removed {partial}, an interrupted run's model so far" in err
    assert not partial.exists() and np.all(np.isfinite(LinearModel.load(model).coef))
