//! One finding per cause, from what the ledger charged to it: its title,
//! the mechanism that proves it, its evidence on the connection where it
//! cost most, the fix, and what removing it would buy.

use std::collections::BTreeMap;

use tcp::stack::{DELAYED_ACK_MAX_NS, DELAYED_ACK_MIN_NS};
use tcp::{ConnectionSummary, Direction, DirectionSummary, RttStats};
use transactions::{Part, Stretch};

use crate::cause::Cause;
use crate::charges::{self, distinct, queue_samples, CauseTotal, Context};
use crate::{detectors, patterns, Finding, FindingKind, Inputs};

/// The finding for `cause`, or None where another detector describes it.
pub fn finding(
    cause: Cause,
    total: &CauseTotal,
    inputs: &Inputs,
    context: &Context,
    totals: &BTreeMap<Cause, CauseTotal>,
) -> Option<Finding> {
    let facts = Facts::of(cause, total, inputs);
    let mut found = match cause {
        Cause::SetupFailure | Cause::Transfer => return None,
        Cause::PoolQueueing => context.pool.as_ref()?.finding.clone(),
        Cause::ServerSaturation => context.saturation.as_ref()?.finding.clone(),
        Cause::MtuBlackHole => detectors::black_hole_finding(inputs)?,
        Cause::AcceptQueue => accept_queue(&facts),
        Cause::ClientDelay => client_delay(&facts, inputs),
        Cause::ClientThink => client_think(&facts),
        Cause::ApplicationLimited => application_limited(&facts),
        Cause::SplitResponse => split_response(&facts),
        Cause::Chattiness => chattiness(&facts),
        Cause::PathLatency => path_latency(&facts),
        Cause::BottleneckLink => bottleneck_link(&facts, inputs, context),
        Cause::SlowStart => slow_start(&facts),
        Cause::ServerThink => server_think(&facts, totals),
        Cause::PeriodicStalls => periodic_stalls(&facts, inputs),
        Cause::NagleDelayedAck => nagle(&facts),
        Cause::DelayedAck => delayed_ack(&facts),
        Cause::ReceiveWindow => receive_window(&facts),
        Cause::ZeroWindow => zero_window(&facts),
        Cause::SendBuffer => send_buffer(&facts),
        Cause::PacketLoss => packet_loss(&facts, inputs),
        Cause::PeriodicLoss => periodic_loss(&facts, inputs),
        Cause::TailLoss => tail_loss(&facts),
        Cause::DeadPeer => dead_peer(&facts),
    };
    found.cost_ms = total.cost_ms;
    found.transactions = total.transactions();
    found.connections = total.per_connection.len() as u64;
    if found.example_connection.is_none() {
        found.example_connection = facts.example.map(|c| c.id);
    }
    if found.frames.is_empty() {
        found.frames = facts.frames();
    }
    if found.wireshark_filter.is_empty() {
        found.wireshark_filter = facts.filter("");
    }
    if found.what_if.is_empty() {
        found.what_if = facts.what_if();
    }
    found
        .figures
        .insert("per_transaction_ms", round(total.per_transaction_ms()));
    Some(found)
}

/// What the ledger says of one cause, gathered for its text.
struct Facts<'a> {
    kind: FindingKind,
    total: &'a CauseTotal,
    example: Option<&'a ConnectionSummary>,
    /// The longest stretch charged to the cause on the example connection.
    stretch: Option<Stretch>,
    /// Separate stretches charged to the cause's parts, over all connections.
    stretches: u64,
}

impl<'a> Facts<'a> {
    fn of(cause: Cause, total: &'a CauseTotal, inputs: &'a Inputs) -> Self {
        let example_id = total.example_connection();
        let example = example_id.and_then(|id| inputs.connection(id));
        let stretch = example_id
            .and_then(|id| inputs.ledger(id))
            .and_then(|ledger| {
                cause
                    .evidence_parts()
                    .iter()
                    .find_map(|&part| ledger.longest(part))
            });
        let stretches = total
            .per_connection
            .keys()
            .filter_map(|&id| inputs.ledger(id))
            .map(|ledger| {
                cause
                    .evidence_parts()
                    .iter()
                    .map(|&part| ledger.stretch_count(part))
                    .sum::<u64>()
            })
            .sum();
        Facts {
            kind: cause.kind(),
            total,
            example,
            stretch,
            stretches,
        }
    }

    fn frames(&self) -> Vec<u64> {
        self.stretch
            .map_or_else(Vec::new, |stretch| stretch.frames())
    }

    /// The example connection, its evidence frames, and `more` (a clause in
    /// Wireshark's display-filter language) when given.
    fn filter(&self, more: &str) -> String {
        let Some(c) = self.example else {
            return more.to_string();
        };
        let frames = self.frames();
        let mut filter = format!("tcp.stream == {}", c.id);
        if !frames.is_empty() {
            let list: Vec<String> = frames.iter().map(u64::to_string).collect();
            filter += &format!(" && frame.number in {{{}}}", list.join(" "));
        } else if !more.is_empty() {
            filter += &format!(" && ({more})");
        }
        filter
    }

    /// Which side sent the data that waited (from the example's evidence).
    fn sender(&self) -> (&'static str, &'static str) {
        match self.stretch.map(|s| s.ended_by) {
            Some(Direction::ServerToClient) => ("server", "client"),
            _ => ("client", "server"),
        }
    }

    /// The sender's direction summary on the example connection.
    fn sender_data(&self) -> Option<&'a DirectionSummary> {
        let c = self.example?;
        Some(match self.stretch.map(|s| s.ended_by) {
            Some(Direction::ServerToClient) => &c.server_to_client,
            _ => &c.client_to_server,
        })
    }

    fn receiver_data(&self) -> Option<&'a DirectionSummary> {
        let c = self.example?;
        Some(match self.stretch.map(|s| s.ended_by) {
            Some(Direction::ServerToClient) => &c.client_to_server,
            _ => &c.server_to_client,
        })
    }

    /// Mean time of one stretch of the cause.
    fn typical_wait_ms(&self) -> f64 {
        self.total.cost_ms / self.stretches.max(1) as f64
    }

    fn round_trip_ms(&self) -> f64 {
        self.example.map_or(0.0, |c| c.rtt().round_trip_ms())
    }

    fn what_if(&self) -> String {
        let n = self.total.transactions().max(1) as f64;
        let with = self.total.touched_ms / n;
        let without = (self.total.touched_ms - self.total.cost_ms).max(0.0) / n;
        format!(
            "Without it, the {} it touches would take {} on average instead of {}, {} sooner in all.",
            count(self.total.transactions(), "transaction"),
            duration(without),
            duration(with),
            duration(self.total.cost_ms)
        )
    }

    fn example_text(&self) -> String {
        match (self.example, self.stretch) {
            (Some(c), Some(stretch)) => format!(
                " On connection {} the longest such wait ran {} from frame {} to frame {}{}.",
                c.id,
                duration(stretch.ms),
                stretch.from_frame,
                stretch.to_frame,
                stretch.ack_frame.map_or(String::new(), |ack| format!(
                    ", released by the ACK in frame {ack}"
                ))
            ),
            _ => String::new(),
        }
    }
}

fn with_text(kind: FindingKind, title: String, explanation: String, fix: &str) -> Finding {
    Finding {
        explanation,
        fix: fix.to_string(),
        ..Finding::new(kind, &title, 0.0)
    }
}

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

fn nagle(facts: &Facts) -> Finding {
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
            count(facts.stretches, "wait"),
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
    found.figures.insert("stalls", facts.stretches as f64);
    found
}

fn delayed_ack(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let typical = facts.typical_wait_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "The {sender} waited {}, {} each, for the {receiver}'s delayed ACK of its last \
             segment",
            count(facts.stretches, "time"),
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
    found.figures.insert("stalls", facts.stretches as f64);
    found
}

fn receive_window(facts: &Facts) -> Finding {
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
             window per {} round trip",
            duration(facts.total.cost_ms),
            bytes(window),
            duration(rtt)
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
         link's rate times {}), and keep window scaling on at both ends and in every middlebox.",
        duration(rtt)
    );
    found.figures.insert("window_bytes", window as f64);
    found.figures.insert("rtt_ms", round(rtt));
    found.figures.insert(
        "window_per_rtt_bytes_per_s",
        round(window as f64 / (rtt / 1e3).max(1e-6)),
    );
    found
}

fn zero_window(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let advertisements = facts.receiver_data().map_or(0, |d| d.zero_windows);
    let mut found = with_text(
        facts.kind,
        format!(
            "The {receiver} stopped reading: the {sender} stood still {} in all before a zero \
             window opened",
            duration(facts.total.cost_ms)
        ),
        format!(
            "The {receiver}'s receive buffer filled because its application did not read fast \
             enough; it advertised a zero window ({advertisements} times on the example \
             connection) and the {sender} could send again only once a window update came.{}",
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

fn send_buffer(facts: &Facts) -> Finding {
    let (sender, _) = facts.sender();
    let in_flight = facts.sender_data().map_or(0, |d| d.max_bytes_in_flight);
    let window = facts.receiver_data().map_or(0, |d| d.window.max);
    let mut found = with_text(
        facts.kind,
        format!(
            "The {sender} sent at most {} before waiting for all of it to be acknowledged, {}, \
             though the window allowed {}",
            bytes(in_flight),
            count(facts.stretches, "time"),
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

fn application_limited(facts: &Facts) -> Finding {
    let (sender, _) = facts.sender();
    let in_flight = facts.sender_data().map_or(0, |d| d.max_bytes_in_flight);
    with_text(
        facts.kind,
        format!(
            "The {sender}'s application paced its sending: {} with nothing left to send and \
             the window open, {} in all",
            count(facts.stretches, "pause"),
            duration(facts.total.cost_ms)
        ),
        format!(
            "Between writes the {sender} had nothing outstanding (at most {} in flight) and the \
             receiver's window was open: neither TCP nor the path held the data back; the \
             application did not hand it over sooner.{}",
            bytes(in_flight),
            facts.example_text()
        ),
        "Find what the sending application waits for between writes (a timer, a rate limit, \
         a slow source, a disk) and feed the socket faster or in larger writes.",
    )
}

fn split_response(facts: &Facts) -> Finding {
    let typical = facts.typical_wait_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "{} written in pieces with {} of {} each between them",
            count(facts.total.transactions(), "response"),
            count(facts.stretches, "pause"),
            duration(typical)
        ),
        format!(
            "The server sent part of each response, then nothing, with the window open and \
             nothing outstanding, then the next part: its application wrote the response in \
             pieces with pauses between them, and the client waited for the last.{}",
            facts.example_text()
        ),
        "Build each response in full and write it in one call (or cork the socket with \
         TCP_CORK until it is complete); find what the server waits for between the pieces.",
    );
    found.figures.insert("pause_ms", round(typical));
    found.figures.insert("pauses", facts.stretches as f64);
    found
}

fn client_delay(facts: &Facts, inputs: &Inputs) -> Finding {
    let between: f64 = inputs
        .transactions
        .iter()
        .map(|t| t.ledger.get(Part::ClientThink))
        .sum();
    let connections = facts.total.per_connection.len().max(1) as u64;
    let thinking = if between > 0.0 {
        format!(" Besides, it thought {} between turns.", duration(between))
    } else {
        String::new()
    };
    with_text(
        facts.kind,
        format!(
            "The client opened {} and waited {} before its first request{}",
            count(connections, "connection"),
            duration(facts.total.cost_ms / connections as f64),
            if connections > 1 {
                " on each, on average"
            } else {
                ""
            }
        ),
        format!(
            "The handshake was done and the server was ready, yet the client sent nothing: \
             the connection was opened before the request was, and the time went to the \
             client's own application, not to the network or the server.{thinking}{}",
            facts.example_text()
        ),
        "Look at what the client does between connecting and asking (name lookups, \
         authentication, building the request, waiting on another service); open the \
         connection only once the request is ready, or keep one open and reuse it.",
    )
}

fn client_think(facts: &Facts) -> Finding {
    let pauses = facts.stretches.max(1);
    with_text(
        facts.kind,
        format!(
            "The client paused {} between turns ({}, {} each on average): its own pace",
            duration(facts.total.cost_ms),
            count(pauses, "pause"),
            duration(facts.total.cost_ms / pauses as f64)
        ),
        format!(
            "Each of these requests came well after the answer before it, with nothing \
             outstanding: the client's application (or its user) took the time, so it is not \
             counted as time lost to the network or the server.{}",
            facts.example_text()
        ),
        "Nothing to change in the network or the server. If the client should not pause, \
         look at what it does between an answer and its next request.",
    )
}

fn chattiness(facts: &Facts) -> Finding {
    let rtt = facts.round_trip_ms();
    let turns = facts.total.transactions();
    let mut found = with_text(
        facts.kind,
        format!(
            "{} in a row, each paying a {} round trip: {} in all",
            count(turns, "request/response turn"),
            duration(rtt),
            duration(facts.total.cost_ms)
        ),
        format!(
            "Each request followed the previous answer at once (the client did not think \
             longer than a round trip), so every turn paid the path's full round trip: the \
             time goes into distance, not into work or bandwidth.{}",
            facts.example_text()
        ),
        "Send fewer, larger requests: batch or pipeline them, fetch in parallel, or move the \
         client closer to the server.",
    );
    found.figures.insert("rtt_ms", round(rtt));
    found.figures.insert("turns", turns as f64);
    found
}

fn path_latency(facts: &Facts) -> Finding {
    let rtt = facts.round_trip_ms();
    let mut found = with_text(
        facts.kind,
        format!(
            "A {} round trip on the path: {} of waiting for packets to cross it",
            duration(rtt),
            duration(facts.total.cost_ms)
        ),
        format!(
            "The handshakes, the requests and their answers each crossed the path at least \
             once at its least delay of {}: distance (or a slow hop) rather than the server or \
             TCP's waits.{}",
            duration(rtt),
            facts.example_text()
        ),
        "Serve from nearer the users (a CDN, a regional server), keep connections open to save \
         handshakes, and cut round trips per page.",
    );
    found.figures.insert("rtt_ms", round(rtt));
    found
}

fn bottleneck_link(facts: &Facts, inputs: &Inputs, context: &Context) -> Finding {
    let (sender, _) = facts.sender();
    let data = facts.sender_data();
    let rtt = facts
        .example
        .zip(data)
        .and_then(|(c, data)| queue_samples(c, data))
        .or(data.map(path_round_trips))
        .unwrap_or_default();
    let path_least = facts
        .example
        .and_then(|c| context.queued_paths.get(&charges::path(c)).copied())
        .unwrap_or(f64::INFINITY);
    let least = rtt.min_ms.unwrap_or(0.0).min(path_least);
    let typical = rtt.median_ms.unwrap_or(0.0);
    let rate = shared_throughput(facts, inputs);
    let mut found = with_text(
        facts.kind,
        format!(
            "A bottleneck link sets the pace{}: round trips rose from {} to {} as a queue \
             built before it",
            rate.map_or(String::new(), |r| format!(" at {}", rate_text(r))),
            duration(least),
            duration(typical)
        ),
        format!(
            "The {sender} kept more in flight than the path carries at once; the excess waited \
             in a queue before the slowest link, so each round trip grew with the bytes in \
             flight (correlation {:.2}) while the rate stayed at what the link allows.{}",
            rtt.in_flight_correlation.unwrap_or(0.0),
            facts.example_text()
        ),
        "The link carries no more: send less (compress, cache), move the transfer to a faster \
         or less loaded path, or schedule it apart from interactive traffic; an AQM (fq_codel) \
         at the bottleneck keeps the queue short for everything else.",
    );
    found.figures.insert("rtt_min_ms", round(least));
    found.figures.insert("rtt_median_ms", round(typical));
    if let (Some(rate), Some(data)) = (rate, data) {
        let on_the_wire = data.wire_bytes as f64 / data.payload_bytes.max(1) as f64;
        found.figures.insert("throughput_bytes_per_s", round(rate));
        found
            .figures
            .insert("link_bytes_per_s", round(rate * on_the_wire));
        found
            .figures
            .insert("in_flight_max_bytes", data.max_bytes_in_flight as f64);
    }
    if let Some(receiver) = facts.receiver_data() {
        found
            .figures
            .insert("window_bytes", receiver.window.max as f64);
    }
    found
}

fn slow_start(facts: &Facts) -> Finding {
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

fn server_think(facts: &Facts, totals: &BTreeMap<Cause, CauseTotal>) -> Finding {
    let typical = facts.total.median_per_transaction_ms();
    let slowest = facts.total.most_per_transaction_ms();
    let answered = facts.total.transactions();
    let carved = [Cause::PeriodicStalls, Cause::ServerSaturation]
        .iter()
        .any(|cause| totals.contains_key(cause));
    let server = facts
        .example
        .map(|c| c.server.to_string())
        .unwrap_or_default();
    let spread = if answered > 1 {
        format!(
            " ({} typically, {} at most)",
            duration(typical),
            duration(slowest)
        )
    } else {
        String::new()
    };
    let mut found = with_text(
        facts.kind,
        format!(
            "The server {server} took {} to answer {}{spread}{}",
            duration(facts.total.cost_ms),
            count(answered, "request"),
            if carved { ", besides its stalls" } else { "" }
        ),
        format!(
            "Between the last byte of each request and the first byte of its answer, less the \
             round trip to the server, nothing was on the wire and no TCP wait was pending: the \
             time was spent inside the server.{}",
            facts.example_text()
        ),
        "Profile the server application and what it calls (databases, back ends); the network \
         and TCP are not what makes these requests slow.",
    );
    found.figures.insert("server_ms", round(typical));
    found
}

fn periodic_stalls(facts: &Facts, inputs: &Inputs) -> Finding {
    let pattern = patterns::stall_pattern(inputs);
    let (length, period, stalls) =
        pattern.map_or((0.0, 0.0, 0), |p| (p.length_ms, p.period_s, p.count));
    let mut found = with_text(
        facts.kind,
        format!(
            "The server stalls about {} every {:.2} s ({} times)",
            duration(length),
            period,
            stalls
        ),
        format!(
            "Most answers come at the usual pace, but these waited far longer with nothing on \
             the wire, at a steady interval: the server stops as a whole, as with garbage \
             collection, a periodic job, log rotation or a flush.{}",
            facts.example_text()
        ),
        "Find what the server runs on that period (GC logs, cron, flushes, checkpoints) and \
         spread it out or take it off the request path.",
    );
    found.figures.insert("stall_ms", round(length));
    found.figures.insert("period_s", round(period));
    found.figures.insert("stalls", stalls as f64);
    found
}

/// Loss figures over all connections: segments resent, packets, and
/// whether the capture saw gaps (loss before it) or segments twice (after it).
struct LossCounts {
    resent: u64,
    packets: u64,
    /// Resends whose originals the capture never saw, and those it had seen.
    upstream: u64,
    downstream: u64,
    handshakes_retried: u64,
}

impl LossCounts {
    /// Where most of the loss happened, for the title.
    fn side(&self) -> &'static str {
        if self.upstream > self.downstream {
            "upstream"
        } else {
            "downstream"
        }
    }

    /// "3 segments resent (0.3% of 1073 packets) and 6 handshakes retried"
    fn resends(&self) -> String {
        let mut text = format!(
            "{} resent ({:.1}% of {} packets)",
            count(self.resent, "segment"),
            100.0 * self.resent as f64 / self.packets.max(1) as f64,
            self.packets
        );
        if self.handshakes_retried > 0 {
            text += &format!(
                " and {} retried",
                count(self.handshakes_retried, "handshake")
            );
        }
        text
    }
}

fn loss_counts(inputs: &Inputs) -> LossCounts {
    let mut counts = LossCounts {
        resent: 0,
        packets: 0,
        upstream: 0,
        downstream: 0,
        handshakes_retried: 0,
    };
    for c in inputs.connections {
        for d in c.directions() {
            counts.resent += d.lost_before_capture + d.lost_after_capture;
            counts.packets += d.packets;
            counts.upstream += d.lost_before_capture;
            counts.downstream += d.lost_after_capture;
        }
        let retried = !c.handshake.syn_retries_ns.is_empty() || c.handshake.syn_ack_retries > 0;
        counts.handshakes_retried += u64::from(retried);
    }
    counts
}

fn location(counts: &LossCounts) -> String {
    let upstream = "upstream of the capture point (the capture saw the gaps before the resends)";
    let downstream = "downstream of the capture point (the capture saw each lost segment twice)";
    match (counts.upstream, counts.downstream) {
        (0, _) => downstream.to_string(),
        (_, 0) => upstream.to_string(),
        (before, after) => {
            format!("on both sides of the capture point: {before} {upstream}, {after} {downstream}")
        }
    }
}

fn packet_loss(facts: &Facts, inputs: &Inputs) -> Finding {
    let counts = loss_counts(inputs);
    let mut found = with_text(
        facts.kind,
        format!(
            "Packet loss: {}, {} waiting for the losses to be recovered, lost {}",
            counts.resends(),
            duration(facts.total.cost_ms),
            counts.side()
        ),
        format!(
            "Segments were lost {}. The time counted is what the senders waited because of \
             it: for duplicate ACKs and the fast retransmission they prompt, for retransmission \
             timers, and with a congestion window the loss had cut.{}",
            location(&counts),
            facts.example_text()
        ),
        "Find the dropping hop: compare captures taken on both sides of it, and look at \
         interface errors and drops and at queue overflows on the path (policers, full \
         buffers, bad links).",
    );
    found
        .figures
        .insert("resent_segments", counts.resent as f64);
    found.wireshark_filter = facts.filter(
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.lost_segment",
    );
    found
}

fn periodic_loss(facts: &Facts, inputs: &Inputs) -> Finding {
    let counts = loss_counts(inputs);
    let bursts = patterns::loss_burst_pattern(inputs.ticks, inputs.transactions);
    let (n, period) = bursts.map_or((0, 0.0), |b| (b.count, b.period_s));
    let mut found = with_text(
        facts.kind,
        format!(
            "Loss in {n} bursts, one every {period:.2} s: {} of waiting for recovery, lost {}",
            duration(facts.total.cost_ms),
            counts.side()
        ),
        format!(
            "The losses come in bursts at a steady period rather than spread out: something on \
             the path drops at that interval (a flapping link, a periodic job on a device, a \
             policer's interval). Segments were lost {}.{}",
            location(&counts),
            facts.example_text()
        ),
        "Find what on the path runs on that period (device logs, route or link flaps, a \
         policer's configuration) and compare captures taken on both sides of each hop.",
    );
    found.figures.insert("period_s", round(period));
    found.figures.insert("bursts", n as f64);
    found
}

fn tail_loss(facts: &Facts) -> Finding {
    let typical = facts.typical_wait_ms();
    with_text(
        facts.kind,
        format!(
            "{} lost their last segment and waited {} each for a retransmission timer",
            count(facts.total.transactions(), "transaction"),
            duration(typical)
        ),
        format!(
            "The last segment of a message was lost. With nothing sent after it, the receiver \
             could not send duplicate ACKs to ask for it, so the sender resent it only when its \
             retransmission timer (a tail-loss probe or a timeout) fired.{}",
            facts.example_text()
        ),
        "Find the dropping hop (compare captures on both sides of it). Senders on recent \
         Linux recover sooner with tail-loss probes and RACK on (net.ipv4.tcp_early_retrans=3, \
         tcp_recovery=1).",
    )
}

fn dead_peer(facts: &Facts) -> Finding {
    let (sender, receiver) = facts.sender();
    let peer = facts
        .example
        .map(|c| match receiver {
            "server" => c.server.to_string(),
            _ => c.client.to_string(),
        })
        .unwrap_or_default();
    let resends = facts.sender_data().map_or(0, |d| d.most_resends);
    with_text(
        facts.kind,
        format!(
            "The {receiver} {peer} stopped answering: the {sender} resent the same segment {resends} \
             times with growing timeouts and it was never acknowledged"
        ),
        format!(
            "Nothing the {sender} sent after a point was acknowledged; it kept resending, each \
             time after twice the wait, until it gave up or the capture ended. This is not loss \
             on a busy path but a peer that is gone (crashed, unplugged, its state lost, or a \
             firewall now dropping its packets).{}",
            facts.example_text()
        ),
        "Check the peer's health and whether a firewall, NAT or load balancer dropped the \
         connection's state (idle timeouts); use application or TCP keepalives to notice sooner.",
    )
}

fn accept_queue(facts: &Facts) -> Finding {
    with_text(
        facts.kind,
        format!(
            "{} completed the handshake, but the server took nothing in for {} in all: its \
             accept queue was full",
            count(facts.total.transactions(), "connection"),
            duration(facts.total.cost_ms)
        ),
        format!(
            "The client's ACK completed the handshake, yet the server sent its SYN-ACK again \
             and acknowledged none of the request, which the client had to resend: the \
             server's listen (accept) queue was full, so the kernel dropped the client's ACK \
             and data until the application accepted connections again.{}",
            facts.example_text()
        ),
        "Have the server accept faster (more acceptor threads, no blocking work before accept), \
         and raise its listen backlog (the application's backlog and net.core.somaxconn).",
    )
}

/// Where the time sits, by kind: a summary that costs nothing beside the causes.
pub fn summary(inputs: &Inputs, totals: &BTreeMap<Cause, CauseTotal>) -> Option<Finding> {
    if inputs.transactions.is_empty() {
        return None;
    }
    let mut by_group: BTreeMap<&'static str, f64> = BTreeMap::new();
    for t in inputs.transactions {
        for (part, ms) in t.ledger.parts() {
            *by_group.entry(part.group()).or_default() += ms;
        }
    }
    if by_group.is_empty() {
        return None;
    }
    let total_ms: f64 = by_group.values().sum::<f64>().max(f64::MIN_POSITIVE);
    let parts: Vec<String> = by_group
        .iter()
        .map(|(group, ms)| {
            format!(
                "{} {} ({:.0}%)",
                group_words(group),
                duration(*ms),
                100.0 * ms / total_ms
            )
        })
        .collect();
    let ranked: Vec<String> = totals
        .iter()
        .filter(|(_, total)| total.cost_ms > 0.0)
        .map(|(cause, total)| format!("{} {}", cause.kind(), duration(total.cost_ms)))
        .collect();
    let mut found = with_text(
        FindingKind::LatencySplit,
        format!(
            "Where the time went: {} over {}: {}",
            duration(total_ms),
            count(inputs.transactions.len() as u64, "transaction"),
            parts.join(", ")
        ),
        format!(
            "Each transaction's time, from the end of the one before it on its connection (or \
             its first SYN) to the last byte of its answer, is charged part by part to what \
             ended each wait. By cause: {}.",
            ranked.join(", ")
        ),
        "See the findings above for the causes worth fixing.",
    );
    found.transactions = inputs.transactions.len() as u64;
    found.connections = distinct(inputs.transactions.iter().map(|t| t.connection));
    for (group, ms) in &by_group {
        found.figures.insert(group_figure(group), round(*ms));
    }
    Some(found)
}

fn group_words(group: &str) -> &'static str {
    match group {
        "setup" => "setup",
        "client" => "client",
        "network" => "network",
        "server" => "server",
        _ => "TCP waits",
    }
}

fn group_figure(group: &str) -> &'static str {
    match group {
        "setup" => "setup_ms",
        "client" => "client_ms",
        "network" => "network_ms",
        "server" => "server_ms",
        _ => "tcp_wait_ms",
    }
}

/// A bulk direction's rate over its busy time, bytes per second.
/// Of a direction's round-trip samples, those that time the whole path
/// from here: data to its ACK seen beside the sender, an ACK to the data it
/// let go seen beside the receiver; the longer, typically.
fn path_round_trips(data: &DirectionSummary) -> RttStats {
    let typical = |samples: &RttStats| samples.median_ms.unwrap_or(0.0);
    if typical(&data.release_lag) > typical(&data.rtt) {
        data.release_lag
    } else {
        data.rtt
    }
}

/// The rate of all the connections a cause touched, together, in the
/// direction of the example's sender: connections sharing a link share its rate.
fn shared_throughput(facts: &Facts, inputs: &Inputs) -> Option<f64> {
    let from_server = facts.stretch.map(|s| s.ended_by) == Some(Direction::ServerToClient);
    let (mut bytes, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
    for c in facts
        .total
        .per_connection
        .keys()
        .filter_map(|&id| inputs.connection(id))
    {
        let data = if from_server {
            &c.server_to_client
        } else {
            &c.client_to_server
        };
        bytes += data.unique_payload_bytes;
        first = first.min(c.first_ns);
        last = last.max(c.last_ns);
    }
    let seconds = (last - first) as f64 / 1e9;
    (bytes > 0 && seconds > 0.0).then(|| bytes as f64 / seconds)
}

fn round(value: f64) -> f64 {
    (value * 1e3).round() / 1e3
}

/// `1 request`, `4 requests`.
pub(crate) fn count(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// A duration in the unit that reads best: `850 µs`, `42.0 ms`, `3.21 s`.
pub(crate) fn duration(ms: f64) -> String {
    if ms >= 10_000.0 {
        format!("{:.1} s", ms / 1e3)
    } else if ms >= 1_000.0 {
        format!("{:.2} s", ms / 1e3)
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.0} µs", ms * 1e3)
    }
}

pub(crate) fn bytes(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1} kB", n as f64 / 1e3)
    } else {
        format!("{n} bytes")
    }
}

fn rate_text(bytes_per_s: f64) -> String {
    format!(
        "{:.2} MB/s ({:.1} Mbit/s)",
        bytes_per_s / 1e6,
        bytes_per_s * 8.0 / 1e6
    )
}
