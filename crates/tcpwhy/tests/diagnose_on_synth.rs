//! Findings on scripted traces, for causes the lab cannot stage cheaply.

use crate::common;

use synth::{Conversation, Side, Trace};

/// What one connection of a scripted trace does, and when.
enum Step {
    Handshake,
    Request,
    Response,
    ServerFin,
    ClientFin,
    ServerReset,
}

/// Writes the trace of `steps` (time in ms, connection, step) to a temporary pcap.
fn write_trace(name: &str, mut steps: Vec<(f64, usize, Step)>) -> std::path::PathBuf {
    steps.sort_by(|a, b| a.0.total_cmp(&b.0));
    let connections = steps.iter().map(|&(_, c, _)| c).max().unwrap_or(0) + 1;
    let mut conversations: Vec<Conversation> = (0..connections)
        .map(|c| Conversation::new(&format!("10.0.0.1:{}", 20000 + c), "10.0.0.2:80"))
        .collect();
    let mut trace = Trace::ethernet();
    for (at, c, step) in steps {
        let conversation = &mut conversations[c];
        match step {
            Step::Handshake => conversation.handshake(&mut trace, at, 2.0),
            Step::Request => {
                conversation.send(&mut trace, Side::Client, at, 100);
            }
            Step::Response => {
                conversation.send(&mut trace, Side::Server, at, 500);
            }
            Step::ServerFin => conversation.fin(&mut trace, Side::Server, at),
            Step::ClientFin => conversation.fin(&mut trace, Side::Client, at),
            Step::ServerReset => conversation.rst(&mut trace, Side::Server, at),
        }
    }
    written(name, &trace)
}

/// Writes `trace` to a temporary pcap named after `name`.
fn written(name: &str, trace: &Trace) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("tcpwhy-{name}-{}.pcap", std::process::id()));
    trace.write(&path).unwrap();
    path
}

/// A server that answers one request at a time, 40 ms each (25 a second),
/// gets 10 requests a second for 4 s, then 50 a second for 4 s: the queue
/// grows, answers take longer and longer, and throughput stays at 25 a second.
#[test]
fn a_server_past_its_capacity_is_found_saturated() {
    const SERVICE_MS: f64 = 40.0;
    let arrivals: Vec<f64> = (0..40)
        .map(|i| f64::from(i) * 100.0)
        .chain((0..200).map(|i| 4000.0 + f64::from(i) * 20.0))
        .collect();
    let mut steps = Vec::new();
    let mut server_free_at = 0.0f64;
    for (c, &arrival) in arrivals.iter().enumerate() {
        steps.push((arrival, c, Step::Handshake));
        let request_at = arrival + 2.0;
        steps.push((request_at, c, Step::Request));
        server_free_at = server_free_at.max(request_at + 1.0) + SERVICE_MS;
        steps.push((server_free_at, c, Step::Response));
        // The client closes once it has its answer.
        steps.push((server_free_at + 1.0, c, Step::ClientFin));
    }
    let capture = write_trace("saturation", steps);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    let top = &findings[0];
    assert_eq!(top["kind"], "server_saturation", "{findings:#?}");
    let title = top["title"].as_str().unwrap();
    let throughput: f64 = title
        .split("stayed at ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((throughput - 25.0).abs() <= 2.5, "{title}");
}

/// The same server under a load it can carry: no saturation.
#[test]
fn a_server_within_its_capacity_is_not_found_saturated() {
    let mut steps = Vec::new();
    for c in 0..240 {
        let arrival = c as f64 * 50.0;
        steps.push((arrival, c, Step::Handshake));
        steps.push((arrival + 2.0, c, Step::Request));
        steps.push((arrival + 43.0, c, Step::Response));
        steps.push((arrival + 44.0, c, Step::ClientFin));
    }
    let capture = write_trace("within-capacity", steps);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    assert!(
        findings.iter().all(|f| f["kind"] != "server_saturation"),
        "{findings:#?}"
    );
}

/// A load test: 33 requests answered in 5 ms, 11 others left waiting until
/// something on the way resets them 60 s later.
#[test]
fn connections_reset_unanswered_after_a_minute_are_a_setup_failure() {
    let mut steps = Vec::new();
    for c in 0..44 {
        let at = c as f64 * 100.0;
        steps.push((at, c, Step::Handshake));
        steps.push((at + 2.0, c, Step::Request));
        if c % 4 == 1 {
            steps.push((at + 60_002.0, c, Step::ServerReset));
        } else {
            steps.push((at + 7.0, c, Step::Response));
        }
    }
    let capture = write_trace("reset-after-a-minute", steps);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    let top = &findings[0];
    assert_eq!(top["kind"], "connection_setup_failure", "{findings:#?}");
    assert_eq!(
        top["title"], "11 connections reset after 60.0 s without an answer, all to 10.0.0.2:80",
        "{findings:#?}"
    );
    assert_eq!(top["connections"], 11);
}

/// Uploads the server only acknowledges, each closed by both sides and
/// then reset by the server seconds after it began: the server answered
/// with its ACKs and its FIN, so no one waited for it, and no setup failed.
#[test]
fn uploads_both_sides_closed_before_a_reset_are_no_setup_failure() {
    let mut steps = Vec::new();
    for c in 0..4 {
        let at = c as f64 * 100.0;
        steps.push((at, c, Step::Handshake));
        steps.push((at + 2.0, c, Step::Request));
        steps.push((at + 6_000.0, c, Step::ClientFin));
        steps.push((at + 6_001.0, c, Step::ServerFin));
        steps.push((at + 6_002.0, c, Step::ServerReset));
    }
    let capture = write_trace("upload-closed-then-reset", steps);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    assert!(
        findings
            .iter()
            .all(|f| f["kind"] != "connection_setup_failure"),
        "{findings:#?}"
    );
}

/// Twenty exchanges, each followed by the client's last words and the
/// server's reset of them. Where the server had closed first and the
/// client's data acknowledged that FIN (as TLS's close_notify answers the
/// server's own), the client asked nothing: the reset is the closed
/// socket's answer, and no request failed. The same reset of a request
/// sent with the connection still open fails it.
#[test]
fn a_reset_of_data_sent_after_the_servers_close_fails_no_request() {
    let findings_of = |name: &str, server_closes_first: bool| {
        let mut steps = Vec::new();
        for c in 0..20 {
            let at = c as f64 * 100.0;
            steps.push((at, c, Step::Handshake));
            steps.push((at + 2.0, c, Step::Request));
            steps.push((at + 7.0, c, Step::Response));
            if server_closes_first {
                steps.push((at + 8.0, c, Step::ServerFin));
            }
            steps.push((at + 20.0, c, Step::Request));
            steps.push((at + 21.0, c, Step::ServerReset));
        }
        let capture = write_trace(name, steps);
        let findings = common::objects("diagnose", &capture, "finding");
        std::fs::remove_file(&capture).unwrap();
        findings
    };
    let failed = |findings: &[serde_json::Value]| {
        findings.iter().any(|f| f["kind"] == "application_failure")
    };
    let after_the_close = findings_of("data-after-the-close", true);
    assert!(!failed(&after_the_close), "{after_the_close:#?}");
    let while_open = findings_of("request-while-open", false);
    assert!(failed(&while_open), "{while_open:#?}");
}

/// Twelve times the client sends a line and the server answers in two
/// pieces 1.5 s apart. Where the client's next line comes at once after the
/// second piece, it was waiting for it: a response written in pieces. Where
/// it comes a second later, as a person types, nothing shows that anyone
/// waited through the pause. And once the server's first words are an SSH
/// identification, either side may speak unprompted: the pauses are the
/// session's own pace however soon the client moves on.
#[test]
fn pauses_inside_what_a_side_says_are_waits_only_where_someone_waited() {
    let findings_of = |name: &str, banner: &[u8], next_line_ms: f64| {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:22");
        conn.handshake(&mut trace, 0.0, 2.0);
        conn.send_bytes(&mut trace, Side::Server, 3.0, banner);
        conn.ack(&mut trace, Side::Client, 4.0);
        for turn in 0..12 {
            let at = 10.0 + (1_504.0 + next_line_ms) * f64::from(turn);
            conn.send(&mut trace, Side::Client, at, 48);
            conn.send(&mut trace, Side::Server, at + 2.0, 48);
            conn.ack(&mut trace, Side::Client, at + 3.0);
            conn.send(&mut trace, Side::Server, at + 1_502.0, 80);
            conn.ack(&mut trace, Side::Client, at + 1_503.0);
        }
        let path = written(name, &trace);
        let findings = common::objects("diagnose", &path, "finding");
        std::fs::remove_file(&path).unwrap();
        findings
    };
    let split_loud = |findings: &[serde_json::Value]| {
        findings
            .iter()
            .any(|f| f["kind"] == "split_response" && f["severity"] != "info")
    };
    let unknown = b"\x00\x01\x02\x03 hello\r\n";
    let awaited = findings_of("pieces-awaited", unknown, 3.0);
    assert!(split_loud(&awaited), "{awaited:#?}");
    let typed = findings_of("pieces-then-a-person", unknown, 1_000.0);
    assert!(!split_loud(&typed), "{typed:#?}");
    let ssh = b"SSH-2.0-OpenSSH_9.6\r\n";
    let session = findings_of("pieces-of-a-terminal-session", ssh, 3.0);
    assert!(!split_loud(&session), "{session:#?}");
}

/// The client asks, the server answers in part, then its last piece goes
/// unacknowledged through five resends with growing timeouts. Where the
/// client had said goodbye (its FIN) before going silent, no one waited for
/// those resends: the dead peer is listed, as info. Where it went silent
/// mid-answer, it left the server's answer hanging: a dead peer, loud.
#[test]
fn a_peer_silent_after_its_goodbye_made_no_one_wait() {
    let dead_peer_of = |name: &str, client_says_goodbye: bool| {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
        conn.handshake(&mut trace, 0.0, 2.0);
        conn.send(&mut trace, Side::Client, 10.0, 100);
        conn.send(&mut trace, Side::Server, 12.0, 500);
        conn.ack(&mut trace, Side::Client, 13.0);
        if client_says_goodbye {
            conn.fin(&mut trace, Side::Client, 14.0);
        }
        let last = conn.send(&mut trace, Side::Server, 15.0, 31);
        let mut resend_at = 15.0;
        for backoff in [200.0, 400.0, 800.0, 1_600.0, 3_200.0] {
            resend_at += backoff;
            conn.send_at(&mut trace, Side::Server, resend_at, last, 31);
        }
        let capture = written(name, &trace);
        let findings = common::objects("diagnose", &capture, "finding");
        std::fs::remove_file(&capture).unwrap();
        findings
            .into_iter()
            .find(|f| f["kind"] == "dead_peer")
            .map(|f| f["severity"].as_str().unwrap().to_string())
    };
    assert_eq!(
        dead_peer_of("silent-after-goodbye", true).as_deref(),
        Some("info")
    );
    let mid_answer = dead_peer_of("silent-mid-answer", false);
    assert!(
        matches!(mid_answer.as_deref(), Some("warning" | "critical")),
        "{mid_answer:?}"
    );
}

/// Over a 400 ms path a client makes twelve requests, each the moment the
/// last answer arrives. Twelve distinct steps (every request and answer of
/// its own size, as a login's or a handshake's) pay the path's latency once
/// each: a long path, not a chatty habit. The same exchange made twelve
/// times is a habit one batched request would spare: chattiness.
#[test]
fn round_trips_in_a_row_are_chattiness_only_when_the_exchange_repeats() {
    let kinds_of = |name: &str, repeats: bool| {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:9000");
        conn.handshake(&mut trace, 0.0, 400.0);
        // The tap sits halfway: an answer passes it half a round trip after
        // its request, the next request half a round trip later.
        let mut at = 400.0;
        for step in 0..12 {
            let (request, answer) = if repeats {
                (60, 90)
            } else {
                (60 + 7 * step, 90 + 13 * step)
            };
            conn.send(&mut trace, Side::Client, at, request);
            conn.send(&mut trace, Side::Server, at + 200.0, answer);
            at += 400.0;
        }
        conn.ack(&mut trace, Side::Client, at);
        let capture = written(name, &trace);
        let findings = common::objects("diagnose", &capture, "finding");
        std::fs::remove_file(&capture).unwrap();
        findings
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let distinct = kinds_of("distinct-steps", false);
    assert_eq!(
        distinct.first().map(String::as_str),
        Some("path_latency"),
        "{distinct:?}"
    );
    assert!(!distinct.iter().any(|k| k == "chattiness"), "{distinct:?}");
    let repeated = kinds_of("repeated-exchange", true);
    assert_eq!(
        repeated.first().map(String::as_str),
        Some("chattiness"),
        "{repeated:?}"
    );
}

/// A stray SYN to a closed port is refused a round trip later (180 ms),
/// then the client's request on another connection is answered at once,
/// and a second one after the client thought two seconds. The refusal made
/// no one wait past its round trip, and one attempt refused beside one that
/// opened is no outage: info. Still, an attempt failed outright: it comes
/// before the round trips and the client's own pace.
#[test]
fn a_stray_refused_attempt_is_listed_quietly() {
    let mut trace = Trace::ethernet();
    let mut stray = Conversation::new("10.0.0.1:40000", "10.0.0.2:12345");
    stray.syn(&mut trace, Side::Client, 0.0, Vec::new());
    stray.rst(&mut trace, Side::Server, 180.0);
    let mut page = Conversation::new("10.0.0.1:40001", "10.0.0.2:9000");
    page.handshake(&mut trace, 5_000.0, 180.0);
    page.send(&mut trace, Side::Client, 5_180.0, 100);
    page.send(&mut trace, Side::Server, 5_290.0, 500);
    page.ack(&mut trace, Side::Client, 5_380.0);
    page.send(&mut trace, Side::Client, 7_380.0, 100);
    page.send(&mut trace, Side::Server, 7_490.0, 500);
    page.ack(&mut trace, Side::Client, 7_580.0);
    let capture = written("stray-refused", &trace);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    let setup = &findings[0];
    assert_eq!(setup["kind"], "connection_setup_failure", "{findings:#?}");
    assert_eq!(setup["severity"], "info", "{setup}");
}

/// A client's first attempt at a service is refused (it is not listening
/// yet); the client tries again two seconds later and gets through, and its
/// request is answered at once. It waited two seconds for a connection it
/// wanted: the refusal costs them, and it is the finding to read first.
#[test]
fn a_refused_attempt_the_client_got_past_later_cost_it_the_wait() {
    let mut trace = Trace::ethernet();
    let mut refused = Conversation::new("10.0.0.1:40000", "10.0.0.2:9000");
    refused.syn(&mut trace, Side::Client, 0.0, Vec::new());
    refused.rst(&mut trace, Side::Server, 1.0);
    let mut retry = Conversation::new("10.0.0.1:40001", "10.0.0.2:9000");
    retry.handshake(&mut trace, 2_000.0, 1.0);
    retry.send(&mut trace, Side::Client, 2_001.0, 100);
    retry.send(&mut trace, Side::Server, 2_003.0, 500);
    retry.ack(&mut trace, Side::Client, 2_004.0);
    let capture = written("refused-then-through", &trace);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    let setup = &findings[0];
    assert_eq!(setup["kind"], "connection_setup_failure", "{findings:#?}");
    assert_ne!(setup["severity"], "info", "{setup}");
    assert!(
        (setup["cost_ms"].as_f64().unwrap() - 2_000.0).abs() < 1.0,
        "{setup}"
    );
    assert!(
        setup["title"]
            .as_str()
            .unwrap()
            .contains("got through 2.00 s later"),
        "{setup}"
    );
}

/// A client writes its first request in two pieces, the second held back
/// until the server's delayed ACK of the first comes 200 ms later (Nagle),
/// then thinks five seconds before its next request. Once, from timing
/// alone, the hold is info; but a person would notice it, and it is a
/// fault: it comes before the client's own pace, though that took longer.
#[test]
fn a_noticeable_fault_comes_before_a_sides_own_pace() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:9000");
    conn.handshake(&mut trace, 0.0, 2.0);
    conn.send(&mut trace, Side::Client, 10.0, 100);
    conn.ack(&mut trace, Side::Server, 211.0);
    conn.send(&mut trace, Side::Client, 212.0, 50);
    conn.send(&mut trace, Side::Server, 213.0, 500);
    conn.ack(&mut trace, Side::Client, 214.0);
    conn.send(&mut trace, Side::Client, 5_214.0, 150);
    conn.send(&mut trace, Side::Server, 5_216.0, 500);
    conn.ack(&mut trace, Side::Client, 5_217.0);
    let capture = written("nagle-then-think", &trace);
    let findings = common::objects("diagnose", &capture, "finding");
    std::fs::remove_file(&capture).unwrap();
    let kinds: Vec<&str> = findings
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"nagle_delayed_ack"), "{kinds:?}");
    assert!(kinds.contains(&"client_think"), "{kinds:?}");
}
