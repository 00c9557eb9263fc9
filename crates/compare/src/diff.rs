//! `diff`: the same workload captured before and after a change.
//!
//! Both captures are diagnosed in full. Time is compared per transaction,
//! and only the time someone waited for (see `crate::work`): a run that
//! did more work, or whose client thought longer between turns, has not got
//! worse for it. Findings are paired by kind: each is gone, new, or still
//! there at a changed cost per transaction; one found in a single run whose
//! time per transaction did not move was brought across the line by the
//! amount of work, not by a change. The client's own pace is no finding
//! here. Transactions are grouped by type (their name where the payload gave
//! one, else their signature) and each type's response times are set side
//! by side. Throughput, receive window and retransmissions over time are set
//! on shared axes.

use std::collections::BTreeMap;

use capture::CaptureError;
use diagnose::rules::MATTERS_SHARE;
use diagnose::{Finding, FindingKind, Severity};
use pipeline::{Analysis, Silent, Stages};
use serde::Serialize;
use transactions::{Durations, Ledger, Transaction};

use crate::series::{self, Overlay, Windows};
use crate::work;

/// What changed from one run to the other.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub before: Run,
    pub after: Run,
    /// The costliest per transaction first, whichever run it was found in;
    /// the client's own pace is left out.
    pub findings: Vec<FindingChange>,
    /// Each part of the time someone waited for, per transaction, the
    /// largest change first.
    pub waited: Vec<PartChange>,
    /// The most frequent types first.
    pub transaction_types: Vec<TypeChange>,
    /// Both runs over time, from each capture's start.
    pub series: Overlay,
}

/// One run's totals.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub path: String,
    pub connections: usize,
    pub transactions: usize,
    pub payload_bytes: u64,
    pub retransmissions: u64,
    /// Payload bytes per second over the connections' lifetime.
    pub throughput_bytes_per_s: f64,
    /// The transactions' time that someone waited for, in milliseconds:
    /// their ledgers without the client's own pace.
    pub waited_ms: f64,
    /// The client's own pace, left out of `waited_ms`: its think time
    /// between turns, its idle pauses, its wait before a first request.
    pub client_pace_ms: f64,
    /// `waited_ms` per transaction; None without transactions.
    pub waited_per_transaction_ms: Option<f64>,
    pub retransmissions_per_transaction: Option<f64>,
}

/// One part of the time someone waited for, per transaction in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct PartChange {
    pub part: &'static str,
    pub before_ms: Option<f64>,
    pub after_ms: Option<f64>,
}

/// What became of one kind of finding.
#[derive(Debug, Clone, Serialize)]
pub struct FindingChange {
    pub kind: FindingKind,
    pub change: Change,
    pub before: Option<FoundOnce>,
    pub after: Option<FoundOnce>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Gone,
    New,
    /// Found in both runs.
    Still,
    /// Found in one run only, but the time per transaction in its ledger
    /// parts moved by less than it takes to matter: the amount of work
    /// brought it across the line, not a change.
    WithTheWork,
}

/// A finding as one run had it.
#[derive(Debug, Clone, Serialize)]
pub struct FoundOnce {
    pub title: String,
    pub severity: Severity,
    pub cost_ms: f64,
    /// `cost_ms` over the run's transactions; None without transactions.
    pub cost_per_transaction_ms: Option<f64>,
}

/// One transaction type's response times in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct TypeChange {
    pub transaction_type: String,
    pub before: Option<Durations>,
    pub after: Option<Durations>,
    /// After minus before, when both runs have the type.
    pub p50_change_ms: Option<f64>,
    pub p90_change_ms: Option<f64>,
}

/// Diagnoses both captures and sets them side by side.
pub fn diff(before_path: &str, after_path: &str) -> Result<Diff, CaptureError> {
    let (before, before_windows) = diagnosed(before_path)?;
    let (after, after_windows) = diagnosed(after_path)?;
    let runs = [&before, &after].map(|analysis| Work {
        ledger: work::ledger_of(&analysis.transactions),
        transactions: analysis.transactions.len(),
    });
    Ok(Diff {
        before: run(before_path, &before, &runs[0]),
        after: run(after_path, &after, &runs[1]),
        findings: finding_changes([&before.findings, &after.findings], [&runs[0], &runs[1]]),
        waited: part_changes(&runs[0], &runs[1]),
        transaction_types: type_changes(&before.transactions, &after.transactions),
        series: series::overlay(
            series::Run {
                ticks: &before.ticks,
                windows: &before_windows,
            },
            series::Run {
                ticks: &after.ticks,
                windows: &after_windows,
            },
        ),
    })
}

/// The full diagnosis of one capture, its timeline among it, and the
/// windows its segments advertised; a read that stopped early is an error.
fn diagnosed(path: &str) -> Result<(Analysis, Windows), CaptureError> {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let mut windows = Windows::default();
    let mut analysis = pipeline::analyze_observed(
        &[path.to_string()],
        stages,
        Silent,
        |_| {},
        |segment, _| windows.observe(segment),
    )?;
    match analysis.error.take() {
        Some(error) => Err(error),
        None => Ok((analysis, windows)),
    }
}

/// What one run did: its transactions and their ledgers summed.
struct Work {
    ledger: Ledger,
    transactions: usize,
}

impl Work {
    fn per_transaction(&self, total: f64) -> Option<f64> {
        work::per_transaction(total, self.transactions)
    }

    /// The time per transaction in the ledger parts findings of `kind` are
    /// charged from; None when no part shows the kind, or without transactions.
    fn kind_per_transaction_ms(&self, kind: FindingKind) -> Option<f64> {
        let parts = work::parts_of(kind);
        let total = parts.iter().map(|&part| self.ledger.get(part)).sum();
        (!parts.is_empty()).then(|| self.per_transaction(total))?
    }
}

fn run(path: &str, analysis: &Analysis, work: &Work) -> Run {
    let directions = || analysis.connections.iter().flat_map(|c| c.directions());
    let payload_bytes = directions().map(|d| d.payload_bytes).sum();
    let first = analysis.connections.iter().map(|c| c.first_ns).min();
    let last = analysis.connections.iter().map(|c| c.last_ns).max();
    let seconds = match (first, last) {
        (Some(first), Some(last)) => last.saturating_sub(first) as f64 / 1e9,
        _ => 0.0,
    };
    let retransmissions = directions().map(|d| d.retransmissions.total).sum();
    let waited_ms = work::waited_ms(&work.ledger);
    Run {
        path: path.to_string(),
        connections: analysis.connections.len(),
        transactions: analysis.transactions.len(),
        payload_bytes,
        retransmissions,
        waited_ms,
        client_pace_ms: work::client_pace_ms(&work.ledger),
        waited_per_transaction_ms: work.per_transaction(waited_ms),
        retransmissions_per_transaction: work.per_transaction(retransmissions as f64),
        throughput_bytes_per_s: if seconds > 0.0 {
            payload_bytes as f64 / seconds
        } else {
            0.0
        },
    }
}

/// Each kind's costliest finding in each run, paired by kind, but for the
/// client's own pace.
fn finding_changes(findings: [&[Finding]; 2], runs: [&Work; 2]) -> Vec<FindingChange> {
    let by_kind = |findings: &[Finding], work: &Work| {
        let mut kinds: BTreeMap<FindingKind, FoundOnce> = BTreeMap::new();
        for finding in findings.iter().filter(|f| !work::is_client_pace(f.kind)) {
            let found = FoundOnce {
                title: finding.title.clone(),
                severity: finding.severity,
                cost_ms: finding.cost_ms,
                cost_per_transaction_ms: work.per_transaction(finding.cost_ms),
            };
            let kept = kinds.entry(finding.kind).or_insert_with(|| found.clone());
            if found.cost_ms > kept.cost_ms {
                *kept = found;
            }
        }
        kinds
    };
    let (mut before, mut after) = (by_kind(findings[0], runs[0]), by_kind(findings[1], runs[1]));
    let kinds: Vec<FindingKind> = before.keys().chain(after.keys()).copied().collect();
    let mut changes: Vec<FindingChange> = kinds
        .into_iter()
        .filter_map(|kind| {
            let (before, after) = (before.remove(&kind), after.remove(&kind));
            let change = match (&before, &after) {
                (Some(_), Some(_)) => Change::Still,
                (None, None) => return None,
                _ if moved_with_the_work(kind, runs) => Change::WithTheWork,
                (Some(_), None) => Change::Gone,
                (None, Some(_)) => Change::New,
            };
            Some(FindingChange {
                kind,
                change,
                before,
                after,
            })
        })
        .collect();
    changes.sort_by(|x, y| {
        y.largest_cost_per_transaction_ms()
            .total_cmp(&x.largest_cost_per_transaction_ms())
    });
    changes
}

/// The time per transaction in the parts findings of `kind` are charged
/// from moved by less than a share that matters ([`MATTERS_SHARE`]) of the
/// time waited per transaction: the same rate in both runs.
fn moved_with_the_work(kind: FindingKind, [before, after]: [&Work; 2]) -> bool {
    let (Some(was), Some(is)) = (
        before.kind_per_transaction_ms(kind),
        after.kind_per_transaction_ms(kind),
    ) else {
        return false;
    };
    let waited = [before, after]
        .iter()
        .filter_map(|run| run.per_transaction(work::waited_ms(&run.ledger)))
        .fold(0.0, f64::max);
    (is - was).abs() < MATTERS_SHARE * waited
}

impl FindingChange {
    fn largest_cost_per_transaction_ms(&self) -> f64 {
        let cost = |found: &Option<FoundOnce>| {
            found
                .as_ref()
                .and_then(|f| f.cost_per_transaction_ms)
                .unwrap_or(0.0)
        };
        cost(&self.before).max(cost(&self.after))
    }
}

/// Each part someone waited through, per transaction in both runs, the
/// largest change first; parts with no time in either run are left out.
fn part_changes(before: &Work, after: &Work) -> Vec<PartChange> {
    let mut changes: Vec<PartChange> = work::waited_parts()
        .filter(|&part| before.ledger.get(part) > 0.0 || after.ledger.get(part) > 0.0)
        .map(|part| PartChange {
            part: part.as_str(),
            before_ms: before.per_transaction(before.ledger.get(part)),
            after_ms: after.per_transaction(after.ledger.get(part)),
        })
        .collect();
    let moved = |change: &PartChange| {
        (change.after_ms.unwrap_or(0.0) - change.before_ms.unwrap_or(0.0)).abs()
    };
    changes.sort_by(|x, y| moved(y).total_cmp(&moved(x)));
    changes
}

/// A transaction's type: its name where the payload gave one, else its signature.
fn transaction_type(transaction: &Transaction) -> &str {
    transaction
        .name
        .as_deref()
        .unwrap_or(&transaction.signature)
}

fn type_changes(before: &[Transaction], after: &[Transaction]) -> Vec<TypeChange> {
    let durations_by_type = |transactions: &[Transaction]| {
        let mut types: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for transaction in transactions {
            types
                .entry(transaction_type(transaction).to_string())
                .or_default()
                .extend(transaction.duration_ms);
        }
        types
            .into_iter()
            .filter_map(|(name, mut values)| Some((name, Durations::of(&mut values)?)))
            .collect::<BTreeMap<String, Durations>>()
    };
    let (mut before, mut after) = (durations_by_type(before), durations_by_type(after));
    let names: std::collections::BTreeSet<String> =
        before.keys().chain(after.keys()).cloned().collect();
    let mut changes: Vec<TypeChange> = names
        .into_iter()
        .map(|name| {
            let (before, after) = (before.remove(&name), after.remove(&name));
            let change =
                |stat: fn(&Durations) -> f64| Some(stat(after.as_ref()?) - stat(before.as_ref()?));
            TypeChange {
                p50_change_ms: change(|d| d.p50_ms),
                p90_change_ms: change(|d| d.p90_ms),
                transaction_type: name,
                before,
                after,
            }
        })
        .collect();
    changes.sort_by_key(|change| {
        let count = |d: &Option<Durations>| d.as_ref().map_or(0, |d| d.count);
        std::cmp::Reverse(count(&change.before) + count(&change.after))
    });
    changes
}
