//! A mapped capture file shared with other threads: a frame's bytes are
//! handed on by where they lie in the file rather than copied.

use std::ops::Range;
use std::sync::Arc;

use memmap2::Mmap;

/// A mapped file's bytes, kept mapped as long as a handle lives. The reader
/// releases the pages behind it, so a holder of places in the file says
/// which it still needs with [`MergedReader::hold_from`](crate::MergedReader::hold_from);
/// a released page read again is faulted back in from the page cache.
#[derive(Clone)]
pub struct MappedFile {
    map: Arc<Mmap>,
}

impl MappedFile {
    pub(crate) fn new(map: Arc<Mmap>) -> Self {
        MappedFile { map }
    }

    /// Where `bytes` lie in this file, when they are a slice of it (a frame's
    /// data, or a part of it, read from this file).
    pub fn place_of(&self, bytes: &[u8]) -> Option<Range<usize>> {
        let file = self.map.as_ptr() as usize;
        let start = (bytes.as_ptr() as usize).checked_sub(file)?;
        let end = start.checked_add(bytes.len())?;
        (end <= self.map.len()).then_some(start..end)
    }

    /// The bytes at `place`, as [`MappedFile::place_of`] gave it.
    pub fn at(&self, place: Range<usize>) -> &[u8] {
        &self.map[place]
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("len", &self.map.len())
            .finish()
    }
}
