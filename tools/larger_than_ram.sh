#!/usr/bin/env bash
# Train on a store larger than this machine's memory: time per pass, read MB/s, peak RSS, gap.
#
# Generates (once) a webspam-like store directly as blocks (blocksvm generate --store), whose
# in-memory CSR size (8 bytes per stored entry + 24 per row) is larger than RAM, then trains it
# to a 1e-3 relative duality gap under /usr/bin/time -v, with a checkpoint (run the same command
# again to resume after a kill). Nothing here belongs in CI: the default size takes hours.
#
#   tools/larger_than_ram.sh [DIR] [ROWS] [NNZ] [FEATURES] [BLOCK_ROWS]
#
# Defaults: DIR=bench-out/larger-than-ram, 40,000,000 rows x 120 nnz (39 GB of CSR; alpha is
# 8 bytes a row = 320 MB), 1,000,000 features, 250,000 rows a block (240 MB of CSR each).
# Extra `blocksvm train` options go in TRAIN_OPTS (e.g. TRAIN_OPTS="--max-outer 30").
# A small trial of the whole script (a few minutes):
#
#   tools/larger_than_ram.sh /tmp/ltr-small 400000 120 1000000 50000
#
# Exit status: 0 if training reached the gap and the peak RSS is at most 2 GB, else 1.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$repo/bench-out/larger-than-ram}
rows=${2:-40000000}
nnz=${3:-120}
features=${4:-1000000}
block_rows=${5:-250000}
tol=1e-3
limit_mb=2048
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
store="$dir/r$rows-k$nnz-f$features-b$block_rows.bsvm"
model="$dir/model.h5"
history="$dir/history.jsonl"
checkpoint="$dir/train.ckpt"

mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)
csr_gb_estimate=$(python -c "print(f'{($rows * $nnz * 8 + $rows * 24) / 1e9:.1f}')")
echo "machine: $(nproc) cores, $((mem_kb / 1024 / 1024)) GiB RAM; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "store: $rows rows x $nnz nnz (at most; duplicates drawn by the generator are merged), $features features:"
echo "       about $csr_gb_estimate GB of CSR in memory (float32 values, int32 indices)"
df -h "$dir" | tail -1 | awk '{print "disk: " $4 " free on " $6}'

# ---- generate (once) ---------------------------------------------------------------------
if [[ ! -f $store/manifest.json ]]; then
    # compressed size: measured on a sample, so that a full disk stops us before, not during
    sample="$dir/sample.bsvm"
    blocksvm generate "$sample" --store --rows 100000 --features "$features" --nnz "$nnz" \
        --block-size 100000 --overwrite -q
    need_kb=$(python -c "import json; m = json.load(open('$sample/manifest.json'))
print(int(sum(b['bytes'] for b in m['blocks']) * $rows / m['rows'] / 1024 * 1.05))")
    rm -rf "$sample"
    free_kb=$(df -Pk "$dir" | tail -1 | awk '{print $4}')
    echo "generate: needs about $((need_kb / 1024 / 1024)) GiB on disk, $((free_kb / 1024 / 1024)) GiB free"
    if (( need_kb > free_kb - 5 * 1024 * 1024 )); then
        echo "not enough disk space (keeping 5 GiB free): pass fewer ROWS or another DIR" >&2
        exit 1
    fi
    /usr/bin/time -v -o "$dir/generate.time" blocksvm generate "$store" --store --rows "$rows" \
        --features "$features" --nnz "$nnz" --block-size "$block_rows" --overwrite
    echo "generate: wall $(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$dir/generate.time"), peak RSS" \
         "$(( $(awk '/Maximum resident set size/ {print $6}' "$dir/generate.time") / 1024 )) MB"
fi

# ---- train -------------------------------------------------------------------------------
resume=()
if [[ -f $checkpoint ]]; then
    echo "resuming from $checkpoint"
    resume=(--resume "$checkpoint")
else
    rm -f "$history"
fi
# shellcheck disable=SC2086  # TRAIN_OPTS is a list of options
/usr/bin/time -v -o "$dir/train.time" blocksvm train "$store" "$model" --tol "$tol" --max-outer 100 \
    --history "$history" --checkpoint "$checkpoint" "${resume[@]}" ${TRAIN_OPTS:-} 2>&1 | tee "$dir/train.log"

# ---- report ------------------------------------------------------------------------------
python - "$store" "$history" "$dir/train.time" "$limit_mb" "$tol" <<'EOF' | tee "$dir/summary.md"
import json
import re
import statistics
import sys

store, history, time_file, limit_mb, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
m = json.load(open(f"{store}/manifest.json"))
rows, nnz = m["rows"], m["nnz"]
csr_gb = (nnz * 8 + rows * 24) / 1e9
disk_gb = sum(b["bytes"] for b in m["blocks"]) / 1e9
records = [json.loads(line) for line in open(history)]
timing = open(time_file).read()
peak_mb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing).group(1)) / 1024
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", timing).group(1)
mem_gb = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")) / 2**20

print(f"\n{rows:,} rows, {m['features']:,} features, {nnz:,} nnz ({nnz / rows:.1f} a row), {len(m['blocks'])} blocks "
      f"of {m['params']['block_rows']:,} rows: **{csr_gb:.1f} GB of CSR in memory** ({csr_gb * 1e9 / 2**30:.1f} GiB; "
      f"this machine: {mem_gb:.1f} GiB RAM), {disk_gb:.1f} GB on disk ({m['params']['compression']})\n")
print("| pass | pass s | read s | compute s | wait s | read MB/s (disk) | read MB/s (CSR) | primal | gap |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
previous, passes = 0.0, []
for r in records:
    seconds = r["train_time"] - previous
    previous = r["train_time"]
    passes.append(seconds)
    disk_rate = r["bytes_read"] / 1e6 / r["read_seconds"] if r["read_seconds"] else float("nan")
    csr_rate = csr_gb * 1e3 / r["read_seconds"] if r["read_seconds"] else float("nan")
    mark = "" if r["primal_exact"] else "~"
    gap = "" if r["gap"] is None else f"{mark}{r['gap']:.2e}"
    print(f"| {r['outer']} | {seconds:.0f} | {r['read_seconds']:.0f} | {r['compute_seconds']:.0f} | "
          f"{r['wait_seconds']:.0f} | {disk_rate:.0f} | {csr_rate:.0f} | {mark}{r['primal']:.6e} | {gap} |")
last = records[-1]
reached = last["primal_exact"] and last["gap"] is not None and last["gap"] <= tol
print(f"\nwall clock {wall} (with evaluation passes and checkpoints); {len(records)} passes, median "
      f"{statistics.median(passes):.0f} s a pass; final relative duality gap {last['gap']:.2e} "
      f"({'reached' if reached else 'NOT reached'}: tol {tol:g}); "
      f"peak RSS **{peak_mb:,.0f} MB** (target <= {limit_mb:,.0f} MB)")
sys.exit(0 if reached and peak_mb <= limit_mb else 1)
EOF
