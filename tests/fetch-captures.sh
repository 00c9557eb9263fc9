#!/usr/bin/env bash
# Fetches the public captures the tests read, at pinned commits, into
# ../shared/captures beside this checkout (or DIR, or $TCPWHY_CAPTURES):
#
#   tests/fetch-captures.sh [DIR]
#
# ppa/            the book Practical Packet Analysis (Chris Sanders, editions
#                 1 to 3), from github.com/chrissanders/packets; first- and
#                 second-edition files carry the prefix ppa1e_ / ppa2e_.
#                 Captures of malware, attacks and scans are left out.
# tcpdump-tests/  every .pcap and .pcapng of tcpdump's own test suite
#                 (github.com/the-tcpdump-group/tcpdump, tests/, BSD licence).
#
# Needs git and network access to github.com (PACKETS_URL and TCPDUMP_URL
# name other copies of the two repositories). Existing files are replaced.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-${TCPWHY_CAPTURES:-$here/../shared/captures}}

PACKETS_URL=${PACKETS_URL:-https://github.com/chrissanders/packets}
PACKETS_THIRD_EDITION=0412fb1dc0aa671128f9da6689e0dbd4459c0b51
# The first and second editions' files, from the repository's pull request 2.
PACKETS_EARLIER_EDITIONS=e9c1e020721bfafd0882eb3d341466eff3a51c71
PACKETS_EARLIER_REF=refs/pull/2/head
TCPDUMP_URL=${TCPDUMP_URL:-https://github.com/the-tcpdump-group/tcpdump}
TCPDUMP_COMMIT=39b50f76672bca4af7d7eb52604c5b692c6b6b2c

THIRD_EDITION="arp_gratuitous.pcapng arp_resolution.pcapng dhcp6_outlease_acquisition.pcapng
dhcp_inlease_renewal.pcapng dhcp_nolease_initialization.pcapng dns.pcap dns_axfr.pcapng
dns_lab.pcapng dns_query_nonexistent.pcapng dns_query_response.pcapng
dns_recursivequery_client.pcapng dns_recursivequery_server.pcapng dns_reverse_lookup.pcapng
dns_tcp.pcapng http_espn.pcapng http_espn_fail.pcapng http_google.pcapng http_ip4and6.pcapng
http_post.pcapng icmp_echo.pcapng icmp_traceroute.pcapng icmpv6_neighbor_solicitation.pcapng
inconsistent_printer.pcapng ip_frag_source.pcapng ip_ttl_dest.pcapng ip_ttl_source.pcapng
ipv6_fragments.pcapng mail_receiver_server_3.pcapng mail_sender_attachment.pcapng
mail_sender_client_1.pcapng mail_sender_server_2.pcapng nowebaccess1.pcapng
nowebaccess2.pcapng nowebaccess3.pcapng stranded_branchdns.pcapng stranded_clientside.pcapng
tcp_dupack.pcapng tcp_handshake.pcapng tcp_refuseconnection.pcapng tcp_retransmissions.pcapng
tcp_teardown.pcapng tickedoffdeveloper.pcapng udp_dnsrequest.pcapng weather_broken.pcapng
weather_working.pcapng"
FIRST_EDITION="arp.pcap destunreachable.pcap dhcp.pcap dns.cap email-troubles.pcap ftp.pcap
ftpclientdenied.pcap ftpserverdenied.pcap http-client-refuse.pcap http-fault-post.pcap
http.cap icmp-tracert-slow.pcap icmp.pcap ipfragments.pcap printerproblem.pcap
tcp-con-lost.pcap telnet.pcap"
SECOND_EDITION="arp_gratuitous.pcap arp_resolution.pcap dhcp_inlease_renewal.pcap
dhcp_nolease_renewal.pcap dns_axfr.pcap dns_query_response.pcap
dns_recursivequery_client.pcap dns_recursivequery_server.pcap http_espn.pcap
http_google.pcap http_post.pcap icmp_echo.pcap icmp_traceroute.pcap inconsistent_printer.pcap
ip_frag_source.pcap ip_ttl_dest.pcap ip_ttl_source.pcap nowebaccess1.pcap nowebaccess2.pcap
nowebaccess3.pcap stranded_branchdns.pcap stranded_clientside.cap tcp_dupack.pcap
tcp_handshake.pcap tcp_refuseconnection.pcap tcp_retransmissions.pcap tcp_teardown.pcap
tickedoffdeveloper.pcap udp_dnsrequest.pcap"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Checks out COMMIT-OR-REF of URL into DIR with only the files matching the
# patterns after it, fetching no other file's contents; prints the commit.
checkout() {
  local url=$1 dir=$2 what=$3
  shift 3
  git init --quiet "$dir"
  git -C "$dir" remote add origin "$url"
  git -C "$dir" config remote.origin.promisor true
  git -C "$dir" config remote.origin.partialclonefilter blob:none
  git -C "$dir" fetch --quiet --depth 1 --filter=blob:none origin "$what"
  git -C "$dir" sparse-checkout set --no-cone "$@"
  git -C "$dir" checkout --quiet FETCH_HEAD
  git -C "$dir" rev-parse HEAD
}

# Copies the named files from FROM into TO, each name prefixed with PREFIX.
copy() {
  local from=$1 to=$2 prefix=$3
  shift 3
  mkdir -p "$to"
  for name in "$@"; do
    cp "$from/$name" "$to/$prefix$name"
  done
}

echo "fetching $PACKETS_URL"
checkout "$PACKETS_URL" "$work/third" "$PACKETS_THIRD_EDITION" $THIRD_EDITION >/dev/null
copy "$work/third" "$dest/ppa" "" $THIRD_EDITION
earlier=$(checkout "$PACKETS_URL" "$work/earlier" "$PACKETS_EARLIER_REF" \
  $(printf 'ppa1e/%s ' $FIRST_EDITION) $(printf 'ppa2e/%s ' $SECOND_EDITION))
[ "$earlier" = "$PACKETS_EARLIER_EDITIONS" ] || {
  echo "fetch-captures: $PACKETS_EARLIER_REF is now $earlier, not the pinned $PACKETS_EARLIER_EDITIONS" >&2
  exit 1
}
copy "$work/earlier/ppa1e" "$dest/ppa" ppa1e_ $FIRST_EDITION
copy "$work/earlier/ppa2e" "$dest/ppa" ppa2e_ $SECOND_EDITION

echo "fetching $TCPDUMP_URL"
checkout "$TCPDUMP_URL" "$work/tcpdump" "$TCPDUMP_COMMIT" '/tests/*.pcap' '/tests/*.pcapng' >/dev/null
mkdir -p "$dest/tcpdump-tests"
cp "$work"/tcpdump/tests/*.pcap "$work"/tcpdump/tests/*.pcapng "$dest/tcpdump-tests/"

echo "$(ls "$dest/ppa" | wc -l) book captures and $(ls "$dest/tcpdump-tests" | wc -l) tcpdump test files in $dest"
