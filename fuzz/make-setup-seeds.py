#!/usr/bin/env python3
"""Writes hand-made captures of every way a TCP handshake goes wrong, as
seeds for the `pipeline` fuzz target (its corpus is replayed by `cargo test`):

    fuzz/make-setup-seeds.py [DIR]      default fuzz/corpus/pipeline

Each capture holds one to three servers, a connection to each, and every
connection meets the same setup event: its SYN, SYN-ACK or handshake ACK
lost downstream of the capture point (so the capture sees the copy and the
resend) or recorded twice, a refusal, a SYN never answered, or a handshake
whose SYN came before the capture began. Captures that mix the events, one
per connection, end the set. A connection that opens sends a request and
gets its answer. Standard-library Python; the same files every run.
"""

import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("hostile", HERE.parent / "bench" / "make-hostile.py")
hostile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hostile)
packet, PCAP_HEADER = hostile.packet, hostile.PCAP_HEADER
SYN, FIN, RST, PSH, ACK = hostile.SYN, hostile.FIN, hostile.RST, hostile.PSH, hostile.ACK
MSS_OPTION, REQUEST, RESPONSE = hostile.MSS_OPTION, hostile.REQUEST, hostile.RESPONSE

START_NS = hostile.START_NS
RTT_NS = 2_000_000
TIMER_NS = 1_000_000_000  # the initial retransmission timeout
CLIENT_ISN, SERVER_ISN = 1000, 5000


def server_address(index):
    return bytes([10, 0, 0, 1 + index])


def handshake(event):
    """The handshake's packets for `event`: (offset, from the client?, flags,
    seq, ack) in order, and whether the connection opens."""
    c, s = CLIENT_ISN, SERVER_ISN
    syn = (True, SYN, c, 0)
    syn_ack = (False, SYN | ACK, s, c + 1)
    ack = (True, ACK, c + 1, s + 1)
    steps = {
        "syn-lost": [(0, syn), (TIMER_NS, syn), (TIMER_NS + RTT_NS, syn_ack),
                     (TIMER_NS + 2 * RTT_NS, ack)],
        "syn-twice": [(0, syn), (10_000, syn), (RTT_NS, syn_ack), (2 * RTT_NS, ack)],
        "synack-lost": [(0, syn), (RTT_NS, syn_ack), (TIMER_NS, syn),
                        (TIMER_NS + RTT_NS, syn_ack), (TIMER_NS + 2 * RTT_NS, ack)],
        "synack-twice": [(0, syn), (RTT_NS, syn_ack), (RTT_NS + 10_000, syn_ack),
                         (2 * RTT_NS, ack)],
        "ack-lost": [(0, syn), (RTT_NS, syn_ack), (2 * RTT_NS, ack),
                     (TIMER_NS + RTT_NS, syn_ack), (TIMER_NS + 2 * RTT_NS, ack)],
        "syn-before-capture": [(RTT_NS, syn_ack), (2 * RTT_NS, ack)],
        "refused": [(0, syn), (RTT_NS, (False, RST | ACK, 0, c + 1))],
        "unanswered": [(0, syn), (TIMER_NS, syn), (3 * TIMER_NS, syn)],
    }[event]
    opens = event not in ("refused", "unanswered")
    return steps, opens


def connection(event, index, start_ns):
    """The packets of the connection to server `index` meeting `event`."""
    client, server = bytes([10, 1, 0, 1]), server_address(index)
    cport = 40000 + index
    steps, opens = handshake(event)

    def frame(at_ns, from_client, flags, seq, ack, payload=b""):
        options = MSS_OPTION if flags & SYN else b""
        ends = (client, server, cport, 80) if from_client else (server, client, 80, cport)
        return (start_ns + at_ns, *ends, seq, ack, flags, payload, options)

    frames = [frame(at, *step) for at, step in steps]
    if opens:
        t = steps[-1][0] + 10_000
        c, s = CLIENT_ISN + 1, SERVER_ISN + 1
        c_end, s_end = c + len(REQUEST), s + len(RESPONSE)
        frames += [
            frame(t, True, PSH | ACK, c, s, REQUEST),
            frame(t + RTT_NS + 500_000, False, PSH | ACK, s, c_end, RESPONSE),
            frame(t + 2 * RTT_NS + 500_000, True, FIN | ACK, c_end, s_end),
            frame(t + 3 * RTT_NS + 500_000, False, FIN | ACK, s_end, c_end + 1),
            frame(t + 4 * RTT_NS + 500_000, True, ACK, c_end + 1, s_end + 1),
        ]
    return frames


EVENTS = ["syn-lost", "syn-twice", "synack-lost", "synack-twice", "ack-lost",
          "syn-before-capture", "refused", "unanswered"]


def captures():
    """(name, the events of its connections, one per server)."""
    for event in EVENTS:
        for servers in (1, 2, 3):
            yield f"setup-{event}-{servers}", [event] * servers
    for first in range(len(EVENTS)):
        mixed = [EVENTS[(first + k) % len(EVENTS)] for k in range(3)]
        yield f"setup-mixed-{first}", mixed


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "corpus" / "pipeline"
    out.mkdir(parents=True, exist_ok=True)
    for name, events in captures():
        frames = []
        for index, event in enumerate(events):
            frames += connection(event, index, START_NS + index * 300_000)
        frames.sort(key=lambda f: f[0])
        (out / f"{name}.pcap").write_bytes(PCAP_HEADER + b"".join(packet(*f) for f in frames))


if __name__ == "__main__":
    main()
