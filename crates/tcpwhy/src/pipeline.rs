//! Runs the stages over the input files: capture and decode on one thread,
//! connection tracking on another, joined by batches of segments.

use std::sync::mpsc;
use std::thread;

use capture::{CaptureError, MergedReader};
use decode::{Segment, Skip};
use tcp::{ConnectionSummary, Event, Tracker};

use crate::progress::Progress;

/// Segments per message between the threads: large enough to amortize the hand-off.
const BATCH: usize = 2048;
/// Batches in flight; bounds the memory between the threads.
const QUEUE_DEPTH: usize = 16;

/// What a pass over the capture produced.
pub struct Analysis {
    pub connections: Vec<ConnectionSummary>,
    pub counts: Counts,
    /// The error that stopped the read, if any: the results are then partial.
    pub error: Option<CaptureError>,
}

/// Frame counts by outcome.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub frames: u64,
    pub tcp_segments: u64,
    pub skipped: SkipCounts,
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
            Skip::NotIp => &mut self.not_ip,
            Skip::NotTcp => &mut self.not_tcp,
            Skip::Fragment => &mut self.ip_fragment,
            Skip::Truncated => &mut self.truncated_header,
            Skip::Malformed => &mut self.malformed_header,
        };
        *counter += 1;
    }
}

/// Reads every file once, calling `on_event` for each analysis event as it is raised.
pub fn analyze(
    paths: &[String],
    progress: Progress,
    mut on_event: impl FnMut(&Event),
) -> Result<Analysis, CaptureError> {
    let reader = MergedReader::open(paths)?;
    let (sender, receiver) = mpsc::sync_channel::<Vec<Segment>>(QUEUE_DEPTH);
    let decoding = thread::spawn(move || read_and_decode(reader, sender, progress));
    let mut tracker = Tracker::new();
    for batch in receiver {
        for segment in &batch {
            tracker.process(segment);
        }
        for event in tracker.drain_events() {
            on_event(&event);
        }
    }
    let (counts, error) = decoding.join().expect("decoder thread panicked");
    Ok(Analysis {
        connections: tracker.finish(),
        counts,
        error,
    })
}

fn read_and_decode(
    mut reader: MergedReader,
    sender: mpsc::SyncSender<Vec<Segment>>,
    mut progress: Progress,
) -> (Counts, Option<CaptureError>) {
    let mut counts = Counts::default();
    let mut batch = Vec::with_capacity(BATCH);
    let error = loop {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                counts.frames += 1;
                match decode::decode(&frame) {
                    Ok(segment) => batch.push(segment),
                    Err(skip) => counts.skipped.add(skip),
                }
            }
            Ok(None) => break None,
            Err(error) => break Some(error),
        }
        if batch.len() == BATCH {
            counts.tcp_segments += BATCH as u64;
            progress.update(reader.bytes_read());
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if sender.send(full).is_err() {
                break None;
            }
        }
    };
    counts.tcp_segments += batch.len() as u64;
    let _ = sender.send(batch);
    progress.finish();
    (counts, error)
}
