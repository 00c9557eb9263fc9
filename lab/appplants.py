"""The sweep's application classes: the causes of plants.py planted on
real applications (nginx, PostgreSQL, Redis, memcached, iperf3, curl,
OpenSSH; lab/realapps.py runs them), and healthy traffic as users bring
it: sessions typed by a person, keep-alive connections left idle, page
loads, request/response on a LAN and over a WAN, transfers at a full link.

Each class draws an application among those that fit and checks the
recording with tshark, as plants.py does. Real applications log no
TCP_INFO, so every check reads the capture alone.
"""

import math

import measure
import plants
from hosts import CLIENT_IP, SERVER_IP
from plants import (DOWN, PORT, UP, Scenario, clamp, draw_flow, draw_stack, flow_name,
                    log_uniform, require)
from wire import DropRule

PROGRAM = "realapps.py"
SNAPLEN = 256  # TLS record headers, HTTP headers, PostgreSQL, Redis and memcached lengths
BULK_SNAPLEN = 128  # iperf3's data carries no framing
MAX_HTTP_BYTES = 3_000_000  # some 600 kB of capture at snaplen 256
MAX_IPERF_BYTES = 5_000_000  # some 600 kB of capture at snaplen 128
ANSWER_MS = 30  # a healthy server answers within this (first byte, at its tap)
# ...but for an SSH login, which starts a process and a shell before it answers
LOGIN_ANSWER_MS = 100
DELAYED_ACK_WAITS_MS = 250  # a healthy capture's waits for delayed ACKs, in all, at most


def app_scenario(rng, rtt_ms, stack, servers, clients, check, app, params, **options):
    """A Scenario of real applications: the congestion control is each
    namespace's default (the applications set none of their own), the
    capture keeps enough of each packet for the protocols' framing."""
    congestion = {"net.ipv4.tcp_congestion_control": stack.congestion}
    client_sysctls = {**stack.client, **congestion, **options.pop("client_sysctls", {})}
    server_sysctls = {**stack.server, **congestion, **options.pop("server_sysctls", {})}
    options.setdefault("snaplen", SNAPLEN)
    return Scenario(rtt_ms=rtt_ms, params={"rtt_ms": round(rtt_ms, 3), "app": app, **params},
                    servers=servers, clients=clients, check=check, congestion=stack.congestion,
                    client_sysctls=client_sysctls, server_sysctls=server_sysctls,
                    client_initcwnd=stack.client_initcwnd,
                    server_initcwnd=stack.server_initcwnd, program=PROGRAM, **options)


def backing_off(stack, rng):
    """Senders that back off for loss and fill queues: CUBIC or Reno."""
    if stack.congestion == "bbr":
        stack.congestion = rng.choice(("cubic", "reno"))
    return stack


def port(args):
    return [*args, "--port", str(PORT)]


def nginx(tls=0, objects=(), big_bytes=1000, think_ms=0):
    return port(["nginx", *plants.arguments(tls=tls, objects=",".join(map(str, objects)),
                                            big_bytes=big_bytes, think_ms=think_ms)])


def curl(paths, tls=0, **options):
    return port(["curl", *plants.arguments(paths=",".join(paths), tls=tls, **options)])


def iperf3(flow, total, **options):
    """An iperf3 server and a client sending `total` bytes up or down."""
    return ([port(["iperf3-server"])],
            [port(["iperf3", *plants.arguments(bytes=int(total), reverse=int(flow == DOWN),
                                               **options)])])


def bulk_app(rng, flow, total):
    """An HTTP download of `total` bytes from nginx, or an iperf3 transfer
    up or down: (app, servers, clients, flow, snaplen)."""
    if flow == DOWN and rng.random() < 0.5:
        total = min(total, MAX_HTTP_BYTES)
        return ("nginx+curl", [nginx(big_bytes=int(total))], [curl(["/big"])], DOWN, SNAPLEN,
                total)
    servers, clients = iperf3(flow, min(total, MAX_IPERF_BYTES))
    return "iperf3", servers, clients, flow, BULK_SNAPLEN, min(total, MAX_IPERF_BYTES)


def bulk_flows(pkts, sender):
    """The connections that carried bulk data from `sender` (iperf3's
    control connection carries a few messages only)."""
    return [segments for segments in measure.by_stream(pkts).values()
            if len(measure.data_from(segments, sender)) >= 20]


# The planted classes.

def receive_window(rng, point):
    """Bulk transfers (curl from nginx, iperf3) to a receiver whose window
    is small for the path: tcp_rmem's largest buffer 8-64 kB, or window
    scaling off."""
    stack = draw_stack(rng)
    flow = draw_flow(rng)
    receiver = "client_sysctls" if flow == DOWN else "server_sysctls"
    options = {}
    if rng.random() < 0.6:
        buffer = round(log_uniform(rng, 8192, 65536))
        variant, window = "small_tcp_rmem", buffer / 2
        options[receiver] = {"net.ipv4.tcp_rmem": f"4096 {buffer} {buffer}"}
        rtt = log_uniform(rng, max(5.0, window / 4e6 * 1000), 400)
    else:
        variant, buffer, window = "no_window_scaling", None, 65535
        options[rng.choice(("client_sysctls", "server_sysctls"))] = {
            "net.ipv4.tcp_window_scaling": 0}
        rtt = log_uniform(rng, 20, 400)
    rate = window / (rtt / 1000)
    total = clamp(rate * rng.uniform(4, 8), 20 * window, MAX_HTTP_BYTES)
    app, servers, clients, flow, snaplen, total = bulk_app(rng, flow, total)
    link = None
    if rng.random() < 0.5:
        link = round(rate * 8 / 1e6 * rng.uniform(3, 8), 2)
    return app_scenario(rng, rtt, stack, servers, clients, check_receive_window, app,
                        {"variant": variant, "direction": flow_name(flow),
                         "tcp_rmem_max": buffer, "bytes": int(total), "link_mbit": link},
                        flow=flow, rate_mbit=link, snaplen=snaplen, **options)


def check_receive_window(s, taps):
    """Each bulk connection runs at its window per round trip and keeps its
    window full."""
    pkts = taps.beside(s.sender)
    flows = bulk_flows(pkts, s.sender)
    require(flows, "no bulk connection")
    ratios, filled = [], []
    for segments in flows:
        window = max(measure.advertised_windows(segments, s.receiver))
        rtt = measure.base_rtt_ms(segments, s.sender)
        ratios.append(measure.throughput_bytes_per_s(segments, s.sender) / (window / rtt * 1000))
        filled.append(measure.largest_in_flight(segments, s.sender) / window)
    require(all(0.5 <= r <= 1.2 for r in ratios), f"throughput / (window / RTT) = {ratios}")
    require(all(f >= 0.8 for f in filled), f"bytes in flight / window = {filled}")
    rate = sum(measure.throughput_bytes_per_s(segments, s.sender) for segments in flows)
    if s.rate_mbit:
        require(rate <= 0.5 * s.rate_mbit * 125_000, "the link, not the window, limits")
    window = max(measure.advertised_windows(flows[0], s.receiver))
    rtt = measure.base_rtt_ms(flows[0], s.sender)
    return ({"window_bytes": window, "rtt_ms": round(rtt, 2),
             "throughput_bytes_per_s": round(rate),
             "throughput_per_window_rate": [round(r, 2) for r in ratios]},
            f"{s.params['app']}: {rate / 1e6:.2f} MB/s; window {window / 1000:.1f} kB, "
            f"RTT {rtt:.1f} ms (throughput/(window/RTT) {ratios[0]:.2f})")


def zero_window(rng, point):
    """curl downloading from nginx with --limit-rate, which stops reading
    between its slices, into a small receive buffer: the window closes."""
    stack = draw_stack(rng)
    buffer = round(log_uniform(rng, 8192, 65536))
    limit = round(log_uniform(rng, 20_000, 300_000))
    rtt = log_uniform(rng, 0.2, 20)
    total = limit * rng.uniform(3, 8)
    return app_scenario(rng, rtt, stack, [nginx(big_bytes=int(total))],
                        [curl(["/big"], limit_rate=limit)], plants.check_zero_window,
                        "nginx+curl", {"tcp_rmem_max": buffer, "limit_rate": limit,
                                       "bytes": int(total), "direction": "download"},
                        flow=DOWN, client_sysctls={"net.ipv4.tcp_rmem": f"4096 {buffer} {buffer}"})


def bottleneck(rng, point):
    """iperf3 or a curl download through a 2-40 Mbit/s link whose queue has
    no bound, by senders that fill it (CUBIC, Reno)."""
    stack = backing_off(draw_stack(rng), rng)
    flow = draw_flow(rng)
    rate = log_uniform(rng, 2, 40)
    total = rate * 125_000 * rng.uniform(3, 8)
    app, servers, clients, flow, snaplen, total = bulk_app(rng, flow, total)
    rtt = log_uniform(rng, 0.2, min(100, total / 5 / (rate * 125_000) * 1000))
    return app_scenario(rng, rtt, stack, servers, clients, plants.check_bottleneck, app,
                        {"direction": flow_name(flow), "link_mbit": round(rate, 2),
                         "bytes": int(total)},
                        flow=flow, rate_mbit=round(rate, 2), snaplen=snaplen)


def random_loss(rng, point):
    """0.5-5% of the data's frames lost at random: curl downloads from
    nginx, iperf3 transfers, or Redis GETs of values of 20-60 segments."""
    stack = backing_off(draw_stack(rng), rng)
    snaplen, params = SNAPLEN, {}
    if rng.random() < 0.35:
        rtt, flow, app = log_uniform(rng, 1, 30), DOWN, "redis-benchmark"
        value = rng.randint(20, 60) * stack.mss - rng.randint(0, stack.mss // 2)
        clients_count = rng.choice((1, 1, 2))
        requests = clamp(round(1_200_000 / value), 8, 40)
        total = value * requests
        servers = [port(["redis"])]
        clients = [port(["redis-benchmark", *plants.arguments(
            clients=clients_count, requests=requests, value_bytes=value, tests="set,get")])]
        params.update(value_bytes=value, requests=requests, clients=clients_count)
    else:
        rtt, lowest = log_uniform(rng, 1, 100), log_uniform(rng, 0.005, 0.05)
        mathis = stack.mss / (rtt / 1000) * 1.22 / math.sqrt(lowest)
        total = clamp(10 * stack.mss / lowest, 500_000, min(MAX_HTTP_BYTES, 10 * mathis))
        app, servers, clients, flow, snaplen, total = bulk_app(rng, draw_flow(rng), total)
        params.update(direction=flow_name(flow), bytes=int(total))
    probability = log_uniform(rng, max(0.005, 10 * stack.mss / total), 0.05)
    params["loss"] = round(probability, 4)
    drops = [DropRule("random", direction="c2s" if flow == UP else "s2c",
                      probability=probability, port=PORT, seed=rng.randrange(1 << 30))]
    return app_scenario(rng, rtt, stack, servers, clients, plants.check_random_loss, app,
                        params, flow=flow, drops=drops, snaplen=snaplen)


def server_think(rng, point):
    """nginx in front of an application that thinks 20-2000 ms, or
    PostgreSQL running a pg_sleep in each transaction."""
    stack = draw_stack(rng)
    think = log_uniform(rng, 20, 2000)
    rtt = log_uniform(rng, 0.2, min(400, think / 3))
    requests = clamp(round(rng.uniform(4, 12) / ((think + rtt) / 1000)), 3, 30)
    if rng.random() < 0.6:
        app, tls, parallel = "nginx+curl", rng.choice((0, 1)), rng.choice((1, 1, 2, 3))
        servers = [nginx(tls=tls, think_ms=round(think, 1))]
        clients = [curl([f"/app/{n}" for n in range(requests * parallel)], tls=tls,
                        parallel=parallel)]
        params = {"tls": tls, "connections": parallel, "requests": requests * parallel}
    else:
        app, parallel = "pgbench", rng.choice((1, 1, 2))
        servers = [port(["postgres"])]
        clients = [port(["pgbench", *plants.arguments(clients=parallel, transactions=requests,
                                                      sleep_ms=round(think, 1))])]
        params = {"connections": parallel, "requests": requests * parallel}
    return app_scenario(rng, rtt, stack, servers, clients, check_server_think, app,
                        {"think_ms": round(think, 1), **params}, clients_timeout_s=90)


def check_server_think(s, taps):
    thinks = measure.server_think_ms(taps.at("server"), CLIENT_IP, SERVER_IP)
    think = s.params["think_ms"]
    slow = [t for t in thinks if t >= 0.9 * think]
    require(len(slow) >= 0.8 * s.params["requests"], f"{len(slow)} responses after {think:.0f} ms")
    return ({"server_think_ms": round(measure.median(slow), 1), "slow_answers": len(slow),
             "exchanges": len(thinks)},
            f"{s.params['app']}: {len(slow)} answers, each {measure.median(slow):.0f} ms "
            f"after its request")


def chatty(rng, point):
    """One connection of many small sequential exchanges over a WAN:
    pgbench's TPC-B transactions (seven statements each, a round trip
    apiece), Redis GETs one at a time, or memcached sets and gets."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 10, 200)
    turns = clamp(rng.randint(20, 200), math.ceil(plants.CHATTY_ROUND_TRIPS_MS / rtt) + 2,
                  int(15_000 / rtt))
    app = rng.choice(("pgbench", "redis-benchmark", "memcache"))
    if app == "pgbench":
        transactions = max(3, math.ceil(turns / 7))
        turns = transactions * 7
        servers = [port(["postgres"])]
        clients = [port(["pgbench", *plants.arguments(clients=1, transactions=transactions)])]
    elif app == "redis-benchmark":
        servers = [port(["redis"])]
        clients = [port(["redis-benchmark", *plants.arguments(
            clients=1, requests=turns, value_bytes=rng.randint(10, 1000), tests="get")])]
    else:
        servers = [port(["memcached"])]
        clients = [port(["memcache", *plants.arguments(requests=turns,
                                                       value_bytes=rng.randint(10, 1000))])]
    return app_scenario(rng, rtt, stack, servers, clients, check_chatty, app,
                        {"turns": turns}, clients_timeout_s=60)


def check_chatty(s, taps):
    """The busiest connection holds the turns, one round trip each."""
    pkts = taps.at("client")
    rtt = measure.base_rtt_ms(pkts, CLIENT_IP)
    streams = [[turn for turn in measure.exchanges(segments, CLIENT_IP) if turn[2] is not None]
               for segments in measure.by_stream(pkts).values()]
    found = max(streams, key=len, default=[])
    turns = s.params["turns"]
    require(len(found) >= turns, f"{len(found)} turns of {turns}")
    span = (found[-1][2] - found[0][1]) * 1000
    require(0.9 * len(found) * rtt <= span <= 1.5 * len(found) * rtt,
            f"{len(found)} turns of {rtt:.1f} ms in {span:.0f} ms")
    require((len(found) - 1) * rtt >= plants.CHATTY_ROUND_TRIPS_MS, "too few round trips")
    return ({"rtt_ms": round(rtt, 2), "turns": len(found), "span_ms": round(span)},
            f"{s.params['app']}: {len(found)} turns × RTT {rtt:.1f} ms = {span / 1000:.2f} s")


def syn_loss(rng, point):
    """Short connections to nginx (curl, a connection per request) or to
    Redis (redis-benchmark reconnecting for each request); the wire loses
    SYNs, or SYN-ACKs (the only choice at the server: a SYN lost before
    its tap leaves no trace there)."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 0.2, 50)
    variant = "syn_ack" if point == "server" else rng.choice(("syn", "first_syns", "syn_ack"))
    if variant == "first_syns":
        drops = [DropRule("syn", count=rng.randint(1, 3), port=PORT)]
    else:
        drops = [DropRule(variant, probability=round(rng.uniform(0.2, 0.5), 3), port=PORT,
                          seed=rng.randrange(1 << 30))]
    connections = rng.randint(6, 24)
    if rng.random() < 0.5:
        app, parallel = "nginx+curl", rng.choice((1, 2, 4))
        sizes = [rng.randint(200, 20000) for _ in range(connections)]
        servers = [nginx(objects=sizes)]
        clients = [curl([f"/obj/{n}" for n in range(connections)], parallel=parallel,
                        close_each=1)]
    else:
        app, parallel = "redis-benchmark", rng.choice((1, 2, 4))
        servers = [port(["redis"])]
        clients = [port(["redis-benchmark", *plants.arguments(
            clients=parallel, requests=connections, tests="get", reconnect=1)])]
    return app_scenario(rng, rtt, stack, servers, clients, plants.check_syn_loss, app,
                        {"variant": variant, "connections": connections, "parallel": parallel},
                        drops=drops, client_sysctls={"net.ipv4.tcp_syn_linear_timeouts": 0},
                        clients_timeout_s=90)


def http_errors(rng, point):
    """curl asking nginx for objects, some of which are missing (404) or
    break (500), on keep-alive connections."""
    stack = draw_stack(rng)
    rtt = log_uniform(rng, 0.2, 50)
    requests = rng.randint(5, 20)
    failing = rng.uniform(0.2, 0.6)
    sizes = [rng.randint(200, 30000) for _ in range(requests)]
    paths = [rng.choice(("/missing", "/broken")) if rng.random() < failing else f"/obj/{n}"
             for n in range(requests)]
    if not any(p in ("/missing", "/broken") for p in paths):
        paths[rng.randrange(requests)] = "/missing"
    parallel = rng.choice((1, 1, 2))
    return app_scenario(rng, rtt, stack, [nginx(objects=sizes)], [curl(paths, parallel=parallel)],
                        check_http_errors, "nginx+curl",
                        {"requests": requests, "failing": sum(p[1] in "mb" for p in paths),
                         "parallel": parallel})


def http_statuses(path):
    return [int(code) for code in measure.field_values(
        path, f"http.response.code && tcp.port == {PORT}", "http.response.code")]


def check_http_errors(s, taps):
    codes = http_statuses(taps.paths["client"])
    failed = [code for code in codes if code >= 400]
    require(len(codes) == s.params["requests"] and len(failed) == s.params["failing"],
            f"HTTP statuses {codes}")
    return ({"responses": len(codes), "failed": len(failed), "statuses": sorted(set(failed))},
            f"nginx: {len(failed)} of {len(codes)} responses failed "
            f"({', '.join(map(str, sorted(set(failed))))})")


# Healthy traffic.

def healthy(rng, point, variant=None):
    """Nothing wrong, as users bring it: an SSH session typed by a person,
    a keep-alive connection left idle, a page load over parallel
    connections, request/response on a LAN or over a WAN, a transfer
    filling a link with a shallow queue. The sweep names the variant."""
    variant = variant or rng.choice(tuple(HEALTHY_VARIANTS))
    scenario = HEALTHY_VARIANTS[variant](rng, draw_stack(rng))
    scenario.params["variant"] = variant
    return scenario


def ssh_typing(rng, stack):
    rtt = log_uniform(rng, 0.2, 100)
    commands = rng.randint(2, 4)
    low = rng.uniform(1, 3)
    return app_scenario(rng, rtt, stack, [port(["sshd"])],
                        [port(["ssh-typist", *plants.arguments(
                            commands=commands, think_low_s=round(low, 2),
                            think_high_s=round(low + rng.uniform(1, 4), 2),
                            seed=rng.randrange(1 << 30))])],
                        check_healthy, "openssh",
                        {"commands": commands, "answer_ms": LOGIN_ANSWER_MS},
                        clients_timeout_s=120)


def idle_keepalive(rng, stack):
    rtt = log_uniform(rng, 0.2, 100)
    tls, requests = rng.choice((0, 1)), rng.randint(1, 4)
    idle = log_uniform(rng, 5, 100)
    sizes = [rng.randint(200, 40000) for _ in range(requests)]
    return app_scenario(rng, rtt, stack, [nginx(tls=tls, objects=sizes)],
                        [port(["http-idle", *plants.arguments(
                            tls=tls, paths=",".join(f"/obj/{n}" for n in range(requests)),
                            think_ms=rng.randint(0, 500), idle_s=round(idle, 1))])],
                        check_healthy, "nginx+python",
                        {"tls": tls, "requests": requests, "idle_s": round(idle, 1)},
                        clients_timeout_s=idle + 60)


def page_load(rng, stack):
    rtt = log_uniform(rng, 0.2, 30)
    tls, parallel = rng.choice((0, 1)), rng.randint(4, 8)
    objects = rng.randint(parallel, min(40, parallel * int(max(1, 150 / rtt))))
    sizes = [round(log_uniform(rng, 300, 60000)) for _ in range(objects)]
    return app_scenario(rng, rtt, stack, [nginx(tls=tls, objects=sizes)],
                        [curl([f"/obj/{n}" for n in range(objects)], tls=tls, parallel=parallel)],
                        check_healthy, "nginx+curl",
                        {"tls": tls, "objects": objects, "parallel": parallel,
                         "bytes": sum(sizes)})


def lan_requests(rng, stack):
    """A LAN's quick exchanges: no more turns on a connection than healthy
    traffic's 150 ms of round trips."""
    rtt = log_uniform(rng, 0.2, 3)
    clients_count = rng.randint(1, 4)
    turns = clamp(rng.randint(20, 400), 5, int(plants.HEALTHY_ROUND_TRIPS_MS / rtt))
    app = rng.choice(("redis-benchmark", "memcache", "pgbench"))
    value = rng.randint(10, 1000)
    if app == "redis-benchmark":
        servers = [port(["redis"])]
        clients = [port(["redis-benchmark", *plants.arguments(
            clients=clients_count, requests=turns * clients_count // 2, value_bytes=value,
            tests="set,get")])]
    elif app == "memcache":
        servers = [port(["memcached"])]
        clients = [port(["memcache", *plants.arguments(requests=turns, value_bytes=value)])
                   for _ in range(clients_count)]
    else:
        servers = [port(["postgres"])]
        clients = [port(["pgbench", *plants.arguments(
            clients=clients_count, transactions=max(1, turns - 3), select_only=1)])]
    return app_scenario(rng, rtt, stack, servers, clients, check_healthy, app,
                        {"clients": clients_count, "turns": turns, "value_bytes": value})


def wan_requests(rng, stack):
    """A few requests over a WAN: a page's objects in a row, or one query."""
    rtt = log_uniform(rng, 20, 100)
    if rng.random() < 0.5:
        tls, requests = rng.choice((0, 1)), rng.randint(1, 3)
        sizes = [round(log_uniform(rng, 300, 30000)) for _ in range(requests)]
        servers = [nginx(tls=tls, objects=sizes)]
        clients = [curl([f"/obj/{n}" for n in range(requests)], tls=tls)]
        app, params = "nginx+curl", {"tls": tls, "requests": requests}
    else:
        app, params = "pgbench", {"transactions": 1}
        servers = [port(["postgres"])]
        clients = [port(["pgbench", *plants.arguments(clients=1, transactions=1,
                                                      select_only=1)])]
    return app_scenario(rng, rtt, stack, servers, clients, check_healthy, app, params)


def full_link(rng, stack):
    """iperf3 paced just under the link's rate (--fq-rate) through a
    shallow queue: the link is full and nothing waits in it."""
    rtt = log_uniform(rng, 0.2, 50)
    rate = log_uniform(rng, 5, 50)
    pace = rng.uniform(0.85, 0.95)
    flow = draw_flow(rng)
    total = min(MAX_IPERF_BYTES, rate * 125_000 * rng.uniform(2, 5))
    servers, clients = iperf3(flow, total, fq_rate=f"{rate * pace:.2f}M")
    queue = round(rng.uniform(10, 30), 1)
    return app_scenario(rng, rtt, stack, servers, clients, check_full_link, "iperf3",
                        {"direction": flow_name(flow), "link_mbit": round(rate, 2),
                         "paced_share": round(pace, 3), "queue_ms": queue, "bytes": int(total)},
                        flow=flow, rate_mbit=round(rate, 2), queue_ms=queue,
                        snaplen=BULK_SNAPLEN)


HEALTHY_VARIANTS = {"ssh_typing": ssh_typing, "idle_keepalive": idle_keepalive,
                    "page_load": page_load, "lan_requests": lan_requests,
                    "wan_requests": wan_requests, "full_link": full_link}


def nothing_lost(taps):
    """At both taps: no resend, no zero window."""
    for point in ("client", "server"):
        pkts = taps.at(point)
        resent = sum(measure.is_resent(p) for p in pkts)
        zero_windows = sum(p.zero_window for p in pkts)
        require(resent == zero_windows == 0,
                f"{point}: {resent} segments resent, {zero_windows} zero windows")


def check_healthy(s, taps):
    """No resend, no zero window, no wait for a delayed ACK, every request
    answered (HTTP: a response for each; the rest: data back after each
    turn but a goodbye) and quickly (an SSH login within 100 ms)."""
    nothing_lost(taps)
    rtt = measure.base_rtt_ms(taps.at("client"), CLIENT_IP)
    # OpenSSH's login writes without TCP_NODELAY: a message or two of it may
    # wait for a delayed ACK, as in every such session.
    waited = max(sum(delayed_ack_waits(taps.at(point), ip, rtt)) for point in ("client", "server")
                 for ip in (CLIENT_IP, SERVER_IP))
    span_ms = (taps.at("client")[-1].time - taps.at("client")[0].time) * 1000
    require(waited <= min(DELAYED_ACK_WAITS_MS, 0.1 * span_ms),
            f"{waited:.0f} ms of pauses ended by a delayed ACK in {span_ms:.0f} ms")
    turns, unanswered = answered_turns(taps.at("client"))
    require(turns and not unanswered, f"{len(unanswered)} of {len(turns)} turns unanswered")
    if s.params["app"].startswith("nginx") and not s.params.get("tls"):
        codes = http_statuses(taps.paths["client"])
        require(codes and all(code == 200 for code in codes), f"HTTP statuses {codes}")
    thinks = measure.server_think_ms(taps.at("server"), CLIENT_IP, SERVER_IP)
    slowest = max(thinks, default=0.0)
    require(slowest < s.params.get("answer_ms", ANSWER_MS), f"slowest answer {slowest:.1f} ms")
    return ({"retransmissions": 0, "zero_windows": 0, "turns": len(turns),
             "delayed_ack_waits_ms": round(waited),
             "slowest_answer_ms": round(slowest, 1), "rtt_ms": round(rtt, 2)},
            f"{s.params['app']}, nothing wrong: {len(turns)} turns answered, slowest "
            f"{slowest:.1f} ms, RTT {rtt:.1f} ms")


def delayed_ack_waits(pkts, sender, rtt):
    """Pauses of `sender` that the peer's ACK ended at least 35 ms later
    than a round trip would, the sender resuming at once."""
    return [ack - rtt for ack, resumed in measure.ack_waits_ms(pkts, sender,
                                                               pause_ms=plants.ACK_DELAY_MIN_MS)
            if ack is not None and ack - rtt >= plants.ACK_DELAY_MIN_MS and resumed <= 20]


def answered_turns(pkts):
    """The client's turns, and those with no data back after them; the last
    turn of a connection the client then closes is a goodbye (a TLS
    close_notify, PostgreSQL's Terminate, memcached's quit) that wants no
    answer."""
    turns, unanswered = [], []
    for segments in measure.by_stream(pkts).values():
        mine = measure.exchanges(segments, CLIENT_IP)
        closed = any(p.fin and p.src == CLIENT_IP for p in segments)
        if mine and closed and mine[-1][2] is None:
            mine = mine[:-1]
        turns += mine
        unanswered += [turn for turn in mine if turn[2] is None]
    return turns, unanswered


def check_full_link(s, taps):
    nothing_lost(taps)
    pkts = taps.beside(s.sender)
    flows = bulk_flows(pkts, s.sender)
    require(flows, "no bulk connection")
    rate = measure.throughput_bytes_per_s(flows[0], s.sender)
    link = s.rate_mbit * 125_000
    require(rate >= 0.8 * link, f"{rate:.0f} B/s on a {link:.0f} B/s link")
    rtt = measure.base_rtt_ms(pkts, s.sender)
    queued = measure.percentile([ms for _, ms in measure.ack_rtts_ms(pkts, s.receiver)], 0.9)
    return ({"throughput_bytes_per_s": round(rate), "link_bytes_per_s": round(link),
             "rtt_ms": round(rtt, 2), "rtt_90th_ms": round(queued, 2)},
            f"iperf3 at {rate / link:.0%} of a {s.rate_mbit:g} Mbit/s link, nothing lost; "
            f"RTT {rtt:.1f} ms, 90th percentile {queued:.1f} ms")


# A third or more of a sweep of these: healthy real traffic is what most captures hold.
HEALTHY_SHARE = 0.35

CAUSES = {cause.name: cause for cause in (
    plants.Cause("apps_receive_window", "receive_window_limited", receive_window),
    plants.Cause("apps_zero_window", "zero_window", zero_window),
    plants.Cause("apps_bottleneck", "bottleneck_link", bottleneck),
    plants.Cause("apps_random_loss", "packet_loss", random_loss),
    plants.Cause("apps_server_think", "server_think_time", server_think),
    plants.Cause("apps_chatty", "chattiness", chatty),
    plants.Cause("apps_syn_loss", "connection_setup_failure", syn_loss),
    plants.Cause("apps_http_errors", "application_failure", http_errors),
    plants.Cause("apps_healthy", None, healthy, healthy_share=HEALTHY_SHARE,
                 variants=tuple(HEALTHY_VARIANTS)),
)}
