#!/usr/bin/env bash
# Memory and time of tcpwhy diagnose on huge captures, within its memory budget.
#
#   bench/hostile.sh              makes (once) and measures: 1, 5 and 10 million
#                                 unanswered SYNs, 2 million complete connections
#   MEMORY=512M bench/hostile.sh  measures with that --memory (default: tcpwhy's default)
#
# The captures come from bench/make-hostile.py into bench/out/ (about 4 GB in
# all). Prints, and writes to bench/out/hostile.md, per capture: packets,
# seconds, peak RSS, connections listed, what the budget left out and the
# first finding. Needs GNU time (apt-get install time).
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench/out
tcpwhy=${TCPWHY:-target/release/tcpwhy}
mkdir -p "$out"
[ -n "${TCPWHY:-}" ] || cargo build --release -q -p tcpwhy
memory_flag=()
[ -z "${MEMORY:-}" ] || memory_flag=(--memory "$MEMORY")

captures=(syn-flood:1000000:syn-1m syn-flood:5000000:syn-5m syn-flood:10000000:syn-10m
          connections:2000000:conn-2m)
{
  echo "Budget: ${MEMORY:-the default}. tcpwhy diagnose --format json, file in the page cache."
  echo
  echo "| capture | packets | seconds | packets/s | peak RSS MB | connections listed | attempts not listed | connections not listed | first finding |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
} > "$out/hostile.md"
for spec in "${captures[@]}"; do
  IFS=: read -r kind count name <<< "$spec"
  capture="$out/$name.pcap"
  [ -f "$capture" ] || python3 bench/make-hostile.py "$kind" "$count" "$capture"
  cat "$capture" > /dev/null
  /usr/bin/time -f "%e %M" -o "$out/time.txt" \
    "$tcpwhy" diagnose --quiet --format json "${memory_flag[@]}" "$capture" > "$out/result.json"
  read -r seconds kilobytes < "$out/time.txt"
  python3 - "$out/result.json" "$name" "$seconds" "$kilobytes" >> "$out/hostile.md" <<'EOF'
import json, sys
path, name, seconds, kilobytes = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
lines = [json.loads(line) for line in open(path)]
end = lines[-1]
first = next((l for l in lines if l["type"] == "finding"), None)
title = first["title"] if first else "none"
trimmed = end["trimmed"]
print(f"| {name} | {end['frames']:,} | {seconds:.1f} | {end['frames'] / seconds:,.0f} | "
      f"{kilobytes / 1024:.0f} | {end['connections']:,} | {trimmed['attempts_not_listed']:,} | "
      f"{trimmed['connections_not_listed']:,} | {title} |")
EOF
  tail -n 1 "$out/hostile.md"
done
rm -f "$out/time.txt" "$out/result.json"
