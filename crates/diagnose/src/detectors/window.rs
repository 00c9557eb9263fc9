//! The receiver's window: throughput pinned at window / RTT, and zero windows.

use tcp::{ConnectionSummary, DirectionSummary, EventKind};

use super::{finding, rtt_ms};
use crate::{Finding, Inputs};

/// Transfers shorter than this are too short to be window-limited.
pub(crate) const BULK_BYTES: u64 = 256 * 1024;
/// Below this round trip a capture's timing cannot show a window limit.
const MIN_CREDIBLE_RTT_MS: f64 = 0.1;

pub fn receive_window(inputs: &Inputs) -> Option<Finding> {
    let limited: Vec<(&ConnectionSummary, &DirectionSummary, u64, f64)> = inputs
        .connections
        .iter()
        .flat_map(|c| {
            [
                (c, &c.client_to_server, &c.server_to_client),
                (c, &c.server_to_client, &c.client_to_server),
            ]
        })
        .filter_map(|(c, data, receiver)| {
            let (window, rtt) = (receiver.window.max, rtt_ms(c));
            window_limited(c, data, window).then_some((c, data, window, rtt))
        })
        .collect();
    let &(connection, data, window, rtt) = limited.first()?;
    let rate = data.unique_payload_bytes as f64 / (connection.duration_ms / 1e3);
    let cost: f64 = limited.iter().map(|(c, ..)| c.duration_ms / 2.0).sum();
    let scaling_off = [
        connection.handshake.client_options,
        connection.handshake.server_options,
    ]
    .iter()
    .flatten()
    .any(|options| options.window_scale.is_none());
    let mut found = finding(
        "receive_window_limited",
        format!(
            "Throughput pinned at {:.2} MB/s by a {:.1} kB receive window over a {rtt:.1} ms \
             round trip (window / RTT)",
            rate / 1e6,
            window as f64 / 1e3
        ),
        cost,
    );
    found.connections = limited.len() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[EventKind::WindowFull]);
    found.wireshark_filter = format!(
        "tcp.stream == {} && tcp.analysis.window_full",
        connection.id
    );
    found.explanation = format!(
        "The sender keeps a full window in flight ({} bytes at most) and then waits for ACKs: \
         the receiver's advertised window, not the link, sets the rate.{}",
        data.max_bytes_in_flight,
        if scaling_off {
            " Window scaling is off: a SYN lacked the window-scale option, so the window cannot exceed 64 kB."
        } else {
            ""
        }
    );
    found.fix = format!(
        "Give the receiver a receive buffer of at least the bandwidth-delay product (link rate × \
         {rtt:.1} ms, for 1 Gbit/s {:.0} kB), and keep window scaling on at both ends and in \
         every middlebox.",
        1e9 / 8.0 * rtt / 1e3 / 1e3
    );
    found.what_if = format!(
        "Each doubling of the window doubles the rate until the link is full: {:.1} kB would \
         allow {:.2} MB/s.",
        2.0 * window as f64 / 1e3,
        2.0 * rate / 1e6
    );
    found.suspected = Some("the link's own rate is not known from the capture; the cost assumes it could carry twice the rate".into());
    Some(found)
}

/// A bulk transfer that keeps the receiver's whole window in flight and
/// moves at about window / RTT: the window, not the path, sets its rate.
pub(crate) fn window_limited(c: &ConnectionSummary, data: &DirectionSummary, window: u64) -> bool {
    let rtt = rtt_ms(c);
    let rate = data.unique_payload_bytes as f64 / (c.duration_ms / 1e3).max(1e-9);
    let cap = window as f64 / (rtt / 1e3).max(1e-9);
    data.unique_payload_bytes >= BULK_BYTES
        && rtt >= MIN_CREDIBLE_RTT_MS
        && data.max_bytes_in_flight as f64 >= 0.8 * window as f64
        && (0.5 * cap..=1.25 * cap).contains(&rate)
}

pub fn zero_window(inputs: &Inputs) -> Option<Finding> {
    let stopped: Vec<(&ConnectionSummary, &'static str, &DirectionSummary)> = inputs
        .connections
        .iter()
        .flat_map(|c| {
            [
                (c, "client", &c.client_to_server),
                (c, "server", &c.server_to_client),
            ]
        })
        .filter(|(_, _, d)| d.zero_windows > 0)
        .collect();
    let &(connection, side, _) = stopped
        .iter()
        .max_by(|a, b| a.2.zero_window_ms.total_cmp(&b.2.zero_window_ms))?;
    let cost: f64 = stopped.iter().map(|(_, _, d)| d.zero_window_ms).sum();
    let count: u64 = stopped.iter().map(|(_, _, d)| d.zero_windows).sum();
    let mut found = finding(
        "zero_window",
        format!(
            "The {side} stopped reading: zero window for {:.0} ms in all ({count} zero-window \
             advertisements)",
            cost
        ),
        cost,
    );
    found.connections = stopped.len() as u64;
    found.example_connection = Some(connection.id);
    found.frames = inputs.evidence.frames(&[EventKind::ZeroWindow]);
    found.wireshark_filter = "tcp.analysis.zero_window || tcp.analysis.zero_window_probe".into();
    found.explanation = format!(
        "The {side}'s receive buffer filled because its application did not read fast enough; \
         it advertised a zero window and the sender had to stop and probe."
    );
    found.fix = format!(
        "Find what the {side}'s application does between reads (disk, CPU, locks) and read \
         sooner; a larger receive buffer only postpones the stop."
    );
    found.what_if = format!(
        "Reading promptly would save up to {:.0} ms of stopped transfer.",
        cost
    );
    Some(found)
}
