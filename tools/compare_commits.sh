#!/usr/bin/env bash
# Speed of two commits side by side, in one run: tools/bench_epoch.py, one tools/bench_peers.py set and
# tools/bench_online.py (a9a's learners and a 0.3 GB stream), each run in a worktree of each commit, in
# turns (old, new, old, new), so that machine load hits both.
#
#   tools/compare_commits.sh OLD NEW [OUT]      e.g. tools/compare_commits.sh aa66ef8 HEAD
#
# Prints the blocksvm rows of each run; OUT (default bench-out/compare) keeps the full outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1 new=$2 out=${3:-bench-out/compare}
data=$(cd .. && pwd)/shared/data
mkdir -p "$out"
for rev in "$old" "$new"; do
    dir="$out/tree-$rev"
    [ -d "$dir" ] || git worktree add --detach "$dir" "$rev" >/dev/null
done
for round in 1 2; do
    for rev in "$old" "$new"; do
        dir="$out/tree-$rev"
        echo "== round $round: $rev =="
        (cd "$dir" && PYTHONPATH=. python tools/bench_epoch.py --sets a9a,generated --rows 300000 --repeat 2 --data-dir "$data" \
            > "../epoch-$rev-$round.txt" 2>&1) || true
        grep -E "^\|" "$out/epoch-$rev-$round.txt" | head -20 || echo "(no table: see $out/epoch-$rev-$round.txt)"
        (cd "$dir" && PYTHONPATH=. python tools/bench_peers.py --sets a9a,gen-50k --skip liblinear,sgd,vw,kernel --data-dir "$data" \
            --out "../peers-$rev-$round" > "../peers-$rev-$round.txt" 2>&1) || true
        grep -E "^\|" "$out/peers-$rev-$round.txt" | head -20 || echo "(no table: see $out/peers-$rev-$round.txt)"
        (cd "$dir" && PYTHONPATH=. python tools/bench_online.py --sets a9a --stream-gb 0.3 --data-dir "$data" \
            --out "../online-$rev" > "../online-$rev-$round.txt" 2>&1) || true
        grep -E "^\|" "$out/online-$rev-$round.txt" | head -40 || echo "(no table: see $out/online-$rev-$round.txt)"
    done
done
