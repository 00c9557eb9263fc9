"""Figures measured from a lab capture with tshark, for the manifests."""

import statistics
import subprocess

FIELDS = [
    "frame.number", "frame.time_epoch", "ip.src", "tcp.srcport", "tcp.dstport",
    "tcp.stream", "tcp.flags.syn", "tcp.flags.ack", "tcp.flags.fin", "tcp.flags.reset",
    "tcp.seq", "tcp.ack", "tcp.len", "tcp.window_size", "tcp.analysis.retransmission",
    "tcp.analysis.lost_segment", "tcp.analysis.zero_window", "tcp.analysis.out_of_order",
]


class Packet:
    def __init__(self, cells):
        (self.frame, self.time, self.src, self.sport, self.dport, self.stream, syn, ack,
         fin, rst, self.seq, self.ack, self.len, self.window, retransmission, lost,
         zero_window, out_of_order) = cells
        self.frame, self.stream = int(self.frame), int(self.stream)
        self.time = float(self.time)
        self.sport, self.dport = int(self.sport), int(self.dport)
        self.syn, self.ack_flag = syn in ("1", "True"), ack in ("1", "True")
        self.fin, self.rst = fin in ("1", "True"), rst in ("1", "True")
        self.seq, self.ack, self.len = int(self.seq), int(self.ack or 0), int(self.len)
        self.window = int(self.window or 0)
        self.retransmission, self.lost = bool(retransmission), bool(lost)
        self.zero_window = bool(zero_window)
        self.out_of_order = bool(out_of_order)


def packets(path):
    command = ["tshark", "-n", "-r", path, "-T", "fields"]
    for field in FIELDS:
        command += ["-e", field]
    lines = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [Packet(line.split("\t")) for line in lines.splitlines() if line]


def data_from(pkts, src_ip):
    return [p for p in pkts if p.src == src_ip and p.len > 0]


def gaps_ms(times):
    return [(b - a) * 1000 for a, b in zip(times, times[1:])]


def median(values):
    return statistics.median(values) if values else 0.0


def throughput_bytes_per_s(pkts, src_ip):
    data = data_from(pkts, src_ip)
    if len(data) < 2:
        return 0.0
    unique = sum(p.len for p in data if not p.retransmission)
    return unique / (data[-1].time - data[0].time)


def handshake_rtt_ms(pkts):
    syn = next(p for p in pkts if p.syn and not p.ack_flag)
    syn_ack = next(p for p in pkts if p.syn and p.ack_flag and p.stream == syn.stream)
    ack = next(p for p in pkts if p.stream == syn.stream and p.ack_flag and not p.syn
               and p.time >= syn_ack.time and p.src == syn.src)
    return (ack.time - syn.time) * 1000


def syn_times_by_stream(pkts):
    times = {}
    for p in pkts:
        if p.syn and not p.ack_flag:
            times.setdefault((p.sport, p.dport), []).append(p.time)
    return times


def request_stalls_ms(pkts, sender_ip):
    """Gaps inside one application write's segments: a segment held back
    until the previous one was acknowledged."""
    stalls = []
    by_stream = {}
    for p in data_from(pkts, sender_ip):
        by_stream.setdefault(p.stream, []).append(p)
    for segments in by_stream.values():
        for first, second in zip(segments, segments[1:]):
            gap = (second.time - first.time) * 1000
            if gap > 5 and not second.retransmission:
                stalls.append(gap)
    return stalls


def server_think_ms(pkts, client_ip, server_ip):
    """Last request byte to first response byte, per exchange."""
    thinks, last_request = [], {}
    for p in pkts:
        if p.len == 0:
            continue
        if p.src == client_ip:
            last_request[p.stream] = p.time
        elif p.src == server_ip and p.stream in last_request:
            thinks.append((p.time - last_request.pop(p.stream)) * 1000)
    return thinks


def idle_periods_ms(pkts, minimum_ms):
    """Start time and length of every silence (no data either way) longer than `minimum_ms`."""
    data = [p for p in pkts if p.len > 0]
    return [(a.time, (b.time - a.time) * 1000) for a, b in zip(data, data[1:])
            if (b.time - a.time) * 1000 >= minimum_ms]
