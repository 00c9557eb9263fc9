//! Every flag a command's help lists changes what the command does: run
//! with the flag and without it, its output, exit code or the files it
//! writes differ. A flag the command does not list is refused with exit 2.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use synth::{Conversation, Side, Trace};

const COMMANDS: [&str; 10] = [
    "diagnose",
    "connections",
    "connection",
    "events",
    "transactions",
    "timeline",
    "report",
    "compare",
    "diff",
    "export",
];

/// Commands that analyse one capture and take the selection, `--memory` and `--quiet`.
const READING: [&str; 8] = [
    "diagnose",
    "connections",
    "connection",
    "events",
    "transactions",
    "timeline",
    "report",
    "export",
];

/// What a flag is run with to show its effect, and on which capture.
struct Case {
    flag: &'static str,
    words: &'static [&'static str],
    /// Words given with and without the flag: what it needs to show.
    beside: &'static [&'static str],
    capture: Capture,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Capture {
    /// examples/demo.pcap: 61 connections in a second, with findings.
    Demo,
    /// 3000 handshake attempts over 30 s: more than a small memory budget lists.
    Flood,
}

const fn case(flag: &'static str, words: &'static [&'static str]) -> Case {
    Case {
        flag,
        words,
        beside: &[],
        capture: Capture::Demo,
    }
}

/// The cases of the flags `command` takes; `--quiet` is checked on a terminal.
fn cases(command: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    if READING.contains(&command) {
        cases.extend([
            case("--host", &["--host", "192.0.2.1"]),
            case("--port", &["--port", "1"]),
            case("--net", &["--net", "192.0.2.0/24"]),
            case("--connection", &["--connection", "1"]),
            case("--between", &["--between", "+0.5s", "+0.6s"]),
            Case {
                flag: "--memory",
                words: &["--memory", "1K"],
                beside: &[],
                capture: Capture::Flood,
            },
        ]);
    }
    let tables = [
        "connections",
        "connection",
        "events",
        "transactions",
        "timeline",
    ];
    if tables.contains(&command) {
        cases.push(case("--epoch", &["--epoch"]));
    }
    if tables.contains(&command) || command == "diagnose" {
        cases.push(case("--format", &["--format", "csv"]));
        // Piped, the text is colored only when asked.
        cases.push(case("--color", &["--color", "always"]));
    }
    // One field of each table, its CSV then holding that column alone.
    let field: &'static [&'static str] = match command {
        "connections" => &["--fields", "id"],
        "events" | "diagnose" => &["--fields", "kind"],
        "transactions" => &["--fields", "connection"],
        "timeline" => &["--fields", "packets"],
        _ => &[],
    };
    if !field.is_empty() {
        cases.push(Case {
            beside: &["--format", "csv"],
            ..case("--fields", field)
        });
    }
    match command {
        "diagnose" => cases.push(case("--fail-on", &["--fail-on", "info"])),
        "connection" => cases.push(case("--packets", &["--packets", "3"])),
        "timeline" => cases.push(case("--tick", &["--tick", "10ms"])),
        "report" => cases.extend([
            // The demo's 61 connections all get detail; of 3000, the last does not.
            Case {
                flag: "--detail",
                words: &["--detail", "2999"],
                beside: &[],
                capture: Capture::Flood,
            },
            case("--fail-on", &["--fail-on", "info"]),
        ]),
        "compare" => cases.push(case("--format", &["--format", "json"])),
        "diff" => cases.extend([
            case("--format", &["--format", "json"]),
            case("--html", &["--html", "page.html"]),
        ]),
        "export" => cases.push(case("--format", &["--format", "csv"])),
        _ => {}
    }
    cases
}

/// Values no command takes with these flags.
const REFUSED_VALUES: [(&str, &[&str]); 4] = [
    ("connections", &["--format", "parquet"]),
    ("compare", &["--format", "csv"]),
    ("diff", &["--format", "csv"]),
    ("export", &["--format", "table"]),
];

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/flags-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap")
}

fn flood(dir: &Path) -> PathBuf {
    let path = dir.join("flood.pcap");
    let mut trace = Trace::ethernet();
    for n in 0..3000u32 {
        let client = format!("11.0.{}.{}:{}", n >> 8, n & 0xff, 1024 + n);
        let mut attempt = Conversation::new(&client, "10.0.0.1:80");
        attempt.syn(&mut trace, Side::Client, f64::from(n) * 0.01, Vec::new());
    }
    trace.write(&path).unwrap();
    path
}

/// The words after `tcpwhy COMMAND` that the command needs, around `capture`.
fn required(command: &str, capture: &Path) -> Vec<String> {
    let capture = capture.display().to_string();
    match command {
        "connection" => vec!["0".into(), capture],
        "report" => vec!["-o".into(), "report.html".into(), capture],
        "export" => vec!["-o".into(), "tables".into(), capture],
        "compare" | "diff" => vec![capture.clone(), capture],
        _ => vec![capture],
    }
}

/// What a run did: its exit code, its output and every file it wrote in `dir`.
#[derive(PartialEq, Debug)]
struct Observed {
    code: Option<i32>,
    stdout: String,
    files: BTreeMap<String, Vec<u8>>,
}

fn run(dir: &Path, command: &str, capture: &Path, words: &[&str]) -> (Observed, String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pcap") {
            let _ = std::fs::remove_dir_all(&path);
            let _ = std::fs::remove_file(&path);
        }
    }
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .current_dir(dir)
        .arg(command)
        .args(required(command, capture))
        .args(words)
        .output()
        .unwrap();
    let observed = Observed {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        files: files_in(dir),
    };
    (
        observed,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn files_in(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for (name, bytes) in files_in(&path) {
                files.insert(format!("{}/{name}", path.display()), bytes);
            }
        } else if path.extension().is_none_or(|e| e != "pcap") {
            files.insert(path.display().to_string(), std::fs::read(&path).unwrap());
        }
    }
    files
}

/// The long flags `tcpwhy COMMAND --help` lists, but `--help`.
fn listed_flags(command: &str) -> BTreeSet<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([command, "--help"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().find(|word| word.starts_with("--")))
        .map(|flag| flag.trim_end_matches(',').to_string())
        .filter(|flag| flag != "--help")
        .collect()
}

#[test]
fn each_flag_a_commands_help_lists_changes_what_it_does() {
    let dir = scratch("each");
    let flood = flood(&dir);
    let mut ignored = Vec::new();
    for command in COMMANDS {
        let mut checked: BTreeSet<String> = BTreeSet::new();
        let mut without = BTreeMap::new();
        for case in cases(command) {
            let capture = match case.capture {
                Capture::Demo => demo(),
                Capture::Flood => flood.clone(),
            };
            let base = without
                .entry((case.capture, case.beside))
                .or_insert_with(|| {
                    let (first, _) = run(&dir, command, &capture, case.beside);
                    let (again, _) = run(&dir, command, &capture, case.beside);
                    assert_eq!(first, again, "{command} gives the same twice");
                    first
                });
            let words = [case.beside, case.words].concat();
            let (with, stderr) = run(&dir, command, &capture, &words);
            // A usage error would differ from the run without for the wrong reason.
            assert!(
                !stderr.starts_with("error:"),
                "{command} {:?}: {stderr}",
                case.words
            );
            if with == *base {
                ignored.push(format!("{command} {}", case.words.join(" ")));
            }
            checked.insert(case.flag.to_string());
        }
        if READING.contains(&command) {
            checked.insert("--quiet".into());
            // How fast, never what: threads_agree compares the outputs.
            checked.insert("--threads".into());
        }
        if ["report", "export"].contains(&command) {
            // Required: each run above wrote where it says.
            let (written, _) = run(&dir, command, &demo(), &[]);
            let output = &required(command, &demo())[1];
            let there = written
                .files
                .keys()
                .any(|path| path.contains(output.as_str()));
            assert!(there, "{command} -o {output}: {:?}", written.files.keys());
            checked.insert("--output".into());
        }
        assert_eq!(listed_flags(command), checked, "{command}'s help");
    }
    assert!(ignored.is_empty(), "flags without effect: {ignored:?}");
}

/// The progress bar and any other writing on a terminal, with the capture
/// arriving on standard input after the second a bar waits for.
fn on_a_terminal(command: &str, words: &[&str]) -> String {
    let tcpwhy = env!("CARGO_BIN_EXE_tcpwhy");
    let dir = scratch(&format!("terminal-{command}"));
    let mut line = format!("(sleep 1.3; cat {}) | {tcpwhy} {command}", demo().display());
    for word in required(command, Path::new("-"))
        .iter()
        .map(String::as_str)
        .chain(words.iter().copied())
    {
        line.push(' ');
        line.push_str(word);
    }
    let output = Command::new("script")
        .current_dir(&dir)
        .args(["-qec", &format!("sh -c '{line} > /dev/null'"), "/dev/null"])
        .output()
        .expect("script (util-linux) runs a command on a terminal");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn quiet_hides_the_progress_bar_of_every_command_that_reads_a_capture() {
    for command in READING {
        let shown = on_a_terminal(command, &[]);
        assert!(
            shown.contains("\u{1b}[2K"),
            "{command} shows no bar: {shown:?}"
        );
        let quiet = on_a_terminal(command, &["--quiet"]);
        assert!(!quiet.contains("\u{1b}["), "{command} --quiet: {quiet:?}");
    }
}

#[test]
fn a_flag_or_value_a_command_does_not_take_is_refused() {
    let dir = scratch("refused");
    let capture = demo();
    let mut foreign = Vec::new();
    for command in COMMANDS {
        let own = listed_flags(command);
        for other in COMMANDS {
            for case in cases(other) {
                if !own.contains(case.flag) {
                    foreign.push((command, case.words));
                }
            }
        }
    }
    foreign.extend(REFUSED_VALUES);
    foreign.push(("connections", &["--epoch", "--format", "json"]));
    foreign.sort();
    foreign.dedup();
    for (command, words) in foreign {
        let (observed, stderr) = run(&dir, command, &capture, words);
        assert_eq!(observed.code, Some(2), "{command} {words:?} is accepted");
        assert!(
            stderr.contains(words[0]) || stderr.contains(words.last().unwrap()),
            "{command} {words:?}: {stderr}"
        );
        assert!(
            observed.files.is_empty(),
            "{command} {words:?} wrote a file"
        );
    }
}
