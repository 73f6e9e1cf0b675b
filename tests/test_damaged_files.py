"""Files that lie (issue 40): every file blocksvm reads back is checked against its schema before it is trusted, and
no read of a damaged file runs unbounded or outlives a signal.

Each test damages one kind of file in one way, by hand: a field of the wrong type (one test per field of the manifest
and of a checkpoint, the schemas walked), a total that does not add up, bytes flipped where HDF5 keeps a block's
metadata. tests/test_fuzz_files.py mutates every kind at random. Where a process must hang or be signalled, a
test-only hook stops it at a fixed point (a read that never ends), never a delay.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import forked
import h5py
import numpy as np
import pytest

from blocksvm import schema
from blocksvm.checkpoint import CHECKPOINT_SCHEMA, Checkpoint, read_checkpoint, write_checkpoint
from blocksvm.cli import main
from blocksvm.errors import CheckpointError, ModelError, StoreError
from blocksvm.io.text_cache import SOURCE_FILE, store_for
from blocksvm.model import LinearModel
from blocksvm.plot import read_history
from blocksvm.store import BlockStore, writer
from blocksvm.store import format as F
from blocksvm.store.readahead import STALL_VARIABLE

HANG_BOUND = (
    120  # seconds: a run that takes this long on a 400-row store hangs (a loaded machine is slow, not this slow)
)
CLI = [sys.executable, "-m", "blocksvm.cli"]


def small_text(path: Path, rows: int = 400) -> Path:
    rng = np.random.default_rng(0)
    lines = []
    for i in range(rows):
        features = np.sort(rng.choice(np.arange(1, 51), size=8, replace=False))
        label = 1 if (features.sum() + i) % 3 else -1
        lines.append(f"{label} " + " ".join(f"{j}:{rng.random():.3f}" for j in features))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> Path:
    return small_text(tmp_path_factory.mktemp("damaged") / "d.txt")


@pytest.fixture(scope="module")
def store(text) -> Path:
    """A 400-row blosc-lz4 store of four blocks, as the issue's."""
    out = text.with_name("s.bsvm")
    assert main(["convert", str(text), str(out), "--block-rows", "100", "-q"]) == 0
    return out


@pytest.fixture(scope="module")
def older_store(text) -> Path:
    """The store as a blocksvm before this issue wrote it: string attributes of variable length, in the global heap."""
    out = text.with_name("older.bsvm")
    fixed = writer.fixed_strings
    writer.fixed_strings = lambda f, **attributes: f.attrs.update(attributes)
    try:
        assert main(["convert", str(text), str(out), "--block-rows", "100", "-q"]) == 0
    finally:
        writer.fixed_strings = fixed
    return out


def copy(tree: Path, to: Path) -> Path:
    shutil.copytree(tree, to)
    return to


def one_line(err: str) -> str:
    lines = [line for line in err.rstrip("\n").split("\n") if not line.startswith("note: ")]  # (said before work)
    assert len(lines) == 1 and lines[0].startswith("blocksvm: error: "), err
    assert not any(sign in err for sign in forked.BUG_SIGNS), err
    return lines[0].removeprefix("blocksvm: error: ")


# ---- the hang of the issue, found at its cause ---------------------------------------------------------------------


def flip_heap(file: Path) -> Path:
    """Flip two bytes of the first object of the file's global heap (its reserved byte and its size's lowest), as the
    issue's damaged store had them: HDF5 2.0 then walks the heap for ever."""
    data = bytearray(file.read_bytes())
    at = data.find(b"GCOL\x01")
    assert at >= 0, "the file has no global heap"
    for i in (at + 23, at + 24):
        data[i] ^= 0xFF
    file.write_bytes(bytes(data))
    return file


def test_a_damaged_global_heap_is_one_line_naming_the_block_not_a_hang(older_store, tmp_path):
    damaged = copy(older_store, tmp_path / "damaged.bsvm")
    flip_heap(damaged / "block-00001.h5")
    done = forked.run(["train", damaged, tmp_path / "m.h5"])
    assert done.code == 2
    assert one_line(done.err) == (
        f"{damaged}: block 1 (block-00001.h5) cannot be read, the file is damaged (its global heap at byte 179 holds "
        "an object of a damaged size (0 bytes)): convert the store again"
    )
    assert not (tmp_path / "m.h5").exists()


def test_block_files_keep_no_string_in_the_global_heap(store):
    """What blocksvm writes now has nothing for HDF5 to walk unchecked: its strings sit in checksummed headers."""
    for file in [*store.glob("block-*.h5")]:
        assert b"GCOL" not in file.read_bytes()
        with h5py.File(file) as f:
            assert f.attrs["store_id"].decode() == BlockStore(store).store_id


def test_a_dataset_whose_metadata_fails_its_checksum_is_one_line_naming_the_block(store, tmp_path):
    damaged = copy(store, tmp_path / "damaged.bsvm")
    file = damaged / "block-00002.h5"
    data = bytearray(file.read_bytes())
    header = data.find(b"OHDR", data.find(b"OHDR") + 1)  # a dataset's object header (the first is the root's)
    data[header + 20 : header + 22] = bytes(b ^ 0xFF for b in data[header + 20 : header + 22])
    file.write_bytes(bytes(data))
    assert main(["train", str(damaged), str(tmp_path / "m.h5"), "-q"]) == 2
    with pytest.raises(
        StoreError, match=r"block 2 \(block-00002.h5\) cannot be read, the file is damaged \(.*checksum"
    ):
        BlockStore(damaged).read_block(2)


# ---- signals and stalls: a read that never ends ----------------------------------------------------------------


def stalled(marker: Path, block: int = 2) -> dict:
    """The environment of a run whose read of ``block`` never ends (blocksvm.store.reader's test hook)."""
    return {"BLOCKSVM_TEST_STALL_IN_READ": f"{block}:{marker}"}


def started(argv: list, marker: Path, wait_for, env: dict) -> forked.Child:
    child = forked.Child(argv, env)
    wait_for(lambda: marker.exists() or child.poll() is not None, None, "the stalled read")
    assert marker.exists(), child.wait()
    return child


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_a_run_whose_reader_hangs_keeping_its_checkpoint(store, tmp_path, wait_for, signum, code):
    ck, model, marker = tmp_path / "ck.h5", tmp_path / "m.h5", tmp_path / "stalled"
    argv = ["train", store, model, "--checkpoint", ck, "--checkpoint-every", "1", "--tol", "0", "--max-outer", "9"]
    child = started(argv, marker, wait_for, stalled(marker))
    child.signal(signum)
    done = child.wait()
    assert done.code == code, done.err
    assert f"stopped by {signal.Signals(signum).name} in iteration 1 after" in done.err and "Traceback" not in done.err
    saved = read_checkpoint(ck)  # the checkpoint kept, at the last block boundary
    assert saved.state["position"] == saved.state["blocks_visited"] < 4
    partial = tmp_path / "m.partial.h5"  # a stopped run's model, beside the output: never over it
    assert not model.exists() and f"written to {partial}" in done.out + done.err
    assert LinearModel.load(partial).summary["stop_reason"] == f"stopped by {signal.Signals(signum).name}"
    assert main(["train", str(store), str(model), "--resume", str(ck), "--tol", "0", "--max-outer", "2", "-q"]) == 0


def test_ctrl_c_ends_a_prediction_whose_reader_hangs(store, tmp_path, wait_for):
    assert main(["train", str(store), str(tmp_path / "m.h5"), "-q"]) == 0
    marker = tmp_path / "stalled"
    argv = ["predict", tmp_path / "m.h5", store, "-o", tmp_path / "p.txt"]
    child = started(argv, marker, wait_for, stalled(marker))
    child.signal(signal.SIGINT)
    done = child.wait()
    assert (done.code, done.err) == (130, "blocksvm: interrupted\n")
    assert not (tmp_path / "p.txt").exists()


def test_a_read_that_stalls_fails_the_run_naming_the_block(store, tmp_path):
    marker = tmp_path / "stalled"
    done = forked.run(["train", store, tmp_path / "m.h5"], env={**stalled(marker), STALL_VARIABLE: "1"})
    assert done.code == 2
    assert one_line(done.err).startswith(f"{store}: block 2 (block-00002.h5) was not read in 1 s: its file or the")
    assert not (tmp_path / "m.h5").exists()


# ---- the manifest: a test per field, and the rules across fields ---------------------------------------------------


def wrong_value(field: schema.Field):
    """A value of another type than ``field`` declares."""
    return {"int": "12", "number": "1.5", "real": "1.5", "str": [1], "bool": "yes", "list": "x", "dict": "x"}[
        field.kind
    ]


def fields_of(s: schema.Schema, prefix: str = "", sample: dict | None = None) -> list[str]:
    """Every field of ``s`` as a path (``blocks[0].rows``), descending into objects the sample document has."""
    paths = []
    for f in s.fields:
        paths.append(prefix + f.name)
        value = (sample or {}).get(f.name)
        if f.fields is not None and isinstance(value, dict):
            paths += fields_of(f.fields, f"{prefix}{f.name}.", value)
        if f.items is not None and f.items.fields is not None and isinstance(value, list) and value:
            paths += fields_of(f.items.fields, f"{prefix}{f.name}[0].", value[0])
    return paths


def field_at(s: schema.Schema, path: str) -> schema.Field:
    head, _, rest = path.partition(".")
    name = head.split("[")[0]
    f = next(f for f in s.fields if f.name == name)
    if not rest:
        return f
    return field_at(f.fields or f.items.fields, rest)


def set_at(document: dict, path: str, value) -> None:
    *parents, last = path.replace("[0]", ".0").split(".")
    for key in parents:
        document = document[int(key)] if key.isdigit() else document[key]
    document[last] = value


def edited(store: Path, tmp: Path, edit) -> Path:
    out = copy(store, tmp / "edited.bsvm")
    manifest = json.loads((out / F.MANIFEST).read_text())
    edit(manifest)
    (out / F.MANIFEST).write_text(json.dumps(manifest))
    return out


def manifest_fields() -> list[str]:
    """The manifest's fields, those of a block's entry and of its params among them (the optional objects, a
    feature map, weights, text, as a whole: the store here has none)."""
    return fields_of(F.MANIFEST_SCHEMA, sample={"blocks": [{}], "params": {}})


@pytest.mark.parametrize("path", manifest_fields())
def test_a_manifest_field_of_another_type_is_named(store, tmp_path, path):
    field = field_at(F.MANIFEST_SCHEMA, path)
    damaged = edited(store, tmp_path, lambda m: set_at(m, path, wrong_value(field)))
    with pytest.raises(StoreError) as refused:
        BlockStore(damaged)
    assert str(refused.value).startswith(f"{damaged / F.MANIFEST}: field '{path}' is "), refused.value


@pytest.mark.parametrize(
    "edit, field, problem",
    [
        (lambda m: m.update(rows=m["rows"] + 1), "rows", "is 401, but the blocks' rows add up to 400"),
        (lambda m: m.update(nnz=m["nnz"] - 1), "nnz", "but the blocks' nnz add up to"),
        (lambda m: m.update(classes=m["classes"][::-1]), "classes", "is not sorted and distinct"),
        (lambda m: m.update(label_counts=[400]), "label_counts", "has 1 counts for 2 classes"),
        (lambda m: m["label_counts"].__setitem__(0, m["label_counts"][0] + 1), "label_counts", "add up to 401"),
        (lambda m: m.update(version=0), "version", "is 0, less than 1"),
        (lambda m: m.update(version=1, weights={"sum": 1, "min": 1, "max": 1, "zero_rows": 0}), "version", "is 1"),
        (lambda m: m.update(index_base=2), "index_base", "is an integer (2), not one of"),
        (lambda m: m.update(dtype="float16"), "dtype", "not one of 'float32', 'float64'"),
        (lambda m: m.update(features=1 << 40), "features", "more than 2,147,483,648"),
        (lambda m: m["params"].update(compression="snappy"), "params.compression", "unknown compression"),
        (lambda m: m["blocks"][1].update(file="../../elsewhere.h5"), "blocks[1].file", "a name of its own"),
        (lambda m: m["blocks"][1].update(file="block-00000.h5"), "blocks[1].file", "a name of its own"),
        (lambda m: m["blocks"][0].update(nnz=10**6), "blocks[0].nnz", "more than its"),
    ],
)
def test_a_manifest_that_disagrees_with_itself_is_refused_naming_the_field(store, tmp_path, edit, field, problem):
    def edit_and_keep_totals(m):
        edit(m)
        if field == "blocks[0].nnz":
            m["nnz"] = sum(b["nnz"] for b in m["blocks"])

    damaged = edited(store, tmp_path, edit_and_keep_totals)
    with pytest.raises(StoreError) as refused:
        BlockStore(damaged)
    assert f"field '{field}' " in str(refused.value) and problem in str(refused.value), refused.value


def test_an_absurd_row_count_is_refused_before_memory_is_allocated_for_it(store, tmp_path):
    """A manifest whose totals agree but whose block claims 10**12 rows: refused when the store opens (before a
    trainer sizes alpha by it), from the block file's own size."""

    def absurd(m):
        m["blocks"][0]["rows"] += 10**12
        m["rows"] += 10**12
        m["label_counts"][0] += 10**12

    damaged = edited(store, tmp_path, absurd)
    with pytest.raises(StoreError, match=r"field 'blocks\[0\].rows' is 1,000,000,000,0\d\d, more than a file of "):
        BlockStore(damaged)
    assert main(["train", str(damaged), str(tmp_path / "m.h5"), "-q"]) == 2


def test_a_block_whose_datasets_disagree_with_its_entry_is_refused_before_its_arrays_are_read(store, tmp_path):
    damaged = copy(store, tmp_path / "damaged.bsvm")
    file = damaged / "block-00001.h5"
    with h5py.File(file, "r+") as f:
        del f["labels"]
        f.create_dataset("labels", data=np.zeros(3))
    manifest = json.loads((damaged / F.MANIFEST).read_text())
    manifest["blocks"][1].update(bytes=file.stat().st_size, crc32=F.file_crc32(file))
    (damaged / F.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=r"block 1 \(block-00001.h5\) is inconsistent: field 'labels' has 3 values, "):
        BlockStore(damaged).read_block(1)


# ---- checkpoints: a test per field -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoints(store, text) -> dict[str, Path]:
    """A training run's checkpoint, a search's and a stream's, on the module's store and text."""
    folder = store.parent
    runs = {
        "train": ["train", store, folder / "m.h5", "--max-outer", "2", "--checkpoint", folder / "train.ck"],
        "tune": ["tune", store, "--C-grid", "0.5,1", "--folds", "2", "--checkpoint", folder / "tune.ck"],
        "stream": ["stream", text, folder / "s.h5", "--checkpoint", folder / "stream.ck"],
    }
    for argv in runs.values():
        assert main([*map(str, argv), "-q"]) == 0
    return {kind: folder / f"{kind}.ck" for kind in runs}


def forged(source: Path, tmp: Path, edit, arrays=None) -> Path:
    """A copy of the checkpoint ``source`` with ``edit(meta)`` applied and its digest made again: a file that lies
    but checks out, as only a hand (or another program) makes one."""
    saved = read_checkpoint(source)
    meta = {"params": saved.params, "store": saved.store, "state": saved.state}
    edit(meta)
    out = tmp / "forged.ck"
    write_checkpoint(out, Checkpoint(meta["params"], meta["store"], meta["state"], arrays or saved.arrays))
    return out


def checkpoint_fields(kind: str) -> list[str]:
    from blocksvm.checkpoint import _SEARCH, _TRAINING

    state = _SEARCH if kind == "tune" else _TRAINING
    sample = {"sums": {}, "points": [{}], "history": [{}], "learner": {}}
    top = [p for p in fields_of(CHECKPOINT_SCHEMA, sample={"store": {}}) if p != "state"]
    return top + [f"state.{p}" for p in fields_of(state, sample=sample)]


@pytest.mark.parametrize("kind", ["train", "tune", "stream"])
def test_a_checkpoint_field_of_another_type_is_named(checkpoints, tmp_path, kind):
    from blocksvm.checkpoint import _SEARCH, _TRAINING

    state_schema = _SEARCH if kind == "tune" else _TRAINING
    for path in checkpoint_fields(kind):
        top = path.split(".")[0]
        field = (
            field_at(state_schema, path.removeprefix("state.")) if top == "state" else field_at(CHECKPOINT_SCHEMA, path)
        )

        def edit(meta, path=path, field=field):
            if path.startswith("state.history[0]") and not meta["state"]["history"]:
                meta["state"]["history"].append({"outer": 1, "primal": 1.0, "primal_exact": False})
            if path.startswith("state.points[0]") and not meta["state"]["points"]:
                meta["state"]["points"].append({"C": 1})
            set_at(meta, path, wrong_value(field))

        with pytest.raises(CheckpointError) as refused:
            read_checkpoint(forged(checkpoints[kind], tmp_path, edit))
        assert f": field '{path}' is " in str(refused.value), (path, refused.value)


def test_a_checkpoint_array_of_another_length_is_named_with_the_stores_rows(store, checkpoints, tmp_path):
    saved = read_checkpoint(checkpoints["train"])
    arrays = {**saved.arrays, "alpha": saved.arrays["alpha"][:, :300]}
    ck = forged(checkpoints["train"], tmp_path, lambda meta: None, arrays)
    code = main(["train", str(store), str(tmp_path / "m.h5"), "--resume", str(ck), "--max-outer", "3", "-q"])
    assert code == 2
    with pytest.raises(CheckpointError, match=f"checkpoint {ck}: field 'alpha' has 300 values, the store has 400 rows"):
        from blocksvm.train import train

        train(store, verbose=0, resume=ck, max_outer=3)


def test_a_checkpoint_array_of_text_is_refused_before_it_is_read(checkpoints, tmp_path):
    ck = tmp_path / "text.ck"
    ck.write_bytes(checkpoints["train"].read_bytes())
    with h5py.File(ck, "r+") as f:
        del f["arrays/alpha"]
        f["arrays/alpha"] = np.array([b"abc"] * 400)
    with pytest.raises(CheckpointError, match=r"field 'arrays/alpha' holds \|S3, not numbers"):
        read_checkpoint(ck)


def test_a_search_whose_best_is_not_among_its_points_is_refused(checkpoints, tmp_path):
    ck = forged(checkpoints["tune"], tmp_path, lambda meta: meta["state"].update(best=7))
    with pytest.raises(CheckpointError, match=r"field 'state.best' is 7, but 2 values of C are done"):
        read_checkpoint(ck)


def test_a_streams_learner_wider_than_its_arrays_is_refused_before_they_are_made(text, checkpoints, tmp_path):
    ck = forged(checkpoints["stream"], tmp_path, lambda meta: meta["state"]["learner"].update(n_features=10**9))
    code = main(["stream", str(text), str(tmp_path / "s.h5"), "--resume", str(ck), "-q"])
    assert code == 2
    from blocksvm.stream import stream

    with pytest.raises(CheckpointError, match=r"field 'state.learner.n_features' is 1,000,000,000, more than its"):
        stream(text, verbose=0, resume=ck)


# ---- models, LIBLINEAR's text, histories, the feature map, the text cache's key -------------------------------------


@pytest.fixture(scope="module")
def model(store) -> Path:
    path = store.parent / "model.h5"
    assert main(["train", str(store), str(path), "--max-outer", "2", "-q"]) == 0
    return path


def with_attributes(model: Path, tmp: Path, **attributes) -> Path:
    out = tmp / "edited.h5"
    out.write_bytes(model.read_bytes())
    with h5py.File(out, "r+") as f:
        for name, value in attributes.items():
            if value is None:
                del f.attrs[name]
            else:
                f.attrs[name] = value
    return out


@pytest.mark.parametrize(
    "attributes, message",
    [
        ({"classes": "[1, -1]"}, "field 'classes' is not sorted and distinct"),
        ({"classes": "[1]"}, "field 'classes' has 1 classes: a classifier has two or more"),
        ({"classes": "[-1, 1, 2]"}, "field 'coef' has 1 rows for 3 classes"),
        ({"classes": "{"}, "field 'classes' is not JSON"),
        ({"bias": "high"}, "field 'bias' is a string ('high'), not a number"),
        ({"bias": np.nan}, "field 'bias' is nan (not finite), not a number"),
        ({"index_base": 7}, "field 'index_base' is an integer (7), not one of 0, 1"),
        ({"params": "[]"}, "field 'params' is a list ([]), not an object"),
        ({"summary": None}, "field 'summary' is missing"),
        ({"store_fingerprint": 5}, "field 'store_fingerprint' is an integer (5), not a string"),
        ({"sparse": True}, "field 'sparse' is true, but the model has no feature_map"),
    ],
)
def test_a_model_field_that_lies_is_named(model, tmp_path, attributes, message):
    edited_model = with_attributes(model, tmp_path, **attributes)
    with pytest.raises(ModelError, match=re.escape(f"{edited_model}: {message}")):
        LinearModel.load(edited_model)


@pytest.mark.parametrize(
    "dataset, value, message",
    [
        ("intercept", np.zeros(2), "field 'intercept' has 2 values, coef has 1 rows"),
        ("coef", np.zeros(51), "field 'coef' has 1 dimensions, not 2"),
        ("coef", np.full((1, 51), np.nan), "field 'coef' holds a value that is NaN or infinite"),
        ("coef", np.array([[b"x"] * 51]), "field 'coef' holds |S1, not numbers"),
    ],
)
def test_a_model_dataset_that_lies_is_named(model, tmp_path, dataset, value, message):
    out = with_attributes(model, tmp_path)
    with h5py.File(out, "r+") as f:
        del f[dataset]
        f[dataset] = value
    with pytest.raises(ModelError) as refused:
        LinearModel.load(out)
    assert str(refused.value) == f"{out}: {message}"


@pytest.mark.parametrize(
    "header, message",
    [
        ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class two\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n",
         "field 'nr_class' is a string ('two'), not an integer"),
        ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 1\nnr_feature 2\nbias -1\nw\n",
         "field 'label' has 2 labels for nr_class 2 (one a class, distinct)"),
        ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 3\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n",
         "field 'label' has 2 labels for nr_class 3"),
        ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nbias -1\nw\n", "field 'nr_feature' is missing"),
        ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias inf\nw\n",
         "field 'bias' is inf (not finite), not a number"),
        ("solver_type ONECLASS_SVM\nnr_class 2\nnr_feature 2\nbias -1\nw\n", "field 'rho' is missing"),
        ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n0.5 \nnan \n",
         "a weight among rows 1 to 2 is NaN or infinite"),
    ],
)  # fmt: skip
def test_a_liblinear_header_that_lies_is_named(tmp_path, header, message):
    path = tmp_path / "ll.txt"
    path.write_text(header + "0.5 \n-0.25 \n" * ("w\n0." not in header))
    with pytest.raises(ModelError) as refused:
        LinearModel.load(path)
    assert str(refused.value).startswith(f"{path}: {message}"), refused.value


def test_a_libsvm_file_given_as_the_model_is_refused_at_its_first_line(text, tmp_path):
    with pytest.raises(ModelError, match="is neither a blocksvm model nor a LIBLINEAR model file"):
        LinearModel.load(text)


def test_a_history_record_of_another_type_is_named_with_its_line(model, tmp_path):
    history = tmp_path / "h.jsonl"
    lines = Path(f"{model}.history.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["time"] = "late"
    history.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(Exception, match=rf"{history}:2: field 'time' is a string \('late'\), not a number"):
        read_history(history)


def test_a_feature_map_of_another_length_is_refused_before_it_is_read(tmp_path):
    text = tmp_path / "wide.txt"
    text.write_text("1 1:1 2147483647:1\n-1 2:1\n")
    store = tmp_path / "wide.bsvm"
    assert main(["convert", str(text), str(store), "-q"]) == 0
    with h5py.File(store / F.FEATURES_FILE, "r+") as f:
        del f["features"]
        f["features"] = np.arange(7, dtype=np.int64)
    manifest = json.loads((store / F.MANIFEST).read_text())
    manifest["feature_map"]["bytes"] = (store / F.FEATURES_FILE).stat().st_size
    (store / F.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match=r"the feature map \(features.h5\) is damaged \(field 'features' has 7 values"):
        BlockStore(store)


def test_a_damaged_cache_key_converts_the_text_again_saying_why(text, tmp_path):
    source = tmp_path / "t.txt"
    source.write_text(text.read_text())
    said: list[str] = []
    cache = store_for(source, say=said.append)
    key = json.loads((cache / SOURCE_FILE).read_text())
    key["bytes"] = "many"
    (cache / SOURCE_FILE).write_text(json.dumps(key))
    assert store_for(source, say=said.append) == cache
    assert said[-1].endswith(
        "(again: its record source.json is damaged (source.json: field 'bytes' is a string ('many'), not an integer))"
    )
    assert store_for(source, say=said.append) == cache and said[-1].startswith("using the cached store")


def test_the_command_exits_past_a_reader_thread_that_never_ends(store, tmp_path, wait_for):
    """The command itself (not a forked test child): the interpreter would wait at exit for the stalled thread, for
    ever; the command ends without it (SIGTERM: exit code 143, the model so far and the checkpoint written)."""
    marker, ck = tmp_path / "stalled", tmp_path / "ck.h5"
    process = subprocess.Popen(
        [sys.executable, "-m", "blocksvm.cli", "train", str(store), str(tmp_path / "m.h5"), "--checkpoint", str(ck)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **stalled(marker)},
    )
    try:
        wait_for(marker.exists, process, "the stalled read")
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=forked.HANG_BOUND)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 143, err
    assert (tmp_path / "m.partial.h5").exists() and read_checkpoint(ck).state["position"] < 4


def test_the_checkpoint_refuses_the_gaps_the_run_refuses():
    from blocksvm import checkpoint
    from blocksvm.train.records import NEGATIVE_GAP

    assert checkpoint._NEGATIVE_GAP == NEGATIVE_GAP  # (declared twice: checkpoint.py cannot import the trainer's)


def test_a_checkpoint_past_the_end_of_its_pass_is_refused(store, checkpoints, tmp_path):
    ck = forged(checkpoints["train"], tmp_path, lambda meta: meta["state"].update(position=9))
    assert main(["train", str(store), str(tmp_path / "m.h5"), "--resume", str(ck), "--max-outer", "3", "-q"]) == 2
    from blocksvm.train import train

    with pytest.raises(CheckpointError, match=r"field 'state.position' is 9, more than the store's 4 blocks"):
        train(store, verbose=0, resume=ck, max_outer=3)
