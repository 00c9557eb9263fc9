//! Handshakes whose SYN-ACK the server sent again: valid captures that once
//! made the diagnosis build a title from nothing and panic. They are kept
//! in the fuzz regressions (written by hand, and one mutated from the
//! book's `ppa1e_ftp.pcap`).

use std::path::{Path, PathBuf};

use pipeline::{Analysis, Silent, Stages};

fn regression(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(name)
}

fn diagnosed(name: &str) -> Analysis {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let paths = [regression(name).display().to_string()];
    pipeline::analyze(&paths, stages, Silent, |_| {}).expect("capture read")
}

fn setup_failure_title(analysis: &Analysis) -> String {
    let found = analysis
        .findings
        .iter()
        .find(|f| f.kind == diagnose::FindingKind::ConnectionSetupFailure)
        .expect("a setup finding");
    found.title.clone()
}

#[test]
fn one_syn_ack_sent_again_is_named_in_the_title() {
    let title = setup_failure_title(&diagnosed("found-one-synack-retry.pcap"));
    assert_eq!(
        title,
        "1 connection attempt waited for the server's SYN-ACK sent again (after 1.01 s), \
         all to 10.0.0.1:80"
    );
}

#[test]
fn syn_acks_sent_again_by_two_servers_are_counted_together() {
    let title = setup_failure_title(&diagnosed("found-two-synack-retries.pcap"));
    assert_eq!(
        title,
        "2 connection attempts waited for the server's SYN-ACK sent again (after 1.01 s)"
    );
}

#[test]
fn every_finding_of_a_mutated_capture_has_a_title() {
    let analysis = diagnosed("found-ftp-mutated-synack.pcap");
    assert!(!analysis.findings.is_empty());
    for finding in &analysis.findings {
        let first = finding.title.chars().next().expect("a title");
        assert!(first.is_alphanumeric(), "{:?}", finding.title);
    }
}
