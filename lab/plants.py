"""The sweep's cause classes: how each is planted with random parameters,
and how its capture is checked to show it, with tshark and independently
of tcpwhy.

Every class is a function `draw(rng, point)` that returns a Scenario: the
wire, the two hosts' stacks, the applications and every value drawn, with
the check that its recording must pass. `point` ("client" or "server") is
where the capture kept for the class is taken; both ends are always
recorded, and a check reads whichever end shows the cause best.
"""

import dataclasses
import math
import statistics

import measure
from hosts import CLIENT_IP, SERVER_IP
from wire import DropRule

PORT, BACKGROUND_PORT = 8080, 7070
RELAY_MS = 0.2  # what the relay adds to a round trip
TCP_INFO = "{tcp_info}"  # replaced by the directory the senders' TCP_INFO samples go to
ACK_DELAY_MIN_MS = 35  # Linux delays an ACK by at least 40 ms; allow for clock noise
# Round trips in a row that healthy traffic stays under and chatty traffic
# goes over, so that the two never overlap: turns × RTT for healthy traffic,
# and for chatty traffic the round trips batching would save, all but the
# one any single request pays.
HEALTHY_ROUND_TRIPS_MS, CHATTY_ROUND_TRIPS_MS = 150, 1000
MAX_BULK_BYTES = 2_500_000  # about 330 kB of capture at snaplen 128
BOTTLENECK_MAX_BYTES = 8_000_000  # 1.6 s at 40 Mbit/s; 1.2 MB of capture
CAPTURE_BUDGET_BYTES, RECORD_BYTES = 400_000, 140  # a capture's aim, a frame's record in it
UP, DOWN = (CLIENT_IP, SERVER_IP), (SERVER_IP, CLIENT_IP)  # (sender, receiver) of a bulk flow


class NotPlanted(Exception):
    """The recording does not show the cause it was meant to."""


def require(condition, what):
    if not condition:
        raise NotPlanted(what)


@dataclasses.dataclass
class Scenario:
    """One drawn scenario: everything needed to record it and check it."""

    rtt_ms: float
    params: dict
    servers: list  # apps.py argument lists, each run in the server's namespace
    clients: list  # apps.py argument lists, run at once in the client's, each to completion
    check: object  # (scenario, Taps) -> (expected figures, one-line figure)
    congestion: str = "cubic"
    rate_mbit: float = None
    drops: list = dataclasses.field(default_factory=list)
    client_sysctls: dict = dataclasses.field(default_factory=dict)
    server_sysctls: dict = dataclasses.field(default_factory=dict)
    client_initcwnd: int = None
    server_initcwnd: int = None
    flow: tuple = UP  # (sender, receiver) of the traffic the cause is about
    needs_tcp_info: bool = False
    watched_port: int = PORT  # the connections the check reads; every one when None
    finding: str = None  # the finding kind that names what was planted, when not the class's
    loud: bool = True  # whether what was planted costs enough time to be a warning or critical
    program: str = "apps.py"  # what runs the servers and clients: apps.py or realapps.py
    snaplen: int = 128  # bytes kept of each packet
    queue_ms: float = None  # the wire's queue, in time at its rate (no bound when None)
    clients_timeout_s: float = 60

    @property
    def delay_ms(self):
        return max(0.0, (self.rtt_ms - RELAY_MS) / 2)

    @property
    def sender(self):
        return self.flow[0]

    @property
    def receiver(self):
        return self.flow[1]


class Taps:
    """The packets of the scenario's connections (its port; every port when
    None) as recorded at each end of the wire, read on first use."""

    def __init__(self, paths, port=PORT, tcp_info=None):
        self.paths, self.port, self.tcp_info = paths, port, tcp_info or {}
        self.read = {}

    def at(self, point):
        if point not in self.read:
            pkts = measure.packets(self.paths[point])
            if self.port is not None:
                pkts = [p for p in pkts if self.port in (p.sport, p.dport)]
            self.read[point] = pkts
        return self.read[point]

    def beside(self, ip):
        """The capture taken next to the host `ip`."""
        return self.at("client" if ip == CLIENT_IP else "server")


# Drawing.

def log_uniform(rng, low, high):
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def clamp(value, low, high):
    return max(low, min(high, value))


@dataclasses.dataclass
class Stack:
    """Each host's TCP settings, drawn among those that leave every plant intact."""

    client: dict
    server: dict
    congestion: str = "cubic"
    client_initcwnd: int = None
    server_initcwnd: int = None

    @property
    def mss(self):
        """Timestamps take 12 bytes of each segment when both ends use them."""
        off = "0" in (str(self.client.get("net.ipv4.tcp_timestamps", 1)),
                      str(self.server.get("net.ipv4.tcp_timestamps", 1)))
        return 1460 if off else 1448


# Settings every stack drawn gets on top of what the draw chose (sweep.py's
# --client-sysctl and --server-sysctl): the same scenarios on another kind of host.
FORCED_SYSCTLS = Stack({}, {})


def draw_stack(rng):
    stack = Stack({}, {})
    if rng.random() < 0.2:
        rng.choice((stack.client, stack.server))["net.ipv4.tcp_timestamps"] = 0
    if rng.random() < 0.2:
        rng.choice((stack.client, stack.server))["net.ipv4.tcp_sack"] = 0
    stack.congestion = rng.choices(("cubic", "bbr", "reno"), weights=(55, 25, 20))[0]
    if rng.random() < 0.3:
        initcwnd = rng.choice((4, 20, 40))
        if rng.random() < 0.5:
            stack.client_initcwnd = initcwnd
        else:
            stack.server_initcwnd = initcwnd
    stack.client.update(FORCED_SYSCTLS.client)
    stack.server.update(FORCED_SYSCTLS.server)
    return stack


def scenario(rng, rtt_ms, stack, servers, clients, check, params, **options):
    """A Scenario with the stack drawn for it and, now and then, a little
    healthy traffic on another port beside it."""
    params = {"rtt_ms": round(rtt_ms, 3), **params}
    if rng.random() < 0.25:
        servers, clients, params["background"] = with_background(rng, rtt_ms, servers, clients)
    client_sysctls = {**stack.client, **options.pop("client_sysctls", {})}
    server_sysctls = {**stack.server, **options.pop("server_sysctls", {})}
    # Per socket: a namespace's default can only be one the host allows.
    servers = [[*args, "--congestion", stack.congestion] for args in servers]
    clients = [[*args, "--congestion", stack.congestion] for args in clients]
    return Scenario(rtt_ms=rtt_ms, params=params, servers=servers, congestion=stack.congestion,
                    clients=clients, check=check, client_sysctls=client_sysctls,
                    server_sysctls=server_sysctls, client_initcwnd=stack.client_initcwnd,
                    server_initcwnd=stack.server_initcwnd, **options)


def with_background(rng, rtt_ms, servers, clients):
    """A few quick exchanges on another port, no more round trips in all
    than healthy traffic has: a cause should still be named when some
    healthy traffic shares the capture."""
    request, response = rng.randint(50, 500), rng.randint(100, 3000)
    count = clamp(rng.randint(2, 6), 1, int(HEALTHY_ROUND_TRIPS_MS / rtt_ms))
    server = ["rr-server", "--nodelay", "1", "--request-size", str(request),
              "--chunks", str(response), "--port", str(BACKGROUND_PORT)]
    client = ["rr-client", "--nodelay", "1", "--pieces", str(request), "--chunks", str(response),
              "--requests", str(count), "--port", str(BACKGROUND_PORT)]
    return ([*servers, server], [*clients, client],
            {"requests": count, "request_bytes": request, "response_bytes": response})


def arguments(**options):
    """apps.py options from keyword arguments: write_size=4096 -> --write-size 4096."""
    listed = []
    for name, value in options.items():
        listed += ["--" + name.replace("_", "-"), str(value)]
    return listed


def bulk(flow, connections, total_bytes, sender=None, receiver=None):
    """Servers and clients for `connections` bulk transfers of `total_bytes`
    in all, up (client to server) or down; the senders log TCP_INFO."""
    each = max(1, total_bytes // connections)
    sending = arguments(bytes=each, tcp_info=TCP_INFO, **(sender or {}))
    receiving = arguments(**(receiver or {}))
    if flow == UP:
        return ([["sink", *receiving, "--port", str(PORT)]],
                [["upload", *sending, "--port", str(PORT)] for _ in range(connections)])
    return ([["source", *sending, "--port", str(PORT)]],
            [["download", *receiving, "--port", str(PORT)] for _ in range(connections)])


def request_response(pieces, chunks, server=None, client=None):
    """An rr-server and an rr-client agreeing on the request's pieces and the
    response's chunks."""
    shape = {"chunks": ",".join(map(str, chunks))}
    return ([["rr-server", *arguments(request_size=sum(pieces), **shape, **(server or {})),
              "--port", str(PORT)]],
            [["rr-client", *arguments(pieces=",".join(map(str, pieces)), **shape, **(client or {})),
              "--port", str(PORT)]])


def draw_flow(rng):
    return rng.choice((UP, DOWN))


def flow_name(flow):
    return "upload" if flow == UP else "download"


# The classes, in the order of the table in lab/README.md.

def delayed_ack(rng, point):
    """A send-and-wait writer (TCP_NODELAY, each write waits until all is
    acknowledged) whose writes end in an odd segment, to a receiver that
    reads whole records: the receiver ACKs pairs of full segments at once
    and leaves the odd last one to its delayed-ACK timer."""
    stack = draw_stack(rng)
    rtt, flow = log_uniform(rng, 0.2, 20), draw_flow(rng)
    segments = rng.choice((1, 3, 5))
    full_last = segments > 1 and rng.random() < 0.25
    last = stack.mss if full_last else rng.randint(100, stack.mss - 100)
    write = (segments - 1) * stack.mss + last
    writes = clamp(round(rng.uniform(3, 8) / ((rtt + 45) / 1000)), 60, 150)
    connections, record = rng.choice((1, 1, 2)), rng.choice((32768, 65536, 131072))
    servers, clients = bulk(flow, connections, write * writes * connections,
                            sender={"write_size": write, "wait_acked": 1, "nodelay": 1},
                            receiver={"rcvlowat": record})
    return scenario(rng, rtt, stack, servers, clients, check_delayed_ack,
                    {"direction": flow_name(flow), "connections": connections, "writes": writes,
                     "write_bytes": write, "segments_per_write": segments,
                     "receiver_record_bytes": record}, flow=flow, needs_tcp_info=True)


def delayed_ack_waits_ms(pkts, sender, rtt):
    """The waits of `sender` for a delayed ACK: pauses in its sending that
    the peer's ACK ended, that ACK coming at least 35 ms after a round trip,
    the sender resuming at once; and the share of the sending time they take.
    Linux ACKs at once in its first exchanges (quick-ACK mode), and now and
    then after, so not every write waits."""
    waits = measure.ack_waits_ms(pkts, sender, pause_ms=rtt + 20)
    held = [ack - rtt for ack, resumed in waits
            if ack is not None and ack - rtt >= ACK_DELAY_MIN_MS and resumed <= 20]
    span_ms = sum(measure.transfer_span_s(segments, sender) * 1000
                  for segments in measure.by_stream(pkts).values())
    return held, sum(held) / span_ms if span_ms else 0.0


def check_delayed_ack(s, taps):
    pkts = taps.beside(s.sender)
    rtt = measure.base_rtt_ms(pkts, s.sender)
    held, share = delayed_ack_waits_ms(pkts, s.sender, rtt)
    writes = s.params["writes"] * s.params["connections"]
    require(len(held) >= 10 and share >= 0.5,
            f"{len(held)} of {writes} writes waited for a delayed ACK, {share:.0%} of the time")
    delay = measure.median(held)
    return ({"rtt_ms": round(rtt, 2), "writes": writes, "held_writes": len(held),
             "ack_delay_ms": round(delay, 1), "held_share": round(share, 2)},
            f"{len(held)} of {writes} writes waited {delay:.0f} ms for a delayed ACK "
            f"({share:.0%} of the time; RTT {rtt:.1f} ms)")


def nagle_delayed_ack(rng, point):
    """A message written in two or three pieces without TCP_NODELAY: Nagle
    holds the later pieces until the first is acknowledged, and the peer
    delays that ACK."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 0.2, 20)
    pieces = [rng.randint(20, 600)] + [rng.randint(10, 1200) for _ in range(rng.choice((1, 1, 2)))]
    other = rng.randint(50, 2000)
    exchanges = clamp(round(rng.uniform(3, 8) / ((2 * rtt + 45) / 1000)), 20, 80)
    connections = rng.choice((1, 1, 2, 3))
    side = rng.choice(("request", "response"))
    common = {"requests": exchanges, "parallel": connections}
    if side == "request":
        servers, clients = request_response(pieces, [other], server={"nodelay": 1},
                                            client={"nodelay": 0, **common})
    else:
        servers, clients = request_response([other], pieces, server={"nodelay": 0},
                                            client={"nodelay": 1, **common})
    return scenario(rng, rtt, stack, servers, clients, check_nagle_delayed_ack,
                    {"split": side, "pieces": pieces, "other_message_bytes": other,
                     "exchanges": exchanges, "connections": connections},
                    flow=UP if side == "request" else DOWN)


def check_nagle_delayed_ack(s, taps):
    pkts = taps.beside(s.sender)
    rtt = measure.base_rtt_ms(pkts, s.sender)
    held, _ = delayed_ack_waits_ms(pkts, s.sender, rtt)
    messages = s.params["exchanges"] * s.params["connections"]
    require(len(held) >= messages / 2, f"{len(held)} of {messages} messages held by Nagle")
    delay = measure.median(held)
    return ({"rtt_ms": round(rtt, 2), "messages": messages, "held_messages": len(held),
             "ack_delay_ms": round(delay, 1)},
            f"{len(held)} of {messages} {s.params['split']}s held {delay:.0f} ms (+RTT) "
            f"until the peer's delayed ACK")


def receive_window(rng, point):
    """Bulk transfers to a receiver whose window is small for the path: a
    small SO_RCVBUF, or window scaling off (64 kB at most)."""
    stack = draw_stack(rng)
    flow, connections = draw_flow(rng), rng.choice((1, 1, 2, 3))
    options = {}
    if rng.random() < 0.5:
        variant, rcvbuf = "small_rcvbuf", round(log_uniform(rng, 4096, 65536))
        window = 1.24 * rcvbuf  # what Linux makes of SO_RCVBUF, as measured
        receiver = {"rcvbuf": rcvbuf}
        rtt = log_uniform(rng, max(5.0, window / 4e6 * 1000), 400)
    else:
        variant, rcvbuf, window, receiver = "no_window_scaling", None, 65535, {}
        rtt = log_uniform(rng, 20, 400)
        side = rng.choice(("client_sysctls", "server_sysctls"))
        options[side] = {"net.ipv4.tcp_window_scaling": 0}
    rate = window / (rtt / 1000)
    total = clamp(rate * max(3.0, 15 * rtt / 1000) * connections, 20 * window * connections,
                  MAX_BULK_BYTES)
    link = None
    if rng.random() < 0.5 and rate * connections * 8 / 1e6 * 3 <= 100:
        link = round(rate * connections * 8 / 1e6 * rng.uniform(3, 8), 2)
    servers, clients = bulk(flow, connections, int(total), receiver=receiver)
    return scenario(rng, rtt, stack, servers, clients, check_receive_window,
                    {"variant": variant, "direction": flow_name(flow), "connections": connections,
                     "rcvbuf": rcvbuf, "bytes": int(total), "link_mbit": link},
                    flow=flow, rate_mbit=link, needs_tcp_info=True, **options)


def window_paced(pkts, sender, receiver):
    """Per connection: (throughput, largest window the receiver advertised, RTT)."""
    found = []
    for segments in measure.by_stream(pkts).values():
        if len(measure.data_from(segments, sender)) < 20:
            continue
        windows = measure.advertised_windows(segments, receiver)
        found.append((measure.throughput_bytes_per_s(segments, sender), max(windows),
                      measure.base_rtt_ms(segments, sender)))
    return found


def check_receive_window(s, taps):
    pkts = taps.beside(s.sender)
    flows = window_paced(pkts, s.sender, s.receiver)
    require(flows, "no bulk connection")
    ratios = [rate / (window / rtt * 1000) for rate, window, rtt in flows]
    require(all(0.5 <= r <= 1.2 for r in ratios), f"throughput / (window / RTT) = {ratios}")
    rate = sum(r for r, _, _ in flows)
    if s.rate_mbit:
        require(rate <= 0.5 * s.rate_mbit * 125_000, "the link, not the window, limits")
    shares = taps.tcp_info.get("shares", {})
    require(taps.tcp_info.get("limit") == "rwnd", f"the kernel's limit: {shares}")
    _, window, rtt = flows[0]
    return ({"window_bytes": window, "rtt_ms": round(rtt, 2), "throughput_bytes_per_s": round(rate),
             "throughput_per_window_rate": [round(r, 2) for r in ratios]},
            f"{rate / 1e6:.2f} MB/s in all; window {window / 1000:.1f} kB, RTT {rtt:.1f} ms "
            f"(throughput/(window/RTT) {statistics.mean(ratios):.2f})")


def zero_window(rng, point):
    """A receiver that reads a little now and then from a small buffer: it
    advertises zero windows and the sender waits on them."""
    stack = draw_stack(rng)
    flow, connections = draw_flow(rng), rng.choice((1, 1, 2))
    rcvbuf = round(log_uniform(rng, 4096, 32768))
    read_size = rng.choice([size for size in (1024, 2048, 4096, 8192) if size <= rcvbuf // 2])
    pause = log_uniform(rng, 10, 200)
    read_rate = read_size / (pause / 1000)
    # The sender must outpace the reader for the window to close.
    rtt = log_uniform(rng, 0.2, clamp(1.24 * rcvbuf / (4 * read_rate) * 1000, 0.3, 200))
    total = min(2_000_000, read_rate * rng.uniform(3, 8) + 2 * rcvbuf) * connections
    servers, clients = bulk(flow, connections, int(total),
                            receiver={"rcvbuf": rcvbuf, "read_size": read_size,
                                      "read_pause_ms": round(pause, 1)})
    return scenario(rng, rtt, stack, servers, clients, check_zero_window,
                    {"direction": flow_name(flow), "connections": connections, "rcvbuf": rcvbuf,
                     "read_bytes": read_size, "read_pause_ms": round(pause, 1),
                     "bytes": int(total)}, flow=flow, needs_tcp_info=True)


def check_zero_window(s, taps):
    pkts = taps.beside(s.receiver)
    zeros = measure.zero_window_count(pkts, s.receiver)
    closed_ms = sum(measure.zero_window_ms(segments, s.receiver)
                    for segments in measure.by_stream(pkts).values())
    span_ms = measure.transfer_span_s(pkts, s.sender) * 1000
    require(zeros >= 3 and closed_ms >= 0.15 * span_ms,
            f"{zeros} zero windows, shut {closed_ms:.0f} of {span_ms:.0f} ms")
    return ({"zero_windows": zeros, "zero_window_ms": round(closed_ms),
             "transfer_ms": round(span_ms)},
            f"{zeros} zero-window ACKs; the window was shut {closed_ms:.0f} ms of {span_ms:.0f} ms")


def send_buffer(rng, point):
    """A sender whose own buffer is the limit: a small SO_SNDBUF or tcp_wmem
    over a WAN, or a send-and-wait writer whose writes the receiver ACKs at
    once (an even number of full segments), so each write costs one RTT."""
    stack = draw_stack(rng)
    flow = draw_flow(rng)
    variant = rng.choice(("small_sndbuf", "low_tcp_wmem", "send_and_wait"))
    options, params = {}, {"variant": variant, "direction": flow_name(flow)}
    if variant == "send_and_wait":
        rtt, connections = log_uniform(rng, 5, 400), 1
        write = 2 * rng.randint(1, 4) * stack.mss
        writes = clamp(round(rng.uniform(3, 10) / (rtt / 1000)), 20, 150)
        quickack = rng.choice((0, 1))
        servers, clients = bulk(flow, 1, write * writes,
                                sender={"write_size": write, "wait_acked": 1, "nodelay": 1},
                                receiver={"quickack": quickack})
        params.update(write_bytes=write, writes=writes, receiver_quickack=quickack)
    else:
        connections = rng.choice((1, 1, 2))
        # Large enough for some twenty segments in flight: with fewer, the
        # congestion window never grows past what the buffer lets out, and
        # the kernel cannot tell the two limits apart.
        buffer = round(log_uniform(rng, 12_000, 48_000))
        in_flight = 2.4 * buffer  # as measured for SO_SNDBUF; about the same for tcp_wmem
        sender = {}
        if variant == "small_sndbuf":
            sender["sndbuf"] = buffer
        else:
            side = "client_sysctls" if flow == UP else "server_sysctls"
            options[side] = {"net.ipv4.tcp_wmem": f"4096 {2 * buffer} {2 * buffer}"}
        rtt = log_uniform(rng, max(5.0, in_flight / 4e6 * 1000), 400)
        rate = in_flight / (rtt / 1000)
        total = clamp(rate * max(3.0, 15 * rtt / 1000), 20 * in_flight,
                      MAX_BULK_BYTES / connections)
        servers, clients = bulk(flow, connections, int(total * connections), sender=sender)
        params.update(buffer_bytes=buffer, connections=connections,
                      bytes=int(total * connections))
    return scenario(rng, rtt, stack, servers, clients, check_send_buffer,
                    params, flow=flow, needs_tcp_info=True, **options)


def check_send_buffer(s, taps):
    pkts = taps.beside(s.sender)
    rtt = measure.base_rtt_ms(pkts, s.sender)
    if s.params["variant"] == "send_and_wait":
        waits = measure.ack_waits_ms(pkts, s.sender, pause_ms=rtt / 2)
        prompt = [ack - rtt for ack, _ in waits if ack is not None and ack - rtt < 15]
        writes = s.params["writes"]
        require(len(prompt) >= 0.8 * (writes - 1),
                f"{len(prompt)} of {writes} writes ACKed at once")
        return ({"rtt_ms": round(rtt, 2), "writes": writes, "promptly_acked_writes": len(prompt)},
                f"{writes} writes, each waiting one RTT ({rtt:.1f} ms) for its ACK")
    in_flight = measure.largest_in_flight(pkts, s.sender)
    window = measure.median(measure.advertised_windows(pkts, s.receiver))
    rate = measure.throughput_bytes_per_s(pkts, s.sender)
    require(in_flight < 0.5 * window, f"{in_flight} B in flight, window {window} B")
    require(taps.tcp_info.get("limit") == "sndbuf",
            f"the kernel's limit: {taps.tcp_info.get('limit')} {taps.tcp_info.get('shares')}")
    return ({"rtt_ms": round(rtt, 2), "in_flight_max_bytes": in_flight,
             "receiver_window_bytes": window, "throughput_bytes_per_s": round(rate)},
            f"{rate / 1e6:.2f} MB/s with at most {in_flight / 1000:.1f} kB in flight "
            f"against a {window / 1000:.0f} kB window, RTT {rtt:.1f} ms")


def app_paced(rng, point):
    """A sender that writes X bytes every Y ms (TCP_NODELAY), far below what
    the window and the link allow."""
    stack = draw_stack(rng)
    flow, connections = draw_flow(rng), rng.choice((1, 1, 2, 3))
    every = log_uniform(rng, 10, 200)
    chunk = round(log_uniform(rng, 1000, min(65536, 2e6 * every / 1000,
                                             MAX_BULK_BYTES / 20 / connections)))
    rtt = log_uniform(rng, 0.2, min(50, every / 4))
    writes = clamp(round(rng.uniform(3, 10) / (every / 1000)), 20,
                   min(300, MAX_BULK_BYTES // (chunk * connections)))
    servers, clients = bulk(flow, connections, chunk * writes * connections,
                            sender={"write_size": chunk, "pace_ms": round(every, 2), "nodelay": 1})
    # An upload of bytes no protocol frames shows no one waiting for the
    # rest: the client's own pace, which client_think names. A download's
    # reader moves on as soon as the last byte comes: it was waiting.
    own_pace = {"finding": "client_think", "loud": False} if flow_name(flow) == "upload" else {}
    return scenario(rng, rtt, stack, servers, clients, check_app_paced,
                    {"direction": flow_name(flow), "connections": connections,
                     "write_bytes": chunk, "every_ms": round(every, 2), "writes": writes},
                    flow=flow, needs_tcp_info=True, **own_pace)


def check_app_paced(s, taps):
    pkts = taps.beside(s.sender)
    paced = s.params["write_bytes"] / (s.params["every_ms"] / 1000)
    rates = list(measure.throughput_by_stream(pkts, s.sender).values())
    require(rates and all(0.75 * paced <= r <= 1.3 * paced for r in rates),
            f"throughputs {rates} against the pace {paced:.0f} B/s")
    shares = taps.tcp_info.get("shares", {})
    require(shares.get("app", 0) >= 0.4, f"the kernel saw the sender busy: {shares}")
    return ({"paced_bytes_per_s": round(paced),
             "throughputs_bytes_per_s": [round(r) for r in rates]},
            f"{s.params['write_bytes']} B every {s.params['every_ms']:.0f} ms: "
            f"{measure.median(rates) / 1000:.0f} kB/s per connection")


def bottleneck(rng, point):
    """Bulk transfers through a rate limit whose queue builds: the RTT
    climbs from its base as bytes in flight grow."""
    stack = draw_stack(rng)
    flow, connections = draw_flow(rng), rng.choice((1, 1, 2, 3, 4, 6, 8))
    rate = log_uniform(rng, 2, 40)
    per_s = rate * 125_000
    # Seconds at the link's pace, as a transfer someone waits on takes; the
    # cap keeps a capture small enough to ship and the fastest transfer over
    # a second and a half.
    total = min(BOTTLENECK_MAX_BYTES, per_s * rng.uniform(3, 8))
    rtt = log_uniform(rng, 0.2, min(100, total / 5 / per_s * 1000))
    servers, clients = bulk(flow, connections, int(total))
    return scenario(rng, rtt, stack, servers, clients, check_bottleneck,
                    {"direction": flow_name(flow), "connections": connections,
                     "link_mbit": round(rate, 2), "bytes": int(total)},
                    flow=flow, rate_mbit=round(rate, 2), needs_tcp_info=True)


def check_bottleneck(s, taps):
    pkts = taps.beside(s.sender)
    rtt = measure.base_rtt_ms(pkts, s.sender)
    link = s.rate_mbit * 125_000
    span = measure.transfer_span_s(pkts, s.sender)
    rate = sum(p.len for p in measure.data_from(pkts, s.sender) if not measure.is_resent(p)) / span
    samples = [ms for _, ms in measure.ack_rtts_ms(pkts, s.receiver)]
    queued = measure.percentile(samples, 0.9)
    require(rate >= 0.75 * link, f"{rate:.0f} B/s on a {link:.0f} B/s link")
    require(queued >= 2 * rtt and queued >= rtt + 5, f"RTT {rtt:.1f} ms rose to {queued:.1f} ms")
    return ({"rtt_ms": round(rtt, 2), "queued_rtt_ms": round(queued, 1),
             "throughput_bytes_per_s": round(rate), "link_bytes_per_s": round(link)},
            f"{rate / 1e6:.2f} MB/s on a {s.rate_mbit:g} Mbit/s link; RTT {rtt:.1f} ms rose to "
            f"{queued:.0f} ms (90th percentile)")


def random_loss(rng, point):
    """Random loss on the data's way: bulk transfers, or responses of 20 to
    60 segments, so that most losses are repaired after duplicate ACKs. The
    senders back off for loss (CUBIC or Reno): BBR paces by the bandwidth it
    measures and keeps its pace through random loss by design, so there the
    loss costs only its repairs and is not what makes a transfer slow."""
    stack = draw_stack(rng)
    if stack.congestion == "bbr":
        stack.congestion = rng.choice(("cubic", "reno"))
    params = {}
    if rng.random() < 0.5:
        rtt, lowest = log_uniform(rng, 1, 100), log_uniform(rng, 0.005, 0.05)
        flow, connections = draw_flow(rng), rng.choice((1, 1, 2, 3))
        # Enough for some ten losses, done in about 10 s at the rate such loss allows.
        mathis = stack.mss / (rtt / 1000) * 1.22 / math.sqrt(lowest) * connections
        total = int(clamp(10 * stack.mss / lowest, 500_000, min(MAX_BULK_BYTES, 10 * mathis)))
        servers, clients = bulk(flow, connections, total)
        params.update(variant="bulk", direction=flow_name(flow), connections=connections,
                      bytes=total)
    else:
        # Few enough exchanges that their round trips stay a small part of the time.
        rtt = log_uniform(rng, 1, 30)
        flow, connections = DOWN, rng.choice((1, 1, 2))
        response = rng.randint(20, 60) * stack.mss - rng.randint(0, stack.mss // 2)
        requests = clamp(round(1_500_000 / response / connections), 8, clamp(int(300 / rtt), 8, 40))
        total = response * requests * connections
        servers, clients = request_response(
            [rng.randint(50, 500)], [response], server={"nodelay": 1, "tcp_info": TCP_INFO},
            client={"nodelay": 1, "requests": requests, "parallel": connections})
        params.update(variant="responses", response_bytes=response, requests=requests,
                      connections=connections)
    # Enough segments that some ten of them are lost.
    probability = log_uniform(rng, max(0.005, 10 * stack.mss / total), 0.05)
    params["loss"] = round(probability, 4)
    direction = "c2s" if flow == UP else "s2c"
    drops = [DropRule("random", direction=direction, probability=probability, port=PORT,
                      seed=rng.randrange(1 << 30))]
    return scenario(rng, rtt, stack, servers, clients, check_random_loss,
                    params, flow=flow, drops=drops, needs_tcp_info=True)


def check_random_loss(s, taps):
    sent = taps.beside(s.sender)
    rtt = measure.base_rtt_ms(sent, s.sender)
    resent = measure.retransmitted(sent, s.sender)
    after_timer = [ms for ms in measure.silence_before_ms(sent, s.sender) if ms >= max(rtt, 5)]
    gaps = [p for p in taps.beside(s.receiver) if p.lost and p.src == s.sender]
    wrong_way = measure.retransmitted(sent, s.receiver)
    require(len(resent) >= 5, f"{len(resent)} retransmissions")
    require(len(after_timer) <= len(resent) / 2,
            f"{len(after_timer)} of {len(resent)} resent after a timer")
    require(gaps and not wrong_way,
            f"{len(gaps)} gaps at the receiver, {len(wrong_way)} resent back")
    return ({"retransmissions": len(resent), "resent_after_a_timer": len(after_timer),
             "gaps_at_receiver": len(gaps)},
            f"{len(resent)} retransmissions ({len(after_timer)} after a timer) at "
            f"{s.params['loss']:.1%} loss")


def periodic_loss(rng, point):
    """Data lost during burst_s of every period_s, under a steady stream of
    requests that lasts several periods."""
    stack = draw_stack(rng)
    period = rng.uniform(1, 5.5)
    burst = rng.uniform(0.2, min(2.5, 0.4 * period))
    rtt = log_uniform(rng, 2, 60)
    connections = 1 if rtt < 20 else rng.choice((1, 2, 3))
    request, response = rng.randint(50, 500), round(log_uniform(rng, 500, 20000))
    duration = round(3.5 * period + 0.5, 2)
    direction = rng.choice(("s2c", "c2s"))
    think = steady_stream_think_ms(rtt, request, response, stack.mss, duration, connections)
    servers, clients = request_response(
        [request], [response], server={"nodelay": 1},
        client={"nodelay": 1, "requests": 100_000, "duration_s": duration,
                "parallel": connections, "client_think_ms": think})
    drops = [DropRule("window", direction=direction, period_s=round(period, 3),
                      burst_s=round(burst, 3), port=PORT)]
    return scenario(rng, rtt, stack, servers, clients, check_periodic_loss,
                    {"period_s": round(period, 3), "burst_s": round(burst, 3),
                     "lost_direction": direction, "response_bytes": response,
                     "connections": connections, "duration_s": duration,
                     "client_think_ms": think},
                    flow=UP if direction == "c2s" else DOWN, drops=drops)


def steady_stream_think_ms(rtt_ms, request, response, mss, duration_s, connections):
    """The client's pause between requests that keeps a steady stream to
    some 100 requests a second, fewer for large messages, so that its
    capture stays under about 400 kB."""
    frames = math.ceil(request / mss) + math.ceil(response / mss) + 1
    interval_ms = max(10.0, frames * RECORD_BYTES * duration_s * connections * 1000
                      / CAPTURE_BUDGET_BYTES)
    return round(max(0.0, interval_ms - rtt_ms), 1)


def check_periodic_loss(s, taps):
    pkts = taps.beside(s.sender)
    first_sent = {}
    for p in measure.data_from(pkts, s.sender):
        first_sent.setdefault((p.stream, p.seq), p.time)
    lost_at = sorted({first_sent[(p.stream, p.seq)] for p in measure.retransmitted(pkts, s.sender)
                      if (p.stream, p.seq) in first_sent})
    period = s.params["period_s"]
    bursts = measure.burst_starts(lost_at, quiet_s=0.5 * period)
    # The first loss may come late in its burst: the traffic starts at any point of the period.
    spacing = [gap / 1000 / period for gap in measure.gaps_ms(bursts)][1:]
    require(len(bursts) >= 3, f"{len(bursts)} bursts of loss")
    require(all(abs(x - round(x)) <= 0.15 and round(x) >= 1 for x in spacing),
            f"bursts spaced {spacing} periods")
    return ({"loss_bursts": len(bursts), "lost_segments": len(lost_at),
             "burst_spacing_periods": [round(x, 2) for x in spacing]},
            f"{len(lost_at)} segments lost in {len(bursts)} bursts every {period:.2f} s "
            f"({s.params['burst_s']:.2f} s each)")


def tail_loss(rng, point):
    """Messages of k full segments and r bytes more; the wire loses the first
    copy of some r-byte last segments, which only a timer (tail-loss probe
    or RTO) can repair. Nothing else is lost."""
    stack = draw_stack(rng)
    probability = rng.uniform(0.2, 0.6)
    # A lost tail costs a probe timeout, over 200 ms: well above the round trips.
    rtt = log_uniform(rng, 0.2, min(30, 60 * probability))
    full, tail = rng.randint(0, 6), rng.randint(60, stack.mss - 100)
    message = full * stack.mss + tail
    other = rng.randint(50, 1000)
    other += other == tail
    connections = rng.choice((1, 1, 2))
    requests = clamp(round(rng.uniform(2, 6) / (0.2 * probability + 2 * rtt / 1000)), 15, 60)
    side = rng.choice(("response", "response", "request"))
    common = {"requests": requests, "parallel": connections, "nodelay": 1}
    if side == "response":
        servers, clients = request_response([other], [message], server={"nodelay": 1},
                                            client=common)
    else:
        servers, clients = request_response([message], [other], server={"nodelay": 1},
                                            client=common)
    flow = DOWN if side == "response" else UP
    drops = [DropRule("length", direction="s2c" if flow == DOWN else "c2s", length=tail,
                      probability=round(probability, 3), port=PORT, seed=rng.randrange(1 << 30))]
    return scenario(rng, rtt, stack, servers, clients, check_tail_loss,
                    {"lost_in": side, "message_bytes": message, "full_segments": full,
                     "tail_bytes": tail, "other_message_bytes": other,
                     "tail_loss": round(probability, 3), "requests": requests,
                     "connections": connections}, flow=flow, drops=drops)


def check_tail_loss(s, taps):
    """Only tails are resent, and the peer's one-segment messages whose ACK
    rode on a lost tail."""
    pkts = taps.beside(s.sender)
    resent = measure.retransmitted(pkts, s.sender)
    tails = [p for p in resent if p.len == s.params["tail_bytes"]]
    others = [p for p in resent if p not in tails] + [
        p for p in measure.retransmitted(pkts, s.receiver)
        if p.len != s.params["other_message_bytes"]]
    require(len(tails) >= 3, f"{len(tails)} tails resent")
    require(not others, f"{len(others)} other segments resent")
    messages = s.params["requests"] * s.params["connections"]
    return ({"tails_resent": len(tails), "messages": messages},
            f"{len(tails)} of {messages} {s.params['lost_in']}s "
            f"lost their last {s.params['tail_bytes']}-byte segment")


def syn_loss(rng, point):
    """Many short connections; the wire loses SYNs (or SYN-ACKs), so some
    connections wait 1, 3 or 7 s for their handshake."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 0.2, 50)
    workers, per_worker = rng.randint(1, 8), rng.randint(3, 8)
    requests, request, response = rng.randint(1, 3), rng.randint(50, 500), rng.randint(50, 4000)
    # A SYN lost before the server's tap leaves no trace there: at the server,
    # SYN-ACKs are lost (after its tap), so it sees them resent.
    variant = "syn_ack" if point == "server" else rng.choice(("syn", "first_syns", "syn_ack"))
    seed = rng.randrange(1 << 30)
    if variant == "first_syns":
        drops = [DropRule("syn", count=rng.randint(1, 3), port=PORT)]
    else:
        drops = [DropRule(variant, probability=round(rng.uniform(0.2, 0.5), 3), port=PORT,
                          seed=seed)]
    servers, clients = request_response(
        [request], [response], server={"nodelay": 1},
        client={"nodelay": 1, "requests": requests, "parallel": workers,
                "connections": per_worker, "connect_timeout": 12,
                "stagger_ms": rng.randint(0, 300)})
    return scenario(rng, rtt, stack, servers, clients, check_syn_loss,
                    {"variant": variant, "workers": workers,
                     "connections_per_worker": per_worker, "requests": requests},
                    drops=drops, client_sysctls={"net.ipv4.tcp_syn_linear_timeouts": 0})


def check_syn_loss(s, taps):
    pkts = taps.at("client")
    retried = {key: times for key, times in measure.syn_times_by_stream(pkts).items()
               if len(times) > 1}
    first_retries = [times[1] - times[0] for times in retried.values()]
    require(retried and all(0.8 <= gap <= 1.5 for gap in first_retries),
            f"SYN retries after {first_retries} s")
    return ({"connections": measure.connections_opened(pkts), "retried_connections": len(retried),
             "syn_retry_offsets_s": measure.syn_retry_offsets_s(pkts)},
            f"{len(retried)} of {measure.connections_opened(pkts)} connections resent their SYN "
            f"(most: after {measure.syn_retry_offsets_s(pkts)} s)")


def accept_queue(rng, point):
    """A burst of clients at a server with a tiny listen backlog that accepts
    slowly: every SYN is answered (they all arrive before the queue fills),
    but once the accept queue is full the server drops the handshake's final
    ACK and the requests after it, and acknowledges nothing for seconds."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 5, 100)
    backlog = rng.choice((0, 1, 2))
    every = rng.uniform(0.4, 1.5)
    clients_count = min(backlog + 1 + rng.randint(3, 7), int(12 / every))
    requests, request, response = rng.randint(1, 3), rng.randint(50, 500), rng.randint(50, 4000)
    servers = [["slow-accept", *arguments(backlog=backlog, accept_every_s=round(every, 3),
                                          request_size=request, chunks=response, nodelay=1),
                "--port", str(PORT)]]
    clients = [["rr-client", *arguments(pieces=request, chunks=response, requests=requests,
                                        parallel=clients_count, nodelay=1, connect_timeout=20),
                "--port", str(PORT)]]
    return scenario(rng, rtt, stack, servers, clients, check_accept_queue,
                    {"backlog": backlog, "accept_every_s": round(every, 3),
                     "clients": clients_count, "requests": requests},
                    client_sysctls={"net.ipv4.tcp_syn_linear_timeouts": 0})


def unanswered_requests_ms(pkts, client_ip):
    """For each connection whose handshake completed and whose first request
    was sent again: ms from that request to the server's first ACK of it."""
    waits = []
    for segments in measure.by_stream(pkts).values():
        data = measure.data_from(segments, client_ip)
        if not data or not any(p.syn and p.ack_flag for p in segments):
            continue
        first = data[0]
        if not any(measure.is_resent(p) and p.seq == first.seq for p in data):
            continue
        ack = next((p for p in segments if p.src != client_ip and p.ack >= first.end
                    and p.time > first.time), None)
        if ack:
            waits.append((ack.time - first.time) * 1000)
    return waits


def check_accept_queue(s, taps):
    pkts = taps.at("client")
    syn_retries = sum(len(times) - 1 for times in measure.syn_times_by_stream(pkts).values())
    waits = unanswered_requests_ms(pkts, CLIENT_IP)
    require(syn_retries == 0, f"{syn_retries} SYNs resent: SYNs were dropped")
    long_waits = [w for w in waits if w >= 400]
    require(long_waits, f"no request waited unacknowledged after its handshake: {waits}")
    return ({"waiting_requests": len(long_waits), "longest_wait_ms": round(max(long_waits)),
             "syn_retries": syn_retries},
            f"{len(long_waits)} of {s.params['clients']} connections sent their request again "
            f"with no ACK, up to {max(long_waits) / 1000:.1f} s, after a completed handshake")


def server_think(rng, point):
    """The server thinks before each response."""
    stack = draw_stack(rng)
    think = log_uniform(rng, 20, 2000)
    rtt = log_uniform(rng, 0.2, min(400, think / 3))
    requests = clamp(round(rng.uniform(4, 12) / ((think + rtt) / 1000)), 3, 60)
    connections = rng.choice((1, 1, 2, 3))
    servers, clients = request_response(
        [rng.randint(50, 1000)], [rng.randint(50, 6000)],
        server={"think_ms": round(think, 1), "nodelay": rng.choice((0, 1))},
        client={"nodelay": 1, "requests": requests, "parallel": connections})
    return scenario(rng, rtt, stack, servers, clients, check_server_think,
                    {"think_ms": round(think, 1), "requests": requests,
                     "connections": connections})


def check_server_think(s, taps):
    thinks = measure.server_think_ms(taps.at("server"), CLIENT_IP, SERVER_IP)
    think = s.params["think_ms"]
    slow = [t for t in thinks if t >= 0.9 * think]
    require(len(slow) >= 0.8 * s.params["requests"] * s.params["connections"],
            f"{len(slow)} responses after {think:.0f} ms")
    return ({"server_think_ms": round(measure.median(thinks), 1), "exchanges": len(thinks)},
            f"{len(thinks)} responses, each {measure.median(thinks):.0f} ms after its request")


def client_delay(rng, point):
    """The client waits after connecting before its first request, or thinks
    between requests, or both."""
    stack = draw_stack(rng)
    variant = rng.choice(("first_request", "between_requests", "both"))
    first = rng.uniform(300, 3000) if variant != "between_requests" else 0
    between = log_uniform(rng, 100, 1500) if variant != "first_request" else 0
    requests = rng.randint(1, 8) if variant == "first_request" else rng.randint(3, 8)
    if first + requests * between > 14_000:
        requests = max(2, int((14_000 - first) / between))
    rtt = log_uniform(rng, 0.2, min(100, min(x for x in (first, between) if x) / 5))
    connections = rng.choice((1, 1, 2, 3))
    servers, clients = request_response(
        [rng.randint(50, 1000)], [rng.randint(50, 4000)], server={"nodelay": 1},
        client={"nodelay": 1, "requests": requests, "parallel": connections,
                "first_request_delay_ms": round(first, 1), "client_think_ms": round(between, 1),
                "stagger_ms": rng.randint(0, 500)})
    # A wait before the first request and pauses between turns are the
    # client's own pace: no one is shown to wait for them, and nothing in
    # them is time lost to fix.
    own_pace = {"finding": "client_think"} if variant == "between_requests" else {}
    return scenario(rng, rtt, stack, servers, clients, check_client_delay,
                    {"variant": variant, "first_request_delay_ms": round(first, 1),
                     "client_think_ms": round(between, 1), "requests": requests,
                     "connections": connections}, loud=False, **own_pace)


def check_client_delay(s, taps):
    pkts = taps.at("client")
    first, between = s.params["first_request_delay_ms"], s.params["client_think_ms"]
    waits_first, waits_between = [], []
    for segments in measure.by_stream(pkts).values():
        handshake = next((p for p in segments if p.src == CLIENT_IP and p.ack_flag and not p.syn),
                         None)
        requests = [(request, end) for _, request, end in measure.exchanges(segments, CLIENT_IP)]
        if handshake and requests:
            waits_first.append((requests[0][0] - handshake.time) * 1000)
        waits_between += [(b[0] - a[1]) * 1000 for a, b in zip(requests, requests[1:]) if a[1]]
    if first:
        require(waits_first and all(w >= 0.9 * first for w in waits_first),
                f"first requests after {waits_first} ms")
    if between:
        require(waits_between and measure.median(waits_between) >= 0.9 * between,
                f"requests {waits_between} ms after the previous response")
    return ({"first_request_after_ms": round(measure.median(waits_first), 1),
             "next_request_after_ms": round(measure.median(waits_between), 1)},
            f"first request {measure.median(waits_first):.0f} ms after connecting; next ones "
            f"{measure.median(waits_between):.0f} ms after the previous response")


def chatty(rng, point):
    """Many sequential small exchanges over a long RTT: round trips dominate."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 10, 400)
    turns = clamp(rng.randint(20, 200), max(20, math.ceil(CHATTY_ROUND_TRIPS_MS / rtt) + 1),
                  int(15_000 / rtt))
    connections = rng.choice((1, 1, 2))
    servers, clients = request_response(
        [rng.randint(20, 400)], [rng.randint(20, 1400)], server={"nodelay": 1},
        client={"nodelay": 1, "requests": turns, "parallel": connections})
    return scenario(rng, rtt, stack, servers, clients, check_chatty,
                    {"turns": turns, "connections": connections})


def check_chatty(s, taps):
    pkts = taps.at("client")
    rtt = measure.base_rtt_ms(pkts, s.sender)
    spans = []
    for segments in measure.by_stream(pkts).values():
        found = measure.exchanges(segments, CLIENT_IP)
        require(len(found) == s.params["turns"], f"{len(found)} turns")
        spans.append((found[-1][2] - found[0][1]) * 1000)
    expected = s.params["turns"] * rtt
    require(all(0.9 * expected <= span <= 1.3 * expected for span in spans),
            f"spans {spans} ms for {s.params['turns']} turns of {rtt:.1f} ms")
    return ({"rtt_ms": round(rtt, 2), "turns": s.params["turns"],
             "span_ms": round(measure.median(spans))},
            f"{s.params['turns']} turns × RTT {rtt:.1f} ms = {measure.median(spans) / 1000:.2f} s")


def split_response(rng, point):
    """The server writes each response in small pieces with pauses between
    them (TCP_NODELAY)."""
    stack = draw_stack(rng)
    pieces = [rng.randint(3, 200) for _ in range(rng.randint(2, 4))]
    pause = log_uniform(rng, 5, 200)
    rtt = log_uniform(rng, 0.2, clamp(pause * (len(pieces) - 1) / 2, 0.3, 50))
    exchange_s = (pause * (len(pieces) - 1) + rtt) / 1000
    requests = clamp(round(rng.uniform(3, 8) / exchange_s), 10, 50)
    connections = rng.choice((1, 1, 2))
    servers, clients = request_response(
        [rng.randint(20, 500)], pieces,
        server={"nodelay": 1, "chunk_pause_ms": round(pause, 1)},
        client={"nodelay": rng.choice((0, 1)), "requests": requests, "parallel": connections})
    return scenario(rng, rtt, stack, servers, clients, check_split_response,
                    {"pieces": pieces, "pause_ms": round(pause, 1), "requests": requests,
                     "connections": connections}, flow=DOWN)


def check_split_response(s, taps):
    pkts = taps.at("client")
    pause = s.params["pause_ms"]
    gaps = measure.request_stalls_ms(pkts, SERVER_IP)
    sizes = set(measure.segments_by_length(pkts, SERVER_IP))
    require(set(s.params["pieces"]) <= sizes, f"response segments of {sorted(sizes)} bytes")
    expected = (len(s.params["pieces"]) - 1) * s.params["requests"] * s.params["connections"]
    paused = [g for g in gaps if 0.8 * pause <= g <= 1.5 * pause + 5]
    require(len(paused) >= 0.8 * expected, f"{len(paused)} of {expected} pauses of {pause} ms")
    return ({"response_segment_bytes": sorted(sizes), "pauses": len(paused),
             "pause_ms": round(measure.median(paused), 1)},
            f"responses of {s.params['pieces']} bytes, {measure.median(paused):.0f} ms apart")


def periodic_stalls(rng, point):
    """The server stalls every few seconds under a steady request stream."""
    stack = draw_stack(rng)
    stall = rng.uniform(100, 800)
    period = rng.uniform(max(1.0, 2.5 * stall / 1000), min(6.0, 10 * stall / 1000))
    rtt = log_uniform(rng, 0.2, min(20, stall / 10))
    connections = rng.choice((1, 1, 2))
    duration = round(3.3 * period + 0.3, 2)
    request, response = rng.randint(50, 500), rng.randint(50, 1400)
    think = steady_stream_think_ms(rtt, request, response, stack.mss, duration, connections)
    servers, clients = request_response(
        [request], [response],
        server={"nodelay": 1, "stall_every_s": round(period, 3), "stall_ms": round(stall, 1)},
        client={"nodelay": 1, "requests": 100_000, "duration_s": duration,
                "parallel": connections, "client_think_ms": think})
    return scenario(rng, rtt, stack, servers, clients, check_periodic_stalls,
                    {"stall_ms": round(stall, 1), "period_s": round(period, 3),
                     "connections": connections, "duration_s": duration,
                     "client_think_ms": think})


def check_periodic_stalls(s, taps):
    pkts = taps.at("client")
    stall, period = s.params["stall_ms"], s.params["period_s"]
    idle = measure.idle_periods_ms(pkts, 0.7 * stall)
    spacing = [gap / 1000 / period for gap in measure.gaps_ms([start for start, _ in idle])]
    require(len(idle) >= 3, f"{len(idle)} stalls")
    # A period whose stall window no request met shows no stall.
    require(all(abs(x - round(x)) <= 0.1 and round(x) >= 1 for x in spacing),
            f"stalls spaced {spacing} periods")
    length = measure.median([ms for _, ms in idle])
    return ({"stalls": len(idle), "stall_ms": round(length, 1),
             "stall_spacing_periods": [round(x, 2) for x in spacing]},
            f"{len(idle)} stalls of {length:.0f} ms every {period:.2f} s")


def healthy(rng, point):
    """Nothing wrong: quick exchanges with TCP_NODELAY, short transfers,
    several connections, a modest RTT, no loss."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 0.2, 20)
    variant = rng.choice(("exchanges", "transfers", "both"))
    servers, clients, params = [], [], {"variant": variant}
    if variant != "transfers":
        connections = rng.randint(1, 8)
        requests = clamp(rng.randint(5, 40), 2, int(HEALTHY_ROUND_TRIPS_MS / rtt))
        request, response = rng.randint(50, 1000), rng.randint(50, 4000)
        servers, clients = request_response([request], [response], server={"nodelay": 1},
                                            client={"nodelay": 1, "requests": requests,
                                                    "parallel": connections})
        params.update(connections=connections, requests=requests, request_bytes=request,
                      response_bytes=response)
    if variant != "exchanges":
        flow, transfers = draw_flow(rng), rng.randint(1, 3)
        total = rng.randint(20_000, 300_000) * transfers
        bulk_servers, bulk_clients = bulk(flow, transfers, total, sender={"nodelay": 1})
        port = str(PORT + 1)
        servers += [[*args[:-1], port] for args in bulk_servers]
        clients += [[*args[:-1], port] for args in bulk_clients]
        params.update(direction=flow_name(flow), transfers=transfers, transfer_bytes=total)
    return scenario(rng, rtt, stack, servers, clients, check_healthy, params,
                    needs_tcp_info=variant != "exchanges", watched_port=None)


def check_healthy(s, taps):
    """Nothing planted by accident: no retransmission, no zero window, no
    wait for a delayed ACK, no slow answer, a modest RTT."""
    retransmissions = zero_windows = stalls = 0
    rtts = []
    for point in ("client", "server"):
        pkts = taps.at(point)
        retransmissions += sum(measure.is_resent(p) for p in pkts)
        zero_windows += sum(p.zero_window for p in pkts)
        for ip in (CLIENT_IP, SERVER_IP):
            stalls += sum(1 for ack, _ in measure.ack_waits_ms(pkts, ip, pause_ms=ACK_DELAY_MIN_MS)
                          if ack is None or ack >= ACK_DELAY_MIN_MS)
        rtts += [ms for _, ms in measure.ack_rtts_ms(pkts, CLIENT_IP)]
        rtts += [ms for _, ms in measure.ack_rtts_ms(pkts, SERVER_IP)]
    thinks = measure.server_think_ms(taps.at("server"), CLIENT_IP, SERVER_IP)
    slowest = max(thinks, default=0.0)
    high_rtt = measure.percentile(rtts, 0.95)
    require(retransmissions == zero_windows == stalls == 0,
            f"{retransmissions} retransmissions, {zero_windows} zero windows, {stalls} stalls")
    require(slowest < 20 and high_rtt < 30,
            f"slowest answer {slowest:.1f} ms, RTT {high_rtt:.1f} ms")
    return ({"retransmissions": 0, "zero_windows": 0, "slowest_answer_ms": round(slowest, 1),
             "rtt_95th_ms": round(high_rtt, 2)},
            f"nothing wrong: slowest answer {slowest:.1f} ms, "
            f"RTT {high_rtt:.1f} ms (95th percentile)")


@dataclasses.dataclass(frozen=True)
class Cause:
    """A class of the sweep: its name (the manifest's `cause`), the finding
    tcpwhy must name it by (None: no loud finding at all), the figure that
    finding must carry, if any, and how it is planted; a healthy class also
    the share of a sweep it takes; a class of variants names them."""

    name: str
    finding: str
    draw: object
    finding_figure: str = None
    healthy_share: float = 0.15
    variants: tuple = ()  # drawn in turn by a sweep's scenarios of the class (draw's `variant`)


CAUSES = {cause.name: cause for cause in (
    Cause("delayed_ack", "delayed_ack", delayed_ack),
    Cause("nagle_delayed_ack", "nagle_delayed_ack", nagle_delayed_ack),
    Cause("receive_window", "receive_window_limited", receive_window),
    Cause("zero_window", "zero_window", zero_window),
    Cause("send_buffer", "send_buffer_limited", send_buffer),
    Cause("app_paced", "application_limited", app_paced),
    Cause("bottleneck", "bottleneck_link", bottleneck),
    Cause("random_loss", "packet_loss", random_loss),
    Cause("periodic_loss", "periodic_loss", periodic_loss),
    Cause("tail_loss", "tail_loss", tail_loss),
    Cause("syn_loss", "connection_setup_failure", syn_loss),
    Cause("accept_queue", "accept_queue_overflow", accept_queue),
    Cause("server_think", "server_think_time", server_think),
    Cause("client_delay", "client_delay", client_delay),
    Cause("chatty", "chattiness", chatty),
    Cause("split_response", "split_response", split_response),
    Cause("periodic_stalls", "periodic_stalls", periodic_stalls),
    Cause("healthy", None, healthy),
)}
