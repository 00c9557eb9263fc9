//! Scripted TCP traces, written straight to pcap.
//!
//! Tests use this to build the edge cases real stacks rarely produce:
//! sequence wrap, timestamps that go backwards, a capture that starts
//! mid-stream, one direction only. A [`Conversation`] keeps each side's
//! sequence numbers so a script reads like the exchange it describes:
//!
//! ```
//! use synth::{Conversation, Side, Trace};
//! let mut trace = Trace::ethernet();
//! let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
//! conn.handshake(&mut trace, 0.0, 10.0);
//! conn.send(&mut trace, Side::Client, 20.0, 100);
//! conn.ack(&mut trace, Side::Server, 30.0);
//! let pcap = trace.to_pcap();
//! assert!(pcap.len() > 24);
//! ```
//!
//! It is a test tool: it builds frames, it does not check them. It also
//! says where the tests find the public captures they read (see [`shared`]).

use std::net::{IpAddr, SocketAddr};

mod frame;
pub mod rewrite;
pub mod shared;

pub use frame::{Link, Packet, TcpOption};
pub use shared::shared_captures;

/// Which end of a conversation acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    pub fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }
}

/// A list of timestamped frames on one link type.
pub struct Trace {
    link: Link,
    records: Vec<(i64, Vec<u8>)>,
}

const PCAP_MAGIC_MICROS: u32 = 0xa1b2_c3d4;
const PCAP_VERSION: (u16, u16) = (2, 4);
const PCAP_MAX_SNAPLEN: u32 = 262_144;

impl Trace {
    pub fn new(link: Link) -> Self {
        Trace {
            link,
            records: Vec::new(),
        }
    }

    pub fn ethernet() -> Self {
        Self::new(Link::Ethernet)
    }

    /// Adds a packet at `time_ms` (milliseconds after the capture's epoch).
    pub fn push(&mut self, time_ms: f64, packet: &Packet) {
        let frame = self.link.frame(packet);
        let timestamp_ns = BASE_EPOCH_NS + (time_ms * 1e6).round() as i64;
        self.records.push((timestamp_ns, frame));
    }

    /// Adds a packet carrying `payload` (its `payload_len` is set to match).
    pub fn push_with_payload(&mut self, time_ms: f64, packet: &Packet, payload: &[u8]) {
        let packet = Packet {
            payload_len: payload.len() as u32,
            ..packet.clone()
        };
        self.push(time_ms, &packet);
        // Every link type ends its frame with the TCP payload.
        let (_, frame) = self.records.last_mut().expect("the frame just pushed");
        let start = frame.len() - payload.len();
        frame[start..].copy_from_slice(payload);
    }

    /// Each frame with its timestamp (ns since the epoch).
    pub fn frames(&self) -> impl Iterator<Item = (i64, &[u8])> {
        self.records
            .iter()
            .map(|(time, frame)| (*time, frame.as_slice()))
    }

    /// The frames as the capture stage hands them on, numbered from 1.
    pub fn captured_frames(&self) -> impl Iterator<Item = capture::Frame<'_>> {
        let link_type = self.link_type();
        self.frames()
            .enumerate()
            .map(move |(index, (timestamp_ns, data))| capture::Frame {
                number: index as u64 + 1,
                timestamp_ns,
                link_type,
                data,
                original_len: data.len() as u32,
                source: 0,
            })
    }

    pub fn link_type(&self) -> u32 {
        self.link.link_type()
    }

    /// The trace as a little-endian microsecond pcap file, in push order.
    pub fn to_pcap(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&PCAP_MAGIC_MICROS.to_le_bytes());
        out.extend_from_slice(&PCAP_VERSION.0.to_le_bytes());
        out.extend_from_slice(&PCAP_VERSION.1.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&PCAP_MAX_SNAPLEN.to_le_bytes());
        out.extend_from_slice(&self.link.link_type().to_le_bytes());
        for (timestamp_ns, captured) in &self.records {
            let micros = timestamp_ns.div_euclid(1000);
            out.extend_from_slice(&(micros.div_euclid(1_000_000) as u32).to_le_bytes());
            out.extend_from_slice(&(micros.rem_euclid(1_000_000) as u32).to_le_bytes());
            out.extend_from_slice(&(captured.len() as u32).to_le_bytes());
            out.extend_from_slice(&(captured.len() as u32).to_le_bytes());
            out.extend_from_slice(captured);
        }
        out
    }

    /// Writes the pcap to `path`.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_pcap())
    }
}

/// 2026-01-01T00:00:00Z, so times read like a real capture's.
const BASE_EPOCH_NS: i64 = 1_767_225_600_000_000_000;

/// One TCP connection's two ends, tracking the next sequence number of each.
pub struct Conversation {
    client: SocketAddr,
    server: SocketAddr,
    next_seq: [u32; 2],
    window: [u16; 2],
    /// The IP identification of each side's next packet: each side numbers
    /// its packets one by one, as most stacks do per connection.
    next_ip_id: [u16; 2],
    /// With TCP timestamps: each side's newest TSval (a millisecond clock).
    stamped: Option<[u32; 2]>,
}

fn index(side: Side) -> usize {
    match side {
        Side::Client => 0,
        Side::Server => 1,
    }
}

impl Conversation {
    /// `client` and `server` as "ip:port" (IPv6 as "\[ip\]:port").
    pub fn new(client: &str, server: &str) -> Self {
        Conversation {
            client: client.parse().expect("client address"),
            server: server.parse().expect("server address"),
            next_seq: [1_000, 50_000],
            window: [64_000, 64_000],
            next_ip_id: [100, 5_000],
            stamped: None,
        }
    }

    /// Sets the next sequence number a side will send (to start near a wrap).
    pub fn set_seq(&mut self, side: Side, seq: u32) -> &mut Self {
        self.next_seq[index(side)] = seq;
        self
    }

    /// Sets the raw window field a side advertises from now on.
    pub fn set_window(&mut self, side: Side, window: u16) -> &mut Self {
        self.window[index(side)] = window;
        self
    }

    pub fn next_seq(&self, side: Side) -> u32 {
        self.next_seq[index(side)]
    }

    fn addresses(&self, side: Side) -> (SocketAddr, SocketAddr) {
        match side {
            Side::Client => (self.client, self.server),
            Side::Server => (self.server, self.client),
        }
    }

    /// A packet from `side` with the current sequence, ACK and window, and no payload.
    pub fn packet(&self, side: Side, flags: u8) -> Packet {
        let (src, dst) = self.addresses(side);
        Packet {
            src,
            dst,
            seq: self.next_seq(side),
            ack: self.next_seq(side.peer()),
            flags,
            window: self.window[index(side)],
            payload_len: 0,
            options: Vec::new(),
            ip_id: self.next_ip_id[index(side)],
        }
    }

    /// Packets of `side` lost before the capture point: their IP
    /// identifications go unseen.
    pub fn lose_packets(&mut self, side: Side, count: u16) {
        let id = &mut self.next_ip_id[index(side)];
        *id = id.wrapping_add(count);
    }

    /// From now on every packet carries TCP timestamps: its sender's clock
    /// in milliseconds, echoing the newest the peer put on the trace.
    pub fn with_timestamps(&mut self) -> &mut Self {
        self.stamped = Some([0, 0]);
        self
    }

    /// Puts a packet of `side` on the trace; the side numbers its next one on.
    fn emit(&mut self, trace: &mut Trace, side: Side, at_ms: f64, packet: &Packet) {
        let packet = self.stamp(side, at_ms, packet);
        trace.push(at_ms, &packet);
        self.lose_packets(side, 1);
    }

    fn stamp(&mut self, side: Side, at_ms: f64, packet: &Packet) -> Packet {
        let mut packet = packet.clone();
        if let Some(newest) = &mut self.stamped {
            let tsval = at_ms as u32 + 1;
            newest[index(side)] = tsval;
            let echoed = newest[index(side.peer())];
            packet.options.push(TcpOption::Timestamps(tsval, echoed));
        }
        packet
    }

    /// SYN, SYN-ACK, ACK with MSS 1460, window scale 7, SACK and timestamps;
    /// `rtt_ms` apart between SYN and the final ACK.
    pub fn handshake(&mut self, trace: &mut Trace, at_ms: f64, rtt_ms: f64) {
        let options = vec![
            TcpOption::Mss(1460),
            TcpOption::SackPermitted,
            TcpOption::WindowScale(7),
        ];
        self.syn(trace, Side::Client, at_ms, options.clone());
        self.syn(trace, Side::Server, at_ms + rtt_ms / 2.0, options);
        self.ack(trace, Side::Client, at_ms + rtt_ms);
    }

    /// A SYN (from the client) or SYN-ACK (from the server) with these options.
    pub fn syn(&mut self, trace: &mut Trace, side: Side, at_ms: f64, options: Vec<TcpOption>) {
        let flags = match side {
            Side::Client => Packet::SYN,
            Side::Server => Packet::SYN | Packet::ACK,
        };
        let mut packet = self.packet(side, flags);
        if side == Side::Client {
            packet.ack = 0;
        }
        packet.options = options;
        self.emit(trace, side, at_ms, &packet);
        self.next_seq[index(side)] = self.next_seq(side).wrapping_add(1);
    }

    /// Sends `len` new bytes from `side` and returns the segment's sequence number.
    pub fn send(&mut self, trace: &mut Trace, side: Side, at_ms: f64, len: u32) -> u32 {
        let seq = self.next_seq(side);
        self.send_at(trace, side, at_ms, seq, len);
        self.next_seq[index(side)] = seq.wrapping_add(len);
        seq
    }

    /// Sends `payload` from `side` as one segment and returns its sequence number.
    pub fn send_bytes(&mut self, trace: &mut Trace, side: Side, at_ms: f64, payload: &[u8]) -> u32 {
        let seq = self.next_seq(side);
        let packet = self.packet(side, Packet::ACK | Packet::PSH);
        let packet = self.stamp(side, at_ms, &packet);
        trace.push_with_payload(at_ms, &packet, payload);
        self.lose_packets(side, 1);
        self.next_seq[index(side)] = seq.wrapping_add(payload.len() as u32);
        seq
    }

    /// Sends `len` bytes from `side` at an explicit sequence number (a
    /// retransmission, or a segment after a gap) without moving the next sequence.
    pub fn send_at(&mut self, trace: &mut Trace, side: Side, at_ms: f64, seq: u32, len: u32) {
        let mut packet = self.packet(side, Packet::ACK | Packet::PSH);
        packet.seq = seq;
        packet.payload_len = len;
        self.emit(trace, side, at_ms, &packet);
    }

    /// Skips `len` bytes of `side`'s stream, as if their segment was never captured.
    pub fn lose(&mut self, side: Side, len: u32) -> u32 {
        let seq = self.next_seq(side);
        self.next_seq[index(side)] = seq.wrapping_add(len);
        seq
    }

    /// A pure ACK from `side` acknowledging everything the peer sent.
    pub fn ack(&mut self, trace: &mut Trace, side: Side, at_ms: f64) {
        let packet = self.packet(side, Packet::ACK);
        self.emit(trace, side, at_ms, &packet);
    }

    /// A pure ACK from `side` acknowledging only up to `ack`, with SACK blocks.
    pub fn ack_with_sack(
        &mut self,
        trace: &mut Trace,
        side: Side,
        at_ms: f64,
        ack: u32,
        blocks: &[(u32, u32)],
    ) {
        let mut packet = self.packet(side, Packet::ACK);
        packet.ack = ack;
        packet.options = blocks
            .iter()
            .map(|&(left, right)| TcpOption::Sack(left, right))
            .collect();
        self.emit(trace, side, at_ms, &packet);
    }

    /// FIN-ACK from `side`.
    pub fn fin(&mut self, trace: &mut Trace, side: Side, at_ms: f64) {
        let packet = self.packet(side, Packet::FIN | Packet::ACK);
        self.emit(trace, side, at_ms, &packet);
        self.next_seq[index(side)] = self.next_seq(side).wrapping_add(1);
    }

    /// RST-ACK from `side`.
    pub fn rst(&mut self, trace: &mut Trace, side: Side, at_ms: f64) {
        let packet = self.packet(side, Packet::RST | Packet::ACK);
        self.emit(trace, side, at_ms, &packet);
    }
}

/// True when both addresses are IPv4.
pub(crate) fn is_v4(packet: &Packet) -> bool {
    matches!(
        (packet.src.ip(), packet.dst.ip()),
        (IpAddr::V4(_), IpAddr::V4(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_lands_after_the_tcp_header_and_counts_in_the_ip_length() {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
        let payload = b"GET / HTTP/1.1\r\n\r\n";
        let seq = conn.send_bytes(&mut trace, Side::Client, 1.0, payload);
        assert_eq!(conn.next_seq(Side::Client), seq + payload.len() as u32);
        let (_, frame) = trace.frames().next().unwrap();
        assert!(frame.ends_with(payload));
        let ip_total = u16::from_be_bytes([frame[16], frame[17]]) as usize;
        assert_eq!(ip_total, 20 + 20 + payload.len());
    }
}
