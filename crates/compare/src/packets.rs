//! The packets of one capture file, reduced to what identifies a packet
//! wherever it was captured, and grouped into connections.

use capture::CaptureError;
use decode::{Endpoint, Flags};
use rustc_hash::FxHashMap;

/// LINKTYPE_ETHERNET: the frame starts with the destination and source MACs.
const ETHERNET: u32 = 1;

/// One TCP packet as one capture point saw it.
#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub timestamp_ns: i64,
    pub src: Endpoint,
    pub dst: Endpoint,
    pub ip_id: Option<u16>,
    pub seq: u32,
    pub ack: u32,
    pub payload_len: u32,
    pub flags: Flags,
    pub ttl: u8,
    /// The Ethernet source address, when the capture has Ethernet headers.
    pub src_mac: Option<[u8; 6]>,
}

impl Packet {
    /// Whether the packet occupies sequence space (data, SYN or FIN).
    pub fn carries_data(&self) -> bool {
        self.payload_len > 0 || self.flags.syn() || self.flags.fin()
    }

    /// The sequence number just past this packet.
    pub fn seq_end(&self) -> u32 {
        let controls = u32::from(self.flags.syn()) + u32::from(self.flags.fin());
        self.seq
            .wrapping_add(self.payload_len)
            .wrapping_add(controls)
    }

    /// The acknowledgement number, or 0 where the ACK flag is off and the field means nothing.
    pub fn ack_if_any(&self) -> u32 {
        if self.flags.ack() {
            self.ack
        } else {
            0
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

/// Reads every frame of `path`; a file that cannot be read to the end is an
/// error naming the file and the byte offset.
pub fn read(path: &str) -> Result<Capture, CaptureError> {
    let mut reader = capture::open(path)?;
    let mut frames = 0;
    let mut packets = Vec::new();
    while let Some(frame) = reader.next_frame()? {
        frames += 1;
        let Ok(segment) = decode::decode(&frame) else {
            continue;
        };
        packets.push(Packet {
            timestamp_ns: segment.timestamp_ns,
            src: segment.src,
            dst: segment.dst,
            ip_id: segment.ip_id,
            seq: segment.seq,
            ack: segment.ack,
            payload_len: segment.payload_len,
            flags: segment.flags,
            ttl: segment.ttl,
            src_mac: source_mac(frame.link_type, frame.data),
        });
    }
    let flows = flows_of(&packets);
    Ok(Capture {
        path: path.to_string(),
        frames,
        packets,
        flows,
    })
}

fn source_mac(link_type: u32, data: &[u8]) -> Option<[u8; 6]> {
    if link_type != ETHERNET {
        return None;
    }
    data.get(6..12)?.try_into().ok()
}

/// Groups packets by connection. The client is the sender of a lone SYN,
/// else of the connection's first packet.
fn flows_of(packets: &[Packet]) -> Vec<Flow> {
    let mut index: FxHashMap<(Endpoint, Endpoint), usize> = FxHashMap::default();
    let mut flows: Vec<Flow> = Vec::new();
    for (position, packet) in packets.iter().enumerate() {
        let ends = (packet.src.min(packet.dst), packet.src.max(packet.dst));
        let flow = *index.entry(ends).or_insert_with(|| {
            flows.push(Flow {
                client: packet.src,
                server: packet.dst,
                directions: [Vec::new(), Vec::new()],
            });
            flows.len() - 1
        });
        let flow = &mut flows[flow];
        let opens = packet.flags.syn() && !packet.flags.ack();
        if opens && packet.src == flow.server {
            flow.directions.swap(0, 1);
            std::mem::swap(&mut flow.client, &mut flow.server);
        }
        let direction = usize::from(packet.src != flow.client);
        flow.directions[direction].push(position);
    }
    flows
}
