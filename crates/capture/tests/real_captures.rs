//! Every capture of the Practical Packet Analysis set reads to the frames that
//! tshark reads (time, length on the wire, captured length), and ends in an
//! error only where tshark reports the file damaged.

use std::path::{Path, PathBuf};
use std::process::Command;

use capture::open;

/// Timestamp in nanoseconds, original length and captured length.
type Summary = (i64, u32, usize);

fn captures() -> Vec<PathBuf> {
    let dir = synth::shared_captures("ppa");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the book's captures")
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    files.sort();
    files
}

fn tshark_available() -> bool {
    Command::new("tshark").arg("--version").output().is_ok()
}

/// "1265678319.618072000" as nanoseconds.
fn epoch_ns(text: &str) -> i64 {
    let (seconds, nanos) = text.split_once('.').expect("seconds.nanoseconds");
    seconds.parse::<i64>().unwrap() * 1_000_000_000 + nanos.parse::<i64>().unwrap()
}

/// The frames tshark reads, and whether it reported the file as damaged.
fn tshark_frames(file: &Path) -> (Vec<Summary>, bool) {
    let output = Command::new("tshark")
        .args(["-T", "fields", "-e", "frame.time_epoch"])
        .args(["-e", "frame.len", "-e", "frame.cap_len", "-r"])
        .arg(file)
        .output()
        .expect("tshark runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let damaged = stderr.lines().any(|line| line.starts_with("tshark:"));
    let frames = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (
                epoch_ns(fields[0]),
                fields[1].parse().unwrap(),
                fields[2].parse().unwrap(),
            )
        })
        .collect();
    (frames, damaged)
}

/// The frames read before the end or an error, and the error if any.
fn our_frames(file: &Path) -> (Vec<Summary>, Option<String>) {
    let mut frames = Vec::new();
    let mut reader = match open(&file.display().to_string()) {
        Ok(reader) => reader,
        Err(error) => return (frames, Some(error.to_string())),
    };
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                frames.push((frame.timestamp_ns, frame.original_len, frame.data.len()))
            }
            Ok(None) => return (frames, None),
            Err(error) => return (frames, Some(error.to_string())),
        }
    }
}

#[test]
fn frames_match_tshark() {
    if !tshark_available() {
        println!("tshark not found: skipping the comparison with tshark");
        return;
    }
    let files = captures();
    assert!(!files.is_empty());
    let mut mismatches = Vec::new();
    let mut total_frames = 0;
    for file in &files {
        let (expected, tshark_failed) = tshark_frames(file);
        let (frames, error) = our_frames(file);
        total_frames += frames.len();
        if frames.len() != expected.len() || error.is_some() != tshark_failed {
            mismatches.push(format!(
                "{}: {} frames (error {error:?}), tshark {} (damaged: {tshark_failed})",
                file.display(),
                frames.len(),
                expected.len()
            ));
        } else if let Some(index) = (0..frames.len()).find(|&i| frames[i] != expected[i]) {
            mismatches.push(format!(
                "{} frame {}: {:?}, tshark {:?}",
                file.display(),
                index + 1,
                frames[index],
                expected[index]
            ));
        }
    }
    println!(
        "{} captures, {total_frames} frames compared with tshark",
        files.len()
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
