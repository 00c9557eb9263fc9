#!/usr/bin/env bash
# Times `tcpwhy report` on a large capture and checks the report stays
# responsive in headless Chromium.
#
#   bench/report.sh [CAPTURE]   (default bench/out/bench.pcap, else
#                                bench/out/synthetic.pcap, made first with
#                                bench/make-synthetic.py when missing)
#
# Prints, and writes to bench/out/report-results.md: the time and peak RSS
# of writing the report, its size, and from tests/browser/check.mjs the time
# from opening the file to every chart drawn, one redraw of the transaction
# chart (a zoom step), and a sort of the connections table.
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench/out
mkdir -p "$out"
capture=${1:-}
if [ -z "$capture" ]; then
  capture=$out/bench.pcap
  if [ ! -f "$capture" ]; then
    capture=$out/synthetic.pcap
    [ -f "$capture" ] || python3 bench/make-synthetic.py "$capture"
  fi
fi
[ -f "$capture" ] || { echo "report: no $capture" >&2; exit 2; }
[ -d tests/browser/node_modules ] || { echo "report: run .ci/run (or npm ci in tests/browser) first" >&2; exit 2; }

cargo build --release -q -p tcpwhy
html=$out/report.html
cat "$capture" > /dev/null   # warm the page cache
/usr/bin/time -f "%e %M" -o "$out/report.time" target/release/tcpwhy report --quiet "$capture" -o "$html" || true
read -r seconds rss_kb < "$out/report.time"
bytes=$(stat -c %s "$html")
counts=$(target/release/tcpwhy transactions --quiet --format json "$capture" | tail -n 1)
browser=$(cd tests/browser && node check.mjs "$OLDPWD/$html")
field() { node -e "const o = JSON.parse(process.argv[1]); console.log(o$2)" "$1"; }

{
  echo "Capture: $capture, $(( $(stat -c %s "$capture") / 1000000 )) MB, $(field "$counts" .frames) packets," \
    "$(field "$counts" .connections) connections, $(field "$counts" .transactions) transactions."
  echo
  echo "| measure | value |"
  echo "| --- | ---: |"
  echo "| write the report (both passes) | $seconds s |"
  echo "| peak RSS | $(( rss_kb / 1024 )) MB |"
  echo "| report size | $(( bytes / 1000 )) kB |"
  echo "| open to every chart drawn (Chromium) | $(field "$browser" .loadToDrawnMs) ms |"
  echo "| redraw of the transaction chart (one zoom step) | $(field "$browser" .redrawMs) ms |"
  echo "| sort of the connections table | $(field "$browser" .sortMs) ms |"
  echo "| points drawn: transactions, setups, IO | $(field "$browser" '.timelineCharts["chart-transactions"]'), $(field "$browser" '.timelineCharts["chart-setups"]'), $(field "$browser" '.timelineCharts["chart-io"]') |"
} | tee "$out/report-results.md"
