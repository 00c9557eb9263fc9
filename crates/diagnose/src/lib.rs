//! Connections, transactions and events in; ranked findings out.
//!
//! Each detector looks for one cause and, where it finds it, states what it
//! costs, which connections and frames prove it (with a Wireshark display
//! filter), the fix, and what the fix would buy. Findings are ranked by cost;
//! the first is the thing to fix first. A finding whose evidence is indirect
//! says so in `suspected`. The detectors here cover setup failures, server
//! think time, Nagle and delayed ACK, receive windows, zero windows, loss,
//! chattiness, periodic stalls, tiny writes, server saturation, the link's
//! bandwidth, ports reused inside TIME_WAIT, queueing for a connection pool,
//! SYN options and MSS, and MTU black holes, with a summary of where the
//! latency sits. Application failures (HTTP error statuses, TLS alerts,
//! resets instead of answers) are findings too, ranked by severity, not time.

mod detectors;
mod evidence;

use std::collections::BTreeMap;

use serde::Serialize;
use tcp::ConnectionSummary;
use timeline::Tick;
use transactions::Transaction;

pub use detectors::rate_limits;
pub use evidence::Evidence;

/// How much a finding matters, from its share of the time at stake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    fn of_share(share: f64) -> Severity {
        if share >= 0.2 {
            Severity::Critical
        } else if share >= 0.05 {
            Severity::Warning
        } else {
            Severity::Info
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// One cause, with what it costs and what proves it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: &'static str,
    pub severity: Severity,
    pub title: String,
    /// Time lost to this cause, in milliseconds.
    pub cost_ms: f64,
    /// Cost as a share of the time at stake (all transactions, or all connections).
    pub share: f64,
    pub connections: u64,
    pub transactions: u64,
    pub example_connection: Option<u64>,
    /// Frames that show the cause (the first few).
    pub frames: Vec<u64>,
    pub wireshark_filter: String,
    pub explanation: String,
    pub fix: String,
    pub what_if: String,
    /// Why the evidence is not conclusive, when it is not.
    pub suspected: Option<String>,
    /// The measured figures behind the title, by name (`stall_ms`, `link_bytes_per_s`).
    pub figures: BTreeMap<&'static str, f64>,
}

impl Finding {
    /// A failure, not slowness: it costs no time, and its severity comes from
    /// how many requests failed.
    pub fn is_failure(&self) -> bool {
        self.kind == detectors::APPLICATION_FAILURE
    }
}

/// What the detectors read.
pub struct Inputs<'a> {
    pub connections: &'a [ConnectionSummary],
    pub transactions: &'a [Transaction],
    pub evidence: &'a Evidence,
    /// The capture's per-tick series (retransmissions, throughput, connections).
    pub ticks: &'a [Tick],
}

impl Inputs<'_> {
    /// The time at stake: all transaction time and the time connections spent
    /// opening (or failing to), or all connection time when neither was seen.
    fn total_ms(&self) -> f64 {
        let transactions: f64 = self.transactions.iter().map(|t| t.duration_ms).sum();
        let setups: f64 = self
            .connections
            .iter()
            .filter(|c| c.handshake.syn_ns.is_some())
            .map(detectors::setup_wait_ms)
            .sum();
        if transactions + setups > 0.0 {
            return transactions + setups;
        }
        self.connections.iter().map(|c| c.duration_ms).sum()
    }
}

/// Every finding, the most severe first; within a severity failures first,
/// then the costliest.
pub fn diagnose(inputs: &Inputs) -> Vec<Finding> {
    let total_ms = inputs.total_ms().max(f64::MIN_POSITIVE);
    let mut findings = detectors::run(inputs);
    for finding in &mut findings {
        finding.share = (finding.cost_ms / total_ms).min(1.0);
        if !finding.is_failure() {
            finding.severity = Severity::of_share(finding.share);
        }
    }
    findings.sort_by(|a, b| {
        let rank = |f: &Finding| (f.severity, f.is_failure());
        rank(b).cmp(&rank(a)).then(b.cost_ms.total_cmp(&a.cost_ms))
    });
    findings
}
