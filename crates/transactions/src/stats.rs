//! Duration statistics per transaction signature, and per name where the payload gave one.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::Transaction;

/// How long transactions of one signature took, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureStats {
    pub signature: String,
    #[serde(flatten)]
    pub durations: Durations,
}

/// How long transactions of one name took, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NameStats {
    pub name: String,
    #[serde(flatten)]
    pub durations: Durations,
}

/// Duration statistics of a group of transactions, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Durations {
    pub count: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
}

/// One row per signature, the most frequent first.
pub fn by_signature(transactions: &[Transaction]) -> Vec<SignatureStats> {
    grouped(transactions.iter().map(|t| (t.signature.as_str(), t)))
        .into_iter()
        .map(|(signature, durations)| SignatureStats {
            signature,
            durations,
        })
        .collect()
}

/// One row per name, the most frequent first; unnamed transactions are left out.
pub fn by_name(transactions: &[Transaction]) -> Vec<NameStats> {
    grouped(
        transactions
            .iter()
            .filter_map(|t| Some((t.name.as_deref()?, t))),
    )
    .into_iter()
    .map(|(name, durations)| NameStats { name, durations })
    .collect()
}

fn grouped<'a>(
    keyed: impl Iterator<Item = (&'a str, &'a Transaction)>,
) -> Vec<(String, Durations)> {
    let mut groups: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (key, transaction) in keyed {
        let durations = groups.entry(key).or_default();
        durations.extend(transaction.duration_ms);
    }
    let mut rows: Vec<(String, Durations)> = groups
        .into_iter()
        .filter_map(|(key, mut values)| Some((key.to_string(), Durations::of(&mut values)?)))
        .collect();
    rows.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(&b.0)));
    rows
}

impl Durations {
    /// The statistics of `values`, which it leaves sorted; none for no values.
    pub fn of(values: &mut [f64]) -> Option<Durations> {
        values.sort_by(f64::total_cmp);
        let (&min_ms, &max_ms) = (values.first()?, values.last()?);
        let at = |share: f64| values[((values.len() - 1) as f64 * share).round() as usize];
        Some(Durations {
            count: values.len() as u64,
            min_ms,
            mean_ms: values.iter().sum::<f64>() / values.len() as f64,
            p50_ms: at(0.5),
            p90_ms: at(0.9),
            max_ms,
        })
    }
}
