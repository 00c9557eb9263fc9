//! The first frames of each kind of analysis event, kept as evidence.

use std::collections::HashMap;

use tcp::{Event, EventKind};

use crate::rules::EVIDENCE_FRAMES;

#[derive(Debug, Default)]
pub struct Evidence {
    frames: HashMap<EventKind, Vec<u64>>,
}

impl Evidence {
    pub fn record(&mut self, event: &Event) {
        let frames = self.frames.entry(event.kind).or_default();
        if frames.len() < EVIDENCE_FRAMES {
            frames.push(event.frame);
        }
    }

    /// The first frames of these kinds, in frame order.
    pub fn frames(&self, kinds: &[EventKind]) -> Vec<u64> {
        let mut frames: Vec<u64> = kinds
            .iter()
            .flat_map(|kind| self.frames.get(kind).into_iter().flatten().copied())
            .collect();
        frames.sort_unstable();
        frames.truncate(EVIDENCE_FRAMES);
        frames
    }
}
