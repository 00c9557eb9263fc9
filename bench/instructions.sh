#!/usr/bin/env bash
# Counts the instructions `tcpwhy diagnose --threads 1` spends per packet, stage by
# stage, with callgrind on a fixed slice of the bench capture, and fails when
# the whole run or a stage costs more than 10% over the committed baseline.
#
#   bench/instructions.sh             compare with bench/instructions.baseline
#   bench/instructions.sh --update    write the baseline from this build
#
# The slice (bench/out/slice.pcap, 200,000 packets) is the first 100,000
# packets of the bulk upload and the first 100,000 of the short connections
# of bench/out/bench.pcap; without that capture, make-capture.sh records a
# smaller one of the same traffic (as root) to cut it from.
# TCPWHY=path counts that binary instead of building target/release/tcpwhy.
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench/out
slice=$out/slice.pcap
baseline=bench/instructions.baseline
tcpwhy=${TCPWHY:-target/release/tcpwhy}
packets_each=100000
growth_allowed=1.10
mkdir -p "$out"

for tool in valgrind tcpdump mergecap python3; do
  command -v "$tool" >/dev/null || { echo "instructions: $tool is required (apt-get install valgrind tcpdump tshark)" >&2; exit 2; }
done

if [ ! -f "$slice" ]; then
  source=$out/bench.pcap
  if [ ! -f "$source" ]; then
    # The same traffic as the bench capture, with enough of each kind for the slice.
    source=$out/slice-source.pcap
    # A busy machine can drop packets while recording; the script then makes
    # no capture, and a second or third recording usually has none.
    for attempt in 1 2 3; do
      [ -f "$source" ] || bench/make-capture.sh "$source" 160 10000 >&2 || [ "$attempt" -lt 3 ]
    done
  fi
  tcpdump -r "$source" -w "$slice.bulk" -c "$packets_each" 'tcp port 5001' 2>/dev/null
  tcpdump -r "$source" -w "$slice.short" -c "$packets_each" 'tcp port 8080' 2>/dev/null
  mergecap -F pcap -w "$slice.partial" "$slice.bulk" "$slice.short"
  rm -f "$slice.bulk" "$slice.short"
  mv "$slice.partial" "$slice"
fi
packets=$(capinfos -c -M "$slice" | awk -F: '/Number of packets/ {gsub(/ /, "", $2); print $2}')
[ "$packets" = $((2 * packets_each)) ] ||
  { echo "instructions: $slice holds $packets packets, not $((2 * packets_each)); remove it to cut it again" >&2; exit 2; }

[ -n "${TCPWHY:-}" ] || cargo build --release -q -p tcpwhy
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
  "$tcpwhy" diagnose --quiet --format json --threads 1 "$slice" > /dev/null 2> "$out/callgrind.log"
python3 bench/callgrind-stages.py "$out/callgrind.out" "$packets" > "$out/instructions.tsv"

if [ "${1:-}" = --update ]; then
  cp "$out/instructions.tsv" "$baseline"
  echo "instructions: baseline written to $baseline" >&2
  cat "$baseline"
  exit 0
fi
python3 - "$baseline" "$out/instructions.tsv" "$growth_allowed" <<'PY'
import sys

def per_packet(path):
    with open(path) as table:
        return {stage: float(count) for stage, count in (line.rstrip("\n").split("\t") for line in table)}

baseline, now, allowed = per_packet(sys.argv[1]), per_packet(sys.argv[2]), float(sys.argv[3])
print(f"{'stage':<26}{'baseline':>10}{'now':>10}{'ratio':>8}   (instructions per packet)")
grown = []
for stage, before in baseline.items():
    after = now.get(stage, 0.0)
    ratio = after / before if before else 1.0
    print(f"{stage:<26}{before:>10.0f}{after:>10.0f}{ratio:>8.2f}")
    if ratio > allowed:
        grown.append(stage)
if grown:
    print(f"instructions: grew more than {allowed - 1:.0%} over the baseline: {', '.join(grown)}. "
          "A change that must cost more updates bench/instructions.baseline "
          "(bench/instructions.sh --update) in the same commit and says why.", file=sys.stderr)
    sys.exit(1)
print(f"instructions: every stage within {allowed - 1:.0%} of the baseline")
PY
