//! TLS records (RFC 8446 §5.1, RFC 5246 §6.2): a five-byte header (type,
//! version, length), then that many bytes. The client's hello names the
//! application in its ALPN extension (RFC 7301): HTTP's requests each ask
//! for an answer, which encrypted records alone cannot show.

use super::headed::{Headed, HeaderThenBody};
use super::{Asks, Step};

const CHANGE_CIPHER_SPEC: u8 = 20;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;
const HEARTBEAT: u8 = 24;
const HEADER_LEN: usize = 5;
/// The longest record body: 2^14 bytes of plaintext plus what protection adds.
const LONGEST_BODY: u64 = (1 << 14) + 2048;
const CLIENT_HELLO: u8 = 1;
const ALPN: u16 = 16;
/// ALPN names of HTTP, whose every request asks for an answer.
const HTTP_NAMES: [&[u8]; 4] = [b"http/1.1", b"http/1.0", b"h2", b"h3"];

/// Whether a message starts with a TLS handshake record (a hello).
pub fn starts(first: &[u8]) -> bool {
    matches!(first, [HANDSHAKE, 3, 0..=4, ..])
}

fn is_record_header(header: &[u8]) -> bool {
    (CHANGE_CIPHER_SPEC..=HEARTBEAT).contains(&header[0]) && header[1] == 3 && header[2] <= 4
}

/// One direction's records.
#[derive(Debug)]
pub struct Records {
    reader: HeaderThenBody<HEADER_LEN>,
    side: Side,
}

/// Who sends the records, and what the client's hello said.
#[derive(Debug)]
struct Side {
    client: bool,
    /// The client's hello named HTTP: its application data are requests.
    speaks_http: bool,
}

impl Records {
    pub fn new(client: bool) -> Self {
        Records {
            reader: HeaderThenBody::new(),
            side: Side {
                client,
                speaks_http: false,
            },
        }
    }

    pub fn asks(&self) -> Option<Asks> {
        self.reader.asks()
    }

    pub fn take(&mut self, captured: &[u8], len: usize) -> Step {
        self.reader.take(captured, len, &mut self.side)
    }
}

impl Headed<HEADER_LEN> for Side {
    fn body_len(&mut self, header: &[u8; HEADER_LEN], body: &[u8]) -> Option<u64> {
        if !is_record_header(header) {
            return None;
        }
        let len = u64::from(u16::from_be_bytes([header[3], header[4]]));
        if len > LONGEST_BODY {
            return None;
        }
        if self.client && header[0] == HANDSHAKE {
            self.speaks_http |= names_http(body);
        }
        Some(len)
    }

    fn asks(&self, header: &[u8; HEADER_LEN]) -> Asks {
        match header[0] {
            _ if !self.client => Asks::Nothing,
            ALERT => Asks::Nothing,
            HANDSHAKE | CHANGE_CIPHER_SPEC | HEARTBEAT => Asks::Answer,
            _ if self.speaks_http => Asks::Answer,
            _ => Asks::Unknown,
        }
    }

    fn ends_message(&self, header: &[u8; HEADER_LEN]) -> bool {
        header[0] != APPLICATION_DATA
    }
}

/// Whether a handshake record's body is a client hello whose ALPN
/// extension offers HTTP. As much of the hello as the capture kept is read.
fn names_http(body: &[u8]) -> bool {
    client_hello_alpn(body).is_some_and(|names| {
        names
            .iter()
            .any(|name| HTTP_NAMES.contains(&name.as_slice()))
    })
}

/// The ALPN names a client hello offers.
fn client_hello_alpn(body: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut reader = Reader(body);
    if reader.byte()? != CLIENT_HELLO {
        return None;
    }
    reader.skip(3 + 2 + 32)?; // length, version, random
    let session = reader.byte()?;
    reader.skip(usize::from(session))?;
    let suites = reader.u16()?;
    reader.skip(usize::from(suites))?;
    let compressions = reader.byte()?;
    reader.skip(usize::from(compressions))?;
    let extensions_len = usize::from(reader.u16()?);
    let mut extensions = Reader(reader.take(extensions_len)?);
    while let (Some(kind), Some(len)) = (extensions.u16(), extensions.u16()) {
        let data = extensions.take(usize::from(len))?;
        if kind == ALPN {
            let mut list = Reader(data);
            let names_len = usize::from(list.u16()?);
            let mut names = Reader(list.take(names_len)?);
            let mut offered = Vec::new();
            while let Some(len) = names.byte() {
                offered.push(names.take(usize::from(len))?.to_vec());
            }
            return Some(offered);
        }
    }
    None
}

/// Reads big-endian fields from the front of a slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let (taken, rest) = (self.0.get(..len)?, &self.0[len..]);
        self.0 = rest;
        Some(taken)
    }

    fn skip(&mut self, len: usize) -> Option<()> {
        self.take(len).map(drop)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u16(&mut self) -> Option<u16> {
        let bytes = self.take(2)?;
        Some(u16::from_be_bytes([bytes[0], bytes[1]]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::Framing;

    /// A client hello offering `names` by ALPN, as a record.
    fn client_hello(names: &[&[u8]]) -> Vec<u8> {
        let mut alpn_list = Vec::new();
        for name in names {
            alpn_list.push(name.len() as u8);
            alpn_list.extend_from_slice(name);
        }
        let mut alpn = (alpn_list.len() as u16).to_be_bytes().to_vec();
        alpn.extend(alpn_list);
        let mut extensions = ALPN.to_be_bytes().to_vec();
        extensions.extend((alpn.len() as u16).to_be_bytes());
        extensions.extend(alpn);
        let mut hello = vec![3, 3];
        hello.extend([0; 32]);
        hello.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        hello.extend((extensions.len() as u16).to_be_bytes());
        hello.extend(extensions);
        let mut body = vec![CLIENT_HELLO, 0];
        body.extend((hello.len() as u16).to_be_bytes());
        body.extend(hello);
        let mut record = vec![HANDSHAKE, 3, 1];
        record.extend((body.len() as u16).to_be_bytes());
        record.extend(body);
        record
    }

    #[test]
    fn application_data_asks_for_an_answer_once_the_hello_named_http() {
        let mut client = Records::new(true);
        let hello = client_hello(&[b"h2", b"http/1.1"]);
        assert_eq!(
            client.take(&hello, hello.len()),
            Step::Framed(Framing::Complete)
        );
        let data = [23, 3, 3, 0, 2, 9, 9];
        client.take(&data, data.len());
        assert_eq!(client.asks(), Some(Asks::Answer));
    }

    #[test]
    fn application_data_of_an_unnamed_application_may_ask_for_nothing() {
        let mut client = Records::new(true);
        let hello = client_hello(&[b"imap"]);
        client.take(&hello, hello.len());
        let data = [23, 3, 3, 0, 2, 9, 9];
        client.take(&data, data.len());
        assert_eq!(client.asks(), Some(Asks::Unknown));
    }

    #[test]
    fn an_alert_asks_for_nothing() {
        let mut client = Records::new(true);
        let close_notify = [ALERT, 3, 3, 0, 2, 1, 0];
        client.take(&close_notify, close_notify.len());
        assert_eq!(client.asks(), Some(Asks::Nothing));
    }
}
