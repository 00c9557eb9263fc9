//! `--threads` changes how fast, never what: every table `export` writes
//! is the same, byte for byte, on one thread and on four, for every lab
//! capture, every scenario of the sweep sample and every sweep case.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common;

/// Each table's file name and contents, as `export --format json` wrote them.
fn exported(capture: &Path, threads: &str) -> BTreeMap<String, Vec<u8>> {
    let name = capture.file_stem().unwrap().to_string_lossy();
    let dir = std::env::temp_dir().join(format!(
        "tcpwhy-threads-{name}-{threads}-{}",
        std::process::id()
    ));
    let status = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([
            "export",
            "--quiet",
            "--format",
            "json",
            "--threads",
            threads,
            "-o",
        ])
        .arg(&dir)
        .arg(capture)
        .status()
        .unwrap();
    assert!(status.success(), "export failed on {}", capture.display());
    let tables = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let table = path.file_name().unwrap().to_string_lossy().into_owned();
            (table, std::fs::read(&path).unwrap())
        })
        .collect();
    std::fs::remove_dir_all(&dir).unwrap();
    tables
}

#[test]
fn every_table_is_the_same_on_one_thread_and_on_four() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut captures = common::lab_captures();
    captures.extend(common::captures_in(&tests.join("sweep")));
    captures.extend(common::captures_in(&tests.join("sweep-cases")));
    assert!(captures.len() >= 90, "{} captures", captures.len());
    for capture in &captures {
        let one = exported(capture, "1");
        let four = exported(capture, "4");
        assert_eq!(
            one.len(),
            6,
            "{}: tables {:?}",
            capture.display(),
            one.keys()
        );
        for (table, contents) in &one {
            assert!(
                four.get(table) == Some(contents),
                "{}: {table} differs on four threads",
                capture.display()
            );
        }
    }
}
