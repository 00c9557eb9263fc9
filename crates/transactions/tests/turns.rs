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
        builder.observe(&view, segment.payload(frame.data));
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
    assert_eq!(first.request_transfer_ms, 1.0);
    assert_eq!(first.server_think_ms, Some(50.0));
    assert_eq!(first.response_transfer_ms, Some(2.0));
    assert_eq!(first.client_think_ms, Some(37.0));
    assert_eq!(first.duration_ms, 53.0);
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
fn a_pause_no_one_waited_for_is_the_exchange_standing_idle() {
    // The client moved on long after the last piece: it had the answer it
    // waited for before the pause, and the rest came unasked.
    let first = &answer_in_two_pieces(5_000.0, false)[0];
    assert_eq!(first.ledger.get(Part::ServerPause), 0.0, "{first:?}");
    assert_eq!(first.ledger.get(Part::ClientThink), 300.0, "{first:?}");
    // The client closed during the pause: it was not waiting for the rest.
    let (mut trace, mut conn) = after_a_first_piece();
    conn.fin(&mut trace, Side::Client, 200.0);
    conn.send(&mut trace, Side::Server, 202.0, 24);
    let closed_early = &transactions_of(&trace)[0];
    assert_eq!(closed_early.ledger.get(Part::ServerPause), 0.0);
    assert!(
        closed_early.ledger.get(Part::ClientThink) > 180.0,
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
fn a_pause_before_a_peer_that_never_moves_stays_the_senders() {
    // A last answer in two pieces, the connection left open: a client with
    // nothing more to ask looks the same whether it waited or not.
    let (trace, _) = after_two_pieces();
    let last = &transactions_of(&trace)[0];
    assert_eq!(last.ledger.get(Part::ServerPause), 300.0, "{last:?}");
}

#[test]
fn a_pause_in_a_request_is_the_clients_application_only_when_the_server_waited_for_it() {
    // The server answers `answer_ms` after the request's second piece.
    let request_in_two_pieces = |answer_ms: f64| {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
        conn.handshake(&mut trace, 0.0, 2.0);
        conn.send(&mut trace, Side::Client, 10.0, 100);
        conn.ack(&mut trace, Side::Server, 10.1);
        conn.send(&mut trace, Side::Client, 310.0, 100);
        conn.ack(&mut trace, Side::Server, 310.1);
        conn.send(&mut trace, Side::Server, 310.0 + answer_ms, 50);
        transactions_of(&trace)[0].ledger
    };
    assert_eq!(request_in_two_pieces(3.0).get(Part::ClientPause), 300.0);
    // An answer long after: the server was not waiting for the rest either.
    let answered_late = request_in_two_pieces(5_000.0);
    assert_eq!(answered_late.get(Part::ClientPause), 0.0);
    assert_eq!(answered_late.get(Part::ClientThink), 300.0);
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
