#!/usr/bin/env python3
"""A randomised sweep over the causes of slow TCP. For each class in
plants.py it draws scenarios at random (RTT, link rate, sizes, connections,
write patterns, stack settings, capture point), records each with real
Linux stacks, checks that the capture shows the planted cause (drawing
again when it does not), and writes the capture beside a manifest holding
the seed, every drawn value, the figures measured from the capture and the
senders' own account from the kernel (TCP_INFO).

    sudo python3 lab/sweep.py --n 240 [--out DIR] [--seed S] [--classes a,b] [--missing]
    sudo python3 lab/sweep.py --n 120 --classes apps --prefix twapp --out DIR
    sudo python3 lab/sweep.py --replay DIR/NAME.json [--out DIR]
    python3 lab/sweep.py --sample FROM_DIR [--out tests/sweep]

`--classes apps` names the application classes of appplants.py (nginx,
PostgreSQL, Redis, memcached, iperf3, curl, OpenSSH), which a sweep with no
--classes leaves out. Its hosts are named `twsw-*` (or --prefix), so it can
run beside lab/run.py.
"""

import argparse
import contextlib
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

import appplants
import measure
import pcapfile
import plants
from hosts import CLIENT_IP, SERVER_IP, Names, hosts, in_ns, recording, running
from plants import FORCED_SYSCTLS, PORT, TCP_INFO, NotPlanted, Taps

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(HERE, "sweep-out")
SAMPLE_OUT = os.path.join(REPOSITORY, "tests", "sweep")
CAUSES = {**plants.CAUSES, **appplants.CAUSES}
GROUPS = {"apps": list(appplants.CAUSES)}  # --classes apps: every application class
PREFIX = "twsw"
POINTS = ("client", "server")
ATTEMPTS = 4
READY_TIMEOUT_S = 30
ALLOWED_CONGESTION = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
APP_TOOLS = ("nginx", "pgbench", "redis-server", "redis-benchmark", "memcached", "iperf3",
             "sshd", "ssh", "curl", "openssl")
MAX_CAPTURE_BYTES = 1_500_000
SAMPLE_MAX_BYTES = 25_000_000
SAMPLE_CAPTURE_MAX_BYTES = 1_000_000  # larger captures stay out of the sample
APPS_SAMPLE_OUT = os.path.join(REPOSITORY, "tests", "sweep-apps")
APPS_SAMPLE_MAX_BYTES = 3_000_000
APPS_SAMPLE_CAPTURE_MAX_BYTES = 1_000_000
ARTEFACTS = ("duplicated", "removed")
SERIES_POINTS = 20
SERIES_FIELDS = ("t", "bytes_acked", "snd_cwnd", "rtt", "delivery_rate", "busy_time",
                 "rwnd_limited", "sndbuf_limited", "total_retrans")
LIMITED_SHARE = 0.15
ROOMY_SHARE = 0.6


# What to record.

class Slot:
    """One scenario of the plan: its name and class, where its capture is
    taken, for some healthy ones the artefact added to the capture, and for
    a class of variants the one it draws (every draw of it, so that a
    variant that plants less often is not drawn less often)."""

    def __init__(self, name, cause, point, artefact=None, variant=None):
        self.name, self.cause, self.point, self.artefact = name, cause, point, artefact
        self.variant = variant

    def seed(self, sweep_seed, attempt):
        return random.Random(f"{sweep_seed}:{self.name}:{attempt}").randrange(1 << 32)


def plan(n, names, sweep_seed):
    """The scenarios of a sweep of `n`, classes interleaved so that a partial
    run covers them all: healthy ones take their class's share (15% of the
    sweep's classes, 35% of the applications'), the rest is split evenly."""
    planted = [name for name in names if CAUSES[name].finding is not None]
    healthy_names = [name for name in names if CAUSES[name].finding is None]
    healthy = round(n * sum(CAUSES[name].healthy_share for name in healthy_names))
    counts = dict.fromkeys(planted, (n - healthy) // max(1, len(planted)))
    left = n - sum(counts.values())
    for index, name in enumerate(healthy_names):
        counts[name] = left // len(healthy_names) + (index < left % len(healthy_names))
    slots = []
    for index in range(max(counts.values(), default=0)):
        for cause, count in counts.items():
            if index < count:
                slots.append(Slot(f"{cause}-{index:02d}", cause,
                                  capture_point(cause, index, sweep_seed), artefact(cause, index),
                                  variant(cause, index)))
    return slots


def capture_point(cause, index, sweep_seed):
    """Alternating, from a side drawn per class: every class gets both."""
    order = list(POINTS)
    random.Random(f"{sweep_seed}:{cause}:points").shuffle(order)
    return order[index % 2]


def variant(cause, index):
    """A class's variants in turn, each twice running, so that each is
    captured at both points."""
    variants = CAUSES[cause].variants
    return variants[index // 2 % len(variants)] if variants else None


def artefact(cause, index):
    """Every third healthy scenario has frames doubled or removed."""
    if cause != "healthy" or index % 3 != 2:
        return None
    return ARTEFACTS[index // 3 % 2]


# Recording one scenario.

def record(scenario, work, prefix):
    """Runs the scenario on hosts named under `prefix`, recording both ends
    of the wire; returns the two capture paths and the directory of the
    senders' TCP_INFO samples."""
    paths = {point: os.path.join(work, f"{point}.pcap") for point in POINTS}
    tcp_info = os.path.join(work, "tcp_info")
    os.makedirs(tcp_info)
    names = Names(prefix)
    program = ["python3", os.path.join(HERE, scenario.program)]
    with allowed_congestion(scenario), \
            hosts(delay_ms=scenario.delay_ms, rate_mbit=scenario.rate_mbit, drops=scenario.drops,
                  client_sysctls=scenario.client_sysctls, server_sysctls=scenario.server_sysctls,
                  client_initcwnd=scenario.client_initcwnd,
                  server_initcwnd=scenario.server_initcwnd, prefix=prefix,
                  queue_ms=scenario.queue_ms):
        with contextlib.ExitStack() as servers:
            for args in scenario.servers:
                servers.enter_context(running(names.server_ns, *program,
                                              *filled(args, tcp_info)))
            wait_until_listening(names.server_ns, scenario.servers)
            with recording(POINTS, paths.get, scenario.snaplen, prefix=prefix):
                run_clients(program, scenario.clients, tcp_info, names.client_ns,
                            scenario.clients_timeout_s)
    return paths, tcp_info


@contextlib.contextmanager
def allowed_congestion(scenario):
    """A namespace's default congestion control must be one the host
    allows (here Reno and BBR): the application classes, whose programs
    choose none of their own, get theirs allowed while they run, and the
    host's setting back afterwards."""
    wanted = scenario.client_sysctls.get("net.ipv4.tcp_congestion_control")
    with open(ALLOWED_CONGESTION) as setting:
        allowed = setting.read().split()
    if wanted is None or wanted in allowed:
        yield
        return
    with open(ALLOWED_CONGESTION, "w") as setting:
        setting.write(" ".join([*allowed, wanted]))
    try:
        yield
    finally:
        with open(ALLOWED_CONGESTION) as setting:
            now = setting.read().split()
        with open(ALLOWED_CONGESTION, "w") as setting:
            setting.write(" ".join(name for name in now if name != wanted))


def wait_until_listening(server_ns, servers):
    """Servers that take a while to start (PostgreSQL, sshd, nginx making
    its certificate) listen before the recording starts: a client's retries
    would be traffic of their own."""
    ports = {args[args.index("--port") + 1] for args in servers if "--port" in args}
    deadline = time.monotonic() + READY_TIMEOUT_S
    while ports:
        listening = subprocess.run(in_ns(server_ns, "ss", "-Hltn"), capture_output=True,
                                   text=True, check=True).stdout
        ports = {port for port in ports if f":{port} " not in listening}
        if ports and time.monotonic() > deadline:
            raise RuntimeError(f"nothing listens on port {', '.join(ports)} after "
                               f"{READY_TIMEOUT_S} s")
        time.sleep(0.1)


def filled(args, tcp_info):
    return [tcp_info if arg == TCP_INFO else arg for arg in args]


def run_clients(program, clients, tcp_info, client_ns, timeout_s):
    """Starts every client at once and waits for them all to succeed."""
    errors = tempfile.TemporaryFile("w+")
    processes = [subprocess.Popen(in_ns(client_ns, *program, *filled(args, tcp_info),
                                        "--server", SERVER_IP),
                                  stdout=subprocess.DEVNULL, stderr=errors)
                 for args in clients]
    deadline = time.monotonic() + timeout_s
    try:
        for process in processes:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise NotPlanted(f"clients still running after {timeout_s:.0f} s")
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    if any(process.returncode for process in processes):
        errors.seek(0)
        last_line = (errors.read().strip().splitlines() or ["no message"])[-1]
        raise NotPlanted(f"a client failed: {last_line}")


def kernel_account(directory, congestion):
    """The senders' TCP_INFO: per connection its final values, a coarse
    series, where its time went and how often it had room in both windows;
    for all of them, the same and the limit they point to. None when no
    sender logged."""
    logged = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as samples_file:
            samples = json.load(samples_file)["samples"]
        if samples:
            logged.append(samples)
    if not logged:
        return None
    connections = []
    for samples in logged:
        time_shares, room = shares(time_spent_us(samples[-1])), room_in_windows([samples])
        connections.append({"final": samples[-1], "series": coarse(samples),
                            "shares": time_shares, "room_in_windows": room,
                            "limit": limit(time_shares, room, congestion)})
    totals = {key: sum(time_spent_us(samples[-1])[key] for samples in logged)
              for key in ("elapsed", "rwnd", "sndbuf", "cwnd", "app")}
    room = room_in_windows(logged)
    return {"connections": connections, "shares": shares(totals), "room_in_windows": room,
            "limit": limit(shares(totals), room, congestion)}


def time_spent_us(final):
    """Where a sender's time went, from the kernel's chronographs: limited
    by the receive window, by the send buffer, busy otherwise (congestion
    window or link), or waiting for the application."""
    elapsed, busy = final["t"] * 1e6, final["busy_time"]
    rwnd, sndbuf = final["rwnd_limited"], final["sndbuf_limited"]
    return {"elapsed": elapsed, "rwnd": rwnd, "sndbuf": sndbuf,
            "cwnd": max(0, busy - rwnd - sndbuf), "app": max(0.0, elapsed - busy)}


def shares(times):
    elapsed = times["elapsed"] or 1
    return {key: round(times[key] / elapsed, 3) for key in ("rwnd", "sndbuf", "cwnd", "app")}


def room_in_windows(connections_samples):
    """The share of the samples taken with data in flight in which the bytes
    in flight were under half of both the congestion window and the peer's
    window: the sender could have sent more, and did not."""
    sending = [s for samples in connections_samples for s in samples if s["unacked"]]
    roomy = [s for s in sending
             if s["unacked"] < 0.5 * min(s["snd_cwnd"], s["snd_wnd"] / s["snd_mss"])]
    return round(len(roomy) / len(sending), 3) if sending else 0.0


def limit(time_shares, room, congestion):
    """rwnd or sndbuf when the kernel counted that limit for 15% of the
    time or more; else app when the sender was idle more than busy; else,
    for CUBIC and Reno, sndbuf when it mostly had room in both windows;
    cwnd otherwise.

    Linux counts a window or buffer limit only while it refuses a
    transmission: on flows pinned at the receive window that is 35-95% of
    the time, the rest shows as busy. It counts a send buffer limit for
    paced senders (BBR) only; CUBIC and Reno ones pinned by their buffer
    show as busy, their bytes in flight flat under both windows. BBR keeps
    its bytes in flight near half its window by design, so room in the
    windows says nothing of its buffer."""
    limited = {key: time_shares[key] for key in ("rwnd", "sndbuf")
               if time_shares[key] >= LIMITED_SHARE}
    if limited:
        return max(limited, key=limited.get)
    if time_shares["app"] > time_shares["cwnd"]:
        return "app"
    return "sndbuf" if congestion != "bbr" and room >= ROOMY_SHARE else "cwnd"


def coarse(samples):
    step = max(1, len(samples) // SERIES_POINTS)
    chosen = samples[::step][:SERIES_POINTS - 1] + [samples[-1]]
    return [{field: sample[field] for field in SERIES_FIELDS} for sample in chosen]


def add_artefact(path, kind, rng):
    if kind == "duplicated":
        frames = pcapfile.duplicate_every_frame(path, rng)
        return f"each of the {frames} frames recorded twice"
    removed = pcapfile.remove_data_frames(path, rng, fraction=rng.uniform(0.005, 0.03))
    return f"{removed} data frames removed from the capture after it was recorded"


def check_capture(path):
    """Small enough to ship, and wire-sized segments only (a larger one
    would be an offload artefact, not what a link carries)."""
    size = os.path.getsize(path)
    if size > MAX_CAPTURE_BYTES:
        raise NotPlanted(f"capture of {size} bytes, over {MAX_CAPTURE_BYTES}")
    largest = measure.largest_segment(measure.packets(path))
    if largest > 1460:
        raise RuntimeError(f"{path} holds a {largest}-byte segment: offloads are on")


def make(slot, seed, out, prefix, sweep_seed=None, attempt=1):
    """Draws, records and checks one scenario; writes its capture and
    manifest into `out`. Raises NotPlanted when the check fails."""
    cause = CAUSES[slot.cause]
    variant = {"variant": slot.variant} if slot.variant else {}
    scenario = cause.draw(random.Random(seed), slot.point, **variant)
    work = tempfile.mkdtemp(prefix=f"{prefix}-{slot.name}-")
    try:
        paths, tcp_info_dir = record(scenario, work, prefix)
        tcp_info = kernel_account(tcp_info_dir, scenario.congestion)
        if scenario.needs_tcp_info and tcp_info is None:
            raise NotPlanted("no sender logged TCP_INFO")
        expect, figure = scenario.check(scenario, Taps(paths, scenario.watched_port, tcp_info))
        check_capture(paths[slot.point])
        capture = os.path.join(out, f"{slot.name}.pcap")
        shutil.copyfile(paths[slot.point], capture + ".tmp")
        artefact_note = None
        if slot.artefact:
            artefact_note = add_artefact(capture + ".tmp", slot.artefact, random.Random(seed))
        manifest = {
            "scenario": slot.name, "cause": slot.cause,
            "finding": scenario.finding or cause.finding, "finding_loud": scenario.loud,
            "finding_figure": cause.finding_figure, "seed": seed, "sweep_seed": sweep_seed,
            "attempt": attempt, "capture": os.path.basename(capture),
            "capture_point": slot.point, "artefact": slot.artefact,
            "artefact_note": artefact_note, "client": CLIENT_IP, "server": f"{SERVER_IP}:{PORT}",
            "params": scenario.params, "wire": wire(scenario), "stack": stack(scenario),
            "apps": {"servers": [" ".join([scenario.program, *args]) for args in scenario.servers],
                     "clients": [" ".join([scenario.program, *args])
                                 for args in scenario.clients]},
            "snaplen": scenario.snaplen,
            "expect": expect, "figure": figure, "tcp_info": tcp_info,
        }
        write_manifest(os.path.join(out, f"{slot.name}.json"), manifest)
        os.replace(capture + ".tmp", capture)
        return manifest
    finally:
        shutil.rmtree(work, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(out, f"{slot.name}.pcap.tmp"))


def wire(scenario):
    return {"rtt_ms": round(scenario.rtt_ms, 3), "delay_ms": round(scenario.delay_ms, 3),
            "rate_mbit": scenario.rate_mbit, "queue_ms": scenario.queue_ms,
            "drops": [rule.describe() for rule in scenario.drops]}


def stack(scenario):
    return {"congestion": scenario.congestion,
            "client_sysctls": scenario.client_sysctls, "server_sysctls": scenario.server_sysctls,
            "client_initcwnd": scenario.client_initcwnd,
            "server_initcwnd": scenario.server_initcwnd}


def write_manifest(path, manifest):
    with open(path + ".tmp", "w") as out:
        json.dump(manifest, out, indent=2, ensure_ascii=False)
        out.write("\n")
    os.replace(path + ".tmp", path)


# The three commands.

def sweep(args):
    names = [name for group in args.classes.split(",") for name in GROUPS.get(group, [group])] \
        if args.classes else list(plants.CAUSES)
    unknown = [name for name in names if name not in CAUSES]
    if unknown:
        sys.exit(f"sweep: unknown class {', '.join(unknown)}; known: {', '.join(CAUSES)}")
    os.makedirs(args.out, exist_ok=True)
    FORCED_SYSCTLS.client.update(settings(args.client_sysctl))
    FORCED_SYSCTLS.server.update(settings(args.server_sysctl))
    slots = plan(args.n, names, args.seed)
    if args.missing:
        slots = [s for s in slots if not os.path.exists(os.path.join(args.out, f"{s.name}.json"))]
    elif not args.classes:
        clear(args.out)
    log = SweepLog(args.out, command_line(), args.seed, args.n,
                   partial=bool(args.classes or args.missing))
    for number, slot in enumerate(slots, 1):
        started = time.monotonic()
        failures = []
        for attempt in range(1, ATTEMPTS + 1):
            seed = slot.seed(args.seed, attempt)
            try:
                manifest = make(slot, seed, args.out, args.prefix, args.seed, attempt)
                print(f"[{number}/{len(slots)}] {slot.name} ({slot.point}, attempt {attempt}, "
                      f"{time.monotonic() - started:.1f} s): {manifest['figure']}", flush=True)
                break
            except NotPlanted as reason:
                failures.append(f"seed {seed}: {reason}")
                print(f"[{number}/{len(slots)}] {slot.name}: attempt {attempt} did not plant "
                      f"({reason}); drawing again", flush=True)
            except Exception:
                failures.append(f"seed {seed}: {traceback.format_exc(limit=3)}")
                traceback.print_exc()
        log.scenario(slot.name, time.monotonic() - started, failures,
                     planted=len(failures) < ATTEMPTS)
    missing = log.finish()
    if missing:
        sys.exit(f"sweep: not planted after {ATTEMPTS} draws: {', '.join(missing)}")


def settings(pairs):
    try:
        return {key: int(value) for key, value in (pair.split("=", 1) for pair in pairs)}
    except ValueError:
        sys.exit(f"sweep: a sysctl is KEY=NUMBER, not {' '.join(pairs)}")


def command_line():
    """This command as run from the repository, paths inside it relative."""
    words = [os.path.relpath(word, REPOSITORY) if os.path.isabs(word)
             and word.startswith(REPOSITORY + os.sep) else word for word in sys.argv[1:]]
    return " ".join(["python3", "lab/sweep.py", *words])


def clear(out):
    for path in glob.glob(os.path.join(out, "*.pcap")) + glob.glob(os.path.join(out, "*.json")):
        os.remove(path)


class SweepLog:
    """sweep.json in the output directory: how the sweep was made (every
    command since the last full run) and what each scenario took (time,
    draws that did not plant)."""

    def __init__(self, out, command, seed, n, partial):
        self.path = os.path.join(out, "sweep.json")
        previous = {}
        if partial and os.path.exists(self.path):
            with open(self.path) as log:
                previous = json.load(log)
        self.data = {"commands": previous.get("commands", []) + [command], "seed": seed, "n": n,
                     "started": previous.get("started", time.strftime("%Y-%m-%d %H:%M:%S")),
                     "scenarios": previous.get("scenarios", {})}

    def scenario(self, name, seconds, failures, planted):
        self.data["scenarios"][name] = {"seconds": round(seconds, 1), "failed_draws": failures,
                                        "planted": planted}
        self.save()

    def finish(self):
        self.data["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
        self.data["seconds"] = round(sum(s["seconds"] for s in self.data["scenarios"].values()))
        self.save()
        return [name for name, s in self.data["scenarios"].items() if not s["planted"]]

    def save(self):
        write_manifest(self.path, self.data)


def replay(args):
    with open(args.replay) as manifest_file:
        manifest = json.load(manifest_file)
    out = args.out if args.out_given else os.path.dirname(os.path.abspath(args.replay))
    os.makedirs(out, exist_ok=True)
    slot = Slot(manifest["scenario"], manifest["cause"], manifest["capture_point"],
                manifest.get("artefact"),
                manifest["params"]["variant"] if CAUSES[manifest["cause"]].variants else None)
    try:
        again = make(slot, manifest["seed"], out, args.prefix, manifest.get("sweep_seed"),
                     manifest.get("attempt", 1))
    except NotPlanted as reason:
        sys.exit(f"sweep: {slot.name} did not plant this time: {reason}")
    print(f"{slot.name}: {again['figure']} (was: {manifest['figure']})")


def sample(args):
    """Copies a sample of a full sweep into --out (tests/sweep by default),
    captures under a megabyte only: per planted class its first scenario
    captured at the client, its first at the server and the next one; among
    healthy ones the first two with each artefact and the first six without.
    A sweep of the application classes gets a sample of its own."""
    manifests = sweep_manifests(args.sample, SAMPLE_CAPTURE_MAX_BYTES)
    if any(m["cause"] in appplants.CAUSES for m in manifests):
        sample_apps(args)
        return
    chosen = []
    for cause in plants.CAUSES:
        mine = [m for m in manifests if m["cause"] == cause]
        if cause == "healthy":
            chosen += first(mine, lambda m: m["artefact"] == "duplicated", 2)
            chosen += first(mine, lambda m: m["artefact"] == "removed", 2)
            chosen += first(mine, lambda m: m["artefact"] is None, 6)
            continue
        picked = first(mine, lambda m: m["capture_point"] == "client", 1)
        picked += first(mine, lambda m: m["capture_point"] == "server", 1)
        picked += first([m for m in mine if m not in picked], lambda m: True, 1)
        if len(picked) < 3:
            sys.exit(f"sweep: {args.sample} has too few {cause} scenarios for a sample")
        chosen += picked
    copy_sample(chosen, args.sample, args.out, SAMPLE_MAX_BYTES)


def sample_apps(args):
    """The sample of the application classes (--out tests/sweep-apps by
    default), its smallest captures, so that it stays under 3 MB: per
    planted class the smallest captured at the client and at the server;
    per healthy variant the smallest."""
    manifests = sweep_manifests(args.sample, APPS_SAMPLE_CAPTURE_MAX_BYTES)
    manifests.sort(key=lambda m: os.path.getsize(os.path.join(args.sample, m["capture"])))
    chosen = []
    for cause in appplants.CAUSES:
        mine = [m for m in manifests if m["cause"] == cause]
        if cause == "apps_healthy":
            for variant in appplants.HEALTHY_VARIANTS:
                chosen += first(mine, lambda m: m["params"]["variant"] == variant, 1)
            continue
        for point in POINTS:
            chosen += first(mine, lambda m: m["capture_point"] == point, 1)
    out = args.out if args.out_given else APPS_SAMPLE_OUT
    copy_sample(chosen, args.sample, out, APPS_SAMPLE_MAX_BYTES)


def sweep_manifests(directory, largest_capture):
    """The manifests of a sweep whose captures are under `largest_capture` bytes."""
    manifests = []
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as manifest_file:
            manifest = json.load(manifest_file)
        if "cause" in manifest and os.path.getsize(
                os.path.join(directory, manifest["capture"])) < largest_capture:
            manifests.append(manifest)
    return manifests


def copy_sample(chosen, directory, out, largest):
    size = sum(os.path.getsize(os.path.join(directory, m["capture"])) for m in chosen)
    if size > largest:
        sys.exit(f"sweep: the sample would be {size} bytes, over {largest}")
    os.makedirs(out, exist_ok=True)
    clear(out)
    for manifest in chosen:
        for name in (manifest["capture"], manifest["scenario"] + ".json"):
            shutil.copyfile(os.path.join(directory, name), os.path.join(out, name))
    print(f"{len(chosen)} scenarios, {size / 1e6:.1f} MB, copied to {out}")


def first(manifests, wanted, count):
    return [m for m in manifests if wanted(m)][:count]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=240, help="scenarios in all (default 240)")
    parser.add_argument("--out", help=f"where captures and manifests go (default {DEFAULT_OUT}; "
                                      f"with --sample, {SAMPLE_OUT})")
    parser.add_argument("--seed", type=int, default=1, help="the sweep's seed (default 1)")
    parser.add_argument("--classes",
                        help=f"some classes only, comma-separated: {', '.join(CAUSES)}; "
                             f"apps: every application class")
    parser.add_argument("--missing", action="store_true",
                        help="record only the scenarios with no manifest yet (to resume a sweep)")
    parser.add_argument("--replay", metavar="MANIFEST", help="record that scenario again")
    parser.add_argument("--prefix", default=PREFIX,
                        help=f"the hosts' name prefix (default {PREFIX}; 12 characters at most)")
    parser.add_argument("--sample", metavar="FROM_DIR",
                        help="copy the committed sample out of a full sweep")
    for side in ("client", "server"):
        parser.add_argument(f"--{side}-sysctl", action="append", default=[],
                            metavar="KEY=VALUE",
                            help=f"set on every {side} drawn, over what the draw chose "
                                 f"(e.g. net.ipv4.tcp_timestamps=0, as Windows runs)")
    args = parser.parse_args()
    args.out_given = args.out is not None
    if args.out is None:
        args.out = SAMPLE_OUT if args.sample else DEFAULT_OUT
    return args


def check_environment(classes):
    if os.geteuid() != 0:
        sys.exit("sweep: run as root (network namespaces and TAP devices)")
    missing = [tool for tool in ("ip", "tcpdump", "tshark") if shutil.which(tool) is None]
    if missing:
        sys.exit(f"sweep: {', '.join(missing)} missing (apt-get install iproute2 tcpdump tshark)")
    if classes and "apps" in classes:
        path = os.environ.get("PATH", "") + ":/usr/sbin"
        missing = [tool for tool in APP_TOOLS if shutil.which(tool, path=path) is None]
        missing += [] if glob.glob("/usr/lib/postgresql/*/bin/postgres") else ["postgresql"]
        if missing:
            sys.exit(f"sweep: {', '.join(missing)} missing (see lab/README.md)")


def main():
    args = parse_arguments()
    if args.sample:
        sample(args)
        return
    check_environment(args.classes)
    # A plain `kill` cleans up as Ctrl-C does: the hosts come down on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.replay:
        replay(args)
    else:
        sweep(args)


if __name__ == "__main__":
    main()
