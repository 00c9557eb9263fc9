//! The classic pcap format: a 24-byte file header, then records of a 16-byte
//! header and the captured bytes, in either byte order, with microsecond or
//! nanosecond timestamps.

use crate::buffer::StreamBuffer;
use crate::{Pending, ReadError};

pub const MAGIC_MICROS: [u8; 4] = [0xa1, 0xb2, 0xc3, 0xd4];
pub const MAGIC_NANOS: [u8; 4] = [0xa1, 0xb2, 0x3c, 0x4d];

const FILE_HEADER_LEN: usize = 24;
const SNAPLEN_AT: usize = 16;
const LINK_TYPE_AT: usize = 20;
/// The link type is the low 16 bits; above them lie reserved bits and the
/// FCS length, which say nothing about how to decode the frame.
const LINK_TYPE_MASK: u32 = 0xffff;

const RECORD_HEADER_LEN: usize = 16;
const SECONDS_AT: usize = 0;
const FRACTION_AT: usize = 4;
const CAPTURED_LEN_AT: usize = 8;
const ORIGINAL_LEN_AT: usize = 12;

/// libpcap's largest snapshot length; a record may exceed a smaller snaplen
/// (some writers do), but not this unless the file header allows more.
const LARGEST_SNAPLEN: u32 = 262_144;
/// No link type has records this large; larger always means a corrupt length.
const MAX_RECORD_LEN: u32 = 4 * LARGEST_SNAPLEN;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_MICRO: i64 = 1_000;

pub struct Pcap {
    big_endian: bool,
    nanos_per_tick: i64,
    link_type: u32,
    max_record_len: u32,
}

impl Pcap {
    /// Reads the file header; the caller has checked that the magic is one of ours.
    pub fn open(buffer: &mut StreamBuffer) -> Result<Pcap, ReadError> {
        buffer.fill(FILE_HEADER_LEN)?;
        let Some(header) = buffer.available().first_chunk::<FILE_HEADER_LEN>() else {
            return Err(ReadError::at(0, "truncated pcap file header"));
        };
        let magic = [header[0], header[1], header[2], header[3]];
        let big_endian = magic == MAGIC_MICROS || magic == MAGIC_NANOS;
        let nanos = magic == MAGIC_NANOS || magic == reversed(MAGIC_NANOS);
        let read_u32 = |at| u32_at(header, at, big_endian);
        let snaplen = read_u32(SNAPLEN_AT);
        let pcap = Pcap {
            big_endian,
            nanos_per_tick: if nanos { 1 } else { NANOS_PER_MICRO },
            link_type: read_u32(LINK_TYPE_AT) & LINK_TYPE_MASK,
            max_record_len: snaplen.clamp(LARGEST_SNAPLEN, MAX_RECORD_LEN),
        };
        buffer.consume(FILE_HEADER_LEN);
        Ok(pcap)
    }

    /// Parses the next record; None at a clean end of file.
    pub fn next(&self, buffer: &mut StreamBuffer) -> Result<Option<Pending>, ReadError> {
        let record_at = buffer.offset();
        match buffer.fill(RECORD_HEADER_LEN)? {
            0 => return Ok(None),
            short if short < RECORD_HEADER_LEN => {
                return Err(ReadError::ended_in(
                    record_at,
                    "truncated packet record header",
                ))
            }
            _ => {}
        }
        let header = buffer.available().get(..RECORD_HEADER_LEN).unwrap_or(&[]);
        let read_u32 = |at| u32_at(header, at, self.big_endian);
        let captured = read_u32(CAPTURED_LEN_AT);
        if captured > self.max_record_len {
            return Err(ReadError::at(
                record_at,
                format!("implausible record length {captured}"),
            ));
        }
        let timestamp_ns = i64::from(read_u32(SECONDS_AT))
            .saturating_mul(NANOS_PER_SECOND)
            .saturating_add(i64::from(read_u32(FRACTION_AT)) * self.nanos_per_tick);
        let original_len = read_u32(ORIGINAL_LEN_AT).max(captured);
        let data_len = captured as usize;
        let record_len = RECORD_HEADER_LEN + data_len;
        if buffer.fill(record_len)? < record_len {
            return Err(ReadError::ended_in(record_at, "truncated packet record"));
        }
        Ok(Some(Pending {
            data_at: RECORD_HEADER_LEN,
            data_len,
            record_len,
            timestamp_ns,
            link_type: self.link_type,
            original_len,
        }))
    }
}

/// The 32-bit field at `at`, or 0 past the end (callers check lengths first).
fn u32_at(bytes: &[u8], at: usize, big_endian: bool) -> u32 {
    let Some(quad) = bytes.get(at..).and_then(<[u8]>::first_chunk::<4>) else {
        return 0;
    };
    if big_endian {
        u32::from_be_bytes(*quad)
    } else {
        u32::from_le_bytes(*quad)
    }
}

pub fn reversed(magic: [u8; 4]) -> [u8; 4] {
    [magic[3], magic[2], magic[1], magic[0]]
}
