//! A large read buffer over any byte stream, handing out slices in place.

use std::io::{self, Read};

/// Big enough that refills are rare; records are parsed where they lie.
const INITIAL_CAPACITY: usize = 4 << 20;

pub struct StreamBuffer {
    source: Box<dyn Read + Send>,
    bytes: Vec<u8>,
    start: usize,
    end: usize,
    /// Stream offset of `bytes[start]`.
    offset: u64,
    eof: bool,
}

impl StreamBuffer {
    pub fn new(source: Box<dyn Read + Send>) -> Self {
        StreamBuffer {
            source,
            bytes: vec![0; INITIAL_CAPACITY],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
        }
    }

    /// Stream offset of the next unconsumed byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The unconsumed bytes in the buffer.
    pub fn available(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// Makes at least `needed` bytes available; returns how many are (fewer only at end of stream).
    pub fn fill(&mut self, needed: usize) -> io::Result<usize> {
        while self.end - self.start < needed && !self.eof {
            if self.bytes.len() - self.start < needed {
                self.make_room(needed);
            }
            if self.end == self.bytes.len() {
                self.compact();
            }
            match self.source.read(&mut self.bytes[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(read) => self.end += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(self.end - self.start)
    }

    fn compact(&mut self) {
        self.bytes.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
    }

    fn make_room(&mut self, needed: usize) {
        self.compact();
        if self.bytes.len() < needed {
            self.bytes.resize(needed.next_power_of_two(), 0);
        }
    }

    /// Marks `count` bytes as read.
    pub fn consume(&mut self, count: usize) {
        let count = count.min(self.end - self.start);
        self.start += count;
        self.offset += count as u64;
    }

    /// The bytes at `range_start..range_start+len` of the available window.
    pub fn slice(&self, range_start: usize, len: usize) -> &[u8] {
        &self.available()[range_start..range_start + len]
    }
}

/// Lets a decompressor read the bytes already buffered, then the rest of the stream.
impl Read for StreamBuffer {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.available().is_empty() {
            self.fill(1)?;
        }
        let count = self.available().len().min(out.len());
        out[..count].copy_from_slice(&self.available()[..count]);
        self.consume(count);
        Ok(count)
    }
}
