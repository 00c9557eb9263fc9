//! A real capture told again as a tap or a box on the path would tell it:
//! shifted in time, its sequence or identification numbers rewritten, every
//! packet copied by a router one hop on, frames the capture missed, or the
//! same packets carried over IPv6.
//!
//! Reads and writes the classic little-endian microsecond pcap that tcpdump
//! writes, Ethernet frames only; frames other than IPv4 are left as they are.
//! Checksums are not recomputed (the captures carry offloaded ones anyway).

use std::path::Path;

const FILE_HEADER: usize = 24;
const RECORD_HEADER: usize = 16;
const LITTLE_ENDIAN_MICROS: [u8; 4] = [0xd4, 0xc3, 0xb2, 0xa1];
const ETHERNET: usize = 14;
const ETHERTYPE_IPV4: [u8; 2] = [0x08, 0x00];
const ETHERTYPE_IPV6: [u8; 2] = [0x86, 0xdd];
const PROTOCOL_TCP: u8 = 6;
const IPV6_HEADER: usize = 40;
/// The IPv6 prefix the IPv4 addresses are placed under.
const IPV6_PREFIX: [u8; 12] = [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// The source address of a router's copies.
const ROUTER_MAC: [u8; 6] = [0x02, 0xee, 0, 0, 0, 0x01];

/// One frame: when it was captured, how long it was on the wire, the bytes kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub micros: i64,
    pub original_len: u32,
    pub data: Vec<u8>,
}

/// The TCP/IPv4 headers of a frame, where they lie in it.
struct Ipv4Tcp {
    tcp: usize,
}

impl Record {
    fn ipv4_tcp(&self) -> Option<Ipv4Tcp> {
        let data = &self.data;
        if data.len() < ETHERNET + 20 || data[12..14] != ETHERTYPE_IPV4 {
            return None;
        }
        let tcp = ETHERNET + usize::from(data[ETHERNET] & 0x0f) * 4;
        (data[ETHERNET + 9] == PROTOCOL_TCP && data.len() >= tcp + 20).then_some(Ipv4Tcp { tcp })
    }

    fn word(&self, at: usize) -> u32 {
        u32::from_be_bytes(self.data[at..at + 4].try_into().expect("four bytes"))
    }

    fn set_word(&mut self, at: usize, value: u32) {
        self.data[at..at + 4].copy_from_slice(&value.to_be_bytes());
    }

    /// The TCP flags of an IPv4 TCP frame.
    pub fn tcp_flags(&self) -> Option<u8> {
        self.ipv4_tcp().map(|headers| self.data[headers.tcp + 13])
    }

    /// The TCP payload length of an IPv4 TCP frame, from its headers.
    pub fn tcp_payload_len(&self) -> Option<usize> {
        let headers = self.ipv4_tcp()?;
        let total = usize::from(u16::from_be_bytes([
            self.data[ETHERNET + 2],
            self.data[ETHERNET + 3],
        ]));
        let tcp_header = usize::from(self.data[headers.tcp + 12] >> 4) * 4;
        Some(total.saturating_sub(headers.tcp - ETHERNET + tcp_header))
    }
}

/// A whole capture, frame by frame.
#[derive(Debug, Clone)]
pub struct Capture {
    header: Vec<u8>,
    pub records: Vec<Record>,
}

impl Capture {
    /// Reads a classic little-endian microsecond pcap file; panics on any other.
    pub fn read(path: &Path) -> Capture {
        let bytes = std::fs::read(path).expect("capture readable");
        assert_eq!(
            bytes[..4],
            LITTLE_ENDIAN_MICROS,
            "{}: not a little-endian microsecond pcap",
            path.display()
        );
        let mut records = Vec::new();
        let mut at = FILE_HEADER;
        while at + RECORD_HEADER <= bytes.len() {
            let field = |index: usize| {
                let start = at + 4 * index;
                u32::from_le_bytes(bytes[start..start + 4].try_into().expect("four bytes"))
            };
            let micros = i64::from(field(0)) * 1_000_000 + i64::from(field(1));
            let captured = field(2) as usize;
            let original_len = field(3);
            at += RECORD_HEADER;
            records.push(Record {
                micros,
                original_len,
                data: bytes[at..at + captured].to_vec(),
            });
            at += captured;
        }
        Capture {
            header: bytes[..FILE_HEADER].to_vec(),
            records,
        }
    }

    pub fn write(&self, path: &Path) {
        let mut bytes = self.header.clone();
        for record in &self.records {
            let seconds = record.micros.div_euclid(1_000_000) as u32;
            let micros = record.micros.rem_euclid(1_000_000) as u32;
            for field in [
                seconds,
                micros,
                record.data.len() as u32,
                record.original_len,
            ] {
                bytes.extend_from_slice(&field.to_le_bytes());
            }
            bytes.extend_from_slice(&record.data);
        }
        std::fs::write(path, bytes).expect("capture written");
    }

    /// Every frame `micros` later.
    pub fn shifted_in_time(mut self, micros: i64) -> Capture {
        for record in &mut self.records {
            record.micros += micros;
        }
        self
    }

    /// Every sequence number, and the acknowledgement numbers that answer
    /// them, moved by `offset`: what a firewall randomising initial
    /// sequence numbers does between two taps.
    pub fn with_sequence_shift(mut self, offset: u32) -> Capture {
        for record in &mut self.records {
            let Some(Ipv4Tcp { tcp }) = record.ipv4_tcp() else {
                continue;
            };
            let acknowledges = record.data[tcp + 13] & 0x10 != 0;
            record.set_word(tcp + 4, record.word(tcp + 4).wrapping_add(offset));
            if acknowledges {
                record.set_word(tcp + 8, record.word(tcp + 8).wrapping_add(offset));
            }
        }
        self
    }

    /// Each IPv4 identification replaced by `rewrite` of it.
    pub fn with_ip_ids(mut self, rewrite: impl Fn(u16) -> u16) -> Capture {
        for record in &mut self.records {
            if record.ipv4_tcp().is_some() {
                let at = ETHERNET + 4;
                let id = u16::from_be_bytes([record.data[at], record.data[at + 1]]);
                record.data[at..at + 2].copy_from_slice(&rewrite(id).to_be_bytes());
            }
        }
        self
    }

    /// Each TCP frame followed, 3 to 5 ms later, by the copy a router sends
    /// back onto the tapped link: one hop on (TTL one lower), from the
    /// router's own MAC address, otherwise the same.
    pub fn with_router_copies(self) -> Capture {
        let mut records = Vec::with_capacity(self.records.len() * 2);
        for (index, record) in self.records.iter().enumerate() {
            records.push(record.clone());
            if record.ipv4_tcp().is_none() {
                continue;
            }
            let mut copy = record.clone();
            copy.micros += 3_000 + (index as i64 * 7_919) % 2_001;
            copy.data[6..12].copy_from_slice(&ROUTER_MAC);
            copy.data[ETHERNET + 8] = copy.data[ETHERNET + 8].saturating_sub(1);
            records.push(copy);
        }
        records.sort_by_key(|record| record.micros);
        Capture { records, ..self }
    }

    /// Without the frames `missed` picks: as though the capture dropped them.
    pub fn without(self, mut missed: impl FnMut(usize, &Record) -> bool) -> Capture {
        let records = self
            .records
            .into_iter()
            .enumerate()
            .filter(|(index, record)| !missed(*index, record))
            .map(|(_, record)| record)
            .collect();
        Capture { records, ..self }
    }

    /// The same TCP segments over IPv6: each IPv4 address placed under
    /// fd00::/96, the TTL as the hop limit, no identification.
    pub fn as_ipv6(mut self) -> Capture {
        for record in &mut self.records {
            let Some(Ipv4Tcp { tcp }) = record.ipv4_tcp() else {
                continue;
            };
            let data = &record.data;
            let total = usize::from(u16::from_be_bytes([data[ETHERNET + 2], data[ETHERNET + 3]]));
            let ipv4_header = tcp - ETHERNET;
            let mut frame = data[..12].to_vec();
            frame.extend_from_slice(&ETHERTYPE_IPV6);
            frame.extend_from_slice(&[0x60, 0, 0, 0]);
            frame.extend_from_slice(&((total - ipv4_header) as u16).to_be_bytes());
            frame.extend_from_slice(&[PROTOCOL_TCP, data[ETHERNET + 8]]);
            for address in [ETHERNET + 12, ETHERNET + 16] {
                frame.extend_from_slice(&IPV6_PREFIX);
                frame.extend_from_slice(&data[address..address + 4]);
            }
            frame.extend_from_slice(&data[tcp..]);
            record.original_len = record.original_len + IPV6_HEADER as u32 - ipv4_header as u32;
            record.data = frame;
        }
        self
    }
}
