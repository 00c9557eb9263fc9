//! The whole analysis as a library: capture → decode → tcp → transactions →
//! timeline → diagnose, over one or more capture files.
//!
//! The command line, the tests and the bindings all call [`analyze`]; none of
//! them wires the stages again. The stages run on both cores: one thread reads
//! and decodes frames into batches of segments; the other tracks connections
//! and maps a mapped file's pages ahead of the reader (see
//! [`capture::MapAhead`]). Output (tables, JSON, HTML) is not done here.
//! A [`Selection`] narrows what the stages after the tracker see.

mod select;

use std::sync::mpsc;
use std::thread;

use capture::{CaptureError, Frame, MergedReader};
use decode::{NonTcp, Segment, Skip};
use diagnose::{Evidence, Finding, Inputs};
use tcp::{ConnectionSummary, Event, EventKind, SegmentView, Tracker};
use timeline::{Series, Tick, Timeline};
use transactions::{Builder, Transaction};

use select::Selecting;
pub use select::{Instant, Network, Selection};

/// Told how far the read has got, for a progress bar; `finish` once it is over.
pub trait ReadProgress: Send + 'static {
    fn update(&mut self, bytes_read: u64);
    fn finish(&mut self);
}

/// No progress shown.
pub struct Silent;

impl ReadProgress for Silent {
    fn update(&mut self, _: u64) {}
    fn finish(&mut self) {}
}

/// Frames per batch between the threads: large enough to amortize the hand-off.
const BATCH: usize = 2048;
/// Batches in flight; bounds the memory between the threads.
const QUEUE_DEPTH: usize = 16;
/// Bytes of each frame decoded: enough for link, tunnel, IP and TCP headers;
/// a chain of headers longer than this counts as truncated.
const HEADER_BYTES: usize = 192;

/// What a pass over the capture produced.
pub struct Analysis {
    pub connections: Vec<ConnectionSummary>,
    /// Empty unless asked for.
    pub transactions: Vec<Transaction>,
    /// Empty unless asked for.
    pub ticks: Vec<Tick>,
    /// Empty unless asked for; the costliest first.
    pub findings: Vec<Finding>,
    pub counts: Counts,
    /// The first TCP segment's time: the capture's start, from which offsets
    /// are counted (and a selection's window resolved). None without TCP.
    pub first_ns: Option<i64>,
    /// The error that stopped the read, if any: the results are then partial.
    pub error: Option<CaptureError>,
}

/// Frame counts by outcome.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub frames: u64,
    pub tcp_segments: u64,
    /// The TCP segments the selection kept: all of them without one.
    pub selected_segments: u64,
    pub skipped: SkipCounts,
    /// The frames without TCP, by what they carried.
    pub other_traffic: OtherTraffic,
}

/// Frames that held no TCP, by protocol: what a capture of little TCP holds.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct OtherTraffic {
    pub udp: u64,
    pub icmp: u64,
    pub arp: u64,
    pub other: u64,
}

impl OtherTraffic {
    fn add(&mut self, protocol: NonTcp) {
        let counter = match protocol {
            NonTcp::Udp => &mut self.udp,
            NonTcp::Icmp => &mut self.icmp,
            NonTcp::Arp => &mut self.arp,
            NonTcp::Other => &mut self.other,
        };
        *counter += 1;
    }

    pub fn total(&self) -> u64 {
        self.udp + self.icmp + self.arp + self.other
    }
}

#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct SkipCounts {
    pub unsupported_link_type: u64,
    pub not_ip: u64,
    pub not_tcp: u64,
    pub ip_fragment: u64,
    pub truncated_header: u64,
    pub malformed_header: u64,
}

impl SkipCounts {
    fn add(&mut self, skip: Skip) {
        let counter = match skip {
            Skip::UnsupportedLinkType => &mut self.unsupported_link_type,
            Skip::NotIp(_) => &mut self.not_ip,
            Skip::NotTcp(_) => &mut self.not_tcp,
            Skip::Fragment => &mut self.ip_fragment,
            Skip::Truncated => &mut self.truncated_header,
            Skip::Malformed => &mut self.malformed_header,
        };
        *counter += 1;
    }
}

/// Frames decoded on the reading thread, on their way to the tracking one.
struct Batch {
    decoded: Vec<Decoded>,
    /// Payload starts that may name a transaction (HTTP, TLS), copied out of the frames.
    payloads: Vec<u8>,
    /// The reader's offset after the batch's last frame.
    read_up_to: u64,
}

struct Decoded {
    segment: Result<Segment, Skip>,
    /// Where the segment's payload start lies in the batch's `payloads`; empty for most.
    payload: std::ops::Range<usize>,
}

impl Batch {
    fn new() -> Self {
        Batch {
            decoded: Vec::with_capacity(BATCH),
            payloads: Vec::new(),
            read_up_to: 0,
        }
    }

    fn push(&mut self, frame: &Frame) {
        let segment = decode::decode(frame);
        let start = self.payloads.len();
        if let Ok(segment) = &segment {
            let payload = segment.payload(frame.data);
            if transactions::name::may_name(payload) {
                self.payloads.extend_from_slice(payload);
            }
        }
        let payload = start..self.payloads.len();
        self.decoded.push(Decoded { segment, payload });
    }

    fn clear(&mut self) {
        self.decoded.clear();
        self.payloads.clear();
    }
}

/// Which later stages a command needs, and what traffic they look at.
#[derive(Clone, Default)]
pub struct Stages {
    pub transactions: bool,
    /// Some to build the timeline: with a tick in nanoseconds, or chosen from the capture.
    pub timeline: Option<Option<i64>>,
    pub diagnose: bool,
    /// The traffic the stages after the tracker see; connection ids stay
    /// those of the whole capture.
    pub selection: Selection,
}

/// Reads every file once, calling `on_event` for each analysis event as it is raised.
pub fn analyze(
    paths: &[String],
    stages: Stages,
    progress: impl ReadProgress,
    on_event: impl FnMut(&Event),
) -> Result<Analysis, CaptureError> {
    analyze_observed(paths, stages, progress, on_event, |_| {})
}

/// [`analyze`], also calling `on_segment` for each TCP segment with what the
/// tracker made of it, selected or not.
pub fn analyze_observed(
    paths: &[String],
    stages: Stages,
    progress: impl ReadProgress,
    mut on_event: impl FnMut(&Event),
    mut on_segment: impl FnMut(&SegmentView),
) -> Result<Analysis, CaptureError> {
    let reader = MergedReader::open(paths)?;
    let mut map_ahead = reader.map_ahead();
    let (sender, receiver) = mpsc::sync_channel::<Batch>(QUEUE_DEPTH);
    // Emptied batches go back to the reader, which then allocates none.
    let (recycler, recycled) = mpsc::channel::<Batch>();
    let reading = thread::spawn(move || read(reader, sender, recycled, progress));
    let mut analyzer = Analyzer::new(stages);
    for mut batch in receiver {
        if let Some(map_ahead) = &mut map_ahead {
            map_ahead.advance(batch.read_up_to);
        }
        for decoded in &batch.decoded {
            match &decoded.segment {
                Ok(segment) => {
                    let payload = &batch.payloads[decoded.payload.clone()];
                    let view = analyzer.segment(segment, payload);
                    on_segment(&view);
                }
                Err(skip) => analyzer.skipped(*skip),
            }
        }
        analyzer.drain_events(&mut on_event);
        batch.clear();
        let _ = recycler.send(batch);
    }
    let (frames, error) = reading.join().expect("reader thread panicked");
    Ok(analyzer.finish(frames, error))
}

/// The stages in one thread over frames already in memory (scripted traces,
/// tests): each frame decoded, then analysed as [`analyze`] would.
pub fn analyze_frames<'a>(frames: impl IntoIterator<Item = Frame<'a>>, stages: Stages) -> Analysis {
    let mut analyzer = Analyzer::new(stages);
    let mut frame_count = 0;
    for frame in frames {
        frame_count += 1;
        match decode::decode(&frame) {
            Ok(segment) => {
                analyzer.segment(&segment, segment.payload(frame.data));
            }
            Err(skip) => analyzer.skipped(skip),
        }
        analyzer.drain_events(|_| {});
    }
    analyzer.finish(frame_count, None)
}

/// The stages after decoding, fed one segment at a time: the tracker, and
/// the transactions, timeline and diagnosis that were asked for, over the
/// selected traffic.
pub struct Analyzer {
    tracker: Tracker,
    selecting: Option<Selecting>,
    builder: Option<Builder>,
    evidence: Option<Evidence>,
    timeline: Option<Timeline>,
    counts: Counts,
    first_ns: Option<i64>,
}

impl Analyzer {
    pub fn new(stages: Stages) -> Self {
        let wants_transactions =
            stages.transactions || stages.timeline.is_some() || stages.diagnose;
        // Diagnosis reads the series too (loss and failures against load).
        let timeline_tick = stages.timeline.or(stages.diagnose.then_some(None));
        Analyzer {
            tracker: Tracker::new(),
            selecting: Selecting::new(stages.selection),
            builder: wants_transactions.then(Builder::new),
            evidence: stages.diagnose.then(Evidence::default),
            timeline: timeline_tick
                .map(|tick| tick.map_or_else(Timeline::new, Timeline::with_tick)),
            counts: Counts::default(),
            first_ns: None,
        }
    }

    /// One decoded segment; `payload` is its captured payload start (or
    /// empty), read only to name transactions.
    pub fn segment(&mut self, segment: &Segment, payload: &[u8]) -> SegmentView {
        self.counts.tcp_segments += 1;
        self.first_ns.get_or_insert(segment.timestamp_ns);
        let view = self.tracker.process(segment);
        if let Some(selecting) = &mut self.selecting {
            if !selecting.keeps(segment, &view) {
                return view;
            }
        }
        self.counts.selected_segments += 1;
        if let Some(builder) = &mut self.builder {
            builder.observe(&view, payload);
        }
        if let Some(timeline) = &mut self.timeline {
            count_segment(timeline, segment);
        }
        view
    }

    /// A frame that held no TCP segment the analysis can use.
    pub fn skipped(&mut self, skip: Skip) {
        self.counts.skipped.add(skip);
        if let Skip::NotIp(protocol) | Skip::NotTcp(protocol) = skip {
            self.counts.other_traffic.add(protocol);
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
    }

    /// Everything, once the input is over: `frames` read in all, and the
    /// error that stopped the read early, if one did.
    pub fn finish(self, frames: u64, error: Option<CaptureError>) -> Analysis {
        let mut counts = self.counts;
        counts.frames = frames;
        let mut connections = self.tracker.finish();
        if let Some(selecting) = &self.selecting {
            connections.retain(|connection| selecting.kept_connection(connection.id));
        }
        let transactions = self
            .builder
            .map(|builder| builder.finish(&connections))
            .unwrap_or_default();
        let ticks = match self.timeline {
            Some(mut timeline) => {
                count_ends(&mut timeline, &connections, &transactions);
                timeline.ticks()
            }
            None => Vec::new(),
        };
        let findings = self.evidence.map_or_else(Vec::new, |evidence| {
            diagnose::diagnose(&Inputs {
                connections: &connections,
                transactions: &transactions,
                evidence: &evidence,
                ticks: &ticks,
            })
        });
        Analysis {
            connections,
            transactions,
            ticks,
            findings,
            counts,
            first_ns: self.first_ns,
            error,
        }
    }
}

fn count_segment(timeline: &mut Timeline, segment: &Segment) {
    timeline.add_all(
        segment.timestamp_ns,
        &[
            (Series::Packets, 1),
            (Series::Bytes, u64::from(segment.wire_len)),
            (Series::PayloadBytes, u64::from(segment.payload_len)),
        ],
    );
}

fn count_event(timeline: &mut Timeline, event: &Event) {
    let series = match event.kind {
        EventKind::Retransmission
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
fn count_ends(
    timeline: &mut Timeline,
    connections: &[ConnectionSummary],
    transactions: &[Transaction],
) {
    for connection in connections {
        timeline.add(connection.first_ns, Series::NewConnections, 1);
        timeline.add(connection.last_ns, Series::ConnectionsClosed, 1);
        if connection.state.failed_setup() {
            timeline.add(connection.first_ns, Series::FailedConnections, 1);
        }
    }
    for transaction in transactions {
        timeline.add(transaction.request_start_ns, Series::TransactionsStarted, 1);
        if let Some(end) = transaction.response_end_ns {
            timeline.add(end, Series::TransactionsCompleted, 1);
        }
        let end = transaction
            .response_end_ns
            .unwrap_or(transaction.request_end_ns);
        timeline.add(end, Series::TransactionsEnded, 1);
    }
}

/// The frame cut to its first [`HEADER_BYTES`], its length on the wire kept.
fn headers_of(frame: Frame) -> Frame {
    Frame {
        data: &frame.data[..frame.data.len().min(HEADER_BYTES)],
        original_len: frame.original_len.max(frame.data.len() as u32),
        ..frame
    }
}

/// Reads and decodes frames into batches; returns how many were read and the
/// error that stopped it.
fn read(
    mut reader: MergedReader,
    sender: mpsc::SyncSender<Batch>,
    recycled: mpsc::Receiver<Batch>,
    mut progress: impl ReadProgress,
) -> (u64, Option<CaptureError>) {
    let mut frames = 0;
    let mut batch = Batch::new();
    let error = loop {
        match reader.next_frame() {
            Ok(Some(frame)) => batch.push(&headers_of(frame)),
            Ok(None) => break None,
            Err(error) => break Some(error),
        }
        if batch.decoded.len() == BATCH {
            frames += BATCH as u64;
            batch.read_up_to = reader.bytes_read();
            progress.update(batch.read_up_to);
            let next = recycled.try_recv().unwrap_or_else(|_| Batch::new());
            if sender.send(std::mem::replace(&mut batch, next)).is_err() {
                break None;
            }
        }
    };
    frames += batch.decoded.len() as u64;
    batch.read_up_to = reader.bytes_read();
    let _ = sender.send(batch);
    progress.finish();
    (frames, error)
}
