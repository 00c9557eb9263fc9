//! Rows that carry more than the stage's own record, as the JSON lines do:
//! a connection with what limits its rate, a ledger with its parts summed by kind.

use diagnose::Limiter;
use serde::Serialize;
use tcp::ConnectionSummary;
use transactions::{ConnectionLedger, Latency};

/// What limits a connection's rate, the column its JSON line ends with.
#[derive(Serialize)]
pub(crate) struct RateLimitRow {
    rate_limit: RateLimit,
}

#[derive(Serialize)]
struct RateLimit {
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
    /// What limits each direction of `connection`, read from its ledger.
    fn of(connection: &ConnectionSummary, ledger: Option<&ConnectionLedger>) -> Self {
        let [client_to_server, server_to_client] = diagnose::limiter(connection, ledger);
        RateLimitRow {
            rate_limit: RateLimit {
                client_to_server,
                server_to_client,
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
    ledgers: &[ConnectionLedger],
) -> Vec<RateLimitRow> {
    connections
        .iter()
        .map(|c| RateLimitRow::of(c, ConnectionLedger::of(ledgers, c.id)))
        .collect()
}

pub(crate) fn ledgers(ledgers: &[ConnectionLedger]) -> Vec<LedgerRow<'_>> {
    ledgers.iter().map(LedgerRow::of).collect()
}
