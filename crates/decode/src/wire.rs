//! Typed, zero-copy views over header bytes.
//!
//! Each view is built by a checked constructor that refuses a buffer too short
//! for its fixed header; after that, accessors read named byte ranges from the
//! `field` modules. Variable parts (options, extension headers) are bounds
//! checked where they are read.

/// Reads a big-endian `u16` at `at`, if the bytes are there.
pub fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let pair = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes([pair[0], pair[1]]))
}

/// Reads a big-endian `u32` at `at`, if the bytes are there.
pub fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    let quad = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([quad[0], quad[1], quad[2], quad[3]]))
}

/// Ethernet II header, possibly followed by 802.1Q / QinQ tags.
pub struct Ethernet<'a>(&'a [u8]);

pub mod ethernet_field {
    pub const ETHERTYPE: usize = 12;
    pub const HEADER_LEN: usize = 14;
    pub const VLAN_TAG_LEN: usize = 4;
}

pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86dd;
    pub const ARP: u16 = 0x0806;
    pub const VLAN: u16 = 0x8100;
    pub const QINQ: u16 = 0x88a8;
    pub const QINQ_OLD: u16 = 0x9100;
    pub const MPLS_UNICAST: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
    pub const PPPOE_SESSION: u16 = 0x8864;
    pub const TRANSPARENT_ETHERNET: u16 = 0x6558;
    pub const ERSPAN_TYPE2: u16 = 0x88be;
    /// Values below this are 802.3 lengths, not types.
    pub const MIN_TYPE: u16 = 0x0600;
}

impl<'a> Ethernet<'a> {
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() >= ethernet_field::HEADER_LEN).then_some(Ethernet(bytes))
    }

    /// The innermost ethertype after skipping VLAN tags, and the bytes after it.
    pub fn payload(&self) -> Option<(u16, &'a [u8])> {
        let mut at = ethernet_field::ETHERTYPE;
        loop {
            let kind = be16(self.0, at)?;
            let after = at + 2;
            match kind {
                ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_OLD => {
                    at += ethernet_field::VLAN_TAG_LEN
                }
                _ => return Some((kind, self.0.get(after..)?)),
            }
        }
    }
}

pub mod ipv4_field {
    use std::ops::Range;
    pub const VERSION_IHL: usize = 0;
    pub const TOTAL_LEN: usize = 2;
    pub const IDENTIFICATION: usize = 4;
    pub const FLAGS_FRAGMENT: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
    pub const MIN_HEADER_LEN: usize = 20;
    pub const MORE_FRAGMENTS: u16 = 0x2000;
    pub const FRAGMENT_OFFSET: u16 = 0x1fff;
}

/// An IPv4 header with options.
pub struct Ipv4<'a>(&'a [u8]);

impl<'a> Ipv4<'a> {
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let packet = Ipv4(bytes);
        let fits = bytes.len() >= ipv4_field::MIN_HEADER_LEN
            && packet.version() == 4
            && packet.header_len() >= ipv4_field::MIN_HEADER_LEN
            && bytes.len() >= packet.header_len();
        fits.then_some(packet)
    }

    pub fn version(&self) -> u8 {
        self.0[ipv4_field::VERSION_IHL] >> 4
    }

    pub fn header_len(&self) -> usize {
        usize::from(self.0[ipv4_field::VERSION_IHL] & 0x0f) * 4
    }

    /// Total length as the header states it (0 when TSO left it unset).
    pub fn total_len(&self) -> usize {
        usize::from(be16(self.0, ipv4_field::TOTAL_LEN).unwrap_or(0))
    }

    pub fn is_fragment(&self) -> bool {
        let flags = be16(self.0, ipv4_field::FLAGS_FRAGMENT).unwrap_or(0);
        flags & (ipv4_field::MORE_FRAGMENTS | ipv4_field::FRAGMENT_OFFSET) != 0
    }

    pub fn protocol(&self) -> u8 {
        self.0[ipv4_field::PROTOCOL]
    }

    pub fn identification(&self) -> u16 {
        be16(self.0, ipv4_field::IDENTIFICATION).unwrap_or(0)
    }

    pub fn ttl(&self) -> u8 {
        self.0[ipv4_field::TTL]
    }

    pub fn src(&self) -> [u8; 4] {
        self.address(ipv4_field::SRC)
    }

    pub fn dst(&self) -> [u8; 4] {
        self.address(ipv4_field::DST)
    }

    fn address(&self, range: std::ops::Range<usize>) -> [u8; 4] {
        let mut out = [0; 4];
        out.copy_from_slice(&self.0[range]);
        out
    }

    /// Bytes after the header, and the payload length the header claims
    /// (which may exceed what was captured). A zero total length (a TSO frame)
    /// claims everything: the frame's wire length then decides.
    pub fn payload(&self) -> (&'a [u8], usize) {
        let captured = &self.0[self.header_len()..];
        let claimed = match self.total_len() {
            0 => usize::MAX,
            total => total.saturating_sub(self.header_len()),
        };
        (captured, claimed)
    }
}

pub mod ipv6_field {
    use std::ops::Range;
    pub const PAYLOAD_LEN: usize = 4;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Range<usize> = 8..24;
    pub const DST: Range<usize> = 24..40;
    pub const HEADER_LEN: usize = 40;
}

pub mod ip_protocol {
    pub const HOP_BY_HOP: u8 = 0;
    pub const ICMP: u8 = 1;
    pub const IPIP: u8 = 4;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const IPV6: u8 = 41;
    pub const ROUTING: u8 = 43;
    pub const FRAGMENT: u8 = 44;
    pub const GRE: u8 = 47;
    pub const AUTH: u8 = 51;
    pub const ICMPV6: u8 = 58;
    pub const DEST_OPTIONS: u8 = 60;
    pub const MOBILITY: u8 = 135;
}

/// A fixed IPv6 header; extension headers are walked by [`Ipv6::upper_layer`].
pub struct Ipv6<'a>(&'a [u8]);

/// What follows the IPv6 extension headers.
pub struct Ipv6Payload<'a> {
    pub protocol: u8,
    pub bytes: &'a [u8],
    pub claimed_len: usize,
    pub is_fragment: bool,
}

impl<'a> Ipv6<'a> {
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        (bytes.len() >= ipv6_field::HEADER_LEN && bytes[0] >> 4 == 6).then_some(Ipv6(bytes))
    }

    pub fn src(&self) -> [u8; 16] {
        self.address(ipv6_field::SRC)
    }

    pub fn hop_limit(&self) -> u8 {
        self.0[ipv6_field::HOP_LIMIT]
    }

    pub fn dst(&self) -> [u8; 16] {
        self.address(ipv6_field::DST)
    }

    fn address(&self, range: std::ops::Range<usize>) -> [u8; 16] {
        let mut out = [0; 16];
        out.copy_from_slice(&self.0[range]);
        out
    }

    /// Skips extension headers up to the upper-layer protocol.
    pub fn upper_layer(&self) -> Option<Ipv6Payload<'a>> {
        let stated = usize::from(be16(self.0, ipv6_field::PAYLOAD_LEN)?);
        let mut protocol = self.0[ipv6_field::NEXT_HEADER];
        let mut bytes = &self.0[ipv6_field::HEADER_LEN..];
        // A zero payload length means a jumbogram or a TSO frame: the frame's
        // wire length decides.
        let mut claimed = if stated == 0 { usize::MAX } else { stated };
        let mut is_fragment = false;
        loop {
            let ext_len = match protocol {
                ip_protocol::HOP_BY_HOP
                | ip_protocol::ROUTING
                | ip_protocol::DEST_OPTIONS
                | ip_protocol::MOBILITY => (usize::from(*bytes.get(1)?) + 1) * 8,
                ip_protocol::FRAGMENT => {
                    let offset_and_more = be16(bytes, 2)?;
                    is_fragment |= offset_and_more & 0xfff9 != 0;
                    8
                }
                ip_protocol::AUTH => (usize::from(*bytes.get(1)?) + 2) * 4,
                _ => {
                    return Some(Ipv6Payload {
                        protocol,
                        bytes,
                        claimed_len: claimed,
                        is_fragment,
                    })
                }
            };
            protocol = *bytes.first()?;
            bytes = bytes.get(ext_len..)?;
            claimed = claimed.checked_sub(ext_len)?;
        }
    }
}

pub mod udp_field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const HEADER_LEN: usize = 8;
}

pub mod tcp_field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ: usize = 4;
    pub const ACK: usize = 8;
    pub const DATA_OFFSET: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WINDOW: usize = 14;
    pub const MIN_HEADER_LEN: usize = 20;
}

pub mod tcp_option {
    pub const END: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMPS: u8 = 8;
}

/// A TCP header view.
pub struct Tcp<'a>(&'a [u8]);

impl<'a> Tcp<'a> {
    pub fn new(bytes: &'a [u8]) -> Option<Self> {
        let header = Tcp(bytes.get(..tcp_field::MIN_HEADER_LEN)?);
        (header.header_len() >= tcp_field::MIN_HEADER_LEN).then_some(Tcp(bytes))
    }

    pub fn src_port(&self) -> u16 {
        be16(self.0, tcp_field::SRC_PORT).unwrap_or(0)
    }

    pub fn dst_port(&self) -> u16 {
        be16(self.0, tcp_field::DST_PORT).unwrap_or(0)
    }

    pub fn seq(&self) -> u32 {
        be32(self.0, tcp_field::SEQ).unwrap_or(0)
    }

    pub fn ack(&self) -> u32 {
        be32(self.0, tcp_field::ACK).unwrap_or(0)
    }

    pub fn header_len(&self) -> usize {
        usize::from(self.0[tcp_field::DATA_OFFSET] >> 4) * 4
    }

    pub fn flags(&self) -> u8 {
        self.0[tcp_field::FLAGS]
    }

    pub fn window(&self) -> u16 {
        be16(self.0, tcp_field::WINDOW).unwrap_or(0)
    }

    /// The option bytes that were captured (snaplen may cut them short).
    pub fn options(&self) -> &'a [u8] {
        let end = self.header_len().min(self.0.len());
        &self.0[tcp_field::MIN_HEADER_LEN..end]
    }
}

/// Iterates TCP options as (kind, value) pairs, stopping at the end or at a
/// malformed length.
pub struct TcpOptionIter<'a>(&'a [u8]);

impl<'a> TcpOptionIter<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        TcpOptionIter(bytes)
    }
}

impl<'a> Iterator for TcpOptionIter<'a> {
    type Item = (u8, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (&kind, rest) = self.0.split_first()?;
            match kind {
                tcp_option::END => return None,
                tcp_option::NOP => self.0 = rest,
                _ => {
                    let len = usize::from(*rest.first()?);
                    let value = self.0.get(2..len)?;
                    self.0 = &self.0[len..];
                    return Some((kind, value));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_refuse_short_buffers() {
        assert_eq!(be16(&[1], 0), None);
        assert_eq!(be32(&[1, 2, 3, 4], 1), None);
        assert_eq!(be16(&[1, 2], usize::MAX), None);
        assert!(Ipv4::new(&[0x45; 19]).is_none());
        assert!(Tcp::new(&[0; 19]).is_none());
    }

    #[test]
    fn option_iterator_stops_at_a_bad_length() {
        // MSS 1460, NOP, then a SACK option claiming 10 bytes but holding 3.
        let bytes = [2, 4, 0x05, 0xb4, 1, 5, 10, 0];
        let options: Vec<_> = TcpOptionIter::new(&bytes).collect();
        assert_eq!(options, vec![(2u8, &[0x05u8, 0xb4][..])]);
        // A length below 2 is malformed too.
        assert_eq!(TcpOptionIter::new(&[3, 1, 7]).count(), 0);
    }
}
