#!/usr/bin/env python
"""Dual CD out of core: a store kept out of the page cache (every read from the disk, as for a store many times the
memory) trained to its certificate, this checkout against another commit's code on its own store, side by side.

Each version generates its own store of the same arguments (``blocksvm generate STORE --store``, the generator of
that version), then trains it at its defaults to the 1e-3 relative duality gap under ``../shared/tools/cold_run.py``
(the store's pages evicted every 0.25 s; the command's bytes read from storage and its peak RSS counted), in turns:

- the other commit's default, and this checkout's: wall, reads of the store (bytes read / store size), passes;
- this checkout with ``--threads 2``, with ``--memory-mb`` a third of the store's CSR size, 1,900 and 4,000 MB;
- warm (the store in the page cache, no eviction): ``--threads 1`` and ``--threads 2``;
- the floor: one cold read of the store (its seconds, its MB/s).

Where each second of a pass went comes from the history's ``seconds`` (docs/BENCHMARKS.md, *A pass, second by
second*). ::

    python tools/bench_cold.py --base 66f1e4d        # 4,000,000 x 2,000,000 x 100: about an hour on 2 cores
    python tools/bench_cold.py --base 66f1e4d --quick   # 200,000 rows: test the script
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness import OUT, REPO, report, run

COLD_RUN = REPO.parent / "shared" / "tools" / "cold_run.py"


def checkout(commit: str) -> Path:
    """A worktree of ``commit`` beside the repository (made once)."""
    path = REPO.parent / f"bench-base-{commit}"
    if not path.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), commit], check=True)
    return path


def blocksvm(code: Path, *args) -> list[str]:
    """``blocksvm ARGS`` run by the checkout ``code`` (its package first on the path: run from its folder, which
    ``python -m`` puts first)."""
    return ["env", "-C", str(code), f"PYTHONPATH={code}", sys.executable, "-m", "blocksvm.cli", *map(str, args)]


def generate(code: Path, store: Path, args) -> Path:
    if not store.exists():
        argv = blocksvm(code, "generate", store, "--store", "--rows", args.rows, "--features", args.features,
                        "--nnz", args.nnz, "-q")  # fmt: skip
        subprocess.run(argv, check=True)
    return store


def train(code: Path, store: Path, name: str, options: list[str], cold: bool, folder: Path) -> dict:
    """One training run: wall, MB read from storage, peak RSS, the history's passes and last gap."""
    model, history = folder / f"{name}.h5", folder / f"{name}.history.jsonl"
    for stale in (model, history):
        stale.unlink(missing_ok=True)
    argv = blocksvm(code, "train", store, model, "--history", history, "-q", *options)
    if cold:
        done = subprocess.run([sys.executable, str(COLD_RUN), "--cold", str(store), "--", *argv],
                              capture_output=True, text=True, check=True)  # fmt: skip
        result = json.loads(done.stdout.strip().splitlines()[-1])
    else:
        measured = run.command(argv)
        result = {"wall_s": measured["seconds"], "peak_rss_mb": measured["peak_rss_mb"], "read_mb": None}
    records = [json.loads(line) for line in history.read_text().splitlines()]
    result["passes"] = len(records)
    result["gap"] = records[-1].get("gap")
    result["seconds"] = records[-1].get("seconds")  # (this checkout's history: where the last pass's seconds went)
    return result


def floor(store: Path) -> dict:
    done = subprocess.run([sys.executable, str(COLD_RUN), "--cold", str(store), "--floor", "--", "true"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def csr_mb(store: Path) -> float:
    manifest = json.loads((store / "manifest.json").read_text())
    itemsize = 4 if manifest["dtype"] == "float32" else 8
    return (manifest["nnz"] * (4 + itemsize) + manifest["rows"] * 24) / 1e6


def main() -> None:
    p = run.parser(__doc__)
    p.add_argument("--base", default="66f1e4d", help="the commit to compare with (default: %(default)s)")
    p.add_argument("--rows", type=int, default=4_000_000)
    p.add_argument("--features", type=int, default=2_000_000)
    p.add_argument("--nnz", type=int, default=100)
    p.add_argument("--repeat", type=int, default=1, help="runs of each configuration, in turns")
    p.add_argument("--out", type=Path, default=OUT / "cold")
    p.add_argument("--reuse", action="store_true", help="take the runs an earlier bench finished (--repeat 1)")
    p.add_argument("--also", type=int, nargs="*", default=[], metavar="MB", help="more --memory-mb budgets, cold")
    p.add_argument("--pairs", type=int, nargs="*", default=[], metavar="MB", help="budgets run with --inner-passes 1")
    run.add_quick(p)
    args = run.quick(p, p.parse_args(), rows=200_000, features=100_000)
    folder = args.out / f"r{args.rows}-f{args.features}-k{args.nnz}"
    folder.mkdir(parents=True, exist_ok=True)
    base = checkout(args.base)
    ours, theirs = generate(REPO, folder / "new.bsvm", args), generate(base, folder / f"{args.base}.bsvm", args)
    third = max(1, round(csr_mb(ours) / 3))
    configs = {
        f"{args.base}, default": (base, theirs, [], True),
        "default": (REPO, ours, [], True),
        "--threads 2": (REPO, ours, ["--threads", "2"], True),
        f"--memory-mb {third} (a third of the CSR)": (REPO, ours, ["--memory-mb", str(third)], True),
        "--memory-mb 1900": (REPO, ours, ["--memory-mb", "1900"], True),
        "--memory-mb 4000": (REPO, ours, ["--memory-mb", "4000"], True),
        **{f"--memory-mb {mb}": (REPO, ours, ["--memory-mb", str(mb)], True) for mb in args.also},
        **{
            f"--memory-mb {mb} --inner-passes 1": (REPO, ours, ["--memory-mb", str(mb), "--inner-passes", "1"], True)
            for mb in args.pairs
        },
        "warm, --threads 1": (REPO, ours, [], False),
        "warm, --threads 2": (REPO, ours, ["--threads", "2"], False),
    }
    print(report.machine(), file=sys.stderr)

    def one(name: str) -> dict:
        code, store, options, cold = configs[name]
        stem = name.replace(" ", "_").replace(",", "").lstrip("-")  # (a file name, not an option)
        kept = folder / f"{stem}.result.json"  # (--reuse: a run of an earlier, interrupted bench)
        if args.reuse and kept.exists():
            return json.loads(kept.read_text())
        result = train(code, store, stem, options, cold, folder)
        kept.write_text(json.dumps(result))
        return result

    results = run.in_turns(list(configs), args.repeat, one)
    low = floor(ours)
    baseline = min(r["wall_s"] for r in results[f"{args.base}, default"])
    rows = []
    for name, runs in results.items():
        best = min(runs, key=lambda r: r["wall_s"])
        reads = "" if best["read_mb"] is None else f"{best['read_mb'] / low['store_mb']:.1f}"
        rows.append([name, report.seconds(best["wall_s"]), f"{best['wall_s'] / baseline:.2f}", best["passes"],
                     f"{best['gap']:.1e}", reads, f"{best['peak_rss_mb']:,.0f}"])  # fmt: skip
    size = f"{low['store_mb']:,.0f} MB on disk ({csr_mb(ours):,.0f} MB of CSR)"
    print(f"\n{args.rows:,} x {args.features:,} x {args.nnz} store, {size}; one cold read {low['floor_s']} s "
          f"({low['floor_mb_s']} MB/s)\n")  # fmt: skip
    print(report.table(["run", "wall s", f"/ {args.base}", "passes", "gap", "reads of the store", "peak RSS MB"],
                       rows))  # fmt: skip
    report.write_json(folder / "bench_cold.json", {"machine": report.machine(), "floor": low, "results": results})


if __name__ == "__main__":
    main()
