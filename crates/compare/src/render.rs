//! The comparisons as text for a terminal.

use std::fmt;

use diagnose::{units, FindingKind};
use transactions::Durations;

use crate::diff::{Change, Diff, FindingChange, FoundOnce, PartChange, Run, TypeChange};
use crate::points::{Comparison, Point, Way};
use crate::proxy::{Added, Cause, Place, Proxy, Resegmented, SnatExhaustion};

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_point(f, "A", &self.a)?;
        write_point(f, "B", &self.b)?;
        writeln!(
            f,
            "{} matched in {} seen at both points{}",
            counted(self.packets_matched, "packet"),
            counted(self.connections_in_both, "connection"),
            match self.connections_rewritten {
                0 => String::new(),
                n => format!(" ({n} rewritten between them: NAT or sequence randomisation)"),
            }
        )?;
        if self.packets_matched == 0 {
            return match &self.proxy {
                Some(proxy) => write!(f, "{proxy}"),
                None => writeln!(f, "The two captures hold no packet in common."),
            };
        }
        writeln!(
            f,
            "clock offset (B minus A): {}",
            units::duration_change(self.clock_offset_ms)
        )?;
        if self.same_segment {
            writeln!(
                f,
                "A and B saw the same packets at the same time with the same TTLs: \
                 they were captured on one segment, not at two points of the path."
            )?;
        } else {
            writeln!(
                f,
                "A is nearer {}; B is nearer {}",
                hosts(&self.nearer_a),
                hosts(&self.nearer_b)
            )?;
        }
        write_way(f, "A to B", &self.a_to_b, ("A", "B"))?;
        write_way(f, "B to A", &self.b_to_a, ("B", "A"))?;
        writeln!(f, "\nIn short:")?;
        let sentences: Vec<String> = [(&self.a_to_b, ("A", "B")), (&self.b_to_a, ("B", "A"))]
            .into_iter()
            .flat_map(|(way, points)| where_packets_went_missing(way, points))
            .collect();
        if sentences.is_empty() {
            writeln!(f, "  no packet was lost or missed between the points")?;
        }
        for sentence in sentences {
            writeln!(f, "  {sentence}")?;
        }
        Ok(())
    }
}

/// One sentence for each place where packets going from `from` to `to` were lost or missed.
fn where_packets_went_missing(way: &Way, (from, to): (&str, &str)) -> Vec<String> {
    let losses = &way.losses;
    let segments = |count: u64| counted(count as usize, "segment");
    let packets = |count: u64| counted(count as usize, "packet");
    let mut sentences = Vec::new();
    if losses.before_upstream > 0 {
        sentences.push(format!(
            "{} on their way from {from} to {to} were lost before {from} \
             (between the sender and {from}): neither point saw their first copy",
            segments(losses.before_upstream)
        ));
    }
    if losses.between_points > 0 {
        sentences.push(format!(
            "{} on their way from {from} to {to} were lost between {from} and {to}",
            segments(losses.between_points)
        ));
    }
    if losses.after_downstream > 0 {
        sentences.push(format!(
            "{} on their way from {from} to {to} were lost after {to} \
             (between {to} and the receiver), or resent needlessly",
            segments(losses.after_downstream)
        ));
    }
    if losses.missed_by_downstream_capture > 0 {
        sentences.push(format!(
            "{to}'s capture missed {} the receiver acknowledged: \
             the capture dropped them, not the network",
            packets(losses.missed_by_downstream_capture)
        ));
    }
    if losses.missed_by_upstream_capture > 0 {
        sentences.push(format!(
            "{from}'s capture missed {} that passed it on their way to {to}",
            packets(losses.missed_by_upstream_capture)
        ));
    }
    sentences
}

fn write_point(f: &mut fmt::Formatter<'_>, name: &str, point: &Point) -> fmt::Result {
    writeln!(
        f,
        "{name}: {} ({}, {}, {})",
        point.path,
        counted(point.frames as usize, "frame"),
        counted(point.tcp_packets, "TCP packet"),
        counted(point.connections, "connection")
    )
}

fn write_way(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    way: &Way,
    (from, to): (&str, &str),
) -> fmt::Result {
    writeln!(
        f,
        "\n{title}: {} matched",
        counted(way.packets_matched, "packet")
    )?;
    if let Some(delay) = &way.delay {
        writeln!(
            f,
            "  one-way delay: min {}, p50 {}, p90 {}, max {}; variation (p90 - p10) {}",
            units::duration(delay.min_ms),
            units::duration(delay.p50_ms),
            units::duration(delay.p90_ms),
            units::duration(delay.max_ms),
            units::duration(delay.variation_ms)
        )?;
    }
    if let Some(hops) = way.hops {
        writeln!(f, "  routers between the points (TTL drop): {hops}")?;
    }
    let losses = &way.losses;
    writeln!(
        f,
        "  segments lost: {} before {from}, {} between {from} and {to}, {} after {to}",
        losses.before_upstream, losses.between_points, losses.after_downstream
    )?;
    writeln!(
        f,
        "  missed by the capture: {} at {from}, {} at {to} (the receiver acknowledged them); \
         {} seen at {from} only, fate unknown",
        losses.missed_by_upstream_capture, losses.missed_by_downstream_capture, losses.unexplained
    )
}

fn hosts(hosts: &[std::net::IpAddr]) -> String {
    if hosts.is_empty() {
        return "no host in particular".into();
    }
    let shown: Vec<String> = hosts.iter().take(3).map(ToString::to_string).collect();
    let more = hosts.len().saturating_sub(3);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, run) in [("before", &self.before), ("after", &self.after)] {
            writeln!(
                f,
                "{name}: {} ({}, {}, {}, {})",
                run.path,
                counted(run.connections, "connection"),
                counted(run.transactions, "transaction"),
                counted(run.retransmissions as usize, "retransmission"),
                units::rate(run.throughput_bytes_per_s)
            )?;
        }
        writeln!(
            f,
            "\nTime waited per transaction (the client's own pace left out):"
        )?;
        for (name, run) in [("before", &self.before), ("after", &self.after)] {
            write_waited(f, name, run)?;
        }
        for part in &self.waited {
            write_part_change(f, part)?;
        }
        writeln!(f, "\nFindings (cost per transaction):")?;
        if self.findings.is_empty() {
            writeln!(f, "  none in either run")?;
        }
        for finding in &self.findings {
            write_finding_change(f, finding)?;
        }
        writeln!(f, "\nResponse time by transaction type (p50 / p90, ms):")?;
        for change in &self.transaction_types {
            write_type_change(f, change)?;
        }
        Ok(())
    }
}

fn write_waited(f: &mut fmt::Formatter<'_>, name: &str, run: &Run) -> fmt::Result {
    let Some(waited) = run.waited_per_transaction_ms else {
        return writeln!(f, "  {name}: no transaction");
    };
    let retransmissions = run.retransmissions_per_transaction.unwrap_or(0.0);
    writeln!(
        f,
        "  {name}: {} ({} in all; the client's own pace {} left out), {retransmissions:.2} retransmissions",
        units::duration(waited),
        units::duration(run.waited_ms),
        units::duration(run.client_pace_ms)
    )
}

fn write_part_change(f: &mut fmt::Formatter<'_>, part: &PartChange) -> fmt::Result {
    let (before, after) = (part.before_ms.unwrap_or(0.0), part.after_ms.unwrap_or(0.0));
    writeln!(
        f,
        "    {:<24} {} → {} ({})",
        part.part,
        units::duration(before),
        units::duration(after),
        units::duration_change(after - before)
    )
}

fn write_finding_change(f: &mut fmt::Formatter<'_>, finding: &FindingChange) -> fmt::Result {
    let cost = |found: &FoundOnce| units::duration(found.cost_per_transaction_ms.unwrap_or(0.0));
    match (finding.change, &finding.before, &finding.after) {
        (Change::Gone, Some(before), _) => {
            writeln!(f, "  gone: {} (cost {} before)", before.title, cost(before))
        }
        (Change::New, _, Some(after)) => {
            writeln!(f, "  new: {} (cost {})", after.title, cost(after))
        }
        (Change::WithTheWork, found, other) => {
            let (run, found) = match (found, other) {
                (Some(before), _) => ("before", before),
                (_, Some(after)) => ("after", after),
                _ => return Ok(()),
            };
            writeln!(
                f,
                "  {run} only, at the same time per transaction in both: {} (cost {})",
                found.title,
                cost(found)
            )
        }
        (Change::Still, Some(before), Some(after)) => {
            let per_transaction = |found: &FoundOnce| found.cost_per_transaction_ms.unwrap_or(0.0);
            writeln!(
                f,
                "  still: {}: cost {} → {} ({})",
                finding.kind,
                cost(before),
                cost(after),
                units::duration_change(per_transaction(after) - per_transaction(before))
            )
        }
        _ => Ok(()),
    }
}

fn write_type_change(f: &mut fmt::Formatter<'_>, change: &TypeChange) -> fmt::Result {
    let side = |durations: &Option<Durations>| match durations {
        Some(d) => format!("{:>5} × {:>9.2} / {:>9.2}", d.count, d.p50_ms, d.p90_ms),
        None => format!("{:>29}", "—"),
    };
    let moved = match (change.p50_change_ms, change.p90_change_ms) {
        (Some(p50), Some(p90)) => format!("p50 {p50:+.2}, p90 {p90:+.2}"),
        _ => String::new(),
    };
    writeln!(
        f,
        "  {:<40} {}  →  {}   {moved}",
        change.transaction_type,
        side(&change.before),
        side(&change.after)
    )
}

impl fmt::Display for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "No packet is in both: a proxy between them terminates TCP.\n\
             front (client side): {}\nback (server side): {}",
            self.front, self.back
        )?;
        let mut named = match self.transactions_named_alike {
            0 => String::new(),
            n => format!(", {n} with the same request line or server name"),
        };
        if self.transactions_forwarded_for_client > 0 {
            named += &format!(
                ", {} naming the front connection's client in X-Forwarded-For",
                self.transactions_forwarded_for_client
            );
        }
        if self.back_connections_pooled == 0 {
            writeln!(
                f,
                "{} of {} front connections paired with their back connection ({} on the back \
                 side): {} paired{named}",
                self.connections_paired,
                self.front_connections,
                self.back_connections,
                counted(self.transactions_paired, "exchange"),
            )?;
        } else {
            writeln!(
                f,
                "{} of {} front connections paired: {} paired{named}, carried over {} ({} on the \
                 back side), {} of them pooled, carrying the exchanges of several front \
                 connections",
                self.connections_paired,
                self.front_connections,
                counted(self.transactions_paired, "exchange"),
                counted(self.back_connections_used, "back connection"),
                self.back_connections,
                self.back_connections_pooled,
            )?;
        }
        if self.front_without_back > 0 {
            writeln!(
                f,
                "{} asked something and had no back connection",
                counted(self.front_without_back, "front connection")
            )?;
        }
        writeln!(f, "\nTime the proxy added (ms):")?;
        write_added(
            f,
            "request in at the front → out at the back",
            &self.request_added,
        )?;
        write_added(
            f,
            "response in at the back → out at the front",
            &self.response_added,
        )?;
        writeln!(f, "\nWhy:")?;
        let resegmented = resegmentation_sentences(&self.resegmented);
        if self.causes.is_empty() && resegmented.is_empty() && self.snat.is_none() {
            writeln!(f, "  nothing the proxy did stands out")?;
        }
        for sentence in self.causes.iter().map(cause_sentence).chain(resegmented) {
            writeln!(f, "  {sentence}")?;
        }
        if let Some(snat) = &self.snat {
            write_snat(f, snat)?;
        }
        Ok(())
    }
}

fn write_added(f: &mut fmt::Formatter<'_>, way: &str, added: &Option<Added>) -> fmt::Result {
    match added {
        Some(a) => writeln!(
            f,
            "  {way:<45} p50 {:>8.3}, p90 {:>8.3}, max {:>8.3}, total {:>9.1} over {}",
            a.p50_ms,
            a.p90_ms,
            a.max_ms,
            a.total_ms,
            counted(a.transactions, "exchange")
        ),
        None => writeln!(f, "  {way:<45} —"),
    }
}

fn cause_sentence(cause: &Cause) -> String {
    let exchanges = counted(cause.transactions, "exchange");
    let connections = counted(cause.transactions, "connection");
    let cost = units::duration(cause.cost_ms);
    let (side, end, message) = match cause.kind.place {
        Place::ProxyClientSide | Place::Client => ("client", "client", "response"),
        Place::ProxyServerSide | Place::Server => ("server", "server", "request"),
    };
    let at_proxy = matches!(
        cause.kind.place,
        Place::ProxyClientSide | Place::ProxyServerSide
    );
    match (cause.kind.kind, at_proxy) {
        (FindingKind::NagleDelayedAck, _) => format!(
            "Nagle at the proxy toward the {end}: in {exchanges} the proxy held a small \
             {message} segment until the {end} acknowledged its previous small segment \
             ({cost} added in all; TCP_NODELAY on the proxy's {side} side removes it)"
        ),
        (FindingKind::PoolQueueing, _) => format!(
            "waiting for a pooled connection: in {exchanges} the request was in at the proxy \
             while the back connection that carried it was busy with another exchange, and left \
             only once that exchange's response came ({cost} added in all; more \
             connections in the proxy's pool, or fewer requests at once, remove it)"
        ),
        (FindingKind::ZeroWindow, true) => format!(
            "the proxy shut its own window toward the {end} on {connections} ({cost} shut): \
             it took in no more than it could pass on"
        ),
        (FindingKind::ZeroWindow, false) => {
            format!("the {end} shut its window on the proxy on {connections} ({cost} shut)")
        }
        (FindingKind::SlowStart, _) => {
            slow_start_after_idle(cause, end, message, &format!("the {end}'s window"))
        }
        (FindingKind::ReceiveWindowLimited, true) => {
            let (sender, fix) = match cause.kind.place {
                Place::ProxyClientSide => ("the client", "client"),
                _ => ("the server", "server"),
            };
            small_window(
                cause,
                &format!("the proxy's small receive window toward the {fix}"),
                sender,
                "the proxy",
                &format!(
                    "a larger receive buffer on the proxy's {fix} side (SO_RCVBUF, net.ipv4.tcp_rmem)"
                ),
            )
        }
        (FindingKind::ReceiveWindowLimited, false) => small_window(
            cause,
            &format!("the {end}'s small receive window"),
            "the proxy",
            &format!("the {end}"),
            &format!("a larger receive buffer on the {end}"),
        ),
        (kind, _) => format!("{kind} at the {end}'s side of the proxy: in {exchanges} ({cost})"),
    }
}

/// What the proxy did to the segmentation of the messages it passed on.
fn resegmentation_sentences(resegmented: &Resegmented) -> Vec<String> {
    let mut sentences = Vec::new();
    if resegmented.coalesced > 0 {
        sentences.push(format!(
            "the proxy coalesced writes: in {} a message left it in fewer segments \
             than it came in",
            counted(resegmented.coalesced, "exchange")
        ));
    }
    if resegmented.split > 0 {
        sentences.push(format!(
            "the proxy split writes: in {} a message left it in more segments \
             than it came in",
            counted(resegmented.split, "exchange")
        ));
    }
    sentences
}

/// A duration among a cause's figures, for a sentence; "?" when not measured.
fn figure_ms(cause: &Cause, name: &str) -> String {
    cause
        .figures
        .get(name)
        .map_or_else(|| "?".into(), |&ms| units::duration(ms))
}

/// A figure of a cause, rounded for a sentence; "?" when not measured.
fn figure(cause: &Cause, name: &str) -> String {
    cause
        .figures
        .get(name)
        .map_or_else(|| "?".into(), |value| format!("{value:.0}"))
}

fn slow_start_after_idle(cause: &Cause, toward: &str, message: &str, window: &str) -> String {
    format!(
        "slow start after idle at the proxy toward the {toward}: in {} the proxy, idle {} \
         (median) before the {message}, sent it from a {}-byte flight where its window had \
         reached {} bytes before, growing it a round trip ({}) at a time with the {message} already \
         in hand and {window} open ({} added in all; \
         net.ipv4.tcp_slow_start_after_idle=0 on the proxy's host removes it)",
        counted(cause.transactions, "exchange"),
        figure_ms(cause, "idle_ms"),
        figure(cause, "restart_flight_bytes"),
        figure(cause, "window_before_idle_bytes"),
        figure_ms(cause, "rtt_ms"),
        units::duration(cause.cost_ms),
    )
}

fn small_window(cause: &Cause, what: &str, sender: &str, receiver: &str, fix: &str) -> String {
    format!(
        "{what}: in {} {sender} filled the {} bytes {receiver} advertised (median) and waited \
         for each ACK to open it again, a round trip of {} ({} waiting in all; {fix} \
         removes it)",
        counted(cause.transactions, "exchange"),
        figure(cause, "window_bytes"),
        figure_ms(cause, "rtt_ms"),
        units::duration(cause.cost_ms),
    )
}

fn write_snat(f: &mut fmt::Formatter<'_>, snat: &SnatExhaustion) -> fmt::Result {
    writeln!(
        f,
        "  source NAT out of ports on the back side: {} back connections to {} came from {} \
         on {}",
        snat.back_connections,
        snat.server,
        snat.source,
        counted(snat.source_ports, "port")
    )?;
    if let Some(after) = snat.reuse_after_ms_p50 {
        writeln!(
            f,
            "    {} reused a source port {} (median) after its previous connection \
             closed, inside that connection's TIME_WAIT",
            counted(snat.reused_in_time_wait, "connection"),
            units::duration(after)
        )?;
    }
    if let Some(wait) = snat.connect_wait_ms_p50 {
        writeln!(
            f,
            "    {} came in with every port held: the back connection opened {} \
             (median) later, once a SYN retry found a port free",
            counted(snat.connects_waited, "front connection"),
            units::duration(wait)
        )?;
    }
    if snat.connects_failed > 0 {
        writeln!(
            f,
            "    {} asked something and never got a back connection: no SYN retry found a port",
            counted(snat.connects_failed, "front connection")
        )?;
    }
    Ok(())
}

/// "1 connection", "3 connections".
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
