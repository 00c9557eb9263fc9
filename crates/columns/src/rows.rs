//! Rows that carry more than the stage's own record, as the JSON lines do:
//! a connection with what limits its rate, a ledger with its parts summed by kind.

use diagnose::Limiter;
use pipeline::RateLimit;
use serde::Serialize;
use tcp::ConnectionSummary;
use transactions::{ConnectionLedger, Latency};

/// What limits a connection's rate, the column its JSON line ends with.
#[derive(Serialize, record::Columns)]
pub(crate) struct RateLimitRow {
    rate_limit: RateLimitCells,
}

#[derive(Serialize, record::Columns)]
struct RateLimitCells {
    client_to_server: Option<Limiter>,
    server_to_client: Option<Limiter>,
}

#[derive(Serialize)]
pub(crate) struct LedgerRow<'a> {
    #[serde(flatten)]
    ledger: &'a ConnectionLedger,
    latency: Latency,
}

impl RateLimitRow {
    /// What limits each direction of `connection`, as the analysis found it.
    fn of(connection: &ConnectionSummary, rate_limits: &[RateLimit]) -> Self {
        let limit = RateLimit::of(rate_limits, connection.id);
        RateLimitRow {
            rate_limit: RateLimitCells {
                client_to_server: limit.and_then(|limit| limit.client_to_server),
                server_to_client: limit.and_then(|limit| limit.server_to_client),
            },
        }
    }
}

impl<'a> LedgerRow<'a> {
    fn of(ledger: &'a ConnectionLedger) -> Self {
        LedgerRow {
            ledger,
            latency: Latency::of(&ledger.ledger),
        }
    }
}

pub(crate) fn rate_limits(
    connections: &[ConnectionSummary],
    rate_limits: &[RateLimit],
) -> Vec<RateLimitRow> {
    connections
        .iter()
        .map(|c| RateLimitRow::of(c, rate_limits))
        .collect()
}

pub(crate) fn ledgers(ledgers: &[ConnectionLedger]) -> Vec<LedgerRow<'_>> {
    ledgers.iter().map(LedgerRow::of).collect()
}
