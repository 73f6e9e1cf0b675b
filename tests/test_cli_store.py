"""The ``convert``, ``info`` and ``generate`` commands: output, exit codes, and error messages."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import h5py
import pytest
from conftest import SMALL_SPEC

from blocksvm.cli import main
from blocksvm.errors import InputFormatError
from blocksvm.store import BlockStore


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_error(code: int, err: str, *fragments: str) -> None:
    """Exit code 2 and one message line (a parse error adds the offending text, indented)."""
    assert code == 2
    first, *rest = err.rstrip("\n").split("\n")
    assert first.startswith("blocksvm: error: "), err
    assert all(line.startswith("    ") for line in rest), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in first, (fragment, err)


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory, small_libsvm):
    path = tmp_path_factory.mktemp("cli") / "small.bsvm"
    assert main(["convert", str(small_libsvm), str(path), "-q", "--block-size", "1000"]) == 0
    return path


def test_convert_prints_a_summary(tmp_path, capsys, small_libsvm):
    code, out, err = run(capsys, "convert", small_libsvm, tmp_path / "s", "--block-size", "800")
    assert code == 0 and err == ""
    assert "3,000 rows" in out and "4 blocks" in out and "MB/s" in out


def test_convert_json_summary_and_options(tmp_path, capsys, small_libsvm):
    code, out, _ = run(
        capsys,
        "convert",
        small_libsvm,
        tmp_path / "s",
        "--json",
        "--no-shuffle",
        "--dtype",
        "float64",
        "--compression",
        "gzip-6",
        "--block-mb",
        "0.2",
        "--n-features",
        "500",
    )
    assert code == 0
    summary = json.loads(out)
    assert summary["rows"] == SMALL_SPEC.rows and summary["features"] == 500
    store = BlockStore(tmp_path / "s")
    assert summary["blocks"] == store.n_blocks > 1
    assert store.manifest["params"]["shuffle"] is False
    assert store.manifest["params"]["compression"] == "gzip-6"
    assert str(store.dtype) == "float64"


def test_info_text(capsys, cli_store):
    code, out, _ = run(capsys, "info", cli_store)
    assert code == 0
    assert "rows         3,000" in out and "block     2" in out


def test_info_json_has_the_documented_keys(capsys, cli_store):
    code, out, _ = run(capsys, "info", cli_store, "--json")
    info = json.loads(out)
    assert code == 0
    assert {"rows", "features", "nnz", "blocks", "labels"} <= info.keys()
    assert (info["rows"], info["blocks"]) == (3000, 3)
    assert sum(info["labels"].values()) == 3000 and set(info["labels"]) == {"-1", "1"}


def test_info_verify_passes_on_a_good_store(capsys, cli_store):
    code, out, _ = run(capsys, "info", cli_store, "--verify", "--json")
    assert code == 0 and json.loads(out)["verify"] == {"ok": True, "problems": []}


def test_info_verify_fails_on_a_corrupted_block(tmp_path, capsys, cli_store):
    store = tmp_path / "bad.bsvm"
    shutil.copytree(cli_store, store)
    block = store / "block-00002.h5"
    with h5py.File(block, "r") as f:
        offset = f["indices"].id.get_chunk_info(0).byte_offset + 10
    with open(block, "r+b") as f:
        f.seek(offset)
        f.write(b"\xde\xad\xbe\xef")
    code, out, _ = run(capsys, "info", store, "--verify")
    assert code == 1
    assert "verify       FAILED" in out and "block 2 (block-00002.h5)" in out


def test_generate_text_and_store(tmp_path, capsys):
    code, out, _ = run(
        capsys, "generate", tmp_path / "g.txt", "--rows", "500", "--features", "50", "--nnz", "5", "--seed", "3"
    )
    assert code == 0 and "500 rows" in out
    assert len((tmp_path / "g.txt").read_text().splitlines()) == 500
    code, _, _ = run(
        capsys,
        "generate",
        tmp_path / "g.bsvm",
        "--rows",
        "500",
        "--features",
        "50",
        "--nnz",
        "5",
        "--store",
        "--block-size",
        "200",
        "-q",
    )
    store = BlockStore(tmp_path / "g.bsvm")
    assert code == 0 and (store.n_rows, store.n_blocks, store.n_features) == (500, 3, 50)


def test_errors_exit_2_with_one_clean_line(tmp_path, capsys, small_libsvm, cli_store):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1:1\n-1 2:1 1:1\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    cases = [
        (("convert", tmp_path / "absent.txt", tmp_path / "o"), ("absent.txt", "no such file")),
        (("convert", bad, tmp_path / "o"), (f"{bad}:2:", "follows a larger index")),
        (("convert", empty, tmp_path / "o"), ("contains no data rows",)),
        (("convert", small_libsvm, cli_store), ("already exists",)),
        (("convert", small_libsvm, tmp_path / "o", "--compression", "rar"), ("unknown compression",)),
        (("convert", small_libsvm, tmp_path / "no" / "o"), ("does not exist",)),
        (("info", small_libsvm), ("is not a block store",)),
        (("info", tmp_path / "absent.bsvm"), ("no such block store",)),
        (
            ("generate", tmp_path / "g.txt", "--rows", "5", "--features", "3", "--nnz", "9"),
            ("nnz must be in 1..features",),
        ),
    ]
    for argv, fragments in cases:
        code, _, err = run(capsys, *argv, "-q")
        assert_clean_error(code, err, *fragments)
    assert not (tmp_path / "o").exists()


def test_skip_bad_lines_flag(tmp_path, capsys):
    src = tmp_path / "bad.txt"
    src.write_text("1 1:1\nfoo bar\n-1 2:1\n")
    code, out, _ = run(capsys, "convert", src, tmp_path / "s", "--skip-bad-lines", "--json")
    assert code == 0
    assert json.loads(out)["skipped_lines"] == 1
    code, out, _ = run(capsys, "info", tmp_path / "s")
    assert "skipped      1 malformed lines" in out


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(InputFormatError):
        main(["convert", str(tmp_path / "absent.txt"), str(tmp_path / "o"), "--debug"])


def test_the_installed_command(tmp_path, small_libsvm):
    """The real entry point: a subprocess, its exit code and its stderr."""
    command = [sys.executable, "-m", "blocksvm.cli"]
    done = subprocess.run([*command, "info", str(small_libsvm)], capture_output=True, text=True)
    assert_clean_error(done.returncode, done.stderr, "is not a block store")
    out = tmp_path / "s"
    done = subprocess.run([*command, "convert", str(small_libsvm), str(out), "--json"], capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["rows"] == 3000
    assert done.stderr == ""  # no progress bar when standard error is not a terminal
