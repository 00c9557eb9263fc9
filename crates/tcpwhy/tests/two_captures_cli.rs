//! Two captures on the command line: merged as one observation, compared
//! point to point, or diffed before and after.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::lab_file;
use serde_json::Value;
use synth::rewrite::Capture;

fn tcpwhy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .output()
        .unwrap()
}

fn lab(name: &str) -> String {
    lab_file(name).to_string_lossy().into_owned()
}

fn json_lines(output: &Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The `packet_loss` finding's segments resent, and whether any finding is critical.
fn loss_figures(files: &[&str]) -> (f64, bool) {
    let mut args = vec!["diagnose", "--format", "json", "--quiet"];
    args.extend_from_slice(files);
    let lines = json_lines(&tcpwhy(&args));
    let findings: Vec<&Value> = lines.iter().filter(|l| l["type"] == "finding").collect();
    let loss = findings
        .iter()
        .find(|f| f["kind"] == "packet_loss")
        .expect("the planted loss is found");
    let resent = loss["figures"]["resent_segments"]
        .as_f64()
        .unwrap_or_else(|| {
            panic!("no resent_segments figure in {}", loss["figures"]);
        });
    (resent, findings.iter().any(|f| f["severity"] == "critical"))
}

#[test]
fn both_ends_of_a_lossy_link_report_no_more_resends_than_one_end_saw() {
    let client = lab("loss_upstream-client.pcap");
    let server = lab("loss_upstream-server.pcap");
    let (client_resent, client_critical) = loss_figures(&[&client]);
    let (server_resent, _) = loss_figures(&[&server]);
    let (merged_resent, merged_critical) = loss_figures(&[&client, &server]);
    assert!(!client_critical && !merged_critical);
    assert!(
        merged_resent <= client_resent.max(server_resent),
        "{merged_resent} resent merged; {client_resent} at the client, {server_resent} at the server"
    );
}

/// The demo capture and, in a temporary file, the demo as a second tap
/// saw it past a box that rewrote it: the findings and notes of `diagnose`
/// on each alone and on the two merged.
struct DemoTaps {
    alone: Vec<Value>,
    merged: Vec<Value>,
}

impl DemoTaps {
    fn past(rewrite: impl FnOnce(Capture) -> Capture, name: &str) -> DemoTaps {
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
        let rewritten =
            std::env::temp_dir().join(format!("tcpwhy-demo-{name}-{}.pcap", std::process::id()));
        rewrite(Capture::read(&demo)).write(&rewritten);
        let diagnose = |files: &[&Path]| {
            let mut args = vec!["diagnose", "--format", "json", "--quiet"];
            args.extend(files.iter().map(|file| file.to_str().unwrap()));
            json_lines(&tcpwhy(&args))
        };
        let taps = DemoTaps {
            alone: diagnose(&[&demo]),
            merged: diagnose(&[&demo, &rewritten]),
        };
        std::fs::remove_file(&rewritten).unwrap();
        taps
    }

    fn findings(lines: &[Value]) -> Vec<(String, String, Value)> {
        lines
            .iter()
            .filter(|line| line["type"] == "finding")
            .map(|f| {
                (
                    f["kind"].to_string(),
                    f["title"].to_string(),
                    f["figures"].clone(),
                )
            })
            .collect()
    }

    fn notes(lines: &[Value]) -> Vec<String> {
        let end = lines.last().expect("an end line");
        let notes = end["notes"].as_array().expect("notes");
        notes
            .iter()
            .map(|note| note.as_str().unwrap().to_string())
            .collect()
    }

    /// The merged files say what the demo alone says, and that they overlap.
    fn agree(&self) -> Vec<String> {
        assert_eq!(Self::findings(&self.merged), Self::findings(&self.alone));
        assert!(Self::findings(&self.alone)
            .iter()
            .any(|(kind, ..)| kind == "\"packet_loss\""));
        let notes = Self::notes(&self.merged);
        assert!(
            notes.iter().any(|note| note
                .contains("the files overlap: 1073 frames were captured at more than one point")),
            "{notes:?}"
        );
        notes
    }
}

#[test]
fn the_demo_merged_with_a_sequence_shifted_copy_reports_the_demos_own_loss() {
    let notes = DemoTaps::past(|demo| demo.with_sequence_shift(0x1234_5678), "shifted").agree();
    assert!(
        notes
            .iter()
            .any(|note| note.contains("61 connections had every sequence number shifted")),
        "{notes:?}"
    );
}

#[test]
fn the_demo_merged_with_its_ip_ids_rewritten_reports_the_demos_own_loss() {
    let renumber = |demo: Capture| demo.with_ip_ids(|id| id.wrapping_mul(31).wrapping_add(7));
    DemoTaps::past(renumber, "ip-ids").agree();
}

#[test]
fn compare_places_the_loss_between_the_taps() {
    let output = tcpwhy(&[
        "compare",
        "--format",
        "json",
        &lab("loss_upstream-client.pcap"),
        &lab("loss_upstream-server.pcap"),
    ]);
    let comparison = &json_lines(&output)[0];
    let expect = &common::manifest("loss_upstream")["expect"];
    assert_eq!(
        comparison["a_to_b"]["losses"]["between_points"],
        expect["sender_side_resent"]
    );
    assert_eq!(comparison["same_segment"], false);
    let text = tcpwhy(&[
        "compare",
        &lab("loss_upstream-client.pcap"),
        &lab("loss_upstream-server.pcap"),
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("35 between A and B"), "{text}");
    assert!(
        text.contains("35 segments on their way from A to B were lost between A and B"),
        "{text}"
    );
}

#[test]
fn diff_names_the_finding_that_went_away() {
    let output = tcpwhy(&[
        "diff",
        &lab("nagle_delayed_ack.pcap"),
        &lab("nagle_fixed.pcap"),
    ]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    let gone = text
        .lines()
        .find(|line| line.trim_start().starts_with("gone:"))
        .expect("a finding went away");
    assert!(gone.contains("Nagle"), "{text}");
}

#[test]
fn a_bad_capture_names_the_file_and_byte_offset() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("cut.pcap");
    let whole = std::fs::read(lab_file("nagle_fixed.pcap")).unwrap();
    std::fs::write(&cut, &whole[..whole.len() - 7]).unwrap();
    let cut = cut.to_string_lossy().into_owned();
    for command in ["compare", "diff"] {
        let output = tcpwhy(&[command, &lab("nagle_fixed.pcap"), &cut]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&format!("tcpwhy: {cut}: ")) && stderr.contains(" at byte "),
            "{stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn diff_writes_no_page_for_a_bad_capture_nor_over_an_input() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-two-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("cut.pcap");
    let whole = std::fs::read(lab_file("nagle_fixed.pcap")).unwrap();
    std::fs::write(&cut, &whole[..whole.len() - 7]).unwrap();
    let page = dir.join("diff.html");
    let fixed = lab("nagle_fixed.pcap");
    let output = tcpwhy(&[
        "diff",
        &fixed,
        cut.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(!page.exists(), "a page was written for a capture cut short");
    let copy = dir.join("before.pcap");
    std::fs::write(&copy, &whole).unwrap();
    let copy = copy.to_str().unwrap();
    let output = tcpwhy(&["diff", copy, &fixed, "--html", copy]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is an input file"), "{stderr}");
    assert_eq!(std::fs::read(copy).unwrap(), whole);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn compare_names_what_the_proxy_added_and_why() {
    let nagle = tcpwhy(&[
        "compare",
        &lab("proxy_nagle-front.pcap"),
        &lab("proxy_nagle-back.pcap"),
    ]);
    let text = String::from_utf8_lossy(&nagle.stdout);
    assert!(
        text.contains("a proxy between them terminates TCP"),
        "{text}"
    );
    assert!(
        text.contains("Nagle at the proxy toward the server: in 19 exchanges"),
        "{text}"
    );
    let snat = tcpwhy(&[
        "compare",
        "--format",
        "json",
        &lab("proxy_snat-front.pcap"),
        &lab("proxy_snat-back.pcap"),
    ]);
    let comparison = &json_lines(&snat)[0];
    let expect = &common::manifest("proxy_snat")["expect"];
    let snat = &comparison["proxy"]["snat"];
    assert_eq!(snat["reused_in_time_wait"], expect["reuses_in_time_wait"]);
    assert_eq!(snat["connects_failed"], expect["connects_failed"]);
}
