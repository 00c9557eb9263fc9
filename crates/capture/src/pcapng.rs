//! The pcapng format: sections of blocks; interfaces carry link type and clock.

use crate::buffer::StreamBuffer;
use crate::{Pending, ReadError};

pub const SECTION_HEADER: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

mod block_type {
    pub const SECTION_HEADER: u32 = 0x0a0d_0d0a;
    pub const INTERFACE_DESCRIPTION: u32 = 1;
    pub const OBSOLETE_PACKET: u32 = 2;
    pub const SIMPLE_PACKET: u32 = 3;
    pub const ENHANCED_PACKET: u32 = 6;
}

const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
const BLOCK_HEADER_LEN: usize = 8;
const MIN_BLOCK_LEN: usize = 12;
/// Larger blocks mean a corrupt length field.
const MAX_BLOCK_LEN: usize = 16 << 20;
const OPTION_END: u16 = 0;
const OPTION_TSRESOL: u16 = 9;
const OPTION_TSOFFSET: u16 = 14;
const DEFAULT_UNITS_PER_SECOND: u64 = 1_000_000;
const NANOS_PER_SECOND: u128 = 1_000_000_000;

struct Interface {
    link_type: u32,
    snaplen: u32,
    units_per_second: u64,
    offset_seconds: i64,
}

pub struct Pcapng {
    big_endian: bool,
    interfaces: Vec<Interface>,
}

/// Reads integers in the current section's byte order.
struct Fields<'a> {
    bytes: &'a [u8],
    big_endian: bool,
}

impl Fields<'_> {
    fn u16(&self, at: usize) -> Option<u16> {
        let pair = self.bytes.get(at..at + 2)?;
        let pair = [pair[0], pair[1]];
        Some(if self.big_endian {
            u16::from_be_bytes(pair)
        } else {
            u16::from_le_bytes(pair)
        })
    }

    fn u32(&self, at: usize) -> Option<u32> {
        let quad = self.bytes.get(at..at + 4)?;
        let quad = [quad[0], quad[1], quad[2], quad[3]];
        Some(if self.big_endian {
            u32::from_be_bytes(quad)
        } else {
            u32::from_le_bytes(quad)
        })
    }

    fn u64_split(&self, at: usize) -> Option<u64> {
        Some(u64::from(self.u32(at)?) << 32 | u64::from(self.u32(at + 4)?))
    }

    fn i64(&self, at: usize) -> Option<i64> {
        let bytes: [u8; 8] = self.bytes.get(at..at + 8)?.try_into().ok()?;
        Some(if self.big_endian {
            i64::from_be_bytes(bytes)
        } else {
            i64::from_le_bytes(bytes)
        })
    }
}

impl Pcapng {
    pub fn new() -> Self {
        Pcapng {
            big_endian: false,
            interfaces: Vec::new(),
        }
    }

    /// Reads blocks until the next packet; None at a clean end of file.
    pub fn next(&mut self, buffer: &mut StreamBuffer) -> Result<Option<Pending>, ReadError> {
        loop {
            let block_at = buffer.offset();
            match buffer.fill(BLOCK_HEADER_LEN)? {
                0 => return Ok(None),
                short if short < BLOCK_HEADER_LEN => {
                    return Err(ReadError::at(block_at, "truncated block header"))
                }
                _ => {}
            }
            if buffer.available()[..4] == SECTION_HEADER {
                self.learn_byte_order(buffer, block_at)?;
            }
            let header = self.fields(&buffer.available()[..BLOCK_HEADER_LEN]);
            let kind = header.u32(0).unwrap_or(0);
            let total_len = header.u32(4).unwrap_or(0) as usize;
            if !(MIN_BLOCK_LEN..=MAX_BLOCK_LEN).contains(&total_len) || !total_len.is_multiple_of(4)
            {
                return Err(ReadError::at(
                    block_at,
                    format!("bad block length {total_len}"),
                ));
            }
            if buffer.fill(total_len)? < total_len {
                return Err(ReadError::at(block_at, "truncated block"));
            }
            let block = &buffer.available()[..total_len];
            if self.fields(block).u32(total_len - 4) != Some(total_len as u32) {
                return Err(ReadError::at(
                    block_at,
                    "block length trailer does not match",
                ));
            }
            let body = &block[BLOCK_HEADER_LEN..total_len - 4];
            let packet = match kind {
                block_type::SECTION_HEADER => {
                    self.interfaces.clear();
                    None
                }
                block_type::INTERFACE_DESCRIPTION => {
                    self.add_interface(body, block_at)?;
                    None
                }
                block_type::ENHANCED_PACKET => Some(self.enhanced_packet(body, block_at)?),
                block_type::SIMPLE_PACKET => Some(self.simple_packet(body, block_at)?),
                block_type::OBSOLETE_PACKET => Some(self.obsolete_packet(body, block_at)?),
                _ => None,
            };
            match packet {
                Some(mut pending) => {
                    pending.data_at += BLOCK_HEADER_LEN;
                    pending.record_len = total_len;
                    return Ok(Some(pending));
                }
                None => buffer.consume(total_len),
            }
        }
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
        if buffer.fill(12)? < 12 {
            return Err(ReadError::at(block_at, "truncated section header"));
        }
        let magic = &buffer.available()[8..12];
        self.big_endian = match u32::from_le_bytes([magic[0], magic[1], magic[2], magic[3]]) {
            BYTE_ORDER_MAGIC => false,
            swapped if swapped.swap_bytes() == BYTE_ORDER_MAGIC => true,
            _ => return Err(ReadError::at(block_at + 8, "bad section byte-order magic")),
        };
        Ok(())
    }

    fn add_interface(&mut self, body: &[u8], block_at: u64) -> Result<(), ReadError> {
        let fields = self.fields(body);
        let (Some(link_type), Some(snaplen)) = (fields.u16(0), fields.u32(4)) else {
            return Err(ReadError::at(block_at, "truncated interface description"));
        };
        let mut interface = Interface {
            link_type: u32::from(link_type),
            snaplen,
            units_per_second: DEFAULT_UNITS_PER_SECOND,
            offset_seconds: 0,
        };
        let mut at = 8;
        while let (Some(code), Some(len)) = (fields.u16(at), fields.u16(at + 2)) {
            let value_at = at + 4;
            let len = usize::from(len);
            match code {
                OPTION_END => break,
                OPTION_TSRESOL => {
                    if let Some(&resolution) = body.get(value_at) {
                        interface.units_per_second = units_per_second(resolution)
                            .ok_or_else(|| ReadError::at(block_at, "bad if_tsresol"))?;
                    }
                }
                OPTION_TSOFFSET => {
                    interface.offset_seconds = fields.i64(value_at).unwrap_or(0);
                }
                _ => {}
            }
            at = value_at + len.div_ceil(4) * 4;
        }
        self.interfaces.push(interface);
        Ok(())
    }

    fn interface(&self, id: u32, block_at: u64) -> Result<&Interface, ReadError> {
        self.interfaces
            .get(id as usize)
            .ok_or_else(|| ReadError::at(block_at, format!("packet on undeclared interface {id}")))
    }

    fn enhanced_packet(&self, body: &[u8], block_at: u64) -> Result<Pending, ReadError> {
        let fields = self.fields(body);
        let interface = fields.u32(0);
        self.packet_with_header(body, interface, block_at, "truncated enhanced packet block")
    }

    fn obsolete_packet(&self, body: &[u8], block_at: u64) -> Result<Pending, ReadError> {
        let interface = self.fields(body).u16(0).map(u32::from);
        self.packet_with_header(body, interface, block_at, "truncated packet block")
    }

    /// EPB and the obsolete PB share their layout after the interface id:
    /// timestamp (high, low), captured length, original length, data.
    fn packet_with_header(
        &self,
        body: &[u8],
        interface: Option<u32>,
        block_at: u64,
        truncated: &str,
    ) -> Result<Pending, ReadError> {
        const DATA_AT: usize = 20;
        let fields = self.fields(body);
        let parsed = (|| {
            Some((
                interface?,
                fields.u64_split(4)?,
                fields.u32(12)?,
                fields.u32(16)?,
            ))
        })();
        let (id, ticks, captured, original) =
            parsed.ok_or_else(|| ReadError::at(block_at, truncated))?;
        let interface = self.interface(id, block_at)?;
        packet(
            interface,
            ticks,
            DATA_AT,
            captured,
            original,
            body.len(),
            block_at,
        )
    }

    fn simple_packet(&self, body: &[u8], block_at: u64) -> Result<Pending, ReadError> {
        const DATA_AT: usize = 4;
        let original = self
            .fields(body)
            .u32(0)
            .ok_or_else(|| ReadError::at(block_at, "truncated simple packet block"))?;
        let interface = self.interface(0, block_at)?;
        let room = body.len() - DATA_AT;
        let mut captured = (original as usize).min(room);
        if interface.snaplen != 0 {
            captured = captured.min(interface.snaplen as usize);
        }
        Ok(Pending {
            data_at: DATA_AT,
            data_len: captured,
            record_len: 0,
            timestamp_ns: 0,
            link_type: interface.link_type,
            original_len: original,
        })
    }
}

fn packet(
    interface: &Interface,
    ticks: u64,
    data_at: usize,
    captured: u32,
    original: u32,
    body_len: usize,
    block_at: u64,
) -> Result<Pending, ReadError> {
    let captured = captured as usize;
    if data_at + captured > body_len {
        return Err(ReadError::at(
            block_at,
            format!("packet length {captured} overruns its block"),
        ));
    }
    Ok(Pending {
        data_at,
        data_len: captured,
        record_len: 0,
        timestamp_ns: timestamp_ns(interface, ticks),
        link_type: interface.link_type,
        original_len: original.max(captured as u32),
    })
}

fn units_per_second(resolution: u8) -> Option<u64> {
    let exponent = u32::from(resolution & 0x7f);
    if resolution & 0x80 != 0 {
        1u64.checked_shl(exponent).filter(|_| exponent < 64)
    } else {
        10u64.checked_pow(exponent)
    }
}

fn timestamp_ns(interface: &Interface, ticks: u64) -> i64 {
    let nanos =
        u128::from(ticks) * NANOS_PER_SECOND / u128::from(interface.units_per_second.max(1));
    let nanos = i64::try_from(nanos).unwrap_or(i64::MAX);
    nanos.saturating_add(interface.offset_seconds.saturating_mul(1_000_000_000))
}
