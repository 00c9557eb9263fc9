//! `tcpwhy report` opened in headless Chromium: findings shown, every chart
//! drawn, a connection row's click draws its ladder, nothing from the
//! capture runs as script, and charts made again and again leave no garbage.
//! `tcpwhy diff --html` too: both runs drawn on shared axes, each finding's
//! change shown. Needs chromium and the node packages of tests/browser,
//! which `.ci/run` installs.

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
    run_check("check.mjs", report, extra)
}

/// Runs the browser check `script` on `page`; its JSON summary, or a failure with its reasons.
fn run_check(script: &str, page: &Path, extra: &[&str]) -> Value {
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
        .arg(script)
        .arg(page)
        .args(extra)
        .output()
        .expect("node is required: run .ci/run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{} failed in the browser:\n{stdout}\n{}",
        page.display(),
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
        |view, _| collector.observe(view),
    )
    .unwrap();
    let mut connections = analysis.connections;
    connections[0].history = HOSTILE_SCRIPT.to_string();
    let mut transactions = analysis.transactions;
    assert!(!transactions.is_empty());
    for transaction in &mut transactions {
        transaction.name = Some(format!("GET /{HOSTILE_SCRIPT} {HOSTILE_ATTRIBUTE}"));
    }
    let title = format!("{HOSTILE_SCRIPT} is slow");
    let finding = diagnose::Finding {
        severity: diagnose::Severity::Warning,
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
        ..diagnose::Finding::new(diagnose::FindingKind::ServerThinkTime, &title, 10.0)
    };
    let files = vec![format!("{HOSTILE_SCRIPT}.pcap")];
    let report = report::Report {
        files: &files,
        frames: 9,
        start_ns: analysis.first_ns,
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

/// `tcpwhy diff BEFORE AFTER --html PAGE`; its JSON result.
fn tcpwhy_diff(before: &Path, after: &Path, page: &Path) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["diff", "--format", "json"])
        .args([before, after])
        .arg("--html")
        .arg(page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_diff_page_draws_both_runs_on_shared_axes_and_shows_nagle_gone() {
    let before = common::lab_file("nagle_delayed_ack.pcap");
    let after = common::lab_file("nagle_fixed.pcap");
    let page = scratch("diff_nagle").join("diff.html");
    let diff = tcpwhy_diff(&before, &after, &page);
    let summary = run_check("check_diff.mjs", &page, &[]);
    // Each series chart has a line per run, both from 0 on one time axis
    // (check_diff.mjs fails otherwise); the runs last as long as the JSON says.
    let tick_ms = diff["series"]["tick_ms"].as_f64().unwrap();
    for chart in summary["charts"].as_object().unwrap().values() {
        for (run, name) in chart["runs"]
            .as_array()
            .unwrap()
            .iter()
            .zip(["before", "after"])
        {
            let ticks = diff["series"][name]["throughput_bps"]
                .as_array()
                .unwrap()
                .len();
            assert_eq!(
                run["last"].as_f64().unwrap(),
                ticks as f64 * tick_ms,
                "{run}"
            );
        }
    }
    // Without Nagle's wait the run is over in a fraction of the time.
    let lasted = |run: usize| {
        summary["charts"]["chart-throughput"]["runs"][run]["last"]
            .as_f64()
            .unwrap()
    };
    assert!(lasted(1) * 4.0 < lasted(0), "{summary}");
    let changes = summary["changes"].as_array().unwrap();
    assert_eq!(changes.len(), diff["findings"].as_array().unwrap().len());
    let nagle = diff["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "nagle_delayed_ack")
        .expect("the diff names Nagle's wait");
    assert_eq!(nagle["change"], "gone");
    let shown = changes
        .iter()
        .find(|c| c["kind"] == "nagle_delayed_ack")
        .expect("the page shows Nagle's wait");
    assert_eq!(shown["change"], "gone");
    let title = nagle["before"]["title"].as_str().unwrap();
    assert!(shown["text"].as_str().unwrap().ends_with(title), "{shown}");
    assert_eq!(
        summary["typeRows"].as_u64().unwrap() as usize,
        diff["transaction_types"].as_array().unwrap().len()
    );
}

#[test]
fn markup_in_the_diffed_file_names_and_payloads_is_shown_as_text_and_never_runs() {
    let dir = scratch("diff_hostile");
    // A file name cannot hold the slash of a closing tag.
    let before = dir.join("<b onmouseover=alert(3)>before.pcap");
    let after = dir.join(format!(
        "{HOSTILE_ATTRIBUTE}<img src=x onerror=alert(2)>.pcap"
    ));
    hostile_capture(&before);
    hostile_capture(&after);
    let page = dir.join("diff.html");
    let diff = tcpwhy_diff(&before, &after, &page);
    let transaction_type = diff["transaction_types"][0]["transaction_type"]
        .as_str()
        .unwrap();
    assert!(
        transaction_type.contains(HOSTILE_SCRIPT),
        "{transaction_type}"
    );
    let summary = run_check(
        "check_diff.mjs",
        &page,
        &[
            "--expect-text",
            before.to_str().unwrap(),
            "--expect-text",
            after.to_str().unwrap(),
            "--expect-text",
            transaction_type,
        ],
    );
    assert_eq!(summary["alerts"], serde_json::json!([]));
}
