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
    /// Nanoseconds since the Unix epoch.
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

/// A capture that cannot be read further: names the file and the byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    pub path: String,
    /// Offset in the (decompressed) stream where the bad data starts.
    pub offset: u64,
    /// Frames successfully read from this file before the error.
    pub frames_read: u64,
    pub reason: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} at byte {}", self.path, self.reason, self.offset)
    }
}

impl std::error::Error for CaptureError {}
