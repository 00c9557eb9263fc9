//! A SYN flood or scan: many sources opening handshakes to one server and
//! port that never complete. One finding for the whole flood, from the
//! tracker's per-server counts (the attempts themselves are mostly not listed).

use std::net::IpAddr;

use tcp::UnansweredSyns;

use crate::rules::{FLOOD_ATTEMPTS, FLOOD_SOURCES};
use crate::{Finding, FindingKind, Inputs};

pub fn syn_flood(inputs: &Inputs) -> Option<Finding> {
    let floods: Vec<&UnansweredSyns> = inputs
        .unanswered_syns
        .iter()
        .filter(|s| s.attempts >= FLOOD_ATTEMPTS && s.sources >= FLOOD_SOURCES)
        .collect();
    let worst = floods.first()?;
    let span_ms = (worst.last_ns.saturating_sub(worst.first_ns) as f64 / 1e6).max(1.0);
    let rate_per_s = worst.attempts as f64 / (span_ms / 1e3);
    let mut found = Finding::new(
        FindingKind::SynFlood,
        &format!(
            "SYN flood: {} handshakes to {} never completed, from about {} sources at {}/s",
            worst.attempts,
            worst.server,
            worst.sources,
            rate_per_s.round()
        ),
        span_ms,
    );
    let others = floods.len() - 1;
    found.connections = worst.listed;
    found.frames = worst.examples.iter().map(|e| e.frame).collect();
    found.wireshark_filter = format!(
        "tcp.flags.syn == 1 && tcp.flags.ack == 0 && {} == {} && tcp.dstport == {}",
        match worst.server.ip {
            IpAddr::V4(_) => "ip.dst",
            IpAddr::V6(_) => "ipv6.dst",
        },
        worst.server.ip,
        worst.server.port
    );
    let examples: Vec<String> = worst
        .examples
        .iter()
        .map(|e| format!("{} (frame {})", e.client, e.frame))
        .collect();
    found.explanation = format!(
        "{} handshakes from about {} distinct addresses over {:.1} s never completed: \
         the clients sent SYNs and nothing else. So many sources opening and \
         abandoning handshakes is a SYN flood (often with spoofed addresses) or a \
         scan, not clients in trouble; while it lasts, the server's SYN backlog \
         fills and real clients' SYNs are dropped or answered late. {} of them are \
         listed as connections; the rest are counted only. First attempts: {}.{}",
        worst.attempts,
        worst.sources,
        span_ms / 1e3,
        worst.listed,
        examples.join(", "),
        if others > 0 {
            format!(" {others} other servers were flooded the same way.")
        } else {
            String::new()
        }
    );
    found.fix = "Turn on SYN cookies on the server (net.ipv4.tcp_syncookies = 1), raise \
                 the SYN backlog (net.ipv4.tcp_max_syn_backlog, the listen backlog), and \
                 drop or rate-limit the flood upstream (a firewall, the provider's \
                 scrubbing). If the sources are yours, find the scanner or the client \
                 whose retries run away."
        .into();
    found.what_if =
        "Without the flood the server's backlog stays free for real clients' handshakes.".into();
    found.suspected = Some(
        "inferred from handshakes never completed; whether real clients were turned away \
         shows in the connection setup finding, if any"
            .into(),
    );
    found.figures.insert("attempts", worst.attempts as f64);
    found.figures.insert("sources", worst.sources as f64);
    found.figures.insert("attempts_per_s", rate_per_s);
    found.figures.insert("listed", worst.listed as f64);
    found.figures.insert("servers", floods.len() as f64);
    Some(found)
}
