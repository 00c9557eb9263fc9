//! Peels link, IP and tunnel layers down to the TCP header.

use std::net::IpAddr;

use capture::Frame;

use crate::segment::{CapturedPayload, Endpoint, Flags, NonTcp, Options, Segment, Skip};
use crate::wire::{
    be16, be32, ethertype, ip_protocol, tcp_option, udp_field, Ethernet, Ipv4, Ipv6, Tcp,
    TcpOptionIter,
};

mod link_type {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    pub const PPP: u32 = 9;
    pub const RAW_BSD: u32 = 12;
    pub const RAW_OPENBSD: u32 = 14;
    pub const PPP_HDLC: u32 = 50;
    pub const RAW: u32 = 101;
    pub const IEEE802_11: u32 = 105;
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IEEE802_11_RADIOTAP: u32 = 127;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

mod tunnel_port {
    pub const VXLAN: u16 = 4789;
    pub const GENEVE: u16 = 6081;
}

const SLL_HEADER_LEN: usize = 16;
const SLL_PROTOCOL: usize = 14;
const SLL2_HEADER_LEN: usize = 20;
const SLL2_PROTOCOL: usize = 0;
const NULL_HEADER_LEN: usize = 4;
const PPP_HDLC_ADDRESS_CONTROL: u16 = 0xff03;
const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const VXLAN_HEADER_LEN: usize = 8;
const GENEVE_HEADER_LEN: usize = 8;
const ERSPAN_TYPE2_HEADER_LEN: usize = 8;
const MPLS_LABEL_LEN: usize = 4;
const MPLS_BOTTOM_OF_STACK: u8 = 0x01;
const PPPOE_HEADER_LEN: usize = 8;
/// IEEE 802.11-2020, 9.2.4.1: a frame control's type field, and the
/// subtype bits of a data frame that mean QoS and no data.
const WLAN_TYPE_DATA: u8 = 2;
const WLAN_SUBTYPE_QOS: u8 = 0x08;
const WLAN_SUBTYPE_NO_DATA: u8 = 0x04;
const WLAN_TO_AND_FROM_DS: u8 = 0x03;
const WLAN_PROTECTED: u8 = 0x40;
const WLAN_ORDER: u8 = 0x80;
const WLAN_HEADER_LEN: usize = 24;
const WLAN_FOURTH_ADDRESS_LEN: usize = 6;
const WLAN_QOS_CONTROL_LEN: usize = 2;
const WLAN_HT_CONTROL_LEN: usize = 4;
/// RFC 1042's LLC/SNAP header before an ethertype on 802.11.
const LLC_SNAP: [u8; 6] = [0xaa, 0xaa, 0x03, 0, 0, 0];
/// BSD address families that mean IPv6 (Linux, NetBSD/OpenBSD, FreeBSD, macOS).
const AF_INET6_VALUES: [u32; 4] = [10, 24, 28, 30];
const AF_INET: u32 = 2;
/// Tunnels nest; a hostile frame could nest them forever.
const MAX_TUNNEL_DEPTH: u8 = 4;

/// Decodes one frame into a TCP segment, or says why it holds none.
/// `frame.data` may be any prefix of the frame that holds its headers:
/// lengths come from the IP header, bounded by `frame.original_len`.
pub fn decode(frame: &Frame) -> Result<Segment, Skip> {
    let network = link_payload(frame.link_type, frame.data)?;
    let uncaptured = (frame.original_len as usize).saturating_sub(frame.data.len());
    let mut segment = network_layer(network, uncaptured, 0)?;
    segment.frame = frame.number;
    segment.timestamp_ns = frame.timestamp_ns;
    segment.wire_len = frame.original_len;
    segment.source = frame.source;
    Ok(segment)
}

/// A network-layer packet: what kind, and its bytes.
enum Network<'a> {
    Ipv4(&'a [u8]),
    Ipv6(&'a [u8]),
    /// The version nibble decides (raw IP, MPLS).
    Guess(&'a [u8]),
}

fn link_payload(link_type: u32, data: &[u8]) -> Result<Network<'_>, Skip> {
    match link_type {
        link_type::ETHERNET => ethernet(data),
        link_type::RAW | link_type::RAW_BSD | link_type::RAW_OPENBSD => Ok(Network::Guess(data)),
        link_type::IPV4 => Ok(Network::Ipv4(data)),
        link_type::IPV6 => Ok(Network::Ipv6(data)),
        link_type::LINUX_SLL => by_ethertype(be16(data, SLL_PROTOCOL), data.get(SLL_HEADER_LEN..)),
        link_type::LINUX_SLL2 => {
            by_ethertype(be16(data, SLL2_PROTOCOL), data.get(SLL2_HEADER_LEN..))
        }
        link_type::NULL => null_loopback(data, u32::from_le_bytes),
        link_type::LOOP => null_loopback(data, u32::from_be_bytes),
        link_type::PPP | link_type::PPP_HDLC => ppp(data),
        link_type::IEEE802_11 => wlan(data),
        link_type::IEEE802_11_RADIOTAP => radiotap(data),
        _ => Err(Skip::UnsupportedLinkType),
    }
}

fn ethernet(data: &[u8]) -> Result<Network<'_>, Skip> {
    let (kind, payload) = Ethernet::new(data)
        .and_then(|frame| frame.payload())
        .ok_or(Skip::Truncated)?;
    by_ethertype(Some(kind), Some(payload))
}

fn by_ethertype<'a>(kind: Option<u16>, payload: Option<&'a [u8]>) -> Result<Network<'a>, Skip> {
    let (kind, payload) = kind.zip(payload).ok_or(Skip::Truncated)?;
    match kind {
        ethertype::IPV4 => Ok(Network::Ipv4(payload)),
        ethertype::IPV6 => Ok(Network::Ipv6(payload)),
        ethertype::VLAN | ethertype::QINQ | ethertype::QINQ_OLD => {
            by_ethertype(be16(payload, 2), payload.get(4..))
        }
        ethertype::MPLS_UNICAST | ethertype::MPLS_MULTICAST => mpls(payload),
        ethertype::PPPOE_SESSION => ppp_protocol(be16(payload, 6), payload.get(PPPOE_HEADER_LEN..)),
        ethertype::TRANSPARENT_ETHERNET => ethernet(payload),
        other => Err(Skip::NotIp(NonTcp::of_ethertype(other))),
    }
}

/// A radiotap header (its length in bytes 2 and 3, little-endian), then an
/// 802.11 frame.
fn radiotap(data: &[u8]) -> Result<Network<'_>, Skip> {
    let len = data.get(2..4).ok_or(Skip::Truncated)?;
    let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
    wlan(data.get(len..).ok_or(Skip::Truncated)?)
}

/// An 802.11 data frame carrying LLC/SNAP and an ethertype. Management
/// and control frames, data frames without data and encrypted ones hold no
/// packet tcpwhy can read.
fn wlan(data: &[u8]) -> Result<Network<'_>, Skip> {
    let &[control, flags, ..] = data else {
        return Err(Skip::Truncated);
    };
    let subtype = control >> 4;
    if (control >> 2) & 0x03 != WLAN_TYPE_DATA
        || subtype & WLAN_SUBTYPE_NO_DATA != 0
        || flags & WLAN_PROTECTED != 0
    {
        return Err(Skip::NotIp(NonTcp::Other));
    }
    let qos = subtype & WLAN_SUBTYPE_QOS != 0;
    let header_len = WLAN_HEADER_LEN
        + usize::from(flags & WLAN_TO_AND_FROM_DS == WLAN_TO_AND_FROM_DS) * WLAN_FOURTH_ADDRESS_LEN
        + usize::from(qos) * WLAN_QOS_CONTROL_LEN
        + usize::from(qos && flags & WLAN_ORDER != 0) * WLAN_HT_CONTROL_LEN;
    let llc = data.get(header_len..).ok_or(Skip::Truncated)?;
    if llc.get(..LLC_SNAP.len()).ok_or(Skip::Truncated)? != LLC_SNAP {
        return Err(Skip::NotIp(NonTcp::Other));
    }
    let ethertype_at = LLC_SNAP.len();
    by_ethertype(be16(llc, ethertype_at), llc.get(ethertype_at + 2..))
}

fn mpls(mut payload: &[u8]) -> Result<Network<'_>, Skip> {
    loop {
        let label = payload.get(..MPLS_LABEL_LEN).ok_or(Skip::Truncated)?;
        payload = &payload[MPLS_LABEL_LEN..];
        if label[2] & MPLS_BOTTOM_OF_STACK != 0 {
            return Ok(Network::Guess(payload));
        }
    }
}

fn null_loopback(data: &[u8], read: fn([u8; 4]) -> u32) -> Result<Network<'_>, Skip> {
    let family = data.get(..NULL_HEADER_LEN).ok_or(Skip::Truncated)?;
    let family = read([family[0], family[1], family[2], family[3]]);
    let payload = &data[NULL_HEADER_LEN..];
    match family {
        AF_INET => Ok(Network::Ipv4(payload)),
        family if AF_INET6_VALUES.contains(&family) => Ok(Network::Ipv6(payload)),
        _ => Err(Skip::NotIp(NonTcp::Other)),
    }
}

fn ppp(data: &[u8]) -> Result<Network<'_>, Skip> {
    let skip_address = usize::from(be16(data, 0) == Some(PPP_HDLC_ADDRESS_CONTROL)) * 2;
    ppp_protocol(be16(data, skip_address), data.get(skip_address + 2..))
}

fn ppp_protocol<'a>(protocol: Option<u16>, payload: Option<&'a [u8]>) -> Result<Network<'a>, Skip> {
    match protocol.zip(payload) {
        Some((PPP_IPV4, payload)) => Ok(Network::Ipv4(payload)),
        Some((PPP_IPV6, payload)) => Ok(Network::Ipv6(payload)),
        Some(_) => Err(Skip::NotIp(NonTcp::Other)),
        None => Err(Skip::Truncated),
    }
}

/// What the IP layer hands up: addresses, the transport bytes and their claimed length.
struct Transport<'a> {
    src: IpAddr,
    dst: IpAddr,
    protocol: u8,
    bytes: &'a [u8],
    claimed_len: usize,
    ip_id: Option<u16>,
    ttl: u8,
}

/// `uncaptured` is how many bytes of the frame the snaplen cut off: an IP
/// length beyond what the frame held on the wire is not believed.
fn network_layer(network: Network, uncaptured: usize, depth: u8) -> Result<Segment, Skip> {
    if depth > MAX_TUNNEL_DEPTH {
        return Err(Skip::NotTcp(NonTcp::Other));
    }
    let mut transport = match network {
        Network::Ipv4(bytes) => ipv4(bytes)?,
        Network::Ipv6(bytes) => ipv6(bytes)?,
        Network::Guess(bytes) => match bytes.first().map(|b| b >> 4) {
            Some(4) => ipv4(bytes)?,
            Some(6) => ipv6(bytes)?,
            Some(_) => return Err(Skip::NotIp(NonTcp::Other)),
            None => return Err(Skip::Truncated),
        },
    };
    transport.claimed_len = transport
        .claimed_len
        .min(transport.bytes.len() + uncaptured);
    match transport.protocol {
        ip_protocol::TCP => tcp(&transport),
        ip_protocol::UDP => udp_tunnel(transport.bytes, uncaptured, depth),
        ip_protocol::GRE => gre(transport.bytes, uncaptured, depth),
        ip_protocol::IPIP => network_layer(Network::Ipv4(transport.bytes), uncaptured, depth + 1),
        ip_protocol::IPV6 => network_layer(Network::Ipv6(transport.bytes), uncaptured, depth + 1),
        other => Err(Skip::NotTcp(NonTcp::of_ip_protocol(other))),
    }
}

fn ipv4(bytes: &[u8]) -> Result<Transport<'_>, Skip> {
    let packet = Ipv4::new(bytes).ok_or(if bytes.len() < 20 {
        Skip::Truncated
    } else {
        Skip::Malformed
    })?;
    if packet.is_fragment() {
        return Err(Skip::Fragment);
    }
    let (payload, claimed_len) = packet.payload();
    Ok(Transport {
        src: IpAddr::from(packet.src()),
        dst: IpAddr::from(packet.dst()),
        protocol: packet.protocol(),
        bytes: payload,
        claimed_len,
        ip_id: Some(packet.identification()),
        ttl: packet.ttl(),
    })
}

fn ipv6(bytes: &[u8]) -> Result<Transport<'_>, Skip> {
    let packet = Ipv6::new(bytes).ok_or(Skip::Truncated)?;
    let upper = packet.upper_layer().ok_or(Skip::Truncated)?;
    if upper.is_fragment {
        return Err(Skip::Fragment);
    }
    Ok(Transport {
        src: IpAddr::from(packet.src()),
        dst: IpAddr::from(packet.dst()),
        protocol: upper.protocol,
        bytes: upper.bytes,
        claimed_len: upper.claimed_len,
        ip_id: None,
        ttl: packet.hop_limit(),
    })
}

fn udp_tunnel(bytes: &[u8], uncaptured: usize, depth: u8) -> Result<Segment, Skip> {
    let dst_port = be16(bytes, udp_field::DST_PORT).ok_or(Skip::Truncated)?;
    let payload = &bytes[udp_field::HEADER_LEN.min(bytes.len())..];
    match dst_port {
        tunnel_port::VXLAN => {
            let inner = payload.get(VXLAN_HEADER_LEN..).ok_or(Skip::Truncated)?;
            network_layer(ethernet(inner)?, uncaptured, depth + 1)
        }
        tunnel_port::GENEVE => geneve(payload, uncaptured, depth),
        _ => Err(Skip::NotTcp(NonTcp::Udp)),
    }
}

fn geneve(bytes: &[u8], uncaptured: usize, depth: u8) -> Result<Segment, Skip> {
    let options_len = usize::from(bytes.first().ok_or(Skip::Truncated)? & 0x3f) * 4;
    let protocol = be16(bytes, 2);
    let inner = bytes.get(GENEVE_HEADER_LEN + options_len..);
    network_layer(by_ethertype(protocol, inner)?, uncaptured, depth + 1)
}

mod gre_flag {
    pub const CHECKSUM: u16 = 0x8000;
    pub const KEY: u16 = 0x2000;
    pub const SEQUENCE: u16 = 0x1000;
}

fn gre(bytes: &[u8], uncaptured: usize, depth: u8) -> Result<Segment, Skip> {
    let flags = be16(bytes, 0).ok_or(Skip::Truncated)?;
    let protocol = be16(bytes, 2);
    let optional_words = [gre_flag::CHECKSUM, gre_flag::KEY, gre_flag::SEQUENCE]
        .iter()
        .filter(|&&flag| flags & flag != 0)
        .count();
    let mut inner = bytes.get(4 + 4 * optional_words..);
    if protocol == Some(ethertype::ERSPAN_TYPE2) {
        inner = inner.and_then(|rest| rest.get(ERSPAN_TYPE2_HEADER_LEN..));
        return network_layer(
            ethernet(inner.ok_or(Skip::Truncated)?)?,
            uncaptured,
            depth + 1,
        );
    }
    network_layer(by_ethertype(protocol, inner)?, uncaptured, depth + 1)
}

fn tcp(transport: &Transport) -> Result<Segment, Skip> {
    let header = Tcp::new(transport.bytes).ok_or(if transport.bytes.len() < 20 {
        Skip::Truncated
    } else {
        Skip::Malformed
    })?;
    let payload_len = transport
        .claimed_len
        .checked_sub(header.header_len())
        .ok_or(Skip::Malformed)?;
    // Every layer slices a suffix of the frame's bytes, so the payload's
    // distance from their end locates it in the frame.
    let after_header = transport.bytes.len().saturating_sub(header.header_len());
    let captured_payload = CapturedPayload {
        from_end: after_header as u32,
        len: after_header.min(payload_len) as u32,
    };
    Ok(Segment {
        frame: 0,
        source: 0,
        timestamp_ns: 0,
        wire_len: 0,
        src: Endpoint {
            ip: transport.src,
            port: header.src_port(),
        },
        dst: Endpoint {
            ip: transport.dst,
            port: header.dst_port(),
        },
        seq: header.seq(),
        ack: header.ack(),
        flags: Flags(header.flags()),
        window: header.window(),
        payload_len: u32::try_from(payload_len).map_err(|_| Skip::Malformed)?,
        options: options(header.options()),
        captured_payload,
        ip_id: transport.ip_id,
        ttl: transport.ttl,
    })
}

fn options(bytes: &[u8]) -> Options {
    let mut options = Options::default();
    for (kind, value) in TcpOptionIter::new(bytes) {
        match kind {
            tcp_option::MSS => options.mss = be16(value, 0),
            tcp_option::WINDOW_SCALE => options.window_scale = value.first().copied(),
            tcp_option::SACK_PERMITTED => options.sack_permitted = true,
            tcp_option::TIMESTAMPS => options.timestamps = be32(value, 0).zip(be32(value, 4)),
            tcp_option::SACK => {
                for block in value.chunks_exact(8) {
                    if let Some((left, right)) = be32(block, 0).zip(be32(block, 4)) {
                        options.sack.push(left, right);
                    }
                }
            }
            _ => {}
        }
    }
    options
}
