"""Lab hosts: a client and a server namespace joined by the relay in wire.py."""

import contextlib
import os
import subprocess
import tempfile
import threading
import time

from wire import Wire

CLIENT_NS, SERVER_NS, BACK_NS = "twlab-client", "twlab-server", "twlab-back"
CLIENT_TAP, SERVER_TAP = "twlab-tc", "twlab-ts"
CLIENT_IP, SERVER_IP = "10.77.0.1", "10.77.0.2"
# The back tier hangs off the server on a plain veth pair: its link is not under test.
SERVER_BACK_IP, BACK_IP = "10.77.1.1", "10.77.1.2"


def sh(*command, check=True):
    return subprocess.run(command, check=check, capture_output=True, text=True)


def in_ns(ns, *command):
    return ["ip", "netns", "exec", ns, *command]


def remove_hosts():
    for ns in (CLIENT_NS, SERVER_NS, BACK_NS):
        sh("ip", "netns", "del", ns, check=False)


@contextlib.contextmanager
def hosts(delay_ms=0.0, rate_mbit=None, drops=(), client_sysctls=None, server_sysctls=None,
          back_tier=False):
    """Two hosts with a wire between them, and optionally a back-tier host
    behind the server; yields the running wire. Everything is removed on
    the way out, whatever the reason."""
    remove_hosts()
    wire, relay, stop = None, None, threading.Event()
    try:
        for ns in (CLIENT_NS, SERVER_NS):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        wire = Wire(CLIENT_TAP, SERVER_TAP, delay_ms=delay_ms, rate_mbit=rate_mbit, drops=drops)
        wire.move_into(CLIENT_NS, SERVER_NS)
        add_address(CLIENT_NS, CLIENT_TAP, CLIENT_IP, client_sysctls)
        add_address(SERVER_NS, SERVER_TAP, SERVER_IP, server_sysctls)
        if back_tier:
            add_back_tier()
        relay = threading.Thread(target=wire.run, args=(stop,), daemon=True)
        relay.start()
        yield wire
    finally:
        stop.set()
        if relay:
            relay.join()
        if wire:
            wire.close()
        remove_hosts()


def add_address(ns, tap, ip, sysctls):
    sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", tap)
    sh("ip", "-n", ns, "link", "set", tap, "up")
    for key, value in (sysctls or {}).items():
        if os.path.exists("/proc/sys/" + key.replace(".", "/")):
            sh(*in_ns(ns, "sysctl", "-qw", f"{key}={value}"))
        else:
            print(f"  (this kernel has no {key}; left as it is)")


def add_back_tier():
    sh("ip", "netns", "add", BACK_NS)
    sh("ip", "-n", BACK_NS, "link", "set", "lo", "up")
    sh("ip", "link", "add", "twlab-vs", "netns", SERVER_NS, "type", "veth",
       "peer", "name", "twlab-vb", "netns", BACK_NS)
    for ns, device, ip in ((SERVER_NS, "twlab-vs", SERVER_BACK_IP), (BACK_NS, "twlab-vb", BACK_IP)):
        sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", device)
        sh("ip", "-n", ns, "link", "set", device, "up")
        sh(*in_ns(ns, "ethtool", "-K", device, "tso", "off", "gso", "off", "gro", "off"), check=False)


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
def recording(points, path_for, snaplen=128):
    """tcpdump on the chosen capture points: "client" and "server" are the
    two ends of the wire, "server-any" every interface of the server (its
    front and back tier sides). Yields nothing."""
    taps = {"client": (CLIENT_NS, CLIENT_TAP), "server": (SERVER_NS, SERVER_TAP),
            "server-any": (SERVER_NS, "any")}
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
