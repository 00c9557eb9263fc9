//! The page-table work of reading a mapped file. [`Releaser`] drops the pages
//! behind the reader, so resident memory stays small however large the file.
//! [`MapAhead`] maps pages into the process before the reader reaches them;
//! called from another thread, it takes that share of the kernel's work off
//! the reading thread, which then rarely faults.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use memmap2::{Advice, Mmap, UncheckedAdvice};

/// Pages are released behind the reader in steps of this size.
const RELEASE_STEP: usize = 4 << 20;
/// How far ahead of the reader pages are mapped.
const MAP_AHEAD: usize = 8 << 20;
/// Pages are mapped ahead in steps of this size.
const MAP_STEP: usize = 1 << 20;
const PAGE: usize = 4096;

pub(crate) struct Releaser {
    map: Arc<Mmap>,
    /// Where the pages still mapped into this process begin; shared with
    /// [`MapAhead`], which must not map pages back in behind it.
    released: Arc<AtomicUsize>,
    /// Where the pages that a holder of the file's places still reads begin.
    held_from: usize,
}

impl Releaser {
    pub(crate) fn new(map: Arc<Mmap>) -> Self {
        Releaser {
            map,
            released: Arc::new(AtomicUsize::new(0)),
            held_from: usize::MAX,
        }
    }

    /// Keeps the pages from `offset` on mapped (all of them, with None)
    /// until told otherwise.
    pub(crate) fn hold_from(&mut self, offset: Option<usize>) {
        self.held_from = offset.unwrap_or(usize::MAX);
    }

    /// A handle that maps pages ahead of the reader this releaser follows.
    pub(crate) fn map_ahead(&self) -> MapAhead {
        MapAhead {
            map: Arc::clone(&self.map),
            released: Arc::clone(&self.released),
            mapped: 0,
        }
    }

    /// Releases whole steps of pages before `offset`, which the reader has
    /// left, and before the pages held.
    pub(crate) fn release_before(&mut self, offset: usize) {
        let left = offset.min(self.held_from) / PAGE * PAGE;
        let released = self.released.load(Ordering::SeqCst);
        if left.saturating_sub(released) < RELEASE_STEP {
            return;
        }
        // Said before it is done, so [`MapAhead`] maps none of these pages
        // from now on, and releases again any it was mapping meanwhile.
        self.released.store(left, Ordering::SeqCst);
        release(&self.map, released, left);
    }
}

/// Releases the pages of `[from, to)`.
fn release(map: &Mmap, from: usize, to: usize) {
    // Safety: pages before the reader's released mark lie before every
    // slice still handed out.
    let _ = unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, from, to - from) };
}

/// Maps a mapped file's pages ahead of its reader, from another thread.
pub struct MapAhead {
    map: Arc<Mmap>,
    released: Arc<AtomicUsize>,
    /// Where the pages not yet mapped ahead begin.
    mapped: usize,
}

impl MapAhead {
    /// The reader was at `offset` (it may have moved on since): maps the
    /// pages up to `MAP_AHEAD` beyond it, never those already released.
    pub fn advance(&mut self, offset: u64) {
        let len = self.map.len();
        let offset = usize::try_from(offset).map_or(len, |offset| offset.min(len));
        let target = offset.saturating_add(MAP_AHEAD).min(len);
        let floor = self
            .released
            .load(Ordering::SeqCst)
            .max(offset / PAGE * PAGE);
        while self.mapped < target {
            let start = self.mapped.max(floor);
            let step = MAP_STEP.min(len - start);
            // A failure (a kernel before 5.14) leaves the reader to fault the pages in.
            let _ = self.map.advise_range(Advice::PopulateRead, start, step);
            self.mapped = start + step;
            // The reader may have released some of them meanwhile, and
            // would never release them again.
            let released = self.released.load(Ordering::SeqCst);
            if released > start {
                release(&self.map, start, released.min(self.mapped));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(len: usize) -> Arc<Mmap> {
        let path = std::env::temp_dir().join(format!("pager-{}-{len}", std::process::id()));
        std::fs::write(&path, vec![7u8; len]).expect("file written");
        let file = std::fs::File::open(&path).expect("file opened");
        // Safety: the file is this test's own, and unchanged while mapped.
        let map = unsafe { Mmap::map(&file) }.expect("file mapped");
        let _ = std::fs::remove_file(path);
        Arc::new(map)
    }

    #[test]
    fn pages_held_are_released_only_once_let_go() {
        let mut releaser = Releaser::new(mapped(16 << 20));
        releaser.hold_from(Some(1 << 20));
        releaser.release_before(12 << 20);
        assert_eq!(
            releaser.released.load(Ordering::SeqCst),
            0,
            "held from 1 MB on"
        );
        releaser.hold_from(Some(9 << 20));
        releaser.release_before(12 << 20);
        assert_eq!(releaser.released.load(Ordering::SeqCst), 9 << 20);
        releaser.hold_from(None);
        releaser.release_before(12 << 20);
        assert_eq!(
            releaser.released.load(Ordering::SeqCst),
            9 << 20,
            "less than a step since"
        );
        releaser.release_before(13 << 20);
        assert_eq!(releaser.released.load(Ordering::SeqCst), 13 << 20);
    }
}
