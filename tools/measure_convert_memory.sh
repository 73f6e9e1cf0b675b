#!/usr/bin/env bash
# Peak memory of converting a large LIBSVM text file, then an exact read-back check.
#
# Generates (once) a webspam-like file of ROWS rows (default 1,300,000: about 2.2 GB), converts it
# with default settings under /usr/bin/time -v, prints the peak RSS against the 1 GB target, and
# runs tools/verify_store.py, which compares every row of the store with the text in bounded memory.
#
#   tools/measure_convert_memory.sh [DIR] [ROWS]      # DIR defaults to /tmp/blocksvm-memory
#
# Exit status: 0 if the peak is under 1 GB and the store reads back exactly, else 1.
set -euo pipefail

dir=${1:-/tmp/blocksvm-memory}
rows=${2:-1300000}
limit_mb=1024
tools=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
text="$dir/webspam-like-$rows.txt"
store="$dir/webspam-like-$rows.bsvm"

if [[ ! -f $text ]]; then
    blocksvm generate "$text" --rows "$rows" --features 16609143 --nnz 100 --seed 1 -q
fi
text_mb=$(( $(stat -c %s "$text") / 1000000 ))
echo "text: $text ($text_mb MB)"
(( text_mb >= 2000 )) || echo "note: the text is under 2 GB; pass more ROWS to test the target"

rm -rf "$store"
/usr/bin/time -v -o "$dir/time.txt" blocksvm convert "$text" "$store"
peak_mb=$(( $(awk '/Maximum resident set size/ {print $6}' "$dir/time.txt") / 1024 ))
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$dir/time.txt")
cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$dir/time.txt")
echo "convert: wall $wall, CPU $cpu, peak RSS $peak_mb MB (target < $limit_mb MB)"

status=0
(( peak_mb < limit_mb )) || { echo "peak RSS is over the target"; status=1; }
python "$tools/verify_store.py" "$text" "$store" || status=1
exit $status
