//! One module per cause. Each detector returns the finding it sees, if any;
//! the severity and share are filled in by the caller.

mod app_failures;
mod chattiness;
mod delayed_ack;
mod latency;
mod loss;
mod options;
mod pool;
mod port_reuse;
mod rate_limit;
mod server;
mod setup;
mod small_writes;
mod window;

use tcp::ConnectionSummary;
use transactions::Transaction;

pub use app_failures::KIND as APPLICATION_FAILURE;
pub use rate_limit::rate_limits;
pub(crate) use setup::setup_wait_ms;

use crate::{Finding, Inputs, Severity};
use delayed_ack::Side;

pub fn run(inputs: &Inputs) -> Vec<Finding> {
    let pool = pool::pool_queueing(inputs);
    // A front tier queueing for its pool is not slow itself: the server's
    // think time and stalls are judged on the other transactions.
    let beyond_front: Vec<Transaction> = pool.as_ref().map_or_else(Vec::new, |pool| {
        inputs
            .transactions
            .iter()
            .filter(|t| !pool.is_front(t.connection))
            .cloned()
            .collect()
    });
    let server_inputs = Inputs {
        transactions: if pool.is_some() {
            &beyond_front
        } else {
            inputs.transactions
        },
        ..*inputs
    };
    let mut findings: Vec<Finding> = [
        setup::setup_failures(inputs),
        pool.map(|pool| pool.finding),
        server::server_think_time(&server_inputs),
        delayed_ack::delayed_ack(inputs, Side::Client),
        delayed_ack::delayed_ack(inputs, Side::Server),
        window::receive_window(inputs),
        rate_limit::link_bandwidth(inputs),
        port_reuse::port_reuse(inputs),
        options::tcp_options(inputs),
        options::mtu_black_hole(inputs),
        window::zero_window(inputs),
        loss::packet_loss(inputs),
        chattiness::chattiness(inputs),
        server::periodic_stalls(&server_inputs),
        small_writes::small_writes(inputs),
        app_failures::application_failures(inputs),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(saturation) = server::saturation(&server_inputs) {
        // Queueing is the part of the think time that saturation explains.
        for think in findings
            .iter_mut()
            .filter(|f| f.kind == "server_think_time")
        {
            think.cost_ms = (think.cost_ms - saturation.cost_ms).max(0.0);
        }
        findings.push(saturation);
    }
    // Failures are not slowness: they leave the latency summary its time.
    let nothing_explains_the_time = findings.iter().all(Finding::is_failure);
    findings.extend(latency::latency_split(inputs, nothing_explains_the_time));
    findings
}

pub(crate) fn finding(kind: &'static str, title: String, cost_ms: f64) -> Finding {
    Finding {
        kind,
        severity: Severity::Info,
        title,
        cost_ms,
        share: 0.0,
        connections: 0,
        transactions: 0,
        example_connection: None,
        frames: Vec::new(),
        wireshark_filter: String::new(),
        explanation: String::new(),
        fix: String::new(),
        what_if: String::new(),
        suspected: None,
        figures: Default::default(),
    }
}

pub(crate) fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The connection's round trip at the capture point: the handshake's, else data-to-ACK.
pub(crate) fn rtt_ms(connection: &ConnectionSummary) -> f64 {
    let handshake = &connection.handshake;
    match (handshake.rtt_to_server_ms, handshake.rtt_to_client_ms) {
        (Some(server), Some(client)) => server + client,
        _ => [&connection.client_to_server, &connection.server_to_client]
            .iter()
            .filter_map(|d| d.rtt.median_ms)
            .fold(0.0, f64::max),
    }
}

pub(crate) fn connection_by_id<'a>(inputs: &Inputs<'a>, id: u64) -> Option<&'a ConnectionSummary> {
    // Connections are listed by id; the lookup falls back to a search if not.
    let direct = inputs.connections.get(id as usize).filter(|c| c.id == id);
    direct.or_else(|| inputs.connections.iter().find(|c| c.id == id))
}

pub(crate) fn distinct_connections(ids: impl Iterator<Item = u64>) -> u64 {
    let mut ids: Vec<u64> = ids.collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len() as u64
}
