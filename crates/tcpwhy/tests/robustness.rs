//! Every file of tcpdump's own test set, many deliberately malformed, ends in
//! results with exit 0 or in a one-line error naming the file and byte offset
//! with exit 2; never a panic or a hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Far more than any of these small files needs; past it the run counts as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(20);

fn test_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/tcpdump-tests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("../shared/captures/tcpdump-tests beside the checkout")
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

#[test]
fn every_tcpdump_test_file_gives_results_or_a_one_line_error() {
    let files = test_files();
    assert!(files.len() >= 800, "expected the 830 tcpdump test files");
    let (mut ok, mut errors, mut failures) = (0, 0, Vec::new());
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let outcome = run(file);
        let lines: Vec<&str> = outcome.stderr.lines().collect();
        match outcome.code {
            Some(0) => ok += 1,
            Some(2)
                if lines.len() == 1
                    && lines[0].contains(&name)
                    && lines[0].contains(" at byte ") =>
            {
                errors += 1
            }
            code => failures.push(format!(
                "{name}: exit {code:?}, stderr {:?}",
                outcome.stderr
            )),
        }
    }
    println!(
        "{ok} read to the end, {errors} clean errors, {} failures",
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
