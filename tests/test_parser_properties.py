"""Property-based tests of the LIBSVM reader: generated files, read as scikit-learn reads them.

Oracles: ``sklearn.datasets.load_svmlight_file`` for every valid file, and the generator itself for
line numbers and for where a corruption was put.

The generated text stays in the **common ground** of blocksvm and scikit-learn, where both must
give the same rows:

- a line is a label, an optional ``qid:[+-]<digits>`` right after it, ``index:value`` pairs with
  strictly increasing indices, and an optional ``#`` comment (after white space or glued to the
  last token); comment-only and blank lines are not rows;
- labels and values are finite decimal literals: optional sign, digits with an optional point
  (``5.``, ``.5``), an optional exponent (``e``/``E``, optional sign, leading zeros), long ones
  too (more than 19 digits: blocksvm's slow path), and magnitudes below 1e37 so that every value
  fits in float32;
- indices are decimal integers, possibly with ``+`` or leading zeros, below 2**31; the file is
  zero-based iff some index is 0 (``zero_based="auto"``, both libraries' rule);
- tokens are separated by runs of spaces and tabs, lines may start and end with white space and
  end in LF or CRLF, the last line may lack its newline;
- at least one feature in the file.

Outside it, on purpose: blocksvm refuses NaN and infinite labels and values (scikit-learn reads
them), values that overflow the store's dtype, and spellings only Python's ``float``/``int`` take
(``1_000``, ``infinity``); scikit-learn stops at a C ``int`` index; a file without any feature has
0 columns in blocksvm and 1 in scikit-learn.

The bulk of the examples goes through :func:`blocksvm.io.libsvm.load_libsvm` and
:func:`~blocksvm.io.libsvm.parse_chunk` (milliseconds each); fewer go through the full converter.
Every run draws the same examples (``derandomize``); ``deadline=None`` because the first example
may wait for numba to load or compile the kernels.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np
import pytest
from conftest import assert_store_matches_sklearn
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from blocksvm.errors import BlocksvmError, InputFormatError
from blocksvm.io import _parse_kernels as K
from blocksvm.io.conversion import convert
from blocksvm.io.libsvm import _REASONS, iter_parsed, load_libsvm, parse_chunk


def _settings(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None)


# ---------------------------------------------------------------------------------------------
# generating valid text

DIGITS = "0123456789"
SIGN = st.sampled_from(["", "+", "-"])


@st.composite
def decimal_literals(draw) -> str:
    """``[sign] digits [. digits] [e|E [sign] digits]``, at most 1e12 * 1e24 in magnitude."""
    whole = draw(st.text(DIGITS, max_size=12))
    fraction = draw(st.none() | st.text(DIGITS, max_size=12))
    if not whole and not fraction:
        whole = draw(st.text(DIGITS, min_size=1, max_size=3))  # "" and "." are not numbers
    text = whole if fraction is None else f"{whole}.{fraction}"
    if draw(st.booleans()):
        exponent = draw(st.integers(-330, 24))
        sign = "-" if exponent < 0 else draw(st.sampled_from(["", "+"]))
        text += draw(st.sampled_from("eE")) + sign + str(abs(exponent)).zfill(draw(st.integers(1, 3)))
    return draw(SIGN) + text


NUMBERS = st.one_of(
    decimal_literals(),
    st.floats(-1e37, 1e37, allow_nan=False, allow_infinity=False).map(repr),  # "1e-05", "-0.0", "1.5e+20"
    st.integers(-(10**6), 10**6).map(str),
)
LABELS = st.one_of(st.sampled_from(["1", "-1", "+1", "0", "2", "1e0", "-1.5E-3", "1.", "-.5"]), NUMBERS)
SPACE = st.text(" \t", min_size=1, max_size=3)
MAYBE_SPACE = st.text(" \t", max_size=3)
COMMENT = st.text(st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\t\ré"), max_size=15)
ENDING = st.sampled_from(["\n", "\r\n"])


@dataclass(frozen=True)
class Row:
    """One data line, as tokens and the white space, comment and ending they are rendered with."""

    tokens: tuple[str, ...]  # label, then an optional qid, then index:value pairs
    indices: tuple[int, ...]
    has_qid: bool
    lead: str
    seps: tuple[str, ...]
    trail: str
    comment: str | None
    ending: str

    @property
    def first_pair(self) -> int:
        return 2 if self.has_qid else 1

    def render(self) -> str:
        text = self.lead + self.tokens[0]
        for i, token in enumerate(self.tokens[1:]):
            text += self.seps[i % len(self.seps)] + token
        text += self.trail
        if self.comment is not None:
            text += "#" + self.comment
        return text + self.ending


@dataclass(frozen=True)
class Other:
    """A blank or comment-only line."""

    text: str
    ending: str

    def render(self) -> str:
        return self.text + self.ending


@st.composite
def rows(draw, lowest: int, highest: int, min_features: int = 0) -> Row:
    indices = sorted(draw(st.sets(st.integers(lowest, highest), min_size=min_features, max_size=8)))
    pairs = [draw(st.sampled_from(["{}", "+{}", "0{}", "00{}"])).format(i) + ":" + draw(NUMBERS) for i in indices]
    qid = draw(st.none() | st.builds(lambda s, n: f"qid:{s}{n}", SIGN, st.integers(0, 10**6)))
    tokens = (draw(LABELS),) + ((qid,) if qid else ()) + tuple(pairs)
    return Row(
        tokens,
        tuple(indices),
        qid is not None,
        draw(MAYBE_SPACE),
        tuple(draw(st.lists(SPACE, min_size=1, max_size=3))),
        draw(MAYBE_SPACE),
        draw(st.none() | COMMENT),
        draw(ENDING),
    )


def others():
    blank = MAYBE_SPACE
    comment = st.builds(lambda lead, text: f"{lead}#{text}", MAYBE_SPACE, COMMENT)
    return st.builds(Other, blank | comment, ENDING)


@dataclass(frozen=True)
class Doc:
    lines: tuple[Row | Other, ...]
    final_newline: bool

    def text(self) -> str:
        text = "".join(line.render() for line in self.lines)
        if not self.final_newline:
            text = text.removesuffix("\n").removesuffix("\r")
        return text

    @property
    def row_lines(self) -> list[int]:
        """1-based line numbers of the data rows."""
        return [n + 1 for n, line in enumerate(self.lines) if isinstance(line, Row)]


@st.composite
def docs(draw, max_lines: int = 12) -> Doc:
    lowest = draw(st.sampled_from([0, 1]))  # with 0, the file is zero-based when some 0 is drawn
    highest = draw(st.sampled_from([4, 60, 100_000]))
    line = st.one_of(rows(lowest, highest), rows(lowest, highest), others())
    lines = draw(st.lists(line, max_size=max_lines - 1))
    lines.insert(draw(st.integers(0, len(lines))), draw(rows(lowest, highest, min_features=1)))
    return Doc(tuple(lines), draw(st.booleans()))


# ---------------------------------------------------------------------------------------------
# the oracle


def write(folder, doc: Doc, name: str = "data.txt"):
    path = folder / name
    path.write_bytes(doc.text().encode())
    return path


def assert_bitwise_same(X, y, X_ref, y_ref) -> None:
    """Same shape, CSR structure, labels, and value bits (so -0.0 is not 0.0)."""
    assert X.shape == X_ref.shape and X.dtype == X_ref.dtype
    np.testing.assert_array_equal(X.indptr, X_ref.indptr)
    np.testing.assert_array_equal(X.indices, X_ref.indices)
    bits = np.uint32 if X.dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(X.data.view(bits), X_ref.data.view(bits))
    np.testing.assert_array_equal(np.asarray(y).view(np.uint64), np.asarray(y_ref).view(np.uint64))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("properties")


@_settings(100)
@given(doc=docs())
def test_valid_text_reads_as_scikit_learn_reads_it(folder, doc):
    path = write(folder, doc)
    for dtype in (np.float32, np.float64):
        X, y, lines = load_libsvm(path, dtype=dtype)
        X_ref, y_ref = load_svmlight_file(str(path), dtype=dtype)
        assert_bitwise_same(X, y, X_ref, y_ref)
        np.testing.assert_array_equal(lines, doc.row_lines)


@_settings(50)
@given(doc=docs(max_lines=20), chunk_bytes=st.integers(1, 80), workers=st.integers(1, 3))
def test_reading_in_chunks_gives_the_rows_of_one_parse(folder, doc, chunk_bytes, workers):
    path = write(folder, doc)
    whole = parse_chunk(path.read_bytes(), 1, str(path), dtype=np.float64)
    pieces = list(iter_parsed(path, chunk_bytes=chunk_bytes, workers=workers, dtype=np.float64))
    np.testing.assert_array_equal(np.concatenate([c.lines for c in pieces]), whole.lines)
    np.testing.assert_array_equal(np.concatenate([c.labels for c in pieces]), whole.labels)
    np.testing.assert_array_equal(np.concatenate([c.indices for c in pieces]), whole.indices)
    np.testing.assert_array_equal(np.concatenate([c.data for c in pieces]), whole.data)
    np.testing.assert_array_equal(np.concatenate([np.diff(c.indptr) for c in pieces]), np.diff(whole.indptr))
    assert max(c.max_index for c in pieces) == whole.max_index
    assert min(c.min_index for c in pieces) == whole.min_index
    assert sum(c.text_bytes for c in pieces) == len(path.read_bytes())


STORES = itertools.count()


@_settings(25)
@given(doc=docs(), block_rows=st.integers(1, 5), shuffle=st.booleans())
def test_valid_text_converts_to_the_rows_scikit_learn_reads(folder, doc, block_rows, shuffle):
    path = write(folder, doc)
    for dtype in ("float32", "float64"):
        out = folder / f"store-{next(STORES)}"
        summary = convert(path, out, block_rows=block_rows, shuffle=shuffle, dtype=dtype, progress=False)
        assert summary.rows == len(doc.row_lines)
        assert_store_matches_sklearn(out, path, dtype=np.dtype(dtype))


# ---------------------------------------------------------------------------------------------
# corruptions: one bad token on one line, reported with file, line and token

NOT_A_NUMBER = ["abc", "1.5.2", "1e", "--1", "x", "1:2", "0x10", "1,5", ".", "+", "e5", "1e+", "1_0"]
NOT_FINITE = ["nan", "NaN", "inf", "-inf", "+INF", "Infinity", "1e400", "-2.5E+999"]


@dataclass(frozen=True)
class Corruption:
    row: Row
    token: str  # as the message must quote it
    reason: str  # the message after "<file>:<line>: "


def _insert(row: Row, at: int, token: str) -> Row:
    return replace(row, tokens=row.tokens[:at] + (token,) + row.tokens[at:])


def _next_index(row: Row) -> int:
    return row.indices[-1] + 1 if row.indices else 1


@st.composite
def corruptions(draw, row: Row) -> Corruption:
    """A bad token put into ``row`` where the reader meets it before anything else wrong."""
    anywhere = st.integers(1, len(row.tokens))
    kinds = [
        "label",
        "nonfinite label",
        "no colon",
        "negative",
        "bad index",
        "too large",
        "bad qid",
        "bad value",
        "nonfinite value",
    ]
    if row.indices:
        kinds += ["decreasing", "qid after features"]
    kind = draw(st.sampled_from(kinds))
    if kind in ("label", "nonfinite label"):
        token = draw(st.sampled_from(NOT_A_NUMBER + ["yes", "x1", "1:2"] if kind == "label" else NOT_FINITE))
        code = K.BAD_LABEL if kind == "label" else K.NONFINITE_LABEL
        return _corruption(replace(row, tokens=(token,) + row.tokens[1:]), token, code)
    if kind == "no colon":
        token = draw(st.sampled_from(["5", "abc", "5=1", "3;2", "3:", ":5", "12345678901234567890"]))
        return _corruption(_insert(row, draw(anywhere), token), token, K.BAD_PAIR)
    if kind == "negative":
        token = f"-{draw(st.integers(0, 10**12))}:{draw(NUMBERS)}"
        return _corruption(_insert(row, draw(anywhere), token), token, K.NEGATIVE_INDEX)
    if kind == "bad index":
        token = draw(st.sampled_from(["x", "1.5", "1e3", "+", "0x1", "3a", "+-3"])) + ":" + draw(NUMBERS)
        return _corruption(_insert(row, draw(anywhere), token), token, K.BAD_INDEX)
    if kind == "too large":
        token = f"{draw(st.integers(K.MAX_INDEX + 1, 10**30))}:{draw(NUMBERS)}"
        return _corruption(_insert(row, draw(anywhere), token), token, K.INDEX_TOO_LARGE)
    if kind == "bad qid":
        token = draw(st.sampled_from(["qid:", "qid:x", "qid:1.5", "qid:1a", "qid:--1", "qid:1:2"]))
        tokens = row.tokens[:1] + (token,) + row.tokens[row.first_pair :]
        return _corruption(replace(row, tokens=tokens), token, K.BAD_QID)
    if kind == "qid after features":
        at = draw(st.integers(row.first_pair + 1, len(row.tokens)))
        token = f"qid:{draw(st.integers(0, 99))}"
        return _corruption(_insert(row, at, token), token, K.BAD_QID)
    if kind in ("bad value", "nonfinite value"):
        value = draw(st.sampled_from(NOT_A_NUMBER if kind == "bad value" else NOT_FINITE))
        token = f"{_next_index(row)}:{value}"
        code = K.BAD_VALUE if kind == "bad value" else K.NONFINITE_VALUE
        return _corruption(_insert(row, len(row.tokens), token), token, code)
    # decreasing or repeated: after pair j, an index no larger than pair j's
    j = draw(st.integers(0, len(row.indices) - 1))
    index = draw(st.integers(0, row.indices[j]))
    token = f"{index}:{draw(NUMBERS)}"
    code = K.DUPLICATE_INDEX if index == row.indices[j] else K.NOT_INCREASING
    return _corruption(_insert(row, row.first_pair + j + 1, token), token, code)


def _corruption(row: Row, token: str, code: int) -> Corruption:
    return Corruption(row, token, _REASONS[code].format(token=token))


@st.composite
def corrupted_docs(draw, max_lines: int = 12) -> tuple[Doc, Doc, int, str]:
    """``(bad doc, doc without the bad line's row, bad line number, expected reason)``."""
    doc = draw(docs(max_lines))
    at = draw(st.sampled_from([n for n, line in enumerate(doc.lines) if isinstance(line, Row)]))
    bad = draw(corruptions(doc.lines[at]))
    lines = list(doc.lines)
    lines[at] = bad.row
    kept = list(doc.lines)
    kept[at] = Other("", doc.lines[at].ending)  # a blank line keeps the other rows' line numbers
    return Doc(tuple(lines), doc.final_newline), Doc(tuple(kept), doc.final_newline), at + 1, bad.reason


def assert_reports(error: BaseException, path, line: int, reason: str) -> None:
    assert isinstance(error, BlocksvmError) and isinstance(error, InputFormatError)
    assert (error.path, error.line) == (str(path), line)
    first, shown = str(error).split("\n")
    assert first == f"{path}:{line}: {reason}"
    assert shown.startswith("    ") and shown.strip()  # the offending line


@_settings(75)
@given(case=corrupted_docs(), chunk_bytes=st.sampled_from([7, 64, 1 << 20]))
def test_a_bad_token_is_reported_with_file_line_and_token(folder, case, chunk_bytes):
    doc, _, line, reason = case
    path = write(folder, doc, "bad.txt")
    with pytest.raises(InputFormatError) as raised:
        list(iter_parsed(path, chunk_bytes=chunk_bytes))
    assert_reports(raised.value, path, line, reason)


@_settings(20)
@given(case=corrupted_docs())
def test_the_converter_refuses_a_bad_token_or_skips_its_line(folder, case):
    doc, clean, line, reason = case
    path = write(folder, doc, "bad.txt")
    out = folder / f"store-{next(STORES)}"
    with pytest.raises(InputFormatError) as raised:
        convert(path, out, block_rows=3, progress=False)
    assert_reports(raised.value, path, line, reason)
    assert not out.exists()
    if not any(isinstance(r, Row) and r.indices for r in clean.lines):
        return  # no feature left: outside the common ground
    summary = convert(path, out, block_rows=3, skip_bad_lines=True, progress=False)
    assert summary.skipped_lines == 1 and summary.skipped_examples == [f"{path}:{line}: {reason}"]
    assert_store_matches_sklearn(out, write(folder, clean, "clean.txt"))


@_settings(50)
@given(doc=docs(), value=st.sampled_from(["3.5e38", "1e39", "-1e300", "1" + "0" * 45]))
def test_a_value_beyond_float32_is_refused_in_float32_only(folder, doc, value):
    at = doc.row_lines[-1] - 1
    row = doc.lines[at]
    lines = list(doc.lines)
    lines[at] = _insert(row, len(row.tokens), f"{_next_index(row)}:{value}")
    path = write(folder, Doc(tuple(lines), doc.final_newline), "big.txt")
    with pytest.raises(InputFormatError) as raised:
        load_libsvm(path, dtype=np.float32)
    error = raised.value
    assert (error.path, error.line) == (str(path), at + 1)
    assert str(error) == f"{path}:{at + 1}: a value does not fit in float32 (convert with --dtype float64)"
    X, y, _ = load_libsvm(path, dtype=np.float64)
    X_ref, y_ref = load_svmlight_file(str(path), dtype=np.float64)
    assert_bitwise_same(X, y, X_ref, y_ref)
