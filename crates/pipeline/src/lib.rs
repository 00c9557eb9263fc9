//! The whole analysis as a library: capture → decode → tcp → transactions →
//! timeline → diagnose, over one or more capture files.
//!
//! The command line, the tests and the bindings all call [`analyze`]; none of
//! them wires the stages again. The stages run on both cores: one thread reads
//! and decodes frames into batches of segments; the other tracks connections.
//! A third maps a mapped file's pages ahead of the reader (see
//! [`capture::MapAhead`]) whenever a core is free. Several files are merged
//! by time, and a packet that two of them captured is analysed once (see
//! [`copies`]). Output (tables, JSON, HTML) is not done here. A
//! [`Selection`] narrows what the stages after the tracker see.

mod copies;
pub mod files;
pub mod part;
mod select;
mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use capture::{CaptureError, Frame, MergedReader};
use copies::CopyFilter;
pub use copies::Matched;
use decode::{NonTcp, Segment, Skip};
use diagnose::{Evidence, Finding};
use rustc_hash::FxHashSet;
use tcp::{
    ConnectionSummary, Departed, Event, EventKind, Repeats, SegmentView, Tracker, Trimmed,
    UnansweredSyns,
};
use timeline::{Series, Tick, Timeline};
use transactions::{Builder, ConnectionLedger, Transaction};

pub use files::{
    conclude_parts, flow_key, plan, FileDecoder, FileSurvey, Overlap, PartAnalyzer, Plan,
};
pub use part::Part;
use select::Selecting;
pub use select::{Instant, Network, Selection};
pub use wire::Malformed;

/// Told how far the read has got, for a progress bar; then, once the read
/// is over, what the analysis is doing; `finish` once it is all over.
pub trait ReadProgress: Send + 'static {
    fn update(&mut self, bytes_read: u64);
    /// The analysis after the read is at `doing` ("diagnosing").
    fn stage(&mut self, _doing: &'static str) {}
    fn finish(&mut self);
}

/// No progress shown.
pub struct Silent;

impl ReadProgress for Silent {
    fn update(&mut self, _: u64) {}
    fn finish(&mut self) {}
}

/// How long a stream's frames may wait in a batch that is not yet full.
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// Set once a stop is asked for. Storing it is all [`stop`] does, so that a
/// signal handler may call it.
static STOP: AtomicBool = AtomicBool::new(false);
/// When the work first saw the stop asked for (within [`FLUSH_INTERVAL`] of
/// it while reading): the stages after the read have [`GRACE`] from then
/// to finish with what was read.
static STOP_SEEN_AT: OnceLock<std::time::Instant> = OnceLock::new();
/// How long the work after the read may go on once a stop is asked for:
/// enough to diagnose what a live capture brought in, short enough that
/// the process ends within a second whatever stage it was in.
pub const GRACE: Duration = Duration::from_millis(500);

/// Asks the analysis under way to stop: the read stops at once, and what
/// comes after it stops by [`GRACE`] later, the results marked interrupted.
/// Safe to call from a signal handler.
pub fn stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for: the results are then partial.
pub fn stop_requested() -> bool {
    let asked = STOP.load(Ordering::SeqCst);
    if asked {
        STOP_SEEN_AT.get_or_init(std::time::Instant::now);
    }
    asked
}

/// Whether the work after the read must end now: a stop was asked for
/// [`GRACE`] ago or more. Long stages ask this between steps.
pub fn out_of_time() -> bool {
    stop_requested()
        && STOP_SEEN_AT
            .get()
            .is_some_and(|seen| seen.elapsed() >= GRACE)
}

/// Frames per batch between the threads: large enough to amortize the hand-off.
const BATCH: usize = 2048;
/// Payload bytes per batch at most: a batch of full-sized segments is sent
/// sooner, so the batches in flight hold a few megabytes, not a hundred.
const BATCH_PAYLOAD_BYTES: usize = 256 * 1024;
/// Batches in flight; bounds the memory between the threads.
const QUEUE_DEPTH: usize = 4;
/// Bytes of each frame decoded: enough for link, tunnel, IP and TCP headers;
/// a chain of headers longer than this counts as truncated.
const HEADER_BYTES: usize = 192;

/// The memory the analysis may hold unless told otherwise: enough for a
/// million connections with their transactions, and it fits a laptop.
pub const DEFAULT_MEMORY_BYTES: u64 = 1 << 30;
/// The share of the budget the tracker's connections and summaries may fill;
/// the rest is for the transactions of the connections listed, the threads'
/// batches, the timeline and the final stages. A fixed share keeps the
/// tracker's choices, and so the connection ids, the same whichever stages run.
const TRACKER_SHARE: f64 = 0.45;
/// Connections whose transactions are dropped in one pass over them.
const FORGET_AT_ONCE: usize = 4096;

/// What a pass over the capture produced.
pub struct Analysis {
    pub connections: Vec<ConnectionSummary>,
    /// Handshakes that never completed, per server, the most attempted first.
    pub unanswered_syns: Vec<UnansweredSyns>,
    /// What the memory budget left out of the lists (counted in totals and the timeline).
    pub trimmed: Trimmed,
    /// The memory budget the analysis kept to, in bytes.
    pub memory_budget_bytes: u64,
    /// Empty unless asked for.
    pub transactions: Vec<Transaction>,
    /// Each connection's time by part, summed over its transactions, with
    /// the longest stretch of each part as evidence; empty unless asked for.
    pub ledgers: Vec<ConnectionLedger>,
    /// Empty unless asked for.
    pub ticks: Vec<Tick>,
    /// Empty unless asked for; the costliest first.
    pub findings: Vec<Finding>,
    /// The diagnosis was asked for but given up, out of time after a [`stop`].
    pub undiagnosed: bool,
    pub counts: Counts,
    /// The first TCP segment's time: the capture's start, from which offsets
    /// are counted (and a selection's window resolved). None without TCP.
    pub first_ns: Option<i64>,
    /// The error that stopped the read, if any: the results are then partial.
    /// Of several files, the first given that failed; the others read on.
    pub error: Option<CaptureError>,
    /// The errors of the other files that failed, in the order given.
    pub other_failures: Vec<CaptureError>,
    /// True when a [`stop`] was asked for before the analysis was over: the
    /// read, and perhaps the diagnosis, ended early, and the results are partial.
    pub interrupted: bool,
    /// When a tick asked for was too fine for the capture: the smallest that
    /// fits, in nanoseconds. The ticks are then left empty.
    pub tick_too_fine: Option<i64>,
}

/// A step back of the clock at least this long is counted: smaller ones are
/// the usual disorder of a capture taken on several cores.
const STEP_BACK_NS: i64 = 1_000_000;
/// A gap between two frames at least this long is counted as a jump of the clock.
const JUMP_NS: i64 = 86_400_000_000_000;

/// How the capture's clock behaved, frame to frame. Every stage takes its
/// times as they come, with arithmetic that cannot overflow; these counts
/// say when the figures rest on a clock that stepped back or jumped.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Clock {
    /// Frames stamped at least 1 ms before an earlier frame.
    pub steps_back: u64,
    pub largest_step_back_ms: f64,
    /// Gaps of a day or more between one frame and the next.
    pub jumps: u64,
    pub largest_jump_s: f64,
    /// Frames stamped before 1896 or after 2116, counted at the nearest bound.
    pub out_of_range: u64,
    #[serde(skip)]
    first_ns: Option<i64>,
    #[serde(skip)]
    latest_ns: Option<i64>,
}

impl Clock {
    fn observe(&mut self, timestamp_ns: i64) {
        if timestamp_ns <= capture::EARLIEST_TIMESTAMP_NS
            || timestamp_ns >= capture::LATEST_TIMESTAMP_NS
        {
            self.out_of_range += 1;
        }
        let Some(latest) = self.latest_ns else {
            self.first_ns = Some(timestamp_ns);
            self.latest_ns = Some(timestamp_ns);
            return;
        };
        let step = timestamp_ns.saturating_sub(latest);
        if step <= -STEP_BACK_NS {
            self.steps_back += 1;
            self.largest_step_back_ms = self.largest_step_back_ms.max(-step as f64 / 1e6);
        } else if step >= JUMP_NS {
            self.jumps += 1;
            self.largest_jump_s = self.largest_jump_s.max(step as f64 / 1e9);
        }
        self.latest_ns = Some(latest.max(timestamp_ns));
    }

    /// Counts `later` as though its frames had been observed after these:
    /// exact when all of them come at or after the latest of these, as the
    /// files of a rotating capture do.
    pub fn append(&mut self, later: &Clock) {
        let (Some(latest), Some(next)) = (self.latest_ns, later.first_ns) else {
            if self.latest_ns.is_none() {
                *self = later.clone();
            }
            return;
        };
        let out_of_range = self.out_of_range + later.out_of_range;
        self.observe(next);
        self.steps_back += later.steps_back;
        self.largest_step_back_ms = self.largest_step_back_ms.max(later.largest_step_back_ms);
        self.jumps += later.jumps;
        self.largest_jump_s = self.largest_jump_s.max(later.largest_jump_s);
        self.out_of_range = out_of_range;
        self.latest_ns = later.latest_ns.map(|ns| ns.max(latest));
    }

    pub fn is_steady(&self) -> bool {
        self.steps_back == 0 && self.jumps == 0 && self.out_of_range == 0
    }
}

impl Analysis {
    /// The errors of every file that failed, in the order given.
    pub fn failures(&self) -> Vec<CaptureError> {
        self.error
            .iter()
            .chain(&self.other_failures)
            .cloned()
            .collect()
    }

    /// What the reader should know to trust the results: what the memory
    /// budget left out, what the clock did, and why nothing was found in
    /// frames that were all skipped. One sentence each; none when all is well.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let trimmed = &self.trimmed;
        if !trimmed.is_empty() {
            notes.push(format!(
                "the memory budget ({:.1} GiB) kept {} handshake attempts and {} connections \
                 out of the lists (they are counted in the totals, the timeline and the \
                 findings on setup) and retired {} open connections early; --memory raises it",
                self.memory_budget_bytes as f64 / (1u64 << 30) as f64,
                trimmed.attempts_not_listed,
                trimmed.connections_not_listed,
                trimmed.retired_early
            ));
        }
        let clock = &self.counts.clock;
        if clock.steps_back > 0 {
            notes.push(format!(
                "the capture's clock stepped back {} times (at most {:.1} ms): times and \
                 durations across those steps are not to be trusted{}",
                clock.steps_back,
                clock.largest_step_back_ms,
                self.durations_left_out()
            ));
        }
        if clock.jumps > 0 {
            notes.push(format!(
                "the capture's clock jumped ahead by a day or more {} times (at most {:.0} s)",
                clock.jumps, clock.largest_jump_s
            ));
        }
        if clock.out_of_range > 0 {
            notes.push(format!(
                "{} frames were stamped before 1896 or after 2116 and were counted at that bound",
                clock.out_of_range
            ));
        }
        notes.extend(self.counts.matched.notes());
        notes.extend(self.counts.repeats_notes());
        notes.extend(self.capture_drops_note());
        if self.counts.tcp_segments == 0 && self.counts.frames > 0 {
            let frames = match self.counts.frames {
                1 => "the only frame held no".to_string(),
                n => format!("none of the {n} frames held a"),
            };
            notes.push(format!(
                "{frames} TCP segment tcpwhy can read: {}{}",
                self.counts.skipped.describe(),
                self.counts.other_traffic.holding()
            ));
        }
        notes
    }

    /// The data the capture missed that its receiver acknowledged, when
    /// there was any.
    fn capture_drops_note(&self) -> Option<String> {
        let missed: u64 = self
            .connections
            .iter()
            .map(|c| c.client_to_server.capture_drops + c.server_to_client.capture_drops)
            .sum();
        (missed > 0).then(|| {
            format!(
                "the capture missed {missed} stretches of data that their receiver acknowledged \
                 (Wireshark's ACKed unseen segment: sent before the capture began, or dropped \
                 by it): the network delivered them, and no wait or loss is charged to them"
            )
        })
    }
}

impl Analysis {
    /// The durations that ran backwards across a step of the clock, and
    /// so were left out (null), as words to end the clock's note.
    fn durations_left_out(&self) -> String {
        let transactions = self
            .transactions
            .iter()
            .filter(|t| {
                let answered = t.response_start_ns.is_some();
                t.duration_ms.is_none()
                    || t.request_transfer_ms.is_none()
                    || (answered
                        && (t.server_think_ms.is_none() || t.response_transfer_ms.is_none()))
            })
            .count() as u64;
        let handshakes = self
            .connections
            .iter()
            .filter(|c| {
                let h = &c.handshake;
                (h.syn_ns.is_some() && h.syn_ack_ns.is_some() && h.rtt_to_server_ms.is_none())
                    || (h.syn_ack_ns.is_some()
                        && h.ack_ns.is_some()
                        && h.rtt_to_client_ms.is_none())
            })
            .count() as u64;
        let counted = [(transactions, "transaction"), (handshakes, "handshake")]
            .iter()
            .filter(|(count, _)| *count > 0)
            .map(|(count, noun)| plural(*count, noun))
            .collect::<Vec<_>>();
        if counted.is_empty() {
            return String::new();
        }
        format!(
            "; the durations that would run backwards are left out (null), of {}",
            counted.join(" and ")
        )
    }
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

impl Counts {
    /// What the reader should know of frames one file holds twice.
    fn repeats_notes(&self) -> Vec<String> {
        let repeats = &self.repeats;
        let mut notes = Vec::new();
        if repeats.recorded_twice > 0 {
            notes.push(format!(
                "{} frames were recorded twice by the capture (the same packet again, \
                 as a mirror port shows it going in and out) and were analysed once",
                repeats.recorded_twice
            ));
        }
        if let (n @ 1.., Some((least, most))) = (repeats.forwarded_again, repeats.ttl_steps) {
            let step = if least == most {
                least.to_string()
            } else {
                format!("{least} to {most}")
            };
            notes.push(format!(
                "{n} frames were packets the capture had already seen, again with a TTL \
                 {step} lower: a router forwarded them back onto the tapped link; each \
                 was analysed once"
            ));
        }
        notes
    }
}

/// Frame counts by outcome.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub frames: u64,
    pub tcp_segments: u64,
    /// The TCP segments the selection kept: all of them without one.
    pub selected_segments: u64,
    /// Frames that another input file had already captured, left out of the
    /// analysis, and the connections whose matching across files says more.
    #[serde(flatten)]
    pub matched: Matched,
    /// Frames one file holds twice (see [`tcp::Tracker::process`]), left out.
    #[serde(flatten)]
    pub repeats: Repeats,
    pub skipped: SkipCounts,
    pub clock: Clock,
    /// The frames without TCP, by what they carried.
    pub other_traffic: OtherTraffic,
}

/// What the decode stage counts as frames go by: every frame, those
/// without a usable TCP segment by reason and protocol, and the clock of the
/// TCP segments.
#[derive(Debug, Default, Clone)]
pub struct ReadCounts {
    pub frames: u64,
    pub skipped: SkipCounts,
    pub other_traffic: OtherTraffic,
    pub clock: Clock,
}

impl ReadCounts {
    /// One frame and what decoding made of it.
    pub fn count(&mut self, decoded: &Result<Segment, Skip>) {
        self.frames += 1;
        match decoded {
            Ok(segment) => self.clock.observe(segment.timestamp_ns),
            Err(skip) => {
                self.skipped.add(*skip);
                if let Skip::NotIp(protocol) | Skip::NotTcp(protocol) = skip {
                    self.other_traffic.add(*protocol);
                }
            }
        }
    }

    /// Adds the counts of frames that came after these (see [`Clock::append`]).
    pub fn append(&mut self, later: &ReadCounts) {
        self.frames += later.frames;
        self.skipped.add_all(&later.skipped);
        self.other_traffic.add_all(&later.other_traffic);
        self.clock.append(&later.clock);
    }

    /// The first TCP segment's time: the capture's start.
    pub fn first_segment_ns(&self) -> Option<i64> {
        self.clock.first_ns
    }
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

    /// What these frames held, to end a sentence: "; they hold 3 UDP, 1 ARP".
    fn holding(&self) -> String {
        let held: Vec<String> = [
            (self.udp, "UDP"),
            (self.icmp, "ICMP"),
            (self.arp, "ARP"),
            (self.other, "other"),
        ]
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{count} {what}"))
        .collect();
        if held.is_empty() {
            String::new()
        } else {
            format!("; they hold {}", held.join(", "))
        }
    }

    fn add_all(&mut self, other: &OtherTraffic) {
        self.udp += other.udp;
        self.icmp += other.icmp;
        self.arp += other.arp;
        self.other += other.other;
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
    /// The skipped frames by reason, as a phrase: "12 not IP, 3 IP fragments".
    pub fn describe(&self) -> String {
        let reasons = [
            (self.unsupported_link_type, "of an unsupported link type"),
            (self.not_ip, "not IP"),
            (self.not_tcp, "not TCP"),
            (self.ip_fragment, "IP fragments"),
            (self.truncated_header, "with truncated headers"),
            (self.malformed_header, "with malformed headers"),
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

    fn add_all(&mut self, other: &SkipCounts) {
        self.unsupported_link_type += other.unsupported_link_type;
        self.not_ip += other.not_ip;
        self.not_tcp += other.not_tcp;
        self.ip_fragment += other.ip_fragment;
        self.truncated_header += other.truncated_header;
        self.malformed_header += other.malformed_header;
    }

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
    /// The segments' captured payloads, copied out of the frames when the
    /// transactions read them.
    payloads: Vec<u8>,
    /// Frames left out as copies of packets another file captured.
    copies: u64,
}

struct Decoded {
    segment: Result<Segment, Skip>,
    /// Where the segment's payload lies in the batch's `payloads`.
    payload: std::ops::Range<usize>,
}

impl Default for Batch {
    fn default() -> Self {
        Batch::new()
    }
}

impl Batch {
    fn new() -> Self {
        Batch {
            decoded: Vec::with_capacity(BATCH),
            payloads: Vec::new(),
            copies: 0,
        }
    }

    /// Decodes `frame` into the batch, unless `copies` knows its packet
    /// from another file, copying its payload when `keep_payloads`.
    fn push(&mut self, frame: &Frame, copies: Option<&mut CopyFilter>, keep_payloads: bool) {
        let headers = headers_of(*frame);
        let segment = decode::decode(&headers);
        if let (Ok(segment), Some(copies)) = (&segment, copies) {
            if copies.is_copy(segment, segment.payload(frame.data)) {
                self.copies += 1;
                return;
            }
        }
        let start = self.payloads.len();
        if let (Ok(segment), true) = (&segment, keep_payloads) {
            self.payloads
                .extend_from_slice(segment.whole_payload(headers.data.len(), frame.data));
        }
        let payload = start..self.payloads.len();
        self.decoded.push(Decoded { segment, payload });
    }

    fn is_full(&self) -> bool {
        self.decoded.len() == BATCH || self.payloads.len() >= BATCH_PAYLOAD_BYTES
    }

    fn clear(&mut self) {
        self.decoded.clear();
        self.payloads.clear();
        self.copies = 0;
    }
}

/// Which later stages a command needs, and what traffic they look at.
#[derive(Clone, Default)]
pub struct Stages {
    pub transactions: bool,
    /// Some to build the timeline: with a tick in nanoseconds, or chosen from the capture.
    pub timeline: Option<Option<i64>>,
    pub diagnose: bool,
    /// The memory budget in bytes; [`DEFAULT_MEMORY_BYTES`] when None.
    pub memory_bytes: Option<u64>,
    /// The traffic the stages after the tracker see; connection ids stay
    /// those of the whole capture.
    pub selection: Selection,
}

impl Stages {
    /// The timeline and the diagnosis read the transactions too.
    fn wants_transactions(&self) -> bool {
        self.transactions || self.timeline.is_some() || self.diagnose
    }
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
    // Opened on the reading thread: a FIFO with no writer yet, or standard
    // input before its first byte, holds the open, and a stop must not wait.
    let (opened, open_result) = mpsc::channel::<Result<(), CaptureError>>();
    let (sender, receiver) = mpsc::sync_channel::<Batch>(QUEUE_DEPTH);
    // Emptied batches go back to the reader, which then allocates none.
    let (recycler, recycled) = mpsc::channel::<Batch>();
    let filling = Arc::new(Mutex::new(Batch::new()));
    let reader_filling = Arc::clone(&filling);
    let copies = (paths.len() > 1).then(CopyFilter::default);
    let keep_payloads = stages.wants_transactions();
    let paths = paths.to_vec();
    let reading = thread::spawn(move || {
        let reader = match MergedReader::open(&paths) {
            Ok(reader) => reader,
            Err(error) => {
                let _ = opened.send(Err(error));
                return ReadEnd {
                    failures: Vec::new(),
                    matched: Matched::default(),
                    progress,
                };
            }
        };
        let _ = opened.send(Ok(()));
        let map_ahead = reader.map_ahead();
        // A stream may pause: what it has sent is analysed without waiting for a full batch.
        let filling = map_ahead.is_none().then_some(reader_filling);
        let (reached, mapping) = map_ahead.map(map_ahead_of_reader).unzip();
        let channels = Channels {
            sender,
            recycled,
            reached,
        };
        let ended = read(reader, copies, keep_payloads, channels, progress, filling);
        if let Some(mapping) = mapping {
            mapping.join().expect("mapping thread panicked");
        }
        ended
    });
    loop {
        if stop_requested() {
            let mut analysis = Analyzer::new(stages).finish(ReadCounts::default(), None);
            analysis.interrupted = true;
            return Ok(analysis);
        }
        match open_result.recv_timeout(FLUSH_INTERVAL) {
            Ok(Ok(())) => break,
            Ok(Err(error)) => return Err(error),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("reader thread panicked"),
        }
    }
    let mut analyzer = Analyzer::new(stages);
    let mut read = ReadCounts::default();
    let mut analyze_batch = |mut batch: Batch| {
        read.frames += batch.copies;
        analyzer.matched.copies += batch.copies;
        for decoded in &batch.decoded {
            read.count(&decoded.segment);
            if let Ok(segment) = &decoded.segment {
                let payload = &batch.payloads[decoded.payload.clone()];
                if let Some(view) = analyzer.segment(segment, payload) {
                    on_segment(&view);
                }
            }
        }
        analyzer.drain_events(&mut on_event);
        batch.clear();
        let _ = recycler.send(batch);
    };
    let stopped = loop {
        if stop_requested() {
            break true;
        }
        match receiver.recv_timeout(FLUSH_INTERVAL) {
            Ok(batch) => analyze_batch(batch),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                for batch in take_pending(&filling, &receiver) {
                    analyze_batch(batch);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break false,
        }
    };
    let (failures, mut progress) = if stopped {
        // The reader may be waiting on its input: it is left to end with the process.
        (Vec::new(), None)
    } else {
        let ended = reading.join().expect("reader thread panicked");
        // The frames left out were counted batch by batch.
        analyzer.matched = Matched {
            copies: analyzer.matched.copies,
            ..ended.matched
        };
        (ended.failures, Some(ended.progress))
    };
    let mut failures = failures.into_iter();
    let mut tell = |doing| {
        if let Some(progress) = &mut progress {
            progress.stage(doing);
        }
    };
    let mut analysis = analyzer.finish_telling(read, failures.next(), &mut tell);
    if let Some(progress) = &mut progress {
        progress.finish();
    }
    analysis.other_failures = failures.collect();
    analysis.interrupted = stop_requested();
    Ok(analysis)
}

/// Everything the reader has handed over, in order: the full batches it
/// sent, then the one it is filling.
fn take_pending(filling: &Mutex<Batch>, receiver: &mpsc::Receiver<Batch>) -> Vec<Batch> {
    // Never wait for the reader, which holds the lock while its queue is full.
    let Ok(mut partial) = filling.try_lock() else {
        return Vec::new();
    };
    // The reader sends under the lock: whatever it sent before is queued now.
    let mut pending: Vec<Batch> = receiver.try_iter().collect();
    if !partial.decoded.is_empty() {
        pending.push(std::mem::take(&mut *partial));
    }
    pending
}

/// The stages in one thread over frames already in memory (scripted traces,
/// tests): each frame decoded, then analysed as [`analyze`] would.
pub fn analyze_frames<'a>(frames: impl IntoIterator<Item = Frame<'a>>, stages: Stages) -> Analysis {
    let mut analyzer = Analyzer::new(stages);
    let mut read = ReadCounts::default();
    for frame in frames {
        analyzer.frame(&frame, &mut read);
    }
    analyzer.finish(read, None)
}

/// The stages in one thread over a capture held in memory, reading at most
/// `max_frames` frames: what the fuzz targets and their corpus replay run.
pub fn analyze_bytes(bytes: &[u8], stages: Stages, max_frames: u64) -> Analysis {
    let reader =
        capture::CaptureReader::from_reader("memory", std::io::Cursor::new(bytes.to_vec()));
    let mut read = ReadCounts::default();
    let mut reader = match reader {
        Ok(reader) => reader,
        Err(error) => return Analyzer::new(stages).finish(read, Some(error)),
    };
    let mut analyzer = Analyzer::new(stages);
    let mut error = None;
    while read.frames < max_frames {
        match reader.next_frame() {
            Ok(Some(frame)) => analyzer.frame(&frame, &mut read),
            Ok(None) => break,
            Err(read_error) => {
                error = Some(read_error);
                break;
            }
        }
    }
    analyzer.finish(read, error)
}

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
    /// The frame that opened each connection, by id.
    opened: Vec<u64>,
    tcp_segments: u64,
    selected_segments: u64,
    matched: Matched,
}

impl Analyzer {
    pub fn new(stages: Stages) -> Self {
        let wants_transactions = stages.wants_transactions();
        // Diagnosis reads the series too (loss and failures against load).
        let timeline_tick = stages.timeline.or(stages.diagnose.then_some(None));
        let memory_budget_bytes = stages.memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES);
        let mut tracker = Tracker::new();
        tracker.set_memory_budget((memory_budget_bytes as f64 * TRACKER_SHARE) as u64);
        Analyzer {
            tracker,
            selecting: Selecting::new(stages.selection),
            builder: wants_transactions.then(Builder::new),
            evidence: stages.diagnose.then(Evidence::default),
            timeline: timeline_tick
                .map(|tick| tick.map_or_else(Timeline::new, Timeline::with_tick)),
            memory_budget_bytes,
            to_forget: FxHashSet::default(),
            opened: Vec::new(),
            tcp_segments: 0,
            selected_segments: 0,
            matched: Matched::default(),
        }
    }

    /// For some of a capture's connections: the timeline counts from the
    /// capture's first segment at `first_ns`, as every other part's does.
    pub fn for_part(stages: Stages, first_ns: Option<i64>) -> Self {
        let mut analyzer = Analyzer::new(stages);
        if let Some(origin) = first_ns {
            analyzer.timeline = analyzer
                .timeline
                .map(|timeline| timeline.starting_at(origin));
        }
        analyzer
    }

    /// One frame in one thread: decoded, counted in `read` and analysed.
    fn frame(&mut self, frame: &Frame, read: &mut ReadCounts) {
        let headers = headers_of(*frame);
        let decoded = decode::decode(&headers);
        read.count(&decoded);
        if let Ok(segment) = decoded {
            self.segment(
                &segment,
                segment.whole_payload(headers.data.len(), frame.data),
            );
        }
        self.drain_events(|_| {});
    }

    /// One decoded segment; `payload` is its captured payload (or empty),
    /// read only by the transactions. None for a frame the capture holds
    /// twice, counted by the tracker and left out.
    pub fn segment(&mut self, segment: &Segment, payload: &[u8]) -> Option<SegmentView> {
        let view = self.tracker.process(segment)?;
        self.tcp_segments += 1;
        if view.connection == self.opened.len() as u64 {
            self.opened.push(segment.frame);
        }
        if let Some(selecting) = &mut self.selecting {
            if !selecting.keeps(segment, &view) {
                return Some(view);
            }
        }
        self.selected_segments += 1;
        if let Some(builder) = &mut self.builder {
            let server_port = match view.direction {
                tcp::Direction::ClientToServer => segment.dst.port,
                tcp::Direction::ServerToClient => segment.src.port,
            };
            builder.observe(&view, payload, server_port);
        }
        if let Some(timeline) = &mut self.timeline {
            count_segment(timeline, segment, &view);
        }
        Some(view)
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
        let (transactions, ledgers) = self
            .builder
            .map(|builder| builder.finish())
            .unwrap_or_default();
        tell("summarizing connections");
        let tcp::Tracked {
            mut connections,
            unanswered_syns,
            trimmed,
            repeats,
        } = self.tracker.finish_all();
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
            opened: self.opened,
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
    fn finish_telling(
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
    let start = transaction.request_start_ns;
    timeline.add(start, Series::TransactionsStarted, 1);
    if let Some(end) = transaction.response_end_ns {
        timeline.add(end, Series::TransactionsCompleted, 1);
    }
    // Never before its start, whatever the clock did.
    let end = transaction
        .response_end_ns
        .unwrap_or(transaction.request_end_ns)
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
fn headers_of(frame: Frame) -> Frame {
    Frame {
        data: &frame.data[..frame.data.len().min(HEADER_BYTES)],
        original_len: frame.original_len.max(frame.data.len() as u32),
        ..frame
    }
}

/// A thread that maps a mapped file's pages ahead of its reader, told by
/// the reader how far it has read: the kernel's share of reading done
/// whenever a core is free, on neither the reading nor the tracking thread.
fn map_ahead_of_reader(
    mut map_ahead: capture::MapAhead,
) -> (mpsc::Sender<u64>, thread::JoinHandle<()>) {
    let (reached, offsets) = mpsc::channel::<u64>();
    let mapping = thread::spawn(move || {
        while let Ok(offset) = offsets.recv() {
            // Only where the reader is now matters.
            map_ahead.advance(offsets.try_iter().last().unwrap_or(offset));
        }
    });
    (reached, mapping)
}

/// The reader's ways to the other threads: full batches out, emptied ones
/// back, and, for a mapped file, how far it has read.
struct Channels {
    sender: mpsc::SyncSender<Batch>,
    recycled: mpsc::Receiver<Batch>,
    reached: Option<mpsc::Sender<u64>>,
}

impl Channels {
    fn tell_reached(&self, offset: u64) {
        if let Some(reached) = &self.reached {
            let _ = reached.send(offset);
        }
    }
}

/// What the reader hands back once the input is over.
struct ReadEnd<P> {
    /// The errors of the files that failed.
    failures: Vec<CaptureError>,
    /// What the copy filter matched across the files.
    matched: Matched,
    /// The progress bar, for the analysis after the read to go on with.
    progress: P,
}

/// Reads and decodes frames into batches, leaving out copies when given a
/// [`CopyFilter`]; returns what [`ReadEnd`] holds. With `filling`, the
/// batch being filled is shared, so the tracking thread can take it when the
/// input pauses.
fn read<P: ReadProgress>(
    mut reader: MergedReader,
    mut copies: Option<CopyFilter>,
    keep_payloads: bool,
    channels: Channels,
    mut progress: P,
    filling: Option<Arc<Mutex<Batch>>>,
) -> ReadEnd<P> {
    channels.tell_reached(0);
    let mut own = Batch::new();
    let error = loop {
        let frame = match reader.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break None,
            Err(error) => break Some(error),
        };
        let mut shared = filling.as_deref().map(|f| f.lock().expect("batch lock"));
        let batch = shared.as_deref_mut().unwrap_or(&mut own);
        batch.push(&frame, copies.as_mut(), keep_payloads);
        if batch.is_full() {
            let read_up_to = reader.bytes_read();
            progress.update(read_up_to);
            channels.tell_reached(read_up_to);
            let next = channels
                .recycled
                .try_recv()
                .unwrap_or_else(|_| Batch::new());
            if channels
                .sender
                .send(std::mem::replace(batch, next))
                .is_err()
            {
                break None;
            }
        }
    };
    let mut shared = filling.as_deref().map(|f| f.lock().expect("batch lock"));
    let batch = shared.as_deref_mut().unwrap_or(&mut own);
    if channels.sender.send(std::mem::take(batch)).is_err() {
        // The analysis stopped early and will tell no more.
        progress.finish();
    }
    let mut failures = reader.failures();
    failures.extend(error);
    ReadEnd {
        failures,
        matched: copies.map(CopyFilter::finish).unwrap_or_default(),
        progress,
    }
}
