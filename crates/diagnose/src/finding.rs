//! A finding: one cause, what it costs and what proves it, under a title
//! every finding gets the same way.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{FindingKind, Severity};

/// One cause, with what it costs and what proves it.
#[derive(Debug, Clone, PartialEq, Serialize, record::Columns)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    pub title: String,
    /// Time lost to this cause, in milliseconds.
    pub cost_ms: f64,
    /// Cost as a share of the time at stake (every transaction's ledger but
    /// each side's own pace, and the time connections spent failing to
    /// open); 0 for a side's own pace, which is no part of it.
    pub share: f64,
    pub connections: u64,
    pub transactions: u64,
    pub example_connection: Option<u64>,
    /// Frames of the example connection that show the cause.
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
    /// A finding of `kind` costing `cost_ms`, titled `title` made a sentence
    /// (see `headline`); everything else empty, and info until the
    /// severity rule says otherwise.
    pub fn new(kind: FindingKind, title: &str, cost_ms: f64) -> Finding {
        Finding {
            kind,
            severity: Severity::Info,
            title: headline(kind, title),
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
            figures: BTreeMap::new(),
        }
    }

    /// A failure, not slowness: it costs no time, and its severity comes from
    /// how many requests failed.
    pub fn is_failure(&self) -> bool {
        self.kind == FindingKind::ApplicationFailure
    }

    /// Something failed outright: requests something depended on (not only
    /// a site's icon, or a question the client then got answered another
    /// way), or connection attempts that never opened (refused, or never
    /// answered).
    pub fn failed_outright(&self) -> bool {
        let figure = |name: &str| self.figures.get(name).copied().unwrap_or(0.0);
        let needed_failures = self.transactions as f64 - figure("incidental_failures");
        (self.is_failure() && needed_failures > 0.0) || figure("never_opened") > 0.0
    }
}

/// A title as a sentence: without spaces or separators (`,` `;` `:`) at
/// either end, its first letter upper-cased; the kind's name, in words, when
/// nothing is left.
fn headline(kind: FindingKind, title: &str) -> String {
    let stray = |c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':');
    match title.trim_matches(stray) {
        "" => sentence(&kind.as_str().replace('_', " ")),
        words => sentence(words),
    }
}

/// `words` with the first letter upper-cased.
fn sentence(words: &str) -> String {
    let mut letters = words.chars();
    letters.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(letters).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::{headline, Finding};
    use crate::FindingKind::{ApplicationFailure, ConnectionSetupFailure, TailLoss};

    #[test]
    fn only_failures_something_depended_on_failed_outright() {
        let mut icon_not_found = Finding::new(ApplicationFailure, "1 of 17 requests failed", 0.0);
        icon_not_found.transactions = 1;
        icon_not_found.figures.insert("incidental_failures", 1.0);
        assert!(!icon_not_found.failed_outright());
        icon_not_found.figures.insert("incidental_failures", 0.0);
        assert!(icon_not_found.failed_outright());
        let mut refused = Finding::new(ConnectionSetupFailure, "1 attempt refused", 0.0);
        assert!(!refused.failed_outright());
        refused.figures.insert("never_opened", 1.0);
        assert!(refused.failed_outright());
    }

    #[test]
    fn a_headline_is_a_sentence_and_never_empty() {
        assert_eq!(headline(TailLoss, "3 segments lost"), "3 segments lost");
        assert_eq!(headline(TailLoss, "segments lost"), "Segments lost");
        assert_eq!(
            headline(TailLoss, ", all to 10.0.0.1:80"),
            "All to 10.0.0.1:80"
        );
        assert_eq!(headline(TailLoss, "lost: "), "Lost");
        assert_eq!(headline(TailLoss, ""), "Tail loss");
        assert_eq!(headline(TailLoss, " ;, "), "Tail loss");
        assert_eq!(headline(TailLoss, "élan"), "Élan");
    }
}
