//! `tcpwhy transactions` on lab captures finds the think times, turns and
//! write patterns each scenario was made with.

use crate::common;

use serde_json::Value;

fn objects(command: &str, name: &str, kind: &str) -> Vec<Value> {
    common::objects(command, &common::lab_file(&format!("{name}.pcap")), kind)
}

fn lab(name: &str) -> (Vec<Value>, Value) {
    let expect = common::manifest(name)["expect"].clone();
    (objects("transactions", name, "transaction"), expect)
}

fn within_10_percent(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= expected * 0.1
}

#[test]
fn server_think_time_is_the_gap_between_request_and_response() {
    let (transactions, expect) = lab("server_think_time");
    assert_eq!(transactions.len(), 10);
    let think = expect["server_think_ms"].as_f64().unwrap();
    for t in &transactions {
        let measured = t["server_think_ms"].as_f64().unwrap();
        assert!(within_10_percent(measured, think), "{measured} vs {think}");
    }
}

#[test]
fn a_chatty_exchange_is_one_transaction_per_turn_each_an_rtt_long() {
    let (transactions, expect) = lab("chatty_high_rtt");
    assert_eq!(transactions.len() as u64, expect["turns"].as_u64().unwrap());
    let rtt = expect["rtt_ms"].as_f64().unwrap();
    for t in &transactions {
        assert!(t["duration_ms"].as_f64().unwrap() >= rtt * 0.9);
        assert_eq!(t["signature"], "blk[100]-blk[200]");
    }
}

#[test]
fn small_writes_show_as_three_response_packets_spread_over_the_pauses() {
    let (transactions, expect) = lab("small_writes");
    let gap = expect["write_gap_ms"].as_f64().unwrap();
    for t in &transactions {
        assert_eq!(
            (t["response_bytes"].as_u64(), t["response_packets"].as_u64()),
            (Some(80), Some(3))
        );
        let transfer = t["response_transfer_ms"].as_f64().unwrap();
        assert!(
            within_10_percent(transfer, 2.0 * gap),
            "{transfer} ms for two {gap} ms pauses"
        );
    }
}

#[test]
fn requests_queueing_for_the_pool_take_far_longer_than_the_back_tier_calls() {
    let (transactions, _) = lab("pool_queueing");
    let connections = objects("connections", "pool_queueing", "connection");
    let server_of =
        |t: &Value| connections[t["connection"].as_u64().unwrap() as usize]["server"].clone();
    let p90 = |server: &str| {
        let mut durations: Vec<f64> = transactions
            .iter()
            .filter(|t| server_of(t).as_str().unwrap().ends_with(server))
            .map(|t| t["duration_ms"].as_f64().unwrap())
            .collect();
        durations.sort_by(f64::total_cmp);
        durations[durations.len() * 9 / 10]
    };
    let (front, back) = (p90(":8080"), p90(":9090"));
    assert!(
        front > 4.0 * back,
        "front p90 {front} ms, back p90 {back} ms"
    );
}
