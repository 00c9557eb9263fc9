//! The command line's integration tests, each file a module of this one
//! test binary: it is linked once instead of once per file, which was most
//! of the time a test build took. A file in tests/ runs only when listed
//! here; the last test fails when one is not.

mod common;

mod accuracy_on_apps;
mod accuracy_on_real;
mod accuracy_on_sweep;
mod diagnose_on_lab;
mod diagnose_on_ppa;
mod diagnose_on_synth;
mod documented_fields;
mod evidence_frames;
mod export_parquet;
mod flags;
mod fuzz_corpus;
mod hostile;
mod lab_captures;
mod one_unit;
mod report_cli;
mod report_in_browser;
mod robustness;
mod stopping;
mod table_formats;
mod threads_agree;
mod timeline_on_lab;
mod transactions_on_lab;
mod transactions_on_ppa;
mod two_captures_cli;
mod usage;
mod waits_at_once;
mod wireshark_agreement;
mod wireshark_filters;

#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let listed = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(module) = name.strip_suffix(".rs").filter(|m| *m != "main") {
            assert!(
                listed.contains(&format!("\nmod {module};")),
                "tests/{name} is not listed in tests/main.rs, so it never runs"
            );
        }
    }
}
