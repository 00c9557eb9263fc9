//! Two files captured at both ends of one link are one observation: every
//! packet counts once, and the copies never pass for retransmissions, even
//! where a box between the points rewrote their numbers.

use std::path::Path;

use diagnose::Severity;
use pipeline::{Analysis, Note, Silent, Stages};
use synth::rewrite::Capture;

fn capture(name: &str) -> String {
    format!("{}/../../tests/captures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn diagnosed(files: &[&str]) -> Analysis {
    let paths: Vec<String> = files.iter().map(|name| capture(name)).collect();
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    pipeline::analyze(&paths, stages, Silent, |_| {}).expect("lab captures read")
}

/// Resends and out-of-order segments the client sent, as the tracker counts them.
fn resent_by_client(analysis: &Analysis) -> u64 {
    analysis
        .connections
        .iter()
        .map(|c| c.client_to_server.retransmissions.total + c.client_to_server.out_of_order)
        .sum()
}

#[test]
fn merging_the_two_ends_of_a_lossy_link_counts_each_packet_once() {
    let client_side = diagnosed(&["loss_upstream-client.pcap"]);
    let server_side = diagnosed(&["loss_upstream-server.pcap"]);
    let merged = diagnosed(&["loss_upstream-client.pcap", "loss_upstream-server.pcap"]);

    // The client's tap saw every packet the server's did, and the 35 the wire dropped.
    assert_eq!(client_side.counts.tcp_segments, 3414);
    assert_eq!(server_side.counts.tcp_segments, 3379);
    assert_eq!(merged.counts.tcp_segments, client_side.counts.tcp_segments);
    assert_eq!(
        merged.counts.matched.copies,
        server_side.counts.tcp_segments
    );
    assert_eq!(
        merged.counts.frames,
        client_side.counts.frames + server_side.counts.frames
    );
    assert_eq!(merged.connections.len(), 1);

    // The client resent the 35 dropped segments once each, as its own tap shows.
    assert_eq!(resent_by_client(&client_side), 35);
    assert_eq!(resent_by_client(&merged), 35);

    let loss = merged
        .findings
        .iter()
        .find(|finding| finding.kind == diagnose::FindingKind::PacketLoss)
        .expect("the planted loss is found");
    assert!(loss.severity < Severity::Critical, "{}", loss.title);
    assert!(merged
        .findings
        .iter()
        .all(|f| f.severity < Severity::Critical));
    let notes = merged.notes();
    assert!(
        notes.contains(&Note::FilesOverlap {
            copies: 3379,
            renumbered_connections: 0
        }),
        "{notes:?}"
    );
}

#[test]
fn the_same_file_twice_is_read_once() {
    let once = diagnosed(&["loss_upstream-server.pcap"]);
    let twice = diagnosed(&["loss_upstream-server.pcap", "loss_upstream-server.pcap"]);
    assert_eq!(twice.counts.tcp_segments, once.counts.tcp_segments);
    assert_eq!(twice.counts.matched.copies, once.counts.tcp_segments);
    let client_to_server = |a: &Analysis| a.connections[0].client_to_server.clone();
    assert_eq!(
        client_to_server(&twice).retransmissions.total,
        client_to_server(&once).retransmissions.total
    );
    assert_eq!(
        client_to_server(&twice).lost_segments,
        client_to_server(&once).lost_segments
    );
}

/// The lab capture `name` merged with a copy of it that `rewrite` makes, as
/// a second tap past a box on the path would see it.
fn merged_with_a_rewritten_copy(name: &str, rewrite: impl FnOnce(Capture) -> Capture) -> Analysis {
    let original = capture(name);
    let copy = std::env::temp_dir().join(format!("rewritten-{}-{name}", std::process::id()));
    rewrite(Capture::read(Path::new(&original))).write(&copy);
    let paths = [original, copy.display().to_string()];
    let stages = Stages {
        diagnose: true,
        ..Stages::default()
    };
    let merged = pipeline::analyze(&paths, stages, Silent, |_| {}).expect("captures read");
    std::fs::remove_file(&copy).unwrap();
    merged
}

fn retransmissions(analysis: &Analysis) -> u64 {
    analysis
        .connections
        .iter()
        .map(|c| {
            c.client_to_server.retransmissions.total + c.server_to_client.retransmissions.total
        })
        .sum()
}

fn kinds(analysis: &Analysis) -> Vec<String> {
    analysis
        .findings
        .iter()
        .map(|f| f.kind.to_string())
        .collect()
}

#[test]
fn a_copy_with_its_ip_ids_zeroed_and_later_is_matched_without_them() {
    let alone = diagnosed(&["healthy.pcap"]);
    let merged = merged_with_a_rewritten_copy("healthy.pcap", |healthy| {
        healthy.with_ip_ids(|_| 0).shifted_in_time(300)
    });
    assert_eq!(retransmissions(&alone), 0);
    assert_eq!(retransmissions(&merged), 0);
    assert_eq!(merged.counts.matched.copies, alone.counts.tcp_segments);
    assert_eq!(merged.counts.tcp_segments, alone.counts.tcp_segments);
    assert_eq!(merged.transactions.len(), alone.transactions.len());
    assert_eq!(kinds(&merged), kinds(&alone));
}

#[test]
fn a_copy_renumbered_by_a_box_between_the_points_is_matched_by_what_survives() {
    let alone = diagnosed(&["loss_upstream-server.pcap"]);
    let merged = merged_with_a_rewritten_copy("loss_upstream-server.pcap", |capture| {
        capture
            .with_sequence_shift(0x8000_0000)
            .with_ip_ids(|id| id ^ 0x5a5a)
            .shifted_in_time(2_000)
    });
    assert_eq!(merged.counts.matched.copies, alone.counts.tcp_segments);
    assert_eq!(merged.counts.matched.renumbered_connections, 1);
    assert_eq!(merged.counts.matched.unmatched_connections, 0);
    assert_eq!(retransmissions(&merged), retransmissions(&alone));
    assert_eq!(kinds(&merged), kinds(&alone));
    let notes = merged.notes();
    assert!(
        notes.contains(&Note::FilesOverlap {
            copies: alone.counts.tcp_segments,
            renumbered_connections: 1
        }),
        "{notes:?}"
    );
}
