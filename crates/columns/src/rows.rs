//! Rows that carry more than the stage's own record, as the JSON lines do:
//! a connection with what limits its rate, a ledger with its parts summed by kind.

use serde::Serialize;
use tcp::ConnectionSummary;
use transactions::{ConnectionLedger, Latency};

#[derive(Serialize)]
pub(crate) struct ConnectionRow<'a> {
    #[serde(flatten)]
    connection: &'a ConnectionSummary,
    rate_limit: RateLimit,
}

#[derive(Serialize)]
struct RateLimit {
    client_to_server: Option<&'static str>,
    server_to_client: Option<&'static str>,
}

#[derive(Serialize)]
pub(crate) struct LedgerRow<'a> {
    #[serde(flatten)]
    ledger: &'a ConnectionLedger,
    latency: Latency,
}

impl<'a> ConnectionRow<'a> {
    /// `connection` with what limits each direction's rate, read from its ledger.
    fn of(connection: &'a ConnectionSummary, ledger: Option<&ConnectionLedger>) -> Self {
        let [client_to_server, server_to_client] = diagnose::limiter(connection, ledger);
        ConnectionRow {
            connection,
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

pub(crate) fn connections<'a>(
    connections: &'a [ConnectionSummary],
    ledgers: &[ConnectionLedger],
) -> Vec<ConnectionRow<'a>> {
    connections
        .iter()
        .map(|c| ConnectionRow::of(c, ConnectionLedger::of(ledgers, c.id)))
        .collect()
}

pub(crate) fn ledgers(ledgers: &[ConnectionLedger]) -> Vec<LedgerRow<'_>> {
    ledgers.iter().map(LedgerRow::of).collect()
}
