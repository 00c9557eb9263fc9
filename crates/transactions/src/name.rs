//! Names for requests and responses, read from the first bytes of their payload.
//!
//! HTTP/1.x gives the method, path and status (`GET /index.html → 200`); TLS
//! gives its records (`TLS ClientHello example.com → ServerHello`, then
//! `TLS application data`). Only the captured start of a message's first
//! segment is read. Names stay short and printable: other bytes are escaped
//! and long paths cut.

/// The longest path or server name kept, in characters.
const MAX_TEXT_CHARS: usize = 200;

const HTTP_METHODS: [&str; 9] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE",
];

/// Whether a payload could start an HTTP or TLS message: two upper-case
/// letters, or a TLS record type with major version 3. Cheap enough to ask of
/// every segment, so only these payloads need to be kept for naming.
pub fn may_name(payload: &[u8]) -> bool {
    match payload {
        [first, second, ..] => {
            (first.is_ascii_uppercase() && second.is_ascii_uppercase())
                || ((record::CHANGE_CIPHER_SPEC..=record::APPLICATION_DATA).contains(first)
                    && *second == 3)
        }
        _ => false,
    }
}

/// What the start of a request says, if it is HTTP or TLS.
pub fn of_request(payload: &[u8]) -> Option<String> {
    http_request(payload).or_else(|| tls_records(payload).map(|records| format!("TLS {records}")))
}

/// What the start of a response says, if it is HTTP or TLS.
pub fn of_response(payload: &[u8]) -> Option<String> {
    http_status(payload).or_else(|| tls_records(payload))
}

/// A transaction's name from its request's and response's names.
pub fn of_transaction(request: Option<&str>, response: Option<&str>) -> Option<String> {
    const TLS_DATA: &str = "TLS application data";
    match (request, response) {
        (Some(TLS_DATA), Some("application data")) => Some(TLS_DATA.into()),
        (Some(request), Some(response)) => Some(format!("{request} → {response}")),
        (Some(request), None) => Some(request.into()),
        (None, Some(response)) => Some(format!("→ {response}")),
        (None, None) => None,
    }
}

/// `GET /index.html`, from `GET /index.html HTTP/1.1`.
fn http_request(payload: &[u8]) -> Option<String> {
    let method = HTTP_METHODS.iter().find(|method| {
        payload.starts_with(method.as_bytes()) && payload.get(method.len()) == Some(&b' ')
    })?;
    let target = &payload[method.len() + 1..];
    let end = target
        .iter()
        .position(|&b| b == b' ' || b == b'\r' || b == b'\n');
    let path = printable(&target[..end.unwrap_or(target.len())], end.is_none());
    Some(format!("{method} {path}"))
}

/// `200`, from `HTTP/1.1 200 OK`.
fn http_status(payload: &[u8]) -> Option<String> {
    let rest = payload.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    (rest.get(1) == Some(&b' ') && code.iter().all(u8::is_ascii_digit))
        .then(|| String::from_utf8_lossy(code).into_owned())
}

mod record {
    pub const CHANGE_CIPHER_SPEC: u8 = 20;
    pub const ALERT: u8 = 21;
    pub const HANDSHAKE: u8 = 22;
    pub const APPLICATION_DATA: u8 = 23;
    pub const HEADER_LEN: usize = 5;
}

/// The TLS records that start in `payload`, named in order, repeats merged:
/// `ClientKeyExchange, ChangeCipherSpec, Finished`.
fn tls_records(payload: &[u8]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    let mut encrypted = false;
    let mut rest = payload;
    while let Some(header) = rest.get(..record::HEADER_LEN) {
        let (kind, major, minor) = (header[0], header[1], header[2]);
        if !(record::CHANGE_CIPHER_SPEC..=record::APPLICATION_DATA).contains(&kind)
            || major != 3
            || minor > 4
        {
            break;
        }
        let body_len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let body = &rest[record::HEADER_LEN..];
        let name = match kind {
            record::CHANGE_CIPHER_SPEC => "ChangeCipherSpec".to_string(),
            record::ALERT => "alert".to_string(),
            // After ChangeCipherSpec a handshake record is encrypted: the Finished message.
            record::HANDSHAKE if encrypted => "Finished".to_string(),
            record::HANDSHAKE => handshake_message(body)?,
            _ => "application data".to_string(),
        };
        encrypted |= kind == record::CHANGE_CIPHER_SPEC;
        if names.last() != Some(&name) {
            names.push(name);
        }
        rest = rest
            .get(record::HEADER_LEN + body_len..)
            .unwrap_or_default();
    }
    (!names.is_empty()).then(|| names.join(", "))
}

fn handshake_message(body: &[u8]) -> Option<String> {
    let name = match *body.first()? {
        0 => "HelloRequest",
        1 => return Some(client_hello(body)),
        2 => "ServerHello",
        4 => "NewSessionTicket",
        8 => "EncryptedExtensions",
        11 => "Certificate",
        12 => "ServerKeyExchange",
        13 => "CertificateRequest",
        14 => "ServerHelloDone",
        15 => "CertificateVerify",
        16 => "ClientKeyExchange",
        20 => "Finished",
        _ => return None,
    };
    Some(name.into())
}

/// `ClientHello`, with the server name it asks for when that was captured.
fn client_hello(body: &[u8]) -> String {
    match server_name(body) {
        Some(name) => format!("ClientHello {name}"),
        None => "ClientHello".into(),
    }
}

/// The SNI host name of a ClientHello handshake message, if captured whole.
fn server_name(message: &[u8]) -> Option<String> {
    const SERVER_NAME_EXTENSION: u16 = 0;
    const HOST_NAME: u8 = 0;
    // Type, length, version and random come first: 1 + 3 + 2 + 32 bytes.
    let mut at = 38;
    at += 1 + usize::from(*message.get(at)?); // session id
    at += 2 + usize::from(be16(message, at)?); // cipher suites
    at += 1 + usize::from(*message.get(at)?); // compression methods
    at += 2; // extensions length
    loop {
        let (kind, len) = (be16(message, at)?, usize::from(be16(message, at + 2)?));
        let data = at + 4;
        if kind == SERVER_NAME_EXTENSION {
            // A list of (type, length, name); the host name is the one used.
            let name_len = usize::from(be16(message, data + 3)?);
            let name = message.get(data + 5..data + 5 + name_len)?;
            return (*message.get(data + 2)? == HOST_NAME).then(|| printable(name, false));
        }
        at = data + len;
    }
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]))
}

/// Printable ASCII kept, other bytes escaped as `\xNN`, cut at
/// [`MAX_TEXT_CHARS`] with `…` where cut (or where the capture `ended` first).
fn printable(bytes: &[u8], ended: bool) -> String {
    let mut text = String::new();
    for &byte in bytes {
        let piece = if byte.is_ascii_graphic() {
            char::from(byte).to_string()
        } else {
            format!("\\x{byte:02x}")
        };
        if text.len() + piece.len() > MAX_TEXT_CHARS {
            return text + "…";
        }
        text.push_str(&piece);
    }
    if ended {
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_requests_and_responses_name_method_path_and_status() {
        let request = of_request(b"GET /index.html HTTP/1.1\r\nHost: x\r\n");
        let response = of_response(b"HTTP/1.1 200 OK\r\n");
        assert_eq!(
            of_transaction(request.as_deref(), response.as_deref()).as_deref(),
            Some("GET /index.html → 200")
        );
        assert_eq!(of_request(b"POST /a b").as_deref(), Some("POST /a"));
        assert_eq!(of_request(b"GETX / HTTP/1.1"), None);
        assert_eq!(of_response(b"HTTP/1.0 4x4 Bad"), None);
    }

    #[test]
    fn every_nameable_start_is_kept_and_most_binary_data_is_not() {
        let hello = client_hello_with_sni("example.com");
        for payload in [
            &b"GET / HTTP/1.1\r\n"[..],
            b"HTTP/1.1 200 OK\r\n",
            b"OPTIONS * HTTP/1.1",
            &hello,
            &[23, 3, 3, 0, 16],
        ] {
            assert!(of_request(payload).or(of_response(payload)).is_some());
            assert!(may_name(payload), "{payload:?}");
        }
        let binary: Vec<u8> = (0..=255u8).collect();
        let kept = binary.windows(2).filter(|start| may_name(start)).count();
        assert!(kept <= 26, "{kept} of 255 starts kept");
        assert!(!may_name(b"G"));
    }

    #[test]
    fn a_path_cut_by_the_capture_or_too_long_ends_in_an_ellipsis() {
        assert_eq!(of_request(b"GET /abc").as_deref(), Some("GET /abc…"));
        let long = format!("GET /{} HTTP/1.1", "a".repeat(500));
        let name = of_request(long.as_bytes()).unwrap();
        assert_eq!(name.chars().count(), 4 + MAX_TEXT_CHARS + 1);
        assert_eq!(
            of_request(b"GET /caf\xc3\xa9\x01 HTTP/1.1").as_deref(),
            Some("GET /caf\\xc3\\xa9\\x01")
        );
    }

    fn client_hello_with_sni(host: &str) -> Vec<u8> {
        let mut extension = vec![0, 0];
        let list_len = 3 + host.len();
        extension.extend((list_len as u16 + 2).to_be_bytes());
        extension.extend((list_len as u16).to_be_bytes());
        extension.push(0);
        extension.extend((host.len() as u16).to_be_bytes());
        extension.extend(host.as_bytes());
        let mut hello = vec![3, 3];
        hello.extend([7; 32]);
        hello.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        hello.extend((extension.len() as u16).to_be_bytes());
        hello.extend(extension);
        let mut message = vec![1, 0];
        message.extend((hello.len() as u16).to_be_bytes());
        message.extend(hello);
        let mut record = vec![22, 3, 1];
        record.extend((message.len() as u16).to_be_bytes());
        record.extend(message);
        record
    }

    #[test]
    fn tls_names_the_handshake_with_its_server_name_then_application_data() {
        let hello = client_hello_with_sni("example.com");
        assert_eq!(
            of_request(&hello).as_deref(),
            Some("TLS ClientHello example.com")
        );
        assert_eq!(
            of_request(&hello[..hello.len() - 3]).as_deref(),
            Some("TLS ClientHello")
        );
        let finished = [20, 3, 3, 0, 1, 1, 22, 3, 3, 0, 40, 0xab, 0xcd];
        assert_eq!(
            of_response(&finished).as_deref(),
            Some("ChangeCipherSpec, Finished")
        );
        let data = [23, 3, 3, 0, 2, 9, 9, 23, 3, 3, 0, 9];
        let request = of_request(&data);
        let response = of_response(&data);
        assert_eq!(
            of_transaction(request.as_deref(), response.as_deref()).as_deref(),
            Some("TLS application data")
        );
        assert_eq!(of_response(&[23, 2, 0, 0, 1]), None);
    }
}
