"""Lab hosts: a client and a server namespace joined by the relay in wire.py."""

import contextlib
import os
import subprocess
import tempfile
import threading
import time

from wire import Wire

CLIENT_IP, SERVER_IP = "10.77.0.1", "10.77.0.2"
# The back tier hangs off the server on a plain veth pair: its link is not under test.
SERVER_BACK_IP, BACK_IP = "10.77.1.1", "10.77.1.2"


class Names:
    """The namespaces and interfaces of one lab, all under one prefix, so
    that two labs with different prefixes can run side by side."""

    def __init__(self, prefix="twlab"):
        if len(prefix) > 12:
            raise ValueError(f"prefix {prefix!r}: interface names must stay within 15 characters")
        self.prefix = prefix
        self.client_ns, self.server_ns = f"{prefix}-client", f"{prefix}-server"
        self.back_ns = f"{prefix}-back"
        self.client_tap, self.server_tap = f"{prefix}-tc", f"{prefix}-ts"
        self.server_veth, self.back_veth = f"{prefix}-vs", f"{prefix}-vb"


def sh(*command, check=True):
    return subprocess.run(command, check=check, capture_output=True, text=True)


def in_ns(ns, *command):
    return ["ip", "netns", "exec", ns, *command]


def remove_hosts(names):
    for ns in (names.client_ns, names.server_ns, names.back_ns):
        sh("ip", "netns", "del", ns, check=False)


@contextlib.contextmanager
def hosts(delay_ms=0.0, rate_mbit=None, drops=(), client_sysctls=None, server_sysctls=None,
          client_initcwnd=None, server_initcwnd=None, back_tier=False, back_snat_ports=None,
          client_extra_ips=(), prefix="twlab", queue_ms=None):
    """Two hosts with a wire between them, and optionally a back-tier host
    behind the server, whose connections to it can be source-NATed through a
    range of ports ("40000-40003"); the client may have more addresses than
    its own, as several clients would; `queue_ms` bounds the wire's queue.
    Yields the running wire. Everything is
    removed on the way out, whatever the reason."""
    names = Names(prefix)
    remove_hosts(names)
    wire, relay, stop = None, None, threading.Event()
    try:
        for ns in (names.client_ns, names.server_ns):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        wire = Wire(names.client_tap, names.server_tap, delay_ms=delay_ms, rate_mbit=rate_mbit,
                    drops=drops, queue_ms=queue_ms)
        wire.move_into(names.client_ns, names.server_ns)
        add_address(names.client_ns, names.client_tap, CLIENT_IP, client_sysctls, client_initcwnd)
        add_address(names.server_ns, names.server_tap, SERVER_IP, server_sysctls, server_initcwnd)
        for ip in client_extra_ips:
            sh("ip", "-n", names.client_ns, "addr", "add", f"{ip}/24", "dev", names.client_tap)
        if back_tier:
            add_back_tier(names)
        if back_snat_ports:
            masquerade(names, back_snat_ports)
        relay = threading.Thread(target=wire.run, args=(stop,), daemon=True)
        relay.start()
        yield wire
    finally:
        stop.set()
        if relay:
            relay.join()
        if wire:
            wire.close()
        remove_hosts(names)


def add_address(ns, tap, ip, sysctls, initcwnd=None):
    sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", tap)
    sh("ip", "-n", ns, "link", "set", tap, "up")
    if initcwnd:
        subnet = ip.rsplit(".", 1)[0] + ".0/24"
        sh("ip", "-n", ns, "route", "replace", subnet, "dev", tap, "src", ip,
           "initcwnd", str(initcwnd))
    for key, value in (sysctls or {}).items():
        if os.path.exists("/proc/sys/" + key.replace(".", "/")):
            sh(*in_ns(ns, "sysctl", "-qw", f"{key}={value}"))
        else:
            print(f"  (this kernel has no {key}; left as it is)")


def add_back_tier(names):
    sh("ip", "netns", "add", names.back_ns)
    sh("ip", "-n", names.back_ns, "link", "set", "lo", "up")
    sh("ip", "link", "add", names.server_veth, "netns", names.server_ns, "type", "veth",
       "peer", "name", names.back_veth, "netns", names.back_ns)
    for ns, device, ip in ((names.server_ns, names.server_veth, SERVER_BACK_IP),
                           (names.back_ns, names.back_veth, BACK_IP)):
        sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", device)
        sh("ip", "-n", ns, "link", "set", device, "up")
        sh(*in_ns(ns, "ethtool", "-K", device, "tso", "off", "gso", "off", "gro", "off"), check=False)


def masquerade(names, ports):
    """The server's connections to the back tier leave from its own address
    and a port of `ports` only, as through a NAT gateway."""
    rules = (f"table ip twlab_nat {{\n chain post {{\n"
             f"  type nat hook postrouting priority 100;\n"
             f"  oifname {names.server_veth} meta l4proto tcp masquerade to :{ports}\n }}\n}}\n")
    subprocess.run(in_ns(names.server_ns, "nft", "-f", "-"), input=rules, text=True, check=True)


@contextlib.contextmanager
def running(ns, *command):
    """A background process in a namespace, stopped on exit."""
    errors = tempfile.TemporaryFile("w+")
    process = subprocess.Popen(in_ns(ns, *command), stdout=subprocess.DEVNULL, stderr=errors)
    time.sleep(0.3)
    if process.poll() is not None:
        errors.seek(0)
        raise RuntimeError(f"{' '.join(command)} exited at once: {errors.read()}")
    try:
        yield process
    finally:
        process.terminate()
        process.wait()
        errors.close()


@contextlib.contextmanager
def recording(points, path_for, snaplen=128, prefix="twlab"):
    """tcpdump on the chosen capture points: "client" and "server" are the
    two ends of the wire, "server-any" every interface of the server (its
    front and back tier sides); "front" and "back" the server's two links
    when it is a proxy: its TAP and its side of the back tier's link. Yields
    nothing."""
    names = Names(prefix)
    taps = {"client": (names.client_ns, names.client_tap),
            "server": (names.server_ns, names.server_tap),
            "server-any": (names.server_ns, "any"),
            "front": (names.server_ns, names.server_tap),
            "back": (names.server_ns, names.server_veth)}
    processes = []
    for point in points:
        ns, tap = taps[point]
        processes.append(subprocess.Popen(
            in_ns(ns, "tcpdump", "-q", "--immediate-mode", "-U", "-i", tap, "-s", str(snaplen),
                  "-w", path_for(point), "tcp"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        time.sleep(0.5)
        if any(process.poll() is not None for process in processes):
            raise RuntimeError(f"tcpdump did not start on {points}")
        yield
    finally:
        time.sleep(0.3)
        for process in processes:
            process.send_signal(2)
            process.wait()
