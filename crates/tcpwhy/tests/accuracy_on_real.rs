//! On the hand-labelled real captures of tests/real/labels.tsv that come
//! with the shared captures (the book's, `ppa/`, and tcpdump's test set,
//! `tcpdump-tests/`), tcpwhy's top finding names the labelled cause at
//! least as often as when the floors below were last measured, and as many
//! healthy captures stay quiet. The rule is tests/real/README.md's, the one
//! lab/accuracy_real.py applies to the whole corpus for
//! docs/accuracy-real.md.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::common;
use crate::common::scoring::described;

/// Problem captures of the shared part whose top finding was right, as last
/// measured (18 of 20): fewer is a regression.
const RIGHT_PROBLEMS_FLOOR: usize = 18;
/// Healthy captures of the shared part with no loud finding, as last
/// measured (32 of 32).
const QUIET_HEALTHY_FLOOR: usize = 32;
const LOUD: [&str; 2] = ["warning", "critical"];
const COLUMNS: [&str; 6] = ["capture", "source", "label", "loud", "frames", "evidence"];
/// The words a label is made of: healthy, or finding kinds.
const VOCABULARY: [&str; 28] = [
    "healthy",
    "connection_setup_failure",
    "accept_queue_overflow",
    "client_delay",
    "application_limited",
    "split_response",
    "chattiness",
    "path_latency",
    "bottleneck_link",
    "slow_start",
    "server_think_time",
    "periodic_stalls",
    "server_saturation",
    "pool_queueing",
    "nagle_delayed_ack",
    "delayed_ack",
    "receive_window_limited",
    "zero_window",
    "send_buffer_limited",
    "packet_loss",
    "periodic_loss",
    "tail_loss",
    "dead_peer",
    "mtu_black_hole",
    "application_failure",
    "port_reuse",
    "tcp_options",
    "syn_flood",
];
/// The sources of labels.tsv kept in the shared captures the tests read.
const SHARED: [&str; 2] = ["ppa", "tcpdump-tests"];

/// One row of labels.tsv.
struct Label {
    capture: String,
    kinds: Vec<String>,
    loud: bool,
}

impl Label {
    fn is_healthy(&self) -> bool {
        self.kinds == ["healthy"]
    }

    /// The capture's path, when it is one of the shared captures.
    fn shared_path(&self) -> Option<PathBuf> {
        let (source, rest) = self.capture.split_once('/')?;
        SHARED
            .contains(&source)
            .then(|| synth::shared_captures(source).join(rest))
    }
}

fn labels_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/real/labels.tsv")
}

/// Every row of labels.tsv, each checked to be made of known words.
fn labels() -> Vec<Label> {
    let text = std::fs::read_to_string(labels_file()).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(header, COLUMNS, "labels.tsv's columns");
    lines
        .enumerate()
        .map(|(index, line)| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), COLUMNS.len(), "labels.tsv line {}", index + 2);
            let kinds: Vec<String> = cells[2].split('|').map(str::to_string).collect();
            for kind in &kinds {
                let word = kind.strip_prefix("other:").unwrap_or(kind);
                assert!(
                    (kind.starts_with("other:") && !word.is_empty()) || VOCABULARY.contains(&word),
                    "labels.tsv line {}: {kind} is not a finding kind",
                    index + 2
                );
            }
            let healthy = kinds == ["healthy"];
            assert_eq!(
                cells[3] == "-",
                healthy,
                "labels.tsv line {}: loud is - exactly for healthy captures",
                index + 2
            );
            Label {
                capture: cells[0].to_string(),
                kinds,
                loud: cells[3] == "yes",
            }
        })
        .collect()
}

/// A shared labelled capture and tcpwhy's findings on it, ranked.
struct Scored {
    label: Label,
    findings: Vec<Value>,
}

impl Scored {
    fn loud_findings(&self) -> impl Iterator<Item = &Value> {
        self.findings.iter().filter(|f| is_loud(f))
    }

    /// Problem: the top finding has one of the label's kinds and, when the
    /// label is loud, is a warning or critical. Healthy: no finding is a
    /// warning or critical.
    fn is_right(&self) -> bool {
        if self.label.is_healthy() {
            return self.loud_findings().next().is_none();
        }
        self.findings.first().is_some_and(|top| {
            let kind = top["kind"].as_str().unwrap_or_default();
            self.label.kinds.iter().any(|k| k == kind) && (!self.label.loud || is_loud(top))
        })
    }
}

fn is_loud(finding: &Value) -> bool {
    LOUD.iter().any(|severity| finding["severity"] == *severity)
}

/// Every labelled capture of the shared part, diagnosed once for all tests.
fn scored() -> &'static [Scored] {
    static SCORED: OnceLock<Vec<Scored>> = OnceLock::new();
    SCORED.get_or_init(|| {
        labels()
            .into_iter()
            .filter_map(|label| {
                let path = label.shared_path()?;
                let findings = common::usable_objects("diagnose", &path, "finding");
                Some(Scored { label, findings })
            })
            .collect()
    })
}

#[test]
fn the_shared_part_holds_problems_and_healthy_captures() {
    let all = scored();
    let healthy = all.iter().filter(|s| s.label.is_healthy()).count();
    assert!(
        healthy >= 25 && all.len() - healthy >= 20,
        "{} shared captures, {healthy} of them healthy",
        all.len()
    );
}

#[test]
fn the_top_finding_names_the_labelled_cause() {
    let problems: Vec<&Scored> = scored().iter().filter(|s| !s.label.is_healthy()).collect();
    let misses: Vec<String> = problems
        .iter()
        .filter(|s| !s.is_right())
        .map(|s| {
            let top: Vec<String> = s.findings.iter().take(3).map(described).collect();
            format!(
                "  {} ({}): {}",
                s.label.capture,
                s.label.kinds.join("|"),
                top.join("; ")
            )
        })
        .collect();
    let right = problems.len() - misses.len();
    println!(
        "misses, with their top three findings:\n{}",
        misses.join("\n")
    );
    assert!(
        right >= RIGHT_PROBLEMS_FLOOR,
        "{right} of {} problem captures right, under the {RIGHT_PROBLEMS_FLOOR} measured before",
        problems.len()
    );
}

#[test]
fn healthy_captures_stay_quiet() {
    let healthy: Vec<&Scored> = scored().iter().filter(|s| s.label.is_healthy()).collect();
    let loud: Vec<String> = healthy
        .iter()
        .flat_map(|s| {
            s.loud_findings()
                .map(move |f| format!("  {}: {}", s.label.capture, described(f)))
        })
        .collect();
    let quiet = healthy
        .iter()
        .filter(|s| s.loud_findings().next().is_none())
        .count();
    println!("loud findings on healthy captures:\n{}", loud.join("\n"));
    assert!(
        quiet >= QUIET_HEALTHY_FLOOR,
        "{quiet} of {} healthy captures quiet, under the {QUIET_HEALTHY_FLOOR} measured before",
        healthy.len()
    );
}
