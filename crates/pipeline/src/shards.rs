//! The per-connection stages on every core.
//!
//! One reader decodes the frames and hands each segment to the shard of its
//! two ends (as the cluster path splits a capture), with what only a reader
//! of every segment knows: its host's IP numbering on other connections,
//! and when the connection table is swept (see [`tcp::HostNumbering`],
//! [`tcp::SweepClock`]). Each shard runs the tracker, transactions and
//! ledger on a thread of its own, and the shards' parts are combined and
//! diagnosed as one run's (see [`crate::part`]).
//!
//! A shard learns alone that the capture drops packets. Where its reading
//! rested on not knowing what another shard had seen earlier, the capture
//! is read again with the first such frame known to every shard (see
//! [`tcp::DropsSeen`]): the result is the one thread's, whatever the count.

use std::hash::{Hash, Hasher};
use std::sync::mpsc;
use std::thread;

use capture::{CaptureError, MergedReader};
use decode::Segment;
use diagnose::Evidence;
use tcp::{CaptureDrops, DropsSeen, Event, HostNumbering, SweepClock};

use crate::analyzer::{headers_of, Analyzer};
use crate::copies::{CopyFilter, Matched};
use crate::part::{combine, conclude_telling, Part};
use crate::payloads::{files_of, Files, Holds, PayloadAt, Payloads};
use crate::stop::stop_requested;
use crate::threads::map_ahead_of_reader;
use crate::{Analysis, ReadCounts, ReadProgress, Stages, DEFAULT_MEMORY_BYTES};

/// Items per batch handed to a shard: large enough to amortize the hand-off.
const BATCH: usize = 2048;
/// Payload bytes per batch at most, so the batches in flight stay small.
const BATCH_PAYLOAD_BYTES: usize = 256 * 1024;
/// Batches in flight per shard; bounds the memory between the threads.
const QUEUE_DEPTH: usize = 4;
/// How far a batch being filled may hold the reader's pages behind it
/// before it is sent as it is: a shard that is seldom given a segment must
/// not keep the whole file mapped.
const STALE_BYTES: usize = 4 << 20;
/// How often, in bytes read, the reader looks for stale batches.
const STALE_CHECK_BYTES: usize = 1 << 20;

/// Whether the capture can be read in `stages.shards` shards: more than one
/// asked for, every segment analysed (a selection reads connection ids,
/// which a shard numbers only among its own), and files that can be read
/// twice (for the second reading that drops may call for).
pub(crate) fn can_split(paths: &[String], stages: &Stages) -> bool {
    stages.shards > 1
        && stages.selection.is_everything()
        && !stages.numbers_only
        && paths
            .iter()
            .all(|path| std::fs::metadata(path).is_ok_and(|meta| meta.is_file()))
}

/// [`crate::analyze`] with the connections split across `stages.shards`
/// threads.
pub(crate) fn analyze(
    paths: &[String],
    stages: Stages,
    progress: impl ReadProgress,
    mut on_event: impl FnMut(&Event),
) -> Result<Analysis, CaptureError> {
    let budget = stages.memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES);
    let first = read_in_shards(paths, &stages, CaptureDrops::Learnt, progress)?;
    let seen: Vec<DropsSeen> = first.shards.iter().map(|shard| shard.drops).collect();
    let mut read = if stop_requested() || DropsSeen::read_as_one(&seen) {
        first
    } else {
        let mut progress = first.into_progress();
        progress.stage("reading again: the capture drops packets");
        let known = CaptureDrops::KnownAfter(DropsSeen::first_of(&seen));
        read_in_shards(paths, &stages, known, progress)?
    };
    let mut evidences = Vec::with_capacity(read.shards.len());
    let mut parts = Vec::with_capacity(read.shards.len());
    for shard in read.shards {
        evidences.push((shard.evidence, shard.part.opened.clone()));
        parts.push(shard.part);
    }
    let mut whole = combine(parts);
    whole.matched = read.matched;
    whole.memory_budget_bytes = budget;
    std::mem::take(&mut whole.events)
        .iter()
        .for_each(&mut on_event);
    let evidence = stages.diagnose.then(|| {
        let mut all = Evidence::default();
        for (evidence, opened) in evidences {
            // Ids are ranks by opening frame, as `combine` numbers them.
            let id = |local: u64| {
                whole
                    .opened
                    .partition_point(|&frame| frame < opened[local as usize]) as u64
            };
            all.absorb(evidence.unwrap_or_default(), id);
        }
        all
    });
    let mut failures = read.failures.into_iter();
    let mut tell = |doing| read.progress.stage(doing);
    let mut analysis = conclude_telling(whole, evidence, read.counts, failures.next(), &mut tell);
    read.progress.finish();
    analysis.other_failures = failures.collect();
    analysis.interrupted = stop_requested();
    Ok(analysis)
}

/// One reading of the capture in shards.
struct Read<P> {
    shards: Vec<ShardEnd>,
    counts: ReadCounts,
    matched: Matched,
    failures: Vec<CaptureError>,
    progress: P,
}

impl<P> Read<P> {
    /// The progress bar, all else dropped.
    fn into_progress(self) -> P {
        self.progress
    }
}

/// What a shard found.
struct ShardEnd {
    part: Part,
    evidence: Option<Evidence>,
    drops: DropsSeen,
}

/// A shard's work, in the capture's order.
enum Item {
    /// A segment, with what its host numbered last on another flow, and
    /// where its payload lies.
    Segment {
        segment: Segment,
        elsewhere: Option<u16>,
        payload: PayloadAt,
    },
    /// The table is swept at this time.
    Sweep(i64),
}

struct Batch {
    items: Vec<Item>,
    payloads: Payloads,
    /// The capture's first segment's time: where the timeline starts.
    first_ns: Option<i64>,
}

impl Batch {
    fn new(files: Files) -> Self {
        Batch {
            items: Vec::with_capacity(BATCH),
            payloads: Payloads::new(files),
            first_ns: None,
        }
    }

    fn is_full(&self) -> bool {
        self.items.len() >= BATCH || self.payloads.bytes() >= BATCH_PAYLOAD_BYTES
    }

    /// Whether the batch holds a place in `file` more than [`STALE_BYTES`]
    /// before `place`.
    fn is_stale(&self, file: usize, place: usize) -> bool {
        self.payloads.first_held()[file]
            .is_some_and(|held| place.saturating_sub(held) > STALE_BYTES)
    }
}

/// Reads every frame once, the shards knowing of drops as `capture_drops`
/// says; the reader runs on this thread.
fn read_in_shards<P: ReadProgress>(
    paths: &[String],
    stages: &Stages,
    capture_drops: CaptureDrops,
    mut progress: P,
) -> Result<Read<P>, CaptureError> {
    let mut reader = MergedReader::open(paths)?;
    let Shards {
        senders,
        recycled,
        threads,
    } = spawn_shards(stages, capture_drops);
    let (reached, mapping) = reader.map_ahead().map(map_ahead_of_reader).unzip();
    if let Some(reached) = &reached {
        let _ = reached.send(0);
    }
    let mut dispatch = Dispatch::new(files_of(&reader), stages, senders, recycled);
    let error = loop {
        let frame = match reader.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break None,
            Err(error) => break Some(error),
        };
        let sent = dispatch.frame(&frame);
        dispatch.tell_holds(&mut reader);
        if sent {
            let read_up_to = reader.bytes_read();
            progress.update(read_up_to);
            if let Some(reached) = &reached {
                let _ = reached.send(read_up_to);
            }
            if stop_requested() {
                break None;
            }
        }
    };
    let (counts, matched) = dispatch.finish();
    drop(reached);
    progress.stage("summarizing connections");
    if let Some(mapping) = mapping {
        mapping.join().expect("mapping thread panicked");
    }
    let shards = threads
        .into_iter()
        .map(|shard| shard.join().expect("shard thread panicked"))
        .collect();
    let mut failures = reader.failures();
    failures.extend(error);
    Ok(Read {
        shards,
        counts,
        matched,
        failures,
        progress,
    })
}

/// The shards' threads, where to send each its batches, and where each
/// sends them back emptied.
struct Shards {
    senders: Vec<mpsc::SyncSender<Batch>>,
    recycled: Vec<mpsc::Receiver<Batch>>,
    threads: Vec<thread::JoinHandle<ShardEnd>>,
}

/// Starts a thread for each of `stages.shards` shards, each keeping to its
/// share of the memory budget.
fn spawn_shards(stages: &Stages, capture_drops: CaptureDrops) -> Shards {
    let count = stages.shards;
    let budget = stages.memory_bytes.unwrap_or(DEFAULT_MEMORY_BYTES);
    let shard_stages = Stages {
        memory_bytes: Some(budget / count as u64),
        ..stages.clone()
    };
    let mut senders = Vec::with_capacity(count);
    let mut recycled = Vec::with_capacity(count);
    let mut shards = Vec::with_capacity(count);
    for _ in 0..count {
        let (sender, receiver) = mpsc::sync_channel::<Batch>(QUEUE_DEPTH);
        // Emptied batches go back to the reader, which then allocates none.
        let (recycler, recycled_batches) = mpsc::channel::<Batch>();
        let stages = shard_stages.clone();
        senders.push(sender);
        recycled.push(recycled_batches);
        shards.push(thread::spawn(move || {
            run_shard(receiver, recycler, stages, capture_drops)
        }));
    }
    Shards {
        senders,
        recycled,
        threads: shards,
    }
}

/// The reader's side: what it notes of every segment, and each shard's
/// batch being filled.
struct Dispatch {
    copies: Option<CopyFilter>,
    keep_payloads: bool,
    hosts: HostNumbering,
    sweeps: SweepClock,
    first_ns: Option<i64>,
    batches: Vec<Batch>,
    senders: Vec<mpsc::SyncSender<Batch>>,
    recycled: Vec<mpsc::Receiver<Batch>>,
    /// Emptied batches handed back, for the next to fill.
    spare: Vec<Batch>,
    files: Files,
    holds: Holds,
    /// The places the batches hold changed since the reader was last told.
    holds_changed: bool,
    /// Per file, where the reader looks for stale batches next.
    next_stale_check: Vec<usize>,
    counts: ReadCounts,
}

impl Dispatch {
    fn new(
        files: Files,
        stages: &Stages,
        senders: Vec<mpsc::SyncSender<Batch>>,
        recycled: Vec<mpsc::Receiver<Batch>>,
    ) -> Self {
        Dispatch {
            copies: (files.len() > 1).then(CopyFilter::default),
            keep_payloads: stages.wants_transactions(),
            hosts: HostNumbering::default(),
            sweeps: SweepClock::default(),
            first_ns: None,
            batches: senders.iter().map(|_| Batch::new(files.clone())).collect(),
            holds: Holds::new(senders.len(), &files),
            senders,
            recycled,
            spare: Vec::new(),
            holds_changed: false,
            next_stale_check: vec![0; files.len()],
            files,
            counts: ReadCounts::default(),
        }
    }

    /// Hands each shard its last batch and closes its channel, so its thread finishes;
    /// returns what reading counted and what the copy filter matched.
    fn finish(self) -> (ReadCounts, Matched) {
        let first_ns = self.first_ns;
        for (sender, last) in self.senders.iter().zip(self.batches) {
            let _ = sender.send(Batch { first_ns, ..last });
        }
        let matched = self.copies.map(CopyFilter::finish).unwrap_or_default();
        (self.counts, matched)
    }

    /// Decodes a frame and hands its segment to its shard; true when that
    /// sent a batch.
    fn frame(&mut self, frame: &capture::Frame) -> bool {
        let headers = headers_of(*frame);
        let decoded = decode::decode(&headers);
        let Ok(segment) = decoded else {
            self.counts.count(frame.timestamp_ns, &decoded);
            return false;
        };
        let payload = segment.whole_payload(headers.data.len(), frame.data);
        if let Some(copies) = &mut self.copies {
            if copies.is_copy(&segment, segment.payload(frame.data)) {
                self.counts.frames += 1;
                return false;
            }
        }
        self.counts.count(frame.timestamp_ns, &decoded);
        self.first_ns.get_or_insert(segment.timestamp_ns);
        let elsewhere = self.hosts.note(&segment);
        let shard = shard_of(&segment, self.batches.len());
        let batch = &mut self.batches[shard];
        let payload = if self.keep_payloads {
            batch.payloads.add(frame.source, payload)
        } else {
            PayloadAt::NONE
        };
        self.holds_changed |= batch.payloads.is_first_hold(payload);
        batch.items.push(Item::Segment {
            segment,
            elsewhere,
            payload,
        });
        let mut sent = false;
        if let Some(now) = self.sweeps.after(segment.timestamp_ns) {
            for shard in 0..self.batches.len() {
                self.batches[shard].items.push(Item::Sweep(now));
                sent |= self.send_if_full(shard);
            }
        }
        sent |= self.send_if_full(shard);
        if let PayloadAt::InFile { file, start, .. } = payload {
            sent |= self.send_stale(file as usize, start);
        }
        sent
    }

    fn send_if_full(&mut self, shard: usize) -> bool {
        let full = self.batches[shard].is_full();
        if full {
            self.send(shard);
        }
        full
    }

    /// Sends, as they are, the batches that hold places in `file` far
    /// behind `place`, where the reader is; true when it sent any.
    fn send_stale(&mut self, file: usize, place: usize) -> bool {
        if place < self.next_stale_check[file] {
            return false;
        }
        self.next_stale_check[file] = place + STALE_CHECK_BYTES;
        let mut sent = false;
        for shard in 0..self.batches.len() {
            if self.batches[shard].is_stale(file, place) {
                self.send(shard);
                sent = true;
            }
        }
        sent
    }

    fn send(&mut self, shard: usize) {
        self.take_returned();
        let next = self
            .spare
            .pop()
            .unwrap_or_else(|| Batch::new(self.files.clone()));
        let full = std::mem::replace(&mut self.batches[shard], next);
        self.holds.sent(shard, full.payloads.first_held());
        // A shard that has gone has stopped early and will tell no more.
        let _ = self.senders[shard].send(Batch {
            first_ns: self.first_ns,
            ..full
        });
    }

    /// Takes back the batches the shards have emptied.
    fn take_returned(&mut self) {
        for (shard, recycled) in self.recycled.iter().enumerate() {
            for emptied in recycled.try_iter() {
                self.holds.returned(shard);
                self.holds_changed = true;
                self.spare.push(emptied);
            }
        }
    }

    /// Tells `reader` which pages the batches still hold, when that changed.
    fn tell_holds(&mut self, reader: &mut MergedReader) {
        if std::mem::take(&mut self.holds_changed) {
            let filling = self.batches.iter().map(|batch| batch.payloads.first_held());
            self.holds.tell(reader, filling);
        }
    }
}

/// The shard of `shards` a segment's connection belongs to: the same for
/// both directions, and for the connections that later reuse its ports.
fn shard_of(segment: &Segment, shards: usize) -> usize {
    let ends = if segment.src <= segment.dst {
        (segment.src, segment.dst)
    } else {
        (segment.dst, segment.src)
    };
    let mut hasher = rustc_hash::FxHasher::default();
    ends.hash(&mut hasher);
    // The hash's high bits, which mix every bit of the ends, pick the shard.
    ((u128::from(hasher.finish()) * shards as u128) >> 64) as usize
}

/// One shard's stages over the batches it is handed, until the reader is done.
fn run_shard(
    receiver: mpsc::Receiver<Batch>,
    recycler: mpsc::Sender<Batch>,
    stages: Stages,
    capture_drops: CaptureDrops,
) -> ShardEnd {
    let keep_events = stages.events;
    let mut analyzer: Option<Analyzer> = None;
    let mut events = Vec::new();
    for batch in receiver {
        let analyzer = analyzer.get_or_insert_with(|| {
            Analyzer::for_shard(stages.clone(), batch.first_ns, capture_drops)
        });
        for item in &batch.items {
            match item {
                Item::Segment {
                    segment,
                    elsewhere,
                    payload,
                } => analyzer.segment_in_shard(segment, batch.payloads.get(*payload), *elsewhere),
                Item::Sweep(now) => analyzer.sweep_at(*now),
            }
        }
        analyzer.drain_events(|event| {
            if keep_events {
                events.push(*event);
            }
        });
        let mut emptied = batch;
        emptied.items.clear();
        emptied.payloads.clear();
        let _ = recycler.send(emptied);
    }
    let mut analyzer = analyzer.unwrap_or_else(|| Analyzer::for_shard(stages, None, capture_drops));
    let drops = analyzer.drops_seen();
    let evidence = analyzer.take_evidence();
    let mut part = analyzer.into_part();
    part.events = events;
    ShardEnd {
        part,
        evidence,
        drops,
    }
}
