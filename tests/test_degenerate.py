"""Degenerate and hostile inputs: each ends in the right model or in a one-line error, never a hang.

The right model is LIBLINEAR's (liblinear-official, same C, loss and bias; objectives compared by
tests/oracle.py) or one computed by hand. An error goes through ``blocksvm.cli.main``: exit code 2,
one line ``blocksvm: error: ...`` naming the file, line or block, no traceback. Failures while
writing (a full disk, a read-only folder) are simulated with monkeypatch, since the tests run as
root, where ``chmod`` stops no write; they must leave nothing half-written that looks complete.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import SWEEPS_A_VISIT, failing_open, memory_for
from oracle import liblinear_fit, primal
from sklearn.datasets import load_svmlight_file

from blocksvm.checkpoint import read_checkpoint
from blocksvm.cli import main
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.errors import StoreError
from blocksvm.io import convert
from blocksvm.model import LinearModel
from blocksvm.store import BlockStore
from blocksvm.train import train

liblinear = pytest.importorskip("liblinear.liblinearutil")

LOSSES = ["hinge", "squared-hinge"]
BIASES = [1.0, -1.0]


# ---- helpers -------------------------------------------------------------------------------------


def store_of(tmp: Path, text: str, name: str = "data", **options) -> tuple[Path, sp.csr_matrix, np.ndarray]:
    """Write ``text`` as a LIBSVM file, convert it, and read it back with scikit-learn (float64)."""
    source = tmp / f"{name}.txt"
    source.write_text(text)
    store = tmp / f"{name}.bsvm"
    convert(source, store, progress=False, **options)
    X, y = rows_as_stored(source, BlockStore(store).n_features, options.get("dtype", "float32"))
    return store, X, y


def rows_as_stored(source: Path, n_features: int, dtype: str = "float32") -> tuple[sp.csr_matrix, np.ndarray]:
    """scikit-learn's reading of ``source``, values rounded to the store's type, as float64."""
    X, y = load_svmlight_file(str(source), dtype=np.dtype(dtype), n_features=n_features or None)
    return X.astype(np.float64), y


def fit(store, loss: str, bias: float, C: float = 1.0, **params):
    return train(store, loss=loss, bias=bias, C=C, tol=1e-8, max_outer=500, verbose=0, **params)


def assert_liblinear_optimum(result, X, y, loss: str, bias: float, C: float = 1.0) -> float:
    """blocksvm's objective is LIBLINEAR's optimum (or below it), and its dual bounds LIBLINEAR's from below."""
    model = result.model
    assert result.stop_reason.startswith("relative duality gap"), result.stop_reason
    ours = primal(model.coef[0], model.intercept[0], X, y, C, loss, bias)
    coef, intercept = liblinear_fit(X, y, loss, C, bias)
    theirs = primal(coef, intercept, X, y, C, loss, bias)
    assert np.isfinite(ours) and ours <= theirs * (1 + 1e-6), (ours, theirs)
    assert model.summary["primal"] == pytest.approx(ours, rel=1e-9)
    assert model.summary["dual"] <= theirs * (1 + 1e-9)  # weak duality: the dual is a true lower bound
    return ours


def cli_error(capsys, *argv) -> str:
    """Run the CLI, expect exit 2 and one clean error line, and return its message."""
    code = main([str(a) for a in argv] + ["-q"])
    err = capsys.readouterr().err
    lines = err.rstrip("\n").split("\n")
    assert code == 2, err
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith("blocksvm: error: "), err
    return lines[0].removeprefix("blocksvm: error: ")


def cli_ok(capsys, *argv) -> None:
    code = main([str(a) for a in argv] + ["-q"])
    assert code == 0, capsys.readouterr().err


def generated(tmp: Path, rows: int, name: str = "gen", features: int = 50, seed: int = 3) -> Path:
    path = tmp / f"{name}.txt"
    write_libsvm(path, SyntheticSpec(rows=rows, features=features, nnz=6, seed=seed), progress=False)
    return path


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ---- a single class, one row, one feature ------------------------------------------------------


def test_a_single_class_is_refused_where_liblinear_predicts_that_label_for_everything(tmp_path, capsys):
    """LIBLINEAR trains one "class vs nothing" problem and answers its one label for every row,
    whatever the decision value: no model at all. blocksvm refuses, as scikit-learn's LinearSVC does."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]))
    model = liblinear.train(liblinear.problem([1.0, 1.0, 1.0], X), "-s 1 -c 1 -B 1 -q")
    far_away = sp.csr_matrix(np.array([[-5.0, -5.0], [3.0, 3.0]]))
    labels, _, values = liblinear.predict([1.0, 1.0], far_away, model, "-q")
    assert model.get_nr_class() == 1 and labels == [1.0, 1.0]
    assert values[0][0] < 0 < values[1][0]  # opposite sides of the hyperplane, the same answer

    (tmp_path / "one.txt").write_text("1 1:1\n1 2:2\n1 1:1 2:1\n")
    cli_ok(capsys, "convert", tmp_path / "one.txt", tmp_path / "one.bsvm")
    message = cli_error(capsys, "train", tmp_path / "one.bsvm", tmp_path / "m.h5")
    assert message == f"{tmp_path / 'one.bsvm'} holds a single class ([1.0]); an SVM needs two or more"
    assert not (tmp_path / "m.h5").exists()


def test_one_row_is_a_single_class(tmp_path, capsys):
    (tmp_path / "row.txt").write_text("-1 3:0.5 7:2\n")
    cli_ok(capsys, "convert", tmp_path / "row.txt", tmp_path / "row.bsvm")
    assert "holds a single class ([-1.0])" in cli_error(capsys, "train", tmp_path / "row.bsvm", tmp_path / "m.h5")


@pytest.mark.parametrize("loss, w", [("hinge", 1.0), ("squared-hinge", 2 / 3)])
def test_one_row_per_class_gives_the_optimum_by_hand(tmp_path, loss, w):
    """x1 = e1 (+1), x2 = e2 (-1), no bias: each weight minimizes w^2/2 + loss(w) on its own,
    1 for the hinge (objective 1) and 2/3 for the squared hinge (w - 2(1 - w) = 0, objective 2/3)."""
    store, X, y = store_of(tmp_path, "1 1:1\n-1 2:1\n")
    model = fit(store, loss, -1.0).model
    np.testing.assert_allclose(model.coef[0], [w, -w], rtol=1e-6)
    assert model.intercept[0] == 0.0
    assert model.summary["primal"] == pytest.approx({"hinge": 1.0, "squared-hinge": 2 / 3}[loss], rel=1e-8)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", LOSSES)
def test_one_feature(tmp_path, loss, bias):
    store, X, y = store_of(tmp_path, "1 1:2\n-1 1:-1\n1 1:0.5\n-1 1:-3\n1 1:1\n-1 1:0.25\n1 1:-0.5\n")
    assert X.shape[1] == 1
    assert_liblinear_optimum(fit(store, loss, bias), X, y, loss, bias)


# ---- rows without features, identical rows, duplicates ------------------------------------------

EMPTY_ROWS = "1\n1\n-1\n1\n-1\n1\n"  # 4 positive, 2 negative rows, no feature at all


@pytest.mark.parametrize(
    "loss, b, objective",
    [
        # hinge: min b^2/2 + 4 max(0, 1 - b) + 2 max(0, 1 + b) at b = 1 (0 is in 1 - 4 [0, 1] + 2): 1/2 + 2 * 2
        ("hinge", 1.0, 4.5),
        # squared hinge: b + 2 * 2 (1 + b) - 4 * 2 (1 - b) = 13 b - 4 = 0; 8/169 + 4 (9/13)^2 + 2 (17/13)^2
        ("squared-hinge", 4 / 13, 910 / 169),
    ],
)
def test_every_row_empty_with_a_bias_learns_the_bias_alone(tmp_path, capsys, loss, b, objective):
    store, _, _ = store_of(tmp_path, EMPTY_ROWS)
    assert BlockStore(store).n_features == 0
    model = fit(store, loss, 1.0).model
    assert model.coef.shape == (1, 0)
    assert model.summary["primal"] == pytest.approx(objective, rel=1e-8)
    assert model.intercept[0] == pytest.approx(b, abs=1e-4)  # a gap of 1e-8 pins b to about sqrt(1e-8)
    model.save(tmp_path / "m.h5")  # a model of no features is written, read and applied
    cli_ok(capsys, "predict", tmp_path / "m.h5", tmp_path / "data.txt", "-o", tmp_path / "p.txt")
    assert (tmp_path / "p.txt").read_text() == "1\n" * 6  # the bias is positive: the larger class


@pytest.mark.parametrize("loss", LOSSES)
def test_every_row_empty_without_a_bias_is_w_zero(tmp_path, loss):
    """No feature and no bias: w is empty, every margin 0, the objective C * rows * loss(0) = 6."""
    store, _, _ = store_of(tmp_path, EMPTY_ROWS)
    result = fit(store, loss, -1.0)
    assert result.model.coef.shape == (1, 0) and result.model.intercept[0] == 0.0
    assert result.model.summary["primal"] == 6.0 and result.model.summary["gap"] == 0.0


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", LOSSES)
def test_all_rows_identical_with_both_labels(tmp_path, loss, bias):
    store, X, y = store_of(tmp_path, "1 1:1 3:2\n-1 1:1 3:2\n1 1:1 3:2\n1 1:1 3:2\n-1 1:1 3:2\n")
    assert_liblinear_optimum(fit(store, loss, bias), X, y, loss, bias)


def test_all_rows_identical_with_one_label_is_a_single_class(tmp_path, capsys):
    (tmp_path / "same.txt").write_text("1 1:1 3:2\n" * 50)
    cli_ok(capsys, "convert", tmp_path / "same.txt", tmp_path / "same.bsvm")
    assert "holds a single class ([1.0])" in cli_error(capsys, "train", tmp_path / "same.bsvm", tmp_path / "m.h5")


@pytest.mark.parametrize("loss", LOSSES)
def test_duplicate_rows_weigh_as_a_larger_C(tmp_path, loss):
    """Every row three times (scattered over the blocks): LIBLINEAR's optimum on the copies, which
    is LIBLINEAR's optimum on the rows once with C = 3."""
    lines = generated(tmp_path, 150).read_text().splitlines(keepends=True)
    store, X, y = store_of(tmp_path, "".join(lines * 3), name="tripled", block_rows=100)
    objective = assert_liblinear_optimum(fit(store, loss, 1.0), X, y, loss, 1.0)
    coef, intercept = liblinear_fit(X[:150], y[:150], loss, 3.0, 1.0)
    assert objective <= primal(coef, intercept, X[:150], y[:150], 3.0, loss, 1.0) * (1 + 1e-6)


# ---- extreme values ------------------------------------------------------------------------------


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", LOSSES)
def test_values_of_1e30_and_1e_minus_40_in_float32(tmp_path, loss, bias):
    """1e30 squared overflows float32 but not the float64 sums of the solver; 1e-40 is a float32
    subnormal, kept as such (not flushed to zero)."""
    text = "1 1:1e30 2:1e-40\n-1 1:-1e30 3:1e-40\n1 2:1e30\n-1 3:1e30 4:1\n1 1:2e30 4:1\n-1 2:-3e30\n"
    store, X, y = store_of(tmp_path, text)
    stored = BlockStore(store).read_block(0).data
    assert stored.dtype == np.float32 and np.float32(1e-40) in stored and np.float32(1e-40) != 0
    result = fit(store, loss, bias)
    assert np.all(np.isfinite(result.model.coef))
    assert_liblinear_optimum(result, X, y, loss, bias)


@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("loss", LOSSES)
def test_subnormal_values_beside_ordinary_ones(tmp_path, loss, bias):
    store, X, y = store_of(tmp_path, "1 1:1e-40 2:1\n-1 1:-1e-40 2:-1\n1 2:1e-40 3:0.5\n-1 3:1e-40\n1 1:3e-41 3:2\n")
    assert_liblinear_optimum(fit(store, loss, bias), X, y, loss, bias)


@pytest.mark.parametrize("loss", LOSSES)
def test_features_1e30_apart_give_a_finite_objective_and_an_honest_gap(tmp_path, loss):
    """Features of scale 1e30 beside features of scale 1: the dual is conditioned at 1e60, and dual
    coordinate descent (LIBLINEAR's too) cannot reach the optimum in any number of passes. The
    objective stays finite, the reported primal is the model's, the dual a true lower bound of
    LIBLINEAR's objective, and the run says it stopped short of the tolerance."""
    text = "1 1:1e30 2:1\n-1 1:-1e30 2:1\n1 2:1\n-1 2:-1 3:1\n1 1:1 2:2\n-1 1:3e30\n"
    store, X, y = store_of(tmp_path, text)
    result = train(store, loss=loss, tol=1e-8, max_outer=50, verbose=0)
    model = result.model
    ours = primal(model.coef[0], model.intercept[0], X, y, 1.0, loss, 1.0)
    assert np.isfinite(ours) and model.summary["primal"] == pytest.approx(ours, rel=1e-9)
    coef, intercept = liblinear_fit(X, y, loss, 1.0, 1.0)
    assert model.summary["dual"] <= primal(coef, intercept, X, y, 1.0, loss, 1.0)
    assert result.stop_reason.startswith("max_outer") and model.summary["gap"] > 1e-8


def test_a_value_rounding_to_float32_infinity_is_refused(tmp_path, capsys):
    """3.4028235e38 rounds to float32's largest number, 3.4028236e38 to infinity."""
    (tmp_path / "ok.txt").write_text("1 1:3.4028235e38\n-1 1:1\n")
    cli_ok(capsys, "convert", tmp_path / "ok.txt", tmp_path / "ok.bsvm")
    assert BlockStore(tmp_path / "ok.bsvm").read_block(0).data.max() == np.finfo(np.float32).max
    (tmp_path / "inf.txt").write_text("-1 1:1\n1 1:3.4028236e38\n")
    message = cli_error(capsys, "convert", tmp_path / "inf.txt", tmp_path / "inf.bsvm")
    assert message == f"{tmp_path / 'inf.txt'}:2: a value does not fit in float32 (convert with --dtype float64)"
    assert files_in(tmp_path) == ["inf.txt", "ok.bsvm", "ok.txt"]


def test_a_row_whose_squared_norm_overflows_float64_is_refused(tmp_path, capsys):
    """float64 values up to 1.8e308 parse, but a row's ||x||^2 (the solver's Q_ii) would be inf."""
    (tmp_path / "ok.txt").write_text("1 1:1 2:1\n-1 1:9e153 2:9e153\n")  # 1.62e308: finite
    cli_ok(capsys, "convert", tmp_path / "ok.txt", tmp_path / "ok.bsvm", "--dtype", "float64")
    (tmp_path / "big.txt").write_text("1 1:1 2:1\n-1 3:1e300\n1 1:1e154 2:1.5e154\n")
    message = cli_error(capsys, "convert", tmp_path / "big.txt", tmp_path / "big.bsvm", "--dtype", "float64")
    assert message == (
        f"{tmp_path / 'big.txt'}:2: the squared norm of the row overflows float64 (values beyond "
        "about 1e154): rescale the features"
    )
    assert files_in(tmp_path) == ["big.txt", "ok.bsvm", "ok.txt"]


# ---- block layouts -------------------------------------------------------------------------------


@pytest.mark.slow  # 3,000 blocks of one row: 10-20 s
def test_one_row_blocks(tmp_path, capsys):
    """500 blocks of one row each (``--block-size 1 --no-shuffle``): LIBLINEAR's optimum. The
    2,000-block case is test_two_thousand_one_row_blocks."""
    text = generated(tmp_path, 500)
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm", "--block-size", "1", "--no-shuffle")
    store = BlockStore(tmp_path / "s.bsvm")
    assert store.n_blocks == 500 and set(store.block_rows) == {1}
    X, y = rows_as_stored(text, store.n_features)
    result = train(store, loss="hinge", tol=1e-6, max_outer=100, verbose=0, **SWEEPS_A_VISIT)
    assert_liblinear_optimum(result, X, y, "hinge", 1.0)


@pytest.mark.slow
def test_two_thousand_one_row_blocks(tmp_path, capsys):
    """By hand (``pytest -m slow``): 2,000 one-row blocks convert and train to LIBLINEAR's optimum (10,000 took 9
    minutes of the slow step: each block is a file, about 5 ms to open and check, read at every pass)."""
    text = generated(tmp_path, 2_000, features=300)
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm", "--block-size", "1", "--no-shuffle")
    assert BlockStore(tmp_path / "s.bsvm").n_blocks == 2_000
    X, y = rows_as_stored(text, 300)
    result = train(tmp_path / "s.bsvm", loss="hinge", tol=1e-6, max_outer=100, verbose=0, **SWEEPS_A_VISIT)
    assert_liblinear_optimum(result, X, y, "hinge", 1.0)


@pytest.mark.parametrize(
    "working_set", ["cache", *(pytest.param(ws, marks=pytest.mark.slow) for ws in ("pair", "block"))]
)
def test_blocks_holding_one_class_each(tmp_path, working_set):
    """A file sorted by label, converted without shuffling into small blocks: every block holds one
    class, and block minimization still reaches LIBLINEAR's optimum (in 12 passes with the cache
    of support vectors, 185 with pairs of blocks, 655 with blocks alone: the last two in the slow step)."""
    lines = generated(tmp_path, 900).read_text().splitlines(keepends=True)
    by_label = {label: [line for line in lines if float(line.split()[0]) == label] for label in (-1, 1)}
    lines = by_label[-1][:300] + by_label[1][:300]  # 6 blocks of each class
    store, X, y = store_of(tmp_path, "".join(lines), name="sorted", block_rows=50, shuffle=False)
    blocks = [BlockStore(store).read_block(b).labels for b in range(BlockStore(store).n_blocks)]
    assert len(blocks) == 12 and all(len(np.unique(labels)) == 1 for labels in blocks)
    result = train(store, loss="hinge", working_set=working_set, tol=1e-6, max_outer=1000, verbose=0)
    assert_liblinear_optimum(result, X, y, "hinge", 1.0)


# ---- a block file deleted or cut while training runs -------------------------------------------


@pytest.fixture
def checkpointed(tmp_path):
    """A store of 6 blocks and the model of 3 uninterrupted passes over it, none kept in memory (every pass reads
    every block)."""
    store = tmp_path / "s.bsvm"
    convert(generated(tmp_path, 1200), store, block_rows=200, progress=False)
    uninterrupted = train(store, max_outer=3, tol=0, verbose=0, memory_mb=read_every_pass(store)).model
    return store, uninterrupted


def read_every_pass(store) -> float:
    """The --memory-mb of a run that keeps no block of ``store``: every pass reads every block."""
    return memory_for(store, 0.001)


def break_block_on_read(monkeypatch, tmp_path: Path, nth: int, damage) -> list[Path]:
    """Make the ``nth`` block read of the run find its file damaged by ``damage(file)`` (a copy of
    the good file is kept); returns the list that receives the damaged file's path."""
    real = BlockStore.read_block
    reads, damaged = [], []

    def read_block(store, b):
        reads.append(b)
        if len(reads) == nth:
            file = store.path / store.blocks[b]["file"]
            shutil.copy(file, tmp_path / "kept.h5")
            damage(file)
            damaged.append(file)
        return real(store, b)

    monkeypatch.setattr(BlockStore, "read_block", read_block)
    return damaged


@pytest.mark.parametrize("prefetch", ["0", "1"])
@pytest.mark.parametrize("how", ["deleted", "truncated"])
def test_a_block_lost_while_training_names_it_and_the_checkpoint_resumes(
    tmp_path, monkeypatch, capsys, checkpointed, how, prefetch
):
    store, uninterrupted = checkpointed
    damage = {"deleted": os.unlink, "truncated": lambda file: os.truncate(file, 1000)}[how]
    damaged = break_block_on_read(monkeypatch, tmp_path, 9, damage)  # block 3 of the second pass
    ck = tmp_path / "ck.h5"
    message = cli_error(
        capsys,
        "train",
        store,
        tmp_path / "m.h5",
        "--max-outer",
        "3",
        "--tol",
        "0",
        "--checkpoint",
        ck,
        "--checkpoint-every",
        "1",
        "--prefetch",
        prefetch,
        "--memory-mb",
        read_every_pass(store),
    )
    [file] = damaged
    block = int(file.stem.split("-")[1])
    expected = {"deleted": "is missing", "truncated": "has 1000 bytes, the manifest says"}[how]
    assert message.startswith(f"{store}: block {block} ({file.name}) {expected}"), message
    assert message.endswith("restore the store from a copy (its checkpoints stay valid) or convert again")
    assert not (tmp_path / "m.h5").exists()
    saved = read_checkpoint(ck)  # intact: the state after the last block solved
    assert (saved.state["outer"], saved.state["position"]) == (2, 2)
    monkeypatch.undo()
    assert "block" in cli_error(capsys, "train", store, tmp_path / "m.h5", "--resume", ck)  # still broken (its budget:
    # the checkpoint's)
    shutil.copy(tmp_path / "kept.h5", file)  # the user restores the file
    cli_ok(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "3", "--tol", "0", "--resume", ck,
           "--memory-mb", read_every_pass(store))  # fmt: skip
    resumed = LinearModel.load(tmp_path / "m.h5")
    np.testing.assert_array_equal(resumed.coef, uninterrupted.coef)
    np.testing.assert_array_equal(resumed.intercept, uninterrupted.intercept)


def test_a_block_deleted_between_two_runs_is_named_when_the_store_opens(tmp_path, capsys, checkpointed):
    store, uninterrupted = checkpointed
    ck = tmp_path / "ck.h5"
    train(store, max_outer=1, tol=0, verbose=0, checkpoint=ck, memory_mb=read_every_pass(store))  # (the budget of
    # `checkpointed`'s run: the same model; a resume keeps it)
    shutil.move(store / "block-00004.h5", tmp_path / "kept.h5")
    message = cli_error(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "3", "--tol", "0", "--resume", ck)
    assert message == (
        f"{store}: block 4 (block-00004.h5) is missing: restore the store from a copy (its "
        "checkpoints stay valid) or convert again"
    )
    shutil.move(tmp_path / "kept.h5", store / "block-00004.h5")
    with pytest.raises(StoreError, match="block 4"):  # the Python API says the same
        shutil.move(store / "block-00004.h5", tmp_path / "kept.h5")
        train(store, max_outer=3, tol=0, verbose=0, resume=ck)
    shutil.move(tmp_path / "kept.h5", store / "block-00004.h5")
    resumed = train(store, max_outer=3, tol=0, verbose=0, resume=ck).model
    np.testing.assert_array_equal(resumed.coef, uninterrupted.coef)


# ---- a full disk, a read-only folder: nothing half-written may look complete --------------------


def patch_open(monkeypatch, module: str, fake) -> None:
    monkeypatch.setattr(sys.modules[module], "open", fake, raising=False)


@pytest.fixture
def text(tmp_path) -> Path:
    return generated(tmp_path, 600)


@pytest.mark.parametrize(
    "where, module, refuse",
    [
        ("spill file", "blocksvm.io.spill", None),
        ("block files", "blocksvm._hdf5", None),
        ("manifest", "blocksvm.store.writer", None),
        ("block files", "blocksvm._hdf5", errno.EACCES),  # the folder turned read-only after it was made
        ("block files", "blocksvm._hdf5", errno.EROFS),
    ],
)
def test_a_store_that_cannot_be_written_leaves_nothing(tmp_path, monkeypatch, capsys, text, where, module, refuse):
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm", "--block-size", "100")
    before = BlockStore(tmp_path / "s.bsvm").store_id
    patch_open(monkeypatch, module, failing_open(refuse=refuse))
    for output, extra in ((tmp_path / "new.bsvm", []), (tmp_path / "s.bsvm", ["--overwrite"])):
        message = cli_error(capsys, "convert", text, output, "--block-size", "100", *extra)
        if refuse is None:
            assert message == f"no space left on the device while writing {output}; nothing was written"
        else:
            assert message == f"cannot create {output}: {os.strerror(refuse)}"
    monkeypatch.undo()
    assert files_in(tmp_path) == ["gen.txt", "s.bsvm"]  # no new store, no .partial folder
    kept = BlockStore(tmp_path / "s.bsvm")  # the store --overwrite would have replaced is intact
    assert kept.store_id == before and kept.verify() == []


@pytest.mark.parametrize("refuse", [None, errno.EROFS])
def test_a_model_that_cannot_be_written_leaves_the_old_one(tmp_path, monkeypatch, capsys, text, refuse):
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm")
    cli_ok(capsys, "train", tmp_path / "s.bsvm", tmp_path / "m.h5", "--max-outer", "1")
    old = (tmp_path / "m.h5").read_bytes()
    patch_open(monkeypatch, "blocksvm._hdf5", failing_open(refuse=refuse))
    message = cli_error(capsys, "train", tmp_path / "s.bsvm", tmp_path / "m.h5", "--max-outer", "2")
    reason = os.strerror(refuse or errno.ENOSPC)
    assert message == f"cannot write the model {tmp_path / 'm.h5'}: {reason}"
    assert (tmp_path / "m.h5").read_bytes() == old and not (tmp_path / "m.h5.partial").exists()


def test_a_model_folder_that_is_read_only_is_refused_before_training(tmp_path, monkeypatch, capsys, text):
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm")
    (tmp_path / "ro").mkdir()
    real = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode, **kw: False if Path(path).name == "ro" and mode & os.W_OK else real(path, mode, **kw),
    )
    for what, argv in (("the model", ["--max-outer", "1"]), ("the checkpoint", ["--checkpoint", tmp_path / "ro/ck"])):
        model = tmp_path / "ro" / "m.h5" if what == "the model" else tmp_path / "m.h5"
        message = cli_error(capsys, "train", tmp_path / "s.bsvm", model, *argv)
        assert message.startswith(f"cannot write {what} {tmp_path / 'ro'}/") and "is not writable" in message
    assert files_in(tmp_path / "ro") == [] and not (tmp_path / "m.h5.history.jsonl").exists()


def test_a_checkpoint_that_cannot_be_written_leaves_the_previous_one(tmp_path, monkeypatch, capsys, text):
    """The disk fills while the second checkpoint is written: the first stays, whole and resumable."""
    store, ck = tmp_path / "s.bsvm", tmp_path / "ck.h5"
    cli_ok(capsys, "convert", text, store, "--block-size", "100")
    uninterrupted = train(store, max_outer=3, tol=0, verbose=0).model
    written = []

    def second_fails(path: Path) -> bool:
        written.append(path)
        return path.name == "ck.h5.tmp" and written.count(path) >= 2

    patch_open(monkeypatch, "blocksvm._hdf5", failing_open(second_fails))
    message = cli_error(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "3", "--tol", "0", "--checkpoint", ck)
    assert message == (
        f"cannot write the checkpoint {ck}: No space left on device (the one written before is "
        "intact: free space, then --resume it)"
    )
    monkeypatch.undo()
    assert files_in(tmp_path) == ["ck.h5", "gen.txt", "m.h5.history.jsonl", "s.bsvm"]
    assert read_checkpoint(ck).state["outer"] == 2  # the end of the first pass
    cli_ok(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "3", "--tol", "0", "--resume", ck)
    np.testing.assert_array_equal(LinearModel.load(tmp_path / "m.h5").coef, uninterrupted.coef)


def test_a_searchs_checkpoint_that_cannot_be_written_leaves_the_previous_one(tmp_path, monkeypatch, capsys, text):
    """As for train (above): the disk fills in the second checkpoint write of a search; the first stays whole, and
    resumed the search makes the table of an uninterrupted one."""
    store, ck = tmp_path / "s.bsvm", tmp_path / "ck.h5"
    cli_ok(capsys, "convert", text, store, "--block-size", "100")
    search = ["tune", store, "--C-grid", "0.5,1", "--folds", "2", "--json"]
    assert main([str(a) for a in search]) == 0
    uninterrupted = json.loads(capsys.readouterr().out)
    patch_open(monkeypatch, "blocksvm._hdf5", failing_open(_second_checkpoint_write()))
    message = cli_error(capsys, *search, "--checkpoint", ck)
    assert message == (
        f"cannot write the checkpoint {ck}: No space left on device (the one written before is "
        "intact: free space, then --resume it)"
    )
    monkeypatch.undo()
    assert read_checkpoint(ck).state["points"] == [] and not (tmp_path / "ck.h5.tmp").exists()
    assert main([str(a) for a in search] + ["--resume", str(ck)]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert _without(resumed, ("seconds",)) == _without(uninterrupted, ("seconds",))


def test_a_streams_checkpoint_that_cannot_be_written_leaves_the_previous_one(tmp_path, monkeypatch, text):
    from blocksvm.errors import CheckpointError
    from blocksvm.stream import stream

    ck, run = tmp_path / "ck.h5", {"solver": "perceptron", "verbose": 0, "chunk_bytes": 1 << 12}
    uninterrupted = stream(text, **run).model
    patch_open(monkeypatch, "blocksvm._hdf5", failing_open(_second_checkpoint_write()))
    with pytest.raises(CheckpointError, match="No space left on device .the one written before is intact"):
        stream(text, checkpoint=ck, checkpoint_every=1, **run)
    monkeypatch.undo()
    assert read_checkpoint(ck).state["position"] > 0 and not (tmp_path / "ck.h5.tmp").exists()
    np.testing.assert_array_equal(stream(text, resume=ck, **run).model.coef, uninterrupted.coef)


def _second_checkpoint_write():
    written = []

    def second_fails(path: Path) -> bool:
        written.append(path)
        return path.name == "ck.h5.tmp" and written.count(path) >= 2

    return second_fails


def _without(figures, keys):
    """``figures`` (JSON) without the keys that measure time."""
    if isinstance(figures, dict):
        return {k: _without(v, keys) for k, v in figures.items() if k not in keys}
    if isinstance(figures, list):
        return [_without(v, keys) for v in figures]
    return figures


def test_an_export_that_cannot_be_written_leaves_the_old_one(tmp_path, monkeypatch, capsys, text):
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm")
    cli_ok(capsys, "train", tmp_path / "s.bsvm", tmp_path / "m.h5", "--max-outer", "1")
    cli_ok(capsys, "export", tmp_path / "m.h5", tmp_path / "m.txt")
    old = (tmp_path / "m.txt").read_bytes()
    cli_ok(capsys, "train", tmp_path / "s.bsvm", tmp_path / "m.h5", "--max-outer", "2")
    patch_open(monkeypatch, "blocksvm.liblinear_format", failing_open())
    message = cli_error(capsys, "export", tmp_path / "m.h5", tmp_path / "m.txt")
    assert message == f"cannot write the LIBLINEAR model {tmp_path / 'm.txt'}: No space left on device"
    assert (tmp_path / "m.txt").read_bytes() == old and not (tmp_path / "m.txt.partial").exists()


@pytest.mark.parametrize("refuse", [None, errno.EROFS, errno.EACCES])
def test_predictions_that_cannot_be_written_leave_the_old_file(tmp_path, monkeypatch, capsys, text, refuse):
    cli_ok(capsys, "convert", text, tmp_path / "s.bsvm")
    cli_ok(capsys, "train", tmp_path / "s.bsvm", tmp_path / "m.h5", "--max-outer", "1")
    cli_ok(capsys, "predict", tmp_path / "m.h5", text, "-o", tmp_path / "p.txt")
    old = (tmp_path / "p.txt").read_text()
    assert len(old.splitlines()) == 600
    patch_open(monkeypatch, "blocksvm.predict", failing_open(refuse=refuse))
    for data in (text, tmp_path / "s.bsvm"):
        message = cli_error(capsys, "predict", tmp_path / "m.h5", data, "-o", tmp_path / "p.txt")
        assert message == f"cannot write predictions to {tmp_path / 'p.txt'}: {os.strerror(refuse or errno.ENOSPC)}"
        assert (tmp_path / "p.txt").read_text() == old and not (tmp_path / "p.txt.partial").exists()
