//! Application failures: requests answered with an HTTP error status,
//! handshakes aborted by a TLS alert, and requests the server reset instead
//! of answering. These are failures, not slowness: the finding costs no
//! time, and its severity comes from how many requests failed.

use std::collections::BTreeMap;

use transactions::{FailureKind, Transaction};

use super::distinct_connections;
use crate::rules::{self, EVIDENCE_FRAMES};
use crate::{Finding, FindingKind, Inputs};

pub fn application_failures(inputs: &Inputs) -> Option<Finding> {
    let failed: Vec<&Transaction> = inputs
        .transactions
        .iter()
        .filter(|t| t.failure.is_some())
        .collect();
    let first = *failed.first()?;
    let share = failed.len() as f64 / inputs.transactions.len() as f64;
    let kinds: Vec<FailureKind> = failed
        .iter()
        .filter_map(|t| t.failure.map(|f| f.kind))
        .collect();
    let mut found = Finding::new(
        FindingKind::ApplicationFailure,
        &title(inputs, &failed),
        0.0,
    );
    found.severity = rules::failure_severity(share);
    found.transactions = failed.len() as u64;
    found.connections = distinct_connections(failed.iter().map(|t| t.connection));
    found.example_connection = Some(first.connection);
    let mut frames: Vec<u64> = failed
        .iter()
        .filter_map(|t| t.failure.map(|f| f.frame))
        .collect();
    frames.sort_unstable();
    frames.truncate(EVIDENCE_FRAMES);
    found.frames = frames;
    found.wireshark_filter = wireshark_filter(&kinds);
    found.explanation = explanation(&failed);
    found.fix = fix(&kinds);
    found.what_if = format!(
        "Succeeding, these {} would do what was asked; today the {:.1} ms they took bought \
         nothing, and a client that tries again pays it twice.",
        counted(failed.len(), "request"),
        failed.iter().map(|t| t.duration_ms).sum::<f64>()
    );
    for kind in [
        FailureKind::HttpStatus,
        FailureKind::TlsAlert,
        FailureKind::ServerReset,
    ] {
        let count = kinds.iter().filter(|&&k| k == kind).count();
        found.figures.insert(figure_name(kind), count as f64);
    }
    found.figures.insert("failed_share", share);
    Some(found)
}

/// `2 of 2 requests failed: HTTP 403 ×2 (POST /flashmail.asp → 403), at 10.0.0.2:80`.
fn title(inputs: &Inputs, failed: &[&Transaction]) -> String {
    let mut groups: BTreeMap<String, Vec<&Transaction>> = BTreeMap::new();
    for t in failed {
        if let Some(failure) = t.failure {
            groups.entry(failure.describe()).or_default().push(t);
        }
    }
    let mut groups: Vec<(String, Vec<&Transaction>)> = groups.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let parts: Vec<String> = groups
        .iter()
        .map(|(what, transactions)| group_text(what, transactions))
        .collect();
    format!(
        "{} of {} failed: {}{}",
        failed.len(),
        counted(inputs.transactions.len(), "request"),
        parts.join("; "),
        culprit(inputs, failed)
    )
}

/// `HTTP 404 ×3 (GET /missing → 404)`: a request names an HTTP failure or a
/// reset; a TLS alert names itself.
fn group_text(what: &str, transactions: &[&Transaction]) -> String {
    let times = match transactions.len() {
        1 => String::new(),
        count => format!(" ×{count}"),
    };
    let first = transactions[0];
    let named_by_request = first
        .failure
        .is_some_and(|failure| failure.kind != FailureKind::TlsAlert);
    match first.name.as_deref() {
        Some(name) if named_by_request => format!("{what}{times} ({name})"),
        _ => format!("{what}{times}"),
    }
}

/// `, at 10.0.0.2:80` when every failure came from one server, `, at
/// 10.0.0.2` when from one host; nothing otherwise.
fn culprit(inputs: &Inputs, failed: &[&Transaction]) -> String {
    let servers: Vec<decode::Endpoint> = failed
        .iter()
        .filter_map(|t| inputs.connection(t.connection))
        .map(|c| c.server)
        .collect();
    let Some(first) = servers.first() else {
        return String::new();
    };
    if servers.iter().all(|server| server == first) {
        format!(", at {first}")
    } else if servers.iter().all(|server| server.ip == first.ip) {
        format!(", at {}", first.ip)
    } else {
        String::new()
    }
}

fn figure_name(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::HttpStatus => "http_errors",
        FailureKind::TlsAlert => "tls_alerts",
        FailureKind::ServerReset => "server_resets",
    }
}

fn wireshark_filter(kinds: &[FailureKind]) -> String {
    let mut terms = Vec::new();
    if kinds.contains(&FailureKind::HttpStatus) {
        terms.push("http.response.code >= 400");
    }
    if kinds.contains(&FailureKind::TlsAlert) {
        terms.push("tls.alert_message");
    }
    if kinds.contains(&FailureKind::ServerReset) {
        terms.push("tcp.flags.reset == 1");
    }
    terms.join(" || ")
}

fn explanation(failed: &[&Transaction]) -> String {
    let count = |kind| {
        failed
            .iter()
            .filter(|t| t.failure.is_some_and(|f| f.kind == kind))
            .count()
    };
    let mut text = Vec::new();
    let http = count(FailureKind::HttpStatus);
    if http > 0 {
        text.push(format!(
            "The server answered {} with an error status: 4xx means it refused the request \
             (not found, forbidden, unauthorized, a method it does not take), 5xx that it \
             failed while handling it.",
            counted(http, "request")
        ));
    }
    let tls = count(FailureKind::TlsAlert);
    if tls > 0 {
        text.push(format!(
            "{} ended in a TLS alert: one side refused the other's certificate, protocol \
             version or cipher suites, so no application data could pass.",
            counted(tls, "exchange")
        ));
    }
    let resets = count(FailureKind::ServerReset);
    if resets > 0 {
        text.push(format!(
            "The server reset the connection while {} waited for its answer: the \
             application closed its socket (it crashed, rejected the request or timed out) \
             instead of answering.",
            counted(resets, "request")
        ));
    }
    text.push(
        "However fast they were, these requests did not do what was asked: a failure, not \
         slowness."
            .into(),
    );
    text.join(" ")
}

fn fix(kinds: &[FailureKind]) -> String {
    let mut text = Vec::new();
    if kinds.contains(&FailureKind::HttpStatus) {
        text.push(
            "Look up the failing requests in the server's access and error logs: 401 and 403 \
             are credentials or permissions, 404 a wrong URL, 405 a method the server does \
             not take, 5xx a fault in the server or behind it.",
        );
    }
    if kinds.contains(&FailureKind::TlsAlert) {
        text.push(
            "Check the server's certificate chain against the client's trust store \
             (unknown_ca, bad_certificate, certificate_expired) and the TLS versions and \
             cipher suites both ends allow (protocol_version, handshake_failure).",
        );
    }
    if kinds.contains(&FailureKind::ServerReset) {
        text.push(
            "Read the server application's log at the time of each reset: a crash, a \
             rejected request, or a proxy or load balancer giving up.",
        );
    }
    text.join(" ")
}

fn counted(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}
