"""Figures measured from a lab capture with tshark, for the manifests.

Every figure a manifest states comes from here, read from the capture after
it was recorded; nothing is copied from the scenario's settings.
"""

import statistics
import subprocess

FIELDS = [
    "frame.number", "frame.time_epoch", "ip.src", "tcp.srcport", "tcp.dstport",
    "tcp.stream", "tcp.flags.syn", "tcp.flags.ack", "tcp.flags.fin", "tcp.flags.reset",
    "tcp.seq", "tcp.ack", "tcp.len", "tcp.window_size", "tcp.analysis.retransmission",
    "tcp.analysis.lost_segment", "tcp.analysis.zero_window", "tcp.analysis.out_of_order",
    "tcp.analysis.bytes_in_flight", "tcp.analysis.fast_retransmission", "tcp.analysis.ack_rtt",
]


def flag(cell):
    return cell in ("1", "True")


class Packet:
    """One TCP packet as tshark dissects it."""

    def __init__(self, cells):
        (frame, time, self.src, sport, dport, stream, syn, ack, fin, rst, seq, ack_number,
         length, window, retransmission, lost, zero_window, out_of_order, in_flight,
         fast_retransmission, ack_rtt) = cells
        self.frame, self.time, self.stream = int(frame), float(time), int(stream)
        self.sport, self.dport = int(sport), int(dport)
        self.syn, self.ack_flag, self.fin, self.rst = flag(syn), flag(ack), flag(fin), flag(rst)
        self.seq, self.ack, self.len = int(seq), int(ack_number or 0), int(length)
        self.window = int(window or 0)
        self.retransmission, self.lost = bool(retransmission), bool(lost)
        self.zero_window, self.out_of_order = bool(zero_window), bool(out_of_order)
        self.in_flight = int(in_flight or 0)
        self.fast_retransmission = bool(fast_retransmission)
        self.ack_rtt_ms = float(ack_rtt) * 1000 if ack_rtt else None

    @property
    def end(self):
        return self.seq + self.len


def packets(path):
    command = ["tshark", "-n", "-r", path, "-Y", "tcp", "-T", "fields"]
    for field in FIELDS:
        command += ["-e", field]
    lines = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [Packet(line.split("\t")) for line in lines.splitlines() if line]


def field_values(path, display_filter, field, decode_as=()):
    """One tshark field's values over the packets a display filter matches."""
    command = ["tshark", "-n", "-r", path, "-Y", display_filter, "-T", "fields", "-e", field]
    for rule in decode_as:
        command += ["-d", rule]
    lines = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [value for line in lines.splitlines() for value in line.split(",") if value]


def data_from(pkts, src_ip):
    return [p for p in pkts if p.src == src_ip and p.len > 0]


def gaps_ms(times):
    return [(b - a) * 1000 for a, b in zip(times, times[1:])]


def median(values):
    return statistics.median(values) if values else 0.0


def throughput_bytes_per_s(pkts, src_ip):
    """New payload bytes per second from the first data segment to the last."""
    data = data_from(pkts, src_ip)
    if len(data) < 2:
        return 0.0
    unique = sum(p.len for p in data if not p.retransmission)
    return unique / (data[-1].time - data[0].time)


def handshake_rtt_ms(pkts):
    """SYN to the client's ACK of the SYN-ACK, on the first connection."""
    syn = next(p for p in pkts if p.syn and not p.ack_flag)
    syn_ack = next(p for p in pkts if p.syn and p.ack_flag and p.stream == syn.stream)
    ack = next(p for p in pkts if p.stream == syn.stream and p.ack_flag and not p.syn
               and p.time >= syn_ack.time and p.src == syn.src)
    return (ack.time - syn.time) * 1000


def advertised_windows(pkts, src_ip):
    """Receive windows `src_ip` advertised after its handshake, in bytes."""
    return [p.window for p in pkts if p.src == src_ip and not p.syn]


def largest_in_flight(pkts, src_ip):
    return max((p.in_flight for p in pkts if p.src == src_ip), default=0)


def syn_times_by_stream(pkts):
    """{(client port, server port): times of every SYN the client sent}."""
    times = {}
    for p in pkts:
        if p.syn and not p.ack_flag:
            times.setdefault((p.sport, p.dport), []).append(p.time)
    return times


def connections_opened(pkts):
    """Connections the client tried to open, port reuse included."""
    return len({p.stream for p in pkts if p.syn and not p.ack_flag})


def syn_retry_offsets_s(pkts):
    """Seconds from the first SYN to each retry, for the most retried connection."""
    most_retried = max(syn_times_by_stream(pkts).values(), key=len)
    return [round(t - most_retried[0], 1) for t in most_retried[1:]]


def unanswered_connections(pkts):
    syns = syn_times_by_stream(pkts)
    answered = {(p.dport, p.sport) for p in pkts if p.syn and p.ack_flag}
    return [key for key in syns if key not in answered]


def request_stalls_ms(pkts, sender_ip):
    """Gaps over 5 ms inside one message: between consecutive data segments
    of one sender in a connection with no data from the peer in between, as
    when a segment is held back until the previous one is acknowledged."""
    stalls = []
    for segments in by_stream(p for p in pkts if p.len > 0).values():
        for first, second in zip(segments, segments[1:]):
            same_message = first.src == second.src == sender_ip
            gap = (second.time - first.time) * 1000
            if same_message and gap > 5 and not second.retransmission:
                stalls.append(gap)
    return stalls


def by_stream(pkts):
    streams = {}
    for p in pkts:
        streams.setdefault(p.stream, []).append(p)
    return streams


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


def burst_starts(times, quiet_s):
    """The first time of each run of `times` separated by less than `quiet_s`."""
    return [t for index, t in enumerate(times) if index == 0 or t - times[index - 1] >= quiet_s]


def zero_window_ms(pkts, receiver_ip):
    """How long `receiver_ip` advertised a zero window, in all."""
    total, closed_at = 0.0, None
    for p in pkts:
        if p.src != receiver_ip or p.syn:
            continue
        if p.window == 0 and closed_at is None:
            closed_at = p.time
        elif p.window > 0 and closed_at is not None:
            total += p.time - closed_at
            closed_at = None
    return total * 1000


def time_wait_reuses_ms(pkts, server_ip):
    """For each connection that reuses the client port of an earlier one the
    server closed first: ms from the server's FIN to the new SYN."""
    reuses, server_fin_by_port = [], {}
    for segments in sorted(by_stream(pkts).values(), key=lambda s: s[0].time):
        syn = next((p for p in segments if p.syn and not p.ack_flag), None)
        if syn and syn.sport in server_fin_by_port:
            reuses.append((syn.time - server_fin_by_port[syn.sport]) * 1000)
        fins = [p for p in segments if p.fin]
        if fins and fins[0].src == server_ip:
            server_fin_by_port[fins[0].dport] = fins[0].time
    return reuses


def largest_segment(pkts):
    return max((p.len for p in pkts), default=0)


def base_rtt_ms(pkts, near_ip):
    """The path's round trip as seen from the host `near_ip`, the capture
    being taken beside it: the quickest of its handshakes and of the RTT
    samples of the ACKs it received. The quickest, because the relay adds
    a few ms now and then when the machine is busy."""
    samples = [sum(handshake_rtt_split_ms(segments)) for segments in by_stream(pkts).values()
               if any(p.syn and not p.ack_flag for p in segments)
               and any(p.syn and p.ack_flag for p in segments)]
    samples += [ms for _, ms in ack_rtts_ms([p for p in pkts if p.src != near_ip], None)]
    return min(samples)


def handshake_rtt_split_ms(pkts):
    """The round trip of the first handshake split at the capture point:
    (to the server and back: SYN to SYN-ACK, to the client and back:
    SYN-ACK to the client's ACK). At the client the first is the whole RTT."""
    syn = next(p for p in pkts if p.syn and not p.ack_flag)
    syn_ack = next(p for p in pkts if p.syn and p.ack_flag and p.stream == syn.stream)
    ack = next(p for p in pkts if p.stream == syn.stream and p.ack_flag and not p.syn
               and p.time >= syn_ack.time and p.src == syn.src)
    return (syn_ack.time - syn.time) * 1000, (ack.time - syn_ack.time) * 1000


def ack_waits_ms(pkts, sender_ip, pause_ms):
    """For each pause of at least `pause_ms` between two data segments
    `sender_ip` sends in one connection with no data from the peer between
    them: (ms from the last segment before the pause to the peer's first ACK
    covering it, ms from that ACK to the sender's next segment), both None
    when no such ACK came before the resume."""
    waits = []
    for segments in by_stream(pkts).values():
        last = None
        for index, p in enumerate(segments):
            if p.len == 0 or is_resent(p):
                continue
            if p.src != sender_ip:
                last = None
                continue
            if last is not None and (p.time - segments[last].time) * 1000 >= pause_ms:
                waits.append(ack_wait_ms(segments[last:index + 1], sender_ip))
            last = index
    return waits


def ack_wait_ms(pause, sender_ip):
    held, resumed = pause[0], pause[-1]
    ack = next((a for a in pause if a.src != sender_ip and a.ack_flag and a.ack >= held.end), None)
    if ack is None:
        return None, None
    return (ack.time - held.time) * 1000, (resumed.time - ack.time) * 1000


def is_resent(p):
    """Data sent again: Wireshark calls a resend out-of-order rather than a
    retransmission when it follows new data within an RTT, and the lab's
    wire never reorders."""
    return p.len > 0 and (p.retransmission or p.out_of_order)


def retransmitted(pkts, src_ip):
    """Data segments `src_ip` sent again."""
    return [p for p in pkts if p.src == src_ip and is_resent(p)]


def silence_before_ms(pkts, sender_ip):
    """For each segment `sender_ip` sent again: how long it had sent nothing
    in that connection before. A resend after duplicate ACKs comes while data
    still flows; one after a timer, after a silence."""
    silences = []
    for segments in by_stream(pkts).values():
        previous = None
        for p in segments:
            if p.src != sender_ip:
                continue
            if is_resent(p) and previous is not None:
                silences.append((p.time - previous.time) * 1000)
            previous = p
    return silences


def segments_by_length(pkts, src_ip):
    return sorted({p.len for p in data_from(pkts, src_ip)})


def ack_rtts_ms(pkts, acker_ip):
    """Wireshark's RTT samples: the time from data to the ACK `acker_ip`
    (anyone when None) sent for it, as (time, ms)."""
    return [(p.time, p.ack_rtt_ms) for p in pkts
            if acker_ip in (None, p.src) and p.ack_rtt_ms is not None]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def zero_window_count(pkts, receiver_ip):
    return sum(1 for p in pkts if p.src == receiver_ip and p.zero_window)


def throughput_by_stream(pkts, src_ip):
    """{stream: new payload bytes per second from its first data segment to its last}."""
    return {stream: throughput_bytes_per_s(segments, src_ip)
            for stream, segments in by_stream(pkts).items()
            if len(data_from(segments, src_ip)) >= 2}


def transfer_span_s(pkts, src_ip):
    data = data_from(pkts, src_ip)
    return data[-1].time - data[0].time if len(data) >= 2 else 0.0


def exchanges(pkts, client_ip):
    """Requests (runs of client data after server data or a handshake) and
    the times they began, per stream: [(stream, request time, response end)]."""
    found = []
    for stream, segments in by_stream(pkts).items():
        request, response_end, previous = None, None, None
        for p in segments:
            if p.len == 0:
                continue
            if p.src == client_ip and previous != client_ip:
                if request is not None:
                    found.append((stream, request, response_end))
                request, response_end = p.time, None
            elif p.src != client_ip:
                response_end = p.time
            previous = p.src
        if request is not None:
            found.append((stream, request, response_end))
    return found


def message_ends(pkts, sender_ip, size):
    """For each connection `sender_ip` sends data on, in the order they
    opened: when the last byte of each of its messages of `size` bytes passed
    (message k ends at byte k × size of its stream)."""
    ends = []
    for segments in sorted(by_stream(pkts).values(), key=lambda s: s[0].time):
        data = [p for p in segments if p.src == sender_ip and p.len > 0 and not is_resent(p)]
        if not data:
            continue
        first, times, reached = data[0].seq, [], size
        for p in data:
            while p.end - first >= reached:
                times.append(p.time)
                reached += size
        ends.append(times)
    return ends


def added_ms(ends_in, ends_out):
    """How much later each message left than it came in, connection by
    connection (both lists in the order the connections opened)."""
    return [(out - came) * 1000 for ins, outs in zip(ends_in, ends_out)
            for came, out in zip(ins, outs)]


def syns_on_reused_tuples(pkts, within_s=60.0):
    """SYNs on a 4-tuple whose previous connection ended (its first FIN)
    less than `within_s` before: the TIME_WAIT of whoever closed it had not
    run out. Returns the ms from that FIN to each such SYN."""
    reuses, ended = [], {}
    for segments in sorted(by_stream(pkts).values(), key=lambda s: s[0].time):
        syn = next((p for p in segments if p.syn and not p.ack_flag), None)
        if syn:
            key = (syn.src, syn.sport, syn.dport)
            if key in ended and syn.time - ended[key] < within_s:
                reuses.append((syn.time - ended[key]) * 1000)
        fin = next((p for p in segments if p.fin), None)
        if syn and fin:
            ended[(syn.src, syn.sport, syn.dport)] = fin.time
    return reuses


def http_messages(path, ports):
    """HTTP requests and responses as tshark reads them (on `ports` too):
    ({request frame: (time, stream, client address, uri, X-Forwarded-For)},
     {request frame: time its response's last byte passed})."""
    decode = [arg for port in ports for arg in ("-d", f"tcp.port=={port},http")]
    command = ["tshark", "-n", "-r", path, *decode, "-Y", "http", "-T", "fields",
               "-e", "frame.number", "-e", "frame.time_epoch", "-e", "tcp.stream",
               "-e", "ip.src", "-e", "http.request.uri", "-e", "http.x_forwarded_for",
               "-e", "http.request_in"]
    lines = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    requests, responses = {}, {}
    for line in lines.splitlines():
        frame, time, stream, src, uri, forwarded, request_in = line.split("\t")
        if uri:
            requests[int(frame)] = (float(time), int(stream), src, uri, forwarded or None)
        elif request_in:
            responses[int(request_in)] = float(time)
    return requests, responses


def responses_after_requests(pkts, server_ip):
    """Per stream in order, each response `server_ip` sent: its data segments
    (first copies), from one request of the peer to the next."""
    found = []
    for segments in by_stream(pkts).values():
        current = None
        for p in segments:
            if p.len == 0 or is_resent(p):
                continue
            if p.src != server_ip:
                current = None
                continue
            if current is None:
                current = []
                found.append((segments, current))
            current.append(p)
    return found


def first_flight_bytes(segments, response):
    """The bytes of a response sent before the peer's first ACK of any of
    them reached the sender (seen beside the sender)."""
    first = response[0]
    ack = next((p for p in segments if p.src != first.src and p.ack_flag and p.time > first.time
                and p.ack > first.seq), None)
    return sum(p.len for p in response if ack is None or p.time < ack.time)


def window_waits_ms(pkts, sender_ip, mss, ack_delay_s):
    """Each time `sender_ip` stopped within a segment of the edge of the
    window its peer advertised (ACK + window) and sent its next data, before
    any data of the peer's, only after an ACK moved that edge: ms from its
    last segment to the next.
    The sender learns of an ACK `ack_delay_s` after the capture saw it: the
    round trip to the sender and back for a capture beside the receiver,
    nothing beside the sender."""
    waits = []
    for segments in by_stream(pkts).values():
        acks = [(p.time + ack_delay_s, p.ack + p.window) for p in segments
                if p.src != sender_ip and p.ack_flag and not p.syn]
        known, edge, stopped = 0, None, None
        for p in segments:
            if p.src != sender_ip and p.len > 0:
                stopped = None  # the peer answered: the next data is a new message
            if p.src != sender_ip or p.len == 0 or is_resent(p):
                continue
            moved = False
            while known < len(acks) and acks[known][0] <= p.time:
                moved |= edge is not None and acks[known][1] > edge
                edge = acks[known][1]
                known += 1
            if stopped is not None and moved:
                waits.append((p.time - stopped) * 1000)
            stopped = p.time if edge is not None and p.end + mss > edge else None
    return waits
