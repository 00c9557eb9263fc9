//! The pcapng format: sections of length-framed blocks. Each section has its
//! own byte order and interfaces; each interface its link type and clock.

use crate::buffer::StreamBuffer;
use crate::{Pending, ReadError};

/// The section header block's type, the same in both byte orders.
pub const SECTION_HEADER: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

mod block_type {
    pub const SECTION_HEADER: u32 = 0x0a0d_0d0a;
    pub const INTERFACE_DESCRIPTION: u32 = 1;
    pub const OBSOLETE_PACKET: u32 = 2;
    pub const SIMPLE_PACKET: u32 = 3;
    pub const ENHANCED_PACKET: u32 = 6;
}

/// Every block: type, total length, body, total length again.
const BLOCK_TYPE_AT: usize = 0;
const BLOCK_LEN_AT: usize = 4;
const BLOCK_HEADER_LEN: usize = 8;
const BLOCK_TRAILER_LEN: usize = 4;
const MIN_BLOCK_LEN: usize = BLOCK_HEADER_LEN + BLOCK_TRAILER_LEN;
const BLOCK_ALIGNMENT: usize = 4;
/// Larger blocks mean a corrupt length field.
const MAX_BLOCK_LEN: usize = 16 << 20;

/// Section header: the byte-order magic follows the block header; the fixed
/// part (magic, version, section length) takes 16 bytes.
const BYTE_ORDER_MAGIC_AT: usize = BLOCK_HEADER_LEN;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
const MIN_SECTION_HEADER_LEN: usize = MIN_BLOCK_LEN + 16;
/// In the section header's body, after the byte-order magic; the minor follows.
const SECTION_MAJOR_VERSION_AT: usize = 4;

/// Interface description body: link type, reserved, snaplen, options.
const IDB_LINK_TYPE_AT: usize = 0;
const IDB_SNAPLEN_AT: usize = 4;
const IDB_OPTIONS_AT: usize = 8;

/// Options: code, value length, value padded to 32 bits.
const OPTION_CODE_AT: usize = 0;
const OPTION_LEN_AT: usize = 2;
const OPTION_VALUE_AT: usize = 4;
const OPTION_END: u16 = 0;
const OPTION_TSRESOL: u16 = 9;
const OPTION_TSOFFSET: u16 = 14;
/// if_tsresol: the high bit picks a power of two, else a power of ten.
const TSRESOL_POWER_OF_TWO: u8 = 0x80;
const TSRESOL_EXPONENT: u8 = 0x7f;
const DEFAULT_UNITS_PER_SECOND: u64 = 1_000_000;

/// Enhanced packet body; the obsolete packet block has the same layout with
/// a 16-bit interface id followed by a 16-bit drop count.
const PACKET_INTERFACE_AT: usize = 0;
const PACKET_TIMESTAMP_HIGH_AT: usize = 4;
const PACKET_TIMESTAMP_LOW_AT: usize = 8;
const PACKET_CAPTURED_LEN_AT: usize = 12;
const PACKET_ORIGINAL_LEN_AT: usize = 16;
const PACKET_DATA_AT: usize = 20;

/// Simple packet body: original length, then data; always interface 0.
const SIMPLE_ORIGINAL_LEN_AT: usize = 0;
const SIMPLE_DATA_AT: usize = 4;
const SIMPLE_INTERFACE: u32 = 0;

const NANOS_PER_SECOND: i64 = 1_000_000_000;

struct Interface {
    link_type: u32,
    snaplen: u32,
    units_per_second: u64,
    offset_seconds: i64,
}

pub struct Pcapng {
    big_endian: bool,
    interfaces: Vec<Interface>,
    /// Simple packets carry no timestamp; they take the previous packet's.
    last_timestamp_ns: i64,
}

/// Reads integers in the current section's byte order; None past the end.
struct Fields<'a> {
    bytes: &'a [u8],
    big_endian: bool,
}

impl Fields<'_> {
    fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        self.bytes.get(at..)?.first_chunk::<N>().copied()
    }

    fn u16(&self, at: usize) -> Option<u16> {
        let pair = self.array(at)?;
        Some(if self.big_endian {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        })
    }

    fn u32(&self, at: usize) -> Option<u32> {
        let quad = self.array(at)?;
        Some(if self.big_endian {
            u32::from_be_bytes(quad)
        } else {
            u32::from_le_bytes(quad)
        })
    }

    fn i64(&self, at: usize) -> Option<i64> {
        let octet = self.array(at)?;
        Some(if self.big_endian {
            i64::from_be_bytes(octet)
        } else {
            i64::from_le_bytes(octet)
        })
    }
}

/// A packet's fields before its interface is applied.
struct RawPacket {
    interface: u32,
    ticks: u64,
    captured: u32,
    original: u32,
}

impl Pcapng {
    pub fn new() -> Self {
        Pcapng {
            big_endian: false,
            interfaces: Vec::new(),
            last_timestamp_ns: 0,
        }
    }

    /// Reads blocks until the next packet; None at a clean end of file.
    pub fn next(&mut self, buffer: &mut StreamBuffer) -> Result<Option<Pending>, ReadError> {
        loop {
            let block_at = buffer.offset();
            let Some((kind, total_len)) = self.block(buffer, block_at)? else {
                return Ok(None);
            };
            let body = buffer
                .available()
                .get(BLOCK_HEADER_LEN..total_len - BLOCK_TRAILER_LEN)
                .unwrap_or(&[]);
            match self.interpret(kind, body, block_at)? {
                Some(mut pending) => {
                    pending.data_at += BLOCK_HEADER_LEN;
                    pending.record_len = total_len;
                    self.last_timestamp_ns = pending.timestamp_ns;
                    return Ok(Some(pending));
                }
                None => buffer.consume(total_len),
            }
        }
    }

    /// Brings the next whole block into the buffer, checking its framing;
    /// returns its type and total length, or None at a clean end of file.
    fn block(
        &mut self,
        buffer: &mut StreamBuffer,
        block_at: u64,
    ) -> Result<Option<(u32, usize)>, ReadError> {
        match buffer.fill(BLOCK_HEADER_LEN)? {
            0 => return Ok(None),
            short if short < BLOCK_HEADER_LEN => {
                return Err(ReadError::ended_in(block_at, "truncated block header"))
            }
            _ => {}
        }
        if buffer.available().starts_with(&SECTION_HEADER) {
            self.learn_byte_order(buffer, block_at)?;
        }
        let header = self.fields(buffer.available());
        let kind = header.u32(BLOCK_TYPE_AT).unwrap_or_default();
        let total_len = header.u32(BLOCK_LEN_AT).unwrap_or_default() as usize;
        let min_len = match kind {
            block_type::SECTION_HEADER => MIN_SECTION_HEADER_LEN,
            _ => MIN_BLOCK_LEN,
        };
        if !(min_len..=MAX_BLOCK_LEN).contains(&total_len)
            || !total_len.is_multiple_of(BLOCK_ALIGNMENT)
        {
            return Err(ReadError::at(
                block_at,
                format!("bad block length {total_len}"),
            ));
        }
        if buffer.fill(total_len)? < total_len {
            return Err(ReadError::ended_in(block_at, "truncated block"));
        }
        let trailer = self
            .fields(buffer.available())
            .u32(total_len - BLOCK_TRAILER_LEN);
        if trailer != Some(total_len as u32) {
            return Err(ReadError::at(
                block_at,
                "block length trailer does not match",
            ));
        }
        Ok(Some((kind, total_len)))
    }

    /// Takes note of a block; Some when it holds a packet.
    fn interpret(
        &mut self,
        kind: u32,
        body: &[u8],
        block_at: u64,
    ) -> Result<Option<Pending>, ReadError> {
        let packet = match kind {
            block_type::SECTION_HEADER => {
                self.check_version(body, block_at)?;
                self.interfaces.clear();
                return Ok(None);
            }
            block_type::INTERFACE_DESCRIPTION => {
                self.add_interface(body, block_at)?;
                return Ok(None);
            }
            block_type::ENHANCED_PACKET => self.enhanced_packet(body, block_at)?,
            block_type::OBSOLETE_PACKET => self.obsolete_packet(body, block_at)?,
            block_type::SIMPLE_PACKET => return self.simple_packet(body, block_at).map(Some),
            _ => return Ok(None),
        };
        self.packet(packet, body.len(), block_at).map(Some)
    }

    /// Only major version 1 is defined; another would be read wrongly.
    fn check_version(&self, body: &[u8], block_at: u64) -> Result<(), ReadError> {
        let fields = self.fields(body);
        let (Some(major), Some(minor)) = (
            fields.u16(SECTION_MAJOR_VERSION_AT),
            fields.u16(SECTION_MAJOR_VERSION_AT + 2),
        ) else {
            return Err(ReadError::at(block_at, "truncated section header"));
        };
        if major != 1 {
            let version_at = block_at + (BLOCK_HEADER_LEN + SECTION_MAJOR_VERSION_AT) as u64;
            return Err(ReadError::at(
                version_at,
                format!("pcapng section of version {major}.{minor}, which tcpwhy cannot read (only 1.x)"),
            ));
        }
        Ok(())
    }

    fn fields<'a>(&self, bytes: &'a [u8]) -> Fields<'a> {
        Fields {
            bytes,
            big_endian: self.big_endian,
        }
    }

    fn learn_byte_order(
        &mut self,
        buffer: &mut StreamBuffer,
        block_at: u64,
    ) -> Result<(), ReadError> {
        buffer.fill(BYTE_ORDER_MAGIC_AT + 4)?;
        let little = Fields {
            bytes: buffer.available(),
            big_endian: false,
        };
        let Some(magic) = little.u32(BYTE_ORDER_MAGIC_AT) else {
            return Err(ReadError::at(block_at, "truncated section header"));
        };
        self.big_endian = match magic {
            BYTE_ORDER_MAGIC => false,
            swapped if swapped.swap_bytes() == BYTE_ORDER_MAGIC => true,
            _ => {
                let magic_at = block_at + BYTE_ORDER_MAGIC_AT as u64;
                return Err(ReadError::at(magic_at, "bad section byte-order magic"));
            }
        };
        Ok(())
    }

    fn add_interface(&mut self, body: &[u8], block_at: u64) -> Result<(), ReadError> {
        let fields = self.fields(body);
        let (Some(link_type), Some(snaplen)) =
            (fields.u16(IDB_LINK_TYPE_AT), fields.u32(IDB_SNAPLEN_AT))
        else {
            return Err(ReadError::at(block_at, "truncated interface description"));
        };
        let mut interface = Interface {
            link_type: u32::from(link_type),
            snaplen,
            units_per_second: DEFAULT_UNITS_PER_SECOND,
            offset_seconds: 0,
        };
        let mut at = IDB_OPTIONS_AT;
        while let (Some(code), Some(len)) = (
            fields.u16(at + OPTION_CODE_AT),
            fields.u16(at + OPTION_LEN_AT),
        ) {
            let value_at = at + OPTION_VALUE_AT;
            match code {
                OPTION_END => break,
                OPTION_TSRESOL => {
                    if let Some(&resolution) = body.get(value_at) {
                        interface.units_per_second = units_per_second(resolution)
                            .ok_or_else(|| ReadError::at(block_at, "bad if_tsresol"))?;
                    }
                }
                OPTION_TSOFFSET => {
                    interface.offset_seconds = fields.i64(value_at).unwrap_or_default();
                }
                _ => {}
            }
            at = value_at + usize::from(len).next_multiple_of(BLOCK_ALIGNMENT);
        }
        self.interfaces.push(interface);
        Ok(())
    }

    fn interface(&self, id: u32, block_at: u64) -> Result<&Interface, ReadError> {
        self.interfaces
            .get(id as usize)
            .ok_or_else(|| ReadError::at(block_at, format!("packet on undeclared interface {id}")))
    }

    fn enhanced_packet(&self, body: &[u8], block_at: u64) -> Result<RawPacket, ReadError> {
        let interface = self.fields(body).u32(PACKET_INTERFACE_AT);
        self.raw_packet(body, interface)
            .ok_or_else(|| ReadError::at(block_at, "truncated enhanced packet block"))
    }

    fn obsolete_packet(&self, body: &[u8], block_at: u64) -> Result<RawPacket, ReadError> {
        let interface = self.fields(body).u16(PACKET_INTERFACE_AT).map(u32::from);
        self.raw_packet(body, interface)
            .ok_or_else(|| ReadError::at(block_at, "truncated packet block"))
    }

    /// The fields after the interface id, shared by EPB and the obsolete PB.
    fn raw_packet(&self, body: &[u8], interface: Option<u32>) -> Option<RawPacket> {
        let fields = self.fields(body);
        let high = u64::from(fields.u32(PACKET_TIMESTAMP_HIGH_AT)?);
        let low = u64::from(fields.u32(PACKET_TIMESTAMP_LOW_AT)?);
        Some(RawPacket {
            interface: interface?,
            ticks: high << 32 | low,
            captured: fields.u32(PACKET_CAPTURED_LEN_AT)?,
            original: fields.u32(PACKET_ORIGINAL_LEN_AT)?,
        })
    }

    fn packet(&self, raw: RawPacket, body_len: usize, block_at: u64) -> Result<Pending, ReadError> {
        let interface = self.interface(raw.interface, block_at)?;
        let data_len = raw.captured as usize;
        if data_len > body_len.saturating_sub(PACKET_DATA_AT) {
            return Err(ReadError::at(
                block_at,
                format!("packet length {data_len} overruns its block"),
            ));
        }
        Ok(Pending {
            data_at: PACKET_DATA_AT,
            data_len,
            record_len: 0,
            timestamp_ns: timestamp_ns(interface, raw.ticks),
            link_type: interface.link_type,
            original_len: raw.original.max(raw.captured),
        })
    }

    /// Captured length: the original length, cut by the snaplen and the block.
    fn simple_packet(&self, body: &[u8], block_at: u64) -> Result<Pending, ReadError> {
        let original = self
            .fields(body)
            .u32(SIMPLE_ORIGINAL_LEN_AT)
            .ok_or_else(|| ReadError::at(block_at, "truncated simple packet block"))?;
        let interface = self.interface(SIMPLE_INTERFACE, block_at)?;
        let room = body.len().saturating_sub(SIMPLE_DATA_AT);
        let mut data_len = (original as usize).min(room);
        if interface.snaplen != 0 {
            data_len = data_len.min(interface.snaplen as usize);
        }
        Ok(Pending {
            data_at: SIMPLE_DATA_AT,
            data_len,
            record_len: 0,
            timestamp_ns: self.last_timestamp_ns,
            link_type: interface.link_type,
            original_len: original,
        })
    }
}

/// Ticks per second for an if_tsresol value; None when it does not fit 64 bits.
fn units_per_second(resolution: u8) -> Option<u64> {
    let exponent = u32::from(resolution & TSRESOL_EXPONENT);
    if resolution & TSRESOL_POWER_OF_TWO != 0 {
        1u64.checked_shl(exponent)
    } else {
        10u64.checked_pow(exponent)
    }
}

fn timestamp_ns(interface: &Interface, ticks: u64) -> i64 {
    let nanos = u128::from(ticks) * NANOS_PER_SECOND as u128
        / u128::from(interface.units_per_second.max(1));
    let nanos = i64::try_from(nanos).unwrap_or(i64::MAX);
    nanos
        .saturating_add(interface.offset_seconds.saturating_mul(NANOS_PER_SECOND))
        .clamp(crate::EARLIEST_TIMESTAMP_NS, crate::LATEST_TIMESTAMP_NS)
}
