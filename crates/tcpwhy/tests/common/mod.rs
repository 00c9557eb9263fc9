//! Running tcpwhy on the project's lab captures and reading its JSON lines.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A file in tests/captures.
pub fn lab_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/captures")
        .join(name)
}

/// The manifest of a lab scenario.
pub fn manifest(scenario: &str) -> Value {
    let text = std::fs::read_to_string(lab_file(&format!("{scenario}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every JSON line `tcpwhy COMMAND --format json ARGS… CAPTURE` prints; it must succeed.
pub fn json_lines(command: &str, args: &[&str], capture: &Path) -> Vec<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([command, "--format", "json", "--quiet"])
        .args(args)
        .arg(capture)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tcpwhy {command} failed on {}",
        capture.display()
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The objects of one `type` among those lines.
pub fn objects(command: &str, capture: &Path, kind: &str) -> Vec<Value> {
    json_lines(command, &[], capture)
        .into_iter()
        .filter(|line| line["type"] == kind)
        .collect()
}

/// The objects of one `type` that `tcpwhy COMMAND --format json CAPTURE`
/// prints, also when the capture is cut short (exit 2, results marked partial).
pub fn objects_read_so_far(command: &str, capture: &Path, kind: &str) -> Vec<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([command, "--format", "json", "--quiet"])
        .arg(capture)
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["type"] == kind)
        .collect()
}
