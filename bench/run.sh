#!/usr/bin/env bash
# Times tcpwhy against tcptrace, tshark and cat on one capture, in one run.
#
#   bench/run.sh [CAPTURE]        (default bench/out/bench.pcap; make it with make-capture.sh)
#
# TOOLS="cat tcptrace tshark" bench/run.sh   times only those (default: all);
# RUNS=3 sets the runs per fast tool (default 5; tshark always runs once);
# TCPWHY=path times that binary (default target/release/tcpwhy, rebuilt first);
# BASELINE=path also times that build's diagnose, as the row baseline-diagnose;
# SCALE="10000 50000 200000" sets the synthetic scale series' connections
# (SCALE= skips it).
# Prints, and writes to bench/out/results.md, median seconds, MB/s, packets/s and
# peak RSS per tool, with throughput ratios against tcptrace, tshark and cat and
# peak RSS against tcptrace's and cat's; then diagnose on synthetic captures of
# growing size: seconds, peak RSS and time per transaction, which stays flat.
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
selected=" ${TOOLS:-cat tcpwhy-connections tcpwhy-diagnose diagnose-threads-1 diagnose-threads-2 tcptrace tshark} "
baseline=${BASELINE:-}
[ -z "$baseline" ] || selected="$selected baseline-diagnose "
scale=${SCALE-10000 50000 200000}

bytes=$(stat -L -c %s "$capture")
packets=$(capinfos -c -M "$capture" | awk -F: '/Number of packets/ {gsub(/ /, "", $2); print $2}')
cat "$capture" > /dev/null   # warm the page cache

declare -A commands=(
  [cat]="cat $capture > /dev/null"
  [tcpwhy-connections]="$tcpwhy connections --quiet --format json $capture > /dev/null"
  [tcpwhy-diagnose]="$tcpwhy diagnose --quiet --format json $capture > /dev/null"
  [diagnose-threads-1]="$tcpwhy diagnose --quiet --format json --threads 1 $capture > /dev/null"
  [diagnose-threads-2]="$tcpwhy diagnose --quiet --format json --threads 2 $capture > /dev/null"
  [baseline-diagnose]="$baseline diagnose --quiet --format json $capture > /dev/null"
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
if [[ $selected == *" diagnose-threads-"* ]] && ! "$tcpwhy" diagnose --help | grep -q -- '--threads'; then
  echo "run: $tcpwhy diagnose has no --threads: skipping the diagnose-threads rows" >&2
  selected=${selected// diagnose-threads-1 / }
  selected=${selected// diagnose-threads-2 / }
fi
order=()
for name in cat tcpwhy-connections tcpwhy-diagnose diagnose-threads-1 diagnose-threads-2 baseline-diagnose tcptrace tshark; do
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
print("| tool | seconds | MB/s | packets/s | peak RSS MB | × tcptrace | × tshark | × cat "
      "| RSS / tcptrace's | RSS / cat's |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for name in names:
    s = seconds[name]
    ratio = lambda other: f"{seconds[other] / s:.2f}" if other in seconds else "–"
    rss_ratio = lambda other: f"{rss[name] / rss[other]:.2f}" if other in rss else "–"
    print(f"| {name} | {s:.2f} | {mb / s:.0f} | {packets / s:,.0f} | {rss[name] / 1024:.0f} "
          f"| {ratio('tcptrace')} | {ratio('tshark')} | {ratio('cat')} "
          f"| {rss_ratio('tcptrace')} | {rss_ratio('cat')} |")
print("\nRatios are throughput relative to the named tool: above 1 is faster. "
      "RSS ratios are peak memory against the named tool's: below 1 is smaller.")
EOF

# The connections split across threads: the same output, whatever the number.
if [[ $selected == *" diagnose-threads-2 "* ]]; then
  one=$("$tcpwhy" diagnose --quiet --format json --threads 1 "$capture" | sha256sum)
  two=$("$tcpwhy" diagnose --quiet --format json --threads 2 "$capture" | sha256sum)
  same=no
  [ "$one" = "$two" ] && same=yes
  printf '\nOutput of --threads 1 and --threads 2 identical: %s.\n' "$same" >> "$out/results.md"
fi

# The synthetic scale series: diagnose must grow no faster than its input.
if [ -n "$scale" ] && [[ $selected == *" tcpwhy-diagnose "* ]]; then
  rows=()
  for connections in $scale; do
    synthetic=$out/synthetic-$connections.pcap
    [ -f "$synthetic" ] || python3 bench/make-synthetic.py "$synthetic" "$connections"
    echo "timing diagnose on $synthetic" >&2
    command="$tcpwhy diagnose --quiet --format json $synthetic > /dev/null"
    hyperfine --style none --warmup 0 --runs 3 --export-json "$out/scale-$connections.json" \
      "$command" > /dev/null
    median=$(python3 -c "import json; print(json.load(open('$out/scale-$connections.json'))['results'][0]['median'])")
    peak=$(/usr/bin/time -f %M bash -c "$command" 2>&1 >/dev/null | tail -1)
    rows+=("$connections $median $peak")
  done
  python3 - "${rows[@]}" <<'EOF' >> "$out/results.md"
import sys
# make-synthetic.py's default: 4 transactions per connection.
rows = [row.split() for row in sys.argv[1:]]
print("\nSynthetic scale series (bench/make-synthetic.py, 4 transactions per connection), "
      "`tcpwhy diagnose --format json`, median of 3 runs:\n")
print("| connections | transactions | seconds | peak RSS MB | µs per transaction |")
print("| ---: | ---: | ---: | ---: | ---: |")
per = []
for connections, seconds, rss in rows:
    transactions = 4 * int(connections)
    per.append(float(seconds) / transactions * 1e6)
    print(f"| {int(connections):,} | {transactions:,} | {float(seconds):.2f} | {int(rss) / 1024:.0f} "
          f"| {per[-1]:.2f} |")
growth = per[-1] / per[0]
print(f"\nTime per transaction, largest row against smallest: {growth:.2f}× "
      f"({'flat' if growth <= 1.5 else 'NOT flat'}: the bound is 1.5×).")
EOF
fi
cat "$out/results.md"
