"""The measurements quoted in docs/TUNING.md, each made with the command a user would type.

Every run is ``blocksvm train ... --json`` in its own process (its peak RSS is read back), on
a9a (``../shared/data``, 32,561 rows, 123 features; a9a.t for validation) unless said otherwise,
and prints one markdown table per question:

    python tools/tuning_figures.py [--data ../shared/data] [--out DIR] [--only c,blocks,...]

Sections: ``c`` (a C grid on one store), ``blocks`` (block size: passes and memory), ``solver``
(dual CD vs Pegasos), ``loss`` (hinge vs squared hinge), ``working_set`` (cache vs pair vs block),
``inner`` (--inner-passes), ``tol`` (--tol and --eps), ``weights`` (class weights).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from blocksvm.demo import run_measured
from blocksvm.io import load_libsvm
from blocksvm.model import LinearModel

REPO = Path(__file__).resolve().parents[1]


def train(store: Path, model: Path, *options: str) -> dict:
    """``blocksvm train STORE MODEL OPTIONS --json``: the summary, seconds and peak RSS (MB)."""
    summary, seconds, rss = run_measured(["train", str(store), str(model), *options])
    return {**summary, "wall": seconds, "rss": rss}


def table(header: list[str], rows: list[list]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()


def pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def gap(x) -> str:
    return "-" if x is None else f"{x:.1e}"


def convert(src: Path, out: Path, *options: str) -> dict:
    summary, seconds, _ = run_measured(["convert", str(src), str(out), "--overwrite", *options])
    return {**summary, "wall": seconds}


def section_c(d: dict) -> None:
    print(f"### C grid (one conversion: {d['convert']['seconds']:.2f} s; then one training per C)\n")
    rows = []
    for C in ("0.01", "0.1", "1", "10"):
        r = train(d["store"], d["out"] / "m.h5", "-C", C, "--validation", str(d["val"]), "--max-outer", "200")
        rows.append([C, r["outer_iterations"], f"{r['seconds']:.1f}", gap(r["gap"]), pct(r["validation_accuracy"])])
    table(["-C", "passes", "seconds", "final gap", "validation accuracy (%)"], rows)


def section_blocks(d: dict) -> None:
    print("### Block size (a9a, -C 1, --tol 1e-3)\n")
    rows = []
    for block_rows in (1024, 4096, 16384, 32768):
        store = d["out"] / f"a9a-{block_rows}.bsvm"
        convert(d["a9a"], store, "--block-size", str(block_rows))
        r = train(store, d["out"] / "m.h5", "-C", "1", "--max-outer", "200")
        blocks = -(-32561 // block_rows)
        rows.append([block_rows, blocks, r["outer_iterations"], f"{r['seconds']:.1f}", gap(r["gap"])])
    table(["--block-size", "blocks", "passes", "seconds", "final gap"], rows)
    print("### Block size and peak memory (generated: 400,000 rows, 100,000 features, ~40 nonzeros a row; 2 passes)\n")
    rows = []
    for block_rows in (10_000, 50_000, 200_000):
        store = d["out"] / f"gen-{block_rows}.bsvm"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "blocksvm.cli",
                "generate",
                str(store),
                "--rows",
                "400000",
                "--features",
                "100000",
                "--nnz",
                "40",
                "--store",
                "--block-size",
                str(block_rows),
                "--overwrite",
                "-q",
            ],
            check=True,
        )
        block_mb = (block_rows * 24 + block_rows * 40 * 8) / 1e6
        r = train(store, d["out"] / "m.h5", "-C", "1", "--max-outer", "2", "--tol", "0")
        rows.append([block_rows, f"{block_mb:.0f}", f"{r['rss']:.0f}", f"{r['seconds'] / 2:.1f}"])
        shutil.rmtree(store)
    table(["--block-size", "block in memory (MB)", "peak RSS (MB)", "seconds a pass"], rows)


def section_solver(d: dict) -> None:
    print("### Solver (a9a, -C 1, hinge loss; dual CD to --tol 1e-3, Pegasos for a fixed number of passes)\n")
    rows = []
    common = ["-C", "1", "--loss", "hinge"]
    optimum = train(d["store"], d["out"] / "m.h5", *common, "--tol", "1e-4", "--max-outer", "300")["primal"]
    runs = [
        ("dual-cd", ["--tol", "1e-3", "--max-outer", "200"]),
        ("pegasos", ["--solver", "pegasos", "--max-outer", "5"]),
        ("pegasos", ["--solver", "pegasos", "--max-outer", "20"]),
        ("pegasos --average", ["--solver", "pegasos", "--average", "--max-outer", "20"]),
        (
            "pegasos --average --batch-size 32",
            ["--solver", "pegasos", "--average", "--batch-size", "32", "--max-outer", "20"],
        ),
        ("pegasos, squared hinge", ["--solver", "pegasos", "--loss", "squared-hinge", "--max-outer", "20"]),
    ]
    for name, options in runs:
        r = train(d["store"], d["out"] / "m.h5", *common, "--validation", str(d["val"]), *options)
        reference = optimum
        if "squared-hinge" in options:
            reference = train(d["store"], d["out"] / "m.h5", "-C", "1", "--tol", "1e-4", "--max-outer", "300")["primal"]
        excess = (r["primal"] - reference) / reference
        rows.append(
            [name, r["outer_iterations"], f"{r['seconds']:.1f}", f"{excess:.1e}", pct(r["validation_accuracy"])]
        )
    table(["solver", "passes", "seconds", "(P - P*) / P*", "validation accuracy (%)"], rows)


def section_loss(d: dict) -> None:
    print("### Loss (a9a, -C 1, --tol 1e-3)\n")
    rows = []
    for loss in ("squared-hinge", "hinge"):
        r = train(
            d["store"],
            d["out"] / "m.h5",
            "-C",
            "1",
            "--loss",
            loss,
            "--validation",
            str(d["val"]),
            "--max-outer",
            "300",
        )
        rows.append([loss, r["outer_iterations"], f"{r['seconds']:.1f}", r["nsv"], pct(r["validation_accuracy"])])
    table(["--loss", "passes", "seconds", "nSV", "validation accuracy (%)"], rows)


def section_working_set(d: dict) -> None:
    print("### Working set (a9a in 8 blocks, -C 1, --tol 1e-3, at most 200 passes)\n")
    rows = []
    for loss in ("squared-hinge", "hinge"):
        for ws in ("cache", "pair", "block"):
            r = train(
                d["store"], d["out"] / "m.h5", "-C", "1", "--loss", loss, "--working-set", ws, "--max-outer", "200"
            )
            rows.append([loss, ws, r["outer_iterations"], f"{r['seconds']:.1f}", gap(r["gap"])])
    table(["--loss", "--working-set", "passes", "seconds", "final gap"], rows)


def section_inner(d: dict) -> None:
    print("### Inner passes (a9a in 8 blocks, -C 1, --tol 1e-3)\n")
    rows = []
    for inner in ("1", "5", "10"):
        r = train(d["store"], d["out"] / "m.h5", "-C", "1", "--inner-passes", inner, "--max-outer", "300")
        rows.append([inner, r["outer_iterations"], f"{r['seconds']:.1f}", gap(r["gap"])])
    table(["--inner-passes", "passes", "seconds", "final gap"], rows)


def section_tol(d: dict) -> None:
    print("### Stopping rules (a9a, -C 1)\n")
    rows = []
    for options in (["--tol", "1e-2"], ["--tol", "1e-3"], ["--tol", "1e-4"], ["--tol", "0", "--eps", "0.1"]):
        r = train(
            d["store"], d["out"] / "m.h5", "-C", "1", "--validation", str(d["val"]), "--max-outer", "300", *options
        )
        rows.append(
            [
                " ".join(options),
                r["outer_iterations"],
                f"{r['seconds']:.1f}",
                f"{r['primal']:.6e}",
                gap(r["gap"]),
                pct(r["validation_accuracy"]),
            ]
        )
    table(["options", "passes", "seconds", "objective", "final gap", "validation accuracy (%)"], rows)


def section_weights(d: dict) -> None:
    print("### Class weights (a9a: 24% positive; -C 1, --tol 1e-3)\n")
    X, y, _ = load_libsvm(d["val_text"], n_features=123)
    rows = []
    for options in ([], ["-w", "1=2"], ["-w", "balanced"]):
        model = d["out"] / "w.h5"
        r = train(d["store"], model, "-C", "1", *options)
        predicted = LinearModel.load(model).predict(X)
        recall = [np.mean(predicted[y == c] == c) for c in (1.0, -1.0)]
        rows.append(
            [
                " ".join(options) or "(none)",
                r["outer_iterations"],
                pct(np.mean(predicted == y)),
                pct(recall[0]),
                pct(recall[1]),
            ]
        )
    table(["options", "passes", "accuracy (%)", "recall of +1 (%)", "recall of -1 (%)"], rows)


SECTIONS = {
    "c": section_c,
    "blocks": section_blocks,
    "solver": section_solver,
    "loss": section_loss,
    "working_set": section_working_set,
    "inner": section_inner,
    "tol": section_tol,
    "weights": section_weights,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, help="working folder (default: a temporary one)")
    parser.add_argument("--only", help="comma-separated sections: " + ", ".join(SECTIONS))
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="blocksvm-tuning-"))
    out.mkdir(parents=True, exist_ok=True)
    d = {
        "a9a": args.data / "a9a",
        "val_text": args.data / "a9a.t",
        "store": out / "a9a.bsvm",
        "val": out / "a9a.t.bsvm",
        "out": out,
    }
    d["convert"] = convert(d["a9a"], d["store"], "--block-size", "4096")
    convert(d["val_text"], d["val"], "--n-features", "123")
    for name in args.only.split(",") if args.only else SECTIONS:
        SECTIONS[name](d)
    if not args.out:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
