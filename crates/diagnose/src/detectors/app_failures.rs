//! Application failures: requests answered with an HTTP error status,
//! handshakes aborted by a TLS alert, and requests the server reset instead
//! of answering. These are failures, not slowness: the finding costs no
//! time, and its severity comes from how many requests failed.

use std::collections::{BTreeMap, HashMap};

use transactions::{FailureKind, Transaction};

use super::{counted, distinct_connections};
use crate::rules::{self, EVIDENCE_FRAMES};
use crate::{units, Finding, FindingKind, Inputs};

pub fn application_failures(inputs: &Inputs) -> Option<Finding> {
    let failed: Vec<&Transaction> = inputs
        .transactions
        .iter()
        .filter(|t| t.failure.is_some())
        .collect();
    let first = *failed.first()?;
    let share = failed.len() as f64 / inputs.transactions.len() as f64;
    let next_on_connection: HashMap<(u64, u32), &Transaction> = inputs
        .transactions
        .iter()
        .map(|t| ((t.connection, t.index), t))
        .collect();
    let needed = failed
        .iter()
        .filter(|t| {
            let next = next_on_connection.get(&(t.connection, t.index + 1));
            t.failure.is_some_and(|f| !f.incidental)
                && !next.is_some_and(|next| got_another_way(t, next))
        })
        .count();
    let kinds: Vec<FailureKind> = failed
        .iter()
        .filter_map(|t| t.failure.map(|f| f.kind))
        .collect();
    let mut found = Finding::new(
        FindingKind::ApplicationFailure,
        &title(inputs, &failed),
        0.0,
    );
    found.severity = rules::failure_severity(needed as f64 / inputs.transactions.len() as f64);
    found.transactions = failed.len() as u64;
    found.connections = distinct_connections(failed.iter().map(|t| t.connection));
    found.example_connection = Some(first.connection);
    let mut frames: Vec<u64> = failed
        .iter()
        .filter(|t| t.connection == first.connection)
        .filter_map(|t| t.failure.map(|f| f.frame))
        .collect();
    frames.sort_unstable();
    frames.truncate(EVIDENCE_FRAMES);
    found.frames = frames;
    found.wireshark_filter = wireshark_filter(&kinds);
    found.explanation = explanation(&failed, needed);
    found.fix = fix(&kinds);
    let (these, they) = match failed.len() {
        1 => ("this request".to_string(), "it"),
        count => (format!("these {count} requests"), "they"),
    };
    found.what_if = format!(
        "Succeeding, {these} would do what was asked; today the {} {they} took bought \
         nothing, and a client that tries again pays it twice.",
        units::duration(failed.iter().filter_map(|t| t.duration_ms).sum::<f64>())
    );
    for kind in ALL_KINDS {
        let count = kinds.iter().filter(|&&k| k == kind).count();
        found.figures.insert(about(kind).figure, count as f64);
    }
    found.figures.insert("failed_share", share);
    found
        .figures
        .insert("incidental_failures", (failed.len() - needed) as f64);
    Some(found)
}

/// The client's next request on the connection asked for the same object
/// (`CWD /README → 550`, then `RETR /README → 150`) and did not fail: what
/// the failed request was for was got another way.
fn got_another_way(failed: &Transaction, next: &Transaction) -> bool {
    let object = |t: &Transaction| {
        let name = t.name.as_deref()?;
        let request = name.split(" → ").next()?;
        request
            .split_once(' ')
            .map(|(_, object)| object.to_string())
    };
    next.failure.is_none()
        && next.response_end_ns.is_some()
        && object(failed).is_some_and(|asked| object(next) == Some(asked))
}

/// `2 of 2 requests failed: HTTP 403 ×2 (POST /flashmail.asp → 403), at 10.0.0.2:80`.
fn title(inputs: &Inputs, failed: &[&Transaction]) -> String {
    let mut groups: BTreeMap<String, Vec<&Transaction>> = BTreeMap::new();
    for t in failed {
        if let Some(failure) = t.failure {
            groups.entry(failure.describe()).or_default().push(t);
        }
    }
    let mut groups: Vec<(String, Vec<&Transaction>)> = groups.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let parts: Vec<String> = groups
        .iter()
        .map(|(what, transactions)| group_text(what, transactions))
        .collect();
    format!(
        "{} of {} failed: {}{}",
        failed.len(),
        counted(inputs.transactions.len(), "request"),
        parts.join("; "),
        culprit(inputs, failed)
    )
}

/// `HTTP 404 ×3 (GET /missing → 404)`: a request names an HTTP failure or a
/// reset; a TLS alert names itself.
fn group_text(what: &str, transactions: &[&Transaction]) -> String {
    let times = match transactions.len() {
        1 => String::new(),
        count => format!(" ×{count}"),
    };
    let first = transactions[0];
    let named_by_request = first
        .failure
        .is_some_and(|failure| failure.kind != FailureKind::TlsAlert);
    match first.name.as_deref() {
        Some(name) if named_by_request => format!("{what}{times} ({name})"),
        _ => format!("{what}{times}"),
    }
}

/// `, at 10.0.0.2:80` when every failure came from one server, `, at
/// 10.0.0.2` when from one host; nothing otherwise.
fn culprit(inputs: &Inputs, failed: &[&Transaction]) -> String {
    let servers: Vec<decode::Endpoint> = failed
        .iter()
        .filter_map(|t| inputs.connection(t.connection))
        .map(|c| c.server)
        .collect();
    let Some(first) = servers.first() else {
        return String::new();
    };
    if servers.iter().all(|server| server == first) {
        format!(", at {first}")
    } else if servers.iter().all(|server| server.ip == first.ip) {
        format!(", at {}", first.ip)
    } else {
        String::new()
    }
}

const ALL_KINDS: [FailureKind; 10] = [
    FailureKind::HttpStatus,
    FailureKind::TlsAlert,
    FailureKind::ServerReset,
    FailureKind::ReplyCode,
    FailureKind::Pop3Error,
    FailureKind::ImapRefusal,
    FailureKind::PostgresError,
    FailureKind::MysqlError,
    FailureKind::LdapResult,
    FailureKind::OtherProtocol,
];

/// What a finding says of each kind of failure.
struct About {
    /// The figure that counts them.
    figure: &'static str,
    /// The Wireshark filter that shows them.
    filter: &'static str,
    /// What happened to `{}` (a count of requests).
    explanation: &'static str,
    fix: &'static str,
}

fn about(kind: FailureKind) -> About {
    match kind {
        FailureKind::HttpStatus => About {
            figure: "http_errors",
            filter: "http.response.code >= 400",
            explanation: "The server answered {} with an error status: 4xx means it refused \
                the request (not found, forbidden, unauthorized, a method it does not take), \
                5xx that it failed while handling it.",
            fix: "Look up the failing requests in the server's access and error logs: 401 and \
                403 are credentials or permissions, 404 a wrong URL, 405 a method the server \
                does not take, 5xx a fault in the server or behind it.",
        },
        FailureKind::TlsAlert => About {
            figure: "tls_alerts",
            filter: "tls.alert_message.level == 2",
            explanation:
                "The handshake of {} ended in a fatal TLS alert: one side refused the other's \
                certificate, protocol version or cipher suites, so no application data could \
                pass.",
            fix: "Check the server's certificate chain against the client's trust store \
                (unknown_ca, bad_certificate, certificate_expired) and the TLS versions and \
                cipher suites both ends allow (protocol_version, handshake_failure).",
        },
        FailureKind::ServerReset => About {
            figure: "server_resets",
            filter: "tcp.flags.reset == 1",
            explanation: "{} got a reset instead of an answer, the server having received \
                each whole: its application closed the socket (it crashed, rejected the \
                request or timed out).",
            fix: "Read the server application's log at the time of each reset: a crash, a \
                rejected request, or a proxy or load balancer giving up.",
        },
        FailureKind::ReplyCode => About {
            figure: "reply_errors",
            filter: "ftp.response.code >= 400 || smtp.response.code >= 400",
            explanation: "The FTP or SMTP server refused {}: a reply of 4xx is a failure \
                that may pass if tried again (busy, out of space, timed out), 5xx one that \
                will not (no such file, not logged in, rejected address or message).",
            fix: "Read each reply's text and the server's log: 530 and 535 are credentials, \
                550 a file or mailbox that is missing or not allowed, 552 and 452 a quota, \
                421 a server too busy or shutting down, 553 and 554 a policy.",
        },
        FailureKind::Pop3Error => About {
            figure: "pop3_errors",
            filter: "pop.response.indicator == \"-ERR\"",
            explanation: "The POP3 server answered {} with -ERR.",
            fix: "Read the -ERR line's text and the mail server's log: a wrong password, a \
                locked or missing mailbox, a server too busy.",
        },
        FailureKind::ImapRefusal => About {
            figure: "imap_refusals",
            filter: "imap.response.status == \"NO\" || imap.response.status == \"BAD\"",
            explanation: "The IMAP server refused {}: NO when it could not do what was \
                asked, BAD when it did not understand the command.",
            fix: "Read the tagged reply's text and the mail server's log: a failed login, a \
                missing mailbox, a command the server does not take.",
        },
        FailureKind::PostgresError => About {
            figure: "postgres_errors",
            filter: "pgsql.type == \"Error\"",
            explanation: "PostgreSQL answered {} with an error: ERROR fails one \
                statement, FATAL ends the session (a refused login, a missing role or \
                database).",
            fix: "Read each error's SQLSTATE and message, in the capture or the server's log: \
                28P01 and 28000 are credentials and roles, 42xxx the statement itself, 53xxx \
                the server's resources.",
        },
        FailureKind::MysqlError => About {
            figure: "mysql_errors",
            filter: "mysql.error_code",
            explanation: "MySQL answered {} with an error packet.",
            fix: "Look up each error number: 1045 is a wrong password, 1130 a host the \
                server does not let in, 1044 and 1142 missing privileges, 1064 the \
                statement's syntax.",
        },
        FailureKind::LdapResult => About {
            figure: "ldap_errors",
            filter: "ldap.resultCode > 0",
            explanation: "The directory answered {} with a result other than success.",
            fix: "Read each result code: invalidCredentials (49) is a wrong password or a \
                locked account, insufficientAccessRights (50) a permission, noSuchObject (32) \
                a wrong name.",
        },
        FailureKind::OtherProtocol => About {
            figure: "other_protocol",
            filter: "ssh.protocol",
            explanation: "{} reached an SSH server, which answered with its banner: \
                the client spoke another protocol to it.",
            fix: "Check the port the client connects to: a service of another protocol \
                listens there (SSH on the port the client expects its own protocol on).",
        },
    }
}

fn kinds_present(kinds: &[FailureKind]) -> impl Iterator<Item = FailureKind> + '_ {
    ALL_KINDS.into_iter().filter(|kind| kinds.contains(kind))
}

fn wireshark_filter(kinds: &[FailureKind]) -> String {
    let terms: Vec<&str> = kinds_present(kinds)
        .map(|kind| about(kind).filter)
        .collect();
    terms.join(" || ")
}

fn explanation(failed: &[&Transaction], needed: usize) -> String {
    let kinds: Vec<FailureKind> = failed
        .iter()
        .filter_map(|t| t.failure.map(|f| f.kind))
        .collect();
    let mut text: Vec<String> = kinds_present(&kinds)
        .map(|kind| {
            let count = kinds.iter().filter(|&&k| k == kind).count();
            about(kind)
                .explanation
                .replacen("{}", &counted(count, "request"), 1)
        })
        .collect();
    let incidental = failed.len() - needed;
    if incidental > 0 {
        let (which, pronoun) = match incidental {
            1 => ("1 of them was a request".to_string(), "it"),
            count => (format!("{count} of them were requests"), "them"),
        };
        text.push(format!(
            "{which} nothing depended on (a site's icon, a question about what the server \
             offers, something the client then got another way): it went on without \
             {pronoun}."
        ));
    }
    text.push(match failed.len() {
        1 => "However fast it was, this request did not do what was asked: a failure, not \
              slowness."
            .into(),
        _ => "However fast they were, these requests did not do what was asked: a failure, \
              not slowness."
            .into(),
    });
    text.join(" ")
}

fn fix(kinds: &[FailureKind]) -> String {
    let text: Vec<&str> = kinds_present(kinds).map(|kind| about(kind).fix).collect();
    text.join(" ")
}
