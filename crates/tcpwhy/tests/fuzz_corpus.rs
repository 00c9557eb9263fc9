//! Replays every input the fuzz targets kept (their minimized corpora, and
//! each input that once crashed, in `fuzz/regressions`) through what each
//! target runs, on a stable compiler: CI needs no nightly toolchain.

#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_inputs;

use std::path::{Path, PathBuf};

fn inputs(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    files.sort();
    files
}

fn replay(folder: &str, run: fn(&[u8])) -> usize {
    let files = inputs(folder);
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let outcome = std::panic::catch_unwind(|| run(&bytes));
        assert!(outcome.is_ok(), "{} panicked", file.display());
    }
    files.len()
}

#[test]
fn the_capture_corpus_reads_without_a_panic() {
    assert!(replay("corpus/capture", fuzz_inputs::run_capture) > 100);
}

#[test]
fn the_pipeline_corpus_goes_through_the_whole_analysis_without_a_panic() {
    assert!(replay("corpus/pipeline", fuzz_inputs::run_pipeline) > 100);
}

#[test]
fn every_input_that_once_crashed_goes_through_both_targets() {
    for run in [fuzz_inputs::run_capture, fuzz_inputs::run_pipeline] {
        replay("regressions", run);
    }
}
