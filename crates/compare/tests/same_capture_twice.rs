//! A capture compared with itself, or with the same traffic saved in
//! another format, is one segment: every packet matched, nothing lost
//! between the two.

use std::path::{Path, PathBuf};

fn book_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/ppa")
}

fn assert_one_segment(a: &Path, b: &Path) {
    let comparison = compare::compare(a.to_str().unwrap(), b.to_str().unwrap()).unwrap();
    let name = a.display();
    assert_eq!(
        comparison.packets_matched, comparison.a.tcp_packets,
        "{name}"
    );
    assert_eq!(
        comparison.packets_matched, comparison.b.tcp_packets,
        "{name}"
    );
    assert!(comparison.same_segment, "{name}");
    assert_eq!(comparison.clock_offset_ms, 0.0, "{name}");
    // Resends the capture holds were lost before or after it, never between the two copies.
    for losses in [&comparison.a_to_b.losses, &comparison.b_to_a.losses] {
        assert_eq!(losses.between_points, 0, "{name}");
        assert_eq!(losses.missed_by_upstream_capture, 0, "{name}");
        assert_eq!(losses.missed_by_downstream_capture, 0, "{name}");
        assert_eq!(losses.unexplained, 0, "{name}");
    }
}

#[test]
fn every_book_capture_with_tcp_compared_with_itself_is_one_segment() {
    let mut compared = 0;
    for entry in std::fs::read_dir(book_dir()).expect("../shared/captures/ppa beside the checkout")
    {
        let path = entry.unwrap().path();
        // Captures cut short are refused whole: another test covers them.
        let Ok(comparison) = compare::compare(path.to_str().unwrap(), path.to_str().unwrap())
        else {
            continue;
        };
        if comparison.a.tcp_packets > 0 {
            assert_one_segment(&path, &path);
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} captures with TCP");
}

#[test]
fn one_trace_saved_as_pcapng_and_as_pcap_is_one_segment() {
    let dir = book_dir();
    assert_one_segment(
        &dir.join("http_espn.pcapng"),
        &dir.join("ppa2e_http_espn.pcap"),
    );
}
