#!/usr/bin/env python3
"""Regenerates the lab's scenarios: real Linux TCP between network
namespaces, recorded with tcpdump, each capture with a manifest of the
causes it must reveal, the settings it was made with and the figures
measured from it afterwards.

    sudo python3 lab/run.py [--out DIR] [--prefix NAME] [SCENARIO ...]   # all when none is named

Captures and manifests go to tests/captures/ unless --out says otherwise.
"""

import argparse
import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import traceback

import measure
import pcapfile
from hosts import (BACK_IP, CLIENT_IP, SERVER_BACK_IP, SERVER_IP, Names, hosts, in_ns,
                   recording, running)
from wire import DropRule

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(os.path.dirname(HERE), "tests", "captures")
APPS = ["python3", os.path.join(HERE, "apps.py")]
MSS = 1448  # 1500-byte MTU less IP and TCP headers and timestamps
MAX_CAPTURE_BYTES = 2_000_000
SNAPLEN = 128
NAMES = Names("twlab")  # another prefix with --prefix, to run beside another lab


def relay_log():
    return f"/tmp/{NAMES.prefix}-relay.jsonl"


@dataclasses.dataclass
class Setup:
    """How a scenario is made: the wire, the hosts and the applications."""

    server: list  # apps.py arguments for the server
    client: list  # apps.py arguments for the client, which runs to completion
    port: int = 8080
    delay_ms: float = 1.0
    rate_mbit: float = None
    drops: list = dataclasses.field(default_factory=list)
    client_sysctls: dict = dataclasses.field(default_factory=dict)
    server_sysctls: dict = dataclasses.field(default_factory=dict)
    client_extra_ips: tuple = ()  # more addresses for the client, as several clients would have
    snaplen: int = SNAPLEN
    back: list = None  # apps.py arguments for a back tier on a third host
    back_snat_ports: str = None  # the server's connections to the back tier NATed through these
    points: tuple = ("client",)

    def hosts_options(self):
        return {"delay_ms": self.delay_ms, "rate_mbit": self.rate_mbit, "drops": self.drops,
                "client_sysctls": self.client_sysctls, "server_sysctls": self.server_sysctls,
                "back_tier": self.back is not None, "back_snat_ports": self.back_snat_ports,
                "client_extra_ips": self.client_extra_ips}

    def wire(self):
        snat = self.back_snat_ports and f"server to back tier: masquerade to :{self.back_snat_ports}"
        wire = {"delay_ms": self.delay_ms, "rate_mbit": self.rate_mbit,
                "drops": [rule.describe() for rule in self.drops], "back_snat": snat}
        return {key: value for key, value in wire.items() if value}

    def apps(self):
        apps = {"server": " ".join(["apps.py", *self.server, "--port", str(self.port)]),
                "client": " ".join(["apps.py", *self.client, "--port", str(self.port)])}
        if self.back:
            apps["back"] = " ".join(["apps.py", *self.back])
        if self.client_sysctls:
            apps["client_sysctls"] = self.client_sysctls
        if self.server_sysctls:
            apps["server_sysctls"] = self.server_sysctls
        return apps


class Lab:
    """Records scenarios into one directory and writes their manifests. A
    capture is recorded under a .tmp name and takes its own name only once
    its manifest is written, so an interrupted run leaves no mismatched pair."""

    def __init__(self, out):
        self.out = out
        self.staged = []

    def record(self, name, setup):
        """Runs one scenario; returns {capture point: capture path}."""
        single = len(setup.points) == 1
        paths = {point: os.path.join(self.out, f"{name}.pcap" if single else f"{name}-{point}.pcap")
                 + ".tmp" for point in setup.points}
        self.staged = list(paths.values())
        prefix = NAMES.prefix
        with hosts(**setup.hosts_options(), prefix=prefix):
            with running(NAMES.server_ns, *APPS, *setup.server, "--port", str(setup.port)):
                with recording(setup.points, paths.get, setup.snaplen, prefix=prefix):
                    if setup.back:
                        with running(NAMES.back_ns, *APPS, *setup.back):
                            run_client(setup)
                    else:
                        run_client(setup)
        for path in paths.values():
            os.chmod(path, 0o644)
            check_capture(path)
        return paths

    def manifest(self, name, causes, setup, capture, point, expect, figure):
        data = {
            "scenario": name,
            "causes": causes,
            "capture": final_name(capture),
            "capture_point": point,
            "client": CLIENT_IP,
            "server": f"{SERVER_IP}:{setup.port}",
            "wire": setup.wire(),
            "apps": setup.apps(),
            "expect": expect,
            "figure": figure,
        }
        staged_manifest = os.path.join(self.out, f"{name}.json.tmp")
        with open(staged_manifest, "w") as out:
            json.dump(data, out, indent=2, ensure_ascii=False)
            out.write("\n")
        for path in [*self.staged, staged_manifest]:
            os.replace(path, path.removesuffix(".tmp"))
        self.staged = []
        print(f"{name}: {figure}")

    def discard_staged(self):
        for path in self.staged:
            if os.path.exists(path):
                os.remove(path)
        self.staged = []


def final_name(capture):
    return os.path.basename(capture).removesuffix(".tmp")


class NotReproduced(Exception):
    """The capture does not show the cause its scenario is meant to show."""


def require(condition, what):
    if not condition:
        raise NotReproduced(what)


def near(value, target, tolerance=0.1):
    return abs(value - target) <= abs(target) * tolerance


def run_client(setup):
    subprocess.run(in_ns(NAMES.client_ns, *APPS, *setup.client, "--server", SERVER_IP,
                         "--port", str(setup.port)),
                   timeout=60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def check_capture(path):
    """Captures stay small enough to ship, and hold wire-sized segments only:
    a segment over the MSS would be an offload artefact, not what a link carries."""
    size = os.path.getsize(path)
    if size > MAX_CAPTURE_BYTES:
        raise RuntimeError(f"{path} is {size} bytes, over {MAX_CAPTURE_BYTES}")
    largest = measure.largest_segment(measure.packets(path))
    if largest > MSS:
        raise RuntimeError(f"{path} holds a {largest}-byte segment: offloads are on")


# The scenarios, each named for the cause its capture shows.

def two_piece_message(lab, name, side):
    """A message written in two pieces without TCP_NODELAY: Nagle holds the
    second piece until the first is acknowledged, and the peer delays that ACK."""
    if side == "request":
        setup = Setup(server=["rr-server", "--request-size", "300", "--chunks", "100"],
                      client=["rr-client", "--pieces", "100,200", "--chunks", "100",
                              "--requests", "20"])
        sender, causes = CLIENT_IP, ["nagle_delayed_ack"]
    else:
        setup = Setup(server=["rr-server", "--request-size", "100", "--chunks", "100,1200",
                              "--nodelay", "0"],
                      client=["rr-client", "--pieces", "100", "--chunks", "100,1200",
                              "--requests", "20"])
        sender, causes = SERVER_IP, ["nagle_delayed_ack"]
    path = lab.record(name, setup)["client"]
    stalls = measure.request_stalls_ms(measure.packets(path), sender)
    stall = measure.median(stalls)
    require(len(stalls) >= 15 and 36 <= stall <= 60, f"{len(stalls)} stalls of {stall:.1f} ms")
    lab.manifest(name, causes, setup, path, "client",
                 {"stall_ms": round(stall, 1), "stalls": len(stalls), "stalled_side": sender,
                  "exchanges": 20},
                 f"{len(stalls)} of 20 exchanges stalled, median {stall:.1f} ms")


def delayed_ack(lab):
    two_piece_message(lab, "delayed_ack", "response")


def nagle_delayed_ack(lab):
    two_piece_message(lab, "nagle_delayed_ack", "request")


def receive_window_limit(lab):
    setup = Setup(server=["sink", "--rcvbuf", "8192"], client=["upload", "--bytes", "3000000"],
                  port=5001, delay_ms=4.5)
    path = lab.record("receive_window_limit", setup)["client"]
    pkts = measure.packets(path)
    windows = measure.advertised_windows(pkts, SERVER_IP)
    window, rtt = max(windows), measure.handshake_rtt_ms(pkts)
    rate = measure.throughput_bytes_per_s(pkts, CLIENT_IP)
    require(near(rate, window / rtt * 1000, 0.15), "throughput is not window/RTT")
    lab.manifest("receive_window_limit", ["receive_window_limited"], setup, path, "client",
                 {"window_bytes": window, "smallest_window_bytes": min(windows),
                  "rtt_ms": round(rtt, 2), "throughput_bytes_per_s": round(rate),
                  "window_per_rtt_bytes_per_s": round(window / rtt * 1000)},
                 f"{rate / 1e6:.2f} MB/s with {window / 1000:.1f} kB window, RTT {rtt:.1f} ms "
                 f"(window/RTT {window / rtt / 1000:.2f} MB/s)")


def zero_window(lab):
    setup = Setup(server=["sink", "--rcvbuf", "16384", "--read-size", "4096",
                          "--read-pause-ms", "40"],
                  client=["upload", "--bytes", "400000"], port=5001)
    path = lab.record("zero_window", setup)["client"]
    pkts = measure.packets(path)
    zero = [p for p in pkts if p.zero_window and p.src == SERVER_IP]
    closed_ms = measure.zero_window_ms(pkts, SERVER_IP)
    require(zero, "no zero window")
    lab.manifest("zero_window", ["zero_window"], setup, path, "client",
                 {"zero_windows_min": len(zero), "zero_window_ms": round(closed_ms),
                  "stopped_reading": SERVER_IP},
                 f"{len(zero)} zero-window ACKs from the receiver, window shut "
                 f"{closed_ms:.0f} ms in all")


def stopped_reading(lab):
    setup = Setup(server=["sink", "--rcvbuf", "16384", "--read-size", "4096",
                          "--read-pause-ms", "600000"],
                  client=["upload", "--bytes", "400000", "--give-up-s", "25"], port=5001)
    path = lab.record("stopped_reading", setup)["client"]
    pkts = measure.packets(path)
    zero = [p for p in pkts if p.zero_window and p.src == SERVER_IP]
    require(zero, "no zero window")
    last_update = max((p.time for p in pkts if p.src == SERVER_IP and p.window > 0 and not p.syn),
                      default=0.0)
    require(zero[-1].time > last_update, "the window opened again")
    probes = [p for p in pkts if p.src == CLIENT_IP and p.len == 0 and p.time > zero[0].time
              and not (p.fin or p.rst)]
    shut_s = pkts[-1].time - zero[0].time
    lab.manifest("stopped_reading", ["zero_window"], setup, path, "client",
                 {"zero_windows_min": len(zero), "window_probes_min": len(probes),
                  "window_shut_s": round(shut_s, 1), "stopped_reading": SERVER_IP},
                 f"the receiver read 4 kB and stopped: window shut for the last {shut_s:.1f} s, "
                 f"{len(probes)} window probes")


def loss_bursts_downstream(lab):
    setup = Setup(server=["sink"], client=["upload", "--bytes", "6000000"], port=5001,
                  delay_ms=2.0, rate_mbit=20,
                  drops=[DropRule("window", direction="c2s", period_s=1.0, burst_s=0.25)])
    path = lab.record("loss_bursts_downstream", setup)["client"]
    pkts = measure.packets(path)
    resent = [p.time for p in measure.retransmitted(pkts, CLIENT_IP)]
    bursts = measure.burst_starts(resent, quiet_s=0.4)
    period = measure.median(measure.gaps_ms(bursts)) / 1000
    require(len(bursts) >= 3 and near(period, 1.0), f"{len(bursts)} bursts every {period} s")
    lab.manifest("loss_bursts_downstream", ["periodic_loss"], setup, path, "client",
                 {"retransmissions_min": len(resent), "server_retransmissions": sum(
                     p.retransmission for p in pkts if p.src == SERVER_IP),
                  "bursts": len(bursts), "burst_period_s": round(period, 2),
                  "loss_location": "downstream"},
                 f"{len(resent)} retransmissions in {len(bursts)} bursts every {period:.2f} s")


def loss_upstream(lab):
    setup = Setup(server=["sink"], client=["upload", "--bytes", "3000000"], port=5001,
                  delay_ms=2.0, rate_mbit=50, points=("client", "server"),
                  drops=[DropRule("random", direction="c2s", probability=0.02, seed=3)])
    paths = lab.record("loss_upstream", setup)
    lost = [p for p in measure.packets(paths["server"]) if p.lost and p.src == CLIENT_IP]
    # Wireshark calls a resend out-of-order when it follows new data within an RTT.
    resent = [p for p in measure.packets(paths["client"])
              if (p.retransmission or p.out_of_order) and p.src == CLIENT_IP]
    require(lost and len(resent) >= len(lost), f"{len(lost)} gaps, {len(resent)} resent")
    lab.manifest("loss_upstream", ["packet_loss"], setup, paths["server"], "server",
                 {"lost_segments_min": len(lost), "loss_location": "upstream",
                  "sender_side_capture": final_name(paths["client"]),
                  "sender_side_resent": len(resent)},
                 f"{len(lost)} gaps seen at the receiver; the sender's tap shows "
                 f"{len(resent)} segments sent again")


def syn_drops(lab):
    """Clients arrive every 200 ms at a server with a listen backlog of 1 that
    accepts one connection every 1.5 s: once its accept queue is full the
    kernel drops new SYNs, the clients retry after 1, 3 and 7 s, and those
    still waiting at 10 s give up."""
    setup = Setup(server=["slow-accept", "--backlog", "1", "--accept-every-s", "1.5"],
                  client=["rr-client", "--parallel", "12", "--stagger-ms", "200",
                          "--requests", "1", "--connect-timeout", "10"],
                  client_sysctls={"net.ipv4.tcp_syn_linear_timeouts": 0})
    path = lab.record("syn_drops", setup)["client"]
    pkts = measure.packets(path)
    retries = measure.syn_retry_offsets_s(pkts)
    connections = measure.connections_opened(pkts)
    unanswered = len(measure.unanswered_connections(pkts))
    backoff = len(retries) == 3 and all(near(r, t) for r, t in zip(retries, [1, 3, 7]))
    require(unanswered and backoff, f"retries after {retries} s, {unanswered} unanswered")
    lab.manifest("syn_drops", ["connection_setup_failure"], setup, path, "client",
                 {"syn_retry_after_s": retries, "connections": connections,
                  "unanswered_connections": unanswered},
                 f"{connections} connections; SYNs retried after {retries} s; "
                 f"{unanswered} never answered")


def server_think_time(lab):
    setup = Setup(server=["rr-server", "--think-ms", "120"],
                  client=["rr-client", "--requests", "10"])
    path = lab.record("server_think_time", setup)["client"]
    think = measure.median(measure.server_think_ms(measure.packets(path), CLIENT_IP, SERVER_IP))
    require(think >= 120, f"{think} ms")
    lab.manifest("server_think_time", ["server_think_time"], setup, path, "client",
                 {"server_think_ms": round(think, 1)}, f"median server think time {think:.1f} ms")


def small_writes(lab):
    setup = Setup(server=["rr-server", "--chunks", "6,45,29", "--chunk-pause-ms", "15",
                          "--nodelay", "1"],
                  client=["rr-client", "--chunks", "6,45,29", "--requests", "10", "--nodelay", "1"])
    path = lab.record("small_writes", setup)["client"]
    pkts = measure.packets(path)
    responses = measure.data_from(pkts, SERVER_IP)
    sizes = sorted({p.len for p in responses})
    gap = measure.median(measure.request_stalls_ms(pkts, SERVER_IP))
    require(sizes == [6, 29, 45], f"segments of {sizes} bytes")
    lab.manifest("small_writes", ["split_response"], setup, path, "client",
                 {"response_segment_sizes": sizes, "response_segments": len(responses),
                  "write_gap_ms": 15, "segment_gap_ms": round(gap, 1)},
                 f"{len(responses)} response segments of {sizes} bytes, {gap:.1f} ms apart")


def periodic_stalls(lab):
    setup = Setup(server=["rr-server", "--stall-every-s", "1.5", "--stall-ms", "300"],
                  client=["rr-client", "--requests", "400", "--client-think-ms", "10"])
    path = lab.record("periodic_stalls", setup)["client"]
    idle = measure.idle_periods_ms(measure.packets(path), 200)
    stall = measure.median([length for _, length in idle])
    period = measure.median(measure.gaps_ms([start for start, _ in idle])) / 1000
    require(len(idle) >= 3 and near(period, 1.5), f"{len(idle)} stalls every {period} s")
    lab.manifest("periodic_stalls", ["periodic_stalls"], setup, path, "client",
                 {"stall_ms": round(stall, 1), "stalls": len(idle), "period_s": round(period, 2)},
                 f"{len(idle)} stalls of {stall:.0f} ms every {period:.2f} s")


def chatty_high_rtt(lab):
    setup = Setup(server=["rr-server", "--chunks", "200"],
                  client=["rr-client", "--chunks", "200", "--requests", "40", "--nodelay", "1"],
                  delay_ms=25.0)
    path = lab.record("chatty_high_rtt", setup)["client"]
    pkts = measure.packets(path)
    rtt = measure.handshake_rtt_ms(pkts)
    requests = measure.data_from(pkts, CLIENT_IP)
    responses = measure.data_from(pkts, SERVER_IP)
    span = responses[-1].time - requests[0].time
    require(len(requests) == 40 and near(span, 40 * rtt / 1000), f"{len(requests)} turns")
    lab.manifest("chatty_high_rtt", ["chattiness"], setup, path, "client",
                 {"rtt_ms": round(rtt, 1), "turns": len(requests),
                  "exchange_s": round(span, 2)},
                 f"{len(requests)} turns × RTT {rtt:.1f} ms = {span:.2f} s")


def link_rate_limit(lab):
    setup = Setup(server=["sink"], client=["upload", "--bytes", "2500000"], port=5001,
                  rate_mbit=10)
    path = lab.record("link_rate_limit", setup)["client"]
    pkts = measure.packets(path)
    rate = measure.throughput_bytes_per_s(pkts, CLIENT_IP)
    window = max(measure.advertised_windows(pkts, SERVER_IP))
    in_flight = measure.largest_in_flight(pkts, CLIENT_IP)
    require(near(rate, 1_250_000) and in_flight < window, f"{rate:.0f} B/s")
    lab.manifest("link_rate_limit", ["bottleneck_link"], setup, path, "client",
                 {"throughput_bytes_per_s": round(rate), "link_bytes_per_s": 1_250_000,
                  "window_bytes": window, "in_flight_max_bytes": in_flight},
                 f"{rate / 1e6:.2f} MB/s on a 10 Mbit/s link; window {window / 1000:.0f} kB, "
                 f"at most {in_flight / 1000:.0f} kB in flight")


def odd_segments_delayed_ack(lab):
    """A send-and-wait application writes 4 kB at a time: each write goes out
    as three segments, the receiver ACKs the first two at once and delays the
    ACK of the odd third, and the next write waits for it. The receiver reads
    whole 64 kB records, so no read of its own releases the ACK early."""
    writes = 60
    setup = Setup(server=["sink", "--rcvlowat", "65536"],
                  client=["upload", "--bytes", str(writes * 4096), "--write-size", "4096",
                          "--wait-acked", "1"], port=5001)
    path = lab.record("odd_segments_delayed_ack", setup)["client"]
    pkts = measure.packets(path)
    stalls = measure.request_stalls_ms(pkts, CLIENT_IP)
    segments = len(measure.data_from(pkts, CLIENT_IP))
    require(len(stalls) >= writes / 2 and segments == 3 * writes, f"{len(stalls)} stalls")
    lab.manifest("odd_segments_delayed_ack", ["delayed_ack"], setup, path, "client",
                 {"stall_ms": round(measure.median(stalls), 1), "stalls": len(stalls),
                  "writes": writes, "segments_per_write": round(segments / writes, 2)},
                 f"{len(stalls)} of {writes} writes ({segments / writes:.0f} segments each) waited "
                 f"{measure.median(stalls):.1f} ms for a delayed ACK")


def port_reuse(lab):
    """Eight connections in a row from a two-port range; the server closes
    first, so each new SYN meets the server's TIME_WAIT for the same port pair."""
    setup = Setup(server=["rr-server", "--close-after", "1"],
                  client=["rr-client", "--requests", "1", "--connections", "8",
                          "--between-connections-ms", "200", "--read-to-close", "1"],
                  client_sysctls={"net.ipv4.ip_local_port_range": "40000 40001"})
    path = lab.record("port_reuse", setup)["client"]
    pkts = measure.packets(path)
    ports = sorted({sport for sport, _ in measure.syn_times_by_stream(pkts)})
    reuses = measure.time_wait_reuses_ms(pkts, SERVER_IP)
    connections = measure.connections_opened(pkts)
    require(connections == 8 and len(reuses) == 7,
            f"{connections} connections, {len(reuses)} reuses")
    lab.manifest("port_reuse", ["port_reuse"], setup, path, "client",
                 {"connections": connections, "client_ports": ports,
                  "reuses_in_time_wait": len(reuses),
                  "reuse_after_ms": round(measure.median(reuses), 1)},
                 f"{connections} connections on {len(ports)} client port(s); {len(reuses)} reused "
                 f"a port {measure.median(reuses):.0f} ms after the server's FIN (TIME_WAIT)")


def pool_queueing(lab):
    """Twelve clients at once call a front tier whose pool to the back tier
    opens one connection a second: requests queue for the pool."""
    setup = Setup(server=["front", "--pool-size", "8"],
                  client=["rr-client", "--parallel", "12", "--requests", "25"],
                  back=["rr-server", "--port", "9090", "--think-ms", "20"],
                  points=("server-any",))
    path = lab.record("pool_queueing", setup)["server-any"]
    syns = measure.syn_times_by_stream(measure.packets(path))
    front = sorted(times[0] for (_, port), times in syns.items() if port == 8080)
    back = sorted(times[0] for (_, port), times in syns.items() if port == 9090)
    interval = measure.median(measure.gaps_ms(back)) / 1000
    require(2 <= len(back) < len(front) and near(interval, 1.0), f"{len(back)} pool connections")
    lab.manifest("pool_queueing", ["pool_queueing"], setup, path,
                 "server (any interface)",
                 {"front_connections": len(front), "back_connections": len(back),
                  "back_connection_interval_s": round(interval, 2), "back_tier": f"{BACK_IP}:9090"},
                 f"{len(front)} client connections wait on a pool that grew to {len(back)} "
                 f"connections, one every {interval:.2f} s")


TLS_ALERTS = {"48": "unknown_ca", "70": "protocol_version"}


def app_failures(lab):
    """Requests that fail at the application's level, fast: HTTP 404 and 500,
    a reset instead of an answer, a certificate the client does not trust,
    and a server that speaks only a newer TLS than the client."""
    setup = Setup(server=["app-server"], client=["app-client"])
    path = lab.record("app_failures", setup)["client"]
    statuses = measure.field_values(path, "http.response.code >= 400", "http.response.code")
    alerts = measure.field_values(path, "tls.alert_message", "tls.alert_message.desc",
                                  decode_as=["tcp.port==8081,tls", "tcp.port==8082,tls"])
    resets = [p for p in measure.packets(path) if p.rst and p.src == SERVER_IP]
    require(sorted(statuses) == ["404", "500"] and sorted(alerts) == ["48", "70"]
            and len(resets) == 1, f"statuses {statuses}, alerts {alerts}, {len(resets)} resets")
    alert_names = [TLS_ALERTS[code] for code in sorted(alerts)]
    lab.manifest("app_failures", ["application_failure"], setup, path, "client",
                 {"http_errors": sorted(int(code) for code in statuses),
                  "tls_alerts": alert_names, "server_resets": len(resets), "requests": 6},
                 f"HTTP {', '.join(sorted(statuses))}; TLS alerts {', '.join(alert_names)}; "
                 f"{len(resets)} reset by the server")


def healthy(lab):
    setup = Setup(server=["rr-server", "--chunks", "2000", "--nodelay", "1"],
                  client=["rr-client", "--chunks", "2000", "--requests", "20", "--nodelay", "1"])
    path = lab.record("healthy", setup)["client"]
    pkts = measure.packets(path)
    retransmissions = sum(p.retransmission for p in pkts)
    zero_windows = sum(p.zero_window for p in pkts)
    slowest = max(measure.server_think_ms(pkts, CLIENT_IP, SERVER_IP))
    require(retransmissions == zero_windows == 0, "retransmissions or zero windows")
    lab.manifest("healthy", [], setup, path, "client",
                 {"retransmissions": retransmissions, "zero_windows": zero_windows,
                  "slowest_response_ms": round(slowest, 1)},
                 f"{len(pkts)} packets, {retransmissions} retransmissions, slowest response "
                 f"{slowest:.1f} ms")


def nagle_fixed(lab):
    """nagle_delayed_ack's workload with TCP_NODELAY on the client: the
    "after" of a before/after pair whose "before" is nagle_delayed_ack."""
    setup = Setup(server=["rr-server", "--request-size", "300", "--chunks", "100"],
                  client=["rr-client", "--pieces", "100,200", "--chunks", "100",
                          "--requests", "20", "--nodelay", "1"])
    path = lab.record("nagle_fixed", setup)["client"]
    stalls = measure.request_stalls_ms(measure.packets(path), CLIENT_IP)
    require(not stalls, f"{len(stalls)} stalls with TCP_NODELAY")
    lab.manifest("nagle_fixed", [], setup, path, "client",
                 {"before": "nagle_delayed_ack.pcap", "stalls": 0, "exchanges": 20},
                 "no exchange stalled with TCP_NODELAY (before it: nagle_delayed_ack)")


def taps_mislabelled(lab):
    """Two captures that pass for two points but are both of the server's
    segment: one on its TAP, one on every interface of the server."""
    setup = Setup(server=["rr-server", "--chunks", "2000", "--nodelay", "1"],
                  client=["rr-client", "--chunks", "2000", "--requests", "20", "--nodelay", "1"],
                  points=("server", "server-any"))
    paths = lab.record("taps_mislabelled", setup)
    counts = [len(measure.packets(path)) for path in paths.values()]
    require(counts[0] == counts[1], f"the two captures hold {counts} packets")
    lab.manifest("taps_mislabelled", [], setup, paths["server"], "server",
                 {"same_segment": True, "other_capture": final_name(paths["server-any"]),
                  "packets": counts[0]},
                 f"{counts[0]} packets in each capture, both taken on the server")


def drops_at_tap(lab):
    """An upload captured at both ends of a clean wire; the server's tap then
    loses data frames, as a capture does when it cannot keep up (the lab
    removes them afterwards: the receiver still acknowledged them)."""
    setup = Setup(server=["sink"], client=["upload", "--bytes", "1000000"], port=5001,
                  delay_ms=2.0, rate_mbit=50, points=("client", "server"))
    paths = lab.record("drops_at_tap", setup)
    resent = measure.retransmitted(measure.packets(paths["client"]), CLIENT_IP)
    require(not resent, f"{len(resent)} segments resent on a clean wire")
    removed = pcapfile.remove_data_frames(paths["server"], random.Random(11), fraction=0.02)
    lab.manifest("drops_at_tap", ["capture_drops"], setup, paths["server"], "server",
                 {"missed_by_server_capture": removed, "lost_in_path": 0,
                  "other_capture": final_name(paths["client"]), "delay_ms": setup.delay_ms},
                 f"the server's tap missed {removed} data frames; the wire lost none")


PROXY_REQUEST, PROXY_RESPONSE = 300, 100


def proxy_setup(client, relay=(), snat_ports=None):
    """A relay on the server in front of an rr-server on the back tier,
    recorded on both of the relay's links at once."""
    return Setup(server=["relay", "--back", BACK_IP, "--back-port", "9090", *relay],
                 client=["rr-client", "--chunks", str(PROXY_RESPONSE), "--nodelay", "1", *client],
                 back=["rr-server", "--port", "9090", "--request-size", str(PROXY_REQUEST),
                       "--chunks", str(PROXY_RESPONSE), "--nodelay", "1"],
                 back_snat_ports=snat_ports, points=("front", "back"))


def proxy_nagle(lab):
    """Small requests through a proxy that terminates TCP and leaves Nagle
    on toward the back tier. The client writes each request as 100 + 200
    bytes 5 ms apart (TCP_NODELAY): the relay passes the 100 on at once, then
    holds the 200 until the back server acknowledges the 100, which it does
    only when its delayed-ACK timer fires, as it waits for the whole request."""
    setup = proxy_setup(["--pieces", "100,200", "--piece-pause-ms", "5", "--requests", "20"])
    paths = lab.record("proxy_nagle", setup)
    front, back = measure.packets(paths["front"]), measure.packets(paths["back"])
    requests = measure.added_ms(measure.message_ends(front, CLIENT_IP, PROXY_REQUEST),
                                measure.message_ends(back, SERVER_BACK_IP, PROXY_REQUEST))
    responses = measure.added_ms(measure.message_ends(back, BACK_IP, PROXY_RESPONSE),
                                 measure.message_ends(front, SERVER_IP, PROXY_RESPONSE))
    # A held piece leaves within 2 ms of the ACK of the piece before it.
    holds = [wait for wait, resume in measure.ack_waits_ms(back, SERVER_BACK_IP, 20)
             if resume is not None and resume <= 2]
    require(len(requests) == 20 and len(holds) >= 15,
            f"{len(requests)} requests, {len(holds)} held until an ACK")
    lab.manifest("proxy_nagle", ["proxy_nagle"], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP,
                  "proxy_back": SERVER_BACK_IP, "back_server": f"{BACK_IP}:9090",
                  "requests": len(requests),
                  "request_added_ms_p50": round(measure.median(requests), 2),
                  "request_added_ms_total": round(sum(requests), 1),
                  "response_added_ms_p50": round(measure.median(responses), 3),
                  "nagle_holds": len(holds), "hold_ms_p50": round(measure.median(holds), 1)},
                 f"{len(holds)} of {len(requests)} requests held at the proxy until the back "
                 f"server's ACK ({measure.median(holds):.1f} ms); the proxy adds a median "
                 f"{measure.median(requests):.1f} ms to a request, "
                 f"{measure.median(responses):.2f} ms to a response")


def proxy_snat(lab):
    """Eight clients at a time (sixteen connections in all, 100 ms apart)
    through the relay, whose connections to the back tier are NATed through
    four ports. Once four are open the NAT has no port for a fifth and drops
    its SYNs; the relay retries (1 s apart) and gives up after 3 s. A freed
    port is taken again at once, while the TIME_WAIT of its last connection
    still runs."""
    log_path = relay_log()
    if os.path.exists(log_path):
        os.remove(log_path)
    setup = proxy_setup(["--pieces", str(PROXY_REQUEST), "--requests", "10",
                         "--client-think-ms", "50", "--parallel", "8", "--stagger-ms", "100",
                         "--connections", "2", "--connect-timeout", "10"],
                        relay=["--connect-timeout", "3", "--log", log_path],
                        snat_ports="40000-40003")
    paths = lab.record("proxy_snat", setup)
    with open(log_path) as log:
        connects = [json.loads(line) for line in log]
    os.remove(log_path)
    front, back = measure.packets(paths["front"]), measure.packets(paths["back"])
    ports = sorted({sport for sport, _ in measure.syn_times_by_stream(back)})
    reuses = measure.syns_on_reused_tuples(back)
    failed = [c for c in connects if not c["connected"]]
    # A connect that took a SYN retry: the first comes after a second.
    waited = [c["connect_s"] for c in connects if c["connected"] and c["connect_s"] >= 0.5]
    require(len(ports) == 4 and failed and len(waited) >= 2 and len(reuses) >= 4,
            f"ports {ports}, {len(failed)} failed, {len(waited)} waited, {len(reuses)} reused")
    lab.manifest("proxy_snat", ["snat_exhaustion"], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP,
                  "proxy_back": SERVER_BACK_IP, "back_server": f"{BACK_IP}:9090",
                  "front_side_connections": measure.connections_opened(front),
                  "back_side_connections": measure.connections_opened(back),
                  "back_source_ports": ports, "reuses_in_time_wait": len(reuses),
                  "reuse_after_ms_p50": round(measure.median(reuses), 1),
                  "connects_failed": len(failed), "connects_waited": len(waited),
                  "connect_wait_s_p50": round(measure.median(waited), 2)},
                 f"{len(ports)} source ports for {len(connects)} back connections: "
                 f"{len(reuses)} reused within TIME_WAIT ({measure.median(reuses):.0f} ms after "
                 f"the FIN), {len(waited)} waited {measure.median(waited):.1f} s for a port, "
                 f"{len(failed)} never got one")


POOL_CLIENTS = tuple(f"10.77.0.{11 + index}" for index in range(6))
POOL_SNAPLEN = 512  # whole HTTP messages: request lines and X-Forwarded-For


def proxy_pool(lab):
    """Six HTTP clients, each from an address of its own, through HAProxy,
    whose pool holds at most two connections to the back tier and sends
    every client's requests over them (`http-reuse always`), each with the
    client's address in X-Forwarded-For. A request waits at the proxy for
    a pooled connection to come free."""
    setup = Setup(server=["haproxy", "--back", BACK_IP, "--back-port", "9090", "--pool-size", "2"],
                  client=["http-client", "--parallel", str(len(POOL_CLIENTS)), "--requests", "8",
                          "--client-think-ms", "30", "--stagger-ms", "3",
                          "--sources", ",".join(POOL_CLIENTS)],
                  back=["http-server", "--port", "9090", "--think-ms", "20",
                        "--body-bytes", "200"],
                  client_extra_ips=POOL_CLIENTS, snaplen=POOL_SNAPLEN, points=("front", "back"))
    paths = lab.record("proxy_pool", setup)
    front_requests, front_responses = measure.http_messages(paths["front"], [8080])
    back_requests, back_responses = measure.http_messages(paths["back"], [9090])
    back_by_uri = {uri: (frame, time, stream, forwarded)
                   for frame, (time, stream, _, uri, forwarded) in back_requests.items()}
    request_added, response_added, carried, forwarded_right = [], [], {}, 0
    for frame, (time, stream, client, uri, _) in front_requests.items():
        if uri not in back_by_uri:
            continue
        back_frame, back_time, back_stream, forwarded = back_by_uri[uri]
        request_added.append((back_time - time) * 1000)
        if frame in front_responses and back_frame in back_responses:
            response_added.append((front_responses[frame] - back_responses[back_frame]) * 1000)
        carried.setdefault(back_stream, []).append(stream)
        forwarded_right += forwarded == client
    per_back = sorted([len(streams), len(set(streams))] for streams in carried.values())
    pooled = sum(1 for _, fronts in per_back if fronts > 1)
    requests = len(front_requests)
    require(requests == len(back_requests) == len(request_added) == 48 and pooled >= 1
            and forwarded_right == requests,
            f"{requests} requests in, {len(back_requests)} out, {pooled} back connections pooled, "
            f"{forwarded_right} forwarded for their client")
    lab.manifest("proxy_pool", ["proxy_pooled_connections"], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP,
                  "proxy_back": SERVER_BACK_IP, "back_server": f"{BACK_IP}:9090",
                  "clients": list(POOL_CLIENTS),
                  "front_side_connections": measure.connections_opened(
                      measure.packets(paths["front"])),
                  "back_side_connections": len(carried), "requests": requests,
                  "forwarded_for_their_client": forwarded_right,
                  "back_connections_carried": [{"requests": n, "front_connections": fronts}
                                               for n, fronts in per_back],
                  "request_added_ms_p50": round(measure.median(request_added), 3),
                  "request_added_ms_total": round(sum(request_added), 1),
                  "response_added_ms_p50": round(measure.median(response_added), 3)},
                 f"{requests} requests of {len(POOL_CLIENTS)} clients over {len(carried)} back "
                 f"connections, carrying the requests of "
                 f"{' and '.join(str(f) for _, f in per_back)} clients; the proxy adds a median "
                 f"{measure.median(request_added):.1f} ms to a request (waiting for a pooled "
                 f"connection)")


IDLE_RESPONSE, IDLE_REQUESTS = 300_000, 6


def idle_setup(slow_start_after_idle):
    """Large responses through the relay after idle gaps of 1.5 s, several
    RTOs of the client's 40 ms path, with the proxy's host restarting slow
    start after idle or not. The relay's sockets use CUBIC, Linux's default:
    BBR, this host's, handles idle in its own way and never restarts."""
    return Setup(server=["relay", "--back", BACK_IP, "--back-port", "9090",
                         "--congestion", "cubic"],
                 client=["rr-client", "--pieces", str(PROXY_REQUEST), "--nodelay", "1",
                         "--chunks", str(IDLE_RESPONSE), "--requests", str(IDLE_REQUESTS),
                         "--client-think-ms", "1500"],
                 back=["rr-server", "--port", "9090", "--request-size", str(PROXY_REQUEST),
                       "--chunks", str(IDLE_RESPONSE), "--nodelay", "1"],
                 delay_ms=20.0,
                 server_sysctls={"net.ipv4.tcp_slow_start_after_idle": slow_start_after_idle},
                 points=("front", "back"))


def idle_responses(paths):
    """The front's responses after the first (each after an idle gap): how
    long each took to leave the proxy, first to last segment, and its first
    flight; the largest flight of the proxy before them; and how long after
    the first front segment the back had delivered the whole response."""
    front, back = measure.packets(paths["front"]), measure.packets(paths["back"])
    responses = measure.responses_after_requests(front, SERVER_IP)
    back_ends = [response[-1].time
                 for _, response in measure.responses_after_requests(back, BACK_IP)]
    require(len(responses) == IDLE_REQUESTS == len(back_ends),
            f"{len(responses)} responses at the front, {len(back_ends)} at the back")
    spans = [(r[-1].time - r[0].time) * 1000 for _, r in responses]
    first_flights = [measure.first_flight_bytes(segments, r) for segments, r in responses]
    delivered_after = [(end - r[0].time) * 1000 for end, (_, r) in zip(back_ends, responses)]
    return {"rtt_ms": round(measure.base_rtt_ms(front, SERVER_IP), 2),
            "response_bytes": IDLE_RESPONSE,
            "response_ms": [round(span, 1) for span in spans[1:]],
            "first_flight_bytes": first_flights[1:],
            "back_delivered_ms": [round(ms, 1) for ms in delivered_after[1:]]}


def proxy_idle_off(lab):
    """The twin of proxy_idle with net.ipv4.tcp_slow_start_after_idle=0 on
    the proxy: each response after idle leaves with the window the last one
    had grown."""
    setup = idle_setup(0)
    paths = lab.record("proxy_idle_off", setup)
    figures = idle_responses(paths)
    require(min(figures["first_flight_bytes"]) > 4 * 10 * MSS, f"first flights {figures}")
    lab.manifest("proxy_idle_off", [], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP,
                  "slow_start_after_idle": 0, **figures},
                 f"with slow start after idle off, the {IDLE_REQUESTS - 1} responses after idle "
                 f"leave in a median {measure.median(figures['response_ms']):.0f} ms, the first "
                 f"flight {measure.median(figures['first_flight_bytes']) / 1000:.0f} kB")


def proxy_idle(lab):
    """300 kB responses through a relay whose host restarts slow start after
    idle (Linux's default): after each 1.5 s gap the relay sends from its
    initial window again, though the back tier delivered the whole response
    within a few ms and the client's window is open. Recorded after its
    twin, proxy_idle_off, whose responses give the time each would take
    without the restart."""
    setup = idle_setup(1)
    paths = lab.record("proxy_idle", setup)
    figures = idle_responses(paths)
    with open(os.path.join(lab.out, "proxy_idle_off.json")) as twin_manifest:
        twin = json.load(twin_manifest)["expect"]
    added = [on - off for on, off in zip(figures["response_ms"], twin["response_ms"])]
    require(max(figures["first_flight_bytes"]) <= 10 * MSS and min(added) > figures["rtt_ms"],
            f"first flights {figures['first_flight_bytes']}, added {added}")
    lab.manifest("proxy_idle", ["proxy_slow_start_after_idle"], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP,
                  "slow_start_after_idle": 1, "twin": "proxy_idle_off.json", **figures,
                  "responses_after_idle": len(added),
                  "added_ms": [round(ms, 1) for ms in added],
                  "added_ms_total": round(sum(added), 1)},
                 f"after each idle gap the proxy restarts from a {figures['first_flight_bytes'][0]}"
                 f"-byte flight; {len(added)} responses take {sum(added):.0f} ms longer in all "
                 f"than with slow start after idle off (median {measure.median(added):.0f} ms)")


WINDOW_REQUEST, WINDOW_RCVBUF = 100_000, 8192


def window_setup(rcvbuf):
    """100 kB requests through the relay over a 20 ms path, the relay's
    receive buffer toward its clients small or as the kernel sizes it."""
    relay = ["--rcvbuf", str(rcvbuf)] if rcvbuf else []
    return Setup(server=["relay", "--back", BACK_IP, "--back-port", "9090", *relay],
                 client=["rr-client", "--pieces", str(WINDOW_REQUEST), "--nodelay", "1",
                         "--chunks", str(PROXY_RESPONSE), "--requests", "3",
                         "--client-think-ms", "200"],
                 back=["rr-server", "--port", "9090", "--request-size", str(WINDOW_REQUEST),
                       "--chunks", str(PROXY_RESPONSE), "--nodelay", "1"],
                 delay_ms=10.0, points=("front", "back"))


def window_figures(paths):
    front = measure.packets(paths["front"])
    rtt_ms = measure.base_rtt_ms(front, SERVER_IP)
    # Captured beside the proxy: its ACKs reach the client a round trip later.
    waits = measure.window_waits_ms(front, CLIENT_IP, MSS, rtt_ms / 1000)
    requests = [r for _, r in measure.responses_after_requests(front, CLIENT_IP)]
    windows = [p.window for p in front if p.src == SERVER_IP and not p.syn and p.len == 0]
    return {"rtt_ms": round(rtt_ms, 2),
            "request_bytes": WINDOW_REQUEST,
            "request_ms": [round((r[-1].time - r[0].time) * 1000, 1) for r in requests],
            "proxy_window_bytes_p50": round(measure.median(windows)),
            "proxy_window_bytes_max": max(windows),
            "zero_windows": measure.zero_window_count(front, SERVER_IP),
            "window_waits": len(waits), "window_wait_ms_total": round(sum(waits), 1)}


def proxy_window_off(lab):
    """The twin of proxy_window with the relay's receive buffer left to the kernel."""
    setup = window_setup(0)
    paths = lab.record("proxy_window_off", setup)
    figures = window_figures(paths)
    lab.manifest("proxy_window_off", [], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP, **figures},
                 f"with the kernel's receive buffer the proxy's window reaches "
                 f"{figures['proxy_window_bytes_max'] / 1000:.0f} kB; each 100 kB request takes "
                 f"a median {measure.median(figures['request_ms']):.0f} ms")


def proxy_window(lab):
    """The relay's receive buffer toward its clients is 8 kB: the client
    sending it 100 kB requests fills the small window the relay advertises
    and waits a round trip for each ACK to open it again."""
    setup = window_setup(WINDOW_RCVBUF)
    paths = lab.record("proxy_window", setup)
    figures = window_figures(paths)
    with open(os.path.join(lab.out, "proxy_window_off.json")) as twin_manifest:
        twin = json.load(twin_manifest)["expect"]
    require(figures["zero_windows"] == 0 and figures["window_waits"] >= 20
            and not twin["window_waits"], f"{figures}; the twin waited {twin['window_waits']} times")
    added = sum(figures["request_ms"]) - sum(twin["request_ms"])
    lab.manifest("proxy_window", ["proxy_receive_window"], setup, paths["front"], "front",
                 {"back_capture": final_name(paths["back"]), "proxy": SERVER_IP,
                  "twin": "proxy_window_off.json", **figures,
                  "added_ms_total": round(added, 1)},
                 f"the proxy advertises a median {figures['proxy_window_bytes_p50']} bytes; the "
                 f"client waits for it {figures['window_waits']} times, "
                 f"{figures['window_wait_ms_total']:.0f} ms in all; each 100 kB request takes "
                 f"a median {measure.median(figures['request_ms']):.0f} ms")


SCENARIOS = {f.__name__: f for f in (
    delayed_ack, nagle_delayed_ack, receive_window_limit, zero_window, stopped_reading,
    loss_bursts_downstream,
    loss_upstream, syn_drops, server_think_time, small_writes, periodic_stalls,
    chatty_high_rtt, link_rate_limit, odd_segments_delayed_ack, port_reuse, pool_queueing,
    app_failures, healthy, nagle_fixed, taps_mislabelled, drops_at_tap, proxy_nagle, proxy_snat,
    proxy_pool, proxy_idle_off, proxy_idle, proxy_window_off, proxy_window)}


def parse_arguments():
    parser = argparse.ArgumentParser(description="Regenerates the lab's captures and manifests.")
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO",
                        help=f"all when none is named; known: {', '.join(SCENARIOS)}")
    parser.add_argument("--out", default=CAPTURES, help="where captures and manifests go")
    parser.add_argument("--prefix", default="twlab",
                        help="names of the lab's namespaces and interfaces (default twlab)")
    args = parser.parse_args()
    unknown = [name for name in args.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}")
    return args


def check_environment():
    if os.geteuid() != 0:
        sys.exit("lab: run as root (network namespaces and TAP devices)")
    missing = [tool for tool in ("ip", "tcpdump", "tshark", "openssl", "nft")
               if shutil.which(tool) is None]
    if missing:
        sys.exit(f"lab: {', '.join(missing)} missing "
                 "(apt-get install iproute2 tcpdump tshark openssl nftables)")


def main():
    global NAMES
    args = parse_arguments()
    check_environment()
    NAMES = Names(args.prefix)
    # A plain `kill` cleans up as Ctrl-C does: the hosts come down on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(args.out, exist_ok=True)
    lab, failed = Lab(os.path.abspath(args.out)), []
    for name in args.scenarios or SCENARIOS:
        started = time.monotonic()
        try:
            SCENARIOS[name](lab)
        except NotReproduced as reason:
            print(f"{name}: did not reproduce ({reason}); its previous capture is kept")
            failed.append(name)
        except Exception:
            traceback.print_exc()
            failed.append(name)
        finally:
            lab.discard_staged()
        print(f"  ({time.monotonic() - started:.1f} s)")
    if failed:
        sys.exit(f"lab: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
