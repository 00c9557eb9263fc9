//! `tcpwhy connection ID FILE…`: one pass over the capture that keeps one
//! connection's first packets, as the `tcp` stage saw them, and its events.

use capture::CaptureError;
use tcp::{Event, SegmentView};

use crate::progress::Progress;
use pipeline::{Analysis, Stages};

/// Events listed at most; `tcpwhy events --connection ID` lists them all.
const MAX_EVENTS: usize = 200;

/// What one pass kept of one connection.
pub struct Gathered {
    pub analysis: Analysis,
    pub packets: Vec<SegmentView>,
    pub packets_seen: u64,
    pub events: Vec<Event>,
    pub events_seen: u64,
}

/// Reads `files` once for connection `id`: its first `packets` packets inside
/// the selection's time window, its events and its transactions.
pub fn gather(
    files: &[String],
    id: u64,
    packets: usize,
    mut stages: Stages,
    progress: Progress,
) -> Result<Gathered, CaptureError> {
    stages.transactions = true;
    stages.selection.connections.push(id);
    let selection = stages.selection.clone();
    let mut window = None;
    let mut kept = Vec::new();
    let mut packets_seen = 0;
    let mut events = Vec::new();
    let mut events_seen = 0;
    let analysis = pipeline::analyze_observed(
        files,
        stages,
        progress,
        |event| {
            // The selection has already kept only this connection's events.
            events_seen += 1;
            if events.len() < MAX_EVENTS {
                events.push(*event);
            }
        },
        |view, _| {
            let (from, to) = *window.get_or_insert_with(|| selection.window_ns(view.timestamp_ns));
            if view.connection == id && (from..=to).contains(&view.timestamp_ns) {
                packets_seen += 1;
                if kept.len() < packets {
                    kept.push(*view);
                }
            }
        },
    )?;
    Ok(Gathered {
        analysis,
        packets: kept,
        packets_seen,
        events,
        events_seen,
    })
}
