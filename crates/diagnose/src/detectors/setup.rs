//! Connection-setup failures: SYNs sent again (and after how long), attempts
//! never answered, refused, or reset unanswered after a long wait, and
//! whether they rise with the load (a listen backlog overflowing).

use rustc_hash::FxHashMap;
use tcp::stack::LINUX_SYN_RETRIES;
use tcp::{CloseHow, ConnState, ConnectionSummary, EventKind};

use super::counted;
use crate::median;
use crate::rules::{
    self, GAVE_UP_AFTER_MS, LOAD_ATTEMPTS, LOAD_BUSY_FAILED_SHARE, LOAD_QUIET_ATTEMPTS,
};
use crate::units::duration;
use crate::{Finding, FindingKind, Inputs, Severity};

/// What went wrong with one connection's setup, if anything.
#[derive(Clone, Copy, PartialEq)]
enum Trouble {
    Retried,
    Unanswered,
    Refused,
    ResetUnanswered,
}

fn trouble(c: &ConnectionSummary) -> Option<Trouble> {
    // A server that closed its side after the client closed its own left no
    // one waiting for an answer (an upload's answer is its ACKs and FIN),
    // whatever reset came after.
    let server_silent = c.server_to_client.payload_bytes == 0 && !c.closed_by_both();
    match c.state {
        ConnState::S0 => Some(Trouble::Unanswered),
        ConnState::REJ => Some(Trouble::Refused),
        _ if c.close.how == CloseHow::Rst && server_silent && c.duration_ms >= GAVE_UP_AFTER_MS => {
            Some(Trouble::ResetUnanswered)
        }
        _ if !c.handshake.syn_retries_ns.is_empty() || c.handshake.syn_ack_retries > 0 => {
            Some(Trouble::Retried)
        }
        _ => None,
    }
}

/// Connections that failed to open (never answered, refused, abandoned)
/// or, once open, waited unanswered until reset: worked out once for a
/// diagnosis, for the time at stake and for their finding.
pub struct FailedSetups {
    refusal_waits: RefusalWaits,
    /// The time they spent failing.
    pub ms: f64,
}

impl FailedSetups {
    pub fn of(inputs: &Inputs) -> Self {
        let refusal_waits = refusal_waits_ms(inputs.connections);
        let ms = inputs
            .connections
            .iter()
            .map(|c| unanswered_ms(inputs, c, &refusal_waits))
            .sum();
        FailedSetups { refusal_waits, ms }
    }
}

/// A connection's time outside its ledger when it failed: all of it for one
/// that never opened (for a refused attempt, until the client's next one
/// where it got past the refusal), the time after its transactions for one
/// reset unanswered.
fn unanswered_ms(inputs: &Inputs, c: &ConnectionSummary, refusal_waits: &RefusalWaits) -> f64 {
    match trouble(c) {
        Some(Trouble::Refused) => refusal_waits.get(&c.id).copied().unwrap_or(c.duration_ms),
        _ if c.state.failed_setup() => c.duration_ms,
        Some(Trouble::ResetUnanswered) => {
            let charged = inputs.ledger(c.id).map_or(0.0, |l| l.ledger.total_ms());
            (c.duration_ms - charged).max(0.0)
        }
        _ => 0.0,
    }
}

/// For each refused attempt that its client got past, by connection: how
/// long until its next attempt at the same server.
type RefusalWaits = FxHashMap<u64, f64>;

/// A refused attempt held its client back until the client tried the same
/// server again, when one of its later attempts opened: the client wanted
/// that connection and waited for it. A refusal it never got past (it gave
/// up, or every attempt failed) costs only its own exchange.
fn refusal_waits_ms(connections: &[ConnectionSummary]) -> RefusalWaits {
    let mut attempts: Vec<&ConnectionSummary> = connections.iter().collect();
    attempts.sort_by_key(|c| (c.client.ip, c.server, c.first_ns));
    let mut waits = RefusalWaits::default();
    for tries in attempts.chunk_by(|a, b| (a.client.ip, a.server) == (b.client.ip, b.server)) {
        let last_opened = tries.iter().rposition(|c| !c.state.failed_setup());
        for (at, pair) in tries.windows(2).enumerate() {
            let [refused, next] = [pair[0], pair[1]];
            if refused.state == ConnState::REJ && last_opened.is_some_and(|opened| opened > at) {
                waits.insert(refused.id, (next.first_ns - refused.first_ns) as f64 / 1e6);
            }
        }
    }
    waits
}

/// How loud the waits of the `troubled` attempts are, from the time they
/// cost past their refusals: a refusal answers its SYN within a round trip,
/// the time any exchange spends, so only its failure counts (see
/// [`rules::setup_failure_severity`]), unless the client tried again and
/// got through (it waited for that connection); unanswered SYNs, their
/// retries and connections reset unanswered are waits.
fn waited_severity(
    troubled: &[(&ConnectionSummary, Trouble)],
    refusal_waits: &RefusalWaits,
    cost: f64,
    total_ms: f64,
) -> Severity {
    let given_up = troubled
        .iter()
        .filter(|(c, t)| *t == Trouble::Refused && !refusal_waits.contains_key(&c.id))
        .map(|(c, _)| c.duration_ms);
    let waiting = troubled.len() - given_up.clone().count();
    let waited_ms = (cost - given_up.sum::<f64>()).max(0.0);
    if waiting == 0 {
        return Severity::Info;
    }
    let per_attempt = waited_ms / waiting as f64;
    let felt = rules::PerAction {
        typical_ms: per_attempt,
        worst_ms: per_attempt,
        actions: waiting as u64,
        transactions: waiting as u64,
    };
    rules::severity(felt, waited_ms / total_ms, true, true)
}

/// Connections that failed to open or waited for SYN retries; `setup_ms` is
/// the SYN-retry time the ledgers charged to setup, `total_ms` the time at stake.
pub fn setup_failures(
    inputs: &Inputs,
    setup_ms: f64,
    failed: &FailedSetups,
    total_ms: f64,
) -> Option<Finding> {
    let troubled: Vec<(&ConnectionSummary, Trouble)> = inputs
        .connections
        .iter()
        .filter_map(|c| Some((c, trouble(c)?)))
        .collect();
    let cost = setup_ms + failed.ms;
    let refusal_waits = &failed.refusal_waits;
    if troubled.is_empty() || cost <= 0.0 {
        return None;
    }
    let of = |kind: Trouble| {
        troubled
            .iter()
            .filter(move |(_, t)| *t == kind)
            .map(|(c, _)| *c)
    };
    // A refused attempt sent again was answered each time: it did not wait for retries.
    let retried: Vec<&ConnectionSummary> = troubled
        .iter()
        .filter(|(c, t)| *t != Trouble::Refused && !c.handshake.syn_retries_ns.is_empty())
        .map(|(c, _)| *c)
        .collect();
    let resets: Vec<f64> = of(Trouble::ResetUnanswered)
        .map(|c| c.duration_ms)
        .collect();
    let waits: Vec<f64> = retried.iter().map(|c| setup_wait_ms(c)).collect();
    // The client's SYN got through but the server's answer (or the client's
    // ACK of it) was lost: the server sent its SYN-ACK again.
    let syn_ack_resent: Vec<&ConnectionSummary> = of(Trouble::Retried)
        .filter(|c| c.handshake.syn_retries_ns.is_empty() && c.handshake.syn_ack_retries > 0)
        .collect();
    let most_retried = retried.iter().max_by_key(|c| c.handshake.syn_retries);
    let load = failures_against_load(inputs.connections);
    let mut clauses = Vec::new();
    if let Some(c) = most_retried {
        clauses.push(format!(
            "{} waited for SYN retries (after {})",
            counted(retried.len(), "connection attempt"),
            retry_offsets(c)
        ));
    }
    if let Some(c) = syn_ack_resent.first() {
        clauses.push(format!(
            "{} waited for the server's SYN-ACK sent again (after {})",
            counted(syn_ack_resent.len(), "connection attempt"),
            syn_ack_offset(c)
        ));
    }
    for (kind, words) in [
        (Trouble::Unanswered, "never answered"),
        (Trouble::Refused, "refused"),
    ] {
        let count = of(kind).count();
        if count > 0 {
            clauses.push(format!("{} {words}", counted(count, "attempt")));
        }
    }
    let got_past: Vec<f64> = refusal_waits.values().copied().collect();
    if !got_past.is_empty() {
        clauses.push(format!(
            "the client tried again and got through {} later",
            duration(median(got_past.clone()))
        ));
    }
    if !resets.is_empty() {
        clauses.push(format!(
            "{} reset after {} without an answer",
            counted(resets.len(), "connection"),
            duration(median(resets.clone()))
        ));
    }
    if let Some(load) = &load {
        clauses.push(format!(
            "rising with load ({:.0}% failed with {} or more connections open, none with fewer)",
            100.0 * load.busy_rate,
            load.threshold,
        ));
    }
    let title = clauses.join("; ") + &culprit(&troubled);
    let mut found = Finding::new(FindingKind::ConnectionSetupFailure, &title, cost);
    found.connections = troubled.len() as u64;
    let example = most_retried
        .or(syn_ack_resent.first())
        .copied()
        .unwrap_or(troubled[0].0);
    found.example_connection = Some(example.id);
    let per_connection = cost / troubled.len() as f64;
    let attempts = troubled.len() as u64;
    let never_opened = troubled
        .iter()
        .filter(|(c, _)| c.state.failed_setup())
        .count();
    found.severity = waited_severity(&troubled, refusal_waits, cost, total_ms).max(
        rules::setup_failure_severity(never_opened, inputs.connections.len()),
    );
    let worst_attempt = troubled
        .iter()
        .map(|(c, _)| setup_wait_ms(c).max(unanswered_ms(inputs, c, refusal_waits)))
        .fold(0.0, f64::max);
    found.figures.insert("per_action_ms", per_connection);
    found.figures.insert("worst_action_ms", worst_attempt);
    found.figures.insert("actions", attempts as f64);
    found.figures.insert("never_opened", never_opened as f64);
    found.share = (cost / total_ms).min(1.0);
    found.frames = inputs
        .evidence
        .frames_on(example.id, &[EventKind::SynRetransmission]);
    found.wireshark_filter = if !retried.is_empty() {
        "tcp.flags.syn == 1 && tcp.flags.ack == 0 && tcp.analysis.retransmission".into()
    } else if !syn_ack_resent.is_empty() {
        "tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.analysis.retransmission".into()
    } else {
        "tcp.flags.reset == 1 || (tcp.flags.syn == 1 && tcp.flags.ack == 0)".into()
    };
    found.explanation = explanation(
        most_retried.copied(),
        &syn_ack_resent,
        of(Trouble::Refused).count(),
        &got_past,
        &resets,
        load.as_ref(),
    );
    found.fix = "Check the server's listen backlog (ss -lnt: Recv-Q against Send-Q) and raise \
        it with the application's backlog and net.core.somaxconn; look for SYN drops on \
        firewalls and load balancers, for SNAT port exhaustion, and for idle or connect \
        timeouts on proxies that reset waiting connections."
        .into();
    let these = match troubled.len() {
        1 => "this connection",
        _ => "these connections",
    };
    found.what_if = if waits.is_empty() {
        format!(
            "Answered at once, {these} would save {} of waiting.",
            duration(cost)
        )
    } else {
        format!(
            "Answered at once, {these} would open in one round trip instead of a median {}.",
            duration(median(waits))
        )
    };
    Some(found)
}

fn explanation(
    most_retried: Option<&ConnectionSummary>,
    syn_ack_resent: &[&ConnectionSummary],
    refused: usize,
    got_past: &[f64],
    resets: &[f64],
    load: Option<&Load>,
) -> String {
    let mut text = String::new();
    if let Some(c) = most_retried {
        text += &format!(
            "The client's SYNs went unanswered, so it waited a retransmission timeout before \
             each new try (connection {}: after {}). SYNs are lost when the server's listen \
             queue is full, a firewall or load balancer drops them, or SNAT runs out of ports.",
            c.id,
            retry_offsets(c)
        );
    }
    if let Some(c) = syn_ack_resent.first() {
        text += &format!(
            " The server's SYN-ACK went unacknowledged, so it sent it again after a \
             retransmission timeout (connection {}: after {}): the SYN-ACK was lost on its \
             way to the client, or the client's ACK on its way back.",
            c.id,
            syn_ack_offset(c)
        );
    }
    if refused > 0 {
        text += &format!(
            " {} refused with a reset: nothing listened on the port, or a firewall \
             rejected it.",
            counted(refused, "attempt")
        );
    }
    if !got_past.is_empty() {
        text += &format!(
            " The client tried the same server again and got through a median {} later: \
             it waited that long for a connection it wanted (a service restarting, a \
             listener not yet up, a connection limit).",
            duration(median(got_past.to_vec()))
        );
    }
    if !resets.is_empty() {
        text += &format!(
            " {} reset after a median {} without a byte from the server: \
             something on the way (a proxy, a load balancer, the server's own timeout) gave up \
             waiting.",
            match resets.len() {
                1 => "1 connection was".to_string(),
                n => format!("{n} connections were"),
            },
            duration(median(resets.to_vec()))
        );
    }
    if let Some(load) = load {
        text += &format!(
            " Failures rise with load: {:.0}% of attempts made with {} or more connections \
             open failed and none with fewer, as when a listen backlog overflows.",
            100.0 * load.busy_rate,
            load.threshold,
        );
    }
    text.trim_start().to_string()
}

/// `, all to 10.0.0.2:80` when every troubled setup went to one server (or
/// `, all to 10.0.0.2` to one host); nothing otherwise.
fn culprit(troubled: &[(&ConnectionSummary, Trouble)]) -> String {
    let Some((first, _)) = troubled.first() else {
        return String::new();
    };
    if troubled.iter().all(|(c, _)| c.server == first.server) {
        format!(", all to {}", first.server)
    } else if troubled.iter().all(|(c, _)| c.server.ip == first.server.ip) {
        format!(", all to {}", first.server.ip)
    } else {
        String::new()
    }
}

/// How setup failures follow the number of connections open at each attempt.
struct Load {
    /// Connections open at the attempt, from which on failures are counted as "busy".
    threshold: usize,
    busy_rate: f64,
}

/// Failure rates of attempts made with at least as many connections open as
/// at the first failure, against those made with fewer, on the server that
/// failed most: rising with load when none of a few quiet attempts failed
/// and most busy ones did. (A server that never answers fails at any load.)
fn failures_against_load(connections: &[ConnectionSummary]) -> Option<Load> {
    let mut failures: std::collections::HashMap<decode::Endpoint, usize> = Default::default();
    for c in connections.iter().filter(|c| trouble(c).is_some()) {
        *failures.entry(c.server).or_default() += 1;
    }
    let (server, _) = failures
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
    let attempts: Vec<(&ConnectionSummary, i64)> = connections
        .iter()
        .filter(|c| c.server == server)
        .filter_map(|c| Some((c, c.handshake.syn_ns?)))
        .collect();
    if attempts.len() < LOAD_ATTEMPTS {
        return None;
    }
    // Open at a SYN: those begun before it, less those already over.
    let mut starts: Vec<i64> = attempts.iter().map(|&(_, syn)| syn).collect();
    let mut ends: Vec<i64> = attempts.iter().map(|&(c, _)| c.last_ns).collect();
    starts.sort_unstable();
    ends.sort_unstable();
    let by_load: Vec<(usize, bool)> = attempts
        .iter()
        .map(|&(c, syn)| {
            let begun = starts.partition_point(|&start| start < syn);
            let over = ends.partition_point(|&end| end <= syn);
            (begun.saturating_sub(over), trouble(c).is_some())
        })
        .collect();
    let threshold = by_load
        .iter()
        .filter(|&&(_, failed)| failed)
        .map(|&(open, _)| open)
        .min()?;
    let rate = |busy: bool| {
        let side: Vec<bool> = by_load
            .iter()
            .filter(|(open, _)| (*open >= threshold) == busy)
            .map(|&(_, failed)| failed)
            .collect();
        let failed = side.iter().filter(|&&failed| failed).count();
        (failed as f64 / side.len().max(1) as f64, side.len())
    };
    let ((busy_rate, _), (_, quiet)) = (rate(true), rate(false));
    (quiet >= LOAD_QUIET_ATTEMPTS && busy_rate >= LOAD_BUSY_FAILED_SHARE).then_some(Load {
        threshold,
        busy_rate,
    })
}

/// SYN to SYN-ACK for an answered connection; first to last packet otherwise.
fn setup_wait_ms(connection: &ConnectionSummary) -> f64 {
    let handshake = &connection.handshake;
    let syn = handshake.syn_ns.unwrap_or(connection.first_ns);
    let end = handshake.syn_ack_ns.unwrap_or(connection.last_ns);
    (end - syn) as f64 / 1e6
}

/// When the server's SYN-ACK was last sent again, after its first.
fn syn_ack_offset(connection: &ConnectionSummary) -> String {
    let handshake = &connection.handshake;
    let first = handshake.syn_ack_ns.unwrap_or(connection.first_ns);
    let answered = handshake.ack_ns.unwrap_or(connection.last_ns);
    duration((answered - first) as f64 / 1e6)
}

/// When each SYN was sent again, after the first: `1.00 s, 3.00 s, 7.10 s`,
/// as many as a Linux stack tries by default, then how many more.
fn retry_offsets(connection: &ConnectionSummary) -> String {
    let syn = connection.handshake.syn_ns.unwrap_or(connection.first_ns);
    let offsets: Vec<String> = connection
        .handshake
        .syn_retries_ns
        .iter()
        .take(LINUX_SYN_RETRIES)
        .map(|at| duration((at - syn) as f64 / 1e6))
        .collect();
    let unlisted = connection.handshake.syn_retries - offsets.len() as u64;
    match unlisted {
        0 => offsets.join(", "),
        more => format!("{}, and {more} more", offsets.join(", ")),
    }
}
