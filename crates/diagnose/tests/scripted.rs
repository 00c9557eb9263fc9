//! Findings on scripted traces whose cause is known by construction: SYN
//! options stripped or clamped on the way, an MTU black hole, and a server
//! that stalls at a steady period against one that is slow turn after turn.

use diagnose::{Finding, FindingKind};
use synth::{Conversation, Side, TcpOption, Trace};

fn findings(trace: &Trace) -> Vec<Finding> {
    let stages = pipeline::Stages {
        diagnose: true,
        ..pipeline::Stages::default()
    };
    pipeline::analyze_frames(trace.captured_frames(), stages).findings
}

fn of_kind(found: &[Finding], kind: FindingKind) -> Option<&Finding> {
    found.iter().find(|f| f.kind == kind)
}

fn full_options() -> Vec<TcpOption> {
    vec![
        TcpOption::Mss(1460),
        TcpOption::SackPermitted,
        TcpOption::Timestamps(1, 0),
        TcpOption::WindowScale(7),
    ]
}

/// A handshake whose SYN carries `client` options and SYN-ACK `server` options, then one exchange.
fn exchange(client: Vec<TcpOption>, server: Vec<TcpOption>) -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.syn(&mut trace, Side::Client, 0.0, client);
    conn.syn(&mut trace, Side::Server, 5.0, server);
    conn.ack(&mut trace, Side::Client, 10.0);
    conn.send(&mut trace, Side::Client, 11.0, 100);
    conn.send(&mut trace, Side::Server, 16.0, 500);
    conn.ack(&mut trace, Side::Client, 21.0);
    trace
}

#[test]
fn a_syn_ack_stripped_to_a_536_byte_mss_is_reported_option_by_option() {
    let found = findings(&exchange(full_options(), vec![TcpOption::Mss(536)]));
    let options = of_kind(&found, FindingKind::TcpOptions).expect("a tcp_options finding");
    for missing in ["window scaling", "SACK", "timestamps", "MSS down to 536"] {
        assert!(options.title.contains(missing), "{}", options.title);
    }
    assert_eq!(options.figures["smallest_mss"], 536.0);
    assert_eq!(options.connections, 1);
}

#[test]
fn a_syn_ack_without_sack_and_a_clamped_mss_names_only_those() {
    let mut server = full_options();
    server.retain(|option| *option != TcpOption::SackPermitted);
    server[0] = TcpOption::Mss(1380);
    let found = findings(&exchange(full_options(), server));
    let options = of_kind(&found, FindingKind::TcpOptions).expect("a tcp_options finding");
    assert!(options.title.contains("SACK from one side only on 1"));
    assert!(options.title.contains("MSS down to 1380"));
    assert!(!options.title.contains("window scaling"));
    assert!(!options.title.contains("timestamps"));
}

#[test]
fn matching_full_options_make_no_finding() {
    let found = findings(&exchange(full_options(), full_options()));
    assert!(
        of_kind(&found, FindingKind::TcpOptions).is_none(),
        "{found:#?}"
    );
}

#[test]
fn a_third_syn_without_window_scaling_answered_at_last_is_named() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    let first = conn.next_seq(Side::Client);
    conn.syn(&mut trace, Side::Client, 0.0, full_options());
    for (at_ms, options) in [
        (1000.0, full_options()),
        (3000.0, vec![TcpOption::Mss(1460), TcpOption::SackPermitted]),
    ] {
        conn.set_seq(Side::Client, first);
        conn.syn(&mut trace, Side::Client, at_ms, options);
    }
    conn.syn(
        &mut trace,
        Side::Server,
        3005.0,
        vec![TcpOption::Mss(1460), TcpOption::SackPermitted],
    );
    conn.ack(&mut trace, Side::Client, 3010.0);
    let found = findings(&trace);
    let options = of_kind(&found, FindingKind::TcpOptions).expect("a tcp_options finding");
    assert!(
        options.title.contains("window scaling"),
        "{}",
        options.title
    );
    assert!(
        options
            .explanation
            .contains("1 connections were answered only after the client sent its SYN again"),
        "{}",
        options.explanation
    );
}

/// A request answered by full-size segments; the last is sent `resends` more
/// times by timeout, never acknowledged.
fn response_resent(segment: u32, resends: u32) -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Client, 11.0, 100);
    conn.send(&mut trace, Side::Server, 16.0, 300);
    conn.ack(&mut trace, Side::Client, 21.0);
    let stuck = conn.send(&mut trace, Side::Server, 22.0, segment);
    let mut at_ms = 22.0;
    for attempt in 0..resends {
        at_ms += 200.0 * f64::from(1 << attempt);
        conn.send_at(&mut trace, Side::Server, at_ms, stuck, segment);
    }
    trace
}

#[test]
fn a_full_size_segment_resent_again_and_again_is_a_black_hole() {
    let found = findings(&response_resent(1448, 4));
    let hole = of_kind(&found, FindingKind::MtuBlackHole).expect("an mtu_black_hole finding");
    assert_eq!(hole.figures["resent_segment_bytes"], 1448.0);
    assert_eq!(hole.figures["resends"], 4.0);
    assert!(
        hole.title.contains("1448-byte segment 5 times"),
        "{}",
        hole.title
    );
    assert!(hole.suspected.is_some());
}

#[test]
fn a_small_segment_resent_or_a_single_resend_is_not_a_black_hole() {
    for trace in [response_resent(200, 4), response_resent(1448, 1)] {
        let found = findings(&trace);
        assert!(
            of_kind(&found, FindingKind::MtuBlackHole).is_none(),
            "{found:#?}"
        );
    }
}

/// One connection of request/response turns over a 1 ms path: each request
/// answered after the server time its turn is given (ms), the client
/// asking again 1 ms after each answer.
fn turns(server_ms: &[f64]) -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 1.0);
    let mut at = 2.0;
    for &server in server_ms {
        conn.send(&mut trace, Side::Client, at, 100);
        conn.send(&mut trace, Side::Server, at + 0.5 + server, 200);
        conn.ack(&mut trace, Side::Client, at + 1.0 + server);
        at += 2.0 + server;
    }
    trace
}

#[test]
fn stalls_are_periodic_only_with_usual_answers_between_them() {
    // Four stalls of 300 ms, with 50 answers of 1 ms between each: the
    // server stops at a steady period and goes on.
    let mut stalling = Vec::new();
    for _ in 0..4 {
        stalling.push(300.0);
        stalling.extend([1.0; 50]);
    }
    let found = findings(&turns(&stalling));
    let stalls = of_kind(&found, FindingKind::PeriodicStalls).expect("periodic stalls");
    assert_eq!(stalls.figures["stalls"], 4.0, "{}", stalls.title);
    // The same slow answers one after another, the usual ones all before
    // them: a slow server, not one that stops.
    let mut slow_in_a_row = vec![1.0; 200];
    slow_in_a_row.extend([300.0; 4]);
    let found = findings(&turns(&slow_in_a_row));
    assert!(
        of_kind(&found, FindingKind::PeriodicStalls).is_none(),
        "{found:#?}"
    );
}

#[test]
fn syns_resent_again_and_again_are_not_explained_by_a_fin_resent_to_a_peer_gone() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    let first = conn.next_seq(Side::Client);
    for at_ms in [0.0, 1000.0, 3000.0, 7000.0] {
        conn.set_seq(Side::Client, first);
        conn.syn(&mut trace, Side::Client, at_ms, full_options());
    }
    conn.syn(&mut trace, Side::Server, 7010.0, full_options());
    conn.ack(&mut trace, Side::Client, 7020.0);
    conn.send(&mut trace, Side::Client, 7021.0, 100);
    conn.send(&mut trace, Side::Server, 7031.0, 300);
    conn.fin(&mut trace, Side::Server, 7032.0);
    conn.ack(&mut trace, Side::Client, 7040.0);
    // The client's FIN, never acknowledged: the server has gone.
    let fin = conn.next_seq(Side::Client);
    for at_ms in [7041.0, 7241.0, 7641.0, 8441.0, 10041.0] {
        conn.set_seq(Side::Client, fin);
        conn.fin(&mut trace, Side::Client, at_ms);
    }
    let found = findings(&trace);
    assert_eq!(
        found[0].kind,
        FindingKind::ConnectionSetupFailure,
        "{found:#?}"
    );
    assert!(
        of_kind(&found, FindingKind::PacketLoss).is_none(),
        "{found:#?}"
    );
}

/// Requests written in two small pieces, the second held (Nagle) until the
/// server acknowledged the first `ack_after_ms` after it came, over a 1 ms
/// round trip (captured beside the client).
fn requests_in_two_pieces(ack_after_ms: f64) -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 1.0);
    let mut at = 2.0;
    for _ in 0..5 {
        conn.send(&mut trace, Side::Client, at, 100);
        let acked = at + 1.0 + ack_after_ms;
        conn.ack(&mut trace, Side::Server, acked);
        conn.send(&mut trace, Side::Client, acked + 0.05, 50);
        conn.send(&mut trace, Side::Server, acked + 1.5, 300);
        conn.ack(&mut trace, Side::Client, acked + 1.6);
        at = acked + 3.0;
    }
    trace
}

/// The title of the Nagle finding on [`requests_in_two_pieces`].
fn nagle_title(ack_after_ms: f64) -> String {
    let found = findings(&requests_in_two_pieces(ack_after_ms));
    of_kind(&found, FindingKind::NagleDelayedAck)
        .expect("Nagle")
        .title
        .clone()
}

#[test]
fn a_nagle_wait_names_the_delayed_ack_only_when_a_delayed_ack_timer_held_the_ack() {
    let title = nagle_title(40.0);
    assert!(title.ends_with("until the server's delayed ACK"), "{title}");
    // An ACK sent at once: the held piece waited a round trip, no timer.
    let title = nagle_title(0.1);
    assert!(
        title.ends_with("until the server's ACK a round trip later"),
        "{title}"
    );
    // RFC 1122 holds a delayed ACK under half a second: this one was late for another reason.
    let title = nagle_title(900.0);
    assert!(
        title.contains("later than any delayed-ACK timer"),
        "{title}"
    );
}

/// A program on a 0.2 ms path asks 40 times, each answer taking the server
/// 20 ms, and asks again `own_ms` after each answer.
fn program_asking_again_after(own_ms: f64) -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 0.2);
    let mut at = 1.0;
    for _ in 0..40 {
        conn.send(&mut trace, Side::Client, at, 100);
        conn.send(&mut trace, Side::Server, at + 20.1, 200);
        at += 20.1 + own_ms;
    }
    trace
}

/// The actions the server's time touched, and its transactions.
fn server_actions(own_ms: f64) -> (f64, f64) {
    let found = findings(&program_asking_again_after(own_ms));
    let server = of_kind(&found, FindingKind::ServerThinkTime).expect("the server's time");
    (server.figures["actions"], server.transactions as f64)
}

#[test]
fn a_program_asking_again_within_a_hosts_time_to_act_makes_one_action() {
    assert_eq!(server_actions(1.0).0, 1.0);
    let (actions, transactions) = server_actions(50.0);
    assert!(transactions >= 39.0, "{transactions}");
    assert_eq!(actions, transactions);
}
