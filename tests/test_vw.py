"""Vowpal Wabbit text (issue 33): ``convert --format vw``, ``stream`` and ``predict`` read it, names hashed into
``2**bits`` columns as VW hashes them.

The oracle of the hash is scikit-learn's ``murmurhash3_32`` (MurmurHash3 x86 32-bit, the hash of its
``FeatureHasher``), composed as docs/FORMAT.md's *Hashed text* says VW composes it; the oracle of a line is a
plain-Python reading of it (``str.split``), written here apart from the compiled tokenizer.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import SMALL_SPEC, write_vw
from sklearn.utils import murmurhash3_32

from blocksvm import InputFormatError, ModelError, ParameterError, convert
from blocksvm.cli import main
from blocksvm.io import _vw_kernels as K
from blocksvm.io.libsvm import load_libsvm
from blocksvm.io.vw import HASH, Hashing, iter_vw, parse_vw_chunk
from blocksvm.model import LinearModel
from blocksvm.predict import predict
from blocksvm.store import BlockStore
from blocksvm.stream import stream
from blocksvm.train import train


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- the oracle ------------------------------------------------------------------------------------------------


def vw_hash(text: str, seed: int, hash_all: bool) -> int:
    """VW's ``hashstring``: digits are their integer plus the seed, anything else MurmurHash3 with the seed."""
    if not hash_all and re.fullmatch("[0-9]+", text):
        return int(text) + seed
    return murmurhash3_32(text, seed=seed & 0xFFFFFFFF, positive=True)


def column(name: str, namespace: str, bits: int, hash_all: bool = False) -> int:
    seed = 0 if namespace == "" else vw_hash(namespace, 0, hash_all) & 0xFFFFFFFF
    return vw_hash(name, seed, hash_all) & ((1 << bits) - 1)


def oracle_line(line: str, bits: int, hash_all: bool = False) -> tuple[float, float, dict[int, float]]:
    """``(label, weight, {column: value})`` of one VW line, read with ``str.split``."""
    head, *sections = line.split("|")
    words = head.split()
    if words and (head.endswith(words[-1]) and sections or words[-1].startswith("'")):
        words = words[:-1]  # the tag
    label, weight = float(words[0]), float(words[1]) if len(words) > 1 else 1.0
    row: dict[int, float] = {}
    for section in sections:
        namespace, scale = "", 1.0
        if section and not section[0].isspace():
            first, *rest = section.split()
            section = " ".join(rest)
            namespace, _, given = first.partition(":")
            scale = float(given) if given else 1.0
        for word in section.split():
            name, _, value = word.partition(":")
            v = scale * (float(value) if value else 1.0)
            if v != 0:
                c = column(name, namespace, bits, hash_all)
                row[c] = row.get(c, 0.0) + v
    return label, weight, {c: v for c, v in row.items() if v != 0}


def rows_of(chunk) -> list[dict[int, float]]:
    return [
        dict(zip(chunk.indices[a:b].tolist(), chunk.data[a:b].tolist()))
        for a, b in zip(chunk.indptr[:-1], chunk.indptr[1:])
    ]


# ---- the hash ----------------------------------------------------------------------------------------------------


def test_murmur3_is_scikit_learns_murmurhash3_32():
    """Every length modulo 4, seeds up to 2**32 - 1, UTF-8 names; and two values known by heart."""
    rng = np.random.default_rng(0)
    words = [b"", b"a", b"ab", b"abc", b"abcd", "été naïve".encode(), b"\xff\x00\x80"]
    words += [bytes(rng.integers(0, 256, rng.integers(0, 40)).astype(np.uint8)) for _ in range(300)]
    for word in words:
        buf = np.frombuffer(word + b"\n", np.uint8)
        for seed in (0, 1, 0x9747B28C, 2**32 - 1, int(rng.integers(0, 2**32))):
            assert int(K.murmur3_32(buf, 0, len(word), np.uint64(seed))) == murmurhash3_32(word, seed, positive=True)
    hello = np.frombuffer(b"hello\n", np.uint8)
    assert int(K.murmur3_32(hello, 0, 5, np.uint64(0))) == 0x248BFA47  # MurmurHash3_x86_32("hello", 0)
    assert int(K.murmur3_32(hello, 0, 0, np.uint64(0))) == 0


LINES = [
    "1 |a x:2 y |b x 7:3",
    "-1 0.5 'tag |  z",
    "0 2 tag|a:0.5 x:4 x",
    "1\t|a\tx:1e-3\t\ty:0 \r",
    "1 |ns:2 w:-1.5 |ns w",
    "1 |a x:1 x:-1",
    "1 |été naïve:2.5 |",
    "3.5 |5 x 12 |x 12",
    "1 |a 123456789012345678901234567890 007",
    "-1 3 |a 0.5:2 -3 x+y=z:7",
]


@pytest.mark.parametrize("bits", [2, 5, 18, 30])
@pytest.mark.parametrize("hash_all", [False, True])
def test_each_line_becomes_the_oracles_row(bits, hash_all):
    """Labels, importance weights, tags, namespaces and their weights, bare names, digits, UTF-8, blanks of every
    kind; few bits force collisions, which add up."""
    text = "\n".join(LINES[:5]) + "\n\n   \n" + "\n".join(LINES[5:]) + "\n"
    chunk = parse_vw_chunk(text.encode(), 11, hashing=Hashing(bits, hash_all), dtype=np.float64)
    expected = [oracle_line(line, bits, hash_all) for line in LINES]
    assert chunk.labels.tolist() == [e[0] for e in expected]
    assert chunk.weights.tolist() == [e[1] for e in expected]
    assert chunk.lines.tolist() == [11, 12, 13, 14, 15, 18, 19, 20, 21, 22]
    assert len(rows_of(chunk)) == len(expected)
    for got, want in zip(rows_of(chunk), (e[2] for e in expected)):
        assert list(got) == sorted(want) and np.allclose(list(got.values()), [want[c] for c in sorted(want)])


def test_hand_computed_columns():
    """A few columns worked out by hand from the rules: digits in the default namespace keep their index; the
    namespace is part of the key; ``hash_all`` hashes digits."""
    chunk = parse_vw_chunk(b"1 | 7 12:2\n1 |a 7\n", 1, hashing=Hashing(18), dtype=np.float64)
    a = murmurhash3_32("a", seed=0, positive=True)
    assert rows_of(chunk) == [{7: 1.0, 12: 2.0}, {(7 + a) % 2**18: 1.0}]
    chunk = parse_vw_chunk(b"1 | 7\n1 |a x\n", 1, hashing=Hashing(10, hash_all=True), dtype=np.float64)
    x_in_a = murmurhash3_32("x", seed=murmurhash3_32("a", seed=0, positive=True), positive=True)
    assert rows_of(chunk) == [{murmurhash3_32("7", seed=0, positive=True) % 1024: 1.0}, {x_in_a % 1024: 1.0}]


def test_chunks_of_any_size_read_the_same_rows(tmp_path):
    rng = np.random.default_rng(1)
    names = ["x", "y", "longer_name", "w7", "42", "é"]
    lines = []
    for _ in range(400):
        parts = [f"{rng.choice([-1, 1])}" + (f" {rng.choice([0.5, 2, 0])}" if rng.random() < 0.5 else "")]
        for _ in range(rng.integers(0, 4)):
            words = [str(rng.choice(names)) + (f":{rng.normal():.6g}" if rng.random() < 0.5 else "") for _ in range(5)]
            parts.append(f"|{rng.choice(['', 'a', 'bb:2'])} " + " ".join(words))
        lines.append(" ".join(parts))
    path = tmp_path / "r.vw"
    path.write_text("\n".join(lines))  # no final newline
    whole = parse_vw_chunk(path.read_bytes(), 1, hashing=Hashing(8), dtype=np.float64)
    pieces = list(iter_vw(path, Hashing(8), dtype=np.float64, chunk_bytes=97))
    assert len(pieces) > 20
    assert sum((rows_of(p) for p in pieces), []) == rows_of(whole)
    assert np.concatenate([p.weights for p in pieces]).tolist() == whole.weights.tolist()
    assert np.concatenate([p.lines for p in pieces]).tolist() == list(range(1, 401))
    expected = [oracle_line(line, 8) for line in lines]
    assert whole.labels.tolist() == [e[0] for e in expected] and whole.weights.tolist() == [e[1] for e in expected]
    for got, want in zip(rows_of(whole), (e[2] for e in expected)):
        assert list(got) == sorted(want) and np.allclose(list(got.values()), [want[c] for c in sorted(want)])


def test_numbers_beyond_19_digits_are_converted_exactly():
    label, value, weight = "1.00000000000000000000000001", "0.123456789012345678901234567", "0.50000000000000000000001"
    text = f"{label} {weight} |a x:{value} y:{value}\n{label} |b:2 x:{value}\n"
    chunk = parse_vw_chunk(text.encode(), 1, hashing=Hashing(18), dtype=np.float64)
    assert chunk.labels.tolist() == [float(label)] * 2 and chunk.weights.tolist() == [float(weight), 1.0]
    assert sorted(chunk.data.tolist()) == sorted([float(value)] * 2 + [2 * float(value)])
    with pytest.raises(InputFormatError, match="f.vw:2: weight -0.1 is negative"):  # its sign known after Python's
        parse_vw_chunk(b"1 |a x\n1 -0.10000000000000000000000000001 |a x\n", 1, "f.vw")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("1 3:1 4:1", "'4:1' before the first '|' looks like LIBSVM's index:value: VW's features follow a '|'"),
        ("1 3:1", "'3:1' before the first '|' looks like LIBSVM's index:value"),
        ("1 x |a", "importance weight 'x' is not a number"),
        ("|a b", "no label before the first '|'"),
        ("1|a b", "no label before the first '|'"),  # VW reads a word touching the bar as the tag
        ("x |a", "label 'x' is not a number"),
        ("nan |a", "label 'nan' is not a finite number"),
        ("1 -2 |a b", "importance weight '-2' is negative: instance weights must be >= 0"),
        ("1 inf |a b", "importance weight 'inf' is not a finite number"),
        ("1 2 3 |a", "'3' is one word too many before the first '|'"),
        ("1 |a:q b", "the weight of namespace 'a:q' is not a number"),
        ("1 |a :3", "feature ':3' has no name"),
        ("1 |a b:x", "value in 'b:x' is not a number"),
        ("1 |a b:", "value in 'b:' is not a number"),
        ("1 |a b:inf", "value in 'b:inf' is NaN or infinite"),
        ("1 |a b:1e39", "a value does not fit in float32 (convert with --dtype float64)"),
    ],
)
def test_a_malformed_line_is_one_message_naming_file_and_line(line, reason):
    with pytest.raises(InputFormatError) as caught:
        parse_vw_chunk(f"1 |a ok\n\n{line}\n1 |a ok\n".encode(), 7, "data.vw")
    first, *rest = str(caught.value).split("\n")
    assert first.startswith(f"data.vw:9: {reason}"), first
    assert all(r.startswith("    ") for r in rest)


def test_skip_bad_lines_keeps_the_others():
    chunk = parse_vw_chunk(b"1 |a x\nx |a y\n-1 |a z\n", 1, skip_bad_lines=True)
    assert chunk.labels.tolist() == [1.0, -1.0] and chunk.lines.tolist() == [1, 3] and chunk.n_skipped == 1


# ---- convert, info ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_vw(tmp_path_factory, small_libsvm):
    """small.txt as VW text (names f<i> in namespaces a and b), unweighted, and its hashed rows per the oracle."""
    folder = tmp_path_factory.mktemp("vw")
    write_vw(small_libsvm, folder / "small.vw")
    return folder / "small.vw"


def test_convert_hashes_the_names_and_records_the_hashing(tmp_path, small_vw, small_libsvm, capsys):
    code, out, _ = run(capsys, "convert", small_vw, tmp_path / "s.bsvm", "--format", "vw", "--hash-bits", "20")
    assert code == 0 and f"vw names hashed into 2^20 columns ({HASH})" in out
    store = BlockStore(tmp_path / "s.bsvm")
    assert store.manifest["text"] == {"format": "vw", "hash": HASH, "bits": 20, "hash_all": False}
    assert store.space_features == 2**20 and store.index_base == 0 and not store.weighted  # weights all 1: none
    X, y, _ = load_libsvm(small_libsvm, zero_based=False)
    lines = small_vw.read_text().splitlines()
    by_line = {}
    for b in range(store.n_blocks):
        block = store.read_block(b)
        columns = store.feature_map[block.indices]
        for i, line in enumerate(block.lines):
            by_line[int(line)] = dict(
                zip(
                    columns[block.indptr[i] : block.indptr[i + 1]].tolist(),
                    block.data[block.indptr[i] : block.indptr[i + 1]].tolist(),
                )
            )
    assert len(by_line) == SMALL_SPEC.rows
    for line in (1, 2, 500, SMALL_SPEC.rows):
        assert by_line[line] == pytest.approx(oracle_line(lines[line - 1], 20)[2])
    code, out, _ = run(capsys, "info", tmp_path / "s.bsvm")
    assert f"text         VW text, names hashed into 2^20 columns by {HASH}" in out and "weights" not in out


def test_importance_weights_are_the_rows_weights(tmp_path, small_libsvm):
    """Some rows weigh 0, 0.5 or 3 (VW's importance weight after the label); each keeps its own through the
    shuffle."""
    rng = np.random.default_rng(2)
    w = rng.choice(["1", "0", "0.5", "3"], size=SMALL_SPEC.rows)
    write_vw(small_libsvm, tmp_path / "w.vw", weights=lambda row: w[row])
    convert(tmp_path / "w.vw", tmp_path / "w.bsvm", text_format="vw", block_rows=500)
    store = BlockStore(tmp_path / "w.bsvm")
    assert store.weighted and store.manifest["weights"]["zero_rows"] == int((w == "0").sum())
    found = {}
    for b in range(store.n_blocks):
        block = store.read_block(b)
        found.update(zip(block.lines.tolist(), block.weights.tolist()))
    assert found == {i + 1: float(x) for i, x in enumerate(w)}


def test_convert_refuses_hashing_options_without_vw_and_out_of_range(tmp_path, small_libsvm, small_vw, capsys):
    for argv, fragment in (
        ([small_libsvm, tmp_path / "o", "--hash-bits", "18"], "--hash-bits and --hash-all hash VW's feature names"),
        ([small_vw, tmp_path / "o", "--format", "vw", "--hash-bits", "31"], "hash_bits must be an integer in 1..30"),
        ([small_vw, tmp_path / "o", "--format", "vw", "--csv", "0"], "give --csv or --format vw, not both"),
    ):
        code, _, err = run(capsys, "convert", *argv)
        assert code == 2 and fragment in err and err.count("\n") == 1, err
    code, _, err = run(capsys, "convert", small_vw, tmp_path / "o")  # VW text read as LIBSVM: the first line says so
    assert code == 2 and f"{small_vw}:1: '|a' is not an index:value pair" in err


# ---- train, predict, stream -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_split(tmp_path_factory, small_libsvm):
    """small.txt's first 2,400 lines to train, the rest to test; each as LIBSVM and VW text, and VW stores."""
    folder = tmp_path_factory.mktemp("split")
    lines = small_libsvm.read_text().splitlines(keepends=True)
    (folder / "train.txt").write_text("".join(lines[:2400]))
    (folder / "test.txt").write_text("".join(lines[2400:]))
    for name in ("train", "test"):
        write_vw(folder / f"{name}.txt", folder / f"{name}.vw")
        convert(folder / f"{name}.vw", folder / f"{name}.bsvm", text_format="vw", dtype="float64", progress=False)
    return folder


def test_predict_hashes_text_as_the_model_was_trained(small_split, tmp_path, capsys):
    """A model of a VW store reads VW text into the same columns: the text's predictions and decision values are the
    store's (float64 values in both), in order; the model file keeps the hashing."""
    model = train(small_split / "train.bsvm", verbose=0, max_outer=30).model
    assert model.text_format == BlockStore(small_split / "train.bsvm").text_format
    model.save(tmp_path / "m.h5")
    assert LinearModel.load(tmp_path / "m.h5").text_format == model.text_format
    text = predict(tmp_path / "m.h5", small_split / "test.vw", tmp_path / "text.out", decision_values=True)
    store = predict(tmp_path / "m.h5", small_split / "test.bsvm", tmp_path / "store.out", decision_values=True)
    assert text.rows == 600 and text.correct == store.correct and text.accuracy > 0.7
    assert (tmp_path / "text.out").read_text() == (tmp_path / "store.out").read_text()
    code, out, _ = run(
        capsys, "predict", tmp_path / "m.h5", small_split / "test.vw", "--format", "vw", "--hash-bits", "18"
    )
    assert code == 0 and f"({text.correct}/600)" in out


def test_predict_refuses_another_hashing_or_format(small_split, small_libsvm, tmp_path, capsys):
    train(small_split / "train.bsvm", verbose=0, max_outer=3).model.save(tmp_path / "vw.h5")
    convert(small_libsvm, tmp_path / "plain.bsvm", progress=False)
    train(tmp_path / "plain.bsvm", verbose=0, max_outer=3).model.save(tmp_path / "plain.h5")
    convert(small_split / "test.vw", tmp_path / "b20.bsvm", text_format="vw", hash_bits=20, progress=False)
    cases = [
        (
            ["vw.h5", small_split / "test.vw", "--hash-bits", "20"],
            "the text is declared VW text, names hashed into 2^20",
        ),
        (["vw.h5", small_split / "test.vw", "--hash-all"], "names and digit names hashed"),
        (["vw.h5", small_split / "test.vw", "--format", "libsvm"], "it cannot read LIBSVM text"),
        (["plain.h5", small_split / "test.vw", "--format", "vw"], "not on hashed VW text: it cannot read VW text"),
        (["vw.h5", tmp_path / "b20.bsvm"], "b20.bsvm was read from VW text, names hashed into 2^20 columns"),
        (["vw.h5", tmp_path / "plain.bsvm"], "plain.bsvm was read from LIBSVM text (integer indices), but"),
        (["plain.h5", small_split / "test.bsvm"], "test.bsvm was read from VW text"),
    ]
    for (model, *rest), fragment in cases:
        code, _, err = run(capsys, "predict", tmp_path / model, *rest)
        assert code == 2 and fragment in err and err.count("\n") == 1, (fragment, err)
    with pytest.raises(ModelError, match="trained on VW text"):
        predict(tmp_path / "vw.h5", small_split / "test.vw", hash_bits=17)


def test_stream_and_predict_name_the_line_of_a_malformed_vw_line(small_split, tmp_path, capsys):
    bad = tmp_path / "bad.vw"
    lines = (small_split / "test.vw").read_text().splitlines()
    lines[4] = lines[4].replace("|a ", "|a x:oops ")
    bad.write_text("\n".join(lines) + "\n")
    train(small_split / "train.bsvm", verbose=0, max_outer=2).model.save(tmp_path / "m.h5")
    for argv in (["predict", tmp_path / "m.h5", bad], ["stream", bad, tmp_path / "s.h5", "--format", "vw", "-q"]):
        code, _, err = run(capsys, *argv)
        first, *rest = err.rstrip("\n").split("\n")
        message = f"blocksvm: error: {bad}:5: value in 'x:oops' is not a number"
        hint = " (the stream stops there, no model written: --skip-bad-lines skips such lines and counts them)"
        assert code == 2 and first == message + hint * (argv[0] == "stream"), err
        assert len(rest) == 1 and rest[0].startswith("    ")


def test_stream_reads_vw_text_and_its_model_predicts_vw_text(small_split, tmp_path, capsys):
    """The stream over VW text learns what it learns over the LIBSVM text it was written from (no collision among
    small.txt's 400 names in 2^18 columns, so the same rows up to the columns' names); its model keeps the hashing."""
    assert len({column(f"f{i}", "a" if i < 40 else "b", 18) for i in range(1, 401)}) == 400  # as write_vw names them
    vw = stream(small_split / "train.vw", verbose=0, text_format="vw", average=True)
    plain = stream(small_split / "train.txt", verbose=0, average=True)
    assert vw.summary["progressive_accuracy"] == plain.summary["progressive_accuracy"]
    assert vw.summary["mistakes"] == plain.summary["mistakes"]
    assert vw.model.text_format == {"format": "vw", "hash": HASH, "bits": 18, "hash_all": False}
    vw.model.save(tmp_path / "s.h5")
    plain.model.save(tmp_path / "p.h5")
    assert (
        predict(tmp_path / "s.h5", small_split / "test.vw").correct
        == predict(tmp_path / "p.h5", small_split / "test.txt").correct
    )
    code, _, err = run(
        capsys,
        "stream",
        small_split / "train.vw",
        tmp_path / "w.h5",
        "--format",
        "vw",
        "--warm-start",
        tmp_path / "p.h5",
        "-q",
    )
    assert code == 2 and "was trained on LIBSVM text (integer indices); this data is VW text" in err


def test_stream_learns_importance_weights_and_refuses_an_unknown_text_format(tmp_path, small_split, capsys):
    """An importance weight scales the row's update (tests/test_instance_weights.py has the oracles): the weighted
    stream's model is not the unweighted one's, and its summary gives the weight of the rows seen."""
    write_vw(small_split / "test.txt", tmp_path / "w.vw", weights=lambda row: "1" if row != 0 else "2.5")  # a mistake
    write_vw(small_split / "test.txt", tmp_path / "u.vw")
    weighted = stream(tmp_path / "w.vw", verbose=0, text_format="vw")
    plain = stream(tmp_path / "u.vw", verbose=0, text_format="vw")
    assert weighted.summary["weight"] == weighted.summary["examples"] + 1.5 and "weight" not in plain.summary
    assert not np.array_equal(weighted.model.coef, plain.model.coef)
    with pytest.raises(ParameterError, match="text_format"):
        stream(tmp_path / "w.vw", verbose=0, text_format="csv")


# ---- a9a: named features at 18 bits train as the integer indices do --------------------------------------------


def test_a9a_as_vw_text_at_18_bits_reaches_a9as_accuracy(shared_data, tmp_path):
    """a9a written as VW text (its 123 indices as names in two namespaces, an explicit importance weight of 1 on
    every third line) converts at ``--hash-bits 18`` and trains to the test accuracy of the integer-indexed a9a
    within 0.3 points (both trained alike, C = 1, squared hinge), predicting a9a.t's VW text as it is."""
    write_vw(shared_data / "a9a", tmp_path / "a9a.vw", weights=lambda row: "1" if row % 3 == 0 else None)
    write_vw(shared_data / "a9a.t", tmp_path / "a9a.t.vw")
    summary = convert(tmp_path / "a9a.vw", tmp_path / "a9a.vw.bsvm", text_format="vw", hash_bits=18, progress=False)
    used = len(np.unique(load_libsvm(shared_data / "a9a")[0].indices))
    assert summary.weights is None and summary.features_used == used  # no two of a9a's names collide at 18 bits
    convert(shared_data / "a9a", tmp_path / "a9a.bsvm", progress=False)
    hashed = train(tmp_path / "a9a.vw.bsvm", verbose=0, tol=1e-3).model
    indexed = train(tmp_path / "a9a.bsvm", verbose=0, tol=1e-3).model
    vw_accuracy = predict(hashed, tmp_path / "a9a.t.vw").accuracy
    accuracy = predict(indexed, shared_data / "a9a.t").accuracy
    assert accuracy > 0.84 and abs(vw_accuracy - accuracy) <= 0.003, (vw_accuracy, accuracy)
