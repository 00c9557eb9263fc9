//! `tcpwhy timeline` on lab captures shows the periods they were made with.

use crate::common;

use serde_json::Value;

/// Ticks and the closing `end` object of `tcpwhy timeline` on a lab capture.
fn timeline(name: &str, tick: &str) -> (Vec<Value>, Value) {
    let capture = common::lab_file(&format!("{name}.pcap"));
    let lines = common::json_lines("timeline", &["--tick", tick], &capture);
    let (end, ticks) = lines.split_last().unwrap();
    (ticks.to_vec(), end.clone())
}

#[test]
fn loss_bursts_recur_every_second_and_every_packet_is_counted_once() {
    let (ticks, end) = timeline("loss_bursts_downstream", "250ms");
    let packets: u64 = ticks.iter().map(|t| t["packets"].as_u64().unwrap()).sum();
    assert_eq!(packets, end["frames"].as_u64().unwrap());
    let lossy: Vec<usize> = ticks
        .iter()
        .enumerate()
        .filter(|(_, t)| t["retransmissions"].as_u64().unwrap() > 0)
        .map(|(index, _)| index)
        .collect();
    assert!(lossy.len() >= 3, "{lossy:?}");
    assert!(
        lossy.windows(2).all(|pair| pair[1] - pair[0] == 4),
        "bursts at ticks {lossy:?}"
    );
}

#[test]
fn periodic_stalls_leave_silent_ticks_every_one_and_a_half_seconds() {
    let (ticks, _) = timeline("periodic_stalls", "100ms");
    let silent: Vec<usize> = ticks
        .iter()
        .enumerate()
        .filter(|(_, t)| t["payload_bytes"] == 0)
        .map(|(index, _)| index)
        .collect();
    // Each 300 ms stall silences at least two whole 100 ms ticks.
    let starts: Vec<usize> = silent
        .iter()
        .enumerate()
        .filter(|(i, &tick)| *i == 0 || silent[i - 1] != tick - 1)
        .map(|(_, &tick)| tick)
        .collect();
    assert!(starts.len() >= 3, "{silent:?}");
    assert!(
        starts
            .windows(2)
            .all(|pair| (14..=16).contains(&(pair[1] - pair[0]))),
        "{starts:?}"
    );
}

#[test]
fn unanswered_connections_count_as_failed_in_the_ticks_they_began() {
    let (ticks, _) = timeline("syn_drops", "1s");
    let manifest = common::manifest("syn_drops");
    let sum = |series: &str| -> u64 { ticks.iter().map(|t| t[series].as_u64().unwrap()).sum() };
    assert_eq!(
        sum("new_connections"),
        manifest["expect"]["connections"].as_u64().unwrap()
    );
    assert_eq!(
        sum("failed_connections"),
        manifest["expect"]["unanswered_connections"]
            .as_u64()
            .unwrap()
    );
    // Clients arrive over the first 2.4 s, so every failure lies in the first three ticks.
    assert!(ticks.iter().skip(3).all(|t| t["failed_connections"] == 0));
}

#[test]
fn open_connections_grow_with_the_back_tier_pool_one_a_second() {
    let (ticks, _) = timeline("pool_queueing", "1s");
    let manifest = common::manifest("pool_queueing");
    let front = manifest["expect"]["front_connections"].as_u64().unwrap();
    let open: Vec<u64> = ticks
        .iter()
        .map(|t| t["connections_open"].as_u64().unwrap())
        .collect();
    // All front connections and the first back one open in the first second,
    // then the pool adds one connection a second.
    assert_eq!(open[..3], [front + 1, front + 2, front + 3], "{open:?}");
    for tick in &ticks {
        let started = tick["transactions_started"].as_u64().unwrap();
        let busy = tick["transactions_in_progress"].as_u64().unwrap();
        assert!(busy >= started.min(1), "{tick}");
    }
}
