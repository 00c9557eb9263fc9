//! tcpwhy as an attacker or an operator would run it: reports written to a
//! FIFO, through a symbolic link, over a private file or to standard output;
//! Ctrl-C and slow input on a live pipe; a clock that steps back; a tick too
//! fine; file names holding shell syntax; a SYN flood past the memory budget.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use synth::{Conversation, Side, Trace};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo.pcap");

fn tcpwhy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/hostile-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn is_report(bytes: &[u8]) -> bool {
    bytes.starts_with(b"<!DOCTYPE html>") && bytes.ends_with(b"</html>\n")
}

#[test]
fn a_report_goes_into_a_fifo_without_replacing_it() {
    let dir = scratch("fifo");
    let fifo = dir.join("report.fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let reading = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let output = tcpwhy(&["report", DEMO, "-o", text(&fifo), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    assert!(is_report(&reading.join().unwrap()));
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced");
}

#[test]
fn a_report_through_a_symbolic_link_replaces_its_target_and_keeps_the_link() {
    let dir = scratch("symlink");
    let target = dir.join("target.html");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.html");
    std::os::unix::fs::symlink("target.html", &link).unwrap();
    let output = tcpwhy(&["report", DEMO, "-o", text(&link), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(is_report(&std::fs::read(&target).unwrap()));
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(names.len(), 2, "a temporary file was left behind");
}

#[test]
fn a_private_report_stays_private_when_written_again() {
    let dir = scratch("private");
    let report = dir.join("report.html");
    std::fs::write(&report, "old").unwrap();
    std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o600)).unwrap();
    let output = tcpwhy(&["report", DEMO, "-o", text(&report), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    let mode = std::fs::metadata(&report).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(is_report(&std::fs::read(&report).unwrap()));
}

#[test]
fn a_report_written_over_a_setuid_file_keeps_no_setuid_bit() {
    let dir = scratch("setuid");
    let report = dir.join("report.html");
    std::fs::write(&report, "old").unwrap();
    std::fs::set_permissions(&report, std::fs::Permissions::from_mode(0o6755)).unwrap();
    let output = tcpwhy(&["report", DEMO, "-o", text(&report), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    let mode = std::fs::metadata(&report).unwrap().permissions().mode();
    assert_eq!(mode & 0o7777, 0o755);
    assert!(is_report(&std::fs::read(&report).unwrap()));
}

#[test]
fn a_report_to_dash_goes_to_standard_output() {
    let output = tcpwhy(&["report", DEMO, "-o", "-", "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    assert!(is_report(&output.stdout));
    assert!(!Path::new("-").exists());
}

#[test]
fn an_output_name_of_255_bytes_is_written() {
    let dir = scratch("long-name");
    let report = dir.join(format!("{}.html", "r".repeat(250)));
    let output = tcpwhy(&["report", DEMO, "-o", text(&report), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    assert!(is_report(&std::fs::read(&report).unwrap()));
}

/// A tcpwhy reading a pipe that the test writes to and leaves open.
struct Live {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .as_mut()
            .unwrap()
            .write_all(&std::fs::read(DEMO).unwrap())
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if sender.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Live { child, lines }
    }

    fn signal(&self, signal: i32) {
        crate::common::signal_when_handled(&self.child, signal);
    }

    /// Waits until tcpwhy has taken all that was written to its input out
    /// of the pipe, then as long again as it may take to analyse it.
    fn wait_until_read(&self) {
        let stdin = self.child.stdin.as_ref().unwrap().as_raw_fd();
        let unread = || {
            let mut bytes: libc::c_int = 0;
            // Safety: FIONREAD writes one int, the bytes waiting in the pipe.
            assert_eq!(unsafe { libc::ioctl(stdin, libc::FIONREAD, &mut bytes) }, 0);
            bytes
        };
        while unread() > 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(500));
    }

    /// Lines until the output ends, and the exit code.
    fn finish(mut self) -> (Vec<String>, Option<i32>, String) {
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (self.lines.iter().collect(), status.code(), stderr)
    }
}

#[test]
fn events_appear_before_the_input_ends() {
    let live = Live::start(&["events", "-", "--format", "json", "--quiet"]);
    let first = live.lines.recv_timeout(Duration::from_secs(20));
    let first: Value =
        serde_json::from_str(&first.expect("no event while the input is open")).unwrap();
    assert_eq!(first["type"], "event");
    live.signal(libc::SIGTERM);
    live.finish();
}

#[test]
fn ctrl_c_on_a_live_pipe_prints_the_results_so_far_marked_partial() {
    for command in ["events", "connections", "diagnose"] {
        let live = Live::start(&[command, "-", "--format", "json", "--quiet"]);
        // Wait until the frames written are read, then stop it as Ctrl-C would.
        let started = Instant::now();
        live.wait_until_read();
        live.signal(libc::SIGINT);
        let (lines, code, stderr) = live.finish();
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(code, Some(130), "{command}: {stderr}");
        assert!(stderr.contains("stopped by a signal"), "{stderr}");
        let end: Value = serde_json::from_str(lines.last().expect("no output")).unwrap();
        assert_eq!(end["type"], "end", "{command}");
        assert_eq!(end["partial"], true);
        assert_eq!(
            end["frames"], 1073,
            "{command}: every frame written was read"
        );
        if command == "connections" {
            assert_eq!(lines.len(), 62);
        }
    }
}

/// A request, then its response stamped 5 s before it (a clock stepping
/// back), then more traffic at the later time.
fn clock_stepping_back(path: &Path) {
    let mut trace = Trace::ethernet();
    let mut first = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    first.handshake(&mut trace, 10_000.0, 2.0);
    first.send(&mut trace, Side::Client, 10_010.0, 100);
    first.send(&mut trace, Side::Server, 5_010.0, 500);
    first.ack(&mut trace, Side::Client, 10_020.0);
    let mut second = Conversation::new("10.0.0.1:40001", "10.0.0.2:80");
    second.handshake(&mut trace, 10_030.0, 2.0);
    second.send(&mut trace, Side::Client, 10_040.0, 100);
    second.send(&mut trace, Side::Server, 10_050.0, 500);
    trace.write(path).unwrap();
}

#[test]
fn a_clock_stepping_back_is_reported_and_wraps_nothing() {
    let dir = scratch("clock");
    let capture = dir.join("step-back.pcap");
    clock_stepping_back(&capture);
    let output = tcpwhy(&["timeline", text(&capture), "--format", "json", "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    let lines = json_lines(&output.stdout);
    for tick in lines.iter().filter(|l| l["type"] == "tick") {
        assert!(
            tick["transactions_in_progress"].as_u64().unwrap() <= 2,
            "{tick}"
        );
        assert!(tick["connections_open"].as_u64().unwrap() <= 2, "{tick}");
    }
    let end = lines.last().unwrap();
    assert_eq!(end["clock"]["steps_back"], 1, "{end}");
    assert!(end["notes"][0].as_str().unwrap().contains("stepped back"));
    // The answer stamped before its request has no duration, and says so.
    let output = tcpwhy(&[
        "transactions",
        text(&capture),
        "--format",
        "json",
        "--quiet",
    ]);
    let lines = json_lines(&output.stdout);
    let across_the_step = &lines[0];
    assert_eq!(across_the_step["type"], "transaction");
    assert!(
        across_the_step["duration_ms"].is_null(),
        "{across_the_step}"
    );
    assert!(
        across_the_step["server_think_ms"].is_null(),
        "{across_the_step}"
    );
    for transaction in lines.iter().filter(|l| l["type"] == "transaction") {
        for field in [
            "duration_ms",
            "request_transfer_ms",
            "server_think_ms",
            "response_transfer_ms",
        ] {
            assert!(
                transaction[field].as_f64().is_none_or(|ms| ms >= 0.0),
                "{transaction}"
            );
        }
    }
    let note = lines.last().unwrap()["notes"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(note.contains("left out (null), of 1 transaction"), "{note}");
    let table = tcpwhy(&["transactions", text(&capture), "--quiet"]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(!table.contains("-1000"), "{table}");
    let output = tcpwhy(&["diagnose", text(&capture), "--format", "json", "--quiet"]);
    for finding in json_lines(&output.stdout)
        .iter()
        .filter(|l| l["type"] == "finding")
    {
        let share = finding["share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share), "{finding}");
        assert!(finding["cost_ms"].as_f64().unwrap() < 60_000.0, "{finding}");
    }
}

#[test]
fn a_handshake_answered_before_its_syn_has_no_round_trip() {
    let dir = scratch("clock-wrap");
    let capture = dir.join("syn-ack-first.pcap");
    let mut trace = Trace::ethernet();
    let mut conversation = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    // The SYN-ACK stamped 5 s before the SYN.
    conversation.syn(&mut trace, Side::Client, 10_000.0, Vec::new());
    conversation.syn(&mut trace, Side::Server, 5_000.0, Vec::new());
    conversation.ack(&mut trace, Side::Client, 5_001.0);
    trace.write(&capture).unwrap();
    let output = tcpwhy(&["connections", text(&capture), "--format", "json", "--quiet"]);
    let lines = json_lines(&output.stdout);
    let handshake = &lines[0]["handshake"];
    assert!(handshake["rtt_to_server_ms"].is_null(), "{handshake}");
    assert_eq!(handshake["rtt_to_client_ms"], 1.0, "{handshake}");
    let note = lines.last().unwrap()["notes"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(note.contains("of 1 handshake"), "{note}");
}

#[test]
fn a_tick_too_fine_is_refused_naming_the_smallest_that_fits() {
    let dir = scratch("tick");
    let capture = dir.join("ten-minutes.pcap");
    let mut trace = Trace::ethernet();
    let mut conversation = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conversation.handshake(&mut trace, 0.0, 2.0);
    conversation.send(&mut trace, Side::Client, 600_000.0, 100);
    trace.write(&capture).unwrap();
    let output = tcpwhy(&["timeline", text(&capture), "--tick", "100ms", "--quiet"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("smallest tick that fits is 200ms"),
        "{stderr}"
    );
    let output = tcpwhy(&["timeline", text(&capture), "--tick", "200ms", "--quiet"]);
    assert!(output.status.success());
}

#[test]
fn the_suggested_command_quotes_a_file_name_holding_shell_syntax() {
    let dir = scratch("quoting");
    let capture = dir.join("my cap $(touch pwned).pcap");
    std::fs::copy(DEMO, &capture).unwrap();
    let report = dir.join("report.html");
    let output = tcpwhy(&["report", text(&capture), "-o", text(&report), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    let html = std::fs::read_to_string(&report).unwrap();
    let data_start = html.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
    let data_end = data_start + html[data_start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[data_start..data_end]).unwrap();
    let command = data["meta"]["detail_command"].as_str().unwrap();
    // The shell reads the command back into the same words, and runs nothing in them.
    let words = Command::new("sh")
        .current_dir(&dir)
        .args([
            "-c",
            &format!("for word in {command} 7; do echo \"$word\"; done"),
        ])
        .output()
        .unwrap();
    let words = String::from_utf8(words.stdout).unwrap();
    assert!(words.lines().any(|w| w == text(&capture)), "{command}");
    assert!(
        !dir.join("pwned").exists(),
        "pasting the command ran a command"
    );
}

/// `count` SYNs from as many sources to one server, 10 µs apart.
fn syn_flood(path: &Path, count: u32) {
    let mut trace = Trace::ethernet();
    for n in 0..count {
        let client = format!(
            "11.{}.{}.{}:{}",
            n >> 16,
            (n >> 8) & 0xff,
            n & 0xff,
            1024 + n % 60000
        );
        let mut attempt = Conversation::new(&client, "10.0.0.1:80");
        attempt.syn(&mut trace, Side::Client, f64::from(n) * 0.01, Vec::new());
    }
    trace.write(path).unwrap();
}

#[test]
fn a_syn_flood_past_the_memory_budget_is_one_finding_and_says_what_was_left_out() {
    let dir = scratch("flood");
    let capture = dir.join("flood.pcap");
    syn_flood(&capture, 60_000);
    let output = tcpwhy(&[
        "diagnose",
        text(&capture),
        "--memory",
        "32M",
        "--format",
        "json",
        "--quiet",
    ]);
    assert!(output.status.success(), "{output:?}");
    let lines = json_lines(&output.stdout);
    let flood = lines
        .iter()
        .find(|l| l["kind"] == "syn_flood")
        .expect("a syn_flood finding");
    assert_eq!(flood["figures"]["attempts"], 60_000.0);
    let sources = flood["figures"]["sources"].as_f64().unwrap();
    assert!((sources / 60_000.0 - 1.0).abs() < 0.06, "{sources}");
    assert!(flood["title"].as_str().unwrap().contains("10.0.0.1:80"));
    let end = lines.last().unwrap();
    let not_listed = end["trimmed"]["attempts_not_listed"].as_u64().unwrap();
    assert!(not_listed > 0, "{end}");
    assert_eq!(end["connections"].as_u64().unwrap() + not_listed, 60_000);
    assert!(end["notes"][0].as_str().unwrap().contains("memory budget"));
    // With room for them all, every attempt is listed and the finding is the same.
    let output = tcpwhy(&["diagnose", text(&capture), "--format", "json", "--quiet"]);
    let lines = json_lines(&output.stdout);
    let end = lines.last().unwrap();
    assert_eq!(end["connections"], 60_000);
    assert!(lines.iter().any(|l| l["kind"] == "syn_flood"));
}

/// A pcap file of `frames` frames of a link type tcpwhy does not read (147, a private one).
fn unsupported_link_capture(path: &Path, frames: u32) {
    let mut file = Vec::new();
    for field in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 147] {
        file.extend(field.to_le_bytes());
    }
    for n in 0..frames {
        for field in [1_767_225_600 + n, 0, 40, 40] {
            file.extend(field.to_le_bytes());
        }
        file.extend([0x45; 40]);
    }
    std::fs::write(path, file).unwrap();
}

#[test]
fn a_capture_with_no_readable_frame_says_what_it_skipped() {
    let dir = scratch("unreadable");
    let capture = dir.join("private-link.pcap");
    unsupported_link_capture(&capture, 3);
    let output = tcpwhy(&["diagnose", text(&capture), "--quiet"]);
    assert!(output.status.success(), "{output:?}");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("none of the 3 frames held a TCP segment")
            && table.contains("3 of an unsupported link type"),
        "{table}"
    );
}

#[test]
fn the_output_path_is_checked_before_the_input_is_read() {
    // Standard input that never ends: only a check made first can answer.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([
            "report",
            "-",
            "-o",
            "/nonexistent/dir/report.html",
            "--quiet",
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("/nonexistent/dir"), "{stderr}");
}
