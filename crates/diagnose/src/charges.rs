//! Every transaction's ledger, part by part, given to exactly one cause.
//!
//! Most parts name their cause directly (a Nagle wait is Nagle meeting a
//! delayed ACK). A few need what the capture shows around them: round trips
//! paid turn after turn with no pause of the client's are chattiness where
//! each is too short to notice or the same exchange repeats, other round
//! trips the path's latency (a protocol's distinct steps each pay it once); server time beyond the usual at a steady
//! period is a periodic stall; loss waits belong to a dead peer, an MTU black
//! hole, a periodic burst of loss, a lost tail (where loss struck nothing
//! but the last segments of messages), or loss at large; transfer and
//! congestion-window waits belong to a bottleneck link when round trips grow
//! with the bytes in flight. Whatever the split, the causes' times add
//! up to the ledgers' own.

use std::collections::BTreeMap;
use std::net::IpAddr;

use rustc_hash::{FxHashMap, FxHashSet};
use tcp::{ConnectionSummary, Direction};
use transactions::{ConnectionLedger, Ledger, Part, Transaction};

use crate::actions::{self, ActionId};
use crate::cause::{Cause, Chain};
use crate::detectors::{PoolQueueing, Saturation};
use crate::queue::{self, QueuedPath};
use crate::rules::{PerAction, BULK_BYTES, NOTICED_MS, PATTERN_REPEATS};

/// How many transactions each one listed stands for, by connection: more
/// than one where the memory budget listed a spread of a connection's
/// transactions, the rest counted in its ledger only. Times summed over
/// transactions count each listed one that many times, so they estimate
/// the whole capture's whatever the budget; what one action cost does not
/// change.
#[derive(Debug, Default)]
pub struct Weights(FxHashMap<u64, f64>);

impl Weights {
    pub fn of(transactions: &[Transaction], ledgers: &[ConnectionLedger]) -> Self {
        let counted: u64 = ledgers.iter().map(|ledger| ledger.transactions).sum();
        if counted <= transactions.len() as u64 {
            return Weights::default();
        }
        let mut listed: FxHashMap<u64, u64> = FxHashMap::default();
        for t in transactions {
            *listed.entry(t.connection).or_default() += 1;
        }
        let weights = ledgers
            .iter()
            .filter_map(|ledger| {
                let shown = *listed.get(&ledger.connection)?;
                (ledger.transactions > shown)
                    .then(|| (ledger.connection, ledger.transactions as f64 / shown as f64))
            })
            .collect();
        Weights(weights)
    }

    pub fn of_connection(&self, connection: u64) -> f64 {
        self.0.get(&connection).copied().unwrap_or(1.0)
    }
}

/// What one cause cost, and where.
#[derive(Debug, Default)]
pub struct CauseTotal {
    pub cost_ms: f64,
    /// What it cost each transaction it touched, in the order they were
    /// charged, with the action each belongs to.
    per_transaction: Vec<(ActionId, f64)>,
    /// The transaction charged last, by (connection, index).
    last_charged: Option<(u64, u32)>,
    /// The whole ledger time of the transactions it touched.
    pub touched_ms: f64,
    /// How many transactions it touched, each counted as many as it stands for.
    touched: f64,
    /// What it cost on each connection.
    pub per_connection: CostByConnection,
    /// When each transaction it touched ran (ns).
    spans: Vec<(i64, i64)>,
}

impl CauseTotal {
    /// Charges `ms` of `transaction`, which stands for `weight`
    /// transactions, to the cause. A transaction's charges all come before
    /// the next transaction's (see [`charge`]).
    fn add(
        &mut self,
        transaction: &Transaction,
        connection: ConnectionAt,
        action: ActionId,
        ms: f64,
        weight: f64,
    ) {
        self.cost_ms += ms * weight;
        let key = (transaction.connection, transaction.index);
        if self.last_charged != Some(key) {
            self.last_charged = Some(key);
            self.touched_ms += at_stake_ms(&transaction.ledger) * weight;
            self.touched += weight;
            self.spans.push(ledger_span(transaction));
            self.per_transaction.push((action, 0.0));
        }
        if let Some((_, cost)) = self.per_transaction.last_mut() {
            *cost += ms;
        }
        self.per_connection.add(connection, ms * weight);
    }

    /// How many transactions it touched, in the whole capture.
    pub fn transactions(&self) -> u64 {
        self.touched.round() as u64
    }

    /// What it cost the actions a person waited on: per request and its
    /// answer, or per chain of requests as `chain` says (see
    /// [`crate::actions`]).
    pub fn felt(&self, chain: Chain) -> PerAction {
        let costs: Vec<f64> = match chain {
            Chain::Never => self.costs().collect(),
            Chain::Always => self.per_chain(|_| true),
            Chain::NoticedSteps => self.per_chain(|ms| ms >= NOTICED_MS),
        };
        PerAction {
            worst_ms: costs.iter().copied().fold(0.0, f64::max),
            actions: costs.len() as u64,
            transactions: self.per_transaction.len() as u64,
            typical_ms: crate::median(costs),
        }
    }

    /// What it cost each chain it touched, counting the transactions whose
    /// cost `counts`.
    fn per_chain(&self, counts: impl Fn(f64) -> bool) -> Vec<f64> {
        let mut chains: FxHashMap<ActionId, f64> = FxHashMap::default();
        for &(action, ms) in &self.per_transaction {
            let chain = chains.entry(action).or_default();
            if counts(ms) {
                *chain += ms;
            }
        }
        chains.into_values().collect()
    }

    fn costs(&self) -> impl Iterator<Item = f64> + '_ {
        self.per_transaction.iter().map(|&(_, ms)| ms)
    }

    /// The connection it cost most on, of `connections` (those it was
    /// charged with).
    pub fn example_connection(&self, connections: &[ConnectionSummary]) -> Option<u64> {
        self.per_connection.most_costly(connections)
    }

    /// What it cost in time a person waited: the sum, less the overlap of
    /// the transactions it touched that ran at once (eight connections
    /// waiting together lose the time once, not eight times).
    pub fn wall_clock_ms(&self) -> f64 {
        let summed: i128 = self.spans.iter().map(|&span| length_ns(span)).sum();
        if summed <= 0 {
            return self.cost_ms;
        }
        self.cost_ms * union_ns(&self.spans) as f64 / summed as f64
    }

    /// The mean cost per transaction touched.
    pub fn per_transaction_ms(&self) -> f64 {
        self.cost_ms / self.per_transaction.len().max(1) as f64
    }

    /// The most it cost any one transaction.
    pub fn most_per_transaction_ms(&self) -> f64 {
        self.costs().fold(0.0, f64::max)
    }

    pub fn median_per_transaction_ms(&self) -> f64 {
        crate::median(self.costs().collect())
    }
}

/// A connection as its costs are kept: at its summary's place in the
/// connections' list, or by id when the memory budget left it unlisted.
#[derive(Debug, Clone, Copy)]
enum ConnectionAt {
    Listed(usize),
    Unlisted(u64),
}

/// What a cause cost on each connection it touched. Held by the
/// connections' places, not hashed by id: the transactions are charged in
/// capture order, and connections opened near each other sit near each
/// other.
#[derive(Debug, Default)]
pub struct CostByConnection {
    listed: Vec<Option<f64>>,
    unlisted: FxHashMap<u64, f64>,
}

impl CostByConnection {
    fn add(&mut self, at: ConnectionAt, ms: f64) {
        let cost = match at {
            ConnectionAt::Listed(place) => {
                if place >= self.listed.len() {
                    self.listed.resize(place + 1, None);
                }
                self.listed[place].get_or_insert(0.0)
            }
            ConnectionAt::Unlisted(id) => self.unlisted.entry(id).or_default(),
        };
        *cost += ms;
    }

    /// How many connections it touched.
    pub fn len(&self) -> usize {
        self.listed.iter().flatten().count() + self.unlisted.len()
    }

    /// The connections of `connections` (those it was charged with) it
    /// touched, in their list's order.
    pub fn touched_of<'a>(
        &'a self,
        connections: &'a [ConnectionSummary],
    ) -> impl Iterator<Item = &'a ConnectionSummary> + 'a {
        self.listed
            .iter()
            .zip(connections)
            .filter_map(|(cost, connection)| cost.map(|_| connection))
    }

    /// Whether it touched the connection `id` of `connections` (those it
    /// was charged with).
    pub fn touches(&self, id: u64, connections: &[ConnectionSummary]) -> bool {
        match crate::place_of(connections, id) {
            Some(place) => matches!(self.listed.get(place), Some(Some(_))),
            None => self.unlisted.contains_key(&id),
        }
    }

    /// The connection it cost most on, the first of those that cost it alike.
    fn most_costly(&self, connections: &[ConnectionSummary]) -> Option<u64> {
        let listed = self
            .listed
            .iter()
            .zip(connections)
            .filter_map(|(cost, c)| Some((c.id, (*cost)?)));
        let unlisted = self.unlisted.iter().map(|(&id, &cost)| (id, cost));
        listed
            .chain(unlisted)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(id, _)| id)
    }
}

/// When a transaction's ledger time ran: from the end of the transaction
/// before it on its connection (or its first SYN) to the last byte of its
/// answer, so that waits before the request (a SYN sent again) are in it.
fn ledger_span(transaction: &Transaction) -> (i64, i64) {
    let end = transaction
        .response_end_ns
        .unwrap_or(transaction.request_end_ns);
    let start = end - (transaction.ledger.total_ms() * 1e6).round() as i64;
    (start.min(transaction.request_start_ns), end)
}

/// The length of time the spans cover together.
fn union_ns(spans: &[(i64, i64)]) -> i128 {
    let mut sorted = spans.to_vec();
    sorted.sort_unstable();
    let mut covered = 0;
    let mut reached = i64::MIN;
    for (from, to) in sorted {
        let from = from.max(reached);
        if to > from {
            covered += length_ns((from, to));
            reached = to;
        }
    }
    covered
}

/// A span's length, in a type that holds any two timestamps' distance.
fn length_ns((from, to): (i64, i64)) -> i128 {
    (i128::from(to) - i128::from(from)).max(0)
}

/// What the capture shows around the ledgers, that some parts' causes depend on.
#[derive(Default)]
pub struct Context {
    /// Transactions whose server time holds a periodic stall: the usual server time.
    pub stalled: FxHashMap<(u64, u32), f64>,
    /// A server saturated by the load, and the transactions that queued for it.
    pub saturation: Option<Saturation>,
    /// Transactions queued behind a saturated server: the server time it would have taken.
    pub saturated: FxHashMap<(u64, u32), f64>,
    /// A front tier whose requests waited for a pool to a back tier.
    pub pool: Option<PoolQueueing>,
    /// Periods of periodic loss bursts (start and end, ns), in time order.
    pub loss_bursts: Vec<(i64, i64)>,
    /// The last transactions (connection, index) of connections on which
    /// one side stopped answering: their losses are a dead peer's.
    pub dead_peers: FxHashSet<(u64, u32)>,
    /// The last transactions (connection, index) of dead peers that had
    /// said goodbye (sent their FIN) before: no one waited for what their
    /// peer resent them at the end.
    pub gone_after_goodbye: FxHashSet<(u64, u32)>,
    pub black_holes: FxHashSet<u64>,
    /// SYNs were lost no more often than the data: the path's loss, not a
    /// listen queue or a filter, made the handshakes wait.
    pub syn_loss_is_path_loss: bool,
    /// Paths (client and server address) on which a queue stood before
    /// the bottleneck (see [`crate::queue`]).
    pub queued_paths: FxHashMap<(IpAddr, IpAddr), QueuedPath>,
    /// Paths on which some sender resent a segment the receiver asked for
    /// with duplicate ACKs: loss struck there at large, segments with later
    /// ones behind them, so the last segments it struck are its own too.
    pub loss_at_large: FxHashSet<(IpAddr, IpAddr)>,
}

/// What the charges read of the transactions besides the context: each
/// one's connection, the action it belongs to, and the exchanges a client
/// repeated.
pub struct Turns<'a> {
    transactions: &'a [Transaction],
    connections: &'a [ConnectionSummary],
    actions: Vec<ActionId>,
    repeated: FxHashSet<(u64, &'a str)>,
}

impl<'a> Turns<'a> {
    pub fn of(connections: &'a [ConnectionSummary], transactions: &'a [Transaction]) -> Self {
        Turns {
            transactions,
            connections,
            actions: actions::of(connections, transactions),
            repeated: repeated_exchanges(transactions, connections),
        }
    }
}

/// Every cause's total, over all transactions, one transaction after another.
pub fn charge(turns: &Turns, weights: &Weights, context: &Context) -> BTreeMap<Cause, CauseTotal> {
    let Turns {
        transactions,
        connections,
        actions,
        repeated,
    } = turns;
    let mut totals: BTreeMap<Cause, CauseTotal> = BTreeMap::new();
    for (t, &action) in transactions.iter().zip(actions) {
        let place = crate::place_of(connections, t.connection);
        let connection = place.map(|place| &connections[place]);
        let at = place.map_or(ConnectionAt::Unlisted(t.connection), ConnectionAt::Listed);
        let chatty = is_chatty(t, connection, repeated);
        let weight = weights.of_connection(t.connection);
        for (part, ms) in t.ledger.parts() {
            let shares = assign(part, ms, t, chatty, connection, context);
            for (cause, ms) in shares.into_iter().flatten() {
                if ms > 0.0 {
                    totals
                        .entry(cause)
                        .or_default()
                        .add(t, at, action, ms, weight);
                }
            }
        }
        let gone = context
            .gone_after_goodbye
            .contains(&(t.connection, t.index));
        if gone && t.retransmissions > 0 {
            totals
                .entry(Cause::DeadPeer)
                .or_default()
                .add(t, at, action, 0.0, weight);
        } else if lost_at_no_ones_cost(t, connection) {
            totals
                .entry(Cause::PacketLoss)
                .or_default()
                .add(t, at, action, 0.0, weight);
        }
    }
    totals
}

/// The transaction's segments were sent again on a connection that lost
/// some (not only resent them needlessly), yet no one waited for the
/// resends: losses are listed with their rate however little they cost.
fn lost_at_no_ones_cost(t: &Transaction, connection: Option<&ConnectionSummary>) -> bool {
    let lost = connection.is_some_and(|c| {
        c.directions()
            .iter()
            .any(|d| d.lost_before_capture + d.lost_after_capture > 0)
    });
    t.retransmissions > 0 && !lost_in(t) && lost
}

/// The transaction's ledger holds waits for resends.
fn lost_in(t: &Transaction) -> bool {
    [
        Part::RetransmissionTimeout,
        Part::TailLoss,
        Part::LossRecovery,
    ]
    .iter()
    .any(|&part| t.ledger.get(part) > 0.0)
}

/// Where a part's time goes: to one cause, or split between two.
type Shares = [Option<(Cause, f64)>; 2];

/// The cause (or causes, when a part is split) of `ms` charged to `part` in
/// `t`, a `chatty` turn or not (see [`is_chatty`]).
fn assign(
    part: Part,
    ms: f64,
    t: &Transaction,
    chatty: bool,
    connection: Option<&ConnectionSummary>,
    context: &Context,
) -> Shares {
    let key = (t.connection, t.index);
    let single = |cause| [Some((cause, ms)), None];
    match part {
        Part::SynRetry if context.syn_loss_is_path_loss => single(Cause::PacketLoss),
        Part::SynRetry => single(Cause::SetupFailure),
        Part::AcceptQueue => single(Cause::AcceptQueue),
        Part::ClientStart => single(Cause::ClientDelay),
        Part::ClientThink | Part::ClientIdle => single(Cause::ClientThink),
        Part::ServerIdle => single(Cause::ServerIdle),
        Part::ClientPause => single(Cause::ApplicationLimited),
        Part::ServerPause if t.response_bytes >= BULK_BYTES => single(Cause::ApplicationLimited),
        Part::ServerPause => single(Cause::SplitResponse),
        Part::Propagation if chatty => single(Cause::Chattiness),
        Part::Propagation => single(Cause::PathLatency),
        Part::Queueing => single(Cause::BottleneckLink),
        // A standing queue means the link is full: whatever holds the bytes
        // in flight above what the path carries only adds to the queue.
        Part::Transfer | Part::CongestionWindow | Part::SendBuffer | Part::ReceiveWindow
            if queue_builds(t, connection, context) =>
        {
            single(Cause::BottleneckLink)
        }
        Part::Transfer => single(Cause::Transfer),
        Part::CongestionWindow => single(Cause::SlowStart),
        Part::Server => server(ms, key, t.connection, context),
        Part::Nagle => single(Cause::NagleDelayedAck),
        Part::DelayedAck => single(Cause::DelayedAck),
        Part::ReceiveWindow => single(Cause::ReceiveWindow),
        Part::ZeroWindow => single(Cause::ZeroWindow),
        Part::SendBuffer => single(Cause::SendBuffer),
        Part::RetransmissionTimeout | Part::TailLoss | Part::LossRecovery
            if context
                .gone_after_goodbye
                .contains(&(t.connection, t.index)) =>
        {
            [None, None]
        }
        Part::RetransmissionTimeout | Part::TailLoss | Part::LossRecovery => {
            single(loss(part, t, connection, context))
        }
    }
}

/// Server time: the usual answer, and what a periodic stall, saturation or
/// a pool added to it.
fn server(ms: f64, key: (u64, u32), connection: u64, context: &Context) -> Shares {
    if context
        .pool
        .as_ref()
        .is_some_and(|pool| pool.is_front(connection))
    {
        return [Some((Cause::PoolQueueing, ms)), None];
    }
    let carved = |cause, usual: f64| {
        let usual = usual.clamp(0.0, ms);
        [Some((Cause::ServerThink, usual)), Some((cause, ms - usual))]
    };
    if let Some(&usual) = context.stalled.get(&key) {
        return carved(Cause::PeriodicStalls, usual);
    }
    if let Some(&usual) = context.saturated.get(&key) {
        return carved(Cause::ServerSaturation, usual);
    }
    [Some((Cause::ServerThink, ms)), None]
}

fn loss(
    part: Part,
    t: &Transaction,
    connection: Option<&ConnectionSummary>,
    context: &Context,
) -> Cause {
    if context.dead_peers.contains(&(t.connection, t.index)) {
        return Cause::DeadPeer;
    }
    if context.black_holes.contains(&t.connection) {
        return Cause::MtuBlackHole;
    }
    let end = t.response_end_ns.unwrap_or(t.request_end_ns);
    // The bursts are in time order and apart: only the first that ends
    // after the transaction began can overlap it.
    let bursts = &context.loss_bursts;
    let first_not_over = bursts.partition_point(|&(_, to)| to < t.request_start_ns);
    let in_burst = bursts
        .get(first_not_over)
        .is_some_and(|&(from, _)| end >= from);
    let at_large = connection.is_some_and(|c| context.loss_at_large.contains(&queue::path(c)));
    match part {
        _ if in_burst => Cause::PeriodicLoss,
        Part::TailLoss if !at_large => Cause::TailLoss,
        _ => Cause::PacketLoss,
    }
}

/// The exchanges (a connection and a signature: requests and answers alike
/// in size) that a client made again and again, each right after the last
/// one's answer, at least a pattern's [`PATTERN_REPEATS`] times.
fn repeated_exchanges<'a>(
    transactions: &'a [Transaction],
    connections: &[ConnectionSummary],
) -> FxHashSet<(u64, &'a str)> {
    let mut turns: FxHashMap<(u64, &str), usize> = FxHashMap::default();
    for t in transactions {
        let connection = crate::summary_of(connections, t.connection);
        if follows_without_client_wait(t, connection) {
            *turns
                .entry((t.connection, t.signature.as_str()))
                .or_default() += 1;
        }
    }
    turns
        .into_iter()
        .filter(|&(_, count)| count >= PATTERN_REPEATS)
        .map(|(key, _)| key)
        .collect()
}

/// A turn paid right after the previous answer is chatty when its round
/// trip is one a person would not notice alone, so that only their number
/// makes them add up, or when it repeats the same exchange: a habit that
/// batching or pipelining would spare. A protocol's distinct steps across
/// a path long enough to notice each (a login, a handshake) pay its
/// latency once per step.
fn is_chatty(
    t: &Transaction,
    connection: Option<&ConnectionSummary>,
    repeated: &FxHashSet<(u64, &str)>,
) -> bool {
    let round_trip = connection.map_or(0.0, |c| c.rtt().round_trip_ms());
    follows_without_client_wait(t, connection)
        && (round_trip < NOTICED_MS || repeated.contains(&(t.connection, t.signature.as_str())))
}

/// The transaction came right after the previous answer on its connection,
/// the client thinking less than a round trip: turn after turn, each paying
/// the path's round trip.
fn follows_without_client_wait(t: &Transaction, connection: Option<&ConnectionSummary>) -> bool {
    let round_trip = connection.map_or(0.0, |c| c.rtt().round_trip_ms());
    t.index > 1 && t.ledger.get(Part::ClientThink) <= round_trip
}

/// The transaction's main direction shows round trips growing with the
/// bytes in flight: a queue standing before a bottleneck link. Or they
/// stand well above the least on a path where another connection's rise
/// with its bytes in flight: connections sharing a link share its queue,
/// and each one's round trips follow all their bytes in flight, not its
/// own. Or, its round trips untimed, a handshake on its path waited behind
/// bulk data crossing the way its own went while it ran.
fn queue_builds(
    t: &Transaction,
    connection: Option<&ConnectionSummary>,
    context: &Context,
) -> bool {
    let Some(c) = connection else {
        return false;
    };
    let (direction, data) = if t.request_bytes >= t.response_bytes {
        (Direction::ClientToServer, &c.client_to_server)
    } else {
        (Direction::ServerToClient, &c.server_to_client)
    };
    let last_byte_ns = t.response_end_ns.unwrap_or(t.request_end_ns);
    let queued_on_path = |queued: &QueuedPath| {
        [data.rtt, data.release_lag]
            .iter()
            .any(|samples| queue::stands(c, data, samples, queued.least_ms))
            || queued.handshake_queued_during(direction, t.request_start_ns, last_byte_ns)
    };
    queue::shows_queue(c, data)
        || context
            .queued_paths
            .get(&queue::path(c))
            .is_some_and(queued_on_path)
}

/// A ledger's time that someone waited through: all of it but each side's
/// own pace (the client's think time and idle pauses, the server's idle time).
pub fn at_stake_ms(ledger: &Ledger) -> f64 {
    ledger.total_ms()
        - ledger.get(Part::ClientThink)
        - ledger.get(Part::ClientIdle)
        - ledger.get(Part::ServerIdle)
}

/// Distinct connection ids.
pub fn distinct(ids: impl Iterator<Item = u64>) -> u64 {
    ids.collect::<FxHashSet<u64>>().len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_that_overlap_are_covered_once_and_any_two_timestamps_have_a_length() {
        assert_eq!(union_ns(&[(0, 10), (5, 20), (30, 40)]), 30);
        let widest = (i64::MIN, i64::MAX);
        assert_eq!(union_ns(&[widest, widest]), i128::from(u64::MAX));
        assert_eq!(length_ns((10, 0)), 0);
    }

    fn listed(ids: &[u64]) -> Vec<ConnectionSummary> {
        ids.iter()
            .map(|&id| ConnectionSummary {
                id,
                client: "10.0.0.1:40000".parse().unwrap(),
                server: "10.0.0.2:80".parse().unwrap(),
                roles_guessed: false,
                first_frame: 1,
                last_frame: 1,
                first_ns: 0,
                last_ns: 0,
                duration_ms: 0.0,
                state: tcp::ConnState::S1,
                history: "S".into(),
                close: tcp::Close {
                    by: None,
                    how: tcp::CloseHow::Open,
                    frame: None,
                },
                handshake: tcp::Handshake::default(),
                client_to_server: tcp::DirectionSummary::default(),
                server_to_client: tcp::DirectionSummary::default(),
            })
            .collect()
    }

    #[test]
    fn costs_by_connection_count_listed_and_unlisted_connections_and_name_the_costliest() {
        // Connections 1 and 3 were left unlisted by the memory budget.
        let connections = listed(&[0, 2, 4]);
        let mut costs = CostByConnection::default();
        let place = |id| {
            crate::place_of(&connections, id)
                .map_or(ConnectionAt::Unlisted(id), ConnectionAt::Listed)
        };
        for (id, ms) in [(4, 5.0), (3, 7.0), (4, 2.0), (0, 0.0), (3, 0.0)] {
            costs.add(place(id), ms);
        }
        assert_eq!(costs.len(), 3);
        let touched: Vec<u64> = (0..6)
            .filter(|&id| costs.touches(id, &connections))
            .collect();
        assert_eq!(touched, [0, 3, 4]);
        let listed_touched: Vec<u64> = costs.touched_of(&connections).map(|c| c.id).collect();
        assert_eq!(listed_touched, [0, 4]);
        // 4 and 3 cost 7 ms each: the one with the lower id is named.
        assert_eq!(costs.most_costly(&connections), Some(3));
        costs.add(place(2), 7.0);
        assert_eq!(costs.most_costly(&connections), Some(2));
        assert_eq!(CostByConnection::default().most_costly(&connections), None);
    }
}
