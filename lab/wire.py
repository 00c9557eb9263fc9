"""The wire between lab hosts: a userspace relay of Ethernet frames between
two TAP devices, adding one-way delay, a rate limit and chosen drops.

The kernel here has no netem, so this relay is how the lab gets a WAN. Each
TAP is created by this process and then moved into its host's namespace; the
file descriptors stay with the relay, which copies every frame across after
the configured delay. A TAP opened without IFF_VNET_HDR offers no TSO, so
the kernel cuts TCP segments to the MSS (software GSO) before a frame
reaches the TAP and its tcpdump, and one without IFF_NAPI does no GRO on
the way in: every frame is wire-sized, as on a real link.

The rate limit serialises frames per direction and queues them without
bound: frames are lost only by the drop rules, never for want of buffer.
"""

import fcntl
import heapq
import os
import random
import select
import struct
import subprocess
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000
ETHERTYPE_IPV4 = 0x0800
PROTOCOL_TCP = 6
SYN, ACK = 0x02, 0x10


def open_tap(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


class Frame:
    """The TCP facts of one Ethernet frame that drop rules look at."""

    def __init__(self, data):
        self.tcp_flags = None
        self.payload_len = 0
        self.dst_port = None
        if len(data) < 34 or struct.unpack("!H", data[12:14])[0] != ETHERTYPE_IPV4:
            return
        ihl = (data[14] & 0x0F) * 4
        total = struct.unpack("!H", data[16:18])[0]
        if data[23] != PROTOCOL_TCP or len(data) < 14 + ihl + 14:
            return
        tcp = 14 + ihl
        self.tcp_flags = data[tcp + 13]
        self.dst_port = struct.unpack("!H", data[tcp + 2:tcp + 4])[0]
        self.payload_len = total - ihl - (data[tcp + 12] >> 4) * 4

    def is_syn(self):
        return self.tcp_flags is not None and self.tcp_flags & (SYN | ACK) == SYN

    def is_syn_ack(self):
        return self.tcp_flags is not None and self.tcp_flags & (SYN | ACK) == SYN | ACK


class DropRule:
    """Which frames the wire loses. Directions are "c2s" and "s2c".

    kind: "random" (probability), "window" (burst_s of every period_s),
    "syn" / "syn_ack" (every SYN or SYN-ACK, up to count), "nth_data"
    (the nth data segment, counting from 1). `port` limits a rule to
    frames sent to that TCP port.
    """

    def __init__(self, kind, direction=None, probability=0.0, period_s=0.0,
                 burst_s=0.0, count=None, nth=0, port=None, seed=1):
        self.kind = kind
        self.direction = direction
        self.probability = probability
        self.period_s = period_s
        self.burst_s = burst_s
        self.count = count
        self.nth = nth
        self.port = port
        self.random = random.Random(seed)
        self.seen_data = 0
        self.dropped = 0

    def drops(self, frame, direction, elapsed_s):
        if self.direction and direction != self.direction:
            return False
        if self.port is not None and frame.dst_port != self.port:
            return False
        if self.count is not None and self.dropped >= self.count:
            return False
        hit = False
        if self.kind == "random":
            hit = frame.tcp_flags is not None and self.random.random() < self.probability
        elif self.kind == "window":
            hit = frame.payload_len > 0 and elapsed_s % self.period_s < self.burst_s
        elif self.kind == "syn":
            hit = frame.is_syn()
        elif self.kind == "syn_ack":
            hit = frame.is_syn_ack()
        elif self.kind == "nth_data" and frame.payload_len > 0:
            self.seen_data += 1
            hit = self.seen_data == self.nth
        self.dropped += hit
        return hit

    def describe(self):
        """The rule in words, for the manifest."""
        what = {
            "random": f"{self.probability:.0%} of packets at random",
            "window": f"data {self.burst_s:g} s of every {self.period_s:g} s",
            "syn": "SYNs",
            "syn_ack": "SYN-ACKs",
            "nth_data": f"data segment number {self.nth}",
        }[self.kind]
        if self.count is not None:
            what = f"the first {self.count} {what}"
        if self.port is not None:
            what += f" to port {self.port}"
        if self.direction:
            what += {"c2s": ", client to server", "s2c": ", server to client"}[self.direction]
        return what


class Wire:
    """Relays frames between the client's and the server's TAP."""

    def __init__(self, client_tap, server_tap, delay_ms=0.0, rate_mbit=None, drops=()):
        self.fds = {"c2s": open_tap(client_tap), "s2c": open_tap(server_tap)}
        self.names = {"c2s": client_tap, "s2c": server_tap}
        self.delay_s = delay_ms / 1000.0
        self.bytes_per_s = rate_mbit * 125_000 if rate_mbit else None
        self.drops = list(drops)
        self.link_free_at = {"c2s": 0.0, "s2c": 0.0}
        self.queue = []
        self.sequence = 0

    def move_into(self, client_ns, server_ns):
        for tap, ns in ((self.names["c2s"], client_ns), (self.names["s2c"], server_ns)):
            subprocess.run(["ip", "link", "set", tap, "netns", ns], check=True)

    def close(self):
        for fd in self.fds.values():
            os.close(fd)

    def run(self, stop):
        """Relays until the `stop` event is set."""
        started = time.monotonic()
        readers = {fd: direction for direction, fd in self.fds.items()}
        while not stop.is_set():
            timeout = 0.05
            if self.queue:
                timeout = max(0.0, min(timeout, self.queue[0][0] - time.monotonic()))
            ready, _, _ = select.select(list(readers), [], [], timeout)
            now = time.monotonic()
            for fd in ready:
                self.receive(fd, readers[fd], now, now - started)
            self.send_due(time.monotonic())

    def receive(self, fd, direction, now, elapsed_s):
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return
            frame = Frame(data)
            if any(rule.drops(frame, direction, elapsed_s) for rule in self.drops):
                continue
            departs = now
            if self.bytes_per_s:
                departs = max(now, self.link_free_at[direction]) + len(data) / self.bytes_per_s
                self.link_free_at[direction] = departs
            out = self.fds["s2c" if direction == "c2s" else "c2s"]
            self.sequence += 1
            heapq.heappush(self.queue, (departs + self.delay_s, self.sequence, out, data))

    def send_due(self, now):
        while self.queue and self.queue[0][0] <= now:
            _, _, fd, data = heapq.heappop(self.queue)
            try:
                os.write(fd, data)
            except OSError:
                pass
