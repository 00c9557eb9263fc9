//! Every file of tcpdump's own test set, many deliberately malformed, ends in
//! results with exit 0, in results with a one-line warning naming the file
//! and byte offset with exit 3 (the file ends inside a record), or in a
//! one-line error naming them with exit 2; never a panic or a hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Far more than any of these small files needs; past it the run counts as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(20);

fn test_files() -> Vec<PathBuf> {
    let dir = synth::shared_captures("tcpdump-tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

struct Outcome {
    code: Option<i32>,
    stderr: String,
}

fn run(file: &Path) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["connections", "--format", "json", "--quiet"])
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tcpwhy");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            return Outcome {
                code: status.code(),
                stderr,
            };
        }
        if started.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            return Outcome {
                code: None,
                stderr: "hung".into(),
            };
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// Counts of files read to the end, cut short and ending in clean errors,
/// and what went wrong otherwise.
#[derive(Default)]
struct Tally {
    ok: usize,
    cut_short: usize,
    errors: usize,
    failures: Vec<String>,
}

impl Tally {
    fn check(&mut self, file: &Path) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let outcome = run(file);
        let lines: Vec<&str> = outcome.stderr.lines().collect();
        let one_clean_line =
            lines.len() == 1 && lines[0].contains(&name) && lines[0].contains(" at byte ");
        match outcome.code {
            Some(0) => self.ok += 1,
            Some(3) if one_clean_line && lines[0].starts_with("tcpwhy: warning: ") => {
                self.cut_short += 1
            }
            Some(2) if one_clean_line => self.errors += 1,
            code => self.failures.push(format!(
                "{name}: exit {code:?}, stderr {:?}",
                outcome.stderr
            )),
        }
    }
}

#[test]
fn every_tcpdump_test_file_gives_results_or_a_one_line_error() {
    let files = test_files();
    assert!(files.len() >= 800, "expected the 830 tcpdump test files");
    let mut tally = Tally::default();
    for file in &files {
        tally.check(file);
    }
    println!(
        "{} read to the end, {} cut short, {} clean errors",
        tally.ok, tally.cut_short, tally.errors
    );
    assert!(tally.failures.is_empty(), "{:#?}", tally.failures);
}

/// A share of the test files cut short and with a corrupted byte: each must
/// still end in results or in one error line naming the file and offset.
#[test]
fn damaged_copies_give_results_or_a_one_line_error() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut tally = Tally::default();
    for (index, file) in test_files().iter().enumerate().step_by(5) {
        let mut bytes = std::fs::read(file).unwrap();
        bytes.truncate(bytes.len() * 2 / 3);
        if let Some(byte) = bytes.get_mut(24 + index % 40) {
            *byte ^= 0x5a;
        }
        let damaged = dir.join(format!("damaged-{index}.pcap"));
        std::fs::write(&damaged, bytes).unwrap();
        tally.check(&damaged);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!(
        "{} read to the end, {} cut short, {} clean errors",
        tally.ok, tally.cut_short, tally.errors
    );
    assert!(
        tally.errors + tally.cut_short > 50,
        "damaged files should mostly end in errors or be read as cut short"
    );
    assert!(tally.failures.is_empty(), "{:#?}", tally.failures);
}
