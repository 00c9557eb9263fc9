//! Two files captured at both ends of one link are one observation: every
//! packet counts once, and the copies never pass for retransmissions.

use diagnose::Severity;
use pipeline::{Analysis, Silent, Stages};

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
    assert_eq!(merged.counts.copies, server_side.counts.tcp_segments);
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
        notes
            .iter()
            .any(|note| note.contains("3379 frames were captured at more than one point")),
        "{notes:?}"
    );
}

#[test]
fn the_same_file_twice_is_read_once() {
    let once = diagnosed(&["loss_upstream-server.pcap"]);
    let twice = diagnosed(&["loss_upstream-server.pcap", "loss_upstream-server.pcap"]);
    assert_eq!(twice.counts.tcp_segments, once.counts.tcp_segments);
    assert_eq!(twice.counts.copies, once.counts.tcp_segments);
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
