//! The stages on both cores: one thread reads and decodes frames into
//! batches of segments, the calling thread tracks connections, and a third
//! maps a mapped file's pages ahead of the reader (see
//! [`capture::MapAhead`]) whenever a core is free.

use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use capture::{CaptureError, Frame, MergedReader};
use decode::{Segment, Skip};
use tcp::{Event, SegmentView};

use crate::analyzer::{headers_of, Analyzer};
use crate::copies::{CopyFilter, Matched};
use crate::payloads::{files_of, Files, Holds, PayloadAt, Payloads};
use crate::stop::stop_requested;
use crate::{Analysis, ReadCounts, ReadProgress, Stages};

/// How long a stream's frames may wait in a batch that is not yet full.
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);
/// Frames per batch between the threads: large enough to amortize the hand-off.
const BATCH: usize = 2048;
/// Payload bytes per batch at most: a batch of full-sized segments is sent
/// sooner, so the batches in flight hold a few megabytes, not a hundred.
const BATCH_PAYLOAD_BYTES: usize = 256 * 1024;
/// Batches in flight; bounds the memory between the threads.
const QUEUE_DEPTH: usize = 4;

/// Frames decoded on the reading thread, on their way to the tracking one.
struct Batch {
    decoded: Vec<Decoded>,
    /// The segments' captured payloads, when the transactions read them.
    payloads: Payloads,
    /// Frames left out as copies of packets another file captured.
    copies: u64,
}

struct Decoded {
    timestamp_ns: i64,
    segment: Result<Segment, Skip>,
    payload: PayloadAt,
}

impl Batch {
    fn new(files: Files) -> Self {
        Batch {
            decoded: Vec::with_capacity(BATCH),
            payloads: Payloads::new(files),
            copies: 0,
        }
    }

    /// Decodes `frame` into the batch, unless `copies` knows its packet
    /// from another file, with its payload when `keep_payloads`; true when
    /// that payload is the first place the batch holds in its file.
    fn push(
        &mut self,
        frame: &Frame,
        copies: Option<&mut CopyFilter>,
        keep_payloads: bool,
    ) -> bool {
        let headers = headers_of(*frame);
        let segment = decode::decode(&headers);
        if let (Ok(segment), Some(copies)) = (&segment, copies) {
            if copies.is_copy(segment, segment.payload(frame.data)) {
                self.copies += 1;
                return false;
            }
        }
        let payload = match (&segment, keep_payloads) {
            (Ok(segment), true) => self.payloads.add(
                frame.source,
                segment.whole_payload(headers.data.len(), frame.data),
            ),
            _ => PayloadAt::NONE,
        };
        self.decoded.push(Decoded {
            timestamp_ns: frame.timestamp_ns,
            segment,
            payload,
        });
        self.payloads.is_first_hold(payload)
    }

    fn is_full(&self) -> bool {
        self.decoded.len() == BATCH || self.payloads.bytes() >= BATCH_PAYLOAD_BYTES
    }

    fn clear(&mut self) {
        self.decoded.clear();
        self.payloads.clear();
        self.copies = 0;
    }
}

/// [`analyze`](crate::analyze), also calling `on_segment` for each TCP segment with what the
/// tracker made of it, selected or not, and what was read up to it (the
/// capture's first frame among it).
pub fn analyze_observed(
    paths: &[String],
    stages: Stages,
    progress: impl ReadProgress,
    mut on_event: impl FnMut(&Event),
    mut on_segment: impl FnMut(&SegmentView, &ReadCounts),
) -> Result<Analysis, CaptureError> {
    // Opened on the reading thread: a FIFO with no writer yet, or standard
    // input before its first byte, holds the open, and a stop must not wait.
    let (opened, open_result) = mpsc::channel::<Result<(), CaptureError>>();
    let (sender, receiver) = mpsc::sync_channel::<Batch>(QUEUE_DEPTH);
    // Emptied batches go back to the reader, which then allocates none.
    let (recycler, recycled) = mpsc::channel::<Batch>();
    // Shared only when the input is no single mapped file: its payloads are copied.
    let filling = Arc::new(Mutex::new(Batch::new(Files::default())));
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
            read.count(decoded.timestamp_ns, &decoded.segment);
            analyzer.capture_starts_at(decoded.timestamp_ns);
            if let Ok(segment) = &decoded.segment {
                let payload = batch.payloads.get(decoded.payload);
                if let Some(view) = analyzer.segment(segment, payload) {
                    on_segment(&view, &read);
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
        pending.push(std::mem::replace(
            &mut *partial,
            Batch::new(Files::default()),
        ));
    }
    pending
}

/// A thread that maps a mapped file's pages ahead of its reader, told by
/// the reader how far it has read: the kernel's share of reading done
/// whenever a core is free, on neither the reading nor the tracking thread.
pub(crate) fn map_ahead_of_reader(
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
    // A batch the tracking thread may take while it is being filled holds
    // no place in the files: it is never sent, so never counted back.
    let files = if filling.is_some() {
        Files::default()
    } else {
        files_of(&reader)
    };
    let mut holds = Holds::new(1, &files);
    let mut own = Batch::new(files.clone());
    let mut spare = Vec::new();
    let error = loop {
        let frame = match reader.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break None,
            Err(error) => break Some(error),
        };
        let mut shared = filling.as_deref().map(|f| f.lock().expect("batch lock"));
        let batch = shared.as_deref_mut().unwrap_or(&mut own);
        let holds_more = batch.push(&frame, copies.as_mut(), keep_payloads);
        if batch.is_full() {
            let read_up_to = reader.bytes_read();
            progress.update(read_up_to);
            channels.tell_reached(read_up_to);
            for emptied in channels.recycled.try_iter() {
                holds.returned(0);
                spare.push(emptied);
            }
            let next = spare.pop().unwrap_or_else(|| Batch::new(files.clone()));
            holds.sent(0, batch.payloads.first_held());
            if channels
                .sender
                .send(std::mem::replace(batch, next))
                .is_err()
            {
                break None;
            }
        } else if !holds_more {
            continue;
        }
        holds.tell(&mut reader, [batch.payloads.first_held()].into_iter());
    };
    let mut shared = filling.as_deref().map(|f| f.lock().expect("batch lock"));
    let batch = shared.as_deref_mut().unwrap_or(&mut own);
    let last = std::mem::replace(batch, Batch::new(files));
    if channels.sender.send(last).is_err() {
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
