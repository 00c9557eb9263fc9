//! What the proxy did to each exchange it carried, read from the segments
//! it sent on the far side: a small segment held until the ACK of its
//! previous one (Nagle), the bytes of one message in fewer or more segments
//! than they came in (writes coalesced or split), a window one side shut.

use serde::Serialize;
use tcp::{Direction, Lacked, Release, SegmentView};
use transactions::Transaction;

use super::side::Side;

/// Something the proxy did that cost time or changed the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// The proxy held a small request segment toward the server until the
    /// server acknowledged its previous small segment.
    NagleTowardServer,
    /// The same, a response segment toward the client.
    NagleTowardClient,
    /// A message left the proxy in fewer segments than it came in.
    WritesCoalesced,
    /// A message left the proxy in more segments than it came in.
    WritesSplit,
    /// The server shut its receive window on the proxy.
    ServerZeroWindow,
    /// The client shut its receive window on the proxy.
    ClientZeroWindow,
    /// The proxy shut its receive window on the client or the server: it
    /// took in no more than it could pass on.
    ProxyZeroWindow,
}

/// One cause, summed over the exchanges it touched.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    pub kind: CauseKind,
    pub transactions: usize,
    /// The proxy's added time in those exchanges (the time the window was
    /// shut, for the window causes; none for a change of segmentation alone).
    pub cost_ms: f64,
}

/// One exchange as it passed the proxy.
pub struct Exchange<'a> {
    pub front_connection: u64,
    pub back_connection: u64,
    pub front: &'a Transaction,
    pub back: &'a Transaction,
}

impl Exchange<'_> {
    /// Last request byte in at the front to last request byte out at the back.
    pub fn request_added_ms(&self) -> f64 {
        (self.back.request_end_ns - self.front.request_end_ns) as f64 / 1e6
    }

    /// Last response byte in at the back to last response byte out at the front.
    pub fn response_added_ms(&self) -> Option<f64> {
        Some((self.front.response_end_ns? - self.back.response_end_ns?) as f64 / 1e6)
    }

    /// The causes this exchange shows, each with the time it cost.
    pub fn causes(&self, front: &Side, back: &Side) -> Vec<(CauseKind, f64)> {
        let mut causes = Vec::new();
        // The proxy is the back connection's client and the front connection's server.
        let request_out = (self.back.request_start_ns, self.back.request_end_ns);
        if back
            .data_between(self.back_connection, Direction::ClientToServer, request_out)
            .any(held_by_nagle)
        {
            causes.push((CauseKind::NagleTowardServer, self.request_added_ms()));
        }
        if let (Some(start), Some(end)) = (self.front.response_start_ns, self.front.response_end_ns)
        {
            if front
                .data_between(
                    self.front_connection,
                    Direction::ServerToClient,
                    (start, end),
                )
                .any(held_by_nagle)
            {
                let added = self.response_added_ms().unwrap_or(0.0);
                causes.push((CauseKind::NagleTowardClient, added));
            }
        }
        let segmentation = [
            (self.front.request_packets, self.back.request_packets),
            (self.back.response_packets, self.front.response_packets),
        ];
        for (came_in, went_out) in segmentation {
            if went_out == 0 || came_in == 0 {
                continue;
            }
            match went_out.cmp(&came_in) {
                std::cmp::Ordering::Less => causes.push((CauseKind::WritesCoalesced, 0.0)),
                std::cmp::Ordering::Greater => causes.push((CauseKind::WritesSplit, 0.0)),
                std::cmp::Ordering::Equal => {}
            }
        }
        causes
    }
}

/// A small segment that waited for the ACK of everything before it while a
/// small segment was outstanding — Nagle's algorithm — and that ACK reached
/// the sender after its previous segment left, so the sender stood waiting.
fn held_by_nagle(view: &SegmentView) -> bool {
    let Some(wait) = view.wait else {
        return false;
    };
    match wait.ended_by {
        Release::Ack {
            at_ns,
            lacked: Lacked::AllAcked {
                small_held: true, ..
            },
            ..
        } => at_ns + view.rtts.to_sender_ns > wait.since_ns,
        _ => false,
    }
}

/// Zero windows on either side of the proxy, by who shut the window, with
/// the time it stayed shut.
pub fn zero_windows(front: &Side, back: &Side, pairs: &[(u64, u64)]) -> Vec<Cause> {
    let summary = |side: &Side, id: u64| side.connections.iter().find(|c| c.id == id).cloned();
    let mut causes: Vec<Cause> = Vec::new();
    let mut add = |kind: CauseKind, shut: &tcp::DirectionSummary| {
        if shut.zero_windows == 0 {
            return;
        }
        match causes.iter_mut().find(|cause| cause.kind == kind) {
            Some(cause) => {
                cause.transactions += 1;
                cause.cost_ms += shut.zero_window_ms;
            }
            None => causes.push(Cause {
                kind,
                transactions: 1,
                cost_ms: shut.zero_window_ms,
            }),
        }
    };
    for &(front_id, back_id) in pairs {
        let (Some(front_connection), Some(back_connection)) =
            (summary(front, front_id), summary(back, back_id))
        else {
            continue;
        };
        // A direction's zero windows are those its sender advertised.
        add(
            CauseKind::ClientZeroWindow,
            &front_connection.client_to_server,
        );
        add(
            CauseKind::ProxyZeroWindow,
            &front_connection.server_to_client,
        );
        add(
            CauseKind::ProxyZeroWindow,
            &back_connection.client_to_server,
        );
        add(
            CauseKind::ServerZeroWindow,
            &back_connection.server_to_client,
        );
    }
    causes
}
