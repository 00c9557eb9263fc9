//! Capture files in, frames out.
//!
//! This crate turns pcap and pcapng files (plain, gzip or zstd compressed, or
//! standard input) into a stream of [`Frame`]s: raw link-layer bytes with a
//! timestamp and a link type. Several files are merged into one timeline.
//! It knows nothing about protocols; decoding the bytes is the next stage's job.

use std::fmt;

/// One captured frame, borrowed from the reader's buffer until the next read.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// 1-based position in the merged timeline (Wireshark's frame number for a single file).
    pub number: u64,
    /// Nanoseconds since the Unix epoch, within [`EARLIEST_TIMESTAMP_NS`]`..=`[`LATEST_TIMESTAMP_NS`].
    pub timestamp_ns: i64,
    /// LINKTYPE_* value from the tcpdump.org registry (1 = Ethernet, 113 = SLL, ...).
    pub link_type: u32,
    /// Bytes as captured (may be shorter than `original_len` when snaplen cut it).
    pub data: &'a [u8],
    /// Length of the frame on the wire.
    pub original_len: u32,
    /// Index of the input file this frame came from.
    pub source: usize,
}

/// The earliest and latest times a frame can carry (-2^61 and 2^62 ns: in
/// 1896 and 2116); a timestamp outside is clamped to them. Within that range
/// any two times differ by less than an `i64` holds, so no later stage overflows.
pub const EARLIEST_TIMESTAMP_NS: i64 = -(1 << 61);
pub const LATEST_TIMESTAMP_NS: i64 = 1 << 62;

/// Nanoseconds in a day of UTC (no leap seconds, as timestamps count them).
pub const NS_PER_DAY: i64 = 86_400_000_000_000;

/// How far into its UTC day a timestamp falls, in nanoseconds.
pub fn time_of_day_ns(timestamp_ns: i64) -> i64 {
    timestamp_ns.rem_euclid(NS_PER_DAY)
}

/// A capture that cannot be read further: names the file and, where the
/// data was at fault, the byte offset.
#[derive(Debug, Clone, PartialEq, Eq, record::Wire)]
pub struct CaptureError {
    pub path: String,
    /// Offset where the bad data starts, as [`CaptureError::place`] counts it.
    pub offset: u64,
    /// What the offset counts, if anything.
    pub place: Place,
    /// Frames successfully read from this file before the error.
    pub frames_read: u64,
    pub reason: String,
    /// The input ended inside a record (a capture cut off while it was
    /// written or copied): every whole record before it was read.
    pub cut_short: bool,
}

/// What a [`CaptureError`]'s offset counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, record::Wire)]
pub enum Place {
    /// No offset: the system failed (a file that cannot be opened or
    /// read), or the file is empty.
    Nowhere,
    /// Bytes of the file.
    File,
    /// Bytes of the decompressed stream; `compressed` is how far the
    /// decoder had read the compressed file, where it knows.
    Decompressed { compressed: Option<u64> },
}

impl CaptureError {
    /// Where the error lies, as words to follow the reason: " at byte 24",
    /// " at byte 8877 in the decompressed stream (byte 2048 of the
    /// compressed file)", or nothing.
    pub fn position(&self) -> String {
        let offset = self.offset;
        match self.place {
            Place::Nowhere => String::new(),
            Place::File => format!(" at byte {offset}"),
            Place::Decompressed { compressed: None } => {
                format!(" at byte {offset} in the decompressed stream")
            }
            Place::Decompressed {
                compressed: Some(compressed),
            } => format!(
                " at byte {offset} in the decompressed stream (byte {compressed} of the compressed file)"
            ),
        }
    }
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}{}", self.path, self.reason, self.position())
    }
}

impl std::error::Error for CaptureError {}

mod buffer;
mod mapped;
mod merge;
mod pager;
mod pcap;
mod pcapng;
#[cfg(test)]
mod tests;
mod unzstd;

pub use mapped::MappedFile;
pub use merge::MergedReader;
pub use pager::MapAhead;

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use buffer::StreamBuffer;
use pcap::Pcap;
use pcapng::Pcapng;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Enough to tell every compression and capture format apart.
const MAGIC_LEN: usize = 4;

/// A record located in the buffer but not yet handed out.
#[derive(Debug, Clone, Copy)]
struct Pending {
    data_at: usize,
    data_len: usize,
    /// Bytes to consume once the frame is handed out.
    record_len: usize,
    timestamp_ns: i64,
    link_type: u32,
    original_len: u32,
}

/// A format error before the file name is attached.
#[derive(Debug)]
struct ReadError {
    offset: Option<u64>,
    reason: String,
    cut_short: bool,
    /// Not the data's fault: the system failed, or there is no data.
    nowhere: bool,
}

impl ReadError {
    fn at(offset: u64, reason: impl Into<String>) -> Self {
        ReadError {
            offset: Some(offset),
            reason: reason.into(),
            cut_short: false,
            nowhere: false,
        }
    }

    /// The input ended inside the record that starts at `offset`.
    fn ended_in(offset: u64, reason: impl Into<String>) -> Self {
        ReadError {
            cut_short: true,
            ..ReadError::at(offset, reason)
        }
    }

    /// An error at no offset.
    fn nowhere(reason: impl Into<String>) -> Self {
        ReadError {
            offset: None,
            reason: reason.into(),
            cut_short: false,
            nowhere: true,
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(error: io::Error) -> Self {
        ReadError {
            offset: None,
            reason: error.to_string(),
            // A compressed stream cut short ends this way.
            cut_short: error.kind() == io::ErrorKind::UnexpectedEof,
            // Any other error comes from a decompressor, at the data's fault.
            nowhere: error.raw_os_error().is_some(),
        }
    }
}

enum Format {
    Pcap(Pcap),
    Pcapng(Pcapng),
}

/// Counts bytes taken from the underlying file, for progress on compressed input.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.count.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

/// Counts what a decompressor consumes from a buffered file.
impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, count: usize) {
        self.inner.consume(count);
        self.count.fetch_add(count as u64, Ordering::Relaxed);
    }
}

/// Reads one capture file frame by frame.
pub struct CaptureReader {
    path: String,
    buffer: StreamBuffer,
    format: Format,
    pending: Option<Pending>,
    /// The record handed out last; consumed when the next is located.
    handed_out_len: usize,
    frames_read: u64,
    /// None for a mapped file, whose position is the buffer's offset.
    file_bytes_read: Option<Arc<AtomicU64>>,
    /// The buffer holds the output of a decompressor.
    decompressed: bool,
    total_bytes: Option<u64>,
}

/// Opens one capture; `-` is standard input. Compression and format are detected by magic.
pub fn open(path: &str) -> Result<CaptureReader, CaptureError> {
    let failed = |error: io::Error| CaptureError {
        path: path.to_string(),
        offset: 0,
        place: Place::Nowhere,
        frames_read: 0,
        reason: error.to_string(),
        cut_short: false,
    };
    if path == "-" {
        return CaptureReader::from_reader(path, io::stdin());
    }
    let file = File::open(path).map_err(failed)?;
    let metadata = file.metadata().map_err(failed)?;
    if metadata.is_file() && metadata.len() > 0 {
        // Safety: the map is read-only; a file truncated by another process
        // while we read it is outside what any reader can guard against.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            let _ = map.advise(memmap2::Advice::Sequential);
            return CaptureReader::new(path, StreamBuffer::mapped(map), None, Some(metadata.len()));
        }
    }
    CaptureReader::from_stream(path, file, Some(metadata.len()))
}

impl CaptureReader {
    /// Reads a capture from any byte stream, of unknown size; `name` is used in errors.
    pub fn from_reader(
        name: &str,
        reader: impl Read + Send + 'static,
    ) -> Result<CaptureReader, CaptureError> {
        Self::from_stream(name, reader, None)
    }

    /// A stream whose size may be known, for progress.
    fn from_stream(
        name: &str,
        reader: impl Read + Send + 'static,
        total_bytes: Option<u64>,
    ) -> Result<CaptureReader, CaptureError> {
        let count = Arc::new(AtomicU64::new(0));
        let counting = Counting {
            inner: reader,
            count: Arc::clone(&count),
        };
        let buffer = StreamBuffer::new(Box::new(counting));
        Self::new(name, buffer, Some(count), total_bytes)
    }

    /// `counter` counts bytes taken from the file when they pass through a stream.
    fn new(
        name: &str,
        buffer: StreamBuffer,
        counter: Option<Arc<AtomicU64>>,
        total_bytes: Option<u64>,
    ) -> Result<CaptureReader, CaptureError> {
        let mut reader = CaptureReader {
            path: name.to_string(),
            buffer,
            format: Format::Pcapng(Pcapng::new()),
            pending: None,
            handed_out_len: 0,
            frames_read: 0,
            file_bytes_read: counter,
            decompressed: false,
            total_bytes,
        };
        reader.detect().map_err(|error| reader.error(error))?;
        Ok(reader)
    }

    fn detect(&mut self) -> Result<(), ReadError> {
        self.buffer.fill(MAGIC_LEN)?;
        let head = self.buffer.available();
        if head.starts_with(&GZIP_MAGIC) || unzstd::starts_a_frame(head) {
            self.decompress()?;
        }
        if self.buffer.fill(MAGIC_LEN)? == 0 {
            return Err(ReadError::nowhere(if self.decompressed {
                "empty once decompressed"
            } else {
                "empty file"
            }));
        }
        let magic = self.buffer.available().first_chunk::<MAGIC_LEN>().copied();
        let pcap_magics = [pcap::MAGIC_MICROS, pcap::MAGIC_NANOS];
        self.format = match magic {
            Some(pcapng::SECTION_HEADER) => Format::Pcapng(Pcapng::new()),
            Some(magic)
                if pcap_magics.contains(&magic) || pcap_magics.contains(&pcap::reversed(magic)) =>
            {
                Format::Pcap(Pcap::open(&mut self.buffer)?)
            }
            _ => return Err(ReadError::at(0, "not a pcap or pcapng file")),
        };
        Ok(())
    }

    /// Replaces the buffer with one reading through a decompressor. Progress
    /// then counts the compressed bytes the decompressor takes.
    fn decompress(&mut self) -> Result<(), ReadError> {
        let is_gzip = self.buffer.available().starts_with(&GZIP_MAGIC);
        let file = std::mem::replace(&mut self.buffer, StreamBuffer::new(Box::new(io::empty())));
        let count = Arc::new(AtomicU64::new(0));
        self.file_bytes_read = Some(Arc::clone(&count));
        let compressed = Counting { inner: file, count };
        self.decompressed = true;
        let source: Box<dyn Read + Send> = if is_gzip {
            Box::new(flate2::bufread::MultiGzDecoder::new(compressed))
        } else {
            Box::new(unzstd::Unzstd::new(compressed)?)
        };
        self.buffer = StreamBuffer::new(source);
        Ok(())
    }

    fn error(&self, error: ReadError) -> CaptureError {
        let from_decoder = error.offset.is_none();
        let place = if error.nowhere {
            Place::Nowhere
        } else if self.decompressed {
            Place::Decompressed {
                compressed: from_decoder.then(|| self.bytes_read()),
            }
        } else {
            Place::File
        };
        CaptureError {
            path: self.path.clone(),
            offset: error.offset.unwrap_or(self.buffer.offset()),
            place,
            frames_read: self.frames_read,
            reason: error.reason,
            cut_short: error.cut_short,
        }
    }

    /// Locates the next record without handing it out; None at the end.
    fn peek(&mut self) -> Result<Option<Pending>, CaptureError> {
        if self.pending.is_none() {
            self.buffer
                .consume(std::mem::take(&mut self.handed_out_len));
            let next = match &mut self.format {
                Format::Pcap(pcap) => pcap.next(&mut self.buffer),
                Format::Pcapng(pcapng) => pcapng.next(&mut self.buffer),
            };
            self.pending = next.map_err(|error| {
                let mut error = self.error(error);
                error.reason = format!("{} (frame {})", error.reason, self.frames_read + 1);
                error
            })?;
        }
        Ok(self.pending)
    }

    /// Timestamp of the next frame, without consuming it.
    pub fn peek_timestamp(&mut self) -> Result<Option<i64>, CaptureError> {
        Ok(self.peek()?.map(|pending| pending.timestamp_ns))
    }

    /// The next frame, or None at a clean end of file. The frame borrows a
    /// buffer that the next call reuses.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        let Some(pending) = self.peek()? else {
            return Ok(None);
        };
        self.pending = None;
        self.frames_read += 1;
        self.handed_out_len = pending.record_len;
        self.buffer.prefetch(pending.record_len);
        let frame = Frame {
            number: self.frames_read,
            timestamp_ns: pending.timestamp_ns,
            link_type: pending.link_type,
            data: self.buffer.slice(pending.data_at, pending.data_len),
            original_len: pending.original_len,
            source: 0,
        };
        Ok(Some(frame))
    }

    /// For a mapped file: a handle that maps its pages ahead of this reader,
    /// for another thread to call (see [`MapAhead`]).
    pub fn map_ahead(&self) -> Option<MapAhead> {
        self.buffer.map_ahead()
    }

    /// For a file read in place (mapped, not decompressed): its bytes, so
    /// that a frame's can be handed on by place.
    pub fn mapped_file(&self) -> Option<MappedFile> {
        self.buffer.mapped_file()
    }

    /// Keeps the pages of a mapped file from `offset` on mapped, behind the
    /// reader too, until told another offset (None: none kept).
    pub fn hold_from(&mut self, offset: Option<usize>) {
        self.buffer.hold_from(offset);
    }

    /// Bytes taken from the file so far (compressed bytes for compressed input).
    pub fn bytes_read(&self) -> u64 {
        match &self.file_bytes_read {
            Some(counter) => counter.load(Ordering::Relaxed),
            None => self.buffer.offset(),
        }
    }

    pub fn total_bytes(&self) -> Option<u64> {
        self.total_bytes
    }
}
