//! The page-table work of reading a mapped file: mapping its pages into the
//! process before the reader needs them and releasing them behind it, so
//! resident memory stays small however large the file. The reader does this
//! itself unless it hands its [`Pager`] to another thread, which then moves
//! the kernel's share of the work off the reading thread.

use std::sync::Arc;

use memmap2::{Advice, Mmap, UncheckedAdvice};

/// Pages are released behind the reader in steps of this size.
const RELEASE_STEP: usize = 16 << 20;
/// How far ahead of the reader a pager on another thread maps pages.
const MAP_AHEAD: usize = 32 << 20;
/// Pages are mapped ahead in steps of this size.
const MAP_STEP: usize = 4 << 20;
const PAGE: usize = 4096;

pub struct Pager {
    map: Arc<Mmap>,
    /// Where the pages still mapped into this process begin.
    released: usize,
    /// Where the pages not yet mapped ahead begin.
    mapped_ahead: usize,
}

impl Pager {
    pub(crate) fn new(map: Arc<Mmap>) -> Self {
        Pager {
            map,
            released: 0,
            mapped_ahead: 0,
        }
    }

    /// The reader has moved past `offset`: releases what lies well behind it
    /// and maps what lies ahead of it.
    pub fn advance(&mut self, offset: u64) {
        let offset = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.map.len());
        self.release_before(offset);
        self.map_ahead_of(offset);
    }

    /// Releases whole steps of pages before `offset`, which the reader has left.
    pub(crate) fn release_before(&mut self, offset: usize) {
        let left = offset / PAGE * PAGE;
        if left - self.released < RELEASE_STEP {
            return;
        }
        // Safety: the file is mapped read-only and the reader never goes back:
        // these pages hold no slice still handed out, and a page touched again
        // would only be read again from the file.
        let _ = unsafe {
            self.map.unchecked_advise_range(
                UncheckedAdvice::DontNeed,
                self.released,
                left - self.released,
            )
        };
        self.released = left;
    }

    fn map_ahead_of(&mut self, offset: usize) {
        let target = offset.saturating_add(MAP_AHEAD).min(self.map.len());
        while self.mapped_ahead < target {
            let start = self.mapped_ahead.max(offset / PAGE * PAGE);
            let len = MAP_STEP.min(self.map.len() - start);
            // A failure (an old kernel) only leaves the reader to fault the pages in.
            let _ = self.map.advise_range(Advice::PopulateRead, start, len);
            self.mapped_ahead = start + len;
        }
    }
}
