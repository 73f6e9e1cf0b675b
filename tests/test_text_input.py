"""Training straight from LIBSVM text: converted once into a cached store, reused while the file is unchanged."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_store_matches_sklearn
from oracle import liblinear_fit, primal
from sklearn.datasets import load_svmlight_file

from blocksvm import BlockStore, BlockSVC, convert
from blocksvm.cli import main
from blocksvm.io.text_cache import CACHE_VARIABLE, SOURCE_FILE, cache_path, store_for
from blocksvm.model import LinearModel
from blocksvm.train import train

TRAIN = ["--max-outer", "4", "--tol", "0", "--seed", "3"]  # a fixed number of passes: models compare exactly


def write_text(path: Path, seed: int = 0, rows: int = 400, features: int = 30) -> Path:
    """A separable-ish LIBSVM file whose labels are written ``+1``/``-1``, so flipping them keeps the size."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=features)
    lines = []
    for _ in range(rows):
        cols = np.sort(rng.choice(features, size=6, replace=False))
        vals = np.round(rng.uniform(-1, 1, size=6), 3)
        label = "+1" if vals @ w[cols] > 0 else "-1"
        lines.append(label + "".join(f" {c + 1}:{v:.3f}" for c, v in zip(cols, vals)))
    path.write_text("\n".join(lines) + "\n")
    return path


def flip_labels(path: Path) -> None:
    """Swap the classes in place: the same number of bytes, other data."""
    text = path.read_text()
    path.write_text("\n".join(("-" if line[0] == "+" else "+") + line[1:] for line in text.splitlines()) + "\n")


def set_mtime_later(path: Path, seconds: int = 5) -> None:
    """A new mtime, set explicitly: a file system's timestamp granularity cannot hide the change."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


def train_cli(capsys, data, model: Path, *options) -> tuple[LinearModel, str]:
    capsys.readouterr()
    assert main(["train", str(data), str(model), *TRAIN, *map(str, options)]) == 0
    return LinearModel.load(model), capsys.readouterr().err


def train_from_fresh_store(capsys, text: Path, folder: Path) -> LinearModel:
    """The oracle of equality: ``blocksvm convert`` with its defaults, then ``blocksvm train`` on the store."""
    store = folder / f"fresh-{len(list(folder.glob('fresh-*')))}.bsvm"
    assert main(["convert", str(text), str(store), "-q"]) == 0
    return train_cli(capsys, store, folder / f"{store.name}.h5", "-q")[0]


def manifest_identity(cache: Path) -> tuple[int, int, str]:
    st = (cache / "manifest.json").stat()
    return st.st_ino, st.st_mtime_ns, BlockStore(cache).store_id


@pytest.fixture
def text(tmp_path) -> Path:
    return write_text(tmp_path / "data.txt")


def test_text_input_trains_the_model_of_convert_then_train(tmp_path, capsys, text):
    model, err = train_cli(capsys, text, tmp_path / "m.h5")
    cache = cache_path(text)
    assert f"converting {text} into the cached store {cache} (once; reused while the file is unchanged)" in err
    expected = train_from_fresh_store(capsys, text, tmp_path)
    np.testing.assert_array_equal(model.coef, expected.coef)
    np.testing.assert_array_equal(model.intercept, expected.intercept)
    assert_store_matches_sklearn(cache, text)  # the cache holds what scikit-learn reads from the file


def test_trained_from_text_reaches_liblinears_optimum(tmp_path, capsys, text):
    assert (
        main(["train", str(text), str(tmp_path / "m.h5"), "-C", "0.5", "--tol", "1e-7", "--max-outer", "500", "-q"])
        == 0
    )
    model = LinearModel.load(tmp_path / "m.h5")
    X, y = load_svmlight_file(str(text), n_features=30)
    coef, intercept = liblinear_fit(X, y, "squared-hinge", 0.5, bias=1.0, eps=1e-8)
    ours = primal(model.coef[0], model.intercept[0], X, y, 0.5, "squared-hinge")
    assert ours == pytest.approx(primal(coef, intercept, X, y, 0.5, "squared-hinge"), rel=1e-5)


def test_second_run_reuses_the_cache_without_rewriting_it(tmp_path, capsys, text):
    first, _ = train_cli(capsys, text, tmp_path / "m1.h5")
    cache = cache_path(text)
    before = manifest_identity(cache), (cache / SOURCE_FILE).read_bytes()
    second, err = train_cli(capsys, text, tmp_path / "m2.h5")
    assert f"using the cached store {cache}\n" in err and "converting" not in err
    assert (manifest_identity(cache), (cache / SOURCE_FILE).read_bytes()) == before
    np.testing.assert_array_equal(first.coef, second.coef)
    _, quiet = train_cli(capsys, text, tmp_path / "m3.h5", "-q")
    assert quiet == ""


@pytest.mark.parametrize("change", ["other size", "same size, new mtime", "touched"])
def test_a_changed_file_is_converted_again_and_the_model_follows(tmp_path, capsys, text, change):
    old, _ = train_cli(capsys, text, tmp_path / "m1.h5")
    cache = cache_path(text)
    old_identity = manifest_identity(cache)
    size = text.stat().st_size
    if change == "other size":
        write_text(text, seed=1, rows=300)
        assert text.stat().st_size != size
    elif change == "same size, new mtime":
        flip_labels(text)
        assert text.stat().st_size == size
    set_mtime_later(text)
    new, err = train_cli(capsys, text, tmp_path / "m2.h5")
    assert f"converting {text} into the cached store {cache} (again:" in err and "using" not in err
    assert manifest_identity(cache)[2] != old_identity[2]  # a new store replaced the stale one
    np.testing.assert_array_equal(new.coef, train_from_fresh_store(capsys, text, tmp_path).coef)
    if change == "same size, new mtime":  # the same problem with y -> -y: dual CD follows it sign for sign
        np.testing.assert_array_equal(new.coef, -old.coef)
    if change == "touched":
        np.testing.assert_array_equal(new.coef, old.coef)
    assert [p.name for p in cache.parent.iterdir() if p.name.startswith(cache.name)] == [cache.name]  # none aside


def test_changed_conversion_options_convert_again(tmp_path, text):
    said = []
    cache = store_for(text, say=said.append)
    assert store_for(text, say=said.append) == cache
    assert store_for(text, convert_options={"block_rows": 100}, say=said.append) == cache
    assert [line.split(" ")[0] for line in said] == ["converting", "using", "converting"]
    store = BlockStore(cache)
    assert store.manifest["params"]["block_rows"] == 100 and store.n_blocks >= 3


def test_cache_dir_holds_the_caches_of_training_and_validation(tmp_path, capsys, text):
    valid = write_text(tmp_path / "valid.txt", seed=0, rows=100)
    caches = tmp_path / "caches" / "new"  # created on demand
    model, err = train_cli(capsys, text, tmp_path / "m.h5", "--cache-dir", caches, "--validation", valid)
    assert sorted(p.name for p in caches.iterdir()) == sorted(
        [cache_path(text, caches).name, cache_path(valid, caches).name]
    )
    assert not list(tmp_path.glob("*.bsvm-cache"))
    assert err.count("converting") == 2
    history = [json.loads(line) for line in (tmp_path / "m.h5.history.jsonl").read_text().splitlines()]
    X, y = load_svmlight_file(str(valid), n_features=30)
    accuracy = np.mean(np.where(X @ model.coef[0] + model.intercept[0] > 0, 1, -1) == y)
    assert history[-1]["validation_accuracy"] == pytest.approx(accuracy)
    np.testing.assert_array_equal(model.coef, train_from_fresh_store(capsys, text, tmp_path).coef)


def test_gzip_input(tmp_path, capsys, text):
    packed = tmp_path / "data.txt.gz"
    packed.write_bytes(gzip.compress(text.read_bytes()))
    model, err = train_cli(capsys, packed, tmp_path / "m.h5")
    assert f"into the cached store {cache_path(packed)}" in err
    np.testing.assert_array_equal(model.coef, train_from_fresh_store(capsys, text, tmp_path).coef)


def test_train_function_and_estimator_take_a_text_path(tmp_path, capsys, text):
    store = tmp_path / "s.bsvm"
    convert(text, store, progress=False)
    from_text = train(text, C=0.5, max_outer=4, tol=0, verbose=0)
    assert capsys.readouterr().err == ""  # verbose=0 is quiet, the conversion included
    np.testing.assert_array_equal(from_text.model.coef, train(store, C=0.5, max_outer=4, tol=0, verbose=0).model.coef)
    fitted = BlockSVC(C=0.5, max_outer=4, tol=0, random_state=0).fit(text)
    expected = BlockSVC(C=0.5, max_outer=4, tol=0, random_state=0).fit(store)
    np.testing.assert_array_equal(fitted.coef_, expected.coef_)
    assert fitted.n_features_in_ == 30
    X, y = load_svmlight_file(str(text), n_features=30)
    assert fitted.score(X, y) == expected.score(X, y)
    cache = tmp_path / "elsewhere"
    train(text, C=0.5, max_outer=1, verbose=0, cache_dir=cache)
    assert [p.name for p in cache.iterdir()] == [cache_path(text, cache).name]


def test_unwritable_cache_folder_is_one_error_line(tmp_path, capsys, monkeypatch):
    text = write_text(tmp_path / "data.txt")
    (tmp_path / "ro").mkdir()
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "ro"))  # the user's cache folder, read-only
    real = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode, **kw: False if Path(path).name == "ro" and mode & os.W_OK else real(path, mode, **kw),
    )
    code = main(["train", str(text), str(tmp_path / "m.h5")])
    err = capsys.readouterr().err
    cache = cache_path(text)
    assert code == 2
    assert err == (
        f"blocksvm: error: cannot create the cached store {cache} for {text}: folder {tmp_path / 'ro'} "
        "is not writable (permission denied or a read-only file system); pass --cache-dir DIR "
        "(cache_dir= in Python) to put it elsewhere\n"
    )
    assert not cache.exists() and not (tmp_path / "m.h5").exists()
    train_cli(capsys, text, tmp_path / "m.h5", "--cache-dir", tmp_path / "cache")  # the remedy works


def test_a_folder_in_the_caches_place_is_never_replaced(tmp_path, capsys, text):
    squatter = cache_path(text)
    (squatter / "notes").mkdir(parents=True)
    assert main(["train", str(text), str(tmp_path / "m.h5")]) == 2
    assert capsys.readouterr().err == (
        f"blocksvm: error: cannot create the cached store {squatter} for {text}: {squatter} exists and is not a "
        "block store; remove it, or pass --cache-dir DIR (cache_dir= in Python) to put it elsewhere\n"
    )
    assert [p.name for p in squatter.iterdir()] == ["notes"]


def test_a_missing_input_is_one_error_line(tmp_path, capsys):
    assert main(["train", str(tmp_path / "absent.txt"), str(tmp_path / "m.h5")]) == 2
    assert capsys.readouterr().err == f"blocksvm: error: {tmp_path / 'absent.txt'}: no such file or block store\n"


KILL_SELF = "lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)"


@pytest.mark.parametrize("where", ["blocksvm.io.conversion._build_block", "blocksvm.io.text_cache.write_json_atomic"])
def test_a_killed_conversion_never_leaves_a_cache_that_looks_valid(tmp_path, capsys, text, where):
    """SIGKILL while writing the blocks, or after the store is published but before its fingerprint."""
    module, name = where.rsplit(".", 1)
    script = (
        f"import os, signal, sys, importlib; from blocksvm.cli import main; "
        f"setattr(importlib.import_module({module!r}), {name!r}, {KILL_SELF}); "
        f"sys.exit(main(['train', {str(text)!r}, {str(tmp_path / 'k.h5')!r}, '-q']))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    cache = cache_path(text)
    assert cache.exists() == (name == "write_json_atomic")
    model, err = train_cli(capsys, text, tmp_path / "m.h5")
    assert f"converting {text} into the cached store {cache}" in err
    np.testing.assert_array_equal(model.coef, train_from_fresh_store(capsys, text, tmp_path).coef)


CLOSED_BY_THE_COLLECTOR = """
import sys, threading
from blocksvm.io.libsvm import iter_parsed

chunks = iter_parsed(sys.argv[1], chunk_bytes=64)
next(chunks)  # suspended, its parsers waiting for work
with threading._shutdown_locks_lock:  # held as a thread starting holds it when the collector runs there
    del chunks  # closed here, as the garbage collector closes a reader dropped unfinished
print("closed")
"""


@pytest.mark.skipif(not hasattr(threading, "_shutdown_locks_lock"), reason="CPython's threading before 3.13")
def test_a_reader_dropped_unfinished_closes_wherever_the_collector_closes_it(tmp_path):
    """A text reader left unfinished (a consumer's error) is closed by the garbage collector, which can run inside
    another thread's start while threading holds its lock of shutdown locks; joining the reader's parser threads
    there took that lock again and hung the process (a suite's worker, for good). The reader leaves its parsers to
    end on their own: closed there, it returns."""
    path = tmp_path / "t.txt"
    path.write_text("".join(f"{1 if i % 2 else -1} 1:{i} 2:0.5\n" for i in range(200)))
    done = subprocess.run([sys.executable, "-c", CLOSED_BY_THE_COLLECTOR, str(path)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "closed", done.stderr
