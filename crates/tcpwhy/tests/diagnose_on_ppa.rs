//! Findings on the book's captures (../shared/captures/ppa), each checked by
//! hand with tshark: what tshark shows is noted beside each capture.

use crate::common;

use std::path::PathBuf;

use serde_json::Value;

/// What tcpwhy must say about a capture.
enum Expect {
    /// The top finding's kind, and phrases its title must hold.
    Top(&'static str, &'static [&'static str]),
    /// Findings, if any, are all info: nothing slows this capture down.
    NothingAboveInfo,
    /// None of these kinds may be found.
    NoneOf(&'static [&'static str]),
}

use Expect::*;

const PINNED: [(&str, Expect); 14] = [
    // tshark: one 648-byte segment sent six times, 0.2, 0.6, 1.2, 2.4, 4.8 s
    // apart (the retransmission timeout doubling), never acknowledged.
    (
        "tcp_retransmissions.pcapng",
        Top(
            "packet_loss",
            &["5 segments resent", "5 after a timeout (9.21 s"],
        ),
    ),
    // tshark: the same exchange as tcp_retransmissions.pcapng, in pcap.
    (
        "ppa2e_tcp_retransmissions.pcap",
        Top("packet_loss", &["5 after a timeout (9.21 s"]),
    ),
    // tshark: the peer's ACKs stop; the 648-byte segment is resent five times
    // with a doubling timeout, 9.2 s in all.
    (
        "ppa1e_tcp-con-lost.pcap",
        Top("packet_loss", &["5 segments resent", "5 after a timeout"]),
    ),
    // tshark: three duplicate ACKs, then a fast retransmission: no timeout.
    (
        "tcp_dupack.pcapng",
        Top("packet_loss", &["1 segment resent"]),
    ),
    // tshark: 9 connections to 203.0.113.94:80 get nothing back (0 bytes),
    // their SYNs resent for over a minute while the other servers answer.
    (
        "http_espn_fail.pcapng",
        Top(
            "connection_setup_failure",
            &[
                "9 connection attempts waited for SYN retries",
                "9 attempts never answered",
                "all to 203.0.113.94:80",
            ],
        ),
    ),
    // tshark: a SYN to port 80 answered by RST, ACK.
    (
        "tcp_refuseconnection.pcapng",
        Top("connection_setup_failure", &["1 attempt refused"]),
    ),
    // tshark: three SYNs to port 80, each answered by RST, ACK.
    (
        "nowebaccess2.pcapng",
        Top("connection_setup_failure", &["1 attempt refused"]),
    ),
    // tshark: three SYNs to port 80, none answered.
    (
        "nowebaccess3.pcapng",
        Top(
            "connection_setup_failure",
            &["1 connection attempt waited", "1 attempt never answered"],
        ),
    ),
    // tshark: SYNs to the FTP port at 0, 3.0 and 9.0 s, none answered.
    (
        "ppa1e_ftpserverdenied.pcap",
        Top(
            "connection_setup_failure",
            &["(after 3.0, 9.0 s)", "never answered"],
        ),
    ),
    // tshark: SYNs to the FTP port at 0, 2.9 and 9.0 s, none answered.
    (
        "ppa1e_ftpclientdenied.pcap",
        Top(
            "connection_setup_failure",
            &["(after 2.9, 9.0 s)", "never answered"],
        ),
    ),
    // tshark: 7 "previous segment not captured" in a POP3 download, duplicate
    // ACKs, then the missing segments resent: lost before the capture point.
    (
        "ppa1e_email-troubles.pcap",
        Top("packet_loss", &["lost upstream"]),
    ),
    // tshark: SMB print traffic in 0.25 s with no TCP warning; the trouble is
    // in the print spooler, not the network.
    ("ppa1e_printerproblem.pcap", NothingAboveInfo),
    // tshark: ARP and unanswered DNS queries only, no TCP at all.
    ("nowebaccess1.pcapng", NothingAboveInfo),
    // tshark: the page loads (three 200 OK); the resets come 9 s and 65 s
    // later on idle connections, which is how they close, not a failure.
    (
        "ppa1e_http-client-refuse.pcap",
        NoneOf(&["connection_setup_failure", "packet_loss"]),
    ),
];

fn ppa(name: &str) -> PathBuf {
    synth::shared_captures("ppa").join(name)
}

fn check(capture: &str, expect: &Expect, findings: &[Value]) -> Result<(), String> {
    let kinds: Vec<&str> = findings
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    match expect {
        Top(kind, phrases) => {
            let top = findings.first().ok_or("no finding")?;
            let title = top["title"].as_str().unwrap();
            if top["kind"] != *kind {
                return Err(format!("top is {kinds:?}, not {kind}"));
            }
            if top["severity"] == "info" {
                return Err(format!("{kind} is only info"));
            }
            match phrases.iter().find(|phrase| !title.contains(*phrase)) {
                Some(missing) => Err(format!("'{missing}' not in '{title}'")),
                None => Ok(()),
            }
        }
        NothingAboveInfo => match findings.iter().find(|f| f["severity"] != "info") {
            Some(f) => Err(format!("{} is {}", f["kind"], f["severity"])),
            None => Ok(()),
        },
        NoneOf(forbidden) => match kinds.iter().find(|kind| forbidden.contains(kind)) {
            Some(kind) => Err(format!("{kind} found")),
            None => Ok(()),
        },
    }
    .map_err(|why| format!("{capture}: {why}"))
}

#[test]
fn each_book_capture_gets_the_finding_tshark_bears_out() {
    let failures: Vec<String> = PINNED
        .iter()
        .filter_map(|(capture, expect)| {
            let findings = common::objects_read_so_far("diagnose", &ppa(capture), "finding");
            check(capture, expect, &findings).err()
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn timeouts_cost_what_the_sender_waited() {
    // tshark: the resends come 0.206, 0.806, 2.006, 4.406 and 9.211 s after the
    // first send: 9.2 s of waiting for timeouts.
    let findings =
        common::objects_read_so_far("diagnose", &ppa("tcp_retransmissions.pcapng"), "finding");
    let cost = findings[0]["cost_ms"].as_f64().unwrap();
    assert!((cost - 9211.0).abs() <= 50.0, "{cost}");
}
