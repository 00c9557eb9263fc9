//! `diff`: the same workload captured before and after a change.
//!
//! Both captures are diagnosed in full. Findings are paired by kind: each
//! is gone, new, or still there at a changed cost. Transactions are grouped
//! by type (their name where the payload gave one, else their signature) and
//! each type's response times are set side by side. Throughput, receive
//! window and retransmissions over time are set on shared axes.

use std::collections::BTreeMap;

use capture::CaptureError;
use diagnose::{Finding, FindingKind, Severity};
use pipeline::{Analysis, Silent, Stages};
use serde::Serialize;
use transactions::{Durations, Transaction};

use crate::series::{self, Overlay, Ticks};

/// What changed from one run to the other.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub before: Run,
    pub after: Run,
    /// The costliest first, whichever run it was found in.
    pub findings: Vec<FindingChange>,
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
}

/// A finding as one run had it.
#[derive(Debug, Clone, Serialize)]
pub struct FoundOnce {
    pub title: String,
    pub severity: Severity,
    pub cost_ms: f64,
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
    let (before, before_ticks) = diagnosed(before_path)?;
    let (after, after_ticks) = diagnosed(after_path)?;
    Ok(Diff {
        before: run(before_path, &before),
        after: run(after_path, &after),
        findings: finding_changes(&before.findings, &after.findings),
        transaction_types: type_changes(&before.transactions, &after.transactions),
        series: series::overlay(before_ticks, after_ticks),
    })
}

/// The full diagnosis of one capture and its series over time; a read that
/// stopped early is an error.
fn diagnosed(path: &str) -> Result<(Analysis, Ticks), CaptureError> {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let mut ticks = Ticks::default();
    let mut analysis = pipeline::analyze_observed(
        &[path.to_string()],
        stages,
        Silent,
        |_| {},
        |segment| ticks.observe(segment),
    )?;
    match analysis.error.take() {
        Some(error) => Err(error),
        None => Ok((analysis, ticks)),
    }
}

fn run(path: &str, analysis: &Analysis) -> Run {
    let directions = || analysis.connections.iter().flat_map(|c| c.directions());
    let payload_bytes = directions().map(|d| d.payload_bytes).sum();
    let first = analysis.connections.iter().map(|c| c.first_ns).min();
    let last = analysis.connections.iter().map(|c| c.last_ns).max();
    let seconds = match (first, last) {
        (Some(first), Some(last)) => last.saturating_sub(first) as f64 / 1e9,
        _ => 0.0,
    };
    Run {
        path: path.to_string(),
        connections: analysis.connections.len(),
        transactions: analysis.transactions.len(),
        payload_bytes,
        retransmissions: directions().map(|d| d.retransmissions.total).sum(),
        throughput_bytes_per_s: if seconds > 0.0 {
            payload_bytes as f64 / seconds
        } else {
            0.0
        },
    }
}

/// Each kind's costliest finding in each run, paired by kind.
fn finding_changes(before: &[Finding], after: &[Finding]) -> Vec<FindingChange> {
    let by_kind = |findings: &[Finding]| {
        let mut kinds: BTreeMap<FindingKind, FoundOnce> = BTreeMap::new();
        for finding in findings {
            let found = FoundOnce {
                title: finding.title.clone(),
                severity: finding.severity,
                cost_ms: finding.cost_ms,
            };
            let kept = kinds.entry(finding.kind).or_insert_with(|| found.clone());
            if found.cost_ms > kept.cost_ms {
                *kept = found;
            }
        }
        kinds
    };
    let (mut before, mut after) = (by_kind(before), by_kind(after));
    let kinds: Vec<FindingKind> = before.keys().chain(after.keys()).copied().collect();
    let mut changes: Vec<FindingChange> = kinds
        .into_iter()
        .filter_map(|kind| {
            let (before, after) = (before.remove(&kind), after.remove(&kind));
            let change = match (&before, &after) {
                (Some(_), None) => Change::Gone,
                (None, Some(_)) => Change::New,
                (Some(_), Some(_)) => Change::Still,
                (None, None) => return None,
            };
            Some(FindingChange {
                kind,
                change,
                before,
                after,
            })
        })
        .collect();
    changes.sort_by(|x, y| y.largest_cost_ms().total_cmp(&x.largest_cost_ms()));
    changes
}

impl FindingChange {
    fn largest_cost_ms(&self) -> f64 {
        let cost = |found: &Option<FoundOnce>| found.as_ref().map_or(0.0, |f| f.cost_ms);
        cost(&self.before).max(cost(&self.after))
    }
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
