#!/usr/bin/env bash
# Records real TCP traffic between two network namespaces on a veth pair.
#
#   sudo bench/make-capture.sh [OUT] [BULK_MB] [CONNECTIONS] [LOSS_PERCENT]
#
# One bulk upload of BULK_MB megabytes, then CONNECTIONS short
# request/response connections, recorded with tcpdump on the client side.
# LOSS_PERCENT drops that share of packets at random on the server's way in
# and out (iptables), so the capture shows real retransmissions.
# Defaults make a capture of about 1.6 GB for the speed benchmark.
# Every namespace and interface is named twbench*; all are removed on exit,
# also on failure or Ctrl-C. Segmentation offloads are off (MTU-sized packets).
set -euo pipefail

out=${1:-bench/out/bench.pcap}
bulk_mb=${2:-1350}
connections=${3:-40000}
loss_percent=${4:-0}
here=$(cd "$(dirname "$0")" && pwd)
client=twbench-client
server=twbench-server
client_if=twbench-c
server_if=twbench-s
client_ip=10.99.0.1
server_ip=10.99.0.2

need() { command -v "$1" >/dev/null || { echo "make-capture: $1 is required ($2)" >&2; exit 2; }; }
need tcpdump "apt-get install tcpdump"
need capinfos "apt-get install tshark"
need ethtool "apt-get install ethtool"
[ "$loss_percent" = 0 ] || need iptables "apt-get install iptables"
[ "$(id -u)" = 0 ] || { echo "make-capture: run as root (network namespaces)" >&2; exit 2; }

cleanup() {
  [ -n "${tcpdump_pid:-}" ] && kill "$tcpdump_pid" 2>/dev/null || true
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  for ns in "$client" "$server"; do
    # Whatever this script left running in its namespaces (an interrupted client).
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || kill $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  [ -z "${tmp:-}" ] || rm -f "$tmp" "$tmp.log" "$beside_out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup

ip netns add "$client"
ip netns add "$server"
ip link add "$client_if" netns "$client" type veth peer name "$server_if" netns "$server"
ip -n "$client" addr add "$client_ip/24" dev "$client_if"
ip -n "$server" addr add "$server_ip/24" dev "$server_if"
for ns in "$client" "$server"; do
  ip -n "$ns" link set lo up
  # Wide enough for tens of thousands of connections in TIME_WAIT.
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
  ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
done
ip -n "$client" link set "$client_if" up
ip -n "$server" link set "$server_if" up
# MTU-sized packets on the wire, as a real capture point sees them.
ip netns exec "$client" ethtool -K "$client_if" tso off gso off gro off >/dev/null
ip netns exec "$server" ethtool -K "$server_if" tso off gso off gro off >/dev/null
if [ "$loss_percent" != 0 ]; then
  probability=$(python3 -c "print($loss_percent / 100)")
  for chain in INPUT OUTPUT; do
    ip netns exec "$server" iptables -A "$chain" -p tcp -m statistic --mode random \
      --probability "$probability" -j DROP
  done
fi

mkdir -p "$(dirname "$out")"
# Recorded in memory: tcpdump drops packets when the disk cannot keep up.
# Then copied beside OUT and renamed: a reader of an older OUT keeps it.
recording_dir=/dev/shm
[ -d "$recording_dir" ] && [ -w "$recording_dir" ] || recording_dir=$(dirname "$out")
tmp=$recording_dir/twbench.$$.pcap
beside_out=$out.partial.$$
ip netns exec "$server" python3 "$here/traffic.py" server "$server_ip" &
server_pid=$!
ip netns exec "$client" tcpdump -q -i "$client_if" -s 0 -B 65536 -w "$tmp" tcp 2>"$tmp.log" &
tcpdump_pid=$!
sleep 1

started=$(date +%s.%N)
bulk_bytes=$(python3 -c "print(int($bulk_mb * 1e6))")
# In the background and waited for, so a signal to this script is handled at
# once (cleanup kills the client) rather than after the client finishes.
ip netns exec "$client" python3 "$here/traffic.py" client "$server_ip" \
  --bulk-bytes "$bulk_bytes" --connections "$connections" &
wait $!
sleep 1
kill -INT "$tcpdump_pid"
wait "$tcpdump_pid" 2>/dev/null || true
tcpdump_pid=
traffic_s=$(python3 -c "print(f'{$(date +%s.%N) - $started:.0f}')")
dropped=$(awk '/dropped by (kernel|interface)/ {n += $1} END {print n + 0}' "$tmp.log")
if [ "$dropped" != 0 ]; then
  echo "make-capture: tcpdump dropped $dropped packets; the capture has holes, not made" >&2
  exit 1
fi
# Connections: SYNs without ACK, one per 4-tuple and initial sequence number
# (a retransmitted SYN counts once, a reused port again).
connections_seen=$(tcpdump -nr "$tmp" 'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn' 2>/dev/null |
  awk '{match($0, /seq [0-9]+/); print $3, $5, substr($0, RSTART, RLENGTH)}' | sort -u | wc -l)
packets=$(capinfos -c -M "$tmp" | awk -F: '/Number of packets/ {gsub(/ /, "", $2); print $2}')
cp "$tmp" "$beside_out"
mv "$beside_out" "$out"
rm -f "$tmp" "$tmp.log"
echo "made $out: $(stat -c %s "$out" | awk '{printf "%.0f MB", $1 / 1e6}'), $packets packets," \
  "$connections_seen connections ($bulk_mb MB upload, $connections short), no drops;" \
  "traffic took $traffic_s s, all $(( $(date +%s) - ${started%.*} )) s"
