#!/usr/bin/env python3
"""Writes the huge captures tcpwhy must survive within its memory budget.

    bench/make-hostile.py syn-flood COUNT OUT.pcap     COUNT SYNs, random sources, one server
    bench/make-hostile.py connections COUNT OUT.pcap   COUNT complete HTTP connections
    bench/make-hostile.py never-closed COUNT OUT.pcap  COUNT HTTP connections left open
    bench/make-hostile.py transactions COUNT OUT.pcap  COUNT HTTP requests on one connection
    bench/make-hostile.py syn-retries COUNT OUT.pcap   one SYN sent COUNT times, never answered

OUT may be `-` for standard output. A SYN flood arrives at 100,000 SYNs a
second from random addresses and ports to 10.0.0.1:80, nothing answered. The
connections are HTTP/1.1 GETs answered in 1 ms (SYN, SYN-ACK, ACK, request,
response, ACK, then FINs both ways: 9 packets), 10,000 opened a second,
each from its own client address and port; the connections left open are
the same without the FINs (6 packets). The requests on one connection come
one a millisecond, each answered at once and its answer acknowledged. The
SYN sent again and again goes out every millisecond from one port, with one
initial sequence number.
Standard-library Python; deterministic (a fixed random seed).
"""

import random
import struct
import sys

START_NS = 1_767_225_600_000_000_000
SERVER_IP = bytes([10, 0, 0, 1])
SERVER_PORT = 80
PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)  # nanoseconds, Ethernet
ETHERNET = bytes.fromhex("020000000002" "020000000001" "0800")
SYN, FIN, RST, PSH, ACK = 0x02, 0x01, 0x04, 0x08, 0x10
MSS_OPTION = struct.pack("!BBH", 2, 4, 1460)
REQUEST = b"GET /index.html HTTP/1.1\r\nHost: bench\r\n\r\n"
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n" + b"x" * 300


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def packet(time_ns, src, dst, sport, dport, seq, ack, flags, payload=b"", options=b""):
    """One Ethernet frame as a pcap record (TCP checksum left zero: offload style)."""
    tcp_len = 20 + len(options)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (tcp_len // 4) << 4, flags, 65535, 0, 0)
    total = 20 + tcp_len + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    frame = ETHERNET + ip + tcp + options + payload
    seconds, nanos = divmod(time_ns, 1_000_000_000)
    return struct.pack("<IIII", seconds, nanos, len(frame), len(frame)) + frame


def syn_flood(count, out, rng):
    step_ns = 10_000  # 100,000 SYNs a second
    chunk = []
    for i in range(count):
        src = struct.pack("!I", rng.getrandbits(32) | 0x01000000)
        sport = 1024 + rng.getrandbits(16) % 64000
        chunk.append(
            packet(START_NS + i * step_ns, src, SERVER_IP, sport, SERVER_PORT,
                   rng.getrandbits(32), 0, SYN, options=MSS_OPTION)
        )
        if len(chunk) == 10_000:
            out.write(b"".join(chunk))
            chunk.clear()
    out.write(b"".join(chunk))


def connection_packets(n, start_ns, closed=True):
    """The nine packets of connection n (six when not `closed`), with their times."""
    client = struct.pack("!I", 0x0B000000 + n)  # 11.x.y.z, one address per connection
    cport = 1024 + n % 60000
    c, s = 1000, 5000
    rtt = 200_000  # 0.2 ms
    t = start_ns
    to_server = lambda time, seq, ack, flags, payload=b"", options=b"": (
        time, client, SERVER_IP, cport, SERVER_PORT, seq, ack, flags, payload, options)
    to_client = lambda time, seq, ack, flags, payload=b"", options=b"": (
        time, SERVER_IP, client, SERVER_PORT, cport, seq, ack, flags, payload, options)
    packets = [
        to_server(t, c, 0, SYN, options=MSS_OPTION),
        to_client(t + rtt, s, c + 1, SYN | ACK, options=MSS_OPTION),
        to_server(t + 2 * rtt, c + 1, s + 1, ACK),
        to_server(t + 2 * rtt + 10_000, c + 1, s + 1, PSH | ACK, REQUEST),
        to_client(t + 3 * rtt + 1_000_000, s + 1, c + 1 + len(REQUEST), PSH | ACK, RESPONSE),
        to_server(t + 4 * rtt + 1_000_000, c + 1 + len(REQUEST), s + 1 + len(RESPONSE), ACK),
        to_server(t + 4 * rtt + 1_100_000, c + 1 + len(REQUEST), s + 1 + len(RESPONSE), FIN | ACK),
        to_client(t + 5 * rtt + 1_100_000, s + 1 + len(RESPONSE), c + 2 + len(REQUEST), FIN | ACK),
        to_server(t + 6 * rtt + 1_100_000, c + 2 + len(REQUEST), s + 2 + len(RESPONSE), ACK),
    ]
    return packets if closed else packets[:6]


def connections(count, out, closed=True):
    step_ns = 100_000  # 10,000 connections opened a second
    # Packets of overlapping connections interleave: merge them by time in a window.
    pending = []
    chunk = []
    for n in range(count):
        start = START_NS + n * step_ns
        pending.extend(connection_packets(n, start, closed))
        if len(pending) > 20_000:
            pending.sort(key=lambda p: p[0])
            # Everything before the newest connection's start can no longer be overtaken.
            ready = [p for p in pending if p[0] < start]
            pending = [p for p in pending if p[0] >= start]
            chunk.extend(packet(*p) for p in ready)
            out.write(b"".join(chunk))
            chunk.clear()
    pending.sort(key=lambda p: p[0])
    out.write(b"".join(packet(*p) for p in pending))


def transactions(count, out):
    client, cport = bytes([11, 0, 0, 1]), 40000
    c, s = 1000, 5000
    rtt = 200_000  # 0.2 ms
    step_ns = 1_000_000  # a request a millisecond
    head = [
        packet(START_NS, client, SERVER_IP, cport, SERVER_PORT, c, 0, SYN, options=MSS_OPTION),
        packet(START_NS + rtt, SERVER_IP, client, SERVER_PORT, cport, s, c + 1, SYN | ACK,
               options=MSS_OPTION),
        packet(START_NS + 2 * rtt, client, SERVER_IP, cport, SERVER_PORT, c + 1, s + 1, ACK),
    ]
    out.write(b"".join(head))
    c, s = c + 1, s + 1
    chunk = []
    for n in range(count):
        t = START_NS + 2 * rtt + (n + 1) * step_ns
        chunk.append(packet(t, client, SERVER_IP, cport, SERVER_PORT, c, s, PSH | ACK, REQUEST))
        c += len(REQUEST)
        chunk.append(packet(t + rtt, SERVER_IP, client, SERVER_PORT, cport, s, c, PSH | ACK, RESPONSE))
        s += len(RESPONSE)
        chunk.append(packet(t + 2 * rtt, client, SERVER_IP, cport, SERVER_PORT, c, s, ACK))
        if len(chunk) >= 30_000:
            out.write(b"".join(chunk))
            chunk.clear()
    out.write(b"".join(chunk))


def syn_retries(count, out):
    step_ns = 1_000_000  # a SYN a millisecond
    syn = packet(0, bytes([11, 0, 0, 1]), SERVER_IP, 40000, SERVER_PORT, 1000, 0, SYN,
                 options=MSS_OPTION)
    frame = syn[16:]
    chunk = []
    for n in range(count):
        seconds, nanos = divmod(START_NS + n * step_ns, 1_000_000_000)
        chunk.append(struct.pack("<IIII", seconds, nanos, len(frame), len(frame)) + frame)
        if len(chunk) == 100_000:
            out.write(b"".join(chunk))
            chunk.clear()
    out.write(b"".join(chunk))


def main():
    kinds = {
        "syn-flood": lambda count, out: syn_flood(count, out, random.Random(14)),
        "connections": connections,
        "never-closed": lambda count, out: connections(count, out, closed=False),
        "transactions": transactions,
        "syn-retries": syn_retries,
    }
    if len(sys.argv) != 4 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    kind, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    out = sys.stdout.buffer if path == "-" else open(path, "wb")
    out.write(PCAP_HEADER)
    kinds[kind](count, out)
    out.close()


if __name__ == "__main__":
    main()
