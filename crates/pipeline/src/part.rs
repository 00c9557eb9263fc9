//! The per-connection stage's results, and the last stage that makes them
//! one analysis.
//!
//! The tracker, transactions and ledger need every segment of a connection
//! and no other connection's, so they can run over all of a capture's
//! connections at once (the command line) or over disjoint groups of them
//! anywhere (a Spark partition). Each run yields a [`Part`]; [`combine`]
//! joins parts into one, numbering connections as one run over the whole
//! capture would have, and [`conclude`] reads the timeline and diagnoses the
//! whole, so periodicity, load and port reuse see every connection.

use capture::CaptureError;
use diagnose::{Evidence, Inputs};
use tcp::{ConnectionSummary, Event, Repeats, Trimmed, UnansweredSyns};
use timeline::Timeline;
use transactions::{ConnectionLedger, Transaction};

use crate::analyzer::count_ends;
use crate::{Analysis, Counts, Matched, RateLimit, ReadCounts};

/// What the per-connection stages found over some of a capture's connections.
#[derive(Debug, record::Wire)]
pub struct Part {
    pub connections: Vec<ConnectionSummary>,
    pub unanswered_syns: Vec<UnansweredSyns>,
    pub trimmed: Trimmed,
    pub transactions: Vec<Transaction>,
    pub ledgers: Vec<ConnectionLedger>,
    /// The analysis events, in frame order, when the caller kept them.
    pub events: Vec<Event>,
    /// What was counted per tick so far; the connections' and transactions'
    /// ends are counted once all parts are in.
    pub timeline: Option<Timeline>,
    /// The frame that opened each connection, by the id this part gave it.
    pub opened: Vec<u64>,
    pub tcp_segments: u64,
    pub selected_segments: u64,
    pub matched: Matched,
    pub repeats: Repeats,
    pub memory_budget_bytes: u64,
}

/// The parts as one, as though one run had seen all their segments: each
/// connection takes the id of its place among all connections by the frame
/// that opened it, and every list is in the order one run gives it.
pub fn combine(parts: Vec<Part>) -> Part {
    let ids = global_ids(&parts);
    let mut parts = parts.into_iter().zip(ids);
    let Some((mut whole, ids)) = parts.next() else {
        return Part::default();
    };
    renumber(&mut whole, &ids);
    for (mut part, ids) in parts {
        renumber(&mut part, &ids);
        whole.absorb(part);
    }
    put_in_order(&mut whole);
    whole
}

/// Each list in the order one run gives it; the transactions, the longest,
/// on a thread of their own.
fn put_in_order(whole: &mut Part) {
    std::thread::scope(|scope| {
        // Keys sorted, then each record moved once: summaries and transactions are large.
        scope.spawn(|| {
            whole
                .transactions
                .sort_by_cached_key(Transaction::capture_order)
        });
        // Ids are ranks by opening frame: the frames in order are the openings by id.
        whole.opened.sort_unstable();
        whole
            .connections
            .sort_by_cached_key(|connection| connection.id);
        whole.ledgers.sort_by_cached_key(|ledger| ledger.connection);
        // Stable: a frame's events keep the order they were raised in.
        whole.events.sort_by_key(|event| event.frame);
    });
}

/// For each part, the capture-wide id of each of its connections.
fn global_ids(parts: &[Part]) -> Vec<Vec<u64>> {
    let mut openings: Vec<(u64, usize, usize)> = parts
        .iter()
        .enumerate()
        .flat_map(|(part, p)| {
            p.opened
                .iter()
                .enumerate()
                .map(move |(local, &frame)| (frame, part, local))
        })
        .collect();
    openings.sort_unstable();
    let mut ids: Vec<Vec<u64>> = parts.iter().map(|p| vec![0; p.opened.len()]).collect();
    for (global, (_, part, local)) in openings.into_iter().enumerate() {
        ids[part][local] = global as u64;
    }
    ids
}

fn renumber(part: &mut Part, ids: &[u64]) {
    let id = |local: u64| ids.get(local as usize).copied().unwrap_or(local);
    for connection in &mut part.connections {
        connection.id = id(connection.id);
    }
    for transaction in &mut part.transactions {
        transaction.connection = id(transaction.connection);
    }
    for ledger in &mut part.ledgers {
        ledger.connection = id(ledger.connection);
    }
    for event in &mut part.events {
        event.connection = id(event.connection);
    }
}

impl Default for Part {
    fn default() -> Self {
        Part {
            connections: Vec::new(),
            unanswered_syns: Vec::new(),
            trimmed: Trimmed::default(),
            transactions: Vec::new(),
            ledgers: Vec::new(),
            events: Vec::new(),
            timeline: None,
            opened: Vec::new(),
            tcp_segments: 0,
            selected_segments: 0,
            matched: Matched::default(),
            repeats: Repeats::default(),
            memory_budget_bytes: crate::DEFAULT_MEMORY_BYTES,
        }
    }
}

impl Part {
    /// Adds `other`'s findings to these; the lists are put in order by [`combine`].
    fn absorb(&mut self, other: Part) {
        self.connections.extend(other.connections);
        self.unanswered_syns = tcp::merge_unanswered(vec![
            std::mem::take(&mut self.unanswered_syns),
            other.unanswered_syns,
        ]);
        self.trimmed.retired_early += other.trimmed.retired_early;
        self.trimmed.attempts_not_listed += other.trimmed.attempts_not_listed;
        self.trimmed.connections_not_listed += other.trimmed.connections_not_listed;
        self.trimmed.transactions_not_listed += other.trimmed.transactions_not_listed;
        self.transactions.extend(other.transactions);
        self.ledgers.extend(other.ledgers);
        self.events.extend(other.events);
        match (&mut self.timeline, other.timeline) {
            (Some(timeline), Some(other)) => timeline.merge(other),
            (none @ None, other) => *none = other,
            (Some(_), None) => {}
        }
        self.opened.extend(other.opened);
        self.tcp_segments += other.tcp_segments;
        self.selected_segments += other.selected_segments;
        self.matched.add(&other.matched);
        self.repeats.add(&other.repeats);
    }
}

/// The last stage: the timeline read out and the whole diagnosed (when
/// `evidence` is given), with what reading counted and the error that
/// stopped it, if one did.
pub fn conclude(
    part: Part,
    evidence: Option<Evidence>,
    read: ReadCounts,
    error: Option<CaptureError>,
) -> Analysis {
    conclude_telling(part, evidence, read, error, &mut |_| {})
}

/// [`conclude`], telling `tell` what it is doing.
pub(crate) fn conclude_telling(
    part: Part,
    evidence: Option<Evidence>,
    read: ReadCounts,
    error: Option<CaptureError>,
    tell: &mut dyn FnMut(&'static str),
) -> Analysis {
    let Part {
        connections,
        unanswered_syns,
        trimmed,
        transactions,
        ledgers,
        timeline,
        tcp_segments,
        selected_segments,
        matched,
        repeats,
        memory_budget_bytes,
        ..
    } = part;
    let mut tick_too_fine = None;
    let ticks = match timeline {
        Some(mut timeline) => {
            tell("building the timeline");
            count_ends(&mut timeline, &connections, &transactions);
            tick_too_fine = timeline.tick_too_fine();
            if tick_too_fine.is_some() {
                Vec::new()
            } else {
                timeline.ticks()
            }
        }
        None => Vec::new(),
    };
    let diagnosis = evidence.map(|evidence| {
        tell("diagnosing");
        diagnose::diagnose(&Inputs {
            connections: &connections,
            transactions: &transactions,
            ledgers: &ledgers,
            evidence: &evidence,
            ticks: &ticks,
            unanswered_syns: &unanswered_syns,
            give_up: &crate::out_of_time,
        })
    });
    let undiagnosed = matches!(diagnosis, Some(None));
    let rate_limits = RateLimit::of_all(&connections, &ledgers);
    let ReadCounts {
        frames,
        first_frame_ns: first_ns,
        skipped,
        other_traffic,
        clock,
    } = read;
    Analysis {
        connections,
        rate_limits,
        unanswered_syns,
        trimmed,
        memory_budget_bytes,
        transactions,
        ledgers,
        ticks,
        findings: diagnosis.flatten().unwrap_or_default(),
        undiagnosed,
        counts: Counts {
            frames,
            tcp_segments,
            selected_segments,
            matched,
            repeats,
            skipped,
            clock,
            other_traffic,
        },
        first_ns,
        error,
        other_failures: Vec::new(),
        interrupted: false,
        tick_too_fine,
    }
}

/// The evidence a diagnosis reads, from every part's events in frame order.
pub fn evidence_of(events: &[Event]) -> Evidence {
    let mut evidence = Evidence::default();
    for event in events {
        evidence.record(event);
    }
    evidence
}
