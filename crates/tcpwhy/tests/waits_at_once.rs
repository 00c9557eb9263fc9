//! Waits that ran at once count once by the clock: no finding's time by the
//! clock is longer than the capture, nor than its summed cost, and the
//! terminal says both where they differ; shares are of one whole.

use crate::common;

use std::path::Path;
use std::process::Command;

/// The capture's length in ms, as Wireshark's `frame.time_relative` of its
/// last frame gives it.
fn capture_ms(capture: &Path) -> f64 {
    let output = Command::new("tshark")
        .args(["-r", capture.to_str().unwrap(), "-T", "fields"])
        .args(["-e", "frame.time_relative"])
        .output()
        .expect("tshark runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text.lines().last().expect("a frame");
    last.trim().parse::<f64>().unwrap() * 1e3
}

#[test]
fn no_finding_takes_longer_by_the_clock_than_the_capture() {
    for capture in common::book_captures_and_demo() {
        let length = capture_ms(&capture);
        for finding in common::objects_read_so_far("diagnose", &capture, "finding") {
            let Some(clock) = finding["figures"]["wall_clock_ms"].as_f64() else {
                continue;
            };
            let cost = finding["cost_ms"].as_f64().unwrap();
            let name = format!("{} on {}", finding["kind"], capture.display());
            assert!(clock <= length + 1.0, "{name}: {clock} ms in {length} ms");
            assert!(clock <= cost + 0.001, "{name}: {clock} ms of {cost} ms");
        }
    }
}

#[test]
fn handshakes_retried_at_once_cost_their_wait_once_by_the_clock() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
    let loss = common::objects_read_so_far("diagnose", &demo, "finding")
        .into_iter()
        .find(|f| f["kind"] == "packet_loss")
        .expect("the demo's packet loss");
    let cost = loss["cost_ms"].as_f64().unwrap();
    let clock = loss["figures"]["wall_clock_ms"].as_f64().unwrap();
    assert!(
        cost > capture_ms(&demo),
        "six retried handshakes sum past the capture"
    );
    assert!(
        clock < cost / 4.0,
        "{clock} ms by the clock of {cost} ms summed"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["diagnose", demo.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    let line = format!("summed, {} by the clock", diagnose::units::duration(clock));
    assert!(text.contains(&line), "{line:?} in\n{text}");
}

/// Every share is of one whole, the time at stake, and each part of it goes
/// to one cause: on every book capture the shares add up to at most all of
/// it, and a side's own pace, which no one waited for, takes no share.
#[test]
fn the_findings_shares_of_the_time_at_stake_add_up_to_at_most_the_whole() {
    let mut own_pace = 0;
    for capture in common::book_captures_and_demo() {
        let findings = common::objects_read_so_far("diagnose", &capture, "finding");
        let shares: f64 = findings.iter().map(|f| f["share"].as_f64().unwrap()).sum();
        assert!(shares <= 1.0 + 1e-9, "{}: {shares}", capture.display());
        for paced in findings.iter().filter(|f| {
            ["client_delay", "client_think", "server_idle"].contains(&f["kind"].as_str().unwrap())
        }) {
            assert_eq!(paced["share"], 0.0, "{paced}");
            own_pace += 1;
        }
    }
    assert!(own_pace > 0, "no book capture shows a side's own pace");
}
