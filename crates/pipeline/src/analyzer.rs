//! The stages after decoding, fed one segment at a time.

use capture::{CaptureError, Frame};
use decode::Segment;
use diagnose::Evidence;
use rustc_hash::FxHashSet;
use tcp::{ConnectionSummary, Departed, Event, EventKind, SegmentView, Tracker};
use timeline::{Series, Timeline};
use transactions::{Builder, Times, Transaction};

use crate::copies::Matched;
use crate::select::Selecting;
use crate::{part, Analysis, Part, ReadCounts, Stages, DEFAULT_MEMORY_BYTES};

/// Bytes of each frame decoded: enough for link, tunnel, IP and TCP headers;
/// a chain of headers longer than this counts as truncated.
const HEADER_BYTES: usize = 192;
/// The share of the budget the tracker's connections and summaries may fill;
/// the rest is for the transactions of the connections listed, the threads'
/// batches, the timeline and the final stages. A fixed share keeps the
/// tracker's choices, and so the connection ids, the same whichever stages run.
const TRACKER_SHARE: f64 = 0.45;
/// The share of the budget the transactions listed may fill; past it, a
/// spread of them over the whole capture is listed.
const TRANSACTIONS_SHARE: f64 = 0.35;
/// Connections whose transactions are dropped in one pass over them.
const FORGET_AT_ONCE: usize = 4096;

/// The stages after decoding, fed one segment at a time: the tracker, and
/// the transactions, timeline and diagnosis that were asked for, over the
/// selected traffic. It runs over every connection of a capture, or over
/// some of them (see [`part`]).
pub struct Analyzer {
    tracker: Tracker,
    selecting: Option<Selecting>,
    builder: Option<Builder>,
    evidence: Option<Evidence>,
    timeline: Option<Timeline>,
    memory_budget_bytes: u64,
    /// Connections retired without a summary whose transactions are still to be dropped.
    to_forget: FxHashSet<u64>,
    /// The frame that opened each connection, by id: what numbers a part's
    /// connections among all parts' (see [`crate::part::combine`]). A run
    /// over every connection numbers them itself and keeps none (None).
    opened: Option<Vec<u64>>,
    tcp_segments: u64,
    selected_segments: u64,
    pub(crate) matched: Matched,
}

impl Analyzer {
    pub fn new(stages: Stages) -> Self {
        Analyzer::with_tracker(stages, Tracker::new())
    }

    fn with_tracker(stages: Stages, mut tracker: Tracker) -> Self {
        let wants_transactions = stages.wants_transactions();
        // Diagnosis reads the series too (loss and failures against load).
        let timeline_tick = stages.timeline.or(stages.diagnose.then_some(None));
        let memory_budget_bytes = stages.memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES);
        tracker.set_memory_budget((memory_budget_bytes as f64 * TRACKER_SHARE) as u64);
        if stages.numbers_only {
            tracker.keep_no_summaries();
        }
        Analyzer {
            tracker,
            selecting: Selecting::new(stages.selection),
            builder: wants_transactions.then(|| {
                let mut builder = Builder::new();
                builder.set_memory_budget((memory_budget_bytes as f64 * TRANSACTIONS_SHARE) as u64);
                builder
            }),
            evidence: stages.diagnose.then(Evidence::default),
            timeline: timeline_tick
                .map(|tick| tick.map_or_else(Timeline::new, Timeline::with_tick)),
            memory_budget_bytes,
            to_forget: FxHashSet::default(),
            opened: None,
            tcp_segments: 0,
            selected_segments: 0,
            matched: Matched::default(),
        }
    }

    /// For some of a capture's connections: the timeline counts from the
    /// capture's first TCP segment at `first_ns`, as every other part's does.
    pub fn for_part(stages: Stages, first_ns: Option<i64>) -> Self {
        Analyzer::new(stages).counting_from(first_ns)
    }

    /// For a shard of a capture's connections read on one machine (see
    /// [`crate::shards`]): told each host's numbering and the sweeps, and
    /// knowing of drops as `capture_drops` says. The timeline counts from
    /// `first_ns`, the capture's first segment.
    pub(crate) fn for_shard(
        stages: Stages,
        first_ns: Option<i64>,
        capture_drops: tcp::CaptureDrops,
    ) -> Self {
        Analyzer::with_tracker(stages, Tracker::for_shard(capture_drops)).counting_from(first_ns)
    }

    /// Some of a capture's connections, numbered among all parts' by the
    /// frames that opened them, counted in a timeline from `first_ns`.
    fn counting_from(mut self, first_ns: Option<i64>) -> Self {
        self.opened = Some(Vec::new());
        if let Some(origin) = first_ns {
            self.capture_starts_at(origin);
            self.timeline = self.timeline.map(|timeline| timeline.starting_at(origin));
        }
        self
    }

    /// One frame in one thread: decoded, counted in `read` and analysed.
    pub(crate) fn frame(&mut self, frame: &Frame, read: &mut ReadCounts) {
        let headers = headers_of(*frame);
        let decoded = decode::decode(&headers);
        read.count(frame.timestamp_ns, &decoded);
        self.capture_starts_at(frame.timestamp_ns);
        if let Ok(segment) = decoded {
            self.segment(
                &segment,
                segment.whole_payload(headers.data.len(), frame.data),
            );
        }
        self.drain_events(|_| {});
    }

    /// Resolves the selection's window from the capture's first frame, at
    /// `start_ns`: a later call changes nothing.
    pub(crate) fn capture_starts_at(&mut self, start_ns: i64) {
        if let Some(selecting) = &mut self.selecting {
            selecting.window(start_ns);
        }
    }

    /// One decoded segment; `payload` is its captured payload (or empty),
    /// read only by the transactions. None for a frame the capture holds
    /// twice, counted by the tracker and left out.
    pub fn segment(&mut self, segment: &Segment, payload: &[u8]) -> Option<SegmentView> {
        let view = self.tracker.process(segment)?;
        self.after_tracker(segment, payload, &view);
        Some(view)
    }

    /// [`Analyzer::segment`] in a shard: `elsewhere` is what the reader's
    /// [`tcp::HostNumbering`] noted for the segment.
    pub(crate) fn segment_in_shard(
        &mut self,
        segment: &Segment,
        payload: &[u8],
        elsewhere: Option<u16>,
    ) {
        if let Some(view) = self.tracker.process_in_shard(segment, elsewhere) {
            self.after_tracker(segment, payload, &view);
        }
    }

    /// Sweeps a shard's connections as the reader says (see [`tcp::SweepClock`]).
    pub(crate) fn sweep_at(&mut self, now_ns: i64) {
        self.tracker.sweep_at(now_ns);
    }

    /// The evidence kept so far (when diagnosing), leaving none.
    pub(crate) fn take_evidence(&mut self) -> Option<Evidence> {
        self.evidence.take()
    }

    /// What the tracker saw of the capture dropping packets.
    pub(crate) fn drops_seen(&self) -> tcp::DropsSeen {
        self.tracker.drops_seen()
    }

    /// The stages after the tracker, over a segment it did not leave out.
    fn after_tracker(&mut self, segment: &Segment, payload: &[u8], view: &SegmentView) {
        self.tcp_segments += 1;
        if let Some(opened) = &mut self.opened {
            if view.connection == opened.len() as u64 {
                opened.push(segment.frame);
            }
        }
        if let Some(selecting) = &mut self.selecting {
            if !selecting.keeps(segment, view) {
                return;
            }
        }
        self.selected_segments += 1;
        if let Some(builder) = &mut self.builder {
            let server_port = match view.direction {
                tcp::Direction::ClientToServer => segment.dst.port,
                tcp::Direction::ServerToClient => segment.src.port,
            };
            builder.observe(view, payload, server_port);
        }
        if let Some(timeline) = &mut self.timeline {
            count_segment(timeline, segment, view);
        }
    }

    /// The analysis events raised since the last call, in frame order:
    /// counted in the timeline, kept as evidence, then handed to `on_event`.
    pub fn drain_events(&mut self, mut on_event: impl FnMut(&Event)) {
        for event in self.tracker.drain_events() {
            if let Some(selecting) = &self.selecting {
                if !selecting.keeps_event(&event) {
                    continue;
                }
            }
            if let Some(timeline) = &mut self.timeline {
                count_event(timeline, &event);
            }
            if let Some(evidence) = &mut self.evidence {
                evidence.record(&event);
            }
            on_event(&event);
        }
        self.keep_within_budget();
    }

    /// Counts the connections retired without a summary and drops their
    /// transactions; concludes those of the connections retired with one.
    fn keep_within_budget(&mut self) {
        for departed in self.tracker.drain_departed() {
            if let Some(timeline) = &mut self.timeline {
                count_departed(timeline, &departed);
            }
            if self.builder.is_some() {
                self.to_forget.insert(departed.id);
            }
        }
        if self.to_forget.len() >= FORGET_AT_ONCE {
            self.forget_departed();
        }
        for id in self.tracker.drain_concluded() {
            if let Some(builder) = &mut self.builder {
                builder.conclude(id);
            }
        }
        self.count_left_out();
    }

    /// Counts in the timeline the transactions left out of the list.
    fn count_left_out(&mut self) {
        if let (Some(builder), Some(timeline)) = (&mut self.builder, &mut self.timeline) {
            for times in builder.drain_left_out() {
                count_times(timeline, times);
            }
        }
    }

    /// Drops the transactions of the connections retired without a summary.
    fn forget_departed(&mut self) {
        if let Some(builder) = &mut self.builder {
            let timeline = &mut self.timeline;
            builder.forget(&self.to_forget, |transaction| {
                if let Some(timeline) = timeline {
                    count_transaction(timeline, transaction);
                }
            });
        }
        self.to_forget.clear();
    }

    /// What the per-connection stages found, once the segments are over.
    pub fn into_part(self) -> Part {
        self.into_part_telling(&mut |_| {})
    }

    /// [`Analyzer::into_part`], telling `tell` what it is doing.
    fn into_part_telling(mut self, tell: &mut dyn FnMut(&'static str)) -> Part {
        self.keep_within_budget();
        self.forget_departed();
        // The transactions first: their builder's per-connection state is
        // freed before the tracker's summaries are built.
        if self.builder.is_some() {
            tell("closing transactions");
        }
        if let Some(builder) = &mut self.builder {
            builder.conclude_all();
        }
        self.count_left_out();
        let transactions_not_listed = self.builder.as_ref().map_or(0, Builder::left_out);
        let (transactions, ledgers) = self
            .builder
            .map(|builder| builder.finish())
            .unwrap_or_default();
        tell("summarizing connections");
        let tcp::Tracked {
            mut connections,
            unanswered_syns,
            mut trimmed,
            repeats,
        } = self.tracker.finish_all();
        trimmed.transactions_not_listed = transactions_not_listed;
        if let Some(selecting) = &self.selecting {
            connections.retain(|connection| selecting.kept_connection(connection.id));
        }
        Part {
            connections,
            unanswered_syns,
            trimmed,
            transactions,
            ledgers,
            events: Vec::new(),
            timeline: self.timeline,
            opened: self.opened.unwrap_or_default(),
            tcp_segments: self.tcp_segments,
            selected_segments: self.selected_segments,
            matched: self.matched,
            repeats,
            memory_budget_bytes: self.memory_budget_bytes,
        }
    }

    /// Everything, once the input is over: what reading counted, and the
    /// error that stopped the read early, if one did.
    pub fn finish(self, read: ReadCounts, error: Option<CaptureError>) -> Analysis {
        self.finish_telling(read, error, &mut |_| {})
    }

    /// [`Analyzer::finish`], telling `tell` what it is doing.
    pub(crate) fn finish_telling(
        mut self,
        read: ReadCounts,
        error: Option<CaptureError>,
        tell: &mut dyn FnMut(&'static str),
    ) -> Analysis {
        let evidence = self.evidence.take();
        let part = self.into_part_telling(tell);
        part::conclude_telling(part, evidence, read, error, tell)
    }
}

fn count_segment(timeline: &mut Timeline, segment: &Segment, view: &SegmentView) {
    timeline.add_all(
        segment.timestamp_ns,
        &[
            (Series::Packets, 1),
            (Series::Bytes, u64::from(segment.wire_len)),
            (Series::PayloadBytes, u64::from(segment.payload_len)),
        ],
    );
    if view.resent_unseen() {
        timeline.add(segment.timestamp_ns, Series::LostSegments, 1);
    }
}

fn count_event(timeline: &mut Timeline, event: &Event) {
    let series = match event.kind {
        EventKind::Retransmission
        | EventKind::SynRetransmission
        | EventKind::FastRetransmission
        | EventKind::SpuriousRetransmission => Series::Retransmissions,
        EventKind::LostSegment => Series::LostSegments,
        EventKind::DuplicateAck => Series::DuplicateAcks,
        EventKind::ZeroWindow => Series::ZeroWindows,
        _ => return,
    };
    timeline.add(event.timestamp_ns, series, 1);
}

/// Connection and transaction counts, known once the read is over.
pub(crate) fn count_ends(
    timeline: &mut Timeline,
    connections: &[ConnectionSummary],
    transactions: &[Transaction],
) {
    for connection in connections {
        timeline.add(connection.first_ns, Series::NewConnections, 1);
        let last_ns = connection.last_ns.max(connection.first_ns);
        timeline.add(last_ns, Series::ConnectionsClosed, 1);
        if connection.state.failed_setup() {
            timeline.add(connection.first_ns, Series::FailedConnections, 1);
        }
    }
    for transaction in transactions {
        count_transaction(timeline, transaction);
    }
}

fn count_transaction(timeline: &mut Timeline, transaction: &Transaction) {
    count_times(timeline, transaction.times());
}

/// A transaction's start and end, counted in the timeline.
fn count_times(timeline: &mut Timeline, times: Times) {
    let start = times.request_start_ns;
    timeline.add(start, Series::TransactionsStarted, 1);
    if let Some(end) = times.response_end_ns {
        timeline.add(end, Series::TransactionsCompleted, 1);
    }
    // Never before its start, whatever the clock did.
    let end = times
        .response_end_ns
        .unwrap_or(times.request_end_ns)
        .max(start);
    timeline.add(end, Series::TransactionsEnded, 1);
}

/// A connection retired without a summary still counts in the timeline.
fn count_departed(timeline: &mut Timeline, departed: &Departed) {
    timeline.add(departed.first_ns, Series::NewConnections, 1);
    let last_ns = departed.last_ns.max(departed.first_ns);
    timeline.add(last_ns, Series::ConnectionsClosed, 1);
    if departed.failed_setup {
        timeline.add(departed.first_ns, Series::FailedConnections, 1);
    }
}

/// The frame cut to its first [`HEADER_BYTES`], its length on the wire kept.
pub(crate) fn headers_of(frame: Frame) -> Frame {
    Frame {
        data: &frame.data[..frame.data.len().min(HEADER_BYTES)],
        original_len: frame.original_len.max(frame.data.len() as u32),
        ..frame
    }
}
