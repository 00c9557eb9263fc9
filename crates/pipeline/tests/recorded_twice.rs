//! A capture that recorded every packet twice, as a mirror port shows each
//! going in and out, tells the same story as one that recorded each once.

use std::path::{Path, PathBuf};

use pipeline::{Analysis, Silent, Stages};

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

/// The classic pcap file at `from` with every record written twice in a row.
fn every_record_twice(from: &Path, to: &Path) {
    const FILE_HEADER: usize = 24;
    const RECORD_HEADER: usize = 16;
    let bytes = std::fs::read(from).unwrap();
    assert_eq!(
        &bytes[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "little-endian microsecond pcap"
    );
    let mut doubled = bytes[..FILE_HEADER].to_vec();
    let mut at = FILE_HEADER;
    while at < bytes.len() {
        let captured = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let record = &bytes[at..at + RECORD_HEADER + captured];
        doubled.extend_from_slice(record);
        doubled.extend_from_slice(record);
        at += record.len();
    }
    std::fs::write(to, doubled).unwrap();
}

fn kinds_and_titles(analysis: &Analysis) -> Vec<(diagnose::FindingKind, String)> {
    analysis
        .findings
        .iter()
        .map(|f| (f.kind, f.title.clone()))
        .collect()
}

#[test]
fn every_frame_recorded_twice_is_analysed_once() {
    let original = capture("loss_upstream-client.pcap");
    let doubled = std::env::temp_dir().join(format!("recorded-twice-{}.pcap", std::process::id()));
    every_record_twice(&original, &doubled);
    let once = diagnosed(&original);
    let twice = diagnosed(&doubled);
    std::fs::remove_file(&doubled).unwrap();

    assert_eq!(twice.counts.frames, 2 * once.counts.frames);
    assert_eq!(twice.counts.recorded_twice, once.counts.tcp_segments);
    assert_eq!(twice.counts.tcp_segments, once.counts.tcp_segments);
    let resent = |a: &Analysis| a.connections[0].client_to_server.retransmissions;
    assert_eq!(resent(&twice), resent(&once));
    assert_eq!(kinds_and_titles(&twice), kinds_and_titles(&once));
    assert!(twice
        .notes()
        .iter()
        .any(|note| note.contains("recorded twice by the capture")));
}
