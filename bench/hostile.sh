#!/usr/bin/env bash
# Memory and time of tcpwhy on huge and hostile captures, within its memory budget.
#
#   bench/hostile.sh               makes (once) every shape and measures it
#   MEMORY=1G bench/hostile.sh     measures with that --memory (default 256M)
#   SHAPES="syn-1m txn-4m" bench/hostile.sh   only those shapes
#
# The shapes (bench/make-hostile.py, into bench/out/, about 13 GB in all):
# 1, 5 and 10 million unanswered SYNs from random sources; 1 million complete
# connections; 1 million connections never closed; 4 million transactions on
# one connection; one SYN sent 100 million times. Each is read plain and
# compressed with zstd, by `diagnose --format json` and by `report`, each run
# under GNU time. Prints, and writes to bench/out/hostile.md, per shape:
# packets, diagnose's seconds, every run's peak RSS, the connections listed,
# what the budget left out and the first finding. Needs GNU time and zstd
# (apt-get install time zstd).
set -euo pipefail
cd "$(dirname "$0")/.."

out=bench/out
tcpwhy=${TCPWHY:-target/release/tcpwhy}
memory=${MEMORY:-256M}
mkdir -p "$out"
[ -n "${TCPWHY:-}" ] || cargo build --release -q -p tcpwhy

declare -A recipe=(
  [syn-1m]=syn-flood:1000000 [syn-5m]=syn-flood:5000000 [syn-10m]=syn-flood:10000000
  [conn-1m]=connections:1000000 [open-1m]=never-closed:1000000
  [txn-4m]=transactions:4000000 [syn-one-100m]=syn-retries:100000000
)
shapes=(${SHAPES:-syn-1m syn-5m syn-10m conn-1m open-1m txn-4m syn-one-100m})

# Runs tcpwhy with the arguments after the first under GNU time, its output
# to the file the first names; prints "seconds peak-kB".
timed() {
  local output=$1
  shift
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$tcpwhy" "$@" > "$output"
  cat "$out/time.txt"
}

{
  echo "Budget: --memory $memory. Files in the page cache; peak RSS in MB."
  echo
  echo "| capture | packets | diagnose s | diagnose | diagnose .zst | report | report .zst | connections listed | attempts not listed | connections not listed | transactions not listed | first finding |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
} > "$out/hostile.md"
for name in "${shapes[@]}"; do
  IFS=: read -r kind count <<< "${recipe[$name]}"
  capture="$out/$name.pcap"
  [ -f "$capture" ] || python3 bench/make-hostile.py "$kind" "$count" "$capture"
  [ -f "$capture.zst" ] || zstd -q -T0 -f "$capture" -o "$capture.zst"
  cat "$capture" "$capture.zst" > /dev/null
  read -r seconds diagnose_kb < <(timed "$out/result.json" diagnose --quiet --format json \
    --memory "$memory" "$capture")
  read -r _ diagnose_zst_kb < <(timed /dev/null diagnose --quiet --format json \
    --memory "$memory" "$capture.zst")
  read -r _ report_kb < <(timed /dev/null report --quiet --memory "$memory" \
    -o "$out/hostile.html" "$capture")
  read -r _ report_zst_kb < <(timed /dev/null report --quiet --memory "$memory" \
    -o "$out/hostile.html" "$capture.zst")
  python3 - "$out/result.json" "$name" "$seconds" "$diagnose_kb" "$diagnose_zst_kb" \
    "$report_kb" "$report_zst_kb" >> "$out/hostile.md" <<'EOF'
import json, sys
path, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
peaks = " | ".join(f"{int(kb) / 1024:.0f}" for kb in sys.argv[4:8])
lines = [json.loads(line) for line in open(path)]
end = lines[-1]
first = next((l for l in lines if l["type"] == "finding"), None)
title = first["title"] if first else "none"
trimmed = end["trimmed"]
print(f"| {name} | {end['frames']:,} | {seconds:.1f} | {peaks} | {end['connections']:,} | "
      f"{trimmed['attempts_not_listed']:,} | {trimmed['connections_not_listed']:,} | "
      f"{trimmed['transactions_not_listed']:,} | {title} |")
EOF
  tail -n 1 "$out/hostile.md"
done
rm -f "$out/time.txt" "$out/result.json" "$out/hostile.html"
