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
set -euo pipefail

out=${1:-bench/out/bench.pcap}
bulk_mb=${2:-1300}
connections=${3:-40000}
loss_percent=${4:-0}
here=$(cd "$(dirname "$0")" && pwd)
client=twbench-client
server=twbench-server
client_ip=10.99.0.1
server_ip=10.99.0.2

need() { command -v "$1" >/dev/null || { echo "make-capture: $1 is required ($2)" >&2; exit 2; }; }
need tcpdump "apt-get install tcpdump"
need ethtool "apt-get install ethtool"
[ "$loss_percent" = 0 ] || need iptables "apt-get install iptables"
[ "$(id -u)" = 0 ] || { echo "make-capture: run as root (network namespaces)" >&2; exit 2; }

cleanup() {
  [ -n "${tcpdump_pid:-}" ] && kill "$tcpdump_pid" 2>/dev/null || true
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  ip netns del "$client" 2>/dev/null || true
  ip netns del "$server" 2>/dev/null || true
}
trap cleanup EXIT
cleanup

ip netns add "$client"
ip netns add "$server"
ip link add twb-c netns "$client" type veth peer name twb-s netns "$server"
ip -n "$client" addr add "$client_ip/24" dev twb-c
ip -n "$server" addr add "$server_ip/24" dev twb-s
for ns in "$client" "$server"; do
  ip -n "$ns" link set lo up
  # Wide enough for tens of thousands of connections in TIME_WAIT.
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
  ip netns exec "$ns" sysctl -qw net.ipv4.tcp_tw_reuse=1
done
ip -n "$client" link set twb-c up
ip -n "$server" link set twb-s up
# MTU-sized packets on the wire, as a real capture point sees them.
ip netns exec "$client" ethtool -K twb-c tso off gso off gro off >/dev/null
ip netns exec "$server" ethtool -K twb-s tso off gso off gro off >/dev/null
if [ "$loss_percent" != 0 ]; then
  probability=$(python3 -c "print($loss_percent / 100)")
  for chain in INPUT OUTPUT; do
    ip netns exec "$server" iptables -A "$chain" -p tcp -m statistic --mode random \
      --probability "$probability" -j DROP
  done
fi

mkdir -p "$(dirname "$out")"
rm -f "$out"
ip netns exec "$server" python3 "$here/traffic.py" server "$server_ip" &
server_pid=$!
ip netns exec "$client" tcpdump -q -i twb-c -s 0 -B 65536 -w "$out" tcp 2>/dev/null &
tcpdump_pid=$!
sleep 1

started=$(date +%s)
bulk_bytes=$(python3 -c "print(int($bulk_mb * 1e6))")
ip netns exec "$client" python3 "$here/traffic.py" client "$server_ip" \
  --bulk-bytes "$bulk_bytes" --connections "$connections"
sleep 1
kill -INT "$tcpdump_pid"
wait "$tcpdump_pid" 2>/dev/null || true
tcpdump_pid=
echo "made $out: $(du -h "$out" | cut -f1), $bulk_mb MB upload and $connections connections in $(( $(date +%s) - started )) s"
