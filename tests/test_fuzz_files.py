"""Fuzzing every kind of file blocksvm reads (issue 40): text (LIBSVM, VW, CSV), a store's manifest, block files and
feature map, models of both formats, checkpoints of train, tune and stream, histories, a text cache's key.

Each example mutates one pristine file (bytes flipped, cut or spliced; a JSON value replaced by one of another type,
or removed), runs the command that reads it in a process of its own (tests/forked.py: a hang is a failure after a
generous bound, nothing here depends on timing below it), and asserts what a user may see: a result, or one line
``blocksvm: error: ...`` naming the file (a malformed text line adds the line itself); never a traceback, the line
of an exception the command did not expect, or a crash (``forked.BUG_SIGNS``: phrases a bug prints, not words a
good message may quote). A store damaged in its blocks or its feature map that still trains gives the model of the
pristine store, bit for bit: what was read is what was written, or the run is refused.

Seeded and bounded: hypothesis derandomized, a few examples of each kind in the suite (the whole file runs in about
20 s on two busy cores), and a longer campaign of the same tests in the slow step (30 a kind).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import forked
import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blocksvm.checkpoint import Checkpoint, read_checkpoint, write_checkpoint
from blocksvm.cli import main
from blocksvm.io.text_cache import SOURCE_FILE, cache_path
from blocksvm.model import LinearModel

CAMPAIGNS = {"suite": 4, "slow": 30}  # examples of each kind


def campaign(examples: int):
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


RUNS = [pytest.param(n, id=name, marks=[pytest.mark.slow] if name == "slow" else []) for name, n in CAMPAIGNS.items()]


# ---- the pristine files --------------------------------------------------------------------------------------------


def libsvm_rows(rows: int, seed: int = 0, wide: bool = False) -> str:
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(rows):
        features = np.sort(rng.choice(np.arange(1, 41), size=6, replace=False))
        if wide and i % 7 == 0:
            features = np.append(features, 2_000_000_000)
        label = 1 if (features[:3].sum() + i) % 3 else -1
        lines.append(f"{label} " + " ".join(f"{j}:{rng.random():.3f}" for j in features))
    return "\n".join(lines) + "\n"


class Files:
    """The pristine files, made once, and what the commands make of them."""

    def __init__(self, root: Path):
        self.root = root
        self.text = root / "d.txt"
        self.text.write_text(libsvm_rows(300))
        self.vw = root / "d.vw"
        self.vw.write_text(
            "".join(f"{1 if i % 3 else -1} {1 + i % 2} |a x{i % 7} y{i % 5}:0.5 |b z\n" for i in range(80))
        )
        self.csv = root / "d.csv"
        self.csv.write_text("label,a,b,c\n" + "".join(f"{1 if i % 3 else -1},{i % 5},,{i / 10}\n" for i in range(80)))
        self.store, self.compact = root / "s.bsvm", root / "wide.bsvm"
        (root / "wide.txt").write_text(libsvm_rows(200, seed=1, wide=True))
        self.model, self.liblinear, self.history = root / "m.h5", root / "m.txt", root / "m.h5.history.jsonl"
        self.train_ck, self.tune_ck, self.stream_ck = root / "train.ck", root / "tune.ck", root / "stream.ck"
        self.cached_text = root / "cached.txt"
        self.cached_text.write_text(self.text.read_text())
        for argv in (
            ["convert", self.text, self.store, "--block-rows", "100"],
            ["convert", root / "wide.txt", self.compact, "--block-rows", "100"],
            ["train", self.store, self.model, "--max-outer", "2", "--checkpoint", self.train_ck],
            ["export", self.model, self.liblinear],
            ["tune", self.store, "--C-grid", "0.5,1", "--folds", "2", "--checkpoint", self.tune_ck],
            ["stream", self.text, root / "s.h5", "--checkpoint", self.stream_ck],
            ["train", self.cached_text, root / "c.h5", "--max-outer", "1"],
            ["plot", self.history, "-o", root / "h.png"],  # (matplotlib imported before the children fork)
        ):
            assert main([*map(str, argv), "-q"]) == 0, argv
        assert (self.compact / "features.h5").exists()
        self.trained = {
            store: train_model(store, root / f"{store.name}.h5") for store in (self.store, self.compact)
        }  # the models of the pristine stores, for the runs on their damaged copies


def train_model(store: Path, model: Path) -> np.ndarray:
    assert main(["train", str(store), str(model), "--max-outer", "2", "-q"]) == 0
    return LinearModel.load(model).coef


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Files:
    return Files(tmp_path_factory.mktemp("pristine"))


class Work:
    """A folder for the examples of one test, emptied before each (a checkpoint's ``.prev`` left by one example must
    not be another's)."""

    def __init__(self, root: Path):
        self.root = root

    def __truediv__(self, name: str) -> Path:
        return self.root / name

    def fresh(self) -> Work:
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir()
        return self


@pytest.fixture
def work(tmp_path) -> Work:
    return Work(tmp_path / "work")


# ---- mutations ---------------------------------------------------------------------------------------------------


@st.composite
def byte_mutations(draw):
    """A function of a file's bytes: a few bytes flipped, the file cut, or a short run spliced in or out."""
    kind = draw(st.sampled_from(["flip", "flip", "cut", "splice"]))
    where = draw(st.floats(0, 1, exclude_max=True))
    if kind == "flip":
        masks = draw(st.lists(st.integers(1, 255), min_size=1, max_size=4))

        def flip(data: bytes) -> bytes:
            out, at = bytearray(data), int(where * len(data))
            for i, mask in enumerate(masks):
                if at + i < len(out):
                    out[at + i] ^= mask
            return bytes(out)

        return flip
    if kind == "cut":
        return lambda data: data[: int(where * len(data))]
    run, removed = draw(st.binary(max_size=6)), draw(st.integers(0, 6))
    return lambda data: data[: int(where * len(data))] + run + data[int(where * len(data)) + removed :]


ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 10**15]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def paths_of(document, prefix=()) -> list[tuple]:
    """Every place in a JSON document: keys of objects and positions in lists, nested."""
    found = []
    items = (
        document.items() if isinstance(document, dict) else enumerate(document) if isinstance(document, list) else ()
    )
    for key, value in items:
        found.append((*prefix, key))
        found += paths_of(value, (*prefix, key))
    return found


@st.composite
def json_mutations(draw, document):
    """A copy of ``document`` with one value replaced by one of any type, or removed."""
    path = draw(st.sampled_from(paths_of(document)))
    remove, value = draw(st.booleans()), draw(ODD_VALUES)
    copy = json.loads(json.dumps(document))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    if remove and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return copy


@st.composite
def text_mutations(draw):
    """A function of a text: byte mutations, or a line's word replaced by an odd one."""
    if draw(st.booleans()):
        return draw(byte_mutations())
    word = draw(st.sampled_from(["nan", "1e999", "-0", "3:", ":4", "x:1", "99999999999:1", "|", "||", ",", "\x00", ""]))
    where = draw(st.floats(0, 1, exclude_max=True))

    def replace(data: bytes) -> bytes:
        words = data.split(b" ")
        words[int(where * len(words))] = word.encode()
        return b" ".join(words)

    return replace


# ---- what a user may see -----------------------------------------------------------------------------------------


def check_outcome(done: forked.Done, named: list[str], codes=(0, 2)) -> None:
    """A result, or one error line naming the file (a malformed text line shown beneath); nothing else."""
    assert done.code in codes, f"exit {done.code}: {done.err}"
    for sign in forked.BUG_SIGNS:
        assert sign not in done.err, done.err
    if done.code != 2:
        return
    lines = done.err.rstrip("\n").split("\n")
    assert lines[0].startswith("blocksvm: error: "), done.err
    assert len(lines) == 1 or (len(lines) == 2 and lines[1].startswith("    ")), done.err
    assert any(name in lines[0] for name in named), f"{lines[0]!r} names none of {named}"


def damaged(path: Path, mutation) -> None:
    path.write_bytes(mutation(path.read_bytes()))


# ---- text ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("examples", RUNS)
@pytest.mark.parametrize(
    "kind, options",
    [("text", []), ("vw", ["--format", "vw"]), ("csv", ["--csv", "label"])],
    ids=["libsvm", "vw", "csv"],
)
def test_fuzzed_text_converts_or_is_one_line_naming_it(files, work, examples, kind, options):
    source = {"text": files.text, "vw": files.vw, "csv": files.csv}[kind]

    @campaign(examples)
    @given(mutation=text_mutations())
    def run(mutation):
        work.fresh()
        text = work / source.name
        text.write_bytes(mutation(source.read_bytes()))
        shutil.rmtree(work / "o.bsvm", ignore_errors=True)
        done = forked.run(["convert", text, work / "o.bsvm", "-q", *options])
        check_outcome(done, [text.name])

    run()


# ---- a store: its manifest, its blocks, its feature map --------------------------------------------------------


def a_store_copy(files: Files, work: Work, which: Path) -> Path:
    out = work / which.name
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(which, out)
    (work / "m.h5").unlink(missing_ok=True)
    return out


def trained_or_refused(files: Files, work: Work, store: Path, pristine: Path, named: list[str]) -> None:
    """Train on the damaged copy ``store`` of ``pristine``: refused in one line, or the pristine store's model."""
    done = forked.run(["train", store, work / "m.h5", "--max-outer", "2", "-q"])
    check_outcome(done, named)
    if done.code == 0:
        np.testing.assert_array_equal(LinearModel.load(work / "m.h5").coef, files.trained[pristine])


@pytest.mark.parametrize("examples", RUNS)
def test_a_fuzzed_manifest_trains_or_is_one_line_naming_the_store(files, work, examples):
    document = json.loads((files.store / "manifest.json").read_text())

    @campaign(examples)
    @given(data=st.data())
    def run(data):
        work.fresh()
        store = a_store_copy(files, work, files.store)
        if data.draw(st.booleans(), "as JSON"):
            (store / "manifest.json").write_text(json.dumps(data.draw(json_mutations(document), "manifest")))
        else:
            damaged(store / "manifest.json", data.draw(byte_mutations(), "bytes"))
        check_outcome(forked.run(["train", store, work / "m.h5", "--max-outer", "2", "-q"]), [store.name])
        check_outcome(forked.run(["info", store, "--verify"]), [store.name], codes=(0, 1, 2))

    run()


def test_a_manifest_cut_inside_a_character_is_one_line_that_may_quote_the_codec(files, work):
    """The draw that turned the slow step red on one machine: a manifest whose last byte starts a UTF-8 character.
    The codec's own words ("unexpected end of data") belong in a good message; only a bug's phrases fail."""
    store = a_store_copy(files, work, files.store)
    text = (store / "manifest.json").read_bytes()
    (store / "manifest.json").write_bytes(text[: len(text) // 2] + b"\xca")
    done = forked.run(["info", store])
    check_outcome(done, [store.name])
    assert done.code == 2 and "unexpected end of data" in done.err, done.err


@pytest.mark.parametrize("examples", RUNS)
def test_a_fuzzed_block_file_gives_the_same_model_or_one_line_naming_it(files, work, examples):
    @campaign(examples)
    @given(block=st.integers(0, 2), mutation=byte_mutations())
    def run(block, mutation):
        work.fresh()
        store = a_store_copy(files, work, files.store)
        damaged(store / f"block-{block:05d}.h5", mutation)
        trained_or_refused(files, work, store, files.store, [f"block-{block:05d}.h5", store.name])

    run()


@pytest.mark.parametrize("examples", RUNS)
def test_a_fuzzed_feature_map_gives_the_same_model_or_one_line_naming_it(files, work, examples):
    @campaign(examples)
    @given(mutation=byte_mutations())
    def run(mutation):
        work.fresh()
        store = a_store_copy(files, work, files.compact)
        damaged(store / "features.h5", mutation)
        trained_or_refused(files, work, store, files.compact, ["features.h5"])

    run()


# ---- models ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("examples", RUNS)
@pytest.mark.parametrize("which", ["hdf5", "liblinear"])
def test_a_fuzzed_model_predicts_or_is_one_line_naming_it(files, work, examples, which):
    source = files.model if which == "hdf5" else files.liblinear
    mutations = byte_mutations() if which == "hdf5" else text_mutations()

    @campaign(examples)
    @given(mutation=mutations)
    def run(mutation):
        work.fresh()
        model = work / source.name
        model.write_bytes(mutation(source.read_bytes()))
        check_outcome(forked.run(["predict", model, files.text, "-q"]), [model.name])
        check_outcome(forked.run(["info", model]), [model.name])

    run()


# ---- checkpoints ---------------------------------------------------------------------------------------------------


def resume_argv(files: Files, kind: str, ck: Path, work: Work) -> list:
    return {
        "train": ["train", files.store, work / "m.h5", "--resume", ck, "--max-outer", "3", "-q"],
        "tune": ["tune", files.store, "--C-grid", "0.5,1", "--folds", "2", "--resume", ck, "-q"],
        "stream": ["stream", files.text, work / "s.h5", "--resume", ck, "-q"],
    }[kind]


@pytest.mark.parametrize("examples", RUNS)
@pytest.mark.parametrize("kind", ["train", "tune", "stream"])
def test_a_fuzzed_checkpoint_resumes_or_is_one_line_naming_it(files, work, examples, kind):
    source = {"train": files.train_ck, "tune": files.tune_ck, "stream": files.stream_ck}[kind]

    @campaign(examples)
    @given(mutation=byte_mutations())
    def run(mutation):
        work.fresh()
        ck = work / source.name
        ck.write_bytes(mutation(source.read_bytes()))
        check_outcome(forked.run(resume_argv(files, kind, ck, work)), [ck.name])

    run()


@pytest.mark.parametrize("examples", RUNS)
@pytest.mark.parametrize("kind", ["train", "tune", "stream"])
def test_a_forged_checkpoint_resumes_or_is_one_line_naming_it(files, work, examples, kind):
    """Checkpoints that lie and check out: a value of ``meta`` replaced or removed, the digest made again."""
    source = {"train": files.train_ck, "tune": files.tune_ck, "stream": files.stream_ck}[kind]
    saved = read_checkpoint(source)
    document = {"params": saved.params, "store": saved.store, "state": saved.state}

    @campaign(examples)
    @given(data=st.data())
    def run(data):
        work.fresh()
        meta = data.draw(json_mutations(document), "meta")
        ck = work / source.name
        ck.unlink(missing_ok=True)
        parts = [meta.get(part, {}) for part in ("params", "store", "state")]
        write_checkpoint(ck, Checkpoint(*parts, saved.arrays))
        # a checkpoint whose every claim agrees with the others is found out by the data only: a stream said to
        # have learned every row of one class ends as the stream of one class does
        named = [ck.name, source.name, *(["the stream held"] if kind == "stream" else [])]
        check_outcome(forked.run(resume_argv(files, kind, ck, work)), named)

    run()


# ---- histories and the text cache's key ------------------------------------------------------------------------


@pytest.mark.parametrize("examples", RUNS)
def test_a_fuzzed_history_plots_or_is_one_line_naming_it(files, work, examples):
    records = [json.loads(line) for line in files.history.read_text().splitlines()]

    @campaign(max(1, examples // 2))  # (a plot takes a while to draw)
    @given(data=st.data())
    def run(data):
        work.fresh()
        history = work / "h.jsonl"
        if data.draw(st.booleans(), "as JSON"):
            lines = [json.dumps(r) for r in data.draw(json_mutations(records), "records")]
            history.write_text("\n".join(lines) + "\n")
        else:
            history.write_bytes(data.draw(byte_mutations(), "bytes")(files.history.read_bytes()))
        check_outcome(forked.run(["plot", history, "-o", work / "h.png", "-q"]), [history.name])

    run()


@pytest.mark.parametrize("examples", RUNS)
def test_a_fuzzed_cache_key_converts_the_text_again(files, work, examples):
    cache = cache_path(files.cached_text)
    key = json.loads((cache / SOURCE_FILE).read_text())

    @campaign(examples)
    @given(data=st.data())
    def run(data):
        work.fresh()
        text = work / files.cached_text.name
        shutil.copy(files.cached_text, text)
        mine = cache_path(text)
        shutil.rmtree(mine, ignore_errors=True)
        shutil.copytree(cache, mine)
        if data.draw(st.booleans(), "as JSON"):
            (mine / SOURCE_FILE).write_text(json.dumps(data.draw(json_mutations(key), "key")))
        else:
            damaged(mine / SOURCE_FILE, data.draw(byte_mutations(), "bytes"))
        done = forked.run(["train", text, work / "m.h5", "--max-outer", "1", "-q"])
        check_outcome(done, [], codes=(0,))  # the text is fine: its cache is converted again, whatever its key says

    run()


def test_the_fuzzed_files_are_what_the_commands_read(files):
    """The pristine files open: the mutations above start from files that work."""
    assert read_checkpoint(files.train_ck).state["outer"] == 3
    with h5py.File(files.model) as f:
        assert f.attrs["format"] == "blocksvm-model"
    assert LinearModel.load(files.liblinear).coef.shape == LinearModel.load(files.model).coef.shape
