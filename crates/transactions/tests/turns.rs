//! Transactions assembled from scripted exchanges with known timing.

use synth::{Conversation, Side, Trace};
use tcp::Tracker;
use transactions::{by_signature, Builder, Part, Transaction};

fn transactions_of(trace: &Trace) -> Vec<Transaction> {
    let mut tracker = Tracker::new();
    let mut builder = Builder::new();
    for frame in trace.captured_frames() {
        let segment = decode::decode(&frame).unwrap();
        let view = tracker
            .process(&segment)
            .expect("scripted frames are recorded once");
        let server_port = match view.direction {
            tcp::Direction::ClientToServer => segment.dst.port,
            tcp::Direction::ServerToClient => segment.src.port,
        };
        builder.observe(&view, segment.payload(frame.data), server_port);
    }
    builder.finish().0
}

#[test]
fn turns_split_into_requests_with_think_times() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    conn.send(&mut trace, Side::Client, 10.0, 300);
    conn.send(&mut trace, Side::Client, 11.0, 27);
    conn.send(&mut trace, Side::Server, 61.0, 1448);
    conn.send(&mut trace, Side::Server, 62.0, 1448);
    conn.send(&mut trace, Side::Server, 63.0, 600);
    conn.ack(&mut trace, Side::Client, 64.0);
    conn.send(&mut trace, Side::Client, 100.0, 327);
    let transactions = transactions_of(&trace);
    assert_eq!(transactions.len(), 2);
    let first = &transactions[0];
    assert_eq!(first.signature, "blk[327]-blk[3xxx]");
    assert_eq!((first.request_bytes, first.response_bytes), (327, 3496));
    assert_eq!((first.request_packets, first.response_packets), (2, 3));
    assert_eq!(first.request_transfer_ms, Some(1.0));
    assert_eq!(first.server_think_ms, Some(50.0));
    assert_eq!(first.response_transfer_ms, Some(2.0));
    assert_eq!(first.client_think_ms, Some(37.0));
    assert_eq!(first.duration_ms, Some(53.0));
    let second = &transactions[1];
    assert_eq!(
        (second.index, second.signature.as_str()),
        (2, "blk[327]-none")
    );
    assert_eq!(second.server_think_ms, None);
}

#[test]
fn a_resent_request_segment_counts_as_a_retransmission_not_a_new_request() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    let seq = conn.send(&mut trace, Side::Client, 10.0, 100);
    conn.send_at(&mut trace, Side::Client, 310.0, seq, 100);
    conn.send(&mut trace, Side::Server, 312.0, 50);
    let transactions = transactions_of(&trace);
    assert_eq!(transactions.len(), 1);
    assert_eq!(transactions[0].retransmissions, 1);
    assert_eq!(transactions[0].request_bytes, 200);
    // The request reached the server only when resent: it thought 2 ms, not 302.
    assert_eq!(
        transactions[0].request_end_ns - transactions[0].request_start_ns,
        300_000_000
    );
    assert_eq!(transactions[0].server_think_ms, Some(2.0));
}

#[test]
fn a_lost_request_waits_for_its_timer_and_the_ledger_covers_the_connection_from_its_syn() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    let seq = conn.send(&mut trace, Side::Client, 10.0, 100);
    conn.send_at(&mut trace, Side::Client, 310.0, seq, 100);
    conn.send(&mut trace, Side::Server, 331.0, 50);
    conn.send(&mut trace, Side::Client, 341.0, 100);
    let transactions = transactions_of(&trace);
    let ledger = transactions[0].ledger;
    // The lone request segment was the last one sent: only its timer could resend it.
    assert_eq!(ledger.get(Part::TailLoss), 300.0);
    // Its answer came 21 ms after the resend: 1 ms to the server and back, 20 ms inside it.
    assert_eq!(ledger.get(Part::Server), 20.0);
    assert_eq!(ledger.get(Part::ClientStart), 8.0);
    assert_eq!(ledger.get(Part::Propagation), 3.0);
    // From the SYN to the answer, every millisecond once.
    assert_eq!(ledger.total_ms(), 331.0);
    // The answer took half a millisecond to reach the client and the next
    // request as long to come back: 9 ms of thought, 1 ms of path.
    assert_eq!(transactions[1].ledger.get(Part::ClientThink), 9.0);
    assert_eq!(transactions[1].ledger.get(Part::Propagation), 1.0);
}

#[test]
fn statistics_per_signature_give_percentiles() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    for i in 0..10 {
        let start = 10.0 + f64::from(i) * 100.0;
        conn.send(&mut trace, Side::Client, start, 40);
        conn.send(&mut trace, Side::Server, start + f64::from(i + 1), 900);
    }
    let stats = by_signature(&transactions_of(&trace));
    assert_eq!(stats.len(), 1);
    let row = &stats[0];
    assert_eq!(
        (row.signature.as_str(), row.durations.count),
        ("blk[40]-blk[900]", 10)
    );
    let d = &row.durations;
    assert_eq!((d.min_ms, d.max_ms, d.mean_ms), (1.0, 10.0, 5.5));
    assert_eq!((d.p50_ms, d.p90_ms), (6.0, 9.0));
}

/// Three quick turns, then a request whose first copies (`unseen` packets
/// of the client's) were lost before the capture point, beside the server;
/// the copy seen left `at_ms`.
fn fourth_request_seen_late(unseen: u16, at_ms: f64) -> Vec<Transaction> {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    for turn in 0..3 {
        let at = 10.0 + 10.0 * f64::from(turn);
        conn.send(&mut trace, Side::Client, at, 100);
        conn.send(&mut trace, Side::Server, at + 1.0, 50);
        conn.ack(&mut trace, Side::Client, at + 2.0);
    }
    conn.lose_packets(Side::Client, unseen);
    conn.send(&mut trace, Side::Client, at_ms, 100);
    conn.send(&mut trace, Side::Server, at_ms + 1.0, 50);
    transactions_of(&trace)
}

#[test]
fn a_request_lost_before_the_capture_point_waits_for_the_timer_after_the_usual_think() {
    let transactions = fourth_request_seen_late(2, 640.0);
    let usual = transactions[2].ledger.get(Part::ClientThink);
    let late = transactions[3].ledger;
    assert!(usual > 0.0);
    assert_eq!(late.get(Part::ClientThink), usual);
    assert!(late.get(Part::TailLoss) >= 590.0, "{late:?}");
}

#[test]
fn a_pause_longer_than_the_timer_could_take_is_the_clients_own() {
    let transactions = fourth_request_seen_late(1, 10_000.0);
    let late = transactions[3].ledger;
    assert_eq!(late.get(Part::TailLoss), 0.0);
    assert!(late.get(Part::ClientThink) > 9_900.0, "{late:?}");
}

/// A request at 10 ms over a 2 ms path, answered at 13 ms by a first
/// piece that the client acknowledges at once.
fn after_a_first_piece() -> (Trace, Conversation) {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    conn.send(&mut trace, Side::Client, 10.0, 100);
    conn.send(&mut trace, Side::Server, 13.0, 50);
    conn.ack(&mut trace, Side::Client, 13.1);
    (trace, conn)
}

/// That answer's second piece 300 ms after the first, acknowledged at once.
fn after_two_pieces() -> (Trace, Conversation) {
    let (mut trace, mut conn) = after_a_first_piece();
    conn.send(&mut trace, Side::Server, 313.0, 50);
    conn.ack(&mut trace, Side::Client, 313.1);
    (trace, conn)
}

/// The answer in two pieces, then the client's next move at `next_ms`:
/// its next request, or its FIN.
fn answer_in_two_pieces(next_ms: f64, fin: bool) -> Vec<Transaction> {
    let (mut trace, mut conn) = after_two_pieces();
    if fin {
        conn.fin(&mut trace, Side::Client, next_ms);
    } else {
        conn.send(&mut trace, Side::Client, next_ms, 100);
    }
    transactions_of(&trace)
}

#[test]
fn a_pause_in_an_answer_the_client_waited_for_is_the_servers() {
    for fin in [false, true] {
        let first = &answer_in_two_pieces(315.0, fin)[0];
        assert_eq!(first.ledger.get(Part::ServerPause), 300.0, "{first:?}");
        assert_eq!(first.ledger.get(Part::ClientThink), 0.0, "{first:?}");
    }
}

#[test]
fn a_pause_before_the_body_of_an_answer_is_the_servers_time_to_make_it() {
    // A small first piece at once (a header, or what a TLS or HTTP/2
    // library sends by itself), then, 300 ms later, more than it in more
    // than one segment: the server was still making its answer.
    let (mut trace, mut conn) = after_a_first_piece();
    for at_ms in [313.0, 313.1, 313.2] {
        conn.send(&mut trace, Side::Server, at_ms, 1448);
    }
    conn.ack(&mut trace, Side::Client, 313.3);
    conn.send(&mut trace, Side::Client, 315.0, 100);
    let body_after_pause = &transactions_of(&trace)[0];
    let piece_after_pause = &answer_in_two_pieces(315.0, false)[0];
    let server = |t: &Transaction| t.ledger.get(Part::Server);
    assert_eq!(
        body_after_pause.ledger.get(Part::ServerPause),
        0.0,
        "{body_after_pause:?}"
    );
    assert_eq!(
        server(body_after_pause),
        server(piece_after_pause) + 300.0,
        "{body_after_pause:?}"
    );
}

#[test]
fn a_pause_no_one_was_shown_to_wait_through_is_the_servers_own_pace() {
    // The client moved on long after the last piece, and nothing frames the
    // answer: it may have had all it wanted before the pause.
    let first = &answer_in_two_pieces(5_000.0, false)[0];
    assert_eq!(first.ledger.get(Part::ServerPause), 0.0, "{first:?}");
    assert!(first.ledger.get(Part::ServerIdle) >= 300.0, "{first:?}");
    // The client closed during the pause: it was not waiting for the rest.
    let (mut trace, mut conn) = after_a_first_piece();
    conn.fin(&mut trace, Side::Client, 200.0);
    conn.send(&mut trace, Side::Server, 202.0, 24);
    let closed_early = &transactions_of(&trace)[0];
    assert_eq!(closed_early.ledger.get(Part::ServerPause), 0.0);
    assert!(
        closed_early.ledger.get(Part::ServerIdle) > 180.0,
        "{closed_early:?}"
    );
    // The server gave up on an idle client: its last words, then its FIN
    // at once; the client never answered the close.
    let (mut trace, mut conn) = after_a_first_piece();
    conn.send(&mut trace, Side::Server, 60_013.0, 44);
    conn.fin(&mut trace, Side::Server, 60_013.1);
    conn.ack(&mut trace, Side::Client, 60_013.2);
    let timed_out = &transactions_of(&trace)[0];
    assert_eq!(
        timed_out.ledger.get(Part::ServerPause),
        0.0,
        "{timed_out:?}"
    );
}

#[test]
fn a_pause_before_a_client_that_never_moves_is_the_servers_own_pace() {
    // A last answer in two pieces, the connection left open: nothing shows
    // that the client waited for the second.
    let (trace, _) = after_two_pieces();
    let last = &transactions_of(&trace)[0];
    assert_eq!(last.ledger.get(Part::ServerPause), 0.0, "{last:?}");
    assert!(last.ledger.get(Part::ServerIdle) >= 300.0, "{last:?}");
}

/// An HTTP exchange on port 80: a GET at 10 ms over a 2 ms path, answered
/// at 13 ms by a head stating a body of `body_bytes` and `first_bytes` of
/// it, then the rest 300 ms later; the client's next request comes 5 s on.
fn http_answer_in_two_pieces(body_bytes: usize, first_bytes: usize) -> Transaction {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 2.0);
    conn.send_bytes(
        &mut trace,
        Side::Client,
        10.0,
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    let mut first = format!("HTTP/1.1 200 OK\r\nContent-Length: {body_bytes}\r\n\r\n").into_bytes();
    first.extend(vec![b'x'; first_bytes]);
    conn.send_bytes(&mut trace, Side::Server, 13.0, &first);
    conn.ack(&mut trace, Side::Client, 13.1);
    conn.send_bytes(&mut trace, Side::Server, 313.0, &[b'y'; 50]);
    conn.ack(&mut trace, Side::Client, 313.1);
    conn.send_bytes(
        &mut trace,
        Side::Client,
        5_313.0,
        b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    transactions_of(&trace).remove(0)
}

#[test]
fn a_pause_inside_an_http_body_is_a_wait_however_late_the_client_moves_on() {
    let waited = http_answer_in_two_pieces(100, 50);
    assert_eq!(waited.ledger.get(Part::ServerPause), 300.0, "{waited:?}");
    assert_eq!(waited.ledger.get(Part::ServerIdle), 0.0, "{waited:?}");
}

#[test]
fn a_pause_after_a_complete_http_answer_is_the_servers_own_pace() {
    // The body was whole before the pause: what came after it was unasked.
    let idle = http_answer_in_two_pieces(50, 50);
    assert_eq!(idle.ledger.get(Part::ServerPause), 0.0, "{idle:?}");
    assert_eq!(idle.ledger.get(Part::ServerIdle), 300.0, "{idle:?}");
}

#[test]
fn a_pause_in_a_request_is_a_wait_only_inside_a_message_its_protocol_frames() {
    // The request's second piece 300 ms after the first; the server
    // answers at once.
    let request_in_two_pieces = |first: &[u8], second: &[u8]| {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
        conn.handshake(&mut trace, 0.0, 2.0);
        conn.send_bytes(&mut trace, Side::Client, 10.0, first);
        conn.ack(&mut trace, Side::Server, 10.1);
        conn.send_bytes(&mut trace, Side::Client, 310.0, second);
        conn.ack(&mut trace, Side::Server, 310.1);
        conn.send(&mut trace, Side::Server, 313.0, 50);
        transactions_of(&trace)[0].ledger
    };
    let post = b"POST / HTTP/1.1\r\nContent-Length: 8\r\n\r\nabcd";
    let unfinished = request_in_two_pieces(post, b"efgh");
    assert_eq!(unfinished.get(Part::ClientPause), 300.0, "{unfinished:?}");
    // Bytes no protocol frames: the client's own pace.
    let opaque = request_in_two_pieces(&[0; 100], &[0; 100]);
    assert_eq!(opaque.get(Part::ClientPause), 0.0, "{opaque:?}");
    assert_eq!(opaque.get(Part::ClientIdle), 300.0, "{opaque:?}");
}

#[test]
fn only_an_ack_after_the_servers_syn_ack_completes_the_handshake() {
    // A SYN never answered, then 10 s later the client's ACK and request:
    // no handshake round trip crossed the path.
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.syn(&mut trace, Side::Client, 0.0, Vec::new());
    conn.ack(&mut trace, Side::Client, 10_000.0);
    conn.send(&mut trace, Side::Client, 10_001.0, 100);
    conn.send(&mut trace, Side::Server, 10_002.0, 100);
    let unanswered = &transactions_of(&trace)[0];
    assert_eq!(
        unanswered.ledger.get(Part::Propagation),
        0.0,
        "{unanswered:?}"
    );
    // Answered, the client's ACK completes it after a round trip.
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 20.0);
    conn.send(&mut trace, Side::Client, 21.0, 100);
    conn.send(&mut trace, Side::Server, 42.0, 100);
    let answered = &transactions_of(&trace)[0];
    assert!(
        answered.ledger.get(Part::Propagation) >= 20.0,
        "{answered:?}"
    );
}

#[test]
fn keep_alive_probes_carry_no_request_nor_answer() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:445");
    conn.handshake(&mut trace, 0.0, 2.0);
    let request = conn.send(&mut trace, Side::Client, 10.0, 100);
    let answer = conn.send(&mut trace, Side::Server, 12.0, 50);
    conn.ack(&mut trace, Side::Client, 13.0);
    // Each side's probe repeats the last byte it sent, one byte below what
    // the peer acknowledged.
    conn.send_at(&mut trace, Side::Client, 30_013.0, request + 99, 1);
    conn.send_at(&mut trace, Side::Server, 60_013.0, answer + 49, 1);
    let transactions = transactions_of(&trace);
    assert_eq!(transactions.len(), 1, "{transactions:#?}");
    assert_eq!(transactions[0].request_bytes, 100);
    assert_eq!(transactions[0].response_bytes, 50);
    assert_eq!(transactions[0].server_think_ms, Some(2.0));
}

#[test]
fn no_one_waits_for_the_resend_of_an_answer_to_a_goodbye() {
    // TLS on port 443: a hello each way, then, a second on, the client's
    // close_notify alert and FIN. The server's own alert is lost before the
    // capture point and resent by its timer three seconds later.
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:443");
    conn.handshake(&mut trace, 0.0, 2.0);
    conn.send_bytes(
        &mut trace,
        Side::Client,
        10.0,
        &[22, 3, 1, 0, 4, 1, 0, 0, 0],
    );
    conn.send_bytes(
        &mut trace,
        Side::Server,
        13.0,
        &[22, 3, 3, 0, 4, 2, 0, 0, 0],
    );
    conn.ack(&mut trace, Side::Client, 13.1);
    conn.send_bytes(&mut trace, Side::Client, 1_000.0, &[21, 3, 3, 0, 2, 1, 0]);
    conn.fin(&mut trace, Side::Client, 1_000.1);
    let lost = conn.lose(Side::Server, 7);
    conn.ack(&mut trace, Side::Server, 1_002.0);
    conn.send_at(&mut trace, Side::Server, 4_002.0, lost, 7);
    conn.ack(&mut trace, Side::Client, 4_003.0);
    let transactions = transactions_of(&trace);
    let goodbye = transactions.last().unwrap();
    assert_eq!(goodbye.retransmissions, 1, "{goodbye:?}");
    for loss in [
        Part::RetransmissionTimeout,
        Part::TailLoss,
        Part::LossRecovery,
    ] {
        assert_eq!(goodbye.ledger.get(loss), 0.0, "{goodbye:?}");
    }
    assert!(
        goodbye.ledger.get(Part::ServerIdle) >= 3_000.0,
        "{goodbye:?}"
    );
}

/// The server answers in twelve segments, two per 20 ms round trip, and
/// the capture misses the middle ten: the client's ACKs of them show the
/// server sending all along. The time up to each ACK went to the transfer,
/// and no pause is read into the packets the capture missed.
#[test]
fn an_answer_whose_middle_the_capture_missed_was_sent_without_a_pause() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:9000");
    conn.handshake(&mut trace, 0.0, 20.0);
    conn.send(&mut trace, Side::Client, 21.0, 100);
    conn.send(&mut trace, Side::Server, 31.0, 1448);
    for pair in 0..5 {
        let at = 41.0 + 20.0 * f64::from(pair);
        conn.lose(Side::Server, 1448);
        conn.lose(Side::Server, 1448);
        conn.ack(&mut trace, Side::Client, at);
    }
    conn.send(&mut trace, Side::Server, 131.0, 500);
    conn.ack(&mut trace, Side::Client, 132.0);
    let transactions = transactions_of(&trace);
    assert_eq!(transactions.len(), 1);
    let ledger = &transactions[0].ledger;
    assert_eq!(ledger.get(Part::ServerPause), 0.0, "{ledger:?}");
    assert_eq!(ledger.get(Part::ServerIdle), 0.0, "{ledger:?}");
    assert!(ledger.get(Part::Transfer) >= 90.0, "{ledger:?}");
}

/// A client on `port` writes a 2-byte DNS length, then holds the 33-byte
/// query it announces until the server's delayed ACK (200 ms later) comes:
/// the connection's longest Nagle stretch.
fn query_held_by_nagle(port: u16) -> transactions::Stretch {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", &format!("10.0.0.2:{port}"));
    conn.handshake(&mut trace, 0.0, 2.0);
    conn.send_bytes(&mut trace, Side::Client, 10.0, &[0, 33]);
    conn.ack(&mut trace, Side::Server, 211.0);
    conn.send_bytes(&mut trace, Side::Client, 213.1, &[7; 33]);
    conn.send(&mut trace, Side::Server, 220.0, 200);
    let mut tracker = Tracker::new();
    let mut builder = Builder::new();
    for frame in trace.captured_frames() {
        let segment = decode::decode(&frame).unwrap();
        let view = tracker.process(&segment).unwrap();
        builder.observe(&view, segment.payload(frame.data), port);
    }
    let (_, ledgers) = builder.finish();
    let nagle = ledgers[0]
        .stretches
        .iter()
        .find(|(part, ..)| *part == Part::Nagle);
    nagle.expect("a Nagle hold").2
}

#[test]
fn a_hold_inside_a_message_its_length_announced_is_marked_so() {
    let held = query_held_by_nagle(53);
    assert!(held.inside_message, "{held:?}");
    assert!(held.ack_frame.is_some(), "{held:?}");
}

#[test]
fn a_hold_in_a_protocol_whose_lengths_are_not_read_is_not() {
    let held = query_held_by_nagle(40_001);
    assert!(!held.inside_message, "{held:?}");
}

/// A client streams `segments` segments; the server resets the connection
/// with an ACK of all it has; the client's next segments, already on their
/// way, come after it.
fn stream_reset(still_coming: u32) -> Vec<Transaction> {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:5201");
    conn.handshake(&mut trace, 0.0, 2.0);
    for segment in 0..20 {
        conn.send(
            &mut trace,
            Side::Client,
            10.0 + f64::from(segment) * 0.1,
            1448,
        );
    }
    conn.rst(&mut trace, Side::Server, 13.0);
    for segment in 0..still_coming {
        conn.send(
            &mut trace,
            Side::Client,
            13.1 + f64::from(segment) * 0.1,
            1448,
        );
    }
    transactions_of(&trace)
}

#[test]
fn a_reset_answering_a_request_fails_it() {
    let transactions = stream_reset(0);
    let failure = transactions[0]
        .failure
        .expect("the reset fails the request");
    assert_eq!(failure.kind, transactions::FailureKind::ServerReset);
}

#[test]
fn a_reset_cutting_off_a_stream_still_coming_refuses_no_question() {
    let transactions = stream_reset(3);
    assert_eq!(transactions.len(), 1, "{transactions:?}");
    assert_eq!(transactions[0].failure, None, "{:?}", transactions[0]);
}

/// Opening lines both ways, then a message of the client's answered 2 s
/// later, the client going on at once: the second transaction. With
/// `ssh`, the opening lines are SSH's identification strings, after which
/// either side may speak unprompted.
fn answered_two_seconds_later(ssh: bool) -> Transaction {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:2222");
    conn.handshake(&mut trace, 0.0, 10.0);
    let (client, server): (&[u8], &[u8]) = if ssh {
        (b"SSH-2.0-OpenSSH_9.6\r\n", b"SSH-2.0-OpenSSH_9.2\r\n")
    } else {
        (b"HELLO client 2.0\r\n", b"HELLO server 2.0\r\n")
    };
    conn.send_bytes(&mut trace, Side::Client, 11.0, client);
    conn.send_bytes(&mut trace, Side::Server, 16.0, server);
    conn.send(&mut trace, Side::Client, 17.0, 48);
    conn.send(&mut trace, Side::Server, 2_017.0, 48);
    conn.send(&mut trace, Side::Client, 2_018.0, 48);
    transactions_of(&trace).swap_remove(1)
}

#[test]
fn in_a_conversation_an_answer_nothing_framed_as_asked_for_is_the_servers_own_pace() {
    // Either side of SSH speaks unprompted: the client going on at once
    // does not show that its message asked for what came 2 s later.
    let ssh = answered_two_seconds_later(true);
    assert_eq!(ssh.ledger.get(Part::Server), 0.0, "{ssh:?}");
    assert!(ssh.ledger.get(Part::ServerIdle) >= 1_990.0, "{ssh:?}");
    // In request and response, it does: the client waited for the answer.
    let asked = answered_two_seconds_later(false);
    assert!(asked.ledger.get(Part::Server) >= 1_990.0, "{asked:?}");
}
