//! `compare` on the lab's proxy captures, taken on both links of a relay
//! that terminates TCP: each names what the lab planted, with the figures
//! the lab's manifest records (measured with tshark, or by the relay itself).

use std::path::{Path, PathBuf};

use compare::proxy::{CauseKind, Place, Proxy};
use diagnose::FindingKind;
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
    assert_eq!(
        top.kind,
        CauseKind::new(FindingKind::NagleDelayedAck, Place::ProxyServerSide),
        "{:?}",
        proxy.causes
    );
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
        .any(|cause| cause.kind
            == CauseKind::new(FindingKind::NagleDelayedAck, Place::ProxyServerSide)));
}

/// The proxy `compare` finds between a scenario's captures, given front first.
fn proxy_front_first(scenario: &str) -> (Proxy, Value) {
    let lab = manifest(scenario);
    let front = capture(lab["capture"].as_str().unwrap());
    let back = capture(lab["expect"]["back_capture"].as_str().unwrap());
    let proxy = compare::compare(&front, &back)
        .expect("lab captures read")
        .proxy
        .expect("the two sides of the proxy are paired");
    (proxy, lab["expect"].clone())
}

fn cause(proxy: &Proxy, kind: CauseKind) -> Option<&compare::proxy::Cause> {
    proxy.causes.iter().find(|cause| cause.kind == kind)
}

#[test]
fn a_pooling_proxy_is_paired_exchange_by_exchange_over_its_shared_back_connections() {
    let (proxy, expect) = proxy_of("proxy_pool");
    let requests = expect["requests"].as_u64().unwrap() as usize;
    assert_eq!(proxy.transactions_paired, requests);
    assert_eq!(proxy.transactions_named_alike, requests);
    assert_eq!(
        proxy.transactions_forwarded_for_client,
        expect["forwarded_for_their_client"].as_u64().unwrap() as usize
    );
    assert_eq!(
        proxy.connections_paired as u64,
        expect["front_side_connections"].as_u64().unwrap()
    );
    assert_eq!(
        proxy.back_connections_used as u64,
        expect["back_side_connections"].as_u64().unwrap()
    );
    // Each back connection carried the requests of as many clients as the
    // lab counted by request line in both captures.
    let mut carried: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for exchange in &proxy.exchanges {
        carried
            .entry(exchange.back_connection)
            .or_default()
            .push(exchange.front_connection);
    }
    let mut found: Vec<(u64, u64)> = carried
        .values()
        .map(|fronts| {
            let distinct: std::collections::BTreeSet<_> = fronts.iter().collect();
            (fronts.len() as u64, distinct.len() as u64)
        })
        .collect();
    found.sort();
    let mut planted: Vec<(u64, u64)> = expect["back_connections_carried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["requests"].as_u64().unwrap(),
                b["front_connections"].as_u64().unwrap(),
            )
        })
        .collect();
    planted.sort();
    assert_eq!(found, planted);
    let pooled = planted.iter().filter(|&&(_, fronts)| fronts > 1).count();
    assert_eq!(proxy.back_connections_pooled, pooled);
    let added = proxy.request_added.as_ref().unwrap();
    let p50 = expect["request_added_ms_p50"].as_f64().unwrap();
    assert!(
        within_10_percent(added.p50_ms, p50),
        "{added:?}, the lab measured {p50}"
    );
    let total = expect["request_added_ms_total"].as_f64().unwrap();
    assert!(
        within_10_percent(added.total_ms, total),
        "{added:?}, the lab measured {total}"
    );
    // Waiting for a pooled connection is neither Nagle nor a NAT out of ports.
    assert!(
        cause(
            &proxy,
            CauseKind::new(FindingKind::NagleDelayedAck, Place::ProxyServerSide)
        )
        .is_none(),
        "{:?}",
        proxy.causes
    );
    assert!(proxy.snat.is_none(), "{:?}", proxy.snat);
}

#[test]
fn slow_start_after_idle_at_the_proxy_is_named_with_the_time_its_twin_saves() {
    let (proxy, expect) = proxy_front_first("proxy_idle");
    let top = &proxy.causes[0];
    assert_eq!(
        top.kind,
        CauseKind::new(FindingKind::SlowStart, Place::ProxyClientSide),
        "{:?}",
        proxy.causes
    );
    assert_eq!(
        top.transactions as u64,
        expect["responses_after_idle"].as_u64().unwrap()
    );
    let added = expect["added_ms_total"].as_f64().unwrap();
    assert!(
        within_10_percent(top.cost_ms, added),
        "{top:?}; with slow start after idle off the responses took {added} ms less"
    );
    let first_flights = expect["first_flight_bytes"].as_array().unwrap();
    let first_flight = first_flights[first_flights.len() / 2].as_f64().unwrap();
    assert!(within_10_percent(
        top.figures["restart_flight_bytes"],
        first_flight
    ));
    let rtt = expect["rtt_ms"].as_f64().unwrap();
    assert!(within_10_percent(top.figures["rtt_ms"], rtt), "{top:?}");

    let (twin, _) = proxy_front_first(expect["twin"].as_str().unwrap().trim_end_matches(".json"));
    assert!(
        cause(
            &twin,
            CauseKind::new(FindingKind::SlowStart, Place::ProxyClientSide)
        )
        .is_none(),
        "{:?}",
        twin.causes
    );
}

#[test]
fn a_small_receive_window_at_the_proxy_is_named_with_the_time_the_client_waited() {
    let (proxy, expect) = proxy_front_first("proxy_window");
    let top = &proxy.causes[0];
    assert_eq!(
        top.kind,
        CauseKind::new(FindingKind::ReceiveWindowLimited, Place::ProxyClientSide),
        "{:?}",
        proxy.causes
    );
    let window = expect["proxy_window_bytes_p50"].as_f64().unwrap();
    assert!(
        within_10_percent(top.figures["window_bytes"], window),
        "{top:?}"
    );
    let added = expect["added_ms_total"].as_f64().unwrap();
    assert!(
        within_10_percent(top.cost_ms, added),
        "{top:?}; with the kernel's buffer the requests took {added} ms less"
    );
    let (twin, _) = proxy_front_first(expect["twin"].as_str().unwrap().trim_end_matches(".json"));
    let windows = [
        CauseKind::new(FindingKind::ReceiveWindowLimited, Place::ProxyClientSide),
        CauseKind::new(FindingKind::ReceiveWindowLimited, Place::ProxyServerSide),
    ];
    assert!(
        twin.causes.iter().all(|c| !windows.contains(&c.kind)),
        "{:?}",
        twin.causes
    );
}
