//! Time lost to loss: at large, in bursts at a steady period, at the tail
//! of a message, and to a peer that stopped answering. (MTU black holes are
//! the options detector's.)

use super::{count, duration, round, with_text, Facts};
use crate::{patterns, Finding, Inputs};

/// Loss figures over all connections: segments resent, packets, and
/// whether the capture saw gaps (loss before it) or segments twice (after it).
struct LossCounts {
    resent: u64,
    packets: u64,
    /// Resends whose originals the capture never saw, and those it had seen.
    upstream: u64,
    downstream: u64,
    handshakes_retried: u64,
}

impl LossCounts {
    /// Where most of the loss happened, for the title.
    fn side(&self) -> &'static str {
        if self.upstream > self.downstream {
            "upstream"
        } else {
            "downstream"
        }
    }

    /// "3 data segments resent (0.3% of 1073 packets) and 6 handshakes
    /// retried": data sent again because it was lost, not every segment
    /// sent again (SYNs, FINs and needless resends are left out).
    fn resends(&self) -> String {
        let mut text = format!(
            "{} resent ({:.1}% of {} packets)",
            count(self.resent, "data segment"),
            100.0 * self.resent as f64 / self.packets.max(1) as f64,
            self.packets
        );
        if self.handshakes_retried > 0 {
            text += &format!(
                " and {} retried",
                count(self.handshakes_retried, "handshake")
            );
        }
        text
    }
}

fn loss_counts(inputs: &Inputs) -> LossCounts {
    let mut counts = LossCounts {
        resent: 0,
        packets: 0,
        upstream: 0,
        downstream: 0,
        handshakes_retried: 0,
    };
    for c in inputs.connections {
        for d in c.directions() {
            counts.resent += d.lost_before_capture + d.lost_after_capture;
            counts.packets += d.packets;
            counts.upstream += d.lost_before_capture;
            counts.downstream += d.lost_after_capture;
        }
        let retried = !c.handshake.syn_retries_ns.is_empty() || c.handshake.syn_ack_retries > 0;
        counts.handshakes_retried += u64::from(retried);
    }
    counts
}

fn location(counts: &LossCounts) -> String {
    let upstream = "upstream of the capture point (the capture saw the gaps before the resends)";
    let downstream = "downstream of the capture point (the capture saw each lost segment twice)";
    match (counts.upstream, counts.downstream) {
        (0, _) => downstream.to_string(),
        (_, 0) => upstream.to_string(),
        (before, after) => {
            format!("on both sides of the capture point: {before} {upstream}, {after} {downstream}")
        }
    }
}

/// How long the senders waited for the losses to be recovered, or that
/// no one did (a resend of a goodbye, of an answer no one asked for).
fn waited_for_resends(ms: f64) -> String {
    if ms > 0.0 {
        format!("{} waiting for the losses to be recovered", duration(ms))
    } else {
        "no one waiting for the resends".to_string()
    }
}

pub(super) fn packet_loss(facts: &Facts, inputs: &Inputs) -> Finding {
    let counts = loss_counts(inputs);
    let mut found = with_text(
        facts.kind,
        format!(
            "Packet loss: {}, {}, lost {}",
            counts.resends(),
            waited_for_resends(facts.total.cost_ms),
            counts.side()
        ),
        format!(
            "Segments were lost {}. The time counted is what the senders waited because of \
             it: for duplicate ACKs and the fast retransmission they prompt, for retransmission \
             timers, and with a congestion window the loss had cut.{}",
            location(&counts),
            facts.example_text()
        ),
        "Find the dropping hop: compare captures taken on both sides of it, and look at \
         interface errors and drops and at queue overflows on the path (policers, full \
         buffers, bad links).",
    );
    found
        .figures
        .insert("resent_segments", counts.resent as f64);
    found.wireshark_filter = facts.filter(
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.lost_segment",
    );
    found
}

pub(super) fn periodic_loss(facts: &Facts, inputs: &Inputs) -> Finding {
    let counts = loss_counts(inputs);
    let bursts = patterns::loss_burst_pattern(inputs.ticks, inputs.transactions);
    let (n, period) = bursts.map_or((0, 0.0), |b| (b.count, b.period_s));
    let mut found = with_text(
        facts.kind,
        format!(
            "Loss in {n} bursts, one every {period:.2} s: {} of waiting for recovery, lost {}",
            duration(facts.total.cost_ms),
            counts.side()
        ),
        format!(
            "The losses come in bursts at a steady period rather than spread out: something on \
             the path drops at that interval (a flapping link, a periodic job on a device, a \
             policer's interval). Segments were lost {}.{}",
            location(&counts),
            facts.example_text()
        ),
        "Find what on the path runs on that period (device logs, route or link flaps, a \
         policer's configuration) and compare captures taken on both sides of each hop.",
    );
    found.figures.insert("period_s", round(period));
    found.figures.insert("bursts", n as f64);
    found
}

pub(super) fn tail_loss(facts: &Facts) -> Finding {
    let typical = facts.typical_wait_ms();
    with_text(
        facts.kind,
        format!(
            "{} lost their last segment and waited {} each for a retransmission timer",
            count(facts.total.transactions(), "transaction"),
            duration(typical)
        ),
        format!(
            "The last segment of a message was lost. With nothing sent after it, the receiver \
             could not send duplicate ACKs to ask for it, so the sender resent it only when its \
             retransmission timer (a tail-loss probe or a timeout) fired.{}",
            facts.example_text()
        ),
        "Find the dropping hop (compare captures on both sides of it). Senders on recent \
         Linux recover sooner with tail-loss probes and RACK on (net.ipv4.tcp_early_retrans=3, \
         tcp_recovery=1).",
    )
}

pub(super) fn dead_peer(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let peer = facts
        .example
        .map(|c| match receiver {
            "server" => c.server.to_string(),
            _ => c.client.to_string(),
        })
        .unwrap_or_default();
    let resends = facts.sender_data().map_or(0, |d| d.most_resends);
    with_text(
        facts.kind,
        format!(
            "The {receiver} {peer} stopped answering: the {sender} resent the same segment {resends} \
             times with growing timeouts and it was never acknowledged"
        ),
        format!(
            "Nothing the {sender} sent after a point was acknowledged; it kept resending, each \
             time after twice the wait, until it gave up or the capture ended. This is not loss \
             on a busy path but a peer that is gone (crashed, unplugged, its state lost, or a \
             firewall now dropping its packets).{}",
            facts.example_text()
        ),
        "Check the peer's health and whether a firewall, NAT or load balancer dropped the \
         connection's state (idle timeouts); use application or TCP keepalives to notice sooner.",
    )
}
