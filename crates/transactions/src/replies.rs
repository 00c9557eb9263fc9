//! Requests and failures of protocols other than HTTP and TLS, read from a
//! message's first bytes: the text commands and reply codes of FTP and SMTP
//! (RFC 959, RFC 5321), POP3's `-ERR` (RFC 1939), IMAP's tagged `NO` and
//! `BAD` (RFC 9051), PostgreSQL's ErrorResponse, MySQL's ERR packet and an
//! LDAP result code other than success (RFC 4511).

use crate::name::FailureKind;

/// The longest command line or query kept in a name, in characters.
const MAX_NAME_CHARS: usize = 80;

/// The failure a server's message reports, with its code where it has one
/// that fits: the reply code, IMAP's `NO` (0) or `BAD` (1), PostgreSQL's
/// severity (0 ERROR, 1 FATAL, 2 PANIC), MySQL's error number, the LDAP
/// result code.
pub fn failure(payload: &[u8]) -> Option<(FailureKind, u16)> {
    reply_code_failure(payload)
        .or_else(|| pop3_error(payload))
        .or_else(|| imap_refusal(payload))
        .or_else(|| postgres_error(payload))
        .or_else(|| mysql_error(payload))
        .or_else(|| ldap_failure(payload))
}

/// What a client's message asks, when it is one of these protocols':
/// `RETR file.txt`, `PASS …`, `IMAP LOGIN …`, `query SELECT 1`,
/// `LDAP bindRequest`.
pub fn request_name(payload: &[u8]) -> Option<String> {
    text_command(payload)
        .or_else(|| imap_command(payload))
        .or_else(|| postgres_query(payload))
        .or_else(|| mysql_command(payload))
        .or_else(|| ldap_request(payload))
}

/// What a server's message answers, when its first line says it: `550`, `-ERR`.
pub fn response_name(payload: &[u8]) -> Option<String> {
    let status_like = reply_code_digits(payload).is_some()
        || payload.starts_with(b"+OK")
        || payload.starts_with(b"-ERR");
    if !status_like {
        return None;
    }
    if let Some(code) = reply_code(first_line(payload)?) {
        return Some(code.to_string());
    }
    ["+OK", "-ERR"]
        .into_iter()
        .find(|status| starts_word(payload, status.as_bytes()))
        .map(String::from)
}

/// A request that expects no answer: LDAP's unbind, after which the server
/// closes the connection.
pub fn awaits_no_answer(payload: &[u8]) -> bool {
    ldap_operation(payload) == Some(ldap::UNBIND_REQUEST)
}

/// Whether a request, by its name (see [`request_name`]), is one the client
/// made on its own, that nothing it went on to do needed: a question about
/// what the server offers (FTP's FEAT, SYST, HELP and SITE HELP, SMTP's
/// HELP, POP3's CAPA, IMAP's CAPABILITY and ID).
pub fn is_probe(name: &str) -> bool {
    const PROBES: [&str; 8] = [
        "FEAT",
        "SYST",
        "HELP",
        "SITE HELP",
        "CAPA",
        "CLNT",
        "IMAP CAPABILITY",
        "IMAP ID",
    ];
    PROBES.iter().any(|probe| {
        let start = name.get(..probe.len());
        start.is_some_and(|start| start.eq_ignore_ascii_case(probe))
            && matches!(name.as_bytes().get(probe.len()), None | Some(b' '))
    })
}

fn first_line(payload: &[u8]) -> Option<&[u8]> {
    let end = memchr::memchr(b'\n', payload)?;
    let line = &payload[..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.iter()
        .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b))
        .then_some(line)
}

/// Each complete line of a message of text lines; none if any is not text.
fn text_lines(payload: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = payload;
    std::iter::from_fn(move || {
        let line = first_line(rest)?;
        rest = &rest[memchr::memchr(b'\n', rest)? + 1..];
        Some(line)
    })
}

/// `550`, from `550 No such file` or `550-first line of several`.
fn reply_code(line: &[u8]) -> Option<u16> {
    let code = reply_code_digits(line)?;
    matches!(line.get(3), None | Some(b' ' | b'-')).then_some(code)
}

/// The three digits a reply line starts with, as a number.
fn reply_code_digits(bytes: &[u8]) -> Option<u16> {
    match bytes {
        [a @ b'1'..=b'5', b @ b'0'..=b'9', c @ b'0'..=b'9', ..] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

/// The first reply of 400 or more among a message of reply lines (SMTP
/// pipelining answers several commands in one message).
fn reply_code_failure(payload: &[u8]) -> Option<(FailureKind, u16)> {
    reply_code_digits(payload)?;
    reply_code(first_line(payload)?)?;
    text_lines(payload)
        .map_while(reply_code)
        .find(|&code| code >= 400)
        .map(|code| (FailureKind::ReplyCode, code))
}

fn starts_word(payload: &[u8], word: &[u8]) -> bool {
    payload.starts_with(word) && matches!(payload.get(word.len()), None | Some(b' ' | b'\r'))
}

fn pop3_error(payload: &[u8]) -> Option<(FailureKind, u16)> {
    (starts_word(payload, b"-ERR") && first_line(payload).is_some())
        .then_some((FailureKind::Pop3Error, 0))
}

/// An IMAP tag: letters, digits and `.`, then a space (`a001 `); not `*` or `+`.
fn imap_tag(payload: &[u8]) -> Option<&[u8]> {
    let space = payload.iter().take(16).position(|&b| b == b' ')?;
    let tag = &payload[..space];
    let tag_like = !tag.is_empty()
        && tag.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'.')
        && tag.iter().any(u8::is_ascii_digit);
    tag_like.then_some(tag)
}

/// A tagged `NO` or `BAD`, on any line of the message (untagged data comes
/// first).
fn imap_refusal(payload: &[u8]) -> Option<(FailureKind, u16)> {
    // A status ends a line and follows a tag and a space: most messages
    // hold no line, or neither status.
    let holds = |status: &[u8]| memchr::memmem::find(payload, status).is_some();
    if memchr::memchr(b'\n', payload).is_none() || (!holds(b" NO") && !holds(b" BAD")) {
        return None;
    }
    text_lines(payload).find_map(|line| {
        let tag = imap_tag(line)?;
        let status = &line[tag.len() + 1..];
        if starts_word(status, b"NO") {
            Some((FailureKind::ImapRefusal, 0))
        } else if starts_word(status, b"BAD") {
            Some((FailureKind::ImapRefusal, 1))
        } else {
            None
        }
    })
}

/// `NO`, `BAD`: what IMAP's refusal code stands for.
pub fn imap_status(code: u16) -> &'static str {
    if code == 0 {
        "NO"
    } else {
        "BAD"
    }
}

/// `IMAP LOGIN …`, `IMAP SELECT INBOX`: the command after the tag.
fn imap_command(payload: &[u8]) -> Option<String> {
    let tag = imap_tag(payload)?;
    let line = first_line(payload)?;
    let command = line.get(tag.len() + 1..)?;
    let verb_len = command
        .iter()
        .position(|&b| b == b' ')
        .unwrap_or(command.len());
    if verb_len < 2 || !command[..verb_len].iter().all(u8::is_ascii_alphabetic) {
        return None;
    }
    Some(format!("IMAP {}", command_text(command, verb_len)))
}

/// `RETR file.txt`, `RCPT TO:<a@b>`, `PASS …`: an FTP, SMTP or POP3 command
/// line (three or four letters, in either case, complete), its credentials
/// left out.
fn text_command(payload: &[u8]) -> Option<String> {
    let line = first_line(payload)?;
    let verb_len = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
    let verb = &line[..verb_len];
    let one_case =
        verb.iter().all(u8::is_ascii_uppercase) || verb.iter().all(u8::is_ascii_lowercase);
    let command_like = (3..=4).contains(&verb_len) && one_case;
    command_like.then(|| command_text(line, verb_len))
}

/// The verb, in upper case, and its arguments, cut long; only the verb for
/// commands that carry a password.
fn command_text(line: &[u8], verb_len: usize) -> String {
    const SECRETS: [&[u8]; 4] = [b"PASS", b"AUTH", b"LOGIN", b"APOP"];
    let verb = String::from_utf8_lossy(&line[..verb_len]).to_ascii_uppercase();
    let secret = SECRETS.contains(&verb.as_bytes());
    if secret && line.len() > verb_len {
        return format!("{verb} …");
    }
    cut(&format!(
        "{verb}{}",
        String::from_utf8_lossy(&line[verb_len..])
    ))
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_NAME_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A message of PostgreSQL's protocol after startup: a type byte, then a
/// big-endian length that counts itself; its body and what follows it.
fn postgres_message(payload: &[u8], kind: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = payload.split_first()?;
    let len = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    if first != kind || len <= 4 {
        return None;
    }
    let body = &rest[4..rest.len().min(len)];
    Some((body, rest.get(len..).unwrap_or_default()))
}

/// The messages a server sent in one go start with these (authentication,
/// parameters, the backend's key, ready for query) before an error.
const POSTGRES_PRELUDE: &[u8] = b"RSKZ";

/// An ErrorResponse, alone or after the server's other first messages:
/// fields of a type byte and a string, the severity in `V` (not localized,
/// from 9.6) or `S`.
fn postgres_error(payload: &[u8]) -> Option<(FailureKind, u16)> {
    const SEVERITIES: [&[u8]; 3] = [b"ERROR", b"FATAL", b"PANIC"];
    let mut message = payload;
    while let Some(kind) = POSTGRES_PRELUDE
        .iter()
        .find(|&&k| message.first() == Some(&k))
    {
        message = postgres_message(message, *kind)?.1;
    }
    let (fields, _) = postgres_message(message, b'E')?;
    if !matches!(fields.first(), Some(b'S' | b'V')) {
        return None;
    }
    let mut rest = fields;
    let mut severity = None;
    while let [kind @ (b'S' | b'V'), text @ ..] = rest {
        let end = text.iter().position(|&b| b == 0)?;
        if let Some(at) = SEVERITIES.iter().position(|s| *s == &text[..end]) {
            severity = Some(at as u16);
        }
        if *kind == b'V' {
            break;
        }
        rest = &text[end + 1..];
    }
    severity.map(|at| (FailureKind::PostgresError, at))
}

pub fn postgres_severity(code: u16) -> &'static str {
    ["ERROR", "FATAL", "PANIC"][usize::from(code.min(2))]
}

/// `query SELECT 1`: a simple query's text.
fn postgres_query(payload: &[u8]) -> Option<String> {
    let (text, _) = postgres_message(payload, b'Q')?;
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    query_name(&text[..end])
}

fn query_name(text: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(text).ok()?.trim();
    let printable = text.chars().all(|c| !c.is_control() || c.is_whitespace());
    (!text.is_empty() && printable).then(|| {
        let words: Vec<&str> = text.split_whitespace().collect();
        cut(&format!("query {}", words.join(" ")))
    })
}

/// A MySQL packet: a three-byte little-endian length, a sequence number,
/// then the body.
fn mysql_packet(payload: &[u8]) -> Option<(u8, &[u8])> {
    let len = usize::from(*payload.first()?)
        | usize::from(*payload.get(1)?) << 8
        | usize::from(*payload.get(2)?) << 16;
    let body = payload.get(4..)?;
    (len > 0).then(|| (payload[3], &body[..body.len().min(len)]))
}

/// An ERR packet: 0xff, the error number, then `#` and the SQL state, or
/// (in the greeting, before the protocol is agreed) the message alone.
fn mysql_error(payload: &[u8]) -> Option<(FailureKind, u16)> {
    const FIRST_SERVER_ERROR: u16 = 1000;
    let (sequence, body) = mysql_packet(payload)?;
    let [0xff, low, high, rest @ ..] = body else {
        return None;
    };
    let code = u16::from_le_bytes([*low, *high]);
    let with_state = matches!(rest, [b'#', state @ ..] if state.len() >= 5 && state[..5].iter().all(u8::is_ascii_alphanumeric));
    let greeting =
        sequence == 0 && !rest.is_empty() && rest.iter().all(|b| (b' '..=b'~').contains(b));
    (code >= FIRST_SERVER_ERROR && (with_state || greeting))
        .then_some((FailureKind::MysqlError, code))
}

/// `query SELECT 1` for COM_QUERY, `change user` for COM_CHANGE_USER.
fn mysql_command(payload: &[u8]) -> Option<String> {
    const QUERY: u8 = 0x03;
    const CHANGE_USER: u8 = 0x11;
    match mysql_packet(payload)? {
        (0, [QUERY, text @ ..]) => query_name(text),
        (0, [CHANGE_USER, ..]) => Some("change user".into()),
        _ => None,
    }
}

mod ldap {
    pub const SEQUENCE: u8 = 0x30;
    pub const INTEGER: u8 = 0x02;
    pub const ENUMERATED: u8 = 0x0a;
    pub const UNBIND_REQUEST: u8 = 0x42;
    pub const SEARCH_DONE: u8 = 0x65;
    /// A search's base that does not exist: the search's answer, that there
    /// is nothing there, as DNS's NXDOMAIN is.
    pub const NO_SUCH_OBJECT: u8 = 32;
    /// Result codes that report no failure: success, compareFalse,
    /// compareTrue, referral, saslBindInProgress.
    pub const NOT_FAILURES: [u8; 5] = [0, 5, 6, 10, 14];
}

/// A BER element's tag, the length of its header and of its contents.
fn ber_element(bytes: &[u8]) -> Option<(u8, usize, usize)> {
    let (&tag, rest) = bytes.split_first()?;
    let (&first, rest) = rest.split_first()?;
    if first < 0x80 {
        return Some((tag, 2, usize::from(first)));
    }
    let count = usize::from(first & 0x7f);
    let bytes = rest.get(..count).filter(|_| (1..=4).contains(&count))?;
    let len = bytes
        .iter()
        .fold(0usize, |len, &b| len << 8 | usize::from(b));
    Some((tag, 2 + count, len))
}

/// The LDAP message inside a SASL buffer that Kerberos signed but did not
/// seal (as Active Directory signs LDAP): a four-byte length, then a wrap
/// token (RFC 4121, 4.2.6.2) of a 16-byte header and the message, its
/// checksum rotated before it when the rotation count equals the
/// checksum's length.
fn sasl_signed(payload: &[u8]) -> Option<&[u8]> {
    const WRAP_TOKEN: [u8; 2] = [0x05, 0x04];
    const SEALED: u8 = 0x02;
    const HEADER: usize = 16;
    let token = payload.get(4..)?;
    let header = token.get(..HEADER)?;
    let checksum = usize::from(u16::from_be_bytes([header[4], header[5]]));
    let rotation = usize::from(u16::from_be_bytes([header[6], header[7]]));
    let signed = header[..2] == WRAP_TOKEN && header[2] & SEALED == 0 && header[3] == 0xff;
    match rotation {
        0 if signed => token.get(HEADER..),
        _ if signed && rotation == checksum => token.get(HEADER + checksum..),
        _ => None,
    }
}

/// An LDAPMessage's protocol operation tag and what follows its header, in
/// the clear or signed.
fn ldap_message(payload: &[u8]) -> Option<(u8, &[u8])> {
    plain_ldap_message(payload).or_else(|| plain_ldap_message(sasl_signed(payload)?))
}

fn plain_ldap_message(payload: &[u8]) -> Option<(u8, &[u8])> {
    let (ldap::SEQUENCE, header, _) = ber_element(payload)? else {
        return None;
    };
    let message = &payload[header..];
    let (ldap::INTEGER, id_header, id_len) = ber_element(message)? else {
        return None;
    };
    let operation = message.get(id_header + id_len..)?;
    let (tag, op_header, _) = ber_element(operation)?;
    Some((tag, &operation[op_header.min(operation.len())..]))
}

fn ldap_operation(payload: &[u8]) -> Option<u8> {
    ldap_message(payload).map(|(tag, _)| tag)
}

/// A response's result code, when it is not one of success.
fn ldap_failure(payload: &[u8]) -> Option<(FailureKind, u16)> {
    let (operation, body) = ldap_message(payload)?;
    ldap_operation_name(operation)
        .filter(|name| name.ends_with("Response") || *name == "searchResDone")?;
    match body {
        [ldap::ENUMERATED, 1, code, ..] if !ldap_success(operation, *code) => {
            Some((FailureKind::LdapResult, u16::from(*code)))
        }
        _ => None,
    }
}

/// Whether a response's result code tells the operation did what was
/// asked: success and its kin, or a search that found nothing there.
fn ldap_success(operation: u8, code: u8) -> bool {
    ldap::NOT_FAILURES.contains(&code)
        || (operation == ldap::SEARCH_DONE && code == ldap::NO_SUCH_OBJECT)
}

/// `LDAP bindRequest`.
fn ldap_request(payload: &[u8]) -> Option<String> {
    let name = ldap_operation_name(ldap_operation(payload)?)?;
    name.ends_with("Request").then(|| format!("LDAP {name}"))
}

fn ldap_operation_name(tag: u8) -> Option<&'static str> {
    Some(match tag {
        0x60 => "bindRequest",
        0x61 => "bindResponse",
        0x42 => "unbindRequest",
        0x63 => "searchRequest",
        0x65 => "searchResDone",
        0x66 => "modifyRequest",
        0x67 => "modifyResponse",
        0x68 => "addRequest",
        0x69 => "addResponse",
        0x4a => "delRequest",
        0x6b => "delResponse",
        0x6c => "modDNRequest",
        0x6d => "modDNResponse",
        0x6e => "compareRequest",
        0x6f => "compareResponse",
        0x77 => "extendedRequest",
        0x78 => "extendedResponse",
        _ => return None,
    })
}

/// `invalidCredentials`: an LDAP result code's name (RFC 4511, 4.1.9).
pub fn ldap_result_name(code: u16) -> String {
    let name = match code {
        1 => "operationsError",
        2 => "protocolError",
        3 => "timeLimitExceeded",
        4 => "sizeLimitExceeded",
        7 => "authMethodNotSupported",
        8 => "strongerAuthRequired",
        11 => "adminLimitExceeded",
        12 => "unavailableCriticalExtension",
        13 => "confidentialityRequired",
        16 => "noSuchAttribute",
        17 => "undefinedAttributeType",
        18 => "inappropriateMatching",
        19 => "constraintViolation",
        20 => "attributeOrValueExists",
        21 => "invalidAttributeSyntax",
        32 => "noSuchObject",
        33 => "aliasProblem",
        34 => "invalidDNSyntax",
        36 => "aliasDereferencingProblem",
        48 => "inappropriateAuthentication",
        49 => "invalidCredentials",
        50 => "insufficientAccessRights",
        51 => "busy",
        52 => "unavailable",
        53 => "unwillingToPerform",
        54 => "loopDetect",
        64 => "namingViolation",
        65 => "objectClassViolation",
        66 => "notAllowedOnNonLeaf",
        67 => "notAllowedOnRDN",
        68 => "entryAlreadyExists",
        69 => "objectClassModsProhibited",
        71 => "affectsMultipleDSAs",
        80 => "other",
        other => return format!("result {other}"),
    };
    name.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ftp_and_smtp_replies_of_400_or_more_fail_and_lower_ones_do_not() {
        assert_eq!(
            failure(b"550 File size exceeds available credit\r\n"),
            Some((FailureKind::ReplyCode, 550))
        );
        assert_eq!(failure(b"226 Transfer complete\r\n"), None);
        assert_eq!(
            failure(b"250 2.1.0 Ok\r\n553 5.7.1 Sender address rejected\r\n"),
            Some((FailureKind::ReplyCode, 553))
        );
        assert_eq!(failure(b"211-Extensions supported:\r\n MDTM\r\n"), None);
        assert_eq!(
            response_name(b"550 No such file\r\n").as_deref(),
            Some("550")
        );
        assert_eq!(failure(b"550\x01binary\r\n"), None);
    }

    #[test]
    fn pop3_err_and_imap_tagged_no_and_bad_fail() {
        assert_eq!(
            failure(b"-ERR Server too busy\r\n"),
            Some((FailureKind::Pop3Error, 0))
        );
        assert_eq!(failure(b"+OK ready\r\n"), None);
        assert_eq!(
            failure(b"* CAPABILITY IMAP4rev1\r\na002 NO [AUTHENTICATIONFAILED] bad\r\n"),
            Some((FailureKind::ImapRefusal, 0))
        );
        assert_eq!(
            failure(b"a3 BAD unknown command\r\n"),
            Some((FailureKind::ImapRefusal, 1))
        );
        assert_eq!(failure(b"a002 OK LOGIN completed\r\n"), None);
        assert_eq!(failure(b"* NO alert\r\n"), None);
    }

    #[test]
    fn commands_are_named_with_their_arguments_and_never_a_password() {
        assert_eq!(
            request_name(b"RETR libssh-0.5.2.tar.gz\r\n").as_deref(),
            Some("RETR libssh-0.5.2.tar.gz")
        );
        assert_eq!(request_name(b"PASS hunter2\r\n").as_deref(), Some("PASS …"));
        assert_eq!(
            request_name(b"a001 LOGIN joe secret\r\n").as_deref(),
            Some("IMAP LOGIN …")
        );
        assert!(is_probe("SITE HELP"));
        assert!(is_probe("FEAT"));
        assert!(!is_probe("RETR a"));
        assert!(!is_probe("HELPER"));
        assert_eq!(request_name(b"RETR a"), None);
        assert_eq!(request_name(b"site help\r\n").as_deref(), Some("SITE help"));
        assert!(is_probe(&request_name(b"site help\r\n").unwrap()));
    }

    #[test]
    fn database_errors_are_read_from_their_packets() {
        let postgres = b"E\x00\x00\x00\x68SFATAL\x00VFATAL\x00C28P01\x00Mpassword\x00\x00";
        assert_eq!(failure(postgres), Some((FailureKind::PostgresError, 1)));
        let after_auth = b"R\x00\x00\x00\x08\x00\x00\x00\x00E\x00\x00\x00\x10SFATAL\x00\x00";
        assert_eq!(failure(after_auth), Some((FailureKind::PostgresError, 1)));
        let notice = b"N\x00\x00\x00\x20SNOTICE\x00VNOTICE\x00C00000\x00\x00";
        assert_eq!(failure(notice), None);
        let query = b"Q\x00\x00\x00\x12DROP TABLE t;\x00";
        assert_eq!(request_name(query).as_deref(), Some("query DROP TABLE t;"));
        let denied = b"\x0e\x00\x00\x06\xff\x15\x04#28000Access";
        assert_eq!(failure(denied), Some((FailureKind::MysqlError, 1045)));
        let greeting = b"\x08\x00\x00\x00\xff\x6a\x04Host";
        assert_eq!(failure(greeting), Some((FailureKind::MysqlError, 1130)));
        let ok = b"\x07\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00";
        assert_eq!(failure(ok), None);
    }

    #[test]
    fn ldap_results_other_than_success_fail_and_unbind_awaits_nothing() {
        let invalid = [
            0x30, 0x84, 0, 0, 0, 0x0c, 0x02, 0x01, 0x42, 0x61, 0x84, 0, 0, 0, 0x03, 0x0a, 0x01,
            0x31,
        ];
        assert_eq!(failure(&invalid), Some((FailureKind::LdapResult, 49)));
        let in_progress = [0x30, 0x08, 0x02, 0x01, 0x41, 0x61, 0x03, 0x0a, 0x01, 0x0e];
        assert_eq!(failure(&in_progress), None);
        let nothing_there = [0x30, 0x08, 0x02, 0x01, 0x02, 0x65, 0x03, 0x0a, 0x01, 0x20];
        assert_eq!(failure(&nothing_there), None);
        let unbind = [0x30, 0x05, 0x02, 0x01, 0x09, 0x42, 0x00];
        assert!(awaits_no_answer(&unbind));
        let mut signed = vec![0, 0, 0, 0x27, 0x05, 0x04, 0x04, 0xff, 0, 12, 0, 12];
        signed.extend([0; 8]);
        signed.extend([0xaa; 12]);
        signed.extend([0x30, 0x84, 0, 0, 0, 0x05, 0x02, 0x01, 0x09, 0x42, 0x00]);
        assert!(awaits_no_answer(&signed));
        assert_eq!(request_name(&unbind).as_deref(), Some("LDAP unbindRequest"));
        assert_eq!(ldap_result_name(49), "invalidCredentials");
    }

    #[test]
    fn no_bytes_make_a_reader_fail() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let starts: [&[u8]; 6] = [b"E", b"R", b"Q", b"0", b"\x30\x84", b"a1 "];
        for _ in 0..20_000 {
            let mut payload = starts[next() as usize % starts.len()].to_vec();
            let len = next() as usize % 24;
            payload.extend((0..len).map(|_| (next() % 8) as u8 * 17));
            let _ = (
                failure(&payload),
                request_name(&payload),
                response_name(&payload),
            );
            let _ = awaits_no_answer(&payload);
        }
    }
}
