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
bound, so that frames are lost only by the drop rules, never for want of
buffer; or, given `queue_ms`, drops a frame that would wait longer than
that behind the others, as a router's shallow queue does.
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
        self.src_port = self.dst_port = self.seq = None
        if len(data) < 34 or struct.unpack("!H", data[12:14])[0] != ETHERTYPE_IPV4:
            return
        ihl = (data[14] & 0x0F) * 4
        total = struct.unpack("!H", data[16:18])[0]
        if data[23] != PROTOCOL_TCP or len(data) < 14 + ihl + 14:
            return
        tcp = 14 + ihl
        self.tcp_flags = data[tcp + 13]
        self.src_port, self.dst_port, self.seq = struct.unpack("!HHI", data[tcp:tcp + 8])
        self.payload_len = total - ihl - (data[tcp + 12] >> 4) * 4

    def is_syn(self):
        return self.tcp_flags is not None and self.tcp_flags & (SYN | ACK) == SYN

    def is_syn_ack(self):
        return self.tcp_flags is not None and self.tcp_flags & (SYN | ACK) == SYN | ACK


class DropRule:
    """Which frames the wire loses. Directions are "c2s" and "s2c".

    kind: "random" (any TCP frame), "window" (data during burst_s of every
    period_s), "syn" / "syn_ack" (SYNs or SYN-ACKs), "nth_data" (the nth
    data segment, counting from 1), "length" (the first copy of each data
    segment of exactly `length` bytes, as the odd last segment of messages
    of k full segments and `length` bytes more). A frame of the kind is
    dropped with `probability` (always when None), up to `count` drops.
    `port` limits a rule to the connections of that TCP port.
    """

    def __init__(self, kind, direction=None, probability=None, period_s=0.0,
                 burst_s=0.0, count=None, nth=0, length=0, port=None, seed=1):
        self.kind = kind
        self.direction = direction
        self.probability = probability
        self.period_s = period_s
        self.burst_s = burst_s
        self.count = count
        self.nth = nth
        self.length = length
        self.port = port
        self.random = random.Random(seed)
        self.seen_data = 0
        self.seen_segments = set()
        self.dropped = 0

    def drops(self, frame, direction, elapsed_s):
        if self.direction and direction != self.direction:
            return False
        if self.port is not None and self.port not in (frame.src_port, frame.dst_port):
            return False
        if self.count is not None and self.dropped >= self.count:
            return False
        hit = self.is_of_kind(frame, elapsed_s) and (
            self.probability is None or self.random.random() < self.probability)
        self.dropped += hit
        return hit

    def is_of_kind(self, frame, elapsed_s):
        if frame.tcp_flags is None:
            return False
        if self.kind == "random":
            return True
        if self.kind == "window":
            return frame.payload_len > 0 and elapsed_s % self.period_s < self.burst_s
        if self.kind == "syn":
            return frame.is_syn()
        if self.kind == "syn_ack":
            return frame.is_syn_ack()
        if self.kind == "nth_data" and frame.payload_len > 0:
            self.seen_data += 1
            return self.seen_data == self.nth
        if self.kind == "length" and frame.payload_len == self.length:
            segment = (frame.src_port, frame.seq)
            first_copy = segment not in self.seen_segments
            self.seen_segments.add(segment)
            return first_copy
        return False

    def describe(self):
        """The rule in words, for the manifest."""
        what = {
            "random": "packets at random",
            "window": f"data {self.burst_s:g} s of every {self.period_s:g} s",
            "syn": "SYNs",
            "syn_ack": "SYN-ACKs",
            "nth_data": f"data segment number {self.nth}",
            "length": f"first copies of {self.length}-byte data segments",
        }[self.kind]
        if self.probability is not None:
            what = f"{self.probability * 100:.3g}% of {what}"
        if self.count is not None:
            what = f"{what}, {self.count} at most"
        if self.port is not None:
            what += f" on port {self.port}"
        if self.direction:
            what += {"c2s": ", client to server", "s2c": ", server to client"}[self.direction]
        return what


class Wire:
    """Relays frames between the client's and the server's TAP."""

    def __init__(self, client_tap, server_tap, delay_ms=0.0, rate_mbit=None, drops=(),
                 queue_ms=None):
        self.fds = {"c2s": open_tap(client_tap), "s2c": open_tap(server_tap)}
        self.names = {"c2s": client_tap, "s2c": server_tap}
        self.delay_s = delay_ms / 1000.0
        self.bytes_per_s = rate_mbit * 125_000 if rate_mbit else None
        self.queue_s = queue_ms / 1000.0 if queue_ms else None
        self.overflowed = 0
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
                if self.queue_s is not None and self.link_free_at[direction] - now > self.queue_s:
                    self.overflowed += 1
                    continue
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
