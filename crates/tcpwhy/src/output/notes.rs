//! The analysis's notes in words: one sentence each, for the table's
//! footer, the JSON `end` object and stderr.

use pipeline::{Analysis, Note, OtherTraffic, SkipCounts};

/// Every note of `analysis`, worded.
pub fn sentences(analysis: &Analysis) -> Vec<String> {
    analysis.notes().iter().map(sentence).collect()
}

pub fn sentence(note: &Note) -> String {
    match note {
        Note::MemoryBudget {
            budget_bytes,
            trimmed,
        } => memory_budget(*budget_bytes, trimmed),
        Note::ClockSteppedBack {
            steps,
            largest_ms,
            transactions_left_out,
            handshakes_left_out,
        } => format!(
            "the capture's clock stepped back {steps} times (at most {largest_ms:.1} ms): \
             times and durations across those steps are not to be trusted{}",
            left_out(*transactions_left_out, *handshakes_left_out)
        ),
        Note::ClockJumped { jumps, largest_s } => format!(
            "the capture's clock jumped ahead by a day or more {jumps} times \
             (at most {largest_s:.0} s)"
        ),
        Note::OutOfRange { frames } => format!(
            "{frames} frames were stamped before 1896 or after 2116 and were counted at that bound"
        ),
        Note::Unmatched { connections } => format!(
            "{connections} connections are in more than one file, but their packets could not \
             be matched across the files: copies among them were analysed as packets of \
             their own, so their retransmissions and losses may be copies"
        ),
        Note::FilesOverlap {
            copies,
            renumbered_connections,
        } => {
            let renumbered = match renumbered_connections {
                0 => String::new(),
                n => format!(
                    "; {n} connections had every sequence number shifted by one amount at \
                     one point, rewritten between them"
                ),
            };
            format!(
                "the files overlap: {copies} frames were captured at more than one point and \
                 were analysed once{renumbered} (`tcpwhy compare A B` tells the delay and loss \
                 between two points)"
            )
        }
        Note::RecordedTwice { frames } => format!(
            "{frames} frames were recorded twice by the capture (the same packet again, \
             as a mirror port shows it going in and out) and were analysed once"
        ),
        Note::ForwardedAgain {
            frames,
            least,
            most,
        } => {
            let step = if least == most {
                least.to_string()
            } else {
                format!("{least} to {most}")
            };
            format!(
                "{frames} frames were packets the capture had already seen, again with a TTL \
                 {step} lower: a router forwarded them back onto the tapped link; each \
                 was analysed once"
            )
        }
        Note::CaptureMissed { stretches } => format!(
            "the capture missed {stretches} stretches of data that their receiver acknowledged \
             (Wireshark's ACKed unseen segment: sent before the capture began, or dropped \
             by it): the network delivered them, and no wait or loss is charged to them"
        ),
        Note::NoTcp {
            frames,
            skipped,
            other_traffic,
        } => {
            let frames = match frames {
                1 => "the only frame held no".to_string(),
                n => format!("none of the {n} frames held a"),
            };
            format!(
                "{frames} TCP segment tcpwhy can read: {}{}",
                skipped_reasons(skipped),
                holding(other_traffic)
            )
        }
    }
}

/// What the memory budget trimmed, in one sentence naming only what it did.
fn memory_budget(budget_bytes: u64, trimmed: &tcp::Trimmed) -> String {
    let mut did = Vec::new();
    let unlisted: Vec<String> = [
        (trimmed.attempts_not_listed, "handshake attempt"),
        (trimmed.connections_not_listed, "connection"),
    ]
    .iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, noun)| plural(*count, noun))
    .collect();
    if !unlisted.is_empty() {
        did.push(format!(
            "kept {} out of the lists (they are counted in the totals, the timeline and \
             the findings on setup)",
            unlisted.join(" and ")
        ));
    }
    if trimmed.transactions_not_listed > 0 {
        did.push(format!(
            "left {} out of the list (they are counted in their connections' ledgers and \
             the timeline, and the findings count each one listed for as many as it stands \
             for; what one action cost comes from those listed, a spread over the whole \
             capture)",
            plural(trimmed.transactions_not_listed, "transaction")
        ));
    }
    if trimmed.retired_early > 0 {
        did.push(format!(
            "retired {} early",
            plural(trimmed.retired_early, "open connection")
        ));
    }
    format!(
        "the memory budget ({:.1} GiB) {}; --memory raises it",
        budget_bytes as f64 / (1u64 << 30) as f64,
        and_list(&did)
    )
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The durations left out across the clock's steps back, as words to end
/// its note: "; the durations … are left out (null), of 3 transactions".
fn left_out(transactions: u64, handshakes: u64) -> String {
    let counted: Vec<String> = [(transactions, "transaction"), (handshakes, "handshake")]
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, noun)| plural(*count, noun))
        .collect();
    if counted.is_empty() {
        return String::new();
    }
    format!(
        "; the durations that would run backwards are left out (null), of {}",
        counted.join(" and ")
    )
}

/// The skipped frames by reason, as a phrase: "12 not IP, 3 IP fragments".
fn skipped_reasons(skipped: &SkipCounts) -> String {
    let reasons = [
        (skipped.unsupported_link_type, "of an unsupported link type"),
        (skipped.not_ip, "not IP"),
        (skipped.not_tcp, "not TCP"),
        (skipped.ip_fragment, "IP fragments"),
        (skipped.truncated_header, "with truncated headers"),
        (skipped.malformed_header, "with malformed headers"),
    ];
    let phrases: Vec<String> = reasons
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, reason)| format!("{count} {reason}"))
        .collect();
    if phrases.is_empty() {
        "none skipped".into()
    } else {
        phrases.join(", ")
    }
}

/// What the frames without TCP held, to end a sentence: "; they hold 3 UDP, 1 ARP".
fn holding(other: &OtherTraffic) -> String {
    let held = other_traffic(other);
    if held.is_empty() {
        String::new()
    } else {
        format!("; they hold {}", held.join(", "))
    }
}

/// Each kind of frame without TCP a capture held, counted: "3 UDP", "1 ARP".
pub fn other_traffic(other: &OtherTraffic) -> Vec<String> {
    [
        (other.udp, "UDP"),
        (other.icmp, "ICMP"),
        (other.arp, "ARP"),
        (other.other, "other"),
    ]
    .iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, what)| format!("{count} {what}"))
    .collect()
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
