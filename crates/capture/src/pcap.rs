//! The classic pcap format: a 24-byte file header, then 16-byte record headers.

use crate::buffer::StreamBuffer;
use crate::{Pending, ReadError};

pub const MAGIC_MICROS: [u8; 4] = [0xa1, 0xb2, 0xc3, 0xd4];
pub const MAGIC_NANOS: [u8; 4] = [0xa1, 0xb2, 0x3c, 0x4d];
const FILE_HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 16;
const LINK_TYPE_AT: usize = 20;
/// The upper bits of the link-type field carry FCS information, not the type.
const LINK_TYPE_MASK: u32 = 0x0fff_ffff;
/// No real capture has records this large; larger means a corrupt length.
pub const MAX_RECORD_LEN: usize = 1 << 20;

pub struct Pcap {
    big_endian: bool,
    nanos: bool,
    link_type: u32,
}

impl Pcap {
    /// Reads the file header; the caller has checked the magic.
    pub fn open(buffer: &mut StreamBuffer) -> Result<Pcap, ReadError> {
        if buffer.fill(FILE_HEADER_LEN)? < FILE_HEADER_LEN {
            return Err(ReadError::at(0, "truncated pcap file header"));
        }
        let header = &buffer.available()[..FILE_HEADER_LEN];
        let magic = [header[0], header[1], header[2], header[3]];
        let big_endian = magic == MAGIC_MICROS || magic == MAGIC_NANOS;
        let nanos = magic == MAGIC_NANOS || magic == reversed(MAGIC_NANOS);
        let pcap = Pcap {
            big_endian,
            nanos,
            link_type: 0,
        };
        let link_type = pcap.u32_at(header, LINK_TYPE_AT) & LINK_TYPE_MASK;
        buffer.consume(FILE_HEADER_LEN);
        Ok(Pcap { link_type, ..pcap })
    }

    fn u32_at(&self, bytes: &[u8], at: usize) -> u32 {
        let quad = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(quad)
        } else {
            u32::from_le_bytes(quad)
        }
    }

    /// Parses the next record header; None at a clean end of file.
    pub fn next(&self, buffer: &mut StreamBuffer) -> Result<Option<Pending>, ReadError> {
        let record_at = buffer.offset();
        match buffer.fill(RECORD_HEADER_LEN)? {
            0 => return Ok(None),
            short if short < RECORD_HEADER_LEN => {
                return Err(ReadError::at(record_at, "truncated packet record header"))
            }
            _ => {}
        }
        let header = &buffer.available()[..RECORD_HEADER_LEN];
        let seconds = i64::from(self.u32_at(header, 0));
        let fraction = i64::from(self.u32_at(header, 4));
        let captured = self.u32_at(header, 8) as usize;
        let original_len = self.u32_at(header, 12);
        if captured > MAX_RECORD_LEN {
            return Err(ReadError::at(
                record_at,
                format!("implausible packet record length {captured}"),
            ));
        }
        let record_len = RECORD_HEADER_LEN + captured;
        if buffer.fill(record_len)? < record_len {
            return Err(ReadError::at(record_at, "truncated packet record"));
        }
        let fraction_ns = if self.nanos {
            fraction
        } else {
            fraction * 1000
        };
        Ok(Some(Pending {
            data_at: RECORD_HEADER_LEN,
            data_len: captured,
            record_len,
            timestamp_ns: seconds
                .saturating_mul(1_000_000_000)
                .saturating_add(fraction_ns),
            link_type: self.link_type,
            original_len: original_len.max(captured as u32),
        }))
    }
}

pub fn reversed(magic: [u8; 4]) -> [u8; 4] {
    [magic[3], magic[2], magic[1], magic[0]]
}
