"""The LIBSVM tokenizer and number parser, one format rule at a time.

Oracles: Python's ``float`` for numbers, scikit-learn's ``load_svmlight_file`` for whole files,
hand-written expectations for lines and errors.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import struct
import threading
from decimal import Decimal

import numpy as np
import pytest
from conftest import assert_same_rows
from sklearn.datasets import load_svmlight_file

from blocksvm._page_cache import read_soon
from blocksvm.errors import InputFormatError
from blocksvm.io._float_kernels import FAST, MALFORMED, NONFINITE, SLOW, parse_float
from blocksvm.io.libsvm import iter_parsed, load_libsvm, parse_chunk

# ---------------------------------------------------------------------------------------------
# parse_float against Python's float


def _parse(text: str, delimiter: bytes = b"\n") -> tuple[int, float, int]:
    buf = np.frombuffer(text.encode() + delimiter, np.uint8)
    status, value, end = parse_float(buf, 0)
    return int(status), float(value), int(end)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)  # tells -0.0 from 0.0


def _significant_digits(text: str) -> int:
    mantissa = text.lstrip("+-").lower().split("e")[0].replace(".", "")
    return len(mantissa.strip("0"))


def _random_decimal(rng: np.random.Generator) -> str:
    """A decimal literal: random digits, point, leading/trailing zeros, sign and exponent."""
    digits = "".join(rng.choice(list("0123456789"), rng.integers(1, 24)))
    if rng.random() < 0.2:
        digits = "0" * rng.integers(1, 25) + digits
    if rng.random() < 0.2:
        digits += "0" * rng.integers(1, 25)
    point = rng.integers(0, len(digits) + 1)
    text = digits if rng.random() < 0.2 else digits[:point] + "." + digits[point:]
    if rng.random() < 0.5:
        text += rng.choice(["e", "E"]) + rng.choice(["", "+", "-"]) + str(rng.integers(0, 330))
    return rng.choice(["", "-", "+"]) + text


def _double_strings(rng: np.random.Generator, n: int) -> list[str]:
    """Shortest and 17-digit forms of random doubles over the whole exponent range."""
    bits = rng.integers(0, 2**63 - 2**52, n, dtype=np.int64)  # every finite positive double
    values = bits.view(np.float64)
    out = []
    for v in values[np.isfinite(values)]:
        out += [repr(float(v)), f"{v:.17g}", f"{-v:.16e}"]
    return out


def _ties(rng: np.random.Generator, n: int) -> list[str]:
    """Decimal midpoints between adjacent doubles of 2**53..2**63 (round-half-even cases)."""
    out = []
    for exponent in rng.integers(53, 63, n):
        x = float(2 ** int(exponent) + 2 * int(rng.integers(0, 2**20)) * 2 ** int(exponent - 52))
        middle = (Decimal(x) + Decimal(np.nextafter(x, np.inf))) / 2
        text = str(int(middle))
        stripped = text.rstrip("0")
        out += [text, f"{stripped}e{len(text) - len(stripped)}"]
    return out


EDGE_NUMBERS = [
    "0",
    "-0",
    "+0",
    "0.0",
    "-0.0",
    "00000",
    ".5",
    "5.",
    "-.5",
    "1e0",
    "1E+0",
    "1e-0",
    "1.e5",
    "0.1",
    "0.2",
    "0.3",
    "1e22",
    "1e23",
    "9007199254740992",
    "9007199254740993",
    "9007199254740995",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678",
    "1234567890123456789",
    "12345678901234567890",
    "0.000000000000000000000000001",
    "1.7976931348623157e308",
    "1.7976931348623158e308",
    "1.7976931348623159e308",
    "2.2250738585072014e-308",
    "2.2250738585072011e-308",
    "4.9406564584124654e-324",
    "1e-400",
    "1e310",
    "1e-99999999999",
    "0e99999999999",
    "0.000001e-330",
    "7.3177701707893310e+15",
    "2.2250738585072012e-308",
    "0.0384615",
    "3.14159265358979323846",
]


def _check_against_float(text: str) -> int:
    status, value, end = _parse(text)
    assert end == len(text), text
    expected = float(text)
    if status == FAST:
        assert _bits(value) == _bits(expected), (text, value, expected)
    elif status == NONFINITE:
        assert np.isinf(expected), text
    else:
        assert status == SLOW, text
        # subnormal, underflow to 0, or rounding up to the smallest normal from below it
        below_normal = abs(expected) <= 2.2250738585072014e-308
        assert below_normal or _significant_digits(text) > 19, text
    return status


@pytest.mark.parametrize("text", EDGE_NUMBERS)
def test_parse_float_edge_cases_match_python_float(text):
    _check_against_float(text)


def test_parse_float_random_decimals_match_python_float():
    rng = np.random.default_rng(20240611)
    texts = [_random_decimal(rng) for _ in range(6000)]
    texts += _double_strings(rng, 3000) + _ties(rng, 1000)
    statuses = [_check_against_float(t) for t in texts]
    # the fast paths must do the work: slow conversions are only for long or subnormal input
    assert statuses.count(FAST) > 0.8 * len(texts)


def test_parse_float_short_numbers_are_always_fast():
    rng = np.random.default_rng(5)
    for _ in range(3000):
        digits = str(rng.integers(1, 10**15))
        point = rng.integers(0, len(digits))
        text = f"{digits[:point]}.{digits[point:]}e{rng.integers(-290, 290)}"  # stays normal
        assert _check_against_float(text) == FAST, text


@pytest.mark.parametrize(
    "text, status, end",
    [
        ("", MALFORMED, 0),
        ("+", MALFORMED, 1),
        ("-", MALFORMED, 1),
        (".", MALFORMED, 1),
        ("e5", MALFORMED, 0),
        ("1e", MALFORMED, 2),
        ("1e+", MALFORMED, 3),
        ("-.e1", MALFORMED, 2),
        ("nan", NONFINITE, 3),
        ("NaN", NONFINITE, 3),
        ("-inf", NONFINITE, 4),
        ("Infinity", NONFINITE, 8),
        ("+INF", NONFINITE, 4),
        ("nab", MALFORMED, 0),
        ("1.5x", FAST, 3),
        ("1:2", FAST, 1),
        ("1.2.3", FAST, 3),
        ("0x10", FAST, 1),
        ("--1", MALFORMED, 1),
        ("infinit", NONFINITE, 3),
    ],
)
def test_parse_float_stops_where_the_number_ends(text, status, end):
    got_status, _, got_end = _parse(text)
    assert (got_status, got_end) == (status, end)


def test_parse_float_stops_at_any_delimiter():
    for delimiter in (b" ", b"\t", b"\r", b"#", b"\n"):
        assert _parse("2.5", delimiter) == (FAST, 2.5, 3)


# ---------------------------------------------------------------------------------------------
# whole lines, against scikit-learn


def _same_as_sklearn(path, *, zero_based="auto", n_features=None, **sklearn_kwargs):
    X, y, lines = load_libsvm(path, n_features, zero_based=zero_based)
    X_ref, y_ref, *_ = load_svmlight_file(str(path), n_features=n_features, zero_based=zero_based, **sklearn_kwargs)
    assert_same_rows(X, y, X_ref, y_ref)
    return X, y, lines


def test_labels_of_every_spelling(write_text):
    path = write_text("+1 1:1\n-1 1:1\n1 2:1\n0 1:1\n2.5 3:1\n1e0 1:2\n-0.5e1 2:1\n")
    _, y, _ = _same_as_sklearn(path)
    np.testing.assert_array_equal(y, [1, -1, 1, 0, 2.5, 1, -5])


def test_multiclass_integer_labels(write_text):
    path = write_text("3 1:1\n7 2:1\n-2 3:1\n3 1:0.5\n11 2:0.25\n")
    _, y, _ = _same_as_sklearn(path)
    np.testing.assert_array_equal(y, [3, 7, -2, 3, 11])


def test_one_based_file_is_detected(write_text):
    path = write_text("1 1:0.5 3:1\n-1 2:2\n")
    X, _, _ = _same_as_sklearn(path)
    assert X.shape == (2, 3)
    assert X[0, 0] == 0.5  # index 1 went to column 0


def test_zero_based_file_is_detected_by_an_index_0(write_text):
    path = write_text("1 1:0.5 3:1\n-1 0:2\n")
    X, _, _ = _same_as_sklearn(path)
    assert X.shape == (2, 4)
    assert X[1, 0] == 2.0 and X[0, 1] == 0.5


@pytest.mark.parametrize("zero_based", [True, False])
def test_explicit_index_base(write_text, zero_based):
    path = write_text("1 1:0.5 3:1\n-1 2:2\n")
    X, _, _ = _same_as_sklearn(path, zero_based=zero_based)
    assert X.shape == (2, 4 if zero_based else 3)


def test_qid_is_accepted_and_ignored(write_text):
    path = write_text("1 qid:3 1:0.5 2:1\n-1 qid:-7 2:2\n1 qid:+1 # q\n")
    X, y, _ = _same_as_sklearn(path)
    assert X.nnz == 3


def test_comments_after_hash_are_ignored(write_text):
    path = write_text("1 1:1 # 2:5 a comment\n-1 2:3# glued\n1# no features\n")
    X, y, _ = _same_as_sklearn(path)
    assert X.toarray().tolist() == [[1, 0], [0, 3], [0, 0]]


def test_blank_and_comment_only_lines_are_not_rows(write_text):
    path = write_text("# header\n\n1 1:1\n   \t\n-1 2:1\n  # indented comment\n\n")
    _, y, lines = _same_as_sklearn(path)
    np.testing.assert_array_equal(y, [1, -1])
    np.testing.assert_array_equal(lines, [3, 5])


def test_windows_line_endings(write_text):
    path = write_text("1 1:0.5 2:1\r\n-1 3:2\r\n\r\n1 1:1\r\n")
    X, y, lines = _same_as_sklearn(path)
    np.testing.assert_array_equal(lines, [1, 2, 4])
    assert X[1, 2] == 2.0


def test_scientific_notation(write_text):
    path = write_text("1 1:1e-3 2:2.5E+2 3:-4e0 4:.5e1 5:7E-320\n")
    X, _, _ = _same_as_sklearn(path)
    assert X[0, 1] == 250.0 and X[0, 4] == float("7E-320")  # a subnormal goes the slow way


def test_last_line_without_newline(write_text):
    path = write_text("1 1:1\n-1 2:0.5")
    X, y, lines = _same_as_sklearn(path)
    np.testing.assert_array_equal(lines, [1, 2])
    assert X[1, 1] == 0.5


def test_long_numbers_are_exact(write_text):
    path = write_text(
        "1.0000000000000000000000001 007:1.00000000000000000000001 9:0.1000000000000000055511151231"
        "2578270211815834045410156251\n-1 +3:123456789012345678901234567890 4:5e-324# c\n"
    )
    X, y, _ = _same_as_sklearn(path)
    assert X[0, 6] == 1.0 and X[1, 2] == 1.2345678901234568e29


def test_lines_longer_than_a_chunk(write_text):
    row = " ".join(f"{i}:{i / 7:.6f}" for i in range(1, 300))
    path = write_text(f"1 {row}\n-1 {row}\n\n1 3:1\n")
    chunks = list(iter_parsed(path, chunk_bytes=64, dtype=np.float64))
    assert sum(c.n_rows for c in chunks) == 3
    lines = np.concatenate([c.lines for c in chunks])
    np.testing.assert_array_equal(lines, [1, 2, 4])
    X, _, _ = _same_as_sklearn(path)
    assert X.nnz == 2 * 299 + 1


def test_chunking_does_not_change_the_result(small_libsvm):
    whole = list(iter_parsed(small_libsvm))
    pieces = list(iter_parsed(small_libsvm, chunk_bytes=4096, workers=3))
    assert len(pieces) > 10 * len(whole)
    for field in ("indices", "data", "labels", "lines"):
        a = np.concatenate([getattr(c, field) for c in whole])
        b = np.concatenate([getattr(c, field) for c in pieces])
        np.testing.assert_array_equal(a, b)


def test_float32_values_round_like_sklearn(write_text):
    path = write_text("1 1:0.1 2:3.4028235e38 3:1.00000005960464477539\n")
    X, _, _ = load_libsvm(path, dtype=np.float32)
    X_ref, _ = load_svmlight_file(str(path), dtype=np.float32)
    assert X.dtype == np.float32 and (X != X_ref).nnz == 0


# ---------------------------------------------------------------------------------------------
# errors: file and line named, what is wrong said


BAD_LINES = [
    ("1 abc", "'abc' is not an index:value pair"),
    ("1 3", "'3' is not an index:value pair"),
    ("1 3:", "'3:' is not an index:value pair"),
    ("1 :5", "':5' is not an index:value pair"),
    ("1 x:5", "feature index in 'x:5' is not an integer"),
    ("1 1.5:2", "feature index in '1.5:2' is not an integer"),
    ("1 3:1 2:1", "'2:1' follows a larger index"),
    ("1 3:1 3:2", "feature index in '3:2' appears twice"),
    ("1 3:nan", "value in '3:nan' is NaN or infinite"),
    ("1 3:-Infinity", "value in '3:-Infinity' is NaN or infinite"),
    ("1 3:1e400", "value in '3:1e400' is NaN or infinite"),
    ("1 -3:1", "feature index in '-3:1' is negative"),
    ("1 3:abc", "value in '3:abc' is not a number"),
    ("1 3:1.5.2", "value in '3:1.5.2' is not a number"),
    ("1 3:1:2", "value in '3:1:2' is not a number"),
    ("abc 1:2", "label 'abc' is not a number"),
    ("1:2 3:4", "label '1:2' is not a number"),
    ("nan 1:2", "label 'nan' is not a finite number"),
    ("1 1:1 qid:2", "'qid:2' is not a valid qid"),
    ("1 qid:x 1:1", "'qid:x' is not a valid qid"),
    ("1 99999999999:1", "is larger than 2147483647, the largest 32-bit index"),
]


@pytest.mark.parametrize("bad, reason", BAD_LINES)
def test_malformed_line_is_reported_with_file_and_line(write_text, bad, reason):
    path = write_text(f"1 1:1\n\n{bad}\n-1 2:1\n")
    with pytest.raises(InputFormatError) as info:
        load_libsvm(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: "), message
    assert reason in message
    assert info.value.line == 3
    assert bad in message.splitlines()[1]  # the offending line is shown


def test_index_0_in_a_one_based_file(write_text):
    path = write_text("1 1:1\n-1 0:1 2:1\n")
    with pytest.raises(InputFormatError, match=r":2: feature index 0 in '0:1'"):
        load_libsvm(path, zero_based=False)
    X, _, _ = load_libsvm(path)  # auto: zero-based
    assert X.shape == (2, 3)


def test_value_overflowing_float32(write_text):
    path = write_text("1 1:1\n-1 1:1e39\n")
    with pytest.raises(InputFormatError, match=r":2: a value does not fit in float32"):
        load_libsvm(path, dtype=np.float32)
    X, _, _ = load_libsvm(path, dtype=np.float64)
    assert X[1, 0] == 1e39


def test_skip_bad_lines_skips_and_counts(write_text):
    path = write_text("1 1:1\n1 x:1\n-1 2:1\n1 3:1 3:2\n\n1 1:1e39\n-1 1:2\n")
    chunks = list(iter_parsed(path, skip_bad_lines=True, chunk_bytes=16))
    assert sum(c.n_skipped for c in chunks) == 3
    np.testing.assert_array_equal(np.concatenate([c.lines for c in chunks]), [1, 3, 7])
    errors = [e for c in chunks for e in c.skipped]
    assert [e.line for e in errors] == [2, 4, 6]


def test_skipped_lines_in_one_chunk_are_counted(write_text):
    path = write_text("1 1:1\n1 x:1\nfoo\n-1 2:1\n1 3:nan\n")
    (chunk,) = iter_parsed(path, skip_bad_lines=True)
    assert chunk.n_skipped == 3 and chunk.n_rows == 2
    assert chunk.skipped[0].line == 2  # the first one is kept as an example


def test_error_line_numbers_count_across_chunks(write_text):
    path = write_text("1 1:1\n" * 500 + "1 2:1 1:1\n")
    with pytest.raises(InputFormatError) as info:
        list(iter_parsed(path, chunk_bytes=100))
    assert info.value.line == 501


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputFormatError, match="no such file"):
        list(iter_parsed(tmp_path / "absent.txt"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_asking_the_system_to_read_a_file_ahead_never_waits_and_never_fails(tmp_path, monkeypatch):
    # the command line asks before it has looked at its input: a named pipe without a writer (whose opening would
    # wait for one), a folder and a missing file are passed over, and standard input is never asked
    failures = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "folder").mkdir()
    (tmp_path / "a.txt").write_bytes(b"1 1:2\n")
    assert read_soon("-") is None
    for name in ("pipe", "folder", "absent.txt", "a.txt"):
        thread = read_soon(tmp_path / name)
        thread.join(60)
        assert not thread.is_alive(), name
    assert failures == []


def test_parse_chunk_reports_rows_nnz_and_index_range():
    chunk = parse_chunk(b"1 4:1 9:2\n\n-1 2:1\n1\n", 10)
    assert (chunk.n_rows, chunk.nnz, chunk.min_index, chunk.max_index) == (3, 3, 2, 9)
    np.testing.assert_array_equal(chunk.lines, [10, 12, 13])
    np.testing.assert_array_equal(chunk.indptr, [0, 2, 3, 3])


def _open_descriptors_to(path) -> int:
    fd_dir = "/proc/self/fd"
    return sum(os.path.realpath(os.path.join(fd_dir, fd)) == str(path.resolve()) for fd in os.listdir(fd_dir))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files through /proc")
@pytest.mark.parametrize("compress", [None, gzip.compress, bz2.compress, lzma.compress])
@pytest.mark.parametrize("text", [b"1 1:2\n-1 2:3\n", b"1 1:2\n-1 x\n"], ids=["valid", "bad line"])
def test_the_input_file_is_closed_after_parsing(write_text, compress, text):
    # a decompressor leaves the file it reads open: the file must still be closed, also after an error
    path = write_text(compress(text) if compress else text)
    try:
        sum(chunk.labels.size for chunk in iter_parsed(path))
    except InputFormatError:
        assert text.endswith(b"x\n")
    assert _open_descriptors_to(path) == 0
