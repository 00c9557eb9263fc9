//! What a pass over the capture produced.

use capture::CaptureError;
use diagnose::{Finding, Limiter};
use tcp::{ConnectionSummary, Trimmed, UnansweredSyns};
use timeline::Tick;
use transactions::{ConnectionLedger, Transaction};

use crate::Counts;

/// What a pass over the capture produced.
pub struct Analysis {
    pub connections: Vec<ConnectionSummary>,
    /// What limits each connection's rate, in the order of `connections`.
    pub rate_limits: Vec<RateLimit>,
    /// Handshakes that never completed, per server, the most attempted first.
    pub unanswered_syns: Vec<UnansweredSyns>,
    /// What the memory budget left out of the lists (counted in totals and the timeline).
    pub trimmed: Trimmed,
    /// The memory budget the analysis kept to, in bytes.
    pub memory_budget_bytes: u64,
    /// Empty unless asked for.
    pub transactions: Vec<Transaction>,
    /// Each connection's time by part, summed over its transactions, with
    /// the longest stretch of each part as evidence; empty unless asked for.
    pub ledgers: Vec<ConnectionLedger>,
    /// Empty unless asked for.
    pub ticks: Vec<Tick>,
    /// Empty unless asked for; the costliest first.
    pub findings: Vec<Finding>,
    /// The diagnosis was asked for but given up, out of time after a [`stop`](crate::stop).
    pub undiagnosed: bool,
    pub counts: Counts,
    /// The first frame's time, whatever it carried: the capture's start, from
    /// which offsets are counted, as Wireshark's `frame.time_relative` is (and
    /// a selection's window resolved). None without frames.
    pub first_ns: Option<i64>,
    /// The error that stopped the read, if any: the results are then partial.
    /// Of several files, the first given that failed; the others read on.
    pub error: Option<CaptureError>,
    /// The errors of the other files that failed, in the order given.
    pub other_failures: Vec<CaptureError>,
    /// True when a [`stop`](crate::stop) was asked for before the analysis was over: the
    /// read, and perhaps the diagnosis, ended early, and the results are partial.
    pub interrupted: bool,
    /// When a tick asked for was too fine for the capture: the smallest that
    /// fits, in nanoseconds. The ticks are then left empty.
    pub tick_too_fine: Option<i64>,
}

impl Analysis {
    /// The errors of every file that failed, in the order given.
    pub fn failures(&self) -> Vec<CaptureError> {
        self.error
            .iter()
            .chain(&self.other_failures)
            .cloned()
            .collect()
    }
}

/// What limits a connection's rate each way: for a bulk flow (see
/// [`diagnose::limiter`]), read from the connection's time ledger; None for
/// shorter flows and without a ledger.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    pub connection: u64,
    pub client_to_server: Option<Limiter>,
    pub server_to_client: Option<Limiter>,
}

impl RateLimit {
    /// Every connection's, in their order, read from their `ledgers`.
    pub(crate) fn of_all(
        connections: &[ConnectionSummary],
        ledgers: &[ConnectionLedger],
    ) -> Vec<RateLimit> {
        connections
            .iter()
            .map(|connection| {
                let ledger = ConnectionLedger::of(ledgers, connection.id);
                let [client_to_server, server_to_client] = diagnose::limiter(connection, ledger);
                RateLimit {
                    connection: connection.id,
                    client_to_server,
                    server_to_client,
                }
            })
            .collect()
    }

    /// The rate limit of connection `id` among `rate_limits`, in connection order.
    pub fn of(rate_limits: &[RateLimit], id: u64) -> Option<&RateLimit> {
        rate_limits
            .binary_search_by_key(&id, |limit| limit.connection)
            .ok()
            .map(|at| &rate_limits[at])
    }
}

#[cfg(test)]
mod tests {
    use super::RateLimit;
    use diagnose::Limiter;

    fn limit(connection: u64, limiter: Option<Limiter>) -> RateLimit {
        RateLimit {
            connection,
            client_to_server: limiter,
            server_to_client: None,
        }
    }

    #[test]
    fn a_connections_rate_limit_is_found_by_its_id_among_ids_with_gaps() {
        let limits = [
            limit(0, None),
            limit(3, Some(Limiter::ReceiveWindow)),
            limit(7, Some(Limiter::Loss)),
        ];
        let found = |id| RateLimit::of(&limits, id).map(|l| l.client_to_server);
        assert_eq!(found(3), Some(Some(Limiter::ReceiveWindow)));
        assert_eq!(found(7), Some(Some(Limiter::Loss)));
        assert_eq!(found(4), None);
    }
}
