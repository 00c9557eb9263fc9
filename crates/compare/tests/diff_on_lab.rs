//! `diff` on the lab's before/after pair: the same 20 request/response
//! exchanges, first with Nagle holding each request's second piece for the
//! server's delayed ACK, then with TCP_NODELAY.

use std::path::{Path, PathBuf};

use compare::diff::Change;
use diagnose::Severity;
use serde_json::Value;

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

fn manifest(scenario: &str) -> Value {
    let text = std::fs::read_to_string(captures_dir().join(format!("{scenario}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn turning_nagle_off_removes_the_finding_and_its_wait_from_every_exchange() {
    let before = manifest("nagle_delayed_ack");
    let after = manifest("nagle_fixed");
    assert_eq!(after["expect"]["before"], before["capture"]);
    let stall_ms = before["expect"]["stall_ms"].as_f64().unwrap();
    let exchanges = before["expect"]["exchanges"].as_u64().unwrap();
    let path = |m: &Value| captures_dir().join(m["capture"].as_str().unwrap());
    let diff = compare::diff::diff(
        path(&before).to_str().unwrap(),
        path(&after).to_str().unwrap(),
    )
    .unwrap();

    let nagle = diff
        .findings
        .iter()
        .find(|f| f.kind == diagnose::FindingKind::NagleDelayedAck)
        .expect("the planted finding is listed");
    assert_eq!(nagle.change, Change::Gone);
    assert!(nagle.before.as_ref().unwrap().severity >= Severity::Warning);
    assert!(diff
        .findings
        .iter()
        .filter(|f| f.change == Change::New)
        .all(|f| f.after.as_ref().unwrap().severity < Severity::Warning));

    assert_eq!(diff.transaction_types.len(), 1);
    let exchange = &diff.transaction_types[0];
    assert_eq!(exchange.before.as_ref().unwrap().count, exchanges);
    assert_eq!(exchange.after.as_ref().unwrap().count, exchanges);
    let p50_change = exchange.p50_change_ms.unwrap();
    assert!(
        (p50_change + stall_ms).abs() <= 0.1 * stall_ms,
        "{p50_change} ms"
    );
    assert!(diff.after.throughput_bytes_per_s > 10.0 * diff.before.throughput_bytes_per_s);
}
