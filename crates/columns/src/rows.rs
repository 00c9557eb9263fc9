//! Rows that carry more than the stage's own record, as the JSON lines do:
//! a connection with what limits its rate, a ledger with its parts summed by kind.

use serde::Serialize;
use tcp::ConnectionSummary;
use transactions::{ConnectionLedger, Latency};

use pipeline::Analysis;

#[derive(Serialize)]
pub struct ConnectionRow<'a> {
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
pub struct LedgerRow<'a> {
    #[serde(flatten)]
    ledger: &'a ConnectionLedger,
    latency: Latency,
}

pub fn connections(analysis: &Analysis) -> Vec<ConnectionRow<'_>> {
    let ledgers = &analysis.ledgers;
    analysis
        .connections
        .iter()
        .map(|connection| {
            // Ledgers are sorted by connection id.
            let ledger = ledgers
                .binary_search_by_key(&connection.id, |ledger| ledger.connection)
                .ok()
                .map(|at| &ledgers[at]);
            let [client_to_server, server_to_client] = diagnose::limiter(connection, ledger);
            ConnectionRow {
                connection,
                rate_limit: RateLimit {
                    client_to_server,
                    server_to_client,
                },
            }
        })
        .collect()
}

pub fn ledgers(analysis: &Analysis) -> Vec<LedgerRow<'_>> {
    analysis
        .ledgers
        .iter()
        .map(|ledger| LedgerRow {
            ledger,
            latency: Latency::of(&ledger.ledger),
        })
        .collect()
}
