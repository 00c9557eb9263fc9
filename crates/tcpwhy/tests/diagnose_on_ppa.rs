//! Findings on the book's captures (../shared/captures/ppa), each checked by
//! hand with tshark: what tshark shows is noted beside each capture.

use crate::common;

use std::path::PathBuf;

use serde_json::Value;

/// What tcpwhy must say about a capture.
enum Expect {
    /// The top finding's kind, the least severity it must have, and phrases
    /// its title must hold.
    Top(&'static str, &'static str, &'static [&'static str]),
    /// A finding of this kind, at least this severe, with these phrases in
    /// its title, anywhere in the ranking.
    Found(&'static str, &'static str, &'static [&'static str]),
    /// A finding of this kind, only info, with these phrases in its title:
    /// it happened, and no one waited for it.
    Quiet(&'static str, &'static [&'static str]),
    /// The top finding is one of these kinds.
    TopOf(&'static [&'static str]),
    /// Findings, if any, are all info: nothing slows this capture down.
    NothingAboveInfo,
    /// None of these kinds may be found.
    NoneOf(&'static [&'static str]),
}

use Expect::*;

const PINNED: [(&str, Expect); 42] = [
    // tshark: one 648-byte segment sent six times, 0.2, 0.6, 1.2, 2.4, 4.8 s
    // apart (the retransmission timeout doubling), never acknowledged, and
    // not a packet from the peer: the peer is gone, not a lossy path.
    (
        "tcp_retransmissions.pcapng",
        Top(
            "dead_peer",
            "critical",
            &["10.3.71.7:1043 stopped answering", "5 times"],
        ),
    ),
    // tshark: the same exchange as tcp_retransmissions.pcapng, in pcap.
    (
        "ppa2e_tcp_retransmissions.pcap",
        Top("dead_peer", "critical", &["stopped answering", "5 times"]),
    ),
    // tshark: the peer's ACKs stop; the 648-byte segment is resent five times
    // with a doubling timeout, 9.2 s in all.
    (
        "ppa1e_tcp-con-lost.pcap",
        Top("dead_peer", "critical", &["stopped answering", "5 times"]),
    ),
    // tshark: the capture starts mid-stream above the client's ACK (seq 1);
    // three duplicate ACKs ask for seq 1, then it comes, a fast
    // retransmission: its original never passed the capture point, so it
    // was lost before it. The whole capture lasts half a millisecond.
    (
        "tcp_dupack.pcapng",
        Top(
            "packet_loss",
            "info",
            &["1 data segment resent", "lost upstream"],
        ),
    ),
    // tshark: 9 connections to 203.0.113.94:80 get nothing back (0 bytes),
    // their SYNs resent for over a minute while the other servers answer.
    (
        "http_espn_fail.pcapng",
        Top(
            "connection_setup_failure",
            "critical",
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
        Top("connection_setup_failure", "info", &["1 attempt refused"]),
    ),
    // tshark: three SYNs to port 80, each answered by RST, ACK.
    (
        "nowebaccess2.pcapng",
        Top(
            "connection_setup_failure",
            "warning",
            &["1 attempt refused"],
        ),
    ),
    // tshark: three SYNs to port 80, none answered.
    (
        "nowebaccess3.pcapng",
        Top(
            "connection_setup_failure",
            "warning",
            &["1 connection attempt waited", "1 attempt never answered"],
        ),
    ),
    // tshark: SYNs to the FTP port at 0, 3.0 and 9.0 s, none answered.
    (
        "ppa1e_ftpserverdenied.pcap",
        Top(
            "connection_setup_failure",
            "critical",
            &["(after 2.99 s, 9.03 s)", "never answered"],
        ),
    ),
    // tshark: SYNs to the FTP port at 0, 2.9 and 9.0 s, none answered.
    (
        "ppa1e_ftpclientdenied.pcap",
        Top(
            "connection_setup_failure",
            "critical",
            &["(after 2.94 s, 8.98 s)", "never answered"],
        ),
    ),
    // tshark: 7 "previous segment not captured" in a POP3 download, duplicate
    // ACKs, then the missing segments resent: lost before the capture point.
    (
        "ppa1e_email-troubles.pcap",
        Top("packet_loss", "critical", &["lost upstream"]),
    ),
    // tshark: the printer's window shrinks from 8760 bytes while the sender
    // fills it (window_full), the printer's ACKs come 150-200 ms apart; five
    // times it shrinks below a segment (628, 80, 404, 1316, 180 bytes:
    // frames 31, 50, 66, 84, 101) and the sender waits 1.1-1.9 s for its
    // window update (frames 32, 51, 67, 85, 102), answering each at once; at 10.3 s it offers
    // 1092 bytes (frame 119), which the sender fills only when its persist
    // timer fires 4.8 s later (frame 120); then the printer stops
    // acknowledging: those 1092 bytes resent at 20.6 and 26.2 s, never
    // ACKed. The printer, not the path: its shut window and its silence are
    // the two causes, and between the shut windows its small one set the pace.
    (
        "inconsistent_printer.pcapng",
        Found(
            "zero_window",
            "critical",
            &["window too small for a segment"],
        ),
    ),
    (
        "inconsistent_printer.pcapng",
        Found(
            "receive_window_limited",
            "warning",
            &["8.8 kB receive window"],
        ),
    ),
    (
        "inconsistent_printer.pcapng",
        TopOf(&["zero_window", "dead_peer"]),
    ),
    (
        "inconsistent_printer.pcapng",
        NoneOf(&["packet_loss", "tail_loss", "periodic_loss"]),
    ),
    // tshark: SMB print traffic in 0.25 s with no TCP warning; the trouble is
    // in the print spooler, not the network.
    ("ppa1e_printerproblem.pcap", NothingAboveInfo),
    // tshark: no analysis flag at all; the FTP client sends its next command
    // (frame 23) 2.6 s after its last, while its host's IP identification
    // ran on through packets of its other connection (frames 20 and 22):
    // the user's pause, not a lost command resent.
    ("ppa1e_ftp.pcap", NothingAboveInfo),
    // tshark: a zone transfer over TCP; the client writes the 2-byte length
    // (frame 4), then holds the 33-byte query until the server's ACK comes
    // 218 ms later (frame 5), and sends it at once (frame 6).
    (
        "dns_axfr.pcapng",
        // One hold, but not read from timing alone: DNS's length says the
        // query had begun, so the held 33 bytes were its second write, the
        // pattern Nagle holds back, and the server waited for them.
        Top("nagle_delayed_ack", "warning", &["218.4 ms", "Nagle"]),
    ),
    // tshark: the POST (frame 4) is acknowledged in 89 ms, answered 1.27 s
    // later (frame 6); the GET it redirects to (frame 7) waits 0.99 s for its
    // first byte (frame 9), on a 81 ms round trip: the server's work.
    (
        "http_post.pcapng",
        Top("server_think_time", "critical", &["69.163.176.56:80"]),
    ),
    // tshark: a page load over 25 connections; handshakes to 199.181.132.250
    // and 68.71.208.11 take 60 and 63 ms, against 10 ms to 205.234.218.129,
    // and nothing is flagged but two segments the capture missed.
    // A page's requests each pay a 10 or 63 ms round trip: no one waits a
    // second for the distance on any one of them, and no one figure is the
    // round trip of every connection.
    ("http_espn.pcapng", NothingAboveInfo),
    (
        "http_espn.pcapng",
        Found(
            "path_latency",
            "info",
            &["A round trip of 9.9 ms to 64.4 ms on the path"],
        ),
    ),
    // tshark: 17 GETs; the one for /favicon.ico (frame 57) is answered
    // "404 Not Found", the 16 others 200: the page needed none of it.
    (
        "ppa1e_dns.cap",
        Quiet("application_failure", &["favicon.ico", "404"]),
    ),
    // tshark: both POSTs of /flashmail.asp are answered "403 Forbidden".
    (
        "ppa1e_http-fault-post.pcap",
        Top("application_failure", "critical", &["2 of 2", "403"]),
    ),
    // tshark flags nothing in these (`tcp.analysis.flags`, window updates
    // aside): SMTP and DNS sessions answered within 90 ms, a dual-stack page
    // load, a bare handshake and teardown, an FTP session paced by its user,
    // and a weather station's one GET answered in 89 ms on an 87 ms path.
    ("mail_receiver_server_3.pcapng", NothingAboveInfo),
    ("mail_sender_attachment.pcapng", NothingAboveInfo),
    ("mail_sender_client_1.pcapng", NothingAboveInfo),
    ("mail_sender_server_2.pcapng", NothingAboveInfo),
    ("dns_tcp.pcapng", NothingAboveInfo),
    ("http_ip4and6.pcapng", NothingAboveInfo),
    ("tcp_handshake.pcapng", NothingAboveInfo),
    ("tcp_teardown.pcapng", NothingAboveInfo),
    ("stranded_branchdns.pcapng", NothingAboveInfo),
    ("tickedoffdeveloper.pcapng", NothingAboveInfo),
    // tshark: `site help` (frame 13) answered "504 Command not implemented
    // for that parameter" (ftp.response.code), the client's question about
    // what the server offers; the session goes on to PWD, LIST and STOR.
    (
        "tickedoffdeveloper.pcapng",
        Quiet("application_failure", &["reply 504", "SITE help"]),
    ),
    ("weather_broken.pcapng", NothingAboveInfo),
    // tshark: ARP and unanswered DNS queries only, no TCP at all.
    ("nowebaccess1.pcapng", NothingAboveInfo),
    // tshark: the page loads (three 200 OK); the resets come 9 s and 65 s
    // later on idle connections, which is how they close, not a failure.
    (
        "ppa1e_http-client-refuse.pcap",
        NoneOf(&["connection_setup_failure", "packet_loss"]),
    ),
    // tshark: one GET over an 87 ms round trip, answered at once: the
    // working half of the pair. But the client sent it 168 ms after its
    // handshake (frames 3 to 4), half the page's time and its own doing:
    // its own pace, as nothing shows that anyone waited for it.
    ("weather_working.pcapng", NothingAboveInfo),
    (
        "weather_working.pcapng",
        Found(
            "client_delay",
            "info",
            &["waited 168.1 ms before its first request"],
        ),
    ),
    // tshark: a page load of one GET whose answer comes 40 ms later.
    ("http_google.pcapng", NothingAboveInfo),
    // tshark: the server's frame 20 resends data the client had already
    // acknowledged (a spurious retransmission): no loss cost the page anything.
    ("ppa1e_http.cap", NoneOf(&["packet_loss", "tail_loss"])),
    // tshark: a telnet session whose server stamps TSval on a 500 ms clock,
    // at most 488 bytes in flight: nothing queues on the way.
    ("ppa1e_telnet.pcap", NoneOf(&["bottleneck_link"])),
];

fn ppa(name: &str) -> PathBuf {
    synth::shared_captures("ppa").join(name)
}

fn severity_rank(severity: &str) -> Option<usize> {
    ["info", "warning", "critical"]
        .iter()
        .position(|s| *s == severity)
}

fn check(capture: &str, expect: &Expect, findings: &[Value]) -> Result<(), String> {
    let kinds: Vec<&str> = findings
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    match expect {
        Top(kind, least, phrases) => {
            let top = findings.first().ok_or("no finding")?;
            let title = top["title"].as_str().unwrap();
            if top["kind"] != *kind {
                return Err(format!("top is {kinds:?}, not {kind}"));
            }
            if severity_rank(top["severity"].as_str().unwrap()) < severity_rank(least) {
                return Err(format!("{kind} is only {}", top["severity"]));
            }
            match phrases.iter().find(|phrase| !title.contains(*phrase)) {
                Some(missing) => Err(format!("'{missing}' not in '{title}'")),
                None => Ok(()),
            }
        }
        Found(kind, least, phrases) => {
            let found = findings.iter().find(|f| {
                f["kind"] == *kind
                    && severity_rank(f["severity"].as_str().unwrap()) >= severity_rank(least)
                    && phrases
                        .iter()
                        .all(|phrase| f["title"].as_str().unwrap().contains(phrase))
            });
            match found {
                Some(_) => Ok(()),
                None => Err(format!(
                    "no {least} {kind} with {phrases:?} among {kinds:?}"
                )),
            }
        }
        Quiet(kind, phrases) => {
            let found = findings.iter().find(|f| {
                f["kind"] == *kind
                    && phrases
                        .iter()
                        .all(|phrase| f["title"].as_str().unwrap().contains(phrase))
            });
            match found.map(|f| f["severity"].as_str().unwrap()) {
                Some("info") => Ok(()),
                Some(severity) => Err(format!("{kind} is {severity}, not info")),
                None => Err(format!("no {kind} with {phrases:?} among {kinds:?}")),
            }
        }
        TopOf(leading) => match kinds.first() {
            Some(top) if leading.contains(top) => Ok(()),
            _ => Err(format!("top is {kinds:?}, not one of {leading:?}")),
        },
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

/// The book's captures in which tshark finds no TCP segment at all
/// (`tshark -Y tcp` prints nothing): ARP, DHCP, DNS over UDP, ICMP and IP
/// fragments.
const WITHOUT_TCP: [&str; 28] = [
    "arp_gratuitous.pcapng",
    "arp_resolution.pcapng",
    "dhcp6_outlease_acquisition.pcapng",
    "dhcp_inlease_renewal.pcapng",
    "dhcp_nolease_initialization.pcapng",
    "dns.pcap",
    "dns_lab.pcapng",
    "dns_query_nonexistent.pcapng",
    "dns_query_response.pcapng",
    "dns_recursivequery_client.pcapng",
    "dns_recursivequery_server.pcapng",
    "dns_reverse_lookup.pcapng",
    "icmp_echo.pcapng",
    "icmp_traceroute.pcapng",
    "icmpv6_neighbor_solicitation.pcapng",
    "ip_frag_source.pcapng",
    "ip_ttl_dest.pcapng",
    "ip_ttl_source.pcapng",
    "ipv6_fragments.pcapng",
    "ppa1e_arp.pcap",
    "ppa1e_destunreachable.pcap",
    "ppa1e_dhcp.pcap",
    "ppa1e_icmp-tracert-slow.pcap",
    "ppa1e_icmp.pcap",
    "ppa1e_ipfragments.pcap",
    "ppa2e_dhcp_nolease_renewal.pcap",
    "stranded_clientside.pcapng",
    "udp_dnsrequest.pcapng",
];

#[test]
fn captures_without_tcp_get_no_finding() {
    let failures: Vec<String> = WITHOUT_TCP
        .iter()
        .filter_map(|capture| {
            let findings = common::objects_read_so_far("diagnose", &ppa(capture), "finding");
            let kinds: Vec<&str> = findings
                .iter()
                .map(|f| f["kind"].as_str().unwrap())
                .collect();
            (!kinds.is_empty()).then(|| format!("{capture}: {kinds:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The second edition's `ppa2e_` captures are first-edition pcapng files
/// saved again as pcap (or the other way round): each must read as its twin.
#[test]
fn each_capture_saved_in_both_formats_reads_the_same() {
    let book = synth::shared_captures("ppa");
    let mut twins = 0;
    for entry in std::fs::read_dir(&book).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some(stem) = name.strip_prefix("ppa2e_") else {
            continue;
        };
        let stem = stem.rsplit_once('.').map_or(stem, |(stem, _)| stem);
        let Some(twin) = ["pcapng", "pcap"]
            .iter()
            .map(|extension| book.join(format!("{stem}.{extension}")))
            .find(|twin| twin.exists())
        else {
            continue;
        };
        let read = |path: &std::path::Path| {
            common::objects_read_so_far("diagnose", path, "finding")
                .into_iter()
                .map(|f| (f["kind"].clone(), f["severity"].clone(), f["title"].clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read(&path),
            read(&twin),
            "{name} against {}",
            twin.display()
        );
        twins += 1;
    }
    assert!(
        twins >= 28,
        "only {twins} twins found in {}",
        book.display()
    );
}

#[test]
fn no_critical_finding_costs_under_a_tenth_of_a_second() {
    let book = synth::shared_captures("ppa");
    for entry in std::fs::read_dir(book).unwrap() {
        let path = entry.unwrap().path();
        let findings = common::objects_read_so_far("diagnose", &path, "finding");
        // Failures are rated by how many requests failed, not by time.
        for finding in findings
            .iter()
            .filter(|f| f["kind"] != "application_failure")
        {
            let cost = finding["cost_ms"].as_f64().unwrap();
            assert!(
                finding["severity"] != "critical" || cost >= 100.0,
                "{}: {finding:#?}",
                path.display()
            );
        }
    }
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

/// A printed duration in milliseconds, and how far rounding may have moved it.
type Printed = (f64, f64);

/// A duration as printed (`23.0 ms`, `9.76 s`, `850 µs`) in milliseconds,
/// with half its last printed digit: how far rounding may have moved it.
fn printed_ms(text: &str) -> Printed {
    let (number, unit) = text.trim().split_once(' ').unwrap();
    let scale = match unit {
        "s" => 1e3,
        "ms" => 1.0,
        "µs" => 1e-3,
        _ => panic!("no unit in {text:?}"),
    };
    let decimals = number.split_once('.').map_or(0, |(_, digits)| digits.len());
    let value: f64 = number.parse().unwrap();
    (value * scale, 0.5 * 10f64.powi(-(decimals as i32)) * scale)
}

/// `(count, with, without, sooner)` of a what-if that says "the N
/// transactions it touches would take X on average instead of Y, Z sooner".
fn what_if_figures(what_if: &str) -> Option<(f64, Printed, Printed, Printed)> {
    let rest = what_if.split_once("the ")?.1;
    let (count, rest) = rest.split_once(' ')?;
    let rest = rest.split_once(" would take ")?.1;
    let (without, rest) = rest.split_once(" on average instead of ")?;
    let (with, rest) = rest.split_once(", ")?;
    let sooner = rest.split_once(" sooner")?.0;
    Some((
        count.parse().ok()?,
        printed_ms(with),
        printed_ms(without),
        printed_ms(sooner),
    ))
}

#[test]
fn what_ifs_add_up_on_every_book_capture() {
    let mut checked = 0;
    for entry in std::fs::read_dir(synth::shared_captures("ppa")).unwrap() {
        let path = entry.unwrap().path();
        for finding in common::objects_read_so_far("diagnose", &path, "finding") {
            let what_if = finding["what_if"].as_str().unwrap();
            let Some((count, with, without, sooner)) = what_if_figures(what_if) else {
                continue;
            };
            let saved = count * (with.0 - without.0);
            let leeway = count * (with.1 + without.1) + sooner.1;
            assert!(
                (saved - sooner.0).abs() <= leeway,
                "{}: {count} × ({} − {}) ms is {saved:.1} ms, not {} ms: {what_if}",
                path.display(),
                with.0,
                without.0,
                sooner.0
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} what-ifs read");
}
