//! The first frames of each kind of analysis event a finding cites, kept per
//! connection: the frames a finding cites belong to the connection it names.

use std::collections::HashMap;

use tcp::{Event, EventKind};

use crate::rules::EVIDENCE_FRAMES;

/// The kinds of event whose frames a finding cites. Only these are kept, so
/// the evidence grows with the connections that had them, not with every event.
const CITED: [EventKind; 2] = [EventKind::SynRetransmission, EventKind::ReusedPorts];

#[derive(Debug, Default)]
pub struct Evidence {
    frames: HashMap<(EventKind, u64), Vec<u64>>,
}

impl Evidence {
    pub fn record(&mut self, event: &Event) {
        if !CITED.contains(&event.kind) {
            return;
        }
        let frames = self
            .frames
            .entry((event.kind, event.connection))
            .or_default();
        if frames.len() < EVIDENCE_FRAMES {
            frames.push(event.frame);
        }
    }

    /// Takes in the evidence of other connections, kept apart (a shard of
    /// the capture's), whose ids `id` turns into this evidence's.
    pub fn absorb(&mut self, other: Evidence, id: impl Fn(u64) -> u64) {
        for ((kind, connection), frames) in other.frames {
            self.frames.insert((kind, id(connection)), frames);
        }
    }

    /// The first frames of these kinds on `connection`, in frame order.
    pub fn frames_on(&self, connection: u64, kinds: &[EventKind]) -> Vec<u64> {
        let mut frames: Vec<u64> = kinds
            .iter()
            .flat_map(|&kind| {
                self.frames
                    .get(&(kind, connection))
                    .into_iter()
                    .flatten()
                    .copied()
            })
            .collect();
        frames.sort_unstable();
        frames.truncate(EVIDENCE_FRAMES);
        frames
    }
}
