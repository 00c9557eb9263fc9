#!/usr/bin/env python3
"""Regenerates every lab scenario: real Linux TCP between two network
namespaces, recorded with tcpdump, each capture with a manifest of the
causes it must reveal and the figures measured from it.

    sudo python3 lab/run.py [SCENARIO ...]     # all when none is named

Captures and manifests go to tests/captures/.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import measure
from hosts import (BACK_IP, BACK_NS, CLIENT_IP, CLIENT_NS, SERVER_IP, SERVER_NS, hosts, in_ns,
                   recording, running)
from wire import DropRule

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "captures")
APPS = ["python3", os.path.join(HERE, "apps.py")]


def client(*args, timeout=60):
    subprocess.run(in_ns(CLIENT_NS, *APPS, *args, "--server", SERVER_IP), timeout=timeout,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def record(name, server_args, client_runs, points=("client",), wire=None, snaplen=128):
    """Runs one scenario; returns {capture point: capture path}."""
    paths = {point: os.path.join(OUT, f"{name}.pcap" if len(points) == 1 else f"{name}-{point}.pcap")
             for point in points}
    with hosts(**(wire or {})):
        with running(SERVER_NS, *APPS, *server_args):
            with recording(points, paths.get, snaplen):
                client_runs()
    for path in paths.values():
        os.chmod(path, 0o644)
    return paths


def manifest(name, causes, path, point, wire, expect, figure):
    data = {
        "scenario": name,
        "causes": causes,
        "capture": os.path.basename(path),
        "capture_point": point,
        "client": CLIENT_IP,
        "server": f"{SERVER_IP}:{expect.pop('port', 8080)}",
        "wire": wire,
        "expect": expect,
        "figure": figure,
    }
    with open(os.path.join(OUT, f"{name}.json"), "w") as out:
        json.dump(data, out, indent=2)
        out.write("\n")
    print(f"{name}: {figure}")


def two_piece_message(name, side):
    """A message written in two pieces without TCP_NODELAY: the second piece
    waits for the ACK of the first, which the peer delays."""
    wire = {"delay_ms": 1.0}
    if side == "request":
        server = ["rr-server", "--request-size", "300", "--chunks", "100"]
        run = lambda: client("rr-client", "--pieces", "100,200", "--chunks", "100", "--requests", "20")
        sender = CLIENT_IP
    else:
        server = ["rr-server", "--request-size", "100", "--chunks", "100,1200", "--nodelay", "0"]
        run = lambda: client("rr-client", "--pieces", "100", "--chunks", "100,1200", "--requests", "20")
        sender = SERVER_IP
    path = record(name, server, run, wire=wire)["client"]
    stalls = measure.request_stalls_ms(measure.packets(path), sender)
    stall = measure.median(stalls)
    causes = ["nagle_delayed_ack"] if side == "request" else ["delayed_ack"]
    manifest(name, causes, path, "client", wire,
             {"stall_ms": round(stall, 1), "stalls": len(stalls), "stalled_side": sender},
             f"{len(stalls)} stalls, median {stall:.1f} ms")


def delayed_ack():
    two_piece_message("delayed_ack", "response")


def nagle_delayed_ack():
    two_piece_message("nagle_delayed_ack", "request")


def receive_window_limit():
    wire = {"delay_ms": 4.5}
    server = ["sink", "--port", "5001", "--rcvbuf", "8192"]
    run = lambda: client("upload", "--port", "5001", "--bytes", "3000000")
    path = record("receive_window_limit", server, run, wire=wire)["client"]
    pkts = measure.packets(path)
    window = max(p.window for p in pkts if p.src == SERVER_IP and not p.syn)
    rtt = measure.handshake_rtt_ms(pkts)
    rate = measure.throughput_bytes_per_s(pkts, CLIENT_IP)
    manifest("receive_window_limit", ["receive_window_limited"], path, "client", wire,
             {"port": 5001, "window_bytes": window, "rtt_ms": round(rtt, 2),
              "throughput_bytes_per_s": round(rate)},
             f"{rate / 1e6:.2f} MB/s with {window / 1000:.1f} kB window, RTT {rtt:.1f} ms")


def zero_window():
    wire = {"delay_ms": 1.0}
    server = ["sink", "--port", "5001", "--rcvbuf", "16384", "--read-size", "4096",
              "--read-pause-ms", "40"]
    run = lambda: client("upload", "--port", "5001", "--bytes", "400000")
    path = record("zero_window", server, run, wire=wire)["client"]
    pkts = measure.packets(path)
    zero = [p for p in pkts if p.zero_window and p.src == SERVER_IP]
    manifest("zero_window", ["zero_window"], path, "client", wire,
             {"port": 5001, "zero_windows_min": len(zero), "stopped_reading": SERVER_IP},
             f"{len(zero)} zero-window ACKs from the receiver")


def loss_bursts_downstream():
    wire = {"delay_ms": 2.0, "rate_mbit": 20}
    drops = [DropRule("window", direction="c2s", period_s=1.0, burst_s=0.25)]
    server = ["sink", "--port", "5001"]
    run = lambda: client("upload", "--port", "5001", "--bytes", "6000000")
    path = record("loss_bursts_downstream", server, run, wire={**wire, "drops": drops})["client"]
    pkts = measure.packets(path)
    retransmitted = [p for p in pkts if p.retransmission and p.src == CLIENT_IP]
    manifest("loss_bursts_downstream", ["packet_loss"], path, "client",
             {**wire, "drops": "c2s data, 0.25 s of every 1 s"},
             {"port": 5001, "retransmissions_min": len(retransmitted), "loss_period_s": 1.0,
              "loss_location": "downstream"},
             f"{len(retransmitted)} retransmissions in bursts every 1 s")


def loss_upstream():
    wire = {"delay_ms": 2.0, "rate_mbit": 50}
    drops = [DropRule("random", direction="c2s", probability=0.02, seed=3)]
    server = ["sink", "--port", "5001"]
    run = lambda: client("upload", "--port", "5001", "--bytes", "3000000")
    paths = record("loss_upstream", server, run, points=("client", "server"),
                   wire={**wire, "drops": drops})
    lost = [p for p in measure.packets(paths["server"]) if p.lost and p.src == CLIENT_IP]
    # Wireshark calls a resend out-of-order when it follows new data within an RTT.
    resent = [p for p in measure.packets(paths["client"])
              if (p.retransmission or p.out_of_order) and p.src == CLIENT_IP]
    manifest("loss_upstream", ["packet_loss"], paths["server"], "server",
             {**wire, "drops": "2% of c2s packets, between the two capture points"},
             {"port": 5001, "lost_segments_min": len(lost), "loss_location": "upstream",
              "sender_side_capture": os.path.basename(paths["client"]),
              "sender_side_resent": len(resent)},
             f"{len(lost)} gaps seen at the receiver; the sender's tap shows "
             f"{len(resent)} segments sent again")


def syn_drops():
    """Clients arrive every 200 ms at a server with a listen backlog of 1 that
    accepts one connection every 1.5 s: once its accept queue is full the
    kernel drops new SYNs, the clients retry after 1, 3 and 7 s, and those
    still waiting at 10 s give up."""
    wire = {"delay_ms": 1.0}
    exponential_backoff = {"net.ipv4.tcp_syn_linear_timeouts": 0}
    server = ["slow-accept", "--backlog", "1", "--accept-every-s", "1.5"]
    run = lambda: client("rr-client", "--parallel", "12", "--stagger-ms", "200", "--requests", "1",
                         "--connect-timeout", "10")
    path = record("syn_drops", server, run,
                  wire={**wire, "client_sysctls": exponential_backoff})["client"]
    pkts = measure.packets(path)
    syns = measure.syn_times_by_stream(pkts)
    answered_ports = {p.dport for p in pkts if p.syn and p.ack_flag}
    unanswered = [key for key in syns if key[0] not in answered_ports]
    most_retried = max(syns.values(), key=len)
    retries = [round(t - most_retried[0], 1) for t in most_retried[1:]]
    manifest("syn_drops", ["connection_setup_failure"], path, "client",
             {**wire, "server": "listen backlog 1, one accept every 1.5 s, a client every 200 ms"},
             {"syn_retry_after_s": retries, "connections": len(syns),
              "unanswered_connections": len(unanswered)},
             f"{len(syns)} connections; SYNs retried after {retries} s; "
             f"{len(unanswered)} never answered")


def server_think_time():
    wire = {"delay_ms": 1.0}
    server = ["rr-server", "--think-ms", "120"]
    run = lambda: client("rr-client", "--requests", "10")
    path = record("server_think_time", server, run, wire=wire)["client"]
    think = measure.median(measure.server_think_ms(measure.packets(path), CLIENT_IP, SERVER_IP))
    manifest("server_think_time", ["server_think_time"], path, "client", wire,
             {"server_think_ms": round(think, 1)}, f"median server think time {think:.1f} ms")


def small_writes():
    wire = {"delay_ms": 1.0}
    server = ["rr-server", "--chunks", "6,45,29", "--chunk-pause-ms", "15", "--nodelay", "1"]
    run = lambda: client("rr-client", "--chunks", "6,45,29", "--requests", "10", "--nodelay", "1")
    path = record("small_writes", server, run, wire=wire)["client"]
    sizes = sorted({p.len for p in measure.data_from(measure.packets(path), SERVER_IP)})
    manifest("small_writes", ["small_segments"], path, "client", wire,
             {"response_segment_sizes": sizes, "write_gap_ms": 15},
             f"responses written as segments of {sizes} bytes, 15 ms apart")


def periodic_stalls():
    wire = {"delay_ms": 1.0}
    server = ["rr-server", "--stall-every-s", "1.5", "--stall-ms", "300"]
    run = lambda: client("rr-client", "--requests", "400", "--client-think-ms", "10")
    path = record("periodic_stalls", server, run, wire=wire)["client"]
    idle = measure.idle_periods_ms(measure.packets(path), 200)
    lengths = [length for _, length in idle]
    period = measure.median(measure.gaps_ms([start for start, _ in idle])) / 1000
    manifest("periodic_stalls", ["periodic_stalls"], path, "client", wire,
             {"stall_ms": round(measure.median(lengths), 1), "stalls": len(idle),
              "period_s": round(period, 2)},
             f"{len(idle)} stalls of {measure.median(lengths):.0f} ms every {period:.2f} s")


def chatty_high_rtt():
    wire = {"delay_ms": 25.0}
    server = ["rr-server", "--chunks", "200"]
    run = lambda: client("rr-client", "--chunks", "200", "--requests", "40", "--nodelay", "1")
    path = record("chatty_high_rtt", server, run, wire=wire)["client"]
    pkts = measure.packets(path)
    rtt = measure.handshake_rtt_ms(pkts)
    turns = len([p for p in measure.data_from(pkts, CLIENT_IP)])
    manifest("chatty_high_rtt", ["chattiness"], path, "client", wire,
             {"rtt_ms": round(rtt, 1), "turns": turns},
             f"{turns} turns × RTT {rtt:.1f} ms")


def link_rate_limit():
    wire = {"delay_ms": 1.0, "rate_mbit": 10}
    server = ["sink", "--port", "5001"]
    run = lambda: client("upload", "--port", "5001", "--bytes", "2500000")
    path = record("link_rate_limit", server, run, wire=wire)["client"]
    rate = measure.throughput_bytes_per_s(measure.packets(path), CLIENT_IP)
    manifest("link_rate_limit", ["link_bandwidth"], path, "client", wire,
             {"port": 5001, "throughput_bytes_per_s": round(rate), "link_bytes_per_s": 1_250_000},
             f"{rate / 1e6:.2f} MB/s on a 10 Mbit/s link")


def odd_segments_delayed_ack():
    """A send-and-wait application writes 4 kB at a time: each write goes out as
    three segments, the receiver ACKs the first two at once and delays the ACK
    of the odd third, and the next write waits for it."""
    wire = {"delay_ms": 1.0}
    server = ["sink", "--port", "5001", "--delay-acks", "1"]
    run = lambda: client("upload", "--port", "5001", "--bytes", str(60 * 4096),
                         "--write-size", "4096", "--wait-acked", "1")
    path = record("odd_segments_delayed_ack", server, run, wire=wire)["client"]
    stalls = measure.request_stalls_ms(measure.packets(path), CLIENT_IP)
    manifest("odd_segments_delayed_ack", ["delayed_ack"], path, "client", wire,
             {"port": 5001, "stall_ms": round(measure.median(stalls), 1), "stalls": len(stalls)},
             f"{len(stalls)} writes waited {measure.median(stalls):.1f} ms for a delayed ACK")


def port_reuse():
    wire = {"delay_ms": 1.0}
    server = ["rr-server", "--close-after", "1"]
    run = lambda: client("rr-client", "--requests", "1", "--connections", "8",
                         "--between-connections-ms", "200")
    path = record("port_reuse", server, run,
                  wire={**wire, "client_sysctls": {"net.ipv4.ip_local_port_range": "40000 40001"}})["client"]
    syns = measure.syn_times_by_stream(measure.packets(path))
    ports = sorted({sport for sport, _ in syns})
    manifest("port_reuse", ["ephemeral_port_reuse"], path, "client",
             {**wire, "client_port_range": "40000-40001"},
             {"connections": 8, "client_ports": ports},
             f"8 connections on {len(ports)} client ports")


def pool_queueing():
    """Twelve clients at once call a front tier whose pool to the back tier
    opens one connection a second: requests queue for the pool."""
    wire = {"delay_ms": 1.0}

    def run():
        with running(BACK_NS, *APPS, "rr-server", "--port", "9090", "--think-ms", "20"):
            client("rr-client", "--parallel", "12", "--requests", "25")

    path = record("pool_queueing", ["front", "--pool-size", "8"], run, points=("server-any",),
                  wire={**wire, "back_tier": True})["server-any"]
    syns = measure.syn_times_by_stream(measure.packets(path))
    front = sorted(times[0] for (_, port), times in syns.items() if port == 8080)
    back = sorted(times[0] for (_, port), times in syns.items() if port == 9090)
    interval = measure.median(measure.gaps_ms(back)) / 1000
    manifest("pool_queueing", ["connection_pool_queueing"], path, "server (any interface)",
             {**wire, "back_tier": f"{BACK_IP}:9090 behind the server, think time 20 ms"},
             {"front_connections": len(front), "back_connections": len(back),
              "back_connection_interval_s": round(interval, 2)},
             f"{len(front)} client connections wait on a pool that grew to {len(back)} "
             f"connections, one every {interval:.2f} s")


def healthy():
    wire = {"delay_ms": 1.0}
    server = ["rr-server", "--chunks", "2000", "--nodelay", "1"]
    run = lambda: client("rr-client", "--chunks", "2000", "--requests", "20", "--nodelay", "1")
    path = record("healthy", server, run, wire=wire)["client"]
    pkts = measure.packets(path)
    retransmissions = sum(p.retransmission for p in pkts)
    manifest("healthy", [], path, "client", wire, {"retransmissions": retransmissions},
             f"{len(pkts)} packets, {retransmissions} retransmissions")


SCENARIOS = {f.__name__: f for f in (
    delayed_ack, nagle_delayed_ack, receive_window_limit, zero_window, loss_bursts_downstream,
    loss_upstream, syn_drops, server_think_time, small_writes, periodic_stalls,
    chatty_high_rtt, link_rate_limit, odd_segments_delayed_ack, port_reuse, pool_queueing,
    healthy)}


def main():
    if os.geteuid() != 0:
        sys.exit("lab: run as root (network namespaces and TAP devices)")
    missing = [tool for tool in ("ip", "tcpdump", "tshark") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"lab: {', '.join(missing)} missing (apt-get install iproute2 tcpdump tshark)")
    names = sys.argv[1:] or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        sys.exit(f"lab: unknown scenario {unknown}; known: {', '.join(SCENARIOS)}")
    os.makedirs(OUT, exist_ok=True)
    for name in names:
        started = time.monotonic()
        SCENARIOS[name]()
        print(f"  ({time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    main()
