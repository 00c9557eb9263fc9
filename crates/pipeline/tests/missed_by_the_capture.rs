//! Packets the capture missed, though the peer acknowledged them: the
//! capture dropped them, not the network. They are counted as a fact about
//! the capture, and no wait or loss is charged to them: the requests and
//! answers around them stay apart.

use std::path::{Path, PathBuf};

use diagnose::FindingKind;
use pipeline::{Analysis, Note, Silent, Stages};
use synth::rewrite::{Capture, Record};
use transactions::Part;

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/captures")
        .join(name)
}

fn diagnosed(path: &Path) -> Analysis {
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let paths = [path.display().to_string()];
    pipeline::analyze(&paths, stages, Silent, |_| {}).expect("capture read")
}

/// Data that is neither SYN, FIN nor reset.
fn plain_data(record: &Record) -> bool {
    let control = record.tcp_flags().is_some_and(|flags| flags & 0x07 != 0);
    record.tcp_payload_len().unwrap_or(0) > 0 && !control
}

/// The lab capture `name` alone, and without every `nth` of its data
/// frames in its first four fifths (so the ACKs of the last are seen), as
/// a capture that cannot keep up drops them; with how many were dropped.
fn with_frames_missed(name: &str, nth: usize) -> (Analysis, Analysis, usize) {
    let original = capture(name);
    let whole = Capture::read(&original);
    let checked = whole.records.len() * 4 / 5;
    let mut data = 0;
    let missed = whole.without(|index, record| {
        if index >= checked || !plain_data(record) {
            return false;
        }
        data += 1;
        data % nth == 0
    });
    let dropped = Capture::read(&original).records.len() - missed.records.len();
    let path = std::env::temp_dir().join(format!("missed-{}-{name}", std::process::id()));
    missed.write(&path);
    let analyses = (diagnosed(&original), diagnosed(&path));
    std::fs::remove_file(&path).unwrap();
    (analyses.0, analyses.1, dropped)
}

/// What the ledgers charged to TCP's own waits and to pauses inside a message.
fn waits_ms(analysis: &Analysis) -> f64 {
    let waits = |part: &Part| {
        part.group() == "tcp" || matches!(part, Part::ClientPause | Part::ServerPause)
    };
    analysis
        .transactions
        .iter()
        .flat_map(|t| t.ledger.parts())
        .filter(|(part, _)| waits(part))
        .map(|(_, ms)| ms)
        .sum()
}

fn kinds(analysis: &Analysis) -> Vec<FindingKind> {
    analysis.findings.iter().map(|f| f.kind).collect()
}

fn capture_drops(analysis: &Analysis) -> u64 {
    analysis
        .connections
        .iter()
        .map(|c| c.client_to_server.capture_drops + c.server_to_client.capture_drops)
        .sum()
}

fn notes_the_drops(analysis: &Analysis) {
    let notes = analysis.notes();
    let note = Note::CaptureMissed {
        stretches: capture_drops(analysis),
    };
    assert!(notes.contains(&note), "{notes:?}");
}

#[test]
fn requests_and_answers_the_capture_missed_leave_the_turns_apart() {
    let (whole, missed, dropped) = with_frames_missed("server_think_time.pcap", 7);
    assert_eq!(dropped, 2);
    assert_eq!(capture_drops(&missed), 2);
    assert_eq!(missed.transactions.len(), whole.transactions.len());
    assert_eq!((waits_ms(&whole), waits_ms(&missed)), (0.0, 0.0));
    assert_eq!(kinds(&missed), kinds(&whole));
    notes_the_drops(&missed);
}

#[test]
fn pieces_of_answers_the_capture_missed_cost_no_wait() {
    let (whole, missed, dropped) = with_frames_missed("healthy.pcap", 5);
    assert!(dropped >= 5, "{dropped} frames dropped");
    assert_eq!(missed.transactions.len(), whole.transactions.len());
    assert_eq!((waits_ms(&whole), waits_ms(&missed)), (0.0, 0.0));
    assert_eq!(kinds(&missed), kinds(&whole));
    notes_the_drops(&missed);
}

#[test]
fn a_transfer_whose_tap_dropped_frames_shows_no_loss() {
    let lab = diagnosed(&capture("drops_at_tap-server.pcap"));
    assert!(capture_drops(&lab) > 0);
    assert!(lab
        .findings
        .iter()
        .all(|f| f.kind != FindingKind::PacketLoss));
    let resent: u64 = lab
        .connections
        .iter()
        .map(|c| c.client_to_server.retransmissions.total + c.client_to_server.lost_before_capture)
        .sum();
    assert_eq!(resent, 0);
    notes_the_drops(&lab);
}
