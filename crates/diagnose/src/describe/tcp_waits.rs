//! TCP's own waits: Nagle meeting a delayed ACK, a delayed ACK of a last
//! segment, a receive window too small for the path or closed by a reader
//! that stopped, a send buffer too small, and slow start.

use tcp::stack::{DELAYED_ACK_MAX_NS, DELAYED_ACK_MIN_NS};

use super::{a_round_trip, bytes, count, duration, round, with_text, Facts};
use crate::Finding;

/// What the ACK that released a segment held back by Nagle was, from how long
/// past the round trip it came: at once, a delayed ACK, or later than any
/// delayed-ACK timer holds one.
struct HeldBack {
    until: String,
    why_late: String,
    or_else: String,
}

fn held_back_by(receiver: &str, ack_held_ms: f64) -> HeldBack {
    let ms = |ns: i64| ns as f64 / 1e6;
    if ack_held_ms < ms(DELAYED_ACK_MIN_NS) {
        return HeldBack {
            until: format!("the {receiver}'s ACK a round trip later"),
            why_late: "that ACK takes the path's round trip".to_string(),
            or_else: "move the two ends closer".to_string(),
        };
    }
    if ack_held_ms <= ms(DELAYED_ACK_MAX_NS) {
        return HeldBack {
            until: format!("the {receiver}'s delayed ACK"),
            why_late: format!(
                "the {receiver} delays that ACK hoping to send it with data of its own"
            ),
            or_else: format!(
                "have the {receiver} acknowledge at once (TCP_QUICKACK on Linux, \
                 TcpAckFrequency=1 on Windows)"
            ),
        };
    }
    HeldBack {
        until: format!("the {receiver}'s ACK, later than any delayed-ACK timer"),
        why_late: format!(
            "the {receiver} acknowledged {} past the round trip, longer than any delayed-ACK \
             timer holds an ACK (half a second): it was slow to answer at all",
            duration(ack_held_ms)
        ),
        or_else: format!("find what kept the {receiver} from acknowledging"),
    }
}

pub(super) fn nagle(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let typical = facts.typical_wait_ms();
    let HeldBack {
        until,
        why_late,
        or_else,
    } = held_back_by(receiver, typical - facts.round_trip_ms());
    let mut found = with_text(
        facts.kind,
        format!(
            "{} of {} each: the {sender} held a small segment back (Nagle) until {until}",
            count(facts.stretches(), "wait"),
            duration(typical)
        ),
        format!(
            "The {sender} writes its messages in more than one piece. With a small piece still \
             unacknowledged, Nagle's algorithm holds the next small one back until an ACK \
             comes, and {why_late}.{}",
            facts.example_text()
        ),
        "",
    );
    found.fix = format!(
        "Set TCP_NODELAY on the {sender}'s socket, or write each message in one call; or \
         {or_else}."
    );
    found.figures.insert("stall_ms", round(typical));
    found.figures.insert("stalls", facts.stretches() as f64);
    found
}

pub(super) fn delayed_ack(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let typical = facts.typical_wait_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "The {sender} waited {}, {} each, for the {receiver}'s delayed ACK of its last \
             segment",
            count(facts.stretches(), "time"),
            duration(typical)
        ),
        format!(
            "Each time, the {sender} had sent all it had and waited for it to be acknowledged \
             before going on. The {receiver} acknowledges every second full segment at once but \
             held the ACK of a lone last segment (a write ending in an odd or short segment) \
             until its delayed-ACK timer fired, and only then did the {sender} send again.{}",
            facts.example_text()
        ),
        "",
    );
    found.fix = format!(
        "Have the {receiver} acknowledge at once (TCP_QUICKACK on Linux, TcpAckFrequency=1 on \
         Windows); or let the {sender} keep writing without waiting for each write to be \
         acknowledged, in larger pieces."
    );
    found.figures.insert("stall_ms", round(typical));
    found.figures.insert("stalls", facts.stretches() as f64);
    found
}

pub(super) fn receive_window(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let window = facts.receiver_data().map_or(0, |d| d.window.max);
    let scaling_off = facts.example.is_some_and(|c| {
        [c.handshake.client_options, c.handshake.server_options]
            .iter()
            .flatten()
            .any(|options| options.window_scale.is_none())
    });
    let rtt = facts.round_trip_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "The {sender} waited {} for the {receiver}'s {} receive window to open: at most a \
             window per round trip ({})",
            duration(facts.total.cost_ms),
            bytes(window),
            a_round_trip(rtt)
        ),
        format!(
            "The {sender} repeatedly had as much in flight as the {receiver} advertised and \
             could send more only when an ACK moved the window: the receive window, not the \
             path, set the pace (at most window / round trip).{}{}",
            if scaling_off {
                " Window scaling is off: a SYN lacked the window-scale option, so the window \
                 cannot exceed 64 kB."
            } else {
                ""
            },
            facts.example_text()
        ),
        "",
    );
    found.fix = format!(
        "Give the {receiver} a receive buffer of at least the bandwidth-delay product (the \
         link's rate times the round trip, {}), and keep window scaling on at both ends and \
         in every middlebox.",
        a_round_trip(rtt)
    );
    found.figures.insert("window_bytes", window as f64);
    found.figures.insert("rtt_ms", round(rtt));
    found.figures.insert(
        "window_per_rtt_bytes_per_s",
        round(window as f64 / (rtt / 1e3).max(1e-6)),
    );
    found
}

pub(super) fn zero_window(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let advertisements = facts.receiver_data().map_or(0, |d| d.zero_windows);
    let probes = facts.sender_data().map_or(0, |d| d.zero_window_probes);
    let probing = match probes {
        0 => String::new(),
        _ => format!(", probing the window {} meanwhile", count(probes, "time")),
    };
    let shut_by = match advertisements {
        0 => "a window too small for a segment",
        _ => "a zero window",
    };
    let mut found = with_text(
        facts.kind,
        format!(
            "The {receiver} stopped reading: the {sender} stood still {} in all behind {shut_by}",
            duration(facts.total.cost_ms)
        ),
        format!(
            "The {receiver}'s receive buffer filled because its application did not read fast \
             enough; it advertised {} and the {sender} could send again only once a window \
             update came{probing}.{}",
            match advertisements {
                0 => "a window too small for a segment".to_string(),
                n => format!(
                    "a zero window ({n} times on the example connection), or one too small \
                     for a segment,"
                ),
            },
            facts.example_text()
        ),
        "",
    );
    found.fix = format!(
        "Find what the {receiver}'s application does between reads (disk, CPU, locks) and read \
         sooner; a larger receive buffer only postpones the stop."
    );
    found.wireshark_filter = facts.filter("tcp.analysis.zero_window");
    found
}

pub(super) fn send_buffer(facts: &Facts) -> Finding {
    let (sender, _) = facts.sender();
    let in_flight = facts.sender_data().map_or(0, |d| d.max_bytes_in_flight);
    let window = facts.receiver_data().map_or(0, |d| d.window.max);
    let mut found = with_text(
        facts.kind,
        format!(
            "The {sender} sent at most {} before waiting for all of it to be acknowledged, {}, \
             though the window allowed {}",
            bytes(in_flight),
            count(facts.stretches(), "time"),
            bytes(window)
        ),
        format!(
            "Each time, the {sender} stopped with everything sent acknowledged-or-waiting and \
             went on only once the ACK of all of it came back: a round trip per burst. The \
             receiver's window was far from full and nothing was lost, so the {sender} itself \
             held back: its send buffer is too small for the path, or its application writes \
             once and waits for the write to be acknowledged.{}",
            facts.example_text()
        ),
        "",
    );
    found.fix = format!(
        "Raise the {sender}'s send buffer (SO_SNDBUF, net.ipv4.tcp_wmem) to the bandwidth-delay \
         product, and let the application keep several writes in flight instead of waiting for \
         each."
    );
    found
        .figures
        .insert("in_flight_max_bytes", in_flight as f64);
    found.figures.insert("window_bytes", window as f64);
    found
}

pub(super) fn slow_start(facts: &Facts) -> Finding {
    let (sender, _) = facts.sender();
    with_text(
        facts.kind,
        format!(
            "Transfers spent {} growing the {sender}'s congestion window (slow start), a round \
             trip at a time",
            duration(facts.total.cost_ms)
        ),
        format!(
            "The {sender} had more to send and the receiver's window was open, but its \
             congestion window let only a little go per round trip, growing as ACKs came; no \
             queue built and nothing was lost, so the transfers were too short to reach the \
             path's rate.{}",
            facts.example_text()
        ),
        "Keep connections open and reuse them (the window stays open), raise the initial \
         congestion window (ip route ... initcwnd 10 or more), and disable slow start after \
         idle (net.ipv4.tcp_slow_start_after_idle=0).",
    )
}
