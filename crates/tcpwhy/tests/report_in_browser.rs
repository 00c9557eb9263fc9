//! `tcpwhy report` opened in headless Chromium: findings shown, every chart
//! drawn, a connection row's click draws its ladder, nothing from the
//! capture runs as script, and charts made again and again leave no garbage. Needs chromium and the node packages of
//! tests/browser, which `.ci/run` installs.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";
const HOSTILE_SCRIPT: &str = "<script>alert(1)</script>";
const HOSTILE_ATTRIBUTE: &str = "\"onload=alert(1)";

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn browser_dir() -> PathBuf {
    repository().join("tests/browser")
}

/// A fresh directory under target/ for this test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = repository().join("target/report-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tcpwhy_report(args: &[&Path]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .arg("report")
        .arg("--quiet")
        .args(args)
        .output()
        .unwrap()
}

/// Runs tests/browser/check.mjs on `report`; its JSON summary, or a failure with its reasons.
fn check_in_browser(report: &Path, extra: &[&str]) -> Value {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: run .ci/run, which installs chromium"
    );
    assert!(
        browser_dir().join("node_modules/playwright-core").exists(),
        "tests/browser/node_modules is missing: run .ci/run, which runs npm ci there"
    );
    let output = Command::new("node")
        .current_dir(browser_dir())
        .arg("check.mjs")
        .arg(report)
        .args(extra)
        .output()
        .expect("node is required: run .ci/run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the report failed in the browser:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn a_lab_report_shows_its_findings_and_draws_every_chart_in_chromium() {
    let capture = common::lab_file("zero_window.pcap");
    let dir = scratch("zero_window");
    let html = dir.join("report.html");
    let output = tcpwhy_report(&[&capture, Path::new("-o"), &html]);
    assert!(output.status.success(), "{output:?}");
    let screenshot = repository().join("target/report-screenshot.png");
    let summary = check_in_browser(&html, &["--screenshot", screenshot.to_str().unwrap()]);
    let findings = common::objects("diagnose", &capture, "finding");
    assert!(!findings.is_empty());
    assert_eq!(summary["findings"], findings.len());
    let titles = summary["findingTitles"].as_array().unwrap();
    for (shown, finding) in titles.iter().zip(&findings) {
        let title = finding["title"].as_str().unwrap();
        assert!(
            shown.as_str().unwrap().ends_with(title),
            "{shown} is not {title}"
        );
    }
    assert_eq!(summary["clickedConnection"], 0);
    assert!(
        summary["connectionCharts"]["chart-ladder"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(screenshot.exists());
}

#[test]
fn a_click_on_another_connection_row_draws_that_connections_ladder() {
    let capture = common::lab_file("syn_drops.pcap");
    let dir = scratch("syn_drops");
    let html = dir.join("report.html");
    assert!(tcpwhy_report(&[&capture, Path::new("-o"), &html])
        .status
        .success());
    let summary = check_in_browser(&html, &[]);
    // The first finding's example is selected at load; the click picks another row.
    let clicked = summary["clickedConnection"].as_u64().unwrap();
    let example =
        common::objects("diagnose", &capture, "finding")[0]["example_connection"].as_u64();
    assert_ne!(Some(clicked), example);
    assert!(
        summary["connectionCharts"]["chart-ladder"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn repeated_selections_keep_the_heap_flat_and_a_resize_redraws_each_chart_once() {
    let capture = repository().join("examples/demo.pcap");
    let dir = scratch("leaks");
    let html = dir.join("report.html");
    assert!(tcpwhy_report(&[&capture, Path::new("-o"), &html])
        .status
        .success());
    let rounds = 500;
    let summary = check_in_browser(&html, &["--leak-check", &rounds.to_string()]);
    let leaks = &summary["leaks"];
    // Before charts were torn down, 500 selections grew the heap by 5.9 MB.
    let growth = leaks["heapGrowth"].as_i64().unwrap();
    assert!(growth < 512 * 1024, "the heap grew {growth} bytes: {leaks}");
    assert_eq!(leaks["chartsAfter"], leaks["chartsBefore"], "{leaks}");
    let charts = leaks["chartsAfter"].as_u64().unwrap();
    let redraws = leaks["resizeRedraws"].as_u64().unwrap();
    assert!(
        (1..=charts).contains(&redraws),
        "a resize redrew {redraws} times for {charts} charts"
    );
}

/// An HTTP exchange whose request line and Host header carry markup.
fn hostile_capture(path: &Path) {
    let request = format!("GET /{HOSTILE_SCRIPT} HTTP/1.1\r\nHost: {HOSTILE_ATTRIBUTE}\r\n\r\n");
    let response =
        format!("HTTP/1.1 200 OK\r\nServer: {HOSTILE_SCRIPT}\r\nContent-Length: 0\r\n\r\n");
    let mut trace = synth::Trace::ethernet();
    let mut conn = synth::Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send_bytes(&mut trace, synth::Side::Client, 20.0, request.as_bytes());
    conn.ack(&mut trace, synth::Side::Server, 25.0);
    conn.send_bytes(&mut trace, synth::Side::Server, 40.0, response.as_bytes());
    conn.ack(&mut trace, synth::Side::Client, 45.0);
    conn.fin(&mut trace, synth::Side::Client, 50.0);
    conn.fin(&mut trace, synth::Side::Server, 55.0);
    conn.ack(&mut trace, synth::Side::Client, 60.0);
    trace.write(path).unwrap();
}

#[test]
fn markup_in_payloads_and_file_names_is_shown_as_text_and_never_runs() {
    let dir = scratch("hostile_capture");
    // The file name is shown in the report too: it carries markup of its own.
    let capture = dir.join(format!(
        "{HOSTILE_ATTRIBUTE}<img src=x onerror=alert(2)>.pcap"
    ));
    hostile_capture(&capture);
    let html = dir.join("report.html");
    let output = tcpwhy_report(&[&capture, Path::new("-o"), &html]);
    assert!(output.status.success(), "{output:?}");
    let name = capture.file_name().unwrap().to_str().unwrap();
    check_in_browser(&html, &["--expect-text", name]);
}

#[test]
fn markup_in_transaction_names_and_connection_history_is_shown_as_text_and_never_runs() {
    let dir = scratch("hostile_data");
    let capture = dir.join("exchange.pcap");
    hostile_capture(&capture);
    let html = dir.join("report.html");
    write_hostile_report(&capture, &html);
    let summary = check_in_browser(
        &html,
        &[
            "--expect-text",
            HOSTILE_SCRIPT,
            "--expect-text",
            HOSTILE_ATTRIBUTE,
        ],
    );
    assert_eq!(summary["alerts"], serde_json::json!([]));
    assert_eq!(summary["findings"], 1);
}

/// The report of `pcap` through the real stages, its strings then replaced
/// by markup where payload naming and the connection history would put them
/// (addresses are typed and cannot carry text).
fn write_hostile_report(pcap: &Path, html: &Path) {
    let mut collector = report::Collector::for_connections(&[0]);
    let stages = pipeline::Stages {
        timeline: Some(None),
        ..pipeline::Stages::default()
    };
    let files = [pcap.to_str().unwrap().to_string()];
    let analysis = pipeline::analyze_observed(
        &files,
        stages,
        pipeline::Silent,
        |_| {},
        |view| collector.observe(view),
    )
    .unwrap();
    let mut connections = analysis.connections;
    connections[0].history = HOSTILE_SCRIPT.to_string();
    let mut transactions = analysis.transactions;
    assert!(!transactions.is_empty());
    for transaction in &mut transactions {
        transaction.name = Some(format!("GET /{HOSTILE_SCRIPT} {HOSTILE_ATTRIBUTE}"));
    }
    let finding = diagnose::Finding {
        kind: "server_think_time",
        severity: diagnose::Severity::Warning,
        title: format!("{HOSTILE_SCRIPT} is slow"),
        cost_ms: 10.0,
        share: 0.1,
        connections: 1,
        transactions: 1,
        example_connection: Some(0),
        frames: vec![4],
        wireshark_filter: format!("http.host == \"{HOSTILE_ATTRIBUTE}\""),
        explanation: HOSTILE_SCRIPT.to_string(),
        fix: HOSTILE_ATTRIBUTE.to_string(),
        what_if: HOSTILE_SCRIPT.to_string(),
        suspected: Some(HOSTILE_ATTRIBUTE.to_string()),
        figures: Default::default(),
    };
    let files = vec![format!("{HOSTILE_SCRIPT}.pcap")];
    let report = report::Report {
        files: &files,
        frames: 9,
        connections: &connections,
        transactions: &transactions,
        ticks: &analysis.ticks,
        findings: &[finding],
        details: &collector.finish(),
        detail_command: format!("tcpwhy report {HOSTILE_SCRIPT}.pcap --detail"),
        partial: Some(format!("partial: {HOSTILE_SCRIPT}")),
    };
    report::write(&mut std::fs::File::create(html).unwrap(), &report).unwrap();
}
