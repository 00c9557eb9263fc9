//! The packets of one capture file as the `tcp` stage saw them, reduced to
//! what identifies a packet wherever it was captured, and grouped into its
//! connections (a reused 4-tuple is as many connections as `tcp` splits it
//! into).

use capture::CaptureError;
use decode::{Endpoint, Flags};
use pipeline::{Silent, Stages};
use rustc_hash::FxHashMap;
use tcp::{Direction, SegmentView, SeqNumber};

/// LINKTYPE_ETHERNET: the frame starts with the destination and source MACs.
const ETHERNET: u32 = 1;

/// One TCP packet as one capture point saw it.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub timestamp_ns: i64,
    pub ip_id: Option<u16>,
    pub ttl: u8,
    /// As the packet carried it: a rewriter between the points shifts it.
    pub seq: SeqNumber,
    /// As the packet carried it; 0 without the ACK flag.
    pub ack: SeqNumber,
    /// Just past its data, SYN and FIN, as the packet carried it.
    pub end: SeqNumber,
    pub payload_len: u32,
    pub flags: Flags,
    /// It occupies sequence space: data, a SYN or a FIN.
    pub carries_data: bool,
    /// `tcp` says its sender had sent it before.
    pub sent_again: bool,
    /// The Ethernet source address, when the capture has Ethernet headers.
    pub src_mac: Option<[u8; 6]>,
}

impl Packet {
    fn of(view: &SegmentView) -> Packet {
        Packet {
            timestamp_ns: view.timestamp_ns,
            ip_id: view.wire.ip_id,
            ttl: view.wire.ttl,
            seq: view.wire.seq,
            ack: view.wire.ack,
            end: view.wire_end(),
            payload_len: view.len,
            flags: view.flags,
            carries_data: view.occupies_sequence_space(),
            sent_again: view.sent_again(),
            src_mac: None,
        }
    }
}

/// One capture file's TCP packets, in the order captured, and its connections.
pub struct Capture {
    pub path: String,
    pub frames: u64,
    pub packets: Vec<Packet>,
    pub flows: Vec<Flow>,
}

impl Capture {
    pub fn first_ns(&self) -> Option<i64> {
        self.packets.iter().map(|p| p.timestamp_ns).min()
    }

    pub fn last_ns(&self) -> Option<i64> {
        self.packets.iter().map(|p| p.timestamp_ns).max()
    }
}

/// One connection's packets in one capture: indices into [`Capture::packets`],
/// split by sender, the client's first.
pub struct Flow {
    pub client: Endpoint,
    pub server: Endpoint,
    /// `[client to server, server to client]`
    pub directions: [Vec<usize>; 2],
}

/// Runs the `tcp` stage over `path`; a file that cannot be read to the end
/// is an error naming the file and the byte offset.
pub fn read(path: &str) -> Result<Capture, CaptureError> {
    let mut packets = Vec::new();
    let mut frames_of_packets = Vec::new();
    let mut by_connection: FxHashMap<u64, [Vec<usize>; 2]> = FxHashMap::default();
    let mut analysis = pipeline::analyze_observed(
        &[path.to_string()],
        Stages::default(),
        Silent,
        |_| {},
        |view, _| {
            let sender = usize::from(view.direction == Direction::ServerToClient);
            by_connection.entry(view.connection).or_default()[sender].push(packets.len());
            packets.push(Packet::of(view));
            frames_of_packets.push(view.frame);
        },
    )?;
    if let Some(error) = analysis.error.take() {
        return Err(error);
    }
    let macs = source_macs(path)?;
    for (packet, frame) in packets.iter_mut().zip(frames_of_packets) {
        packet.src_mac = frame
            .checked_sub(1)
            .and_then(|index| macs.get(index as usize).copied().flatten());
    }
    let flows = analysis
        .connections
        .iter()
        .filter_map(|connection| {
            Some(Flow {
                client: connection.client,
                server: connection.server,
                directions: by_connection.remove(&connection.id)?,
            })
        })
        .collect();
    Ok(Capture {
        path: path.to_string(),
        frames: analysis.counts.frames,
        packets,
        flows,
    })
}

/// Each frame's Ethernet source address, in frame order (the link header is
/// not the `tcp` stage's business, so it is read apart).
fn source_macs(path: &str) -> Result<Vec<Option<[u8; 6]>>, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut macs = Vec::new();
    while let Some(frame) = reader.next_frame()? {
        macs.push(source_mac(frame.link_type, frame.data));
    }
    Ok(macs)
}

fn source_mac(link_type: u32, data: &[u8]) -> Option<[u8; 6]> {
    if link_type != ETHERNET {
        return None;
    }
    data.get(6..12)?.try_into().ok()
}
