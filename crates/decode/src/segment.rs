//! The decoded record: one TCP segment with only what the analysis needs.

use std::fmt;
use std::net::IpAddr;

/// An IP address and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, record::Wire)]
pub struct Endpoint {
    pub ip: IpAddr,
    pub port: u16,
}

impl From<std::net::SocketAddr> for Endpoint {
    fn from(address: std::net::SocketAddr) -> Self {
        Endpoint {
            ip: address.ip(),
            port: address.port(),
        }
    }
}

/// `10.0.0.1:80` or `[2001:db8::1]:443`, as `Display` writes it.
impl std::str::FromStr for Endpoint {
    type Err = std::net::AddrParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse::<std::net::SocketAddr>().map(Endpoint::from)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ip {
            IpAddr::V4(ip) => write!(f, "{ip}:{}", self.port),
            IpAddr::V6(ip) => write!(f, "[{ip}]:{}", self.port),
        }
    }
}

/// TCP control flags as they appear in byte 13 of the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;

    pub fn has(self, flag: u8) -> bool {
        self.0 & flag != 0
    }

    pub fn fin(self) -> bool {
        self.has(Self::FIN)
    }

    pub fn syn(self) -> bool {
        self.has(Self::SYN)
    }

    pub fn rst(self) -> bool {
        self.has(Self::RST)
    }

    pub fn ack(self) -> bool {
        self.has(Self::ACK)
    }
}

/// Up to four SACK blocks, as (left edge, right edge) sequence numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlocks {
    len: u8,
    blocks: [(u32, u32); 4],
}

impl SackBlocks {
    pub fn push(&mut self, left: u32, right: u32) {
        if let Some(slot) = self.blocks.get_mut(usize::from(self.len)) {
            *slot = (left, right);
            self.len += 1;
        }
    }

    pub fn as_slice(&self) -> &[(u32, u32)] {
        &self.blocks[..usize::from(self.len)]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The TCP options the analysis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr)
    pub timestamps: Option<(u32, u32)>,
    pub sack: SackBlocks,
}

/// One TCP segment as seen at the capture point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Frame number in the (merged) capture, as Wireshark numbers it.
    pub frame: u64,
    /// Index of the input file the frame came from: which capture point saw it.
    pub source: usize,
    pub timestamp_ns: i64,
    /// Length of the frame on the wire.
    pub wire_len: u32,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub seq: u32,
    pub ack: u32,
    pub flags: Flags,
    /// The window field as sent, before scaling.
    pub window: u16,
    /// Payload length from the IP header, so snaplen cuts do not shrink it.
    pub payload_len: u32,
    pub options: Options,
    /// Where the captured start of the payload lies in the decoded bytes.
    pub captured_payload: CapturedPayload,
    /// The IPv4 identification field (None for IPv6): a sender's count of
    /// its packets, which tells a frame captured twice from one sent twice.
    pub ip_id: Option<u16>,
    /// IPv4 TTL or IPv6 hop limit as captured.
    pub ttl: u8,
}

/// The part of a segment's payload present in the bytes it was decoded from:
/// it starts `from_end` bytes before their end and runs `len` bytes (fewer
/// than the payload when the snaplen or the decoder's header budget cut it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CapturedPayload {
    pub from_end: u32,
    pub len: u32,
}

impl Segment {
    /// The captured start of the payload within `frame_bytes`, the bytes this
    /// segment was decoded from; empty when none was captured.
    pub fn payload<'a>(&self, frame_bytes: &'a [u8]) -> &'a [u8] {
        let CapturedPayload { from_end, len } = self.captured_payload;
        let start = frame_bytes.len().saturating_sub(from_end as usize);
        let end = start.saturating_add(len as usize).min(frame_bytes.len());
        &frame_bytes[start..end]
    }

    /// The payload as far as `whole` holds it, for a segment decoded from
    /// the first `decoded_len` bytes of `whole`: all the capture kept of it,
    /// past what the decoder read.
    pub fn whole_payload<'a>(&self, decoded_len: usize, whole: &'a [u8]) -> &'a [u8] {
        let start = decoded_len
            .saturating_sub(self.captured_payload.from_end as usize)
            .min(whole.len());
        let end = start
            .saturating_add(self.payload_len as usize)
            .min(whole.len());
        &whole[start..end]
    }
}

/// Why a frame yields no TCP segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Skip {
    /// A link type this decoder does not read.
    UnsupportedLinkType,
    /// Not IPv4 or IPv6: ARP, or another protocol.
    NotIp(NonTcp),
    /// IP, but not TCP: UDP, ICMP, or another protocol.
    NotTcp(NonTcp),
    /// An IP fragment: TCP headers of fragmented packets are not reassembled.
    Fragment,
    /// The frame ends inside a header.
    Truncated,
    /// A header field contradicts itself (bad length, bad version).
    Malformed,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::UnsupportedLinkType => "unsupported_link_type",
            Skip::NotIp(_) => "not_ip",
            Skip::NotTcp(_) => "not_tcp",
            Skip::Fragment => "ip_fragment",
            Skip::Truncated => "truncated_header",
            Skip::Malformed => "malformed_header",
        }
    }
}

/// What a frame without TCP carried, as far as its headers say: enough to
/// tell a user what a capture holds besides TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NonTcp {
    Udp,
    /// ICMP or ICMPv6.
    Icmp,
    Arp,
    Other,
}

impl NonTcp {
    /// The protocol an ethertype names, for a frame that is not IP.
    pub fn of_ethertype(ethertype: u16) -> NonTcp {
        match ethertype {
            crate::wire::ethertype::ARP => NonTcp::Arp,
            _ => NonTcp::Other,
        }
    }

    /// The protocol an IP protocol number names, for a packet that is not TCP.
    pub fn of_ip_protocol(protocol: u8) -> NonTcp {
        use crate::wire::ip_protocol;
        match protocol {
            ip_protocol::UDP => NonTcp::Udp,
            ip_protocol::ICMP | ip_protocol::ICMPV6 => NonTcp::Icmp,
            _ => NonTcp::Other,
        }
    }
}
