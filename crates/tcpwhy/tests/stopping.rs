//! How a run ends when it is told to: Ctrl-C or SIGTERM at any stage of a
//! long run, during the second pass of a report, and while tcpwhy waits for
//! input that has not begun or for a reader of its output. Each stops
//! within moments, exits 130, and says that what it wrote is partial.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use synth::{Conversation, Side, Trace};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo.pcap");
/// Longer than any stop may take, so a run that ignores its signal fails
/// the test instead of hanging it.
const PATIENCE: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/stopping-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn start(args: &[&str], stdin: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn interrupt(child: &Child) {
    crate::common::signal_when_handled(child, libc::SIGINT);
}

/// The child's output once it ends, failing the test if it outlasts PATIENCE.
fn finish(child: Child) -> Output {
    let pid = child.id() as i32;
    let (ended, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || ended.send(child.wait_with_output().unwrap()));
    output.recv_timeout(PATIENCE).unwrap_or_else(|_| {
        // Safety: kill only ends the child started here, which has not been reaped.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("tcpwhy went on after its signal");
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Many short exchanges between 200 clients and 20 servers, a few of their
/// answers slow: enough that reading, diagnosing and writing each take a
/// while.
fn busy_capture(path: &Path, connections: u32) {
    let mut trace = Trace::ethernet();
    let mut seed = 7u64;
    let mut next = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        seed >> 33
    };
    for n in 0..connections {
        let client = format!(
            "10.1.{}.{}:{}",
            n % 200 / 100,
            n % 100 + 1,
            10_000 + n % 50_000
        );
        let server = format!("10.2.0.{}:80", n % 20 + 1);
        let mut conversation = Conversation::new(&client, &server);
        let mut at = f64::from(n) * 15.0;
        conversation.handshake(&mut trace, at, 1.0);
        for _ in 0..4 {
            at += 2.0 + (next() % 20) as f64;
            conversation.send(&mut trace, Side::Client, at, 100);
            at += if next() % 50 == 0 { 200.0 } else { 2.0 };
            conversation.send(&mut trace, Side::Server, at, 400);
            conversation.ack(&mut trace, Side::Client, at + 0.5);
        }
        conversation.fin(&mut trace, Side::Client, at + 1.0);
        conversation.fin(&mut trace, Side::Server, at + 1.5);
        conversation.ack(&mut trace, Side::Client, at + 2.0);
    }
    write_in_time_order(&trace, path);
}

/// The trace as a pcap file with its frames in time order, as a capture
/// of connections that overlap holds them (nanosecond timestamps).
fn write_in_time_order(trace: &Trace, path: &Path) {
    let mut frames: Vec<(i64, &[u8])> = trace.frames().collect();
    frames.sort_by_key(|&(at_ns, _)| at_ns);
    let mut file = Vec::new();
    for field in [
        0xa1b2_3c4du32,
        0x0004_0002,
        0,
        0,
        262_144,
        trace.link_type(),
    ] {
        file.extend(field.to_le_bytes());
    }
    for (at_ns, frame) in frames {
        let (seconds, nanos) = (at_ns / 1_000_000_000, at_ns % 1_000_000_000);
        for field in [
            seconds as u32,
            nanos as u32,
            frame.len() as u32,
            frame.len() as u32,
        ] {
            file.extend(field.to_le_bytes());
        }
        file.extend(frame);
    }
    std::fs::write(path, file).unwrap();
}

/// How long a whole run of `args` takes.
fn whole_run(args: &[&str]) -> Duration {
    let started = Instant::now();
    let output = finish(start(args, Stdio::null()));
    assert!(output.status.success(), "{}", stderr(&output));
    started.elapsed()
}

/// A run of `args` sent SIGINT `share` of the way through a run as long
/// as `whole`; a run that had already ended by then is tried again, sooner,
/// `afresh` first undoing what it wrote. So is one the signal reached as it
/// was exiting, after its last look for one: it ended whole and succeeded.
fn stopped_at(args: &[&str], whole: Duration, share: f64, afresh: impl Fn()) -> Output {
    let mut after = whole.mul_f64(share);
    for _ in 0..4 {
        afresh();
        let mut child = start(args, Stdio::null());
        std::thread::sleep(after);
        if child.try_wait().unwrap().is_none() {
            interrupt(&child);
            let output = finish(child);
            if !output.status.success() {
                return output;
            }
        } else {
            let _ = child.wait();
        }
        after = after.mul_f64(0.8);
    }
    panic!("tcpwhy {args:?} always ended before {share} of its run");
}

fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn assert_stopped_with_partial_lines(output: &Output, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(130),
        "{what}: {}",
        stderr(output)
    );
    assert!(
        stderr(output).contains("stopped by a signal"),
        "{what}: {}",
        stderr(output)
    );
    let lines = json_lines(output);
    let end = lines.last().unwrap_or_else(|| panic!("{what}: no output"));
    assert_eq!(end["type"], "end", "{what}");
    assert_eq!(end["partial"], true, "{what}");
    assert_eq!(end["error"], "stopped by a signal", "{what}");
}

/// The data a report carries.
fn report_data(path: &Path) -> Value {
    let html = std::fs::read_to_string(path).unwrap();
    assert!(
        html.ends_with("</html>\n"),
        "{} is cut short",
        path.display()
    );
    let marker = "id=\"report-data\">";
    let start = html.find(marker).unwrap() + marker.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

#[test]
fn a_signal_at_half_or_near_the_end_of_a_long_run_stops_it_with_partial_results() {
    let dir = scratch("long-run");
    let capture = dir.join("busy.pcap");
    busy_capture(&capture, 20_000);
    for command in ["diagnose", "connections"] {
        let args = [command, text(&capture), "--format", "json", "--quiet"];
        let whole = whole_run(&args);
        for share in [0.5, 0.95] {
            let output = stopped_at(&args, whole, share, || {});
            assert_stopped_with_partial_lines(&output, &format!("{command} at {share}"));
        }
    }
    let report = dir.join("report.html");
    let whole = whole_run(&["report", text(&capture), "-o", text(&report), "--quiet"]);
    // A run that ended before its signal leaves a whole report, which a
    // partial one would then go beside.
    let no_report = || {
        let _ = std::fs::remove_file(&report);
    };
    for share in [0.5, 0.95] {
        let args = ["report", text(&capture), "-o", text(&report), "--quiet"];
        let output = stopped_at(&args, whole, share, no_report);
        assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
        if stderr(&output).contains("stopped by a signal while writing") {
            // Come as the file was written: nothing was there, nothing is.
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
            continue;
        }
        if stderr(&output).contains("once the report was written whole") {
            // Come once all was done: the report is whole, and says so.
            assert!(report_data(&report)["meta"]["partial"].is_null());
            std::fs::remove_file(&report).unwrap();
            continue;
        }
        let partial = report_data(&report)["meta"]["partial"].clone();
        assert!(
            partial.as_str().unwrap().contains("stopped by a signal"),
            "report at {share}: {partial}"
        );
        std::fs::remove_file(&report).unwrap();
    }
}

/// A FIFO made at `path`.
fn fifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_signal_in_the_second_pass_of_a_report_keeps_the_report_before_and_writes_a_partial_one_beside()
{
    let dir = scratch("second-pass");
    let input = dir.join("capture.fifo");
    fifo(&input);
    let report = dir.join("report.html");
    std::fs::write(&report, "the report before").unwrap();
    let child = start(
        &["report", text(&input), "-o", text(&report), "--quiet"],
        Stdio::null(),
    );
    let demo = std::fs::read(DEMO).unwrap();
    // The first pass reads all of it; once it has let go of the FIFO,
    // opening it again waits for the second.
    File::create(&input).unwrap().write_all(&demo).unwrap();
    while holds(&child, &input) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut second = File::create(&input).unwrap();
    second.write_all(&demo[..demo.len() / 2]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&child);
    let output = finish(child);
    drop(second);
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("stopped by a signal"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        std::fs::read_to_string(&report).unwrap(),
        "the report before"
    );
    let partial = dir.join("report.partial.html");
    assert!(
        stderr(&output).contains(text(&partial)),
        "{}",
        stderr(&output)
    );
    let data = report_data(&partial);
    let reason = data["meta"]["partial"].as_str().unwrap();
    assert!(reason.contains("stopped by a signal"), "{reason}");
    assert!(data["findings"].as_array().is_some_and(|f| !f.is_empty()));
}

/// Whether the child has `path` open.
fn holds(child: &Child, path: &Path) -> bool {
    let Ok(descriptors) = std::fs::read_dir(format!("/proc/{}/fd", child.id())) else {
        return false;
    };
    descriptors
        .filter_map(Result::ok)
        .any(|descriptor| std::fs::read_link(descriptor.path()).is_ok_and(|open| open == path))
}

/// Sends SIGINT to a run that waits, and expects it to end at once with 130.
fn stops_while_waiting(child: Child, what: &str) {
    std::thread::sleep(Duration::from_millis(500));
    interrupt(&child);
    let signalled = Instant::now();
    let output = finish(child);
    assert_eq!(
        output.status.code(),
        Some(130),
        "{what}: {}",
        stderr(&output)
    );
    assert!(
        signalled.elapsed() < PATIENCE / 4,
        "{what} took {:?} to stop",
        signalled.elapsed()
    );
    assert!(
        stderr(&output).contains("stopped by a signal"),
        "{what}: {}",
        stderr(&output)
    );
}

#[test]
fn one_signal_ends_a_wait_for_input_or_for_a_reader() {
    let dir = scratch("waiting");
    let input = dir.join("no-writer.fifo");
    fifo(&input);
    let child = start(&["diagnose", text(&input), "--quiet"], Stdio::null());
    stops_while_waiting(child, "a FIFO with no writer");
    let mut child = start(&["connections", "-", "--quiet"], Stdio::piped());
    let stdin = child.stdin.take();
    stops_while_waiting(child, "standard input before its first byte");
    drop(stdin);
    let output = dir.join("no-reader.fifo");
    fifo(&output);
    let child = start(
        &["report", DEMO, "-o", text(&output), "--quiet"],
        Stdio::null(),
    );
    stops_while_waiting(child, "a FIFO with no reader");
}

#[test]
fn comparing_two_captures_ends_at_the_first_signal() {
    let dir = scratch("compare");
    let input = dir.join("no-writer.fifo");
    fifo(&input);
    let child = start(&["compare", DEMO, text(&input)], Stdio::null());
    stops_while_waiting(child, "compare");
}
