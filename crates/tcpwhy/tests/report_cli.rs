//! `tcpwhy report` writes one file atomically and never over an input;
//! `--fail-on` turns findings into exit code 1 for diagnose and report; flags
//! may come before the file when no command is named.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tcpwhy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/report-cli-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_report_is_one_html_file_and_leaves_nothing_else_behind() {
    let dir = scratch("written");
    let html = dir.join("report.html");
    std::fs::write(&html, "an older report").unwrap();
    let capture = common::lab_file("loss_bursts_downstream.pcap");
    let output = tcpwhy(&["report", "-q", path(&capture), "-o", path(&html)]);
    assert!(output.status.success(), "{output:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    assert!(text.trim_end().ends_with("</html>"));
    assert!(
        !text.contains("http://") && !text.contains("https://"),
        "nothing to fetch"
    );
    assert_eq!(entries(&dir), ["report.html"]);
}

#[test]
fn an_output_path_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("refused");
    let capture = dir.join("trace.pcap");
    std::fs::copy(common::lab_file("zero_window.pcap"), &capture).unwrap();
    let before = std::fs::read(&capture).unwrap();
    let alias = dir.join("sub/../trace.pcap");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let output = tcpwhy(&["report", "-q", path(&capture), "-o", path(&alias)]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is an input file"), "{stderr}");
    assert_eq!(std::fs::read(&capture).unwrap(), before);
    assert_eq!(entries(&dir), ["sub", "trace.pcap"]);
}

#[test]
fn bad_input_exits_2_with_one_line_and_writes_no_file() {
    let dir = scratch("bad_input");
    let capture = dir.join("bad.pcap");
    let mut bytes = std::fs::read(common::lab_file("zero_window.pcap")).unwrap();
    // The first record's captured length: far beyond any snaplen.
    bytes[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&capture, &bytes).unwrap();
    let html = dir.join("report.html");
    let output = tcpwhy(&["report", "-q", path(&capture), "-o", path(&html)]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bad.pcap") && stderr.contains("at byte 24"),
        "{stderr}"
    );
    assert_eq!(entries(&dir), ["bad.pcap"]);
}

#[test]
fn a_capture_cut_inside_its_last_record_gets_a_report_marked_partial_and_exit_3() {
    let dir = scratch("cut_short");
    let capture = dir.join("cut.pcap");
    let whole = std::fs::read(common::lab_file("zero_window.pcap")).unwrap();
    std::fs::write(&capture, &whole[..whole.len() - 30]).unwrap();
    let html = dir.join("report.html");
    let output = tcpwhy(&["report", "-q", path(&capture), "-o", path(&html)]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    // The warning, then the one line saying what was written.
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    assert!(stderr.starts_with("tcpwhy: warning: ") && stderr.contains("cut.pcap"));
    assert!(stderr
        .lines()
        .nth(1)
        .is_some_and(|line| line.starts_with("tcpwhy: wrote ")));
    let data = report_data(&html);
    let partial = data["meta"]["partial"].as_str().unwrap();
    assert!(partial.contains("ends inside a record"), "{partial}");
    assert_eq!(
        data["connections"]["id"].as_array().unwrap().len(),
        common::objects(
            "connections",
            &common::lab_file("zero_window.pcap"),
            "connection"
        )
        .len()
    );
}

/// The exit code `--fail-on` must give: 1 when a finding is at or above `threshold`.
fn expected_exit(findings: &[serde_json::Value], threshold: &str) -> i32 {
    let rank = |severity: &str| {
        ["info", "warning", "critical"]
            .iter()
            .position(|s| *s == severity)
    };
    let worst = findings
        .iter()
        .filter_map(|f| rank(f["severity"].as_str().unwrap()))
        .max();
    i32::from(worst.is_some_and(|worst| Some(worst) >= rank(threshold)))
}

#[test]
fn fail_on_exits_1_exactly_when_a_finding_reaches_the_severity() {
    let dir = scratch("fail_on");
    let mut seen = [false, false];
    for scenario in [
        "healthy",
        "zero_window",
        "loss_bursts_downstream",
        "delayed_ack",
    ] {
        let capture = common::lab_file(&format!("{scenario}.pcap"));
        let findings = common::objects("diagnose", &capture, "finding");
        for threshold in ["info", "warning", "critical"] {
            let expected = expected_exit(&findings, threshold);
            seen[expected as usize] = true;
            let diagnose = tcpwhy(&["diagnose", "-q", path(&capture), "--fail-on", threshold]);
            assert_eq!(
                diagnose.status.code(),
                Some(expected),
                "{scenario} {threshold}"
            );
            let html = dir.join(format!("{scenario}.html"));
            let report = tcpwhy(&[
                "report",
                "-q",
                path(&capture),
                "-o",
                path(&html),
                "--fail-on",
                threshold,
            ]);
            assert_eq!(
                report.status.code(),
                Some(expected),
                "{scenario} {threshold}"
            );
            assert!(
                html.exists(),
                "the report is written whatever the exit code"
            );
        }
        let plain = tcpwhy(&["diagnose", "-q", path(&capture)]);
        assert_eq!(plain.status.code(), Some(0));
    }
    assert_eq!(seen, [true, true], "both outcomes are exercised");
}

/// The data block of a report, parsed.
fn report_data(html: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(html).unwrap();
    let start = text.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
    let end = start + text[start..].find("</script>").unwrap();
    serde_json::from_str(&text[start..end]).unwrap()
}

fn detailed(data: &serde_json::Value) -> Vec<u64> {
    data["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["connection"].as_u64().unwrap())
        .collect()
}

/// `count` short request/response connections, one after another.
fn many_connections(path: &Path, count: u16) {
    let mut trace = synth::Trace::ethernet();
    for n in 0..count {
        let at = f64::from(n) * 10.0;
        let client = format!("10.0.0.1:{}", 20_000 + n);
        let mut conn = synth::Conversation::new(&client, "10.0.0.2:80");
        conn.handshake(&mut trace, at, 1.0);
        conn.send(&mut trace, synth::Side::Client, at + 2.0, 100);
        conn.send(
            &mut trace,
            synth::Side::Server,
            at + 3.0 + f64::from(n % 7),
            1000,
        );
        conn.ack(&mut trace, synth::Side::Client, at + 9.0);
    }
    trace.write(path).unwrap();
}

#[test]
fn connections_asked_for_get_detail_and_detail_stays_bounded() {
    let dir = scratch("asked");
    let capture = dir.join("many.pcap");
    many_connections(&capture, 150);
    let html = dir.join("report.html");
    let output = tcpwhy(&[
        "report",
        "-q",
        path(&capture),
        "-o",
        path(&html),
        "--detail",
        "149",
    ]);
    assert!(output.status.success(), "{output:?}");
    let data = report_data(&html);
    let ids = detailed(&data);
    assert_eq!(data["connections"]["id"].as_array().unwrap().len(), 150);
    assert_eq!(ids.len(), report::detail::MAX_CONNECTIONS);
    assert!(ids.contains(&149));
    let flagged = data["connections"]["detail"].as_array().unwrap();
    assert_eq!(
        flagged.iter().filter(|d| d.as_bool().unwrap()).count(),
        ids.len()
    );
}

#[test]
fn standard_input_is_read_once_detailing_the_first_connections_and_those_asked_for() {
    let dir = scratch("stdin");
    let capture = dir.join("many.pcap");
    many_connections(&capture, 150);
    let html = dir.join("report.html");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["report", "-q", "-", "-o", path(&html), "--detail", "120"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&capture).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &bytes).unwrap();
    assert!(child.wait().unwrap().success());
    let ids = detailed(&report_data(&html));
    assert_eq!(ids.len(), report::detail::MAX_CONNECTIONS);
    assert!(ids.contains(&120) && ids.contains(&0));
    assert!(!ids.contains(&(report::detail::MAX_CONNECTIONS as u64)));
}

#[test]
fn the_ladder_reads_each_packet_as_the_events_do_without_a_handshake() {
    let capture = synth::shared_captures("ppa").join("tcp_dupack.pcapng");
    let dir = scratch("ladder");
    let html = dir.join("report.html");
    let output = tcpwhy(&["report", "-q", path(&capture), "-o", path(&html)]);
    assert!(output.status.success(), "{output:?}");
    let data = report_data(&html);
    let ladder = &data["details"][0]["ladder"];
    let frames = ladder["frame"].as_array().unwrap();
    let events = common::objects("events", &capture, "event");
    assert_eq!(events.len(), 4);
    for event in &events {
        let at = frames.iter().position(|f| *f == event["frame"]).unwrap();
        for field in ["seq", "ack", "len", "window"] {
            assert_eq!(
                ladder[field][at], event[field],
                "frame {} {field}",
                event["frame"]
            );
        }
        let from_client = event["direction"] == "client_to_server";
        assert_eq!(ladder["from_client"][at], from_client);
    }
    // tshark: frame 8 resends the server's first segment, relative sequence 1.
    let frame_8 = frames.iter().position(|f| *f == 8).unwrap();
    assert_eq!(
        (
            ladder["seq"][frame_8].as_u64(),
            ladder["resent"][frame_8].as_bool()
        ),
        (Some(1), Some(true))
    );
}

#[test]
fn flags_before_the_file_still_mean_diagnose() {
    let capture = common::lab_file("server_think_time.pcap");
    let plain = tcpwhy(&["diagnose", "--quiet", "--format", "json", path(&capture)]);
    let flags_first = tcpwhy(&["-q", "--format", "json", path(&capture)]);
    assert!(plain.status.success() && flags_first.status.success());
    assert!(String::from_utf8_lossy(&plain.stdout).contains("\"type\":\"finding\""));
    assert_eq!(plain.stdout, flags_first.stdout);
}
