//! `compare` on the lab's two-point captures: each names what the lab planted,
//! with the figures the lab's manifest records.

use std::path::{Path, PathBuf};

use compare::Comparison;
use serde_json::Value;

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

fn capture(name: &str) -> String {
    captures_dir().join(name).to_string_lossy().into_owned()
}

fn manifest(scenario: &str) -> Value {
    let path = captures_dir().join(format!("{scenario}.json"));
    let text = std::fs::read_to_string(&path).expect("manifest");
    serde_json::from_str(&text).expect("manifest is JSON")
}

fn compared(a: &str, b: &str) -> Comparison {
    compare::compare(&capture(a), &capture(b)).expect("lab captures read")
}

fn within_10_percent(measured: f64, planted: f64) -> bool {
    (measured - planted).abs() <= 0.1 * planted
}

#[test]
fn loss_between_the_taps_is_placed_between_them() {
    let lab = manifest("loss_upstream");
    let resent = lab["expect"]["sender_side_resent"].as_u64().unwrap();
    let delay_ms = lab["wire"]["delay_ms"].as_f64().unwrap();
    let comparison = compared("loss_upstream-client.pcap", "loss_upstream-server.pcap");

    assert_eq!(comparison.connections_in_both, 1);
    assert_eq!(comparison.connections_rewritten, 0);
    // Every packet the server's tap saw was seen at the client's.
    assert_eq!(comparison.packets_matched, comparison.b.tcp_packets);
    assert!(!comparison.same_segment);
    assert_eq!(
        comparison.nearer_a,
        [lab["client"]
            .as_str()
            .unwrap()
            .parse::<std::net::IpAddr>()
            .unwrap()]
    );
    assert_eq!(comparison.nearer_b.len(), 1);
    assert!(
        comparison.clock_offset_ms.abs() < 0.1 * delay_ms,
        "{}",
        comparison.clock_offset_ms
    );

    let toward_server = &comparison.a_to_b;
    assert_eq!(toward_server.losses.between_points, resent);
    assert_eq!(toward_server.losses.before_upstream, 0);
    assert_eq!(toward_server.losses.after_downstream, 0);
    assert_eq!(toward_server.losses.missed_by_upstream_capture, 0);
    assert_eq!(toward_server.losses.missed_by_downstream_capture, 0);
    assert_eq!(toward_server.hops, Some(0));
    for way in [&comparison.a_to_b, &comparison.b_to_a] {
        let delay = way.delay.as_ref().expect("delay measured");
        assert!(within_10_percent(delay.min_ms, delay_ms), "{delay:?}");
    }
    // The 50 Mbit/s wire queues the upload's segments, not the ACKs coming back.
    let data_delay = comparison.a_to_b.delay.as_ref().unwrap();
    let ack_delay = comparison.b_to_a.delay.as_ref().unwrap();
    assert!(data_delay.variation_ms > 10.0 * ack_delay.variation_ms);
    assert_eq!(comparison.b_to_a.losses, compare::Losses::default());
}

#[test]
fn a_tap_that_missed_frames_is_told_from_loss_on_the_wire() {
    let lab = manifest("drops_at_tap");
    let missed = lab["expect"]["missed_by_server_capture"].as_u64().unwrap();
    let comparison = compared("drops_at_tap-client.pcap", "drops_at_tap-server.pcap");

    let toward_server = &comparison.a_to_b.losses;
    assert_eq!(toward_server.missed_by_downstream_capture, missed);
    assert_eq!(toward_server.between_points, 0);
    assert_eq!(toward_server.after_downstream, 0);
    assert_eq!(toward_server.unexplained, 0);
    assert_eq!(
        comparison.packets_matched as u64,
        comparison.a.tcp_packets as u64 - missed
    );
    let delay_ms = lab["expect"]["delay_ms"].as_f64().unwrap();
    for way in [&comparison.a_to_b, &comparison.b_to_a] {
        let delay = way.delay.as_ref().unwrap();
        assert!(within_10_percent(delay.min_ms, delay_ms), "{delay:?}");
    }
}

#[test]
fn two_captures_of_one_segment_are_recognised() {
    let lab = manifest("taps_mislabelled");
    let other = lab["expect"]["other_capture"].as_str().unwrap();
    let comparison = compared(lab["capture"].as_str().unwrap(), other);
    assert!(comparison.same_segment);
    assert_eq!(
        comparison.packets_matched as u64,
        lab["expect"]["packets"].as_u64().unwrap()
    );
    assert!(comparison.clock_offset_ms.abs() < 0.05);
    for way in [&comparison.a_to_b, &comparison.b_to_a] {
        assert_eq!(way.hops, Some(0));
        assert!(way.delay.as_ref().unwrap().p50_ms.abs() < 0.05);
        assert_eq!(way.losses, compare::Losses::default());
    }
}

#[test]
fn the_same_file_twice_is_one_segment() {
    let name = "loss_upstream-server.pcap";
    let comparison = compared(name, name);
    assert!(comparison.same_segment);
    assert_eq!(comparison.packets_matched, comparison.a.tcp_packets);
    assert_eq!(comparison.clock_offset_ms, 0.0);
    assert_eq!(comparison.source_macs_agree, Some(true));
}
