//! `compare` on the lab's proxy captures, taken on both links of a relay
//! that terminates TCP: each names what the lab planted, with the figures
//! the lab's manifest records (measured with tshark, or by the relay itself).

use std::path::{Path, PathBuf};

use compare::proxy::{CauseKind, Proxy};
use serde_json::Value;

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

fn capture(name: &str) -> String {
    captures_dir().join(name).to_string_lossy().into_owned()
}

fn manifest(scenario: &str) -> Value {
    let text =
        std::fs::read_to_string(captures_dir().join(format!("{scenario}.json"))).expect("manifest");
    serde_json::from_str(&text).expect("manifest is JSON")
}

/// The proxy `compare` finds between the scenario's two captures, given
/// back side first so that the front is found by the exchanges, not the order.
fn proxy_of(scenario: &str) -> (Proxy, Value) {
    let lab = manifest(scenario);
    let front = capture(lab["capture"].as_str().unwrap());
    let back = capture(lab["expect"]["back_capture"].as_str().unwrap());
    let comparison = compare::compare(&back, &front).expect("lab captures read");
    assert_eq!(comparison.packets_matched, 0, "no packet crosses the proxy");
    let proxy = comparison
        .proxy
        .expect("the two sides of the proxy are paired");
    assert_eq!(proxy.front, front);
    (proxy, lab["expect"].clone())
}

fn within_10_percent(measured: f64, planted: f64) -> bool {
    (measured - planted).abs() <= 0.1 * planted.abs()
}

#[test]
fn nagle_at_the_proxy_is_named_with_the_time_it_added() {
    let (proxy, expect) = proxy_of("proxy_nagle");
    assert_eq!(proxy.connections_paired, 1);
    assert_eq!(
        proxy.transactions_paired as u64,
        expect["requests"].as_u64().unwrap()
    );
    let request = proxy.request_added.as_ref().unwrap();
    let planted = expect["request_added_ms_p50"].as_f64().unwrap();
    assert!(
        within_10_percent(request.p50_ms, planted),
        "request added {} ms, the lab measured {planted}",
        request.p50_ms
    );
    let total = expect["request_added_ms_total"].as_f64().unwrap();
    assert!(within_10_percent(request.total_ms, total));
    // The responses went straight through: well under a millisecond.
    let response = proxy.response_added.as_ref().unwrap();
    assert!(response.p50_ms < 1.0, "{response:?}");
    let top = &proxy.causes[0];
    assert_eq!(top.kind, CauseKind::NagleTowardServer, "{:?}", proxy.causes);
    assert_eq!(
        top.transactions as u64,
        expect["nagle_holds"].as_u64().unwrap()
    );
    assert!(within_10_percent(top.cost_ms, total), "{top:?}");
    assert!(proxy.snat.is_none());
}

#[test]
fn snat_exhaustion_behind_the_proxy_is_named_with_its_figures() {
    let (proxy, expect) = proxy_of("proxy_snat");
    let snat = proxy.snat.as_ref().expect("SNAT exhaustion is found");
    let ports = expect["back_source_ports"].as_array().unwrap().len();
    assert_eq!(snat.source_ports, ports);
    assert_eq!(
        snat.back_connections as u64,
        expect["back_side_connections"].as_u64().unwrap()
    );
    assert_eq!(
        snat.reused_in_time_wait as u64,
        expect["reuses_in_time_wait"].as_u64().unwrap()
    );
    let reuse_after = expect["reuse_after_ms_p50"].as_f64().unwrap();
    assert!(within_10_percent(
        snat.reuse_after_ms_p50.unwrap(),
        reuse_after
    ));
    assert_eq!(
        snat.connects_waited as u64,
        expect["connects_waited"].as_u64().unwrap()
    );
    let wait_ms = expect["connect_wait_s_p50"].as_f64().unwrap() * 1000.0;
    assert!(within_10_percent(
        snat.connect_wait_ms_p50.unwrap(),
        wait_ms
    ));
    assert_eq!(
        snat.connects_failed as u64,
        expect["connects_failed"].as_u64().unwrap()
    );
    assert_eq!(proxy.front_without_back, snat.connects_failed);
    assert!(!proxy
        .causes
        .iter()
        .any(|cause| cause.kind == CauseKind::NagleTowardServer));
}
