//! Names for requests and responses, read from the first bytes of their payload.
//!
//! HTTP/1.x gives the method, path and status (`GET /index.html → 200`); TLS
//! gives its records (`TLS ClientHello example.com → ServerHello`, then
//! `TLS application data`). Only the captured start of a message's first
//! segment is read. Names stay short and printable: other bytes are escaped
//! and long paths cut. The same bytes tell an application failure: an HTTP
//! status of 400 or more, or a TLS alert (see [`AppFailure`]).

use std::fmt::Write;

use serde::Serialize;
use tcp::Role;

use crate::replies;

/// The longest path or server name kept, in characters.
const MAX_TEXT_CHARS: usize = 200;

const HTTP_METHODS: [&str; 9] = [
    "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE",
];

/// What the start of a request says, if it is HTTP, TLS or a protocol
/// `replies` reads.
pub fn of_request(payload: &[u8]) -> Option<String> {
    http_request(payload)
        .or_else(|| tls_records(payload).map(|records| format!("TLS {records}")))
        .or_else(|| replies::request_name(payload))
}

/// What the start of a response says, if it is HTTP, TLS or a reply code.
pub fn of_response(payload: &[u8]) -> Option<String> {
    http_status(payload)
        .or_else(|| tls_records(payload))
        .or_else(|| replies::response_name(payload))
}

/// Whether a request, by its name (see [`of_request`]), is one the client
/// made on its own, whose failure nothing it went on to do depended on: a
/// browser's fetch of a site's icon (`/favicon.ico`,
/// `/apple-touch-icon.png`), or a question about what the server offers
/// (see `replies::is_probe`).
pub fn is_incidental(request: &str) -> bool {
    let icon = HTTP_METHODS.iter().any(|method| {
        request
            .strip_prefix(method)
            .and_then(|rest| rest.strip_prefix(' '))
            .is_some_and(|path| {
                let file = path.split(['?', '#']).next().unwrap_or_default();
                let last = file.rsplit('/').next().unwrap_or_default();
                last.to_ascii_lowercase().contains("icon")
            })
    });
    icon || replies::is_probe(request)
}

/// Whether a message is TLS alerts alone: a close or an error report,
/// which no one answers.
pub fn is_tls_alert(payload: &[u8]) -> bool {
    let mut records = tls_record_walk(payload).peekable();
    records.peek().is_some() && records.all(|(kind, ..)| kind == record::ALERT)
}

/// The failure a message's start shows, if any: a TLS alert from either
/// side, an HTTP error status from the server. `frame` carried it.
pub fn failure_in(payload: &[u8], by: Role, frame: u64) -> Option<AppFailure> {
    let (kind, code) = match by {
        Role::Server => http_status_code(payload)
            .filter(|&code| code >= 400)
            .map(|code| (FailureKind::HttpStatus, code))
            .or_else(|| replies::failure(payload)),
        Role::Client => None,
    }
    .or_else(|| tls_alert(payload).map(|code| (FailureKind::TlsAlert, u16::from(code))))?;
    Some(AppFailure {
        kind,
        by,
        code: Some(code),
        frame,
        incidental: false,
    })
}

/// A server that answered a request it could read (`asked`: HTTP, TLS or
/// another protocol `replies` names) with the banner SSH opens with: the
/// client reached a service of another protocol, which cannot answer it.
pub fn other_protocol(asked: bool, payload: &[u8], frame: u64) -> Option<AppFailure> {
    (asked && payload.starts_with(b"SSH-")).then_some(AppFailure {
        kind: FailureKind::OtherProtocol,
        by: Role::Server,
        code: None,
        frame,
        incidental: false,
    })
}

/// A request or response that failed at the application's level: it did not
/// do what was asked, however fast it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ::record::Wire, ::record::Columns)]
pub struct AppFailure {
    pub kind: FailureKind,
    /// The side that signalled it.
    pub by: Role,
    /// The HTTP status, or the TLS alert's description; None for a reset.
    pub code: Option<u16>,
    /// The frame that carried it.
    pub frame: u64,
    /// The request was one nothing depended on (see [`is_incidental`]).
    #[serde(skip)]
    pub incidental: bool,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    ::record::Wire,
    ::record::Columns,
)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// An HTTP response with a status of 400 or more.
    HttpStatus,
    /// A fatal TLS alert, sent in the clear (before the keys, so its reason
    /// is readable).
    TlsAlert,
    /// The server reset the connection right after a request (within a
    /// second), having received all of it, instead of answering it.
    ServerReset,
    /// An FTP or SMTP reply of 400 or more.
    ReplyCode,
    /// POP3's `-ERR`.
    Pop3Error,
    /// IMAP's tagged `NO` or `BAD`.
    ImapRefusal,
    /// A PostgreSQL ErrorResponse.
    PostgresError,
    /// A MySQL ERR packet.
    MysqlError,
    /// An LDAP result code other than success.
    LdapResult,
    /// The server answered in another protocol (an SSH banner to an HTTP
    /// request or an FTP command).
    OtherProtocol,
}

impl AppFailure {
    /// The server reset the connection in `frame` before answering.
    pub fn server_reset(frame: u64) -> Self {
        AppFailure {
            kind: FailureKind::ServerReset,
            by: Role::Server,
            code: None,
            frame,
            incidental: false,
        }
    }

    /// `HTTP 403`, `TLS alert unknown_ca from the client`, `reset by the
    /// server`, `reply 550`, `MySQL error 1045`.
    pub fn describe(&self) -> String {
        let code = self.code.unwrap_or_default();
        match (self.kind, self.code) {
            (FailureKind::OtherProtocol, _) => "an SSH banner instead of an answer".into(),
            (FailureKind::ServerReset, _) | (_, None) => {
                "reset by the server before an answer".into()
            }
            (FailureKind::HttpStatus, _) => format!("HTTP {code}"),
            (FailureKind::TlsAlert, _) => format!(
                "TLS alert {} from the {}",
                alert_name(code.min(255) as u8),
                self.by.as_str()
            ),
            (FailureKind::ReplyCode, _) => format!("reply {code}"),
            (FailureKind::Pop3Error, _) => "POP3 -ERR".into(),
            (FailureKind::ImapRefusal, _) => format!("IMAP {}", replies::imap_status(code)),
            (FailureKind::PostgresError, _) => {
                format!("PostgreSQL {}", replies::postgres_severity(code))
            }
            (FailureKind::MysqlError, _) => format!("MySQL error {code}"),
            (FailureKind::LdapResult, _) => format!("LDAP {}", replies::ldap_result_name(code)),
        }
    }
}

/// The address the nearest proxy put last in an HTTP request's
/// X-Forwarded-For header (the client it took the request from), when the
/// payload captured holds the whole header line.
pub fn forwarded_for(payload: &[u8]) -> Option<String> {
    http_method(payload)?;
    let header_lines = payload
        .split(|&b| b == b'\n')
        .skip(1)
        .take_while(|line| !line.is_empty() && *line != b"\r");
    let mut last = None;
    let mut complete_lines = header_lines.filter(|line| line.ends_with(b"\r"));
    for line in &mut complete_lines {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        if line[..colon].eq_ignore_ascii_case(b"x-forwarded-for") {
            last = line[colon + 1..].rsplit(|&b| b == b',').next();
        }
    }
    let address = std::str::from_utf8(last?).ok()?.trim();
    (!address.is_empty()).then(|| printable(address.as_bytes(), false))
}

/// A transaction's name from its request's and response's names.
pub fn of_transaction(request: Option<String>, response: Option<String>) -> Option<String> {
    const TLS_DATA: &str = "TLS application data";
    match (request, response) {
        (Some(request), Some(response))
            if request == TLS_DATA && response == "application data" =>
        {
            Some(request)
        }
        (Some(request), Some(response)) => Some(format!("{request} → {response}")),
        (Some(request), None) => Some(request),
        (None, Some(response)) => Some(format!("→ {response}")),
        (None, None) => None,
    }
}

/// `GET /index.html`, from `GET /index.html HTTP/1.1`.
fn http_request(payload: &[u8]) -> Option<String> {
    let method = http_method(payload)?;
    let target = &payload[method.len() + 1..];
    let end = target
        .iter()
        .position(|&b| b == b' ' || b == b'\r' || b == b'\n');
    let path = printable(&target[..end.unwrap_or(target.len())], end.is_none());
    Some([method, " ", &path].concat())
}

/// `GET`, from `GET /index.html HTTP/1.1`.
fn http_method(payload: &[u8]) -> Option<&'static str> {
    HTTP_METHODS.into_iter().find(|method| {
        payload.starts_with(method.as_bytes()) && payload.get(method.len()) == Some(&b' ')
    })
}

/// `200`, from `HTTP/1.1 200 OK`.
fn http_status(payload: &[u8]) -> Option<String> {
    http_status_code(payload).map(|code| code.to_string())
}

pub(crate) fn http_status_code(payload: &[u8]) -> Option<u16> {
    let rest = payload.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    if rest.get(1) != Some(&b' ') || !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(code).ok()?.parse().ok()
}

mod record {
    pub const CHANGE_CIPHER_SPEC: u8 = 20;
    pub const ALERT: u8 = 21;
    pub const HANDSHAKE: u8 = 22;
    pub const APPLICATION_DATA: u8 = 23;
    pub const HEADER_LEN: usize = 5;
    /// An alert in the clear: a level and a description.
    pub const PLAIN_ALERT_LEN: usize = 2;
}

mod alert {
    pub const FATAL: u8 = 2;
}

/// The TLS records that start in `payload`: type, declared body length and
/// the body's captured bytes; the walk stops at anything that is not one.
fn tls_record_walk(payload: &[u8]) -> impl Iterator<Item = (u8, usize, &[u8])> {
    let mut rest = payload;
    std::iter::from_fn(move || {
        let header = rest.get(..record::HEADER_LEN)?;
        let (kind, major, minor) = (header[0], header[1], header[2]);
        if !(record::CHANGE_CIPHER_SPEC..=record::APPLICATION_DATA).contains(&kind)
            || major != 3
            || minor > 4
        {
            return None;
        }
        let body_len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        let body = &rest[record::HEADER_LEN..];
        rest = rest
            .get(record::HEADER_LEN + body_len..)
            .unwrap_or_default();
        Some((kind, body_len, body))
    })
}

/// The description of the first fatal TLS alert in the clear: one that
/// ends the connection. A warning (a plain goodbye, or a server name the
/// server did not recognise) lets the handshake go on.
fn tls_alert(payload: &[u8]) -> Option<u8> {
    tls_record_walk(payload).find_map(|(kind, body_len, body)| {
        let plain = kind == record::ALERT && body_len == record::PLAIN_ALERT_LEN;
        let (level, description) = (*body.first()?, *body.get(1)?);
        (plain && level == alert::FATAL).then_some(description)
    })
}

/// The TLS alert description's name (RFC 8446, RFC 5246).
fn alert_name(description: u8) -> String {
    let name = match description {
        0 => "close_notify",
        10 => "unexpected_message",
        20 => "bad_record_mac",
        21 => "decryption_failed",
        22 => "record_overflow",
        30 => "decompression_failure",
        40 => "handshake_failure",
        41 => "no_certificate",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        44 => "certificate_revoked",
        45 => "certificate_expired",
        46 => "certificate_unknown",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        49 => "access_denied",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        86 => "inappropriate_fallback",
        90 => "user_canceled",
        100 => "no_renegotiation",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        113 => "bad_certificate_status_response",
        115 => "unknown_psk_identity",
        116 => "certificate_required",
        120 => "no_application_protocol",
        other => return format!("{other}"),
    };
    name.to_string()
}

/// The TLS records that start in `payload`, named in order, repeats merged:
/// `ClientKeyExchange, ChangeCipherSpec, Finished`.
fn tls_records(payload: &[u8]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    let mut encrypted = false;
    for (kind, body_len, body) in tls_record_walk(payload) {
        let name = match kind {
            record::CHANGE_CIPHER_SPEC => "ChangeCipherSpec".to_string(),
            record::ALERT => match body.get(1) {
                Some(&description) if body_len == record::PLAIN_ALERT_LEN => {
                    format!("alert {}", alert_name(description))
                }
                _ => "alert".to_string(),
            },
            // After ChangeCipherSpec a handshake record is encrypted: the Finished message.
            record::HANDSHAKE if encrypted => "Finished".to_string(),
            record::HANDSHAKE => handshake_message(body)?,
            _ => "application data".to_string(),
        };
        encrypted |= kind == record::CHANGE_CIPHER_SPEC;
        if names.last() != Some(&name) {
            names.push(name);
        }
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
    let mut text = String::with_capacity(bytes.len().min(MAX_TEXT_CHARS) + '…'.len_utf8());
    for &byte in bytes {
        let shown = byte.is_ascii_graphic();
        let piece_len = if shown { 1 } else { r"\x00".len() };
        if text.len() + piece_len > MAX_TEXT_CHARS {
            return text + "…";
        }
        if shown {
            text.push(char::from(byte));
        } else {
            let _ = write!(text, "\\x{byte:02x}");
        }
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
            of_transaction(request, response).as_deref(),
            Some("GET /index.html → 200")
        );
        assert_eq!(of_request(b"POST /a b").as_deref(), Some("POST /a"));
        assert_eq!(of_request(b"GETX / HTTP/1.1"), None);
        assert_eq!(of_response(b"HTTP/1.0 4x4 Bad"), None);
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

    #[test]
    fn the_last_address_of_the_last_forwarded_for_line_is_the_nearest_proxys_client() {
        let request = b"GET /c1/r2 HTTP/1.1\r\nhost: twlab\r\n\
            X-Forwarded-For: 203.0.113.7\r\nx-forwarded-for: 10.0.0.9, 10.77.0.12\r\n\r\n";
        assert_eq!(forwarded_for(request).as_deref(), Some("10.77.0.12"));
        assert_eq!(forwarded_for(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), None);
        // A line the capture cut may hold half an address: none is read from it.
        assert_eq!(
            forwarded_for(b"GET / HTTP/1.1\r\nx-forwarded-for: 10.77.0.1"),
            None
        );
        // Only requests carry it; the body of a response is not read.
        assert_eq!(
            forwarded_for(b"HTTP/1.1 200 OK\r\nx-forwarded-for: 10.0.0.1\r\n\r\n"),
            None
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
            of_transaction(request, response).as_deref(),
            Some("TLS application data")
        );
        assert_eq!(of_response(&[23, 2, 0, 0, 1]), None);
    }

    #[test]
    fn error_statuses_and_alerts_in_the_clear_are_failures_and_goodbyes_are_not() {
        let forbidden = failure_in(b"HTTP/1.1 403 Forbidden\r\n", Role::Server, 7).unwrap();
        assert_eq!(
            (forbidden.kind, forbidden.code),
            (FailureKind::HttpStatus, Some(403))
        );
        assert_eq!(forbidden.describe(), "HTTP 403");
        assert_eq!(
            failure_in(b"HTTP/1.1 304 Not Modified", Role::Server, 7),
            None
        );
        let unknown_ca = [21, 3, 3, 0, 2, 2, 48];
        let alert = failure_in(&unknown_ca, Role::Client, 9).unwrap();
        assert_eq!(alert.describe(), "TLS alert unknown_ca from the client");
        assert_eq!(
            of_request(&unknown_ca).as_deref(),
            Some("TLS alert unknown_ca")
        );
        let close_notify = [21, 3, 3, 0, 2, 1, 0];
        assert_eq!(failure_in(&close_notify, Role::Server, 9), None);
        let encrypted = [21, 3, 3, 0, 26, 0x8f, 0x31];
        assert_eq!(failure_in(&encrypted, Role::Server, 9), None);
        assert_eq!(of_response(&encrypted).as_deref(), Some("alert"));
    }

    #[test]
    fn an_ssh_banner_answering_a_request_of_another_protocol_fails_it() {
        let banner = b"SSH-2.0-OpenSSH_5.3\r\n";
        let failure = other_protocol(true, banner, 6).unwrap();
        assert_eq!(failure.describe(), "an SSH banner instead of an answer");
        assert_eq!(other_protocol(false, banner, 6), None);
        assert_eq!(other_protocol(true, b"HTTP/1.1 200 OK\r\n", 6), None);
    }

    #[test]
    fn only_a_message_of_tls_alerts_alone_is_one() {
        let encrypted_alert = [21, 3, 3, 0, 26, 0x8f, 0x31];
        assert!(is_tls_alert(&encrypted_alert));
        let alert_then_data = [21, 3, 3, 0, 2, 1, 0, 23, 3, 3, 0, 9, 0xaa];
        assert!(!is_tls_alert(&alert_then_data));
        assert!(!is_tls_alert(&[23, 3, 3, 0, 9, 0xaa]));
        assert!(!is_tls_alert(b"GET / HTTP/1.1\r\n"));
        assert!(!is_tls_alert(b""));
    }
}
