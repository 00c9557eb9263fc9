//! Each lab capture shows the cause its manifest names: the figures measured
//! when it was made are found again in the capture, by tcpwhy where it
//! reports them and by tshark for per-packet timing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

/// Linux delays an ACK by at least 40 ms; the lab's wire adds a little.
const DELAYED_ACK_MS: std::ops::RangeInclusive<f64> = 36.0..=60.0;

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

fn manifests() -> Vec<Value> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(captures_dir())
        .expect("tests/captures")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|path| serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap())
        .collect()
}

fn close(actual: f64, expected: f64, what: &str) {
    let tolerance = expected.abs() * 0.1;
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: measured {actual:.3}, manifest says {expected:.3} (±10%)"
    );
}

/// tcpwhy's connection objects for a capture.
fn connections(capture: &Path) -> Vec<Value> {
    common::objects("connections", capture, "connection")
}

/// Data segments as (time, source address, payload length, stream), from tshark.
fn data_segments(capture: &Path) -> Vec<(f64, String, u64, u64)> {
    let output = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args(["-Y", "tcp.len > 0", "-T", "fields"])
        .args([
            "-e",
            "frame.time_epoch",
            "-e",
            "ip.src",
            "-e",
            "tcp.len",
            "-e",
            "tcp.stream",
        ])
        .output()
        .expect("tshark must be installed (apt-get install tshark)");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            (
                cells[0].parse().unwrap(),
                cells[1].to_string(),
                cells[2].parse().unwrap(),
                cells[3].parse().unwrap(),
            )
        })
        .collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    assert!(!values.is_empty(), "nothing to take the median of");
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Gaps over 5 ms between consecutive data segments of one sender in one connection.
fn write_stalls_ms(segments: &[(f64, String, u64, u64)], sender: &str) -> Vec<f64> {
    let mine: Vec<_> = segments.iter().filter(|s| s.1 == sender).collect();
    mine.windows(2)
        .filter(|pair| pair[0].3 == pair[1].3)
        .map(|pair| (pair[1].0 - pair[0].0) * 1000.0)
        .filter(|gap| *gap > 5.0)
        .collect()
}

fn check_stall(capture: &Path, expect: &Value) {
    let sender = expect["stalled_side"].as_str().unwrap_or("10.77.0.1");
    let stalls = write_stalls_ms(&data_segments(capture), sender);
    let stall = median(stalls.clone());
    close(stall, expect["stall_ms"].as_f64().unwrap(), "stall ms");
    assert!(
        DELAYED_ACK_MS.contains(&stall),
        "a {stall} ms stall is no delayed ACK"
    );
    assert_eq!(stalls.len() as u64, expect["stalls"].as_u64().unwrap());
}

fn check_with_engine(name: &str, capture: &Path, expect: &Value) {
    let conns = connections(capture);
    let first = &conns[0];
    let c2s = &first["client_to_server"];
    let s2c = &first["server_to_client"];
    let sum = |field: &str, direction: &str| -> u64 {
        conns
            .iter()
            .map(|c| c[direction]["retransmissions"][field].as_u64().unwrap())
            .sum()
    };
    if let Some(window) = expect["window_bytes"].as_f64() {
        close(
            s2c["window"]["max"].as_f64().unwrap(),
            window,
            "receive window",
        );
    }
    if let Some(rtt) = expect["rtt_ms"].as_f64() {
        let handshake = &first["handshake"];
        let measured = handshake["rtt_to_server_ms"].as_f64().unwrap()
            + handshake["rtt_to_client_ms"].as_f64().unwrap();
        close(measured, rtt, "handshake RTT");
    }
    if let Some(rate) = expect["throughput_bytes_per_s"].as_f64() {
        let seconds = first["duration_ms"].as_f64().unwrap() / 1e3;
        let measured = c2s["unique_payload_bytes"].as_f64().unwrap() / seconds;
        close(measured, rate, "throughput");
    }
    if let Some(count) = expect["zero_windows_min"].as_u64() {
        assert_eq!(
            s2c["zero_windows"].as_u64(),
            Some(count),
            "{name}: zero windows"
        );
    }
    if let Some(count) = expect["retransmissions_min"].as_u64() {
        assert_eq!(
            c2s["retransmissions"]["total"].as_u64(),
            Some(count),
            "{name}"
        );
    }
    if let Some(count) = expect["lost_segments_min"].as_u64() {
        assert_eq!(
            c2s["lost_segments"].as_u64(),
            Some(count),
            "{name}: lost segments"
        );
    }
    if let Some(count) = expect["retransmissions"].as_u64() {
        let total = sum("total", "client_to_server") + sum("total", "server_to_client");
        assert_eq!(total, count, "{name}: retransmissions");
    }
    if let Some(turns) = expect["turns"].as_u64() {
        assert_eq!(
            c2s["payload_bytes"].as_u64(),
            Some(turns * 100),
            "{name}: request bytes"
        );
    }
    if let Some(count) = expect["connections"].as_u64() {
        assert_eq!(conns.len() as u64, count, "{name}: connections");
    }
    if let Some(wanted) = expect["client_ports"].as_array() {
        let ports: BTreeSet<u64> = conns
            .iter()
            .map(|c| {
                c["client"]
                    .as_str()
                    .unwrap()
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        let expected: BTreeSet<u64> = wanted.iter().map(|port| port.as_u64().unwrap()).collect();
        assert_eq!(ports, expected, "{name}: client ports");
    }
}

/// The front tier's connections arrive at once; the pool's open one a second.
fn check_pool(capture: &Path, expect: &Value) {
    let conns = connections(capture);
    let starts_on = |port: &str| -> Vec<f64> {
        conns
            .iter()
            .filter(|c| c["server"].as_str().unwrap().ends_with(port))
            .map(|c| c["first_ns"].as_i64().unwrap() as f64 / 1e9)
            .collect()
    };
    let front = starts_on(":8080");
    let back = starts_on(":9090");
    assert_eq!(
        front.len() as u64,
        expect["front_connections"].as_u64().unwrap()
    );
    assert_eq!(
        back.len() as u64,
        expect["back_connections"].as_u64().unwrap()
    );
    let intervals = back.windows(2).map(|pair| pair[1] - pair[0]).collect();
    let interval = expect["back_connection_interval_s"].as_f64().unwrap();
    close(median(intervals), interval, "pool growth interval");
    close(interval, 1.0, "the pool grows one connection a second");
}

fn check_syn_retries(capture: &Path, expect: &Value) {
    let conns = connections(capture);
    assert_eq!(conns.len() as u64, expect["connections"].as_u64().unwrap());
    let retries_of = |c: &Value| c["handshake"]["syn_retries_ns"].as_array().unwrap().len();
    let most_retried = conns.iter().max_by_key(|c| retries_of(c)).unwrap();
    let syn = most_retried["handshake"]["syn_ns"].as_i64().unwrap();
    let retries: Vec<f64> = most_retried["handshake"]["syn_retries_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t.as_i64().unwrap() - syn) as f64 / 1e9)
        .collect();
    let expected = expect["syn_retry_after_s"].as_array().unwrap();
    assert_eq!(retries.len(), expected.len(), "SYN retries");
    for (measured, wanted) in retries.iter().zip(expected) {
        close(*measured, wanted.as_f64().unwrap(), "SYN retry time");
    }
    let unanswered = conns.iter().filter(|c| c["state"] == "S0").count();
    assert_eq!(
        unanswered as u64,
        expect["unanswered_connections"].as_u64().unwrap()
    );
}

fn check_timing(capture: &Path, expect: &Value) {
    let segments = data_segments(capture);
    if let Some(think) = expect["server_think_ms"].as_f64() {
        let mut thinks = Vec::new();
        for pair in segments.windows(2) {
            if pair[0].1 == "10.77.0.1" && pair[1].1 == "10.77.0.2" && pair[0].3 == pair[1].3 {
                thinks.push((pair[1].0 - pair[0].0) * 1000.0);
            }
        }
        close(median(thinks), think, "server think time");
    }
    if let Some(sizes) = expect["response_segment_sizes"].as_array() {
        let seen: BTreeSet<u64> = segments
            .iter()
            .filter(|s| s.1 == "10.77.0.2")
            .map(|s| s.2)
            .collect();
        let wanted: BTreeSet<u64> = sizes.iter().map(|s| s.as_u64().unwrap()).collect();
        assert_eq!(seen, wanted, "response segment sizes");
    }
    if let Some(period) = expect["period_s"].as_f64() {
        let silences: Vec<(f64, f64)> = segments
            .windows(2)
            .map(|pair| (pair[0].0, (pair[1].0 - pair[0].0) * 1000.0))
            .filter(|(_, gap)| *gap >= 200.0)
            .collect();
        close(
            median(silences.iter().map(|s| s.1).collect()),
            expect["stall_ms"].as_f64().unwrap(),
            "stall",
        );
        let starts: Vec<f64> = silences.iter().map(|s| s.0).collect();
        close(
            median(starts.windows(2).map(|w| w[1] - w[0]).collect()),
            period,
            "stall period",
        );
    }
}

#[test]
fn every_lab_capture_shows_the_figures_its_manifest_names() {
    let manifests = manifests();
    assert!(manifests.len() >= 16, "expected the 16 lab scenarios");
    for manifest in &manifests {
        let name = manifest["scenario"].as_str().unwrap();
        let capture = captures_dir().join(manifest["capture"].as_str().unwrap());
        let expect = &manifest["expect"];
        println!("checking {name}: {}", manifest["figure"]);
        check_with_engine(name, &capture, expect);
        if expect.get("back_connections").is_some() {
            check_pool(&capture, expect);
        }
        if expect.get("syn_retry_after_s").is_some() {
            check_syn_retries(&capture, expect);
        }
        if expect.get("stalls").is_some() && expect.get("period_s").is_none() {
            check_stall(&capture, expect);
        }
        check_timing(&capture, expect);
    }
}
