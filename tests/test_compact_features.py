"""A sparse feature space held compactly (issue 24): memory proportional to the features the data uses.

A store whose largest index is 2,147,483,647 but whose rows use a few features keeps a feature map;
training, checkpoints, warm starts and models work in the compact space, and ``predict`` maps text
and stores through the model's map. Memory is checked by the sizes of what is allocated (the model's
arrays, the checkpointed solver state), never by timing or RSS (tools/bench_train_memory.py --largest
measures peak RSS).

Oracles: the same data with its indices compacted by hand (1..K), trained by blocksvm on a dense store
(the same rows in the same blocks: the same arithmetic, so equal weights) and by LIBLINEAR; scikit-learn's
``load_svmlight_file`` for what a store holds.
"""

from __future__ import annotations

import json
import os
import signal
import warnings

import h5py
import numpy as np
import pytest
from conftest import store_rows
from oracle import liblinear_fit
from sklearn.datasets import load_svmlight_file

from blocksvm.checkpoint import read_checkpoint
from blocksvm.cli import main
from blocksvm.errors import ModelError, StoreError
from blocksvm.features import DENSE_WIDTH, MARK_LIMIT, FeatureSet, compact_learner, compact_space, positions
from blocksvm.io import convert
from blocksvm.liblinear_format import read_liblinear_model, write_liblinear_model
from blocksvm.model import LinearModel
from blocksvm.predict import FeatureSpaceWarning, predict
from blocksvm.store import BlockStore
from blocksvm.store.format import DENSE_VERSION, FORMAT_VERSION, MANIFEST, MAPPED_VERSION
from blocksvm.stream import stream
from blocksvm.train import train

LARGEST = 2**31 - 1
K = 30  # features the generated data uses
# where the K features sit in the wide space: spread up to the largest index (one-based, sorted)
SPREAD = np.array([1 + j * 71_582_788 for j in range(K - 1)] + [LARGEST])


def _rows(n: int = 400, seed: int = 0) -> tuple[list[dict], np.ndarray]:
    """``n`` rows over features 0..K-1 (about a third of them set) and ±1 labels from a hidden separator."""
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(K)
    rows, labels = [], []
    for _ in range(n):
        used = np.flatnonzero(rng.random(K) < 0.3)
        values = np.round(rng.standard_normal(len(used)), 3)
        rows.append(dict(zip(used.tolist(), values.tolist())))
        margin = sum(w_true[j] * v for j, v in rows[-1].items()) + 0.3 * rng.standard_normal()
        labels.append(1 if margin > 0 else -1)
    return rows, np.array(labels)


def _write(path, rows, labels, index_of) -> None:
    lines = [f"{y} " + " ".join(f"{index_of[j]}:{v}" for j, v in sorted(r.items())) for r, y in zip(rows, labels)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The same rows twice: in the wide space (``SPREAD``) and compacted by hand (indices 1..K); stores of both."""
    folder = tmp_path_factory.mktemp("compact")
    rows, labels = _rows()
    _write(folder / "wide.txt", rows, labels, SPREAD)
    _write(folder / "dense.txt", rows, labels, np.arange(1, K + 1))
    for name in ("wide", "dense"):
        convert(folder / f"{name}.txt", folder / f"{name}.bsvm", block_rows=150, progress=False)
    return folder


def test_the_rule_compacts_only_wide_and_sparse_spaces():
    assert not compact_space(3, DENSE_WIDTH)  # narrow: dense whatever the use
    assert compact_space(3, DENSE_WIDTH + 1)
    assert compact_space(500, 1000 + DENSE_WIDTH) and not compact_space(40_000, 70_000)  # half used: dense


@pytest.mark.parametrize("largest", [1000, MARK_LIMIT + 5, LARGEST], ids=["marks", "beyond-marks", "2**31-1"])
def test_feature_set_equals_numpy_unique(largest):
    rng = np.random.default_rng(1)
    chunks = [rng.integers(0, largest, 5000).astype(np.int32) for _ in range(4)] + [np.array([largest], np.int32)]
    found = FeatureSet()
    for chunk in chunks:
        found.add(chunk, int(chunk.max()))
    np.testing.assert_array_equal(found.sorted(), np.unique(np.concatenate(chunks)))


def test_positions_name_absent_features():
    feature_map = np.array([3, 10, LARGEST - 1])
    got = positions(feature_map, np.array([10, 4, LARGEST - 1, 0, LARGEST]), absent=99)
    np.testing.assert_array_equal(got, [1, 99, 2, 99, 99])


def test_three_nonzeros_at_index_2147483647_make_a_three_feature_store(tmp_path):
    source = tmp_path / "three.txt"
    source.write_text(f"1 1:0.5 {LARGEST}:2\n-1 3:1\n")
    summary = convert(source, tmp_path / "three.bsvm", progress=False)
    assert summary.features_used == 3 and "2,147,483,647 features (3 used, stored compactly)" in str(summary)
    store = BlockStore(tmp_path / "three.bsvm")
    assert (store.n_features, store.space_features, store.manifest["version"]) == (3, LARGEST, MAPPED_VERSION)
    np.testing.assert_array_equal(store.feature_map, [0, 2, LARGEST - 1])
    X, y, _ = store_rows(tmp_path / "three.bsvm")  # through the map: the source's rows
    X_ref, y_ref = load_svmlight_file(str(source), n_features=LARGEST, dtype=np.float32)
    assert (X != X_ref).nnz == 0 and np.array_equal(y, y_ref)
    assert store.verify() == []


@pytest.mark.parametrize("solver", ["dual-cd", "pegasos"])
def test_training_state_and_model_are_sized_by_the_used_features(tmp_path, solver):
    source = tmp_path / "three.txt"
    source.write_text(f"1 1:0.5 {LARGEST}:2\n-1 3:1\n")
    convert(source, tmp_path / "s.bsvm", progress=False)
    checkpoint = tmp_path / "run.ckpt"
    result = train(tmp_path / "s.bsvm", verbose=0, solver=solver, max_outer=3, checkpoint=checkpoint)
    model = result.model
    assert model.coef.shape == (1, 3) and model.space_features == LARGEST
    np.testing.assert_array_equal(model.feature_map, [0, 2, LARGEST - 1])
    arrays = read_checkpoint(checkpoint).arrays  # every state array the solver holds
    assert max(a.size for a in arrays.values()) <= 8  # (n_problems, features + 1) or per row: a handful


@pytest.mark.parametrize("solver", ["dual-cd", "pegasos"])
def test_the_wide_store_trains_the_model_of_the_compacted_data(pair, solver):
    wide = train(pair / "wide.bsvm", verbose=0, solver=solver, max_outer=20, seed=3).model
    dense = train(pair / "dense.bsvm", verbose=0, solver=solver, max_outer=20, seed=3).model
    np.testing.assert_array_equal(wide.feature_map, SPREAD - 1)
    np.testing.assert_allclose(wide.coef, dense.coef, rtol=0, atol=1e-12)  # the same rows, blocks and arithmetic
    np.testing.assert_allclose(wide.intercept, dense.intercept, rtol=0, atol=1e-12)


def test_dual_cd_reaches_liblinears_optimum_on_the_compacted_data(pair):
    # (the gap bounds the weights' distance by its square root: 1e-6 let one weight sit 3.6e-4 off)
    model = train(pair / "wide.bsvm", verbose=0, tol=1e-8, max_outer=1000).model
    X, y = load_svmlight_file(str(pair / "dense.txt"), n_features=K)
    coef, intercept = liblinear_fit(X, y, "squared-hinge", C=1.0, bias=1.0, eps=1e-8)
    np.testing.assert_allclose(model.coef[0], coef, atol=2e-4)
    assert model.intercept[0] == pytest.approx(intercept, abs=2e-4)


def test_predictions_equal_the_dense_models_on_text_and_stores(pair, tmp_path):
    wide = train(pair / "wide.bsvm", verbose=0, max_outer=20).model
    dense = train(pair / "dense.bsvm", verbose=0, max_outer=20).model
    for wide_data, dense_data in [("wide.txt", "dense.txt"), ("wide.bsvm", "dense.bsvm")]:
        predict(wide, pair / wide_data, tmp_path / "wide.out", decision_values=True)
        predict(dense, pair / dense_data, tmp_path / "dense.out", decision_values=True)
        ours = np.loadtxt(tmp_path / "wide.out")
        np.testing.assert_allclose(ours, np.loadtxt(tmp_path / "dense.out"), rtol=0, atol=1e-7)


def test_the_map_round_trips_through_hdf5(pair, tmp_path):
    model = train(pair / "wide.bsvm", verbose=0, max_outer=5).model
    model.save(tmp_path / "m.h5")
    with h5py.File(tmp_path / "m.h5") as f:
        assert f.attrs["version"] == 2 and f["feature_map"].shape == (K,) and f["coef"].shape == (1, K)
    loaded = LinearModel.load(tmp_path / "m.h5")
    np.testing.assert_array_equal(loaded.feature_map, model.feature_map)
    np.testing.assert_array_equal(loaded.coef, model.coef)
    assert loaded.space_features == LARGEST


def test_predict_ignores_indices_outside_the_map_and_counts_them(pair, tmp_path):
    model = train(pair / "wide.bsvm", verbose=0, max_outer=5).model
    j, w = int(SPREAD[4]), model.coef[0, 4]
    test = tmp_path / "unseen.txt"  # 7 and 2147483000 are not in the map; 7 twice
    test.write_text(f"1 7:1 {j}:2\n-1 {j}:-1 2147483000:5\n1 7:3\n")
    with pytest.warns(FeatureSpaceWarning) as caught:
        summary = predict(model, test, tmp_path / "out", decision_values=True)
    assert (summary.outside_indices, summary.outside_nonzeros) == (2, 3)
    message = str(next(w.message for w in caught if w.category is FeatureSpaceWarning))
    assert f"which uses {K} of the indices 1 to {LARGEST}" in message
    values = np.loadtxt(tmp_path / "out")[:, 1]
    np.testing.assert_allclose(
        values, model.intercept[0] + np.array([2 * w, -w, 0.0]), rtol=1e-7
    )  # written with 8 digits
    with pytest.raises(ModelError, match=r"unseen.txt:1: feature index 7 is outside"):
        predict(model, test, strict=True)


def test_a_store_with_another_map_predicts_through_both_maps(pair, tmp_path):
    model = train(pair / "dense.bsvm", verbose=0, max_outer=5).model  # dense: features 1..K
    other = tmp_path / "other.txt"  # a compact store: indices 2 and K+1 and 2147483647, two outside the model
    other.write_text(f"1 2:1.5 {K + 1}:1 {LARGEST}:2\n-1 2:-1\n")
    convert(other, tmp_path / "other.bsvm", progress=False)
    assert BlockStore(tmp_path / "other.bsvm").feature_map is not None
    with pytest.warns(FeatureSpaceWarning):
        predict(model, tmp_path / "other.bsvm", tmp_path / "out", decision_values=True)
    expected = model.intercept[0] + model.coef[0, 1] * np.array([1.5, -1.0])
    np.testing.assert_allclose(np.loadtxt(tmp_path / "out")[:, 1], expected, rtol=1e-7)


def test_warm_start_and_validation_cross_spaces(pair, tmp_path):
    continued = {}
    for name in ("wide", "dense"):  # the same warm start in both spaces: the same weights
        train(pair / f"{name}.bsvm", verbose=0, solver="arow", max_outer=2).model.save(tmp_path / f"{name}.h5")
        again = train(pair / f"{name}.bsvm", verbose=0, solver="arow", max_outer=3, warm_start=tmp_path / f"{name}.h5")
        continued[name] = again.model
    np.testing.assert_allclose(continued["wide"].coef, continued["dense"].coef, rtol=0, atol=1e-12)
    with pytest.raises(ModelError, match=f"has {K - 1} features that .*dense.bsvm does not use"):
        train(pair / "dense.bsvm", verbose=0, solver="arow", max_outer=1, warm_start=tmp_path / "wide.h5")
    lines = (pair / "wide.txt").read_text().splitlines()[:60] + ["1 12345:1"]  # one feature outside the map
    (tmp_path / "valid.txt").write_text("\n".join(lines) + "\n")
    convert(tmp_path / "valid.txt", tmp_path / "valid.bsvm", block_rows=25, progress=False)
    assert len(BlockStore(tmp_path / "valid.bsvm").feature_map) == K + 1  # another map than the training store's
    result = train(pair / "wide.bsvm", verbose=0, max_outer=3, validation=tmp_path / "valid.bsvm")
    with pytest.warns(FeatureSpaceWarning):
        accuracy = predict(result.model, tmp_path / "valid.bsvm").accuracy
    assert result.history[-1]["validation_accuracy"] == accuracy


def test_liblinear_export_is_dense_and_refused_when_too_large(tmp_path, capsys):
    source = tmp_path / "mid.txt"  # a space of 200,000 features, 3 used: compact
    source.write_text("1 5:1 150000:2\n-1 5:-0.5 200000:1\n1 5:2\n")
    convert(source, tmp_path / "mid.bsvm", progress=False)
    model = train(tmp_path / "mid.bsvm", verbose=0, max_outer=5).model
    assert model.n_features == 3
    write_liblinear_model(model, tmp_path / "mid.liblinear")
    exported = LinearModel(**read_liblinear_model(tmp_path / "mid.liblinear"))
    assert exported.n_features == 200_000
    np.testing.assert_array_equal(np.flatnonzero(exported.coef[0]), [4, 149_999, 199_999])
    np.testing.assert_allclose(exported.coef[0, [4, 149_999, 199_999]], model.coef[0], rtol=1e-15)
    model.save(tmp_path / "mid.h5")
    assert main(["export", str(tmp_path / "mid.h5"), str(tmp_path / "cli.liblinear")]) == 0
    size = (tmp_path / "cli.liblinear").stat().st_size / 1e6
    assert capsys.readouterr().out == (
        f"wrote {tmp_path / 'cli.liblinear'} (LIBLINEAR model format, {size:,.1f} MB, dense: 3 features used of "
        "200,000)\n"
    )
    wide = LinearModel(
        model.coef, model.intercept, model.classes, model.bias, feature_map=np.array([0, 1, LARGEST - 1])
    )
    wide.space_features = LARGEST
    with pytest.raises(ModelError, match=r"^the LIBLINEAR model would take about 6\.4 GB \(2,147,483,647 features"):
        write_liblinear_model(wide, tmp_path / "wide.liblinear")
    assert not (tmp_path / "wide.liblinear").exists()


def test_a_dense_store_stays_format_version_1_and_newer_versions_are_refused(pair, tmp_path):
    store = BlockStore(pair / "dense.bsvm")
    assert store.manifest["version"] == DENSE_VERSION and store.feature_map is None
    with h5py.File(pair / "dense.bsvm" / store.blocks[0]["file"]) as f:
        assert f.attrs["version"] == DENSE_VERSION  # what blocksvm wrote before feature maps: older versions read it
    manifest = json.loads((pair / "wide.bsvm" / MANIFEST).read_text())
    manifest["version"] = FORMAT_VERSION + 1
    copy = tmp_path / "newer.bsvm"
    copy.mkdir()
    for file in (pair / "wide.bsvm").iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    (copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=f"version {FORMAT_VERSION + 1}.*upgrade blocksvm"):
        BlockStore(copy)


def test_a_damaged_feature_map_is_one_line(pair, tmp_path):
    copy = tmp_path / "cut.bsvm"
    copy.mkdir()
    for file in (pair / "wide.bsvm").iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    data = (copy / "features.h5").read_bytes()
    (copy / "features.h5").write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreError) as caught:
        BlockStore(copy)
    assert str(caught.value) == (
        f"{copy}: the feature map (features.h5) is damaged (it has {len(data) // 2} bytes, the manifest says "
        f"{len(data)}): convert the store again"
    )


def test_cli_info_and_train_on_the_wide_store(pair, tmp_path, capsys):
    assert main(["info", str(pair / "wide.bsvm")]) == 0
    out = capsys.readouterr().out
    assert f"used         {K} of them, stored compactly with a feature map" in out
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["train", str(pair / "wide.bsvm"), str(tmp_path / "m.h5"), "-q"]) == 0
        assert main(["predict", str(tmp_path / "m.h5"), str(pair / "wide.txt"), "-q"]) == 0


def test_blocksvc_on_a_wide_store_keeps_sparse_weights_as_wide_as_the_space(pair):
    from blocksvm import BlockSVC

    fitted = BlockSVC(max_outer=20).fit(str(pair / "wide.bsvm"))
    assert fitted.n_features_in_ == LARGEST and fitted.coef_.shape == (1, LARGEST) and fitted.coef_.nnz <= K
    X, y = load_svmlight_file(str(pair / "wide.txt"), n_features=LARGEST)
    np.testing.assert_allclose(fitted.decision_function(X), fitted.model_.decision_function(X), rtol=1e-12)
    assert fitted.score(X, y) == fitted.score(str(pair / "wide.bsvm"))


# ---- the stream: a learner that grows with the features it meets ----------------------------------------


@pytest.mark.parametrize("solver", ["perceptron", "ftrl", "arow"])
def test_a_stream_grows_slots_not_the_largest_index(pair, solver):
    wide = stream(pair / "wide.txt", solver=solver, verbose=0, chunk_bytes=2048).model
    dense = stream(pair / "dense.txt", solver=solver, verbose=0, chunk_bytes=2048).model
    assert wide.coef.shape == (1, K) and wide.space_features == LARGEST
    np.testing.assert_array_equal(wide.feature_map, SPREAD - 1)
    np.testing.assert_allclose(wide.coef, dense.coef, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(wide.intercept, dense.intercept, rtol=1e-10, atol=1e-12)


def test_a_dense_stream_switches_to_slots_when_a_far_index_comes(pair, tmp_path):
    rows = (pair / "dense.txt").read_text().splitlines()
    near = [" ".join(t for t in line.split() if not t.startswith(f"{K}:")) for line in rows[:50]] + rows[50:]
    far = [line.replace(f" {K}:", f" {LARGEST}:") for line in near]  # feature K at the largest index, from row 51
    (tmp_path / "near.txt").write_text("\n".join(near) + "\n")
    (tmp_path / "far.txt").write_text("\n".join(far) + "\n")
    wide = stream(tmp_path / "far.txt", solver="perceptron", verbose=0, chunk_bytes=1024).model
    dense = stream(tmp_path / "near.txt", solver="perceptron", verbose=0, chunk_bytes=1024).model
    np.testing.assert_array_equal(wide.feature_map, [*range(K - 1), LARGEST - 1])  # 0..K-2 from the dense part
    np.testing.assert_allclose(wide.coef, dense.coef, rtol=1e-12)


def test_a_stream_in_slots_resumes_to_the_uninterrupted_model(pair, tmp_path):
    whole = stream(pair / "wide.txt", solver="perceptron", verbose=0, chunk_bytes=1024).model

    def stop_half_way(line):  # deterministic: a SIGTERM when the table reaches 128 examples
        if line.split()[2:3] == ["128"]:
            os.kill(os.getpid(), signal.SIGTERM)

    options = dict(solver="perceptron", chunk_bytes=1024, checkpoint=tmp_path / "ck.h5", checkpoint_every=1)
    cut = stream(pair / "wide.txt", say=stop_half_way, **options)
    assert cut.stopped_by == "SIGTERM" and cut.summary["examples"] < 400
    resumed = stream(pair / "wide.txt", verbose=0, chunk_bytes=1024, solver="perceptron", resume=tmp_path / "ck.h5")
    np.testing.assert_array_equal(resumed.model.feature_map, whole.feature_map)
    np.testing.assert_array_equal(resumed.model.coef, whole.coef)


def test_a_stream_warm_starts_from_a_compact_model(pair, tmp_path):
    first = stream(pair / "wide.txt", solver="perceptron", verbose=0).model
    first.save(tmp_path / "first.h5")
    again = stream(pair / "wide.txt", solver="perceptron", verbose=0, warm_start=tmp_path / "first.h5").model
    dense_first = stream(pair / "dense.txt", solver="perceptron", verbose=0).model
    dense_first.save(tmp_path / "dense.h5")
    dense_again = stream(pair / "dense.txt", solver="perceptron", verbose=0, warm_start=tmp_path / "dense.h5").model
    np.testing.assert_array_equal(again.feature_map, SPREAD - 1)
    np.testing.assert_allclose(again.coef, dense_again.coef, rtol=1e-12)


def test_blocksvc_fit_on_a_wide_matrix_trains_compactly(pair):
    from blocksvm import BlockSVC

    X, y = load_svmlight_file(str(pair / "wide.txt"), n_features=LARGEST)
    X_dense, _ = load_svmlight_file(str(pair / "dense.txt"), n_features=K)
    # (one solver for both: "auto" would choose by the width, dual CD for 2^31 columns and Newton for K)
    wide = BlockSVC(solver="dual-cd", max_outer=20, random_state=0).fit(X, y)
    dense = BlockSVC(solver="dual-cd", max_outer=20, random_state=0).fit(X_dense, y)
    assert wide.model_.n_features == K and wide.coef_.shape == (1, LARGEST)
    np.testing.assert_array_equal(wide.coef_.indices, SPREAD - 1)  # (column indexing would scan 2**31 columns)
    np.testing.assert_allclose(wide.coef_.data, dense.coef_[0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(wide.predict(X), dense.predict(X_dense))


def test_online_classifier_on_a_wide_matrix_keeps_the_features_met(pair):
    from blocksvm import OnlineClassifier

    X, y = load_svmlight_file(str(pair / "wide.txt"), n_features=LARGEST)
    X_dense, _ = load_svmlight_file(str(pair / "dense.txt"), n_features=K)
    wide = OnlineClassifier(solver="perceptron", order="file", max_iter=3).fit(X, y)
    dense = OnlineClassifier(solver="perceptron", order="file", max_iter=3).fit(X_dense, y)
    assert wide.coef_.shape == (1, LARGEST) and wide.coef_.nnz <= K
    np.testing.assert_array_equal(wide.coef_.indices, SPREAD - 1)
    np.testing.assert_allclose(wide.coef_.data, dense.coef_[0], rtol=1e-12)
    np.testing.assert_allclose(wide.decision_function(X), dense.decision_function(X_dense), rtol=1e-12)


def test_blocksvr_on_a_wide_matrix_predicts_as_on_the_compacted_one(pair):
    from blocksvm import BlockSVR

    X, y = load_svmlight_file(str(pair / "wide.txt"), n_features=LARGEST)
    X_dense, _ = load_svmlight_file(str(pair / "dense.txt"), n_features=K)
    targets = np.asarray(X_dense @ np.linspace(-1, 1, K)).ravel()
    wide = BlockSVR(max_outer=20, random_state=0).fit(X, targets)
    dense = BlockSVR(max_outer=20, random_state=0).fit(X_dense, targets)
    assert wide.coef_.shape == (LARGEST, 1)  # a sparse matrix is 2-D: a column
    np.testing.assert_allclose(wide.predict(X), dense.predict(X_dense), rtol=0, atol=1e-12)


def test_a_stream_of_three_classes_grows_slots_and_problems_together(pair, tmp_path):
    rows, labels = _rows(300, seed=4)
    classes = np.where(labels > 0, 2, 1)
    classes[150:][::3] = 3  # a third class comes half way: the problems grow while the slots do
    _write(tmp_path / "wide.txt", rows, classes, SPREAD)
    _write(tmp_path / "dense.txt", rows, classes, np.arange(1, K + 1))
    wide = stream(tmp_path / "wide.txt", solver="pa1", verbose=0, chunk_bytes=1024).model
    dense = stream(tmp_path / "dense.txt", solver="pa1", verbose=0, chunk_bytes=1024).model
    assert wide.coef.shape == dense.coef.shape == (3, K)
    np.testing.assert_allclose(wide.coef, dense.coef, rtol=1e-12, atol=1e-15)


def test_a_stream_of_a_million_columns_stays_dense(tmp_path):
    """Slots cost a lookup of every nonzero of every row: a learner stays dense up to LEARNER_DENSE_WIDTH columns
    (a stream over 1,000,000 columns of which a few are used switched to slots, and ran 10x slower)."""
    lines = [f"{1 if i % 2 else -1} {1 + i % 7}:1 {999_990 + i % 10}:0.5" for i in range(200)]
    (tmp_path / "wide.svm").write_text("\n".join(lines) + "\n")
    model = stream(tmp_path / "wide.svm", solver="ftrl", verbose=0, chunk_bytes=1024).model
    assert model.feature_map is None and model.n_features == 999_999  # dense up to the largest index met
    assert compact_space(17, 1_000_000) and not compact_learner(17, 1_000_000)
