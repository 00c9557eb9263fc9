#!/usr/bin/env python3
"""Writes a synthetic pcap at report scale: many short request/response connections.

    bench/make-synthetic.py OUT.pcap [CONNECTIONS] [TRANSACTIONS_PER_CONNECTION]

Defaults: 50,000 connections of 4 transactions each (200,000 transactions)
over ten minutes, between 200 clients and 20 servers, with lognormal think
times, a retransmitted response in 1 of 50 transactions, a SYN retry in 1 of
200 connections and an unanswered SYN in 1 of 500. For timing `tcpwhy report`
on a large capture when no real one is at hand. Frames are cut after the TCP
header (snaplen style; the IP header keeps each payload's length), so the
file stays small.
"""
import random
import struct
import sys

SECOND_NS = 1_000_000_000
START_NS = 1_767_225_600 * SECOND_NS
SPAN_S = 600


def ip_checksum(header):
    total = sum(struct.unpack("!10H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class Writer:
    def __init__(self, path):
        self.out = open(path, "wb")
        self.out.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1))
        self.packets = []

    def packet(self, at_ns, src, dst, sport, dport, seq, ack, flags, payload, window=502):
        options = b""
        if flags & 0x02:
            options = struct.pack("!BBH", 2, 4, 1460) + b"\x01\x03\x03\x07"
        tcp = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF,
                          (5 + len(options) // 4) << 4, flags, window, 0, 0) + options
        total = 20 + len(tcp) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
        frame = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + tcp
        self.packets.append((at_ns, frame, len(frame) + payload))

    def flush(self, until_ns=None):
        self.packets.sort(key=lambda p: p[0])
        keep = []
        for at_ns, frame, wire_len in self.packets:
            if until_ns is not None and at_ns >= until_ns:
                keep.append((at_ns, frame, wire_len))
                continue
            self.out.write(struct.pack("<IIII", at_ns // SECOND_NS, at_ns % SECOND_NS, len(frame), wire_len))
            self.out.write(frame)
        self.packets = keep


def connection(w, rng, at_ns, client, server, sport, transactions):
    c, s = bytes([10, 1, client // 256, client % 256]), bytes([10, 2, 0, server])
    rtt = int(rng.uniform(0.2, 5) * 1e6)
    cs, ss = rng.getrandbits(32), rng.getrandbits(32)
    t = at_ns
    w.packet(t, c, s, sport, 80, cs, 0, 0x02, 0)
    if rng.random() < 1 / 500:  # unanswered: two retries, then nothing
        w.packet(t + SECOND_NS, c, s, sport, 80, cs, 0, 0x02, 0)
        w.packet(t + 3 * SECOND_NS, c, s, sport, 80, cs, 0, 0x02, 0)
        return
    if rng.random() < 1 / 200:
        t += SECOND_NS
        w.packet(t, c, s, sport, 80, cs, 0, 0x02, 0)
    w.packet(t + rtt // 2, s, c, 80, sport, ss, cs + 1, 0x12, 0)
    t += rtt
    w.packet(t, c, s, sport, 80, cs + 1, ss + 1, 0x10, 0)
    cs, ss = cs + 1, ss + 1
    for _ in range(transactions):
        request = rng.choice([120, 240, 480, 900])
        response = rng.choice([300, 1400, 4000, 12000, 60000])
        w.packet(t, c, s, sport, 80, cs, ss, 0x18, request)
        cs += request
        t += rtt // 2 + int(rng.lognormvariate(1.5, 1.0) * 1e6)
        sent = 0
        while sent < response:
            size = min(1448, response - sent)
            w.packet(t, s, c, 80, sport, ss + sent, cs, 0x18 if sent + size >= response else 0x10, size)
            if sent == 0 and rng.random() < 1 / 50:
                w.packet(t + 200_000_000, s, c, 80, sport, ss + sent, cs, 0x10, size)
            sent += size
            t += 20_000
        ss += response
        t += rtt // 2
        w.packet(t, c, s, sport, 80, cs, ss, 0x10, 0)
        t += int(rng.uniform(0.1, 3) * 1e6)
    w.packet(t, c, s, sport, 80, cs, ss, 0x11, 0)
    w.packet(t + rtt // 2, s, c, 80, sport, ss, cs + 1, 0x11, 0)
    w.packet(t + rtt, c, s, sport, 80, cs + 1, ss + 1, 0x10, 0)


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 50_000
    per = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    rng = random.Random(1)
    w = Writer(path)
    for n in range(count):
        at_ns = START_NS + n * SPAN_S * SECOND_NS // count
        connection(w, rng, at_ns, n % 200, n % 20 + 1, 10000 + n % 50000, per)
        if n % 1000 == 999:
            w.flush(until_ns=at_ns)
    w.flush()
    w.out.close()


if __name__ == "__main__":
    main()
