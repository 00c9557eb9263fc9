//! The report's data as the page reads it: columns of numbers and strings,
//! times in milliseconds from the capture's first instant, large series
//! sampled with the sampling stated.

use std::collections::HashMap;

use diagnose::Finding;
use serde::Serialize;
use tcp::ConnectionSummary;
use timeline::Tick;
use transactions::{Durations, Transaction};

use crate::detail::{ConnectionDetail, Packet};
use crate::Report;

/// Points at most in the transaction chart.
pub const MAX_TRANSACTION_POINTS: usize = 25_000;
/// Points at most in the connection-setup chart.
pub const MAX_SETUP_POINTS: usize = 25_000;
/// Transaction types (names or signatures) shown apart; the rest are pooled.
pub const MAX_TYPES: usize = 40;
/// Transactions per connection in its waterfall.
pub const MAX_WATERFALL: usize = 300;
/// Histogram bins per decade of milliseconds.
const BINS_PER_DECADE: f64 = 5.0;
const OTHER_TYPES: &str = "(other types)";

#[derive(Serialize)]
pub struct Model<'a> {
    meta: Meta,
    findings: &'a [Finding],
    connections: Connections<'a>,
    setups: Setups,
    transactions: Transactions,
    types: Vec<TypeStats>,
    ticks: Ticks,
    details: Vec<Detail>,
}

#[derive(Serialize)]
struct Meta {
    files: Vec<String>,
    version: &'static str,
    frames: u64,
    /// The capture's first instant: milliseconds since the epoch, and its UTC time of day.
    origin_epoch_ms: f64,
    origin_day_ms: f64,
    detail_command: String,
    detail_limits: DetailLimits,
    partial: Option<String>,
}

#[derive(Serialize)]
struct DetailLimits {
    connections: usize,
    ladder_packets: usize,
    points: usize,
}

/// How many of how many points a chart shows.
#[derive(Serialize)]
struct Sampling {
    shown: usize,
    total: usize,
}

/// Milliseconds from `origin_ns`, to the microsecond.
#[derive(Clone, Copy)]
struct Clock {
    origin_ns: i64,
}

impl Clock {
    fn ms(self, at_ns: i64) -> f64 {
        ((at_ns - self.origin_ns) as f64 / 1e3).round() / 1e3
    }
}

fn round3(value: f64) -> f64 {
    (value * 1e3).round() / 1e3
}

pub fn build<'a>(report: &Report<'a>) -> Model<'a> {
    let origin_ns = report.start_ns.unwrap_or(0);
    let clock = Clock { origin_ns };
    let types = TypeIndex::new(report.transactions);
    Model {
        meta: Meta {
            files: report.files.to_vec(),
            version: env!("CARGO_PKG_VERSION"),
            frames: report.frames,
            origin_epoch_ms: (origin_ns / 1_000_000) as f64,
            origin_day_ms: capture::time_of_day_ns(origin_ns) as f64 / 1e6,
            detail_command: report.detail_command.clone(),
            detail_limits: DetailLimits {
                connections: crate::detail::MAX_CONNECTIONS,
                ladder_packets: crate::detail::LADDER_PACKETS,
                points: crate::detail::MAX_POINTS,
            },
            partial: report.partial.clone(),
        },
        findings: report.findings,
        connections: Connections::new(report, clock),
        setups: Setups::new(report.connections, clock),
        transactions: Transactions::new(report.transactions, &types, clock),
        types: types.stats(report.transactions),
        ticks: Ticks::new(report.ticks, clock),
        details: {
            let mut of_connection = transactions_of(report.details, report.transactions);
            report
                .details
                .iter()
                .map(|detail| {
                    let transactions = of_connection.remove(&detail.connection).unwrap_or_default();
                    Detail::new(detail, &transactions, &types, clock)
                })
                .collect()
        },
    }
}

/// The transactions of each detailed connection, in their order, found in
/// one pass over them all.
fn transactions_of<'a>(
    details: &[ConnectionDetail],
    transactions: &'a [Transaction],
) -> rustc_hash::FxHashMap<u64, Vec<&'a Transaction>> {
    let mut of_connection: rustc_hash::FxHashMap<u64, Vec<&Transaction>> = details
        .iter()
        .map(|detail| (detail.connection, Vec::new()))
        .collect();
    for transaction in transactions {
        if let Some(listed) = of_connection.get_mut(&transaction.connection) {
            listed.push(transaction);
        }
    }
    of_connection
}

/// Indices of at most `budget` of `count` items: every priority item first
/// (up to half the budget), then an even spread over the rest.
pub fn sample(count: usize, budget: usize, priority: impl Fn(usize) -> bool) -> Vec<usize> {
    if count <= budget {
        return (0..count).collect();
    }
    let mut keep = vec![false; count];
    let mut kept = 0;
    for index in (0..count).filter(|&i| priority(i)).take(budget / 2) {
        keep[index] = true;
        kept += 1;
    }
    let spread = budget - kept;
    for k in 0..spread {
        keep[k * count / spread] = true;
    }
    (0..count).filter(|&i| keep[i]).take(budget).collect()
}

/// One column per field, one row per connection. Connection ids are their
/// positions (first-seen order), which the page uses to index these columns.
#[derive(Serialize)]
struct Connections<'a> {
    id: Vec<u64>,
    client: Vec<String>,
    server: Vec<String>,
    roles_guessed: Vec<bool>,
    state: Vec<tcp::ConnState>,
    history: Vec<&'a str>,
    close: Vec<tcp::CloseHow>,
    start: Vec<f64>,
    duration_ms: Vec<f64>,
    setup_ms: Vec<Option<f64>>,
    rtt_to_server_ms: Vec<Option<f64>>,
    rtt_to_client_ms: Vec<Option<f64>>,
    syn_retries: Vec<u64>,
    packets: Vec<u64>,
    payload_bytes: Vec<u64>,
    retransmissions: Vec<u64>,
    lost_segments: Vec<u64>,
    duplicate_acks: Vec<u64>,
    zero_windows: Vec<u64>,
    rtt_ms: Vec<Option<f64>>,
    transactions: Vec<u64>,
    slowest_ms: Vec<Option<f64>>,
    first_frame: Vec<u64>,
    detail: Vec<bool>,
}

impl<'a> Connections<'a> {
    fn new(report: &Report<'a>, clock: Clock) -> Self {
        let count = report.connections.len();
        let mut transactions = vec![0u64; count];
        let mut slowest: Vec<Option<f64>> = vec![None; count];
        for t in report.transactions {
            let index = t.connection as usize;
            if index < count {
                transactions[index] += 1;
                if let Some(duration) = t.duration_ms {
                    slowest[index] = Some(slowest[index].map_or(duration, |s| s.max(duration)));
                }
            }
        }
        let detailed: rustc_hash::FxHashSet<u64> =
            report.details.iter().map(|d| d.connection).collect();
        let conns = report.connections;
        let both = |pick: fn(&tcp::DirectionSummary) -> u64| -> Vec<u64> {
            conns
                .iter()
                .map(|c| pick(&c.client_to_server) + pick(&c.server_to_client))
                .collect()
        };
        Connections {
            id: conns.iter().map(|c| c.id).collect(),
            client: conns.iter().map(|c| c.client.to_string()).collect(),
            server: conns.iter().map(|c| c.server.to_string()).collect(),
            roles_guessed: conns.iter().map(|c| c.roles_guessed).collect(),
            state: conns.iter().map(|c| c.state).collect(),
            history: conns.iter().map(|c| c.history.as_str()).collect(),
            close: conns.iter().map(|c| c.close.how).collect(),
            start: conns.iter().map(|c| clock.ms(c.first_ns)).collect(),
            duration_ms: conns.iter().map(|c| round3(c.duration_ms)).collect(),
            setup_ms: conns.iter().map(setup_ms).collect(),
            rtt_to_server_ms: conns
                .iter()
                .map(|c| c.handshake.rtt_to_server_ms.map(round3))
                .collect(),
            rtt_to_client_ms: conns
                .iter()
                .map(|c| c.handshake.rtt_to_client_ms.map(round3))
                .collect(),
            syn_retries: conns.iter().map(|c| c.handshake.syn_retries).collect(),
            packets: both(|d| d.packets),
            payload_bytes: both(|d| d.payload_bytes),
            retransmissions: both(|d| d.retransmissions.total),
            lost_segments: both(|d| d.lost_segments),
            duplicate_acks: both(|d| d.duplicate_acks),
            zero_windows: both(|d| d.zero_windows),
            rtt_ms: conns.iter().map(rtt_ms).collect(),
            transactions,
            slowest_ms: slowest.into_iter().map(|ms| ms.map(round3)).collect(),
            first_frame: conns.iter().map(|c| c.first_frame).collect(),
            detail: conns.iter().map(|c| detailed.contains(&c.id)).collect(),
        }
    }
}

/// SYN to the handshake's last ACK, in milliseconds.
fn setup_ms(c: &ConnectionSummary) -> Option<f64> {
    let h = &c.handshake;
    Some(round3((h.ack_ns? - h.syn_ns?) as f64 / 1e6))
}

fn rtt_ms(c: &ConnectionSummary) -> Option<f64> {
    c.rtt().known_round_trip_ms().map(round3)
}

/// How a connection's setup went.
#[derive(Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum SetupOutcome {
    Established,
    Retried,
    Reset,
    Failed,
}

fn setup_outcome(c: &ConnectionSummary) -> SetupOutcome {
    if c.state.failed_setup() {
        SetupOutcome::Failed
    } else if !c.handshake.syn_retries_ns.is_empty() {
        SetupOutcome::Retried
    } else if c.close.how == tcp::CloseHow::Rst {
        SetupOutcome::Reset
    } else {
        SetupOutcome::Established
    }
}

#[derive(Serialize)]
struct Setups {
    connection: Vec<u64>,
    start: Vec<f64>,
    /// Setup time; for a failed setup, its first packet to its last.
    ms: Vec<f64>,
    outcome: Vec<SetupOutcome>,
    sampling: Sampling,
}

impl Setups {
    fn new(connections: &[ConnectionSummary], clock: Clock) -> Self {
        let with_syn: Vec<&ConnectionSummary> = connections
            .iter()
            .filter(|c| c.handshake.syn_ns.is_some())
            .collect();
        let kept = sample(with_syn.len(), MAX_SETUP_POINTS, |i| {
            setup_outcome(with_syn[i]) != SetupOutcome::Established
        });
        let kept: Vec<&ConnectionSummary> = kept.into_iter().map(|i| with_syn[i]).collect();
        Setups {
            connection: kept.iter().map(|c| c.id).collect(),
            start: kept.iter().map(|c| clock.ms(c.first_ns)).collect(),
            ms: kept
                .iter()
                .map(|c| setup_ms(c).unwrap_or(round3(c.duration_ms)))
                .collect(),
            outcome: kept.iter().map(|c| setup_outcome(c)).collect(),
            sampling: Sampling {
                shown: kept.len(),
                total: with_syn.len(),
            },
        }
    }
}

/// Transaction types, the costliest first; each transaction's type is its
/// name where the payload gave one, else its signature.
struct TypeIndex {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

/// A transaction's type: its name, the numbers in its request written `#`
/// (`GET /item/# → 200`) so that requests differing only in an id or a size
/// are one type; else its signature.
fn type_of(t: &Transaction) -> String {
    match t.name.as_deref() {
        None => t.signature.clone(),
        Some(name) => match name.split_once(" → ") {
            Some((request, response)) => format!("{} → {response}", numbers_hidden(request)),
            // A response without its request names the response alone.
            None if name.starts_with('→') => name.to_string(),
            None => numbers_hidden(name),
        },
    }
}

/// `GET /item/1234` as `GET /item/#`.
fn numbers_hidden(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

impl TypeIndex {
    fn new(transactions: &[Transaction]) -> Self {
        let mut total: HashMap<String, f64> = HashMap::new();
        for t in transactions {
            *total.entry(type_of(t)).or_default() += t.duration_ms.unwrap_or(0.0);
        }
        let mut order: Vec<(String, f64)> = total.into_iter().collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let pooled = order.len() > MAX_TYPES;
        let mut names: Vec<String> = order
            .iter()
            .take(if pooled { MAX_TYPES - 1 } else { MAX_TYPES })
            .map(|(name, _)| name.to_string())
            .collect();
        if pooled {
            names.push(OTHER_TYPES.to_string());
        }
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        TypeIndex { names, index }
    }

    fn of(&self, t: &Transaction) -> usize {
        self.index
            .get(&type_of(t))
            .copied()
            .unwrap_or(self.names.len().saturating_sub(1))
    }

    fn stats(&self, transactions: &[Transaction]) -> Vec<TypeStats> {
        let mut durations = vec![Vec::new(); self.names.len()];
        for t in transactions {
            durations[self.of(t)].extend(t.duration_ms);
        }
        self.names
            .iter()
            .zip(durations)
            .filter_map(|(name, ms)| TypeStats::new(name.clone(), ms))
            .collect()
    }
}

/// Duration figures and histogram of one transaction type.
#[derive(Serialize)]
struct TypeStats {
    name: String,
    #[serde(flatten)]
    durations: Durations,
    total_ms: f64,
    p99_ms: f64,
    /// Counts per bin; bin `first_bin + i` holds durations from
    /// 10^((first_bin+i)/bins_per_decade) ms to the next bin's start.
    histogram: Vec<u64>,
    first_bin: i32,
    bins_per_decade: f64,
}

fn histogram_bin(ms: f64) -> i32 {
    (ms.max(1e-3).log10() * BINS_PER_DECADE).floor() as i32
}

impl TypeStats {
    fn new(name: String, mut ms: Vec<f64>) -> Option<Self> {
        let durations = Durations::of(&mut ms)?;
        let first_bin = histogram_bin(durations.min_ms);
        let mut histogram = vec![0u64; (histogram_bin(durations.max_ms) - first_bin + 1) as usize];
        for &value in &ms {
            histogram[(histogram_bin(value) - first_bin) as usize] += 1;
        }
        Some(TypeStats {
            name,
            total_ms: round3(ms.iter().sum()),
            p99_ms: round3(ms[((ms.len() - 1) as f64 * 0.99).round() as usize]),
            durations,
            histogram,
            first_bin,
            bins_per_decade: BINS_PER_DECADE,
        })
    }
}

#[derive(Serialize)]
struct Transactions {
    types: Vec<String>,
    start: Vec<f64>,
    ms: Vec<f64>,
    kind: Vec<usize>,
    retransmissions: Vec<u64>,
    connection: Vec<u64>,
    index: Vec<u32>,
    sampling: Sampling,
}

impl Transactions {
    fn new(transactions: &[Transaction], types: &TypeIndex, clock: Clock) -> Self {
        let kept = sample(transactions.len(), MAX_TRANSACTION_POINTS, |i| {
            transactions[i].retransmissions > 0
        });
        // A transaction without a duration (the clock stepped back) has no point.
        let kept: Vec<&Transaction> = kept
            .into_iter()
            .map(|i| &transactions[i])
            .filter(|t| t.duration_ms.is_some())
            .collect();
        Transactions {
            types: types.names.clone(),
            start: kept.iter().map(|t| clock.ms(t.request_start_ns)).collect(),
            ms: kept
                .iter()
                .filter_map(|t| t.duration_ms.map(round3))
                .collect(),
            kind: kept.iter().map(|t| types.of(t)).collect(),
            retransmissions: kept.iter().map(|t| t.retransmissions).collect(),
            connection: kept.iter().map(|t| t.connection).collect(),
            index: kept.iter().map(|t| t.index).collect(),
            sampling: Sampling {
                shown: kept.len(),
                total: transactions.len(),
            },
        }
    }
}

#[derive(Serialize)]
struct Ticks {
    tick_ms: f64,
    start: Vec<f64>,
    throughput_bps: Vec<f64>,
    packets: Vec<u64>,
    retransmissions: Vec<u64>,
    lost_segments: Vec<u64>,
    duplicate_acks: Vec<u64>,
    zero_windows: Vec<u64>,
    new_connections: Vec<u64>,
    failed_connections: Vec<u64>,
    connections_open: Vec<u64>,
    transactions_in_progress: Vec<u64>,
}

impl Ticks {
    fn new(ticks: &[Tick], clock: Clock) -> Self {
        let column = |pick: fn(&Tick) -> u64| ticks.iter().map(pick).collect();
        Ticks {
            tick_ms: match ticks {
                [first, second, ..] => (second.start_ns - first.start_ns) as f64 / 1e6,
                _ => 1.0,
            },
            start: ticks.iter().map(|t| clock.ms(t.start_ns)).collect(),
            throughput_bps: ticks.iter().map(|t| t.throughput_bps.round()).collect(),
            packets: column(|t| t.packets),
            retransmissions: column(|t| t.retransmissions),
            lost_segments: column(|t| t.lost_segments),
            duplicate_acks: column(|t| t.duplicate_acks),
            zero_windows: column(|t| t.zero_windows),
            new_connections: column(|t| t.new_connections),
            failed_connections: column(|t| t.failed_connections),
            connections_open: column(|t| t.connections_open),
            transactions_in_progress: column(|t| t.transactions_in_progress),
        }
    }
}

/// Packets as columns.
#[derive(Serialize, Default)]
struct PacketColumns {
    frame: Vec<u64>,
    t: Vec<f64>,
    from_client: Vec<bool>,
    seq: Vec<u32>,
    ack: Vec<u32>,
    len: Vec<u32>,
    flags: Vec<u8>,
    window: Vec<u64>,
    in_flight: Vec<u64>,
    resent: Vec<bool>,
}

impl PacketColumns {
    fn new(packets: &[Packet], clock: Clock) -> Self {
        let mut columns = PacketColumns::default();
        for p in packets {
            columns.frame.push(p.frame);
            columns.t.push(clock.ms(p.timestamp_ns));
            columns.from_client.push(p.from_client);
            columns.seq.push(p.seq);
            columns.ack.push(p.ack);
            columns.len.push(p.len);
            columns.flags.push(p.flags);
            columns.window.push(p.window);
            columns.in_flight.push(p.in_flight);
            columns.resent.push(p.resent);
        }
        columns
    }
}

#[derive(Serialize)]
struct Detail {
    connection: u64,
    packets_seen: u64,
    ladder: PacketColumns,
    sample: PacketColumns,
    sample_stride: u64,
    resent: PacketColumns,
    resent_seen: u64,
    rtt_t: Vec<f64>,
    rtt_from_client: Vec<bool>,
    rtt_ms: Vec<f64>,
    rtt_stride: u64,
    waterfall: Waterfall,
}

impl Detail {
    /// `transactions`: the connection's own.
    fn new(
        detail: &ConnectionDetail,
        transactions: &[&Transaction],
        types: &TypeIndex,
        clock: Clock,
    ) -> Self {
        Detail {
            connection: detail.connection,
            packets_seen: detail.packets_seen,
            ladder: PacketColumns::new(&detail.ladder, clock),
            sample: PacketColumns::new(&detail.sample, clock),
            sample_stride: detail.sample_stride,
            resent: PacketColumns::new(&detail.resent, clock),
            resent_seen: detail.resent_seen,
            rtt_t: detail
                .rtt
                .iter()
                .map(|s| clock.ms(s.timestamp_ns))
                .collect(),
            rtt_from_client: detail.rtt.iter().map(|s| s.from_client).collect(),
            rtt_ms: detail
                .rtt
                .iter()
                .map(|s| round3(s.rtt_ns as f64 / 1e6))
                .collect(),
            rtt_stride: detail.rtt_stride,
            waterfall: Waterfall::new(transactions, types, clock),
        }
    }
}

/// A connection's transactions, each as request, think time and response.
#[derive(Serialize, Default)]
struct Waterfall {
    index: Vec<u32>,
    kind: Vec<usize>,
    request_start: Vec<f64>,
    request_end: Vec<f64>,
    response_start: Vec<Option<f64>>,
    response_end: Vec<Option<f64>>,
    request_bytes: Vec<u64>,
    response_bytes: Vec<u64>,
    retransmissions: Vec<u64>,
    total: usize,
}

impl Waterfall {
    fn new(transactions: &[&Transaction], types: &TypeIndex, clock: Clock) -> Self {
        let mut waterfall = Waterfall::default();
        for t in transactions {
            waterfall.total += 1;
            if waterfall.index.len() == MAX_WATERFALL {
                continue;
            }
            waterfall.index.push(t.index);
            waterfall.kind.push(types.of(t));
            waterfall.request_start.push(clock.ms(t.request_start_ns));
            waterfall.request_end.push(clock.ms(t.request_end_ns));
            waterfall
                .response_start
                .push(t.response_start_ns.map(|ns| clock.ms(ns)));
            waterfall
                .response_end
                .push(t.response_end_ns.map(|ns| clock.ms(ns)));
            waterfall.request_bytes.push(t.request_bytes);
            waterfall.response_bytes.push(t.response_bytes);
            waterfall.retransmissions.push(t.retransmissions);
        }
        waterfall
    }
}

#[cfg(test)]
mod tests {
    use super::numbers_hidden;

    #[test]
    fn requests_differing_only_in_numbers_are_one_type() {
        assert_eq!(numbers_hidden("GET 1011"), numbers_hidden("GET 14962"));
        assert_eq!(
            numbers_hidden("GET /item/12/photo-3.jpg"),
            "GET /item/#/photo-#.jpg"
        );
        assert_eq!(
            numbers_hidden("TLS ClientHello example.com"),
            "TLS ClientHello example.com"
        );
    }
}
