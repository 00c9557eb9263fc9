//! Serializes one packet into frame bytes for a chosen link type.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::is_v4;

/// A TCP option to put in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpOption {
    Mss(u16),
    WindowScale(u8),
    SackPermitted,
    Timestamps(u32, u32),
    Sack(u32, u32),
}

/// One TCP packet, before encapsulation. Its payload is `payload_len` zero bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub payload_len: u32,
    pub options: Vec<TcpOption>,
    /// The IPv4 identification (0 leaves it unset, as some stacks do).
    pub ip_id: u16,
}

impl Packet {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// How frames are wrapped, with the pcap link type each one means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    Ethernet,
    /// Ethernet with one 802.1Q tag per VLAN id (two ids make QinQ).
    Vlan(&'static [u16]),
    LinuxSll,
    LinuxSll2,
    RawIp,
    /// BSD loopback: a host-order (little-endian) address family.
    Null,
    /// Ethernet, IPv4 and UDP to port 4789, then the packet in Ethernet.
    Vxlan,
    /// Ethernet and IPv4 carrying GRE, then the packet.
    Gre,
    /// An 802.11 data frame to the access point, LLC/SNAP, then the packet.
    Wlan,
    /// A radiotap header, then an 802.11 QoS data frame from the access
    /// point, as a monitor-mode capture records it.
    Radiotap,
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
const MAC_CLIENT: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const MAC_SERVER: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
const PROTOCOL_TCP: u8 = 6;
const PROTOCOL_UDP: u8 = 17;
const PROTOCOL_GRE: u8 = 47;
const VXLAN_PORT: u16 = 4789;
const AF_INET: u32 = 2;
const AF_INET6_LINUX: u32 = 10;

impl Link {
    pub fn link_type(self) -> u32 {
        match self {
            Link::Ethernet | Link::Vlan(_) | Link::Vxlan | Link::Gre => 1,
            Link::LinuxSll => 113,
            Link::LinuxSll2 => 276,
            Link::RawIp => 101,
            Link::Null => 0,
            Link::Wlan => 105,
            Link::Radiotap => 127,
        }
    }

    pub fn frame(self, packet: &Packet) -> Vec<u8> {
        let ip = ip_packet(packet);
        let ethertype = if is_v4(packet) {
            ETHERTYPE_IPV4
        } else {
            ETHERTYPE_IPV6
        };
        match self {
            Link::Ethernet => ethernet(&[], ethertype, &ip),
            Link::Vlan(ids) => ethernet(ids, ethertype, &ip),
            Link::LinuxSll => [sll_header(ethertype), ip].concat(),
            Link::LinuxSll2 => [sll2_header(ethertype), ip].concat(),
            Link::RawIp => ip,
            Link::Null => {
                let family = if is_v4(packet) {
                    AF_INET
                } else {
                    AF_INET6_LINUX
                };
                [family.to_le_bytes().to_vec(), ip].concat()
            }
            Link::Vxlan => vxlan(&ethernet(&[], ethertype, &ip)),
            Link::Gre => gre(ethertype, &ip),
            Link::Wlan => wlan(&[0x08, 0x01], ethertype, &ip),
            Link::Radiotap => {
                let radiotap_header = [0, 0, 8, 0, 0, 0, 0, 0];
                [&radiotap_header[..], &wlan(&[0x88, 0x02], ethertype, &ip)].concat()
            }
        }
    }
}

/// An 802.11 data frame (`control` is its frame control: a plain data frame
/// to the access point, or a QoS one from it), LLC/SNAP and `ethertype`.
fn wlan(control: &[u8; 2], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let duration = [0, 0];
    let sequence_control = [0, 0];
    let mut out = [
        &control[..],
        &duration,
        &MAC_SERVER,
        &MAC_CLIENT,
        &MAC_SERVER,
        &sequence_control,
    ]
    .concat();
    let qos_data = control[0] & 0x80 != 0;
    if qos_data {
        out.extend_from_slice(&[0, 0]);
    }
    out.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0]);
    out.extend_from_slice(&ethertype.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn ethernet(vlans: &[u16], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = [MAC_SERVER, MAC_CLIENT].concat();
    for (i, id) in vlans.iter().enumerate() {
        let tpid = if i + 1 < vlans.len() {
            ETHERTYPE_QINQ
        } else {
            ETHERTYPE_VLAN
        };
        out.extend_from_slice(&tpid.to_be_bytes());
        out.extend_from_slice(&id.to_be_bytes());
    }
    out.extend_from_slice(&ethertype.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn sll_header(ethertype: u16) -> Vec<u8> {
    let mut out = vec![0, 0, 0, 1, 0, 6];
    out.extend_from_slice(&MAC_CLIENT);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&ethertype.to_be_bytes());
    out
}

fn sll2_header(ethertype: u16) -> Vec<u8> {
    let mut out = ethertype.to_be_bytes().to_vec();
    out.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6]);
    out.extend_from_slice(&MAC_CLIENT);
    out.extend_from_slice(&[0, 0]);
    out
}

fn vxlan(inner_frame: &[u8]) -> Vec<u8> {
    let vxlan_header = [0x08, 0, 0, 0, 0, 0, 1, 0];
    let udp_len = (8 + vxlan_header.len() + inner_frame.len()) as u16;
    let mut udp = 50_000u16.to_be_bytes().to_vec();
    udp.extend_from_slice(&VXLAN_PORT.to_be_bytes());
    udp.extend_from_slice(&udp_len.to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(&vxlan_header);
    udp.extend_from_slice(inner_frame);
    let outer = ipv4_header(
        Ipv4Addr::new(192, 0, 2, 1),
        Ipv4Addr::new(192, 0, 2, 2),
        PROTOCOL_UDP,
        udp.len(),
        0,
    );
    ethernet(&[], ETHERTYPE_IPV4, &[outer, udp].concat())
}

fn gre(ethertype: u16, inner_ip: &[u8]) -> Vec<u8> {
    let mut gre = vec![0, 0];
    gre.extend_from_slice(&ethertype.to_be_bytes());
    gre.extend_from_slice(inner_ip);
    let outer = ipv4_header(
        Ipv4Addr::new(192, 0, 2, 1),
        Ipv4Addr::new(192, 0, 2, 2),
        PROTOCOL_GRE,
        gre.len(),
        0,
    );
    ethernet(&[], ETHERTYPE_IPV4, &[outer, gre].concat())
}

fn ip_packet(packet: &Packet) -> Vec<u8> {
    let tcp = tcp_segment(packet);
    let header = match (packet.src.ip(), packet.dst.ip()) {
        (IpAddr::V4(src), IpAddr::V4(dst)) => {
            ipv4_header(src, dst, PROTOCOL_TCP, tcp.len(), packet.ip_id)
        }
        (src, dst) => ipv6_header(src, dst, tcp.len()),
    };
    [header, tcp].concat()
}

fn ipv4_header(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, payload_len: usize, id: u16) -> Vec<u8> {
    let total = (20 + payload_len) as u16;
    let mut out = vec![0x45, 0];
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0, 64, protocol, 0, 0]);
    out.extend_from_slice(&src.octets());
    out.extend_from_slice(&dst.octets());
    out
}

fn ipv6_header(src: IpAddr, dst: IpAddr, payload_len: usize) -> Vec<u8> {
    let mut out = vec![0x60, 0, 0, 0];
    out.extend_from_slice(&(payload_len as u16).to_be_bytes());
    out.extend_from_slice(&[PROTOCOL_TCP, 64]);
    for address in [src, dst] {
        let octets = match address {
            IpAddr::V6(v6) => v6.octets(),
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        };
        out.extend_from_slice(&octets);
    }
    out
}

fn tcp_segment(packet: &Packet) -> Vec<u8> {
    let options = option_bytes(&packet.options);
    let header_len = 20 + options.len();
    let mut out = packet.src.port().to_be_bytes().to_vec();
    out.extend_from_slice(&packet.dst.port().to_be_bytes());
    out.extend_from_slice(&packet.seq.to_be_bytes());
    out.extend_from_slice(&packet.ack.to_be_bytes());
    out.push(((header_len / 4) as u8) << 4);
    out.push(packet.flags);
    out.extend_from_slice(&packet.window.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&options);
    out.resize(header_len + packet.payload_len as usize, 0);
    out
}

fn option_bytes(options: &[TcpOption]) -> Vec<u8> {
    let mut out = Vec::new();
    for option in options {
        match *option {
            TcpOption::Mss(mss) => {
                out.extend_from_slice(&[2, 4]);
                out.extend_from_slice(&mss.to_be_bytes());
            }
            TcpOption::WindowScale(shift) => out.extend_from_slice(&[1, 3, 3, shift]),
            TcpOption::SackPermitted => out.extend_from_slice(&[1, 1, 4, 2]),
            TcpOption::Timestamps(value, echo) => {
                out.extend_from_slice(&[1, 1, 8, 10]);
                out.extend_from_slice(&value.to_be_bytes());
                out.extend_from_slice(&echo.to_be_bytes());
            }
            TcpOption::Sack(..) => {}
        }
    }
    let blocks: Vec<(u32, u32)> = options
        .iter()
        .filter_map(|option| match *option {
            TcpOption::Sack(left, right) => Some((left, right)),
            _ => None,
        })
        .collect();
    if !blocks.is_empty() {
        out.extend_from_slice(&[1, 1, 5, (2 + 8 * blocks.len()) as u8]);
        for (left, right) in blocks {
            out.extend_from_slice(&left.to_be_bytes());
            out.extend_from_slice(&right.to_be_bytes());
        }
    }
    while out.len() % 4 != 0 {
        out.push(0);
    }
    out
}
