//! A capture that recorded every packet twice, as a mirror port shows each
//! going in and out, or as a router forwards each back onto the tapped
//! link, tells the same story as one that recorded each once.

use std::path::{Path, PathBuf};

use pipeline::{Analysis, Note, Silent, Stages};
use synth::rewrite::Capture;

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
    assert_eq!(
        twice.counts.repeats.recorded_twice,
        once.counts.tcp_segments
    );
    assert_eq!(twice.counts.tcp_segments, once.counts.tcp_segments);
    let resent = |a: &Analysis| a.connections[0].client_to_server.retransmissions;
    assert_eq!(resent(&twice), resent(&once));
    assert_eq!(kinds_and_titles(&twice), kinds_and_titles(&once));
    assert!(twice.notes().contains(&Note::RecordedTwice {
        frames: once.counts.tcp_segments
    }));
}

/// The lab capture `name` alone, and with a router's copy of every packet.
fn with_router_copies(name: &str) -> (Analysis, Analysis) {
    let original = capture(name);
    let copied = std::env::temp_dir().join(format!("router-copies-{}-{name}", std::process::id()));
    Capture::read(&original).with_router_copies().write(&copied);
    let once = diagnosed(&original);
    let forwarded = diagnosed(&copied);
    std::fs::remove_file(&copied).unwrap();
    (once, forwarded)
}

fn resent(analysis: &Analysis) -> u64 {
    analysis
        .connections
        .iter()
        .map(|c| {
            c.client_to_server.retransmissions.total + c.server_to_client.retransmissions.total
        })
        .sum()
}

#[test]
fn a_routers_copies_one_hop_on_are_no_loss() {
    let (once, forwarded) = with_router_copies("healthy.pcap");
    assert_eq!(forwarded.counts.frames, 2 * once.counts.frames);
    assert_eq!(
        forwarded.counts.repeats.forwarded_again,
        once.counts.tcp_segments
    );
    assert_eq!(forwarded.counts.repeats.ttl_steps, Some((1, 1)));
    assert_eq!((resent(&once), resent(&forwarded)), (0, 0));
    assert!(forwarded
        .findings
        .iter()
        .all(|f| f.kind != diagnose::FindingKind::PacketLoss));
    assert_eq!(kinds_and_titles(&forwarded), kinds_and_titles(&once));
    let notes = forwarded.notes();
    assert!(
        notes.contains(&Note::ForwardedAgain {
            frames: 88,
            least: 1,
            most: 1
        }),
        "{notes:?}"
    );
}

#[test]
fn a_routers_copies_of_a_lossy_transfer_leave_its_own_loss() {
    let (once, forwarded) = with_router_copies("loss_upstream-client.pcap");
    assert_eq!(
        forwarded.counts.repeats.forwarded_again,
        once.counts.tcp_segments
    );
    assert_eq!(resent(&forwarded), resent(&once));
    assert_eq!(kinds_and_titles(&forwarded), kinds_and_titles(&once));
}
