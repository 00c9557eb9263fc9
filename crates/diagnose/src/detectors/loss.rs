//! Packet loss: how much, and on which side of the capture point.

use tcp::{ConnectionSummary, EventKind};

use super::{finding, rtt_ms};
use crate::{Finding, Inputs};

pub fn packet_loss(inputs: &Inputs) -> Option<Finding> {
    let mut resent = 0;
    let mut packets = 0;
    let mut gaps = 0;
    let mut cost = 0.0;
    let mut worst: Option<(&ConnectionSummary, u64)> = None;
    for c in inputs.connections {
        // SYNs sent again belong to the setup finding, not to data loss.
        let setup_retries = [
            c.handshake.syn_retries_ns.len() as u64,
            u64::from(c.handshake.syn_ack_retries),
        ];
        for (d, setup) in [&c.client_to_server, &c.server_to_client]
            .into_iter()
            .zip(setup_retries)
        {
            let data_resent = d.retransmissions.total.saturating_sub(setup);
            resent += data_resent;
            packets += d.packets;
            gaps += d.lost_segments;
            cost += data_resent as f64 * rtt_ms(c).max(1.0);
            if data_resent > worst.map_or(0, |(_, n)| n) {
                worst = Some((c, data_resent));
            }
        }
    }
    let (connection, _) = worst?;
    let location = if gaps > 0 {
        "upstream of the capture point (the capture saw the gaps before the resends)"
    } else {
        "downstream of the capture point (the capture saw each segment twice)"
    };
    let mut found = finding(
        "packet_loss",
        format!(
            "Packet loss: {resent} segments resent ({:.1}% of {packets}), lost {}",
            100.0 * resent as f64 / packets.max(1) as f64,
            if gaps > 0 { "upstream" } else { "downstream" }
        ),
        cost,
    );
    found.connections = inputs
        .connections
        .iter()
        .filter(|c| {
            c.client_to_server.retransmissions.total + c.server_to_client.retransmissions.total > 0
        })
        .count() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[
        EventKind::Retransmission,
        EventKind::FastRetransmission,
        EventKind::LostSegment,
    ]);
    found.wireshark_filter =
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.lost_segment"
            .into();
    found.explanation = format!(
        "Segments were lost {location}. Each loss costs a round trip \
        when duplicate ACKs trigger a fast retransmission, and a retransmission timeout \
        (at least 200 ms) when they cannot, and it halves the sender's congestion window."
    );
    found.fix = "Find the dropping hop: compare captures taken on both sides of it, and look \
        at interface drops and queue overflows on the path (policers, full buffers, bad links)."
        .into();
    found.what_if = format!("Without the loss about {:.0} ms of waiting would go.", cost);
    found.suspected =
        Some("the cost counts one round trip per resent segment; timeouts cost more".into());
    Some(found)
}
