//! A large read buffer over any byte stream, or a whole file mapped into
//! memory, handing out slices in place.

use std::io::{self, BufRead, Read};
use std::sync::Arc;

use memmap2::Mmap;

use crate::mapped::MappedFile;
use crate::pager::{MapAhead, Releaser};

/// Big enough that refills are rare; records are parsed where they lie.
const INITIAL_CAPACITY: usize = 4 << 20;
#[cfg(target_arch = "x86_64")]
const CACHE_LINE: usize = 64;
#[cfg(target_arch = "x86_64")]
const PAGE: usize = 4096;

enum Backing {
    Stream {
        source: Box<dyn Read + Send>,
        bytes: Vec<u8>,
    },
    /// A regular file, mapped: no copy from the page cache, no refills.
    Mapped { map: Arc<Mmap>, releaser: Releaser },
}

pub struct StreamBuffer {
    backing: Backing,
    start: usize,
    end: usize,
    /// Stream offset of `bytes[start]`.
    offset: u64,
    eof: bool,
}

impl StreamBuffer {
    pub fn new(source: Box<dyn Read + Send>) -> Self {
        StreamBuffer {
            backing: Backing::Stream {
                source,
                bytes: vec![0; INITIAL_CAPACITY],
            },
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
        }
    }

    pub fn mapped(map: Mmap) -> Self {
        let end = map.len();
        let map = Arc::new(map);
        StreamBuffer {
            backing: Backing::Mapped {
                releaser: Releaser::new(Arc::clone(&map)),
                map,
            },
            start: 0,
            end,
            offset: 0,
            eof: true,
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.backing {
            Backing::Stream { bytes, .. } => bytes,
            Backing::Mapped { map, .. } => map,
        }
    }

    /// For a mapped file: a handle that maps its pages ahead of this buffer's
    /// reader (see [`MapAhead`]).
    pub fn map_ahead(&self) -> Option<MapAhead> {
        match &self.backing {
            Backing::Mapped { releaser, .. } => Some(releaser.map_ahead()),
            Backing::Stream { .. } => None,
        }
    }

    /// For a mapped file: its bytes, to hand on by place.
    pub fn mapped_file(&self) -> Option<MappedFile> {
        match &self.backing {
            Backing::Mapped { map, .. } => Some(MappedFile::new(Arc::clone(map))),
            Backing::Stream { .. } => None,
        }
    }

    /// For a mapped file: keeps its pages from `offset` on mapped (see
    /// [`MergedReader::hold_from`](crate::MergedReader::hold_from)).
    pub fn hold_from(&mut self, offset: Option<usize>) {
        if let Backing::Mapped { releaser, .. } = &mut self.backing {
            releaser.hold_from(offset);
        }
    }

    /// Stream offset of the next unconsumed byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The unconsumed bytes in the buffer.
    pub fn available(&self) -> &[u8] {
        &self.bytes()[self.start..self.end]
    }

    /// Makes at least `needed` bytes available; returns how many are (fewer only at end of stream).
    pub fn fill(&mut self, needed: usize) -> io::Result<usize> {
        while self.end - self.start < needed && !self.eof {
            let Backing::Stream { source, bytes } = &mut self.backing else {
                break;
            };
            if bytes.len() - self.start < needed || self.end == bytes.len() {
                compact(bytes, &mut self.start, &mut self.end, needed);
                continue;
            }
            match source.read(&mut bytes[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(self.end - self.start)
    }

    /// Marks `count` bytes as read.
    pub fn consume(&mut self, count: usize) {
        let count = count.min(self.end - self.start);
        self.start += count;
        self.offset += count as u64;
        if let Backing::Mapped { releaser, .. } = &mut self.backing {
            releaser.release_before(self.start);
        }
    }

    /// Asks the CPU to start loading the first bytes `ahead` of the unconsumed
    /// ones (the next record's header and the frame headers after it) while
    /// the current record is worked on, and to look up the page after them.
    pub fn prefetch(&self, ahead: usize) {
        #[cfg(target_arch = "x86_64")]
        for at in [ahead, ahead + CACHE_LINE, ahead + PAGE] {
            if let Some(byte) = self.available().get(at) {
                // Safety: a prefetch only moves bytes into caches; the address is in bounds.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        std::ptr::from_ref(byte).cast::<i8>(),
                    )
                };
            }
        }
    }

    /// The bytes at `range_start..range_start+len` of the available window.
    pub fn slice(&self, range_start: usize, len: usize) -> &[u8] {
        &self.available()[range_start..range_start + len]
    }
}

/// Moves the unread bytes to the front, growing the buffer to hold `needed`.
fn compact(bytes: &mut Vec<u8>, start: &mut usize, end: &mut usize, needed: usize) {
    bytes.copy_within(*start..*end, 0);
    *end -= *start;
    *start = 0;
    if bytes.len() < needed {
        bytes.resize(needed.next_power_of_two(), 0);
    }
}

/// Lets a decompressor read the bytes already buffered, then the rest of the stream.
impl Read for StreamBuffer {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let count = self.fill_buf()?.read(out)?;
        self.consume(count);
        Ok(count)
    }
}

/// Lets a decompressor work on the buffer in place, without another copy.
impl BufRead for StreamBuffer {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.available().is_empty() {
            self.fill(1)?;
        }
        Ok(self.available())
    }

    fn consume(&mut self, count: usize) {
        StreamBuffer::consume(self, count);
    }
}
