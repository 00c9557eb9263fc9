#!/usr/bin/env bash
# Times tcpwhy against tcptrace, tshark and cat on one capture, in one run.
#
#   bench/run.sh [CAPTURE]        (default bench/out/bench.pcap; make it with make-capture.sh)
#
# TOOLS="cat tcptrace tshark" bench/run.sh   times only those (default: all);
# RUNS=3 sets the runs per fast tool (default 5; tshark always runs once);
# TCPWHY=path times that binary (default target/release/tcpwhy, rebuilt first).
# Prints, and writes to bench/out/results.md, median seconds, MB/s, packets/s and
# peak RSS per tool, with throughput ratios against tcptrace, tshark and cat.
set -euo pipefail
cd "$(dirname "$0")/.."

capture=${1:-bench/out/bench.pcap}
out=bench/out
tcpwhy=${TCPWHY:-target/release/tcpwhy}
mkdir -p "$out"

for tool in hyperfine tcptrace tshark capinfos /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "run: $tool is required (apt-get install hyperfine tcptrace tshark time)" >&2; exit 2; }
done
[ -f "$capture" ] || { echo "run: no $capture; make it with: sudo bench/make-capture.sh" >&2; exit 2; }
runs=${RUNS:-5}
selected=" ${TOOLS:-cat tcpwhy-connections tcpwhy-diagnose tcptrace tshark} "

bytes=$(stat -c %s "$capture")
packets=$(capinfos -c -M "$capture" | awk -F: '/Number of packets/ {gsub(/ /, "", $2); print $2}')
cat "$capture" > /dev/null   # warm the page cache

declare -A commands=(
  [cat]="cat $capture > /dev/null"
  [tcpwhy-connections]="$tcpwhy connections --quiet --format json $capture > /dev/null"
  [tcpwhy-diagnose]="$tcpwhy diagnose --quiet --format json $capture > /dev/null"
  [tcptrace]="tcptrace -l -n $capture > /dev/null"
  [tshark]="tshark -q -z conv,tcp -r $capture > /dev/null"
)
if [[ $selected == *" tcpwhy-"* ]] && [ -z "${TCPWHY:-}" ]; then
  # Rebuild so the figures are for the current source; a failed build (someone
  # mid-edit) falls back to the binary already there, or skips tcpwhy.
  cargo build --release -q -p tcpwhy ||
    echo "run: cargo build failed; using $tcpwhy as it is, if there is one" >&2
fi
if [[ $selected == *" tcpwhy-"* ]] && [ ! -x "$tcpwhy" ]; then
  echo "run: no $tcpwhy: skipping tcpwhy" >&2
  selected=${selected// tcpwhy-connections / }
  selected=${selected// tcpwhy-diagnose / }
fi
if [[ $selected == *" tcpwhy-diagnose "* ]] && ! "$tcpwhy" --help | grep -q '^  diagnose'; then
  echo "run: $tcpwhy has no diagnose command: skipping tcpwhy-diagnose" >&2
  selected=${selected// tcpwhy-diagnose / }
fi
order=()
for name in cat tcpwhy-connections tcpwhy-diagnose tcptrace tshark; do
  if [[ $selected == *" $name "* ]]; then order+=("$name"); fi
done
[ ${#order[@]} -gt 0 ] || { echo "run: nothing to time (TOOLS=$TOOLS)" >&2; exit 2; }

declare -A seconds rss
for name in "${order[@]}"; do
  n=$runs warmup=1
  [ "$name" = tshark ] && n=1 warmup=0
  echo "timing $name ($n runs)" >&2
  hyperfine --style none --warmup "$warmup" --runs "$n" --export-json "$out/$name.json" \
    "${commands[$name]}" > /dev/null
  seconds[$name]=$(python3 -c "import json; print(json.load(open('$out/$name.json'))['results'][0]['median'])")
  rss[$name]=$(/usr/bin/time -f %M bash -c "${commands[$name]}" 2>&1 >/dev/null | tail -1)
done

python3 - "$bytes" "$packets" "$capture" "$runs" "${order[@]}" <<EOF > "$out/results.md"
import sys
size, packets, capture, runs, names = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
seconds = {$(for n in "${order[@]}"; do printf "'%s': %s, " "$n" "${seconds[$n]}"; done)}
rss = {$(for n in "${order[@]}"; do printf "'%s': %s, " "$n" "${rss[$n]}"; done)}
mb = size / 1e6
print(f"Capture: {capture}, {mb:.0f} MB, {packets} packets. Median of {runs} runs (tshark: 1), warm page cache.\n")
print("| tool | seconds | MB/s | packets/s | peak RSS MB | × tcptrace | × tshark | × cat |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for name in names:
    s = seconds[name]
    ratio = lambda other: f"{seconds[other] / s:.2f}" if other in seconds else "–"
    print(f"| {name} | {s:.2f} | {mb / s:.0f} | {packets / s:,.0f} | {rss[name] / 1024:.0f} "
          f"| {ratio('tcptrace')} | {ratio('tshark')} | {ratio('cat')} |")
print("\nRatios are throughput relative to the named tool: above 1 is faster.")
EOF
cat "$out/results.md"
