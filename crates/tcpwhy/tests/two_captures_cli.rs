//! Two captures on the command line: merged as one observation, compared
//! point to point, or diffed before and after.

use crate::common;

use std::process::{Command, Output};

use common::lab_file;
use serde_json::Value;

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
