//! What a progress bar is told: how far the read has got, then each stage
//! of the analysis after it, then that it is all over.

use std::path::Path;
use std::sync::{Arc, Mutex};

use pipeline::{ReadProgress, Stages};

/// What a progress bar was told, in order.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<String>>>);

impl ReadProgress for Told {
    fn update(&mut self, _: u64) {
        self.0.lock().unwrap().push("read".into());
    }

    fn stage(&mut self, doing: &'static str) {
        self.0.lock().unwrap().push(doing.into());
    }

    fn finish(&mut self) {
        self.0.lock().unwrap().push("finished".into());
    }
}

fn told(stages: Stages) -> Vec<String> {
    let capture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures/periodic_stalls.pcap");
    let told = Told::default();
    let paths = [capture.display().to_string()];
    let analysis = pipeline::analyze(&paths, stages, told.clone(), |_| {}).expect("capture read");
    assert!(!analysis.connections.is_empty());
    let mut said = told.0.lock().unwrap().clone();
    // How often the read is told of depends on the capture's size.
    said.dedup();
    said
}

#[test]
fn the_stages_after_the_read_are_told_in_order_then_the_end() {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let said = told(stages);
    let after_read: Vec<&str> = said
        .iter()
        .map(String::as_str)
        .skip_while(|&s| s == "read")
        .collect();
    assert_eq!(
        after_read,
        [
            "closing transactions",
            "summarizing connections",
            "building the timeline",
            "diagnosing",
            "finished"
        ]
    );
}

#[test]
fn only_the_stages_asked_for_are_told() {
    let said = told(Stages::default());
    assert_eq!(said.last().map(String::as_str), Some("finished"));
    assert!(said.contains(&"summarizing connections".to_string()));
    assert!(!said
        .iter()
        .any(|s| s == "diagnosing" || s == "closing transactions"));
}
