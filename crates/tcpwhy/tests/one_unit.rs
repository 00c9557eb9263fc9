//! Every duration the findings, `compare` and `diff` write reads as the one
//! formatter writes it (`diagnose::units::duration`): `35 µs`, not
//! `0.035 ms`; `461.8 s`, not `461765.9 ms`; a title and its cost line alike.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Each duration in `text` as written, and as the formatter writes it.
fn durations(text: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter_map(|pair| {
            let unit = pair[1].trim_end_matches([',', ';', ')', '.', ':']);
            let scale = match unit {
                "s" => 1e3,
                "ms" => 1.0,
                "µs" => 1e-3,
                _ => return None,
            };
            let number = pair[0].trim_start_matches(['(', '+', '-']);
            let value: f64 = number.parse().ok()?;
            let formatted = diagnose::units::duration(value * scale);
            Some((format!("{number} {unit}"), formatted))
        })
        .collect()
}

fn tcpwhy(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn lab(name: &str) -> String {
    common::lab_file(name).display().to_string()
}

fn book_captures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(synth::shared_captures("ppa"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

/// The text of each finding of `capture` the formatter writes, with the
/// cost line the terminal prints for it.
fn findings_text(capture: &Path) -> Vec<String> {
    let mut texts: Vec<String> = common::objects_read_so_far("diagnose", capture, "finding")
        .iter()
        .map(|f| {
            ["title", "explanation", "what_if"]
                .map(|field| f[field].as_str().unwrap_or_default().to_string())
                .join(" ")
        })
        .collect();
    let terminal = tcpwhy(&["diagnose", "--quiet", capture.to_str().unwrap()]);
    texts.extend(
        terminal
            .lines()
            .filter(|line| line.trim_start().starts_with("cost "))
            .map(str::to_string),
    );
    texts
}

#[test]
fn durations_read_alike_in_the_findings_compare_and_diff() {
    let mut texts: Vec<(String, String)> = Vec::new();
    for capture in book_captures() {
        let name = capture.file_name().unwrap().to_string_lossy().into_owned();
        texts.extend(
            findings_text(&capture)
                .into_iter()
                .map(|t| (name.clone(), t)),
        );
    }
    for pair in [
        "loss_upstream",
        "proxy_nagle",
        "proxy_snat",
        "proxy_window",
        "proxy_pool",
    ] {
        let (a, b) = if pair == "loss_upstream" {
            (format!("{pair}-client.pcap"), format!("{pair}-server.pcap"))
        } else {
            (format!("{pair}-front.pcap"), format!("{pair}-back.pcap"))
        };
        let text = tcpwhy(&["compare", &lab(&a), &lab(&b)]);
        texts.push((format!("compare {pair}"), text));
    }
    let diff = tcpwhy(&[
        "diff",
        &lab("nagle_delayed_ack.pcap"),
        &lab("nagle_fixed.pcap"),
    ]);
    texts.push(("diff".into(), diff));
    let read: Vec<(&str, (String, String))> = texts
        .iter()
        .flat_map(|(source, text)| {
            durations(text)
                .into_iter()
                .map(move |d| (source.as_str(), d))
        })
        .collect();
    assert!(read.len() > 500, "only {} durations read", read.len());
    let unlike: Vec<String> = read
        .iter()
        .filter(|(_, (written, formatted))| written != formatted)
        .map(|(source, (written, formatted))| format!("{source}: {written}, not {formatted}"))
        .collect();
    assert!(unlike.is_empty(), "{unlike:#?}");
}
