//! Protocols whose every message opens with a header stating its length:
//! DNS over TCP (RFC 1035 §4.2.2), SMB's NetBIOS session header (RFC 1002
//! §4.3.1; port 445 keeps its four bytes), PostgreSQL (its frontend/backend
//! protocol, version 3), memcached's binary protocol, Modbus/TCP's MBAP
//! header, TPKT (RFC 1006: ISO transport over TCP, under S7 and RDP) and
//! connection-oriented DCE/RPC (C706, chapter 12: Windows RPC, MAPI, DCOM).

use super::{Asks, Completed, Framing, Step};

/// Which header, and so where the length sits in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lengths {
    Dns,
    Smb,
    /// A PostgreSQL client's first messages: a length, then a request code
    /// or protocol version, without a type byte.
    PostgresStartup,
    /// A PostgreSQL client after its startup: a type byte, then a length.
    PostgresQuery,
    /// A PostgreSQL server: a type byte, then a length. Its first answer
    /// to an encryption request is a single byte.
    PostgresAnswer,
    MemcachedBinary,
    Modbus,
    Tpkt,
    DceRpc,
}

/// PostgreSQL's protocol version 3.0, as a startup message states it
/// (other codes there ask for encryption or cancel a query, and another
/// startup message follows them).
const POSTGRES_PROTOCOL_3: u32 = 196_608;

/// A TPKT packet this long holds a COTP data TPDU's three-byte header and
/// no data: it carries nothing to answer.
const TPKT_EMPTY_DATA: u32 = 7;

/// DCE/RPC packet types that ask for an answer: a request, a bind and an
/// alter-context (C706, 12.6.4). The rest answer one (a response, a fault,
/// a bind's acknowledgement or refusal) or ask nothing (auth3, shutdown,
/// cancel, orphaned).
const DCERPC_ASKING: [u8; 3] = [0, 11, 14];

/// The flag of a DCE/RPC fragment that ends its call's message.
const DCERPC_LAST_FRAGMENT: u8 = 0x02;

/// Whether `first` opens a connection-oriented DCE/RPC packet: version 5.0,
/// a packet type C706 defines, and a fragment at least a header long.
pub fn starts_dcerpc(first: &[u8]) -> bool {
    first.len() >= 16
        && first[..2] == [5, 0]
        && first[2] <= 19
        && Lengths::DceRpc.body_len(&first[..10]).is_some()
}

/// memcached binary opcodes that ask for no answer: the quiet variants
/// (answered only on a miss or an error, or at the next non-quiet one) and quitq.
const MEMCACHED_QUIET: [u8; 13] = [
    0x09, 0x0d, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1e,
];

impl Lengths {
    fn header_len(self) -> usize {
        match self {
            Lengths::Dns => 2,
            Lengths::Smb => 4,
            // The length, and the protocol version or request code.
            Lengths::PostgresStartup => 8,
            Lengths::PostgresQuery | Lengths::PostgresAnswer => 5,
            Lengths::MemcachedBinary => 24,
            // Transaction and protocol identifiers, then the length.
            Lengths::Modbus => 6,
            // Version 3, a reserved byte, then the length of the whole packet.
            Lengths::Tpkt => 4,
            // Version, minor version, type, flags, data representation,
            // then the fragment's whole length.
            Lengths::DceRpc => 10,
        }
    }

    /// The body's length after `header`; None when the header is not of the protocol.
    fn body_len(self, header: &[u8]) -> Option<u64> {
        let be32 = |at: usize| u32::from_be_bytes(header[at..at + 4].try_into().unwrap());
        match self {
            Lengths::Dns => Some(u64::from(u16::from_be_bytes([header[0], header[1]]))),
            Lengths::Smb => match header[0] {
                0x00 => Some(u64::from(be32(0))),
                0x81..=0x85 => Some(u64::from(be32(0) & 0x1_ffff)),
                _ => None,
            },
            Lengths::PostgresStartup => u64::from(be32(0)).checked_sub(8),
            Lengths::PostgresQuery | Lengths::PostgresAnswer => header[0]
                .is_ascii_alphabetic()
                .then(|| u64::from(be32(1)).checked_sub(4))
                .flatten(),
            Lengths::MemcachedBinary => {
                matches!(header[0], 0x80 | 0x81).then(|| u64::from(be32(8)))
            }
            Lengths::Modbus => (header[2..4] == [0, 0])
                .then(|| u64::from(u16::from_be_bytes([header[4], header[5]]))),
            Lengths::Tpkt => (header[..2] == [3, 0])
                .then(|| u64::from(u16::from_be_bytes([header[2], header[3]])).checked_sub(4))
                .flatten(),
            Lengths::DceRpc => {
                let length = [header[8], header[9]];
                // The data representation's first byte says the byte order.
                let fragment = if header[4] & 0x10 != 0 {
                    u16::from_le_bytes(length)
                } else {
                    u16::from_be_bytes(length)
                };
                (header[..2] == [5, 0] && fragment >= 16).then(|| u64::from(fragment) - 10)
            }
        }
    }

    /// Whether the message under `header` ends what its sender has to say
    /// for now, and what it asks of the other side.
    fn message(self, header: &[u8], client: bool) -> (bool, Asks) {
        match self {
            Lengths::Dns | Lengths::Smb if !client => (true, Asks::Nothing),
            Lengths::Dns => (true, Asks::Answer),
            // A NetBIOS keep-alive asks for nothing.
            Lengths::Smb if header[0] == 0x85 => (true, Asks::Nothing),
            Lengths::Smb => (true, Asks::Answer),
            Lengths::PostgresStartup => (true, Asks::Answer),
            Lengths::PostgresQuery => match header[0] {
                // Simple query, Sync, password, function call, Flush, the end of a COPY.
                b'Q' | b'S' | b'p' | b'F' | b'H' | b'c' | b'f' => (true, Asks::Answer),
                b'X' => (true, Asks::Nothing),
                // Parse, Bind, Describe, Execute, Close, CopyData: more follows.
                _ => (false, Asks::Unknown),
            },
            // Ready for the next query, asking for authentication, ready
            // for COPY data, a notification: the client's turn.
            Lengths::PostgresAnswer => (
                matches!(header[0], b'Z' | b'R' | b'G' | b'W' | b'A'),
                Asks::Nothing,
            ),
            Lengths::MemcachedBinary if !client => (true, Asks::Nothing),
            Lengths::MemcachedBinary if MEMCACHED_QUIET.contains(&header[1]) => {
                (true, Asks::Nothing)
            }
            Lengths::MemcachedBinary => (true, Asks::Answer),
            Lengths::Modbus | Lengths::Tpkt if !client => (true, Asks::Nothing),
            Lengths::Modbus => (true, Asks::Answer),
            Lengths::Tpkt
                if u32::from(u16::from_be_bytes([header[2], header[3]])) == TPKT_EMPTY_DATA =>
            {
                (true, Asks::Nothing)
            }
            Lengths::Tpkt => (true, Asks::Answer),
            Lengths::DceRpc if header[3] & DCERPC_LAST_FRAGMENT == 0 => (false, Asks::Unknown),
            Lengths::DceRpc if DCERPC_ASKING.contains(&header[2]) => (true, Asks::Answer),
            Lengths::DceRpc => (true, Asks::Nothing),
        }
    }
}

/// One direction of a length-prefixed protocol.
#[derive(Debug)]
pub struct Prefixed {
    lengths: Lengths,
    client: bool,
    header: [u8; 24],
    /// Header bytes read so far.
    have: usize,
    /// The header the message being read opened with.
    message: Lengths,
    /// Body bytes still to come.
    body_left: u64,
    /// The last message read ended what its sender had to say.
    at_end: bool,
    completed: Completed,
    /// Nothing read yet: a PostgreSQL server's first answer may be the
    /// single byte that answers a request for encryption.
    first: bool,
}

impl Prefixed {
    pub fn new(lengths: Lengths, client: bool) -> Self {
        Prefixed {
            lengths,
            client,
            header: [0; 24],
            have: 0,
            message: lengths,
            body_left: 0,
            at_end: true,
            completed: Completed::default(),
            first: true,
        }
    }

    pub fn asks(&self) -> Option<Asks> {
        self.completed.0
    }

    pub fn take(&mut self, captured: &[u8], len: usize) -> Step {
        self.completed = Completed::default();
        let first = std::mem::take(&mut self.first);
        if first && self.lengths == Lengths::PostgresAnswer && len == 1 {
            return encryption_answer(captured);
        }
        let mut at = 0;
        while at < len {
            if self.body_left > 0 {
                let skipped = self.body_left.min((len - at) as u64);
                self.body_left -= skipped;
                at += skipped as usize;
                if self.body_left == 0 {
                    self.end_message();
                }
                continue;
            }
            let Some(available) = captured.get(at..len.min(captured.len())) else {
                return Step::Lost;
            };
            if available.is_empty() {
                return Step::Lost;
            }
            let wanted = self.lengths.header_len() - self.have;
            let taken = wanted.min(available.len());
            self.header[self.have..self.have + taken].copy_from_slice(&available[..taken]);
            self.have += taken;
            at += taken;
            if self.have == self.lengths.header_len() && !self.read_header() {
                return Step::Lost;
            }
        }
        let finished = self.have == 0 && self.body_left == 0 && self.at_end;
        Step::Framed(if finished {
            Framing::Complete
        } else {
            Framing::Unfinished
        })
    }

    /// Reads a whole header: the body's length, and what the message is.
    fn read_header(&mut self) -> bool {
        let header = &self.header[..self.lengths.header_len()];
        let Some(body_len) = self.lengths.body_len(header) else {
            return false;
        };
        self.message = self.lengths;
        if self.lengths == Lengths::PostgresStartup
            && self.header[4..8] == POSTGRES_PROTOCOL_3.to_be_bytes()
        {
            self.lengths = Lengths::PostgresQuery;
        }
        self.body_left = body_len;
        self.at_end = false;
        if body_len == 0 {
            self.end_message();
        }
        true
    }

    fn end_message(&mut self) {
        let header = &self.header[..self.message.header_len()];
        let (ends, asks) = self.message.message(header, self.client);
        self.at_end = ends;
        if ends {
            self.completed.note(asks);
        }
        self.have = 0;
    }
}

/// A PostgreSQL server's one-byte answer to a request for encryption:
/// `S` (TLS follows), `N` (it goes on in the clear); anything else
/// (`G`, GSSAPI) is not framed here.
fn encryption_answer(captured: &[u8]) -> Step {
    match captured.first() {
        Some(b'S') => Step::StartsTls,
        Some(b'N') => Step::Framed(Framing::Complete),
        _ => Step::Lost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DCE/RPC header, little-endian, of `ptype` with `flags`, `length` long in all.
    fn dcerpc(ptype: u8, flags: u8, length: u16) -> Vec<u8> {
        let mut header = vec![5, 0, ptype, flags, 0x10, 0, 0, 0];
        header.extend_from_slice(&length.to_le_bytes());
        header.extend_from_slice(&[0; 6]);
        header
    }

    #[test]
    fn a_dcerpc_request_asks_and_its_response_answers_whichever_side_sends_it() {
        for client in [true, false] {
            let mut side = Prefixed::new(Lengths::DceRpc, client);
            let request = dcerpc(0, 0x03, 24);
            assert_eq!(side.take(&request, 16), Step::Framed(Framing::Unfinished));
            assert_eq!(side.take(&[0; 8], 8), Step::Framed(Framing::Complete));
            assert_eq!(side.asks(), Some(Asks::Answer));
            let response = dcerpc(2, 0x03, 16);
            assert_eq!(side.take(&response, 16), Step::Framed(Framing::Complete));
            assert_eq!(side.asks(), Some(Asks::Nothing));
        }
    }

    #[test]
    fn a_dcerpc_fragment_before_the_last_leaves_its_message_unfinished() {
        let mut client = Prefixed::new(Lengths::DceRpc, true);
        let first_fragment = dcerpc(0, 0x01, 16);
        assert_eq!(
            client.take(&first_fragment, 16),
            Step::Framed(Framing::Unfinished)
        );
        assert!(starts_dcerpc(&first_fragment));
        assert!(!starts_dcerpc(&[
            5, 0, 0, 3, 0x10, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0
        ]));
    }

    #[test]
    fn a_dns_message_over_tcp_ends_at_its_length() {
        let mut query = Prefixed::new(Lengths::Dns, true);
        assert_eq!(query.take(&[0, 4, 1], 3), Step::Framed(Framing::Unfinished));
        assert_eq!(query.take(&[2, 3, 4], 3), Step::Framed(Framing::Complete));
        assert_eq!(query.asks(), Some(Asks::Answer));
    }

    #[test]
    fn a_postgres_client_is_typed_after_its_startup_message() {
        let mut client = Prefixed::new(Lengths::PostgresStartup, true);
        let startup = [0, 0, 0, 8, 0, 3, 0, 0];
        assert_eq!(client.take(&startup, 8), Step::Framed(Framing::Complete));
        let query = b"Q\x00\x00\x00\x0dSELECT 1\x00";
        assert_eq!(
            client.take(query, query.len()),
            Step::Framed(Framing::Complete)
        );
        assert_eq!(client.asks(), Some(Asks::Answer));
    }

    #[test]
    fn a_postgres_server_that_accepts_encryption_hands_over_to_tls() {
        let mut server = Prefixed::new(Lengths::PostgresAnswer, false);
        assert_eq!(server.take(b"S", 1), Step::StartsTls);
    }

    #[test]
    fn a_tpkt_data_tpdu_with_no_data_asks_nothing() {
        let mut client = Prefixed::new(Lengths::Tpkt, true);
        let empty = [3, 0, 0, 7, 2, 0xf0, 0x80];
        assert_eq!(client.take(&empty, 7), Step::Framed(Framing::Complete));
        assert_eq!(client.asks(), Some(Asks::Nothing));
        let read = [3, 0, 0, 9, 2, 0xf0, 0x80, 0x32, 0x01];
        assert_eq!(
            client.take(&read[..6], 6),
            Step::Framed(Framing::Unfinished)
        );
        assert_eq!(client.take(&read[6..], 3), Step::Framed(Framing::Complete));
        assert_eq!(client.asks(), Some(Asks::Answer));
    }

    #[test]
    fn a_modbus_request_ends_at_its_mbap_length() {
        let mut client = Prefixed::new(Lengths::Modbus, true);
        let read_registers = [0, 1, 0, 0, 0, 6, 1, 3, 0, 0, 0, 10];
        assert_eq!(
            client.take(&read_registers, 12),
            Step::Framed(Framing::Complete)
        );
        assert_eq!(client.asks(), Some(Asks::Answer));
    }

    #[test]
    fn bytes_that_are_not_the_protocol_lose_the_framing() {
        let mut smb = Prefixed::new(Lengths::Smb, true);
        assert_eq!(smb.take(b"GET / HTTP/1.1\r\n", 16), Step::Lost);
    }
}
