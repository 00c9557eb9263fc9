#!/usr/bin/env bash
# Times the ways to get the tables out of one capture: the JSON findings
# (the baseline), `tcpwhy export` to Parquet, and the Python call.
#
#   bench/tables.sh [CAPTURE]     (default bench/out/synthetic.pcap, made with make-synthetic.py)
#
# RUNS=5 sets the runs per command (default 3). Needs hyperfine, target/release/tcpwhy
# and the Python package in .venv (as .ci/run leaves them). Prints, and writes to
# bench/out/tables.md, median seconds and TCP segments per second for each.
set -euo pipefail
cd "$(dirname "$0")/.."

capture=${1:-bench/out/synthetic.pcap}
out=bench/out
tcpwhy=target/release/tcpwhy
python=.venv/bin/python
mkdir -p "$out"
[ -f "$capture" ] || python3 bench/make-synthetic.py "$capture"
for needed in hyperfine "$tcpwhy" "$python"; do
  command -v "$needed" >/dev/null || { echo "tables: $needed is required (see the comment above)" >&2; exit 2; }
done

segments=$("$tcpwhy" connections --quiet --format json "$capture" |
  "$python" -c 'import json, sys; print(json.loads(sys.stdin.readlines()[-1])["tcp_segments"])')
cat "$capture" > /dev/null   # warm the page cache

hyperfine --style basic --runs "${RUNS:-3}" --export-json "$out/tables.json" \
  -n cli-diagnose-json "$tcpwhy diagnose --quiet --format json $capture > /dev/null" \
  -n cli-export-parquet "$tcpwhy export --quiet -o $out/tables $capture" \
  -n python-analyze "$python -c 'import sys, tcpwhy; tcpwhy.analyze(sys.argv[1])' $capture"

"$python" - "$out/tables.json" "$capture" "$segments" <<'PY' | tee "$out/tables.md"
import json, os, sys
results, capture, segments = json.load(open(sys.argv[1]))["results"], sys.argv[2], int(sys.argv[3])
print(f"Capture: {capture}, {os.path.getsize(capture) / 1e6:.0f} MB, {segments:,} TCP segments.")
print()
print("| command | median s | segments/s |")
print("| --- | ---: | ---: |")
for result in results:
    seconds = result["median"]
    print(f"| {result['command']} | {seconds:.2f} | {segments / seconds:,.0f} |")
PY
