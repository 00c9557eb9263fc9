//! Duration statistics per transaction signature.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::Transaction;

/// How long transactions of one signature took, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureStats {
    pub signature: String,
    pub count: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
}

/// One row per signature, the most frequent first.
pub fn by_signature(transactions: &[Transaction]) -> Vec<SignatureStats> {
    let mut durations: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for transaction in transactions {
        durations
            .entry(&transaction.signature)
            .or_default()
            .push(transaction.duration_ms);
    }
    let mut rows: Vec<SignatureStats> = durations
        .into_iter()
        .map(|(signature, mut values)| {
            values.sort_by(f64::total_cmp);
            let at = |share: f64| values[((values.len() - 1) as f64 * share).round() as usize];
            SignatureStats {
                signature: signature.to_string(),
                count: values.len() as u64,
                min_ms: values[0],
                mean_ms: values.iter().sum::<f64>() / values.len() as f64,
                p50_ms: at(0.5),
                p90_ms: at(0.9),
                max_ms: values[values.len() - 1],
            }
        })
        .collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
    rows
}
