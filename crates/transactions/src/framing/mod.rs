//! Where each message ends, read from the protocol's own framing.
//!
//! A pause inside what one side sends costs time only when the other side
//! is provably waiting for the rest. The protocol says so where it states
//! its messages' lengths: a TLS record's header, an HTTP message's
//! `Content-Length` or chunked encoding, the length fields of DNS over TCP,
//! SMB, PostgreSQL, DNP3, Modbus, TPKT (S7, RDP), DCE/RPC and memcached's binary
//! protocol, RESP's (Redis) and memcached's text framing. For each direction of a connection this
//! module follows those lengths through the byte stream, in sequence
//! order, and says after each segment whether the sender's bytes so far end
//! a message, stop inside one, or cannot be known (an unknown protocol, or
//! bytes the capture cut short or missed where a length was to be read).
//! It also says whether the client's messages ask for an answer (an HTTP
//! request does; a TLS alert, a memcached `noreply` command, a DNP3
//! master's confirm or an empty ISO transport data unit does not).

mod dnp3;
mod headed;
mod http;
mod lengths;
mod memcached;
mod resp;
mod tls;

use tcp::{Direction, SegmentView, SeqNumber};

use http::Http;
use lengths::{Lengths, Prefixed};
use memcached::MemcachedText;
use resp::Resp;

/// What a sender's bytes so far say of its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// They end a message: what comes next begins another.
    Complete,
    /// They stop inside a message whose length the protocol stated.
    Unfinished,
    /// Not known: the protocol's lengths are not read, or the capture cut
    /// or missed bytes where one was to be read.
    #[default]
    Unknown,
}

/// Whether the client's messages ask for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Asks {
    /// The protocol does not say (an unknown protocol, or encrypted data
    /// whose application is not named).
    #[default]
    Unknown,
    /// Every message is one nobody answers (an alert, a `noreply` command).
    Nothing,
    /// At least one message is a request the protocol answers.
    Answer,
}

impl Asks {
    /// What two sets of messages ask together.
    pub fn and(self, other: Asks) -> Asks {
        match (self, other) {
            (Asks::Answer, _) | (_, Asks::Answer) => Asks::Answer,
            (Asks::Nothing, Asks::Nothing) => Asks::Nothing,
            _ => Asks::Unknown,
        }
    }
}

/// What reading some bytes of a stream came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Framed(Framing),
    /// The bytes were not of the protocol, or the capture cut a length
    /// that was needed: the rest of the stream cannot be framed.
    Lost,
    /// PostgreSQL's server accepted encryption: both ways speak TLS from here.
    StartsTls,
    /// HTTP handed the connection over (a tunnel, or another protocol).
    HandedOver,
}

/// One direction's framing by its protocol.
#[derive(Debug)]
enum Reader {
    Tls(tls::Records),
    Http(Http),
    Prefixed(Prefixed),
    Resp(Resp),
    Memcached(MemcachedText),
    Dnp3(dnp3::Frames),
}

impl Reader {
    /// Reads the stream's next `len` bytes, of which `captured` is what the
    /// capture kept (their start).
    fn take(&mut self, captured: &[u8], len: usize) -> Step {
        match self {
            Reader::Tls(reader) => reader.take(captured, len),
            Reader::Http(reader) => reader.take(captured, len),
            Reader::Prefixed(reader) => reader.take(captured, len),
            Reader::Resp(reader) => reader.take(captured, len),
            Reader::Memcached(reader) => reader.take(captured, len),
            Reader::Dnp3(reader) => reader.take(captured, len),
        }
    }

    /// What the messages completed by the last bytes read ask for; None
    /// when they completed none.
    fn asks(&self) -> Option<Asks> {
        match self {
            Reader::Tls(reader) => reader.asks(),
            Reader::Http(reader) => reader.asks(),
            Reader::Prefixed(reader) => reader.asks(),
            Reader::Resp(reader) => reader.asks(),
            Reader::Memcached(reader) => reader.asks(),
            Reader::Dnp3(reader) => reader.asks(),
        }
    }
}

/// The protocol a connection speaks, as its port and first bytes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Tls,
    Http,
    Dns,
    Smb,
    Postgres,
    Redis,
    Memcached,
    MemcachedBinary,
    Modbus,
    Tpkt,
    Dnp3,
    DceRpc,
}

impl Protocol {
    /// Known by the server's well-known port, or by the first bytes of
    /// either side's first message.
    fn of(server_port: u16, first: &[u8]) -> Option<Protocol> {
        if tls::starts(first) {
            return Some(Protocol::Tls);
        }
        if http::starts(first) {
            return Some(Protocol::Http);
        }
        if dnp3::starts(first) {
            return Some(Protocol::Dnp3);
        }
        if lengths::starts_dcerpc(first) || server_port == 135 {
            return Some(Protocol::DceRpc);
        }
        match server_port {
            53 => Some(Protocol::Dns),
            102 | 3389 => Some(Protocol::Tpkt),
            502 => Some(Protocol::Modbus),
            139 | 445 => Some(Protocol::Smb),
            5432 => Some(Protocol::Postgres),
            6379 => Some(Protocol::Redis),
            11211 if first.first() == Some(&memcached::BINARY_REQUEST) => {
                Some(Protocol::MemcachedBinary)
            }
            11211 => Some(Protocol::Memcached),
            _ => None,
        }
    }

    fn reader(self, direction: Direction) -> Reader {
        let client = direction == Direction::ClientToServer;
        match self {
            Protocol::Tls => Reader::Tls(tls::Records::new(client)),
            Protocol::Http => Reader::Http(Http::new(client)),
            Protocol::Dns => Reader::Prefixed(Prefixed::new(Lengths::Dns, client)),
            Protocol::Smb => Reader::Prefixed(Prefixed::new(Lengths::Smb, client)),
            Protocol::Postgres if client => {
                Reader::Prefixed(Prefixed::new(Lengths::PostgresStartup, client))
            }
            Protocol::Postgres => Reader::Prefixed(Prefixed::new(Lengths::PostgresAnswer, client)),
            Protocol::Redis => Reader::Resp(Resp::new(client)),
            Protocol::Memcached => Reader::Memcached(MemcachedText::new(client)),
            Protocol::MemcachedBinary => {
                Reader::Prefixed(Prefixed::new(Lengths::MemcachedBinary, client))
            }
            Protocol::Modbus => Reader::Prefixed(Prefixed::new(Lengths::Modbus, client)),
            Protocol::Tpkt => Reader::Prefixed(Prefixed::new(Lengths::Tpkt, client)),
            Protocol::Dnp3 => Reader::Dnp3(dnp3::Frames::new(client)),
            Protocol::DceRpc => Reader::Prefixed(Prefixed::new(Lengths::DceRpc, client)),
        }
    }
}

/// One direction: its reader, and how far its bytes have been read.
#[derive(Debug, Default)]
struct Stream {
    reader: Option<Reader>,
    /// Just past the last byte read; None before the first.
    read_to: Option<SeqNumber>,
    framing: Framing,
    /// The stream can no longer be framed.
    lost: bool,
    /// What the messages the last segment completed ask for.
    asks: Option<Asks>,
}

impl Stream {
    /// Reads a data segment's bytes the stream has not read yet.
    fn take(&mut self, segment: &SegmentView, payload: &[u8]) -> Step {
        let read_to = *self.read_to.get_or_insert(segment.start());
        let already_read = segment.start().bytes_to(read_to);
        let len = i64::from(segment.len);
        if already_read >= len {
            return Step::Framed(self.framing);
        }
        self.read_to = Some(segment.end());
        self.asks = None;
        if already_read < 0 || self.lost {
            // Bytes the capture never saw: where their lengths lay is unknown.
            return Step::Lost;
        }
        let Some(reader) = self.reader.as_mut() else {
            return Step::Lost;
        };
        let skip = already_read as usize;
        let captured = payload.get(skip..).unwrap_or_default();
        let step = reader.take(captured, (len - already_read) as usize);
        self.asks = reader.asks();
        step
    }

    fn settle(&mut self, step: Step) {
        match step {
            Step::Framed(framing) => self.framing = framing,
            Step::Lost | Step::HandedOver => {
                self.lost = true;
                self.reader = None;
                self.framing = Framing::Unknown;
                self.asks = None;
            }
            Step::StartsTls => self.framing = Framing::Complete,
        }
    }
}

/// Both directions of one connection.
#[derive(Debug, Default)]
pub struct ConnectionFraming {
    protocol: Option<Protocol>,
    /// The protocol was sought in the first data and not found.
    unknown: bool,
    client: Stream,
    server: Stream,
}

impl ConnectionFraming {
    /// The framing of `direction`'s bytes so far.
    pub fn framing(&self, direction: Direction) -> Framing {
        self.stream(direction).framing
    }

    /// Reads a data segment (in capture order; `payload` is its captured
    /// start), returning what the messages it completed ask for, if it
    /// completed any.
    pub fn take(
        &mut self,
        segment: &SegmentView,
        payload: &[u8],
        server_port: u16,
    ) -> Option<Asks> {
        if segment.len == 0 {
            return None;
        }
        if self.protocol.is_none() && !self.unknown {
            self.protocol = Protocol::of(server_port, payload);
            self.unknown = self.protocol.is_none();
            if let Some(protocol) = self.protocol {
                self.client.reader = Some(protocol.reader(Direction::ClientToServer));
                self.server.reader = Some(protocol.reader(Direction::ServerToClient));
            }
        }
        let stream = self.stream_mut(segment.direction);
        let step = stream.take(segment, payload);
        stream.settle(step);
        let asks = stream.asks;
        if let (Some(Reader::Http(client)), Some(Reader::Http(server))) =
            (&mut self.client.reader, &mut self.server.reader)
        {
            server.expect_answers(client.take_requests());
        }
        match step {
            Step::StartsTls => self.start_tls(),
            Step::HandedOver => self.stream_mut(other(segment.direction)).settle(step),
            _ => {}
        }
        asks
    }

    /// Both directions speak TLS from where each has read to.
    fn start_tls(&mut self) {
        self.protocol = Some(Protocol::Tls);
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            let stream = self.stream_mut(direction);
            stream.reader = Some(Protocol::Tls.reader(direction));
            stream.framing = Framing::Complete;
        }
    }

    fn stream(&self, direction: Direction) -> &Stream {
        match direction {
            Direction::ClientToServer => &self.client,
            Direction::ServerToClient => &self.server,
        }
    }

    fn stream_mut(&mut self, direction: Direction) -> &mut Stream {
        match direction {
            Direction::ClientToServer => &mut self.client,
            Direction::ServerToClient => &mut self.server,
        }
    }
}

fn other(direction: Direction) -> Direction {
    match direction {
        Direction::ClientToServer => Direction::ServerToClient,
        Direction::ServerToClient => Direction::ClientToServer,
    }
}

/// What the messages some bytes completed ask for, gathered as they complete.
#[derive(Debug, Default, Clone, Copy)]
struct Completed(Option<Asks>);

impl Completed {
    fn note(&mut self, asks: Asks) {
        self.0 = Some(self.0.map_or(asks, |before| before.and(asks)));
    }
}

/// Finds `\r\n` in `bytes`: where the line ends (its length without them).
fn line_end(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|pair| pair == b"\r\n")
}

/// A decimal number as text, as lengths are written in line-based protocols.
fn decimal(text: &[u8]) -> Option<u64> {
    std::str::from_utf8(text).ok()?.trim().parse().ok()
}

/// A line read across segments: the bytes so far, and the longest a line
/// of the protocol may be.
#[derive(Debug, Default)]
struct Line {
    bytes: Vec<u8>,
}

/// How much of a line some bytes completed.
enum LineRead {
    /// The line ended: its text (without `\r\n`), and the bytes used.
    Done(Vec<u8>, usize),
    /// All the bytes were used, and the line goes on.
    Partial,
    /// The line is longer than the protocol allows.
    TooLong,
}

impl Line {
    /// Reads from `bytes`, which must all be captured.
    fn read(&mut self, bytes: &[u8], longest: usize) -> LineRead {
        let before = self.bytes.len();
        // A `\r` at the end of the bytes so far may pair with a `\n` here.
        let search_from = before.saturating_sub(1);
        self.bytes.extend_from_slice(bytes);
        match line_end(&self.bytes[search_from..]) {
            Some(at) => {
                let end = search_from + at;
                let used = end + 2 - before;
                let mut text = std::mem::take(&mut self.bytes);
                text.truncate(end);
                LineRead::Done(text, used)
            }
            None if self.bytes.len() > longest => LineRead::TooLong,
            None => LineRead::Partial,
        }
    }

    fn is_started(&self) -> bool {
        !self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(protocol: Protocol, direction: Direction, messages: &[&[u8]]) -> Vec<Step> {
        let mut reader = protocol.reader(direction);
        messages
            .iter()
            .map(|bytes| reader.take(bytes, bytes.len()))
            .collect()
    }

    const UNFINISHED: Step = Step::Framed(Framing::Unfinished);
    const COMPLETE: Step = Step::Framed(Framing::Complete);

    #[test]
    fn a_tls_record_is_unfinished_until_its_stated_length_has_come() {
        let handshake = [22, 3, 3, 0, 10];
        let steps = frame(
            Protocol::Tls,
            Direction::ServerToClient,
            &[&handshake, b"12345", b"67890"],
        );
        assert_eq!(steps, [UNFINISHED, UNFINISHED, COMPLETE]);
    }

    #[test]
    fn a_whole_record_of_application_data_may_hold_part_of_a_message() {
        let application_data = [23, 3, 3, 0, 5];
        let steps = frame(
            Protocol::Tls,
            Direction::ServerToClient,
            &[&application_data, b"12345"],
        );
        assert_eq!(steps, [UNFINISHED, Step::Framed(Framing::Unknown)]);
    }

    #[test]
    fn an_http_body_ends_at_its_content_length_and_chunked_at_its_last_chunk() {
        let steps = frame(
            Protocol::Http,
            Direction::ServerToClient,
            &[
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc",
                b"def",
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
                b"0\r\n\r\n",
            ],
        );
        assert_eq!(steps, [UNFINISHED, COMPLETE, UNFINISHED, COMPLETE]);
    }

    #[test]
    fn a_postgres_answer_ends_when_the_server_is_ready_for_the_next_query() {
        let row = b"D\x00\x00\x00\x06\x00\x00";
        let complete = b"C\x00\x00\x00\x0dSELECT 1\x00";
        let ready = b"Z\x00\x00\x00\x05I";
        let steps = frame(
            Protocol::Postgres,
            Direction::ServerToClient,
            &[row, complete, ready],
        );
        assert_eq!(steps, [UNFINISHED, UNFINISHED, COMPLETE]);
    }

    #[test]
    fn a_redis_array_ends_with_its_last_element() {
        let steps = frame(
            Protocol::Redis,
            Direction::ServerToClient,
            &[b"*2\r\n$3\r\nfoo\r\n", b"$3\r\nba", b"r\r\n"],
        );
        assert_eq!(steps, [UNFINISHED, UNFINISHED, COMPLETE]);
    }

    #[test]
    fn a_memcached_get_answer_ends_at_end() {
        let steps = frame(
            Protocol::Memcached,
            Direction::ServerToClient,
            &[b"VALUE k 0 5\r\nhel", b"lo\r\n", b"END\r\n"],
        );
        assert_eq!(steps, [UNFINISHED, UNFINISHED, COMPLETE]);
    }

    #[test]
    fn a_length_the_capture_cut_loses_the_framing() {
        let mut reader = Protocol::Tls.reader(Direction::ServerToClient);
        // Ten bytes of a record, then the next record's header beyond what was captured.
        assert_eq!(reader.take(&[22, 3, 3, 0, 5, 1, 2, 3, 4, 5], 10), COMPLETE);
        assert_eq!(reader.take(&[], 20), Step::Lost);
    }

    #[test]
    fn a_client_line_of_memcached_with_noreply_asks_nothing() {
        let mut reader = Protocol::Memcached.reader(Direction::ClientToServer);
        assert_eq!(reader.take(b"set k 0 0 2 noreply\r\nhi\r\n", 25), COMPLETE);
        assert_eq!(reader.asks(), Some(Asks::Nothing));
        assert_eq!(reader.take(b"get k\r\n", 7), COMPLETE);
        assert_eq!(reader.asks(), Some(Asks::Answer));
    }

    #[test]
    fn the_protocol_is_known_by_first_bytes_or_port() {
        assert_eq!(
            Protocol::of(8443, &[22, 3, 1, 0, 200, 1]),
            Some(Protocol::Tls)
        );
        assert_eq!(
            Protocol::of(8080, b"GET / HTTP/1.1\r\n"),
            Some(Protocol::Http)
        );
        assert_eq!(Protocol::of(53, &[0, 30]), Some(Protocol::Dns));
        assert_eq!(Protocol::of(9000, b"hello\n"), None);
        // A line that starts like a request but is not HTTP's.
        assert_eq!(Protocol::of(8080, b"GET 4000\n"), None);
    }
}
