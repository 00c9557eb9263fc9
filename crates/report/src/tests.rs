//! The report's data embedding and its bounds.

use super::*;
use crate::detail::{Collector, LADDER_PACKETS, MAX_POINTS, MAX_RESENT};
use crate::model::sample;

const HOSTILE: &str = "</script><script>alert(1)</script>\"onload=alert(1) & \u{2028}\u{2029}";

#[test]
fn embedded_json_cannot_close_its_script_element_and_reads_back_unchanged() {
    let embedded = script_json(&serde_json::json!({ "host": HOSTILE }));
    for forbidden in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
        assert!(!embedded.contains(forbidden), "{forbidden:?} in {embedded}");
    }
    let back: serde_json::Value = serde_json::from_str(&embedded).unwrap();
    assert_eq!(back["host"], HOSTILE);
}

#[test]
fn html_text_escapes_markup_and_quotes() {
    assert_eq!(
        html_text("<a href=\"x\">'&'</a>"),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}

#[test]
fn the_page_scripts_and_styles_cannot_end_their_elements_early() {
    for script in REPORT.scripts.iter().chain(&DIFF.scripts) {
        assert!(!script.to_ascii_lowercase().contains("</script"));
        assert!(!script.contains("innerHTML"), "data must go in as text");
    }
    assert!(!CSS.to_ascii_lowercase().contains("</style"));
}

#[test]
fn a_sample_keeps_its_budget_every_priority_item_it_can_and_an_even_spread() {
    let kept = sample(100_000, 1000, |i| i % 1000 == 7);
    assert!(kept.len() <= 1000, "{}", kept.len());
    assert!(kept.len() >= 900, "{}", kept.len());
    assert!((0..100_000)
        .filter(|i| i % 1000 == 7)
        .all(|i| kept.contains(&i)));
    assert!(kept.windows(2).all(|pair| pair[0] < pair[1]));
    assert!(kept.last().unwrap() > &95_000);
    assert_eq!(sample(10, 1000, |_| false), (0..10).collect::<Vec<_>>());
}

/// One long bulk transfer with a retransmission every 100 segments.
fn long_transfer(segments: u32) -> synth::Trace {
    let mut trace = synth::Trace::ethernet();
    let mut conn = synth::Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    let mut at = 20.0;
    for n in 0..segments {
        let seq = conn.send(&mut trace, synth::Side::Server, at, 1000);
        if n % 100 == 50 {
            conn.send_at(&mut trace, synth::Side::Server, at + 0.5, seq, 1000);
        }
        conn.ack(&mut trace, synth::Side::Client, at + 5.0);
        at += 1.0;
    }
    trace
}

fn details_of(trace: &synth::Trace) -> Vec<ConnectionDetail> {
    let mut tracker = tcp::Tracker::new();
    let mut collector = Collector::for_connections(&[0]);
    for frame in trace.captured_frames() {
        let segment = decode::decode(&frame).unwrap();
        let view = tracker
            .process(&segment)
            .expect("scripted frames are recorded once");
        collector.observe(&view);
    }
    collector.finish()
}

#[test]
fn a_long_connection_is_thinned_to_bounded_points_that_span_it() {
    let trace = long_transfer(30_000);
    let details = details_of(&trace);
    let detail = &details[0];
    let packets = trace.frames().count() as u64;
    assert_eq!(detail.packets_seen, packets);
    assert!(detail.sample.len() <= MAX_POINTS);
    assert!(detail.sample.len() >= MAX_POINTS / 2);
    assert!(detail.sample_stride * detail.sample.len() as u64 >= packets);
    assert_eq!(detail.ladder.len(), LADDER_PACKETS);
    assert_eq!(detail.resent_seen, 300);
    assert_eq!(detail.resent.len(), 300.min(MAX_RESENT));
    assert!(detail.rtt.len() <= MAX_POINTS);
    let last = detail.sample.last().unwrap().timestamp_ns;
    let end = trace.frames().last().unwrap().0;
    assert!(end - last < 1_000_000 * detail.sample_stride as i64 * 2);
}

#[test]
fn detail_has_relative_sequences_scaled_windows_and_round_trips() {
    let details = details_of(&long_transfer(10));
    let detail = &details[0];
    let first_data = detail.ladder.iter().find(|p| p.len > 0).unwrap();
    assert_eq!(
        (first_data.seq, first_data.len, first_data.from_client),
        (1, 1000, false)
    );
    // The client's ACKs advertise 64000 << 7 after a handshake with window scaling.
    let ack = detail.ladder.iter().rev().find(|p| p.from_client).unwrap();
    assert_eq!(ack.window, 64_000 << 7);
    assert_eq!(ack.ack, 10_001);
    // Each segment is acknowledged 5 ms later; the handshake's SYN-ACK after 10 ms.
    let data_rtts: Vec<i64> = detail
        .rtt
        .iter()
        .filter(|s| !s.from_client)
        .map(|s| s.rtt_ns)
        .collect();
    assert!(data_rtts.contains(&5_000_000), "{data_rtts:?}");
}

#[test]
fn a_report_carries_every_capture_string_only_inside_its_json_block() {
    let mut trace = synth::Trace::ethernet();
    let mut conn = synth::Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, synth::Side::Client, 20.0, 100);
    conn.send(&mut trace, synth::Side::Server, 30.0, 100);
    let details = details_of(&trace);
    let mut connection = sample_connection();
    connection.history = HOSTILE.to_string();
    let transaction = sample_transaction(Some(HOSTILE.to_string()));
    let files = vec![HOSTILE.to_string()];
    let mut html = Vec::new();
    write(
        &mut html,
        &Report {
            files: &files,
            frames: 5,
            start_ns: Some(sample_connection().first_ns),
            connections: &[connection],
            transactions: &[transaction],
            ticks: &[],
            findings: &[],
            details: &details,
            detail_command: format!("tcpwhy report {HOSTILE} --detail"),
            partial: Some(HOSTILE.to_string()),
        },
    )
    .unwrap();
    let html = String::from_utf8(html).unwrap();
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the data and the page script"
    );
    assert!(!html.contains("alert(1)</script>"));
    let (page, data) = html
        .split_once("<script type=\"application/json\"")
        .unwrap();
    assert!(!page.contains("\"onload"), "an attribute could be injected");
    assert!(
        page.contains("&lt;script&gt;alert(1)"),
        "the title shows the file name as text"
    );
    assert!(data.contains("\\u003cscript\\u003ealert(1)"));
    assert_only_the_page_script_may_run(&html);
}

/// The content security policy names the page script's hash, and nothing
/// else may run: no inline script, no other source.
fn assert_only_the_page_script_may_run(html: &str) {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    let policy_start = html.find("script-src ").unwrap() + "script-src ".len();
    let policy = &html[policy_start..policy_start + html[policy_start..].find(';').unwrap()];
    let script_start = html.rfind("<script>").unwrap() + "<script>".len();
    let script = &html[script_start..html.rfind("</script>").unwrap()];
    let digest = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script));
    assert_eq!(policy, format!("'sha256-{digest}'"));
}

fn sample_connection() -> ConnectionSummary {
    ConnectionSummary {
        id: 0,
        client: "10.0.0.1:40000".parse().unwrap(),
        server: "10.0.0.2:80".parse().unwrap(),
        roles_guessed: false,
        first_frame: 1,
        last_frame: 5,
        first_ns: 1_767_225_600_000_000_000,
        last_ns: 1_767_225_600_030_000_000,
        duration_ms: 30.0,
        state: tcp::ConnState::S1,
        history: "ShAD".into(),
        close: tcp::Close {
            by: None,
            how: tcp::CloseHow::Open,
            frame: None,
        },
        handshake: tcp::Handshake::default(),
        client_to_server: tcp::DirectionSummary::default(),
        server_to_client: tcp::DirectionSummary::default(),
    }
}

fn sample_transaction(name: Option<String>) -> Transaction {
    Transaction {
        connection: 0,
        index: 1,
        signature: "blk[100]-blk[100]".into(),
        name,
        request_start_ns: 1_767_225_600_020_000_000,
        request_end_ns: 1_767_225_600_020_000_000,
        response_start_ns: Some(1_767_225_600_030_000_000),
        response_end_ns: Some(1_767_225_600_030_000_000),
        duration_ms: Some(10.0),
        request_transfer_ms: Some(0.0),
        server_think_ms: Some(10.0),
        response_transfer_ms: Some(0.0),
        request_bytes: 100,
        response_bytes: 100,
        request_packets: 1,
        response_packets: 1,
        latency: transactions::Latency {
            network_ms: 0.5,
            server_ms: 9.5,
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn detail_goes_to_those_asked_then_the_examples_then_the_largest_and_slowest_in_turn() {
    let connections: Vec<ConnectionSummary> = (0..6)
        .map(|id| {
            let mut c = sample_connection();
            c.id = id;
            c.server_to_client.payload_bytes = [10, 500, 20, 30, 40, 50][id as usize];
            c
        })
        .collect();
    let transactions: Vec<Transaction> = [(3, 900.0), (4, 5.0), (1, 1.0)]
        .into_iter()
        .map(|(connection, ms)| Transaction {
            connection,
            duration_ms: Some(ms),
            ..sample_transaction(None)
        })
        .collect();
    let mut finding = diagnose::Finding {
        severity: diagnose::Severity::Critical,
        share: 1.0,
        connections: 1,
        example_connection: Some(2),
        ..diagnose::Finding::new(diagnose::FindingKind::ZeroWindow, "", 1.0)
    };
    let chosen = connections_to_detail(&connections, &transactions, &[finding.clone()], &[5], 10);
    // 5 asked, 2 the example; then largest 1, slowest 3, largest 5 (taken), slowest 4, ...
    assert_eq!(chosen, [5, 2, 1, 3, 4, 0]);
    finding.example_connection = None;
    let chosen = connections_to_detail(&connections, &transactions, &[finding], &[], 3);
    assert_eq!(chosen, [1, 3, 5]);
}
