//! `diff` on the lab's before/after pairs: the same 20 request/response
//! exchanges, first with Nagle holding each request's second piece for the
//! server's delayed ACK, then with TCP_NODELAY; and a client that thinks
//! 200 ms between turns, first for 10 exchanges with a server taking 40 ms,
//! then for 30 with one taking 10 ms.

use std::path::{Path, PathBuf};

use compare::diff::{Change, Diff};
use diagnose::{FindingKind, Severity};
use serde_json::Value;

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

/// The pair recorded for this crate's tests (see tests/captures/README.md).
fn own_captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures")
}

/// A scenario's manifest, from the lab's captures or this crate's own.
fn manifest(scenario: &str) -> Value {
    let name = format!("{scenario}.json");
    let path = [captures_dir(), own_captures_dir()]
        .into_iter()
        .map(|dir| dir.join(&name))
        .find(|path| path.exists())
        .unwrap();
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let capture = path.with_file_name(manifest["capture"].as_str().unwrap());
    manifest["path"] = Value::String(capture.to_string_lossy().into_owned());
    manifest
}

fn diffed(before: &Value, after: &Value) -> Diff {
    let path = |m: &Value| PathBuf::from(m["path"].as_str().unwrap());
    compare::diff::diff(
        path(before).to_str().unwrap(),
        path(after).to_str().unwrap(),
    )
    .unwrap()
}

fn within_10_percent(measured: f64, planted: f64) -> bool {
    (measured - planted).abs() <= 0.1 * planted.abs()
}

#[test]
fn turning_nagle_off_removes_the_finding_and_its_wait_from_every_exchange() {
    let before = manifest("nagle_delayed_ack");
    let after = manifest("nagle_fixed");
    assert_eq!(after["expect"]["before"], before["capture"]);
    let stall_ms = before["expect"]["stall_ms"].as_f64().unwrap();
    let exchanges = before["expect"]["exchanges"].as_u64().unwrap();
    let diff = diffed(&before, &after);

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

    let waited = |run: &compare::diff::Run| run.waited_per_transaction_ms.unwrap();
    let saved = waited(&diff.before) - waited(&diff.after);
    assert!(within_10_percent(saved, stall_ms), "{saved} ms");
}

#[test]
fn what_nagle_hid_is_not_new_once_it_is_gone() {
    let diff = diffed(&manifest("nagle_delayed_ack"), &manifest("nagle_fixed"));
    // The round trips paid turn after turn cost as much per exchange before:
    // Nagle's wait hid them, the change did not bring them.
    let chattiness = diff
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Chattiness)
        .expect("the fixed run's chattiness is listed");
    assert!(chattiness.before.is_none());
    assert_eq!(chattiness.change, Change::WithTheWork);
    assert!(diff.findings.iter().all(|f| f.change != Change::New));
}

#[test]
fn more_work_and_the_client_thinking_are_not_read_as_getting_worse() {
    let before = manifest("think_before");
    let after = manifest("think_after");
    assert_eq!(after["expect"]["before"], before["capture"]);
    let figure = |m: &Value, name: &str| m["expect"][name].as_f64().unwrap();
    let diff = diffed(&before, &after);
    assert_eq!(
        diff.before.transactions as f64,
        figure(&before, "exchanges")
    );
    assert_eq!(diff.after.transactions as f64, figure(&after, "exchanges"));

    // The client's pauses between turns are its own pace: counted apart,
    // three times as many after, and no finding.
    for (run, manifest) in [(&diff.before, &before), (&diff.after, &after)] {
        let pauses = figure(manifest, "exchanges") - 1.0;
        let pace = pauses * figure(manifest, "client_think_ms");
        assert!(within_10_percent(run.client_pace_ms, pace), "{run:?}");
    }
    assert!(diff
        .findings
        .iter()
        .all(|f| f.kind != FindingKind::ClientThink && f.kind != FindingKind::ClientDelay));

    // Each exchange waited as much less as the server thinks less.
    let cut = figure(&before, "server_think_ms") - figure(&after, "server_think_ms");
    let waited = |run: &compare::diff::Run| run.waited_per_transaction_ms.unwrap();
    let saved = waited(&diff.before) - waited(&diff.after);
    assert!(within_10_percent(saved, cut), "{saved} ms");

    // Three times the round trips is three times the work, not a longer path.
    let path = diff
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::PathLatency)
        .expect("the path's round trips are listed");
    assert_eq!(path.change, Change::Still);
    let per_transaction = |found: &Option<compare::diff::FoundOnce>| {
        found.as_ref().unwrap().cost_per_transaction_ms.unwrap()
    };
    assert!(within_10_percent(
        per_transaction(&path.after),
        per_transaction(&path.before)
    ));
    assert!(diff.findings.iter().all(|f| f.change != Change::New));
}
