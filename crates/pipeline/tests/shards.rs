//! Connections split across threads give the analysis of one thread,
//! also where a shard must read the capture again because another shard
//! saw first that the capture drops packets.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pipeline::{Analysis, ReadProgress, Stages};

/// The stages the progress bar was told of.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<&'static str>>>);

impl ReadProgress for Told {
    fn update(&mut self, _: u64) {}

    fn stage(&mut self, doing: &'static str) {
        self.0.lock().unwrap().push(doing);
    }

    fn finish(&mut self) {}
}

fn sweep_case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/sweep-cases")
        .join(name)
}

/// Everything the analysis holds, as text, and the stages it told of.
fn analysed(capture: &Path, shards: usize) -> (String, Vec<&'static str>) {
    let stages = Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        shards,
        ..Stages::default()
    };
    let told = Told::default();
    let paths = [capture.display().to_string()];
    let analysis = pipeline::analyze(&paths, stages, told.clone(), |_| {}).expect("capture read");
    let stages_told = told.0.lock().unwrap().clone();
    (everything(&analysis), stages_told)
}

fn everything(analysis: &Analysis) -> String {
    format!(
        "{:?}",
        (
            &analysis.connections,
            &analysis.rate_limits,
            &analysis.unanswered_syns,
            &analysis.trimmed,
            analysis.memory_budget_bytes,
            &analysis.transactions,
            &analysis.ledgers,
            &analysis.ticks,
            &analysis.findings,
            &analysis.counts,
            analysis.first_ns,
        )
    )
}

const READ_AGAIN: &str = "reading again: the capture drops packets";

#[test]
fn shards_that_learnt_of_drops_too_late_read_again_and_agree_with_one_thread() {
    let capture = sweep_case("capture_drops_seen_first_on_another_connection.pcap");
    let (one, told) = analysed(&capture, 1);
    assert!(!told.contains(&READ_AGAIN));
    let mut read_again = Vec::new();
    for shards in 2..=8 {
        let (split, told) = analysed(&capture, shards);
        assert!(split == one, "{shards} shards disagree with one thread");
        if told.contains(&READ_AGAIN) {
            read_again.push(shards);
        }
    }
    // Which connections share a shard decides whether one learns too late.
    assert!(
        !read_again.is_empty(),
        "no split of the capture had a shard learn of its drops too late"
    );
}
