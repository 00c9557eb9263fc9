//! The tracker on scripted exchanges whose right answer is known by construction.

use synth::{Conversation, Side, Trace};
use tcp::{ConnState, ConnectionSummary, Event, EventKind, Role, Tracker};

fn run(trace: &Trace) -> (Vec<ConnectionSummary>, Vec<Event>) {
    let mut tracker = Tracker::new();
    let mut events = Vec::new();
    for frame in trace.captured_frames() {
        tracker.process(&decode::decode(&frame).expect("scripted frames are TCP"));
        events.extend(tracker.drain_events());
    }
    (tracker.finish(), events)
}

/// What released the trace's last segment, when it followed a wait.
fn last_release(trace: &Trace) -> Option<tcp::Release> {
    let mut tracker = Tracker::new();
    let mut last = None;
    for frame in trace.captured_frames() {
        last = tracker.process(&decode::decode(&frame).expect("scripted frames are TCP"));
    }
    last.and_then(|view| view.wait).map(|wait| wait.ended_by)
}

fn kinds_at(events: &[Event], frame: u64) -> Vec<EventKind> {
    events
        .iter()
        .filter(|e| e.frame == frame)
        .map(|e| e.kind)
        .collect()
}

#[test]
fn a_clean_exchange_is_sf_with_handshake_rtts_and_no_events() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Client, 11.0, 100);
    conn.ack(&mut trace, Side::Server, 16.0);
    conn.send(&mut trace, Side::Server, 30.0, 1000);
    conn.ack(&mut trace, Side::Client, 35.0);
    conn.fin(&mut trace, Side::Client, 40.0);
    conn.fin(&mut trace, Side::Server, 41.0);
    conn.ack(&mut trace, Side::Client, 42.0);
    let (connections, events) = run(&trace);
    assert_eq!(events, vec![]);
    let c = &connections[0];
    assert_eq!((c.state, c.history.as_str()), (ConnState::SF, "ShADadFf"));
    assert_eq!(c.client.to_string(), "10.0.0.1:40000");
    assert_eq!(c.handshake.rtt_to_server_ms, Some(5.0));
    assert_eq!(c.handshake.rtt_to_client_ms, Some(5.0));
    assert_eq!(c.close.by, Some(Role::Client));
    assert_eq!(c.client_to_server.payload_bytes, 100);
    assert_eq!(c.server_to_client.rtt.median_ms, Some(5.0));
    assert_eq!(c.client_to_server.rtt.median_ms, Some(5.0));
    // Window scale 7 from both SYNs: 64000 << 7.
    assert_eq!(c.server_to_client.window.max, 64_000 << 7);
}

#[test]
fn a_gap_then_dup_acks_then_the_resend_are_lost_dup_and_fast_retransmission() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Server, 20.0, 1000); // frame 4
    let lost = conn.lose(Side::Server, 1000);
    conn.send(&mut trace, Side::Server, 20.1, 1000); // 5: previous segment not captured
    let acked = conn.next_seq(Side::Server);
    conn.ack_with_sack(
        &mut trace,
        Side::Client,
        25.0,
        lost,
        &[(lost + 1000, acked)],
    ); // 6
    conn.send(&mut trace, Side::Server, 25.1, 1000); // 7
    conn.ack_with_sack(
        &mut trace,
        Side::Client,
        30.0,
        lost,
        &[(lost + 1000, acked + 1000)],
    ); // 8: dup 1
    conn.ack_with_sack(
        &mut trace,
        Side::Client,
        30.1,
        lost,
        &[(lost + 1000, acked + 1000)],
    ); // 9: dup 2
    conn.send_at(&mut trace, Side::Server, 31.0, lost, 1000); // 10: fast retransmission
    let (connections, events) = run(&trace);
    assert_eq!(kinds_at(&events, 5), vec![EventKind::LostSegment]);
    assert_eq!(kinds_at(&events, 8), vec![EventKind::DuplicateAck]);
    assert_eq!(kinds_at(&events, 9), vec![EventKind::DuplicateAck]);
    assert_eq!(kinds_at(&events, 10), vec![EventKind::FastRetransmission]);
    let s2c = &connections[0].server_to_client;
    assert_eq!((s2c.lost_segments, s2c.retransmissions.fast), (1, 1));
    assert_eq!(s2c.retransmissions.after_duplicate_acks, 1);
    assert_eq!(connections[0].client_to_server.duplicate_acks, 2);
    assert_eq!(connections[0].client_to_server.sack_acks, 3);
}

/// At the sender: segments of 1000 bytes from `first`, the receiver's ACKs
/// selectively acknowledging all but the second, and the second resent at
/// once behind new data, well within the handshake's 10 ms round trip.
fn resend_right_behind_new_data(captured_at_sender: bool) -> (Vec<ConnectionSummary>, Vec<Event>) {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Server, 20.0, 1000); // 4
    let second = conn.next_seq(Side::Server);
    if captured_at_sender {
        conn.send(&mut trace, Side::Server, 20.1, 1000);
    } else {
        conn.lose(Side::Server, 1000);
    }
    conn.send(&mut trace, Side::Server, 20.2, 1000);
    let sacked = conn.next_seq(Side::Server);
    conn.ack_with_sack(
        &mut trace,
        Side::Client,
        25.2,
        second,
        &[(second + 1000, sacked)],
    );
    conn.send(&mut trace, Side::Server, 25.3, 1000);
    conn.send_at(&mut trace, Side::Server, 25.4, second, 1000); // the resend, last
    run(&trace)
}

#[test]
fn bytes_the_capture_saw_before_sent_again_behind_new_data_are_a_retransmission() {
    let (connections, events) = resend_right_behind_new_data(true);
    let resend = events.iter().map(|e| e.frame).max().unwrap();
    assert_eq!(
        kinds_at(&events, resend),
        vec![EventKind::FastRetransmission]
    );
    let s2c = &connections[0].server_to_client;
    assert_eq!((s2c.out_of_order, s2c.lost_after_capture), (0, 1));

    let (connections, events) = resend_right_behind_new_data(false);
    let filled = events.iter().map(|e| e.frame).max().unwrap();
    assert_eq!(kinds_at(&events, filled), vec![EventKind::OutOfOrder]);
    let s2c = &connections[0].server_to_client;
    assert_eq!((s2c.out_of_order, s2c.lost_before_capture), (1, 1));
}

#[test]
fn a_late_resend_is_a_retransmission_and_an_acked_one_is_spurious() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    let first = conn.send(&mut trace, Side::Client, 20.0, 500); // 4
    conn.send_at(&mut trace, Side::Client, 240.0, first, 500); // 5: RTO
    conn.ack(&mut trace, Side::Server, 250.0); // 6
    conn.send_at(&mut trace, Side::Client, 500.0, first, 500); // 7: already acked
    let (connections, events) = run(&trace);
    assert_eq!(kinds_at(&events, 5), vec![EventKind::Retransmission]);
    assert_eq!(
        kinds_at(&events, 7),
        vec![EventKind::SpuriousRetransmission]
    );
    let retransmissions = connections[0].client_to_server.retransmissions;
    assert_eq!(
        (
            retransmissions.total,
            retransmissions.timeout,
            retransmissions.spurious
        ),
        (2, 1, 1)
    );
    assert_eq!(connections[0].history, "ShADTa");
}

#[test]
fn zero_window_probe_and_its_ack_and_the_window_update() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Client, 20.0, 1000); // 4
    conn.set_window(Side::Server, 0);
    conn.ack(&mut trace, Side::Server, 25.0); // 5: zero window
    conn.send(&mut trace, Side::Client, 300.0, 1); // 6: probe
    conn.lose(Side::Client, 0);
    let mut probe_ack = conn.packet(Side::Server, synth::Packet::ACK);
    probe_ack.ack = conn.next_seq(Side::Client) - 1;
    trace.push(305.0, &probe_ack); // 7: probe ACK, still zero
    conn.set_window(Side::Server, 500);
    let mut update = conn.packet(Side::Server, synth::Packet::ACK);
    update.ack = conn.next_seq(Side::Client) - 1;
    trace.push(400.0, &update); // 8: window update
    let (connections, events) = run(&trace);
    assert_eq!(kinds_at(&events, 5), vec![EventKind::ZeroWindow]);
    assert_eq!(kinds_at(&events, 6), vec![EventKind::ZeroWindowProbe]);
    assert_eq!(
        kinds_at(&events, 7),
        vec![EventKind::ZeroWindow, EventKind::ZeroWindowProbeAck]
    );
    assert_eq!(kinds_at(&events, 8), vec![EventKind::WindowUpdate]);
    assert_eq!(connections[0].server_to_client.zero_windows, 2);
}

#[test]
fn one_syn_repeated_past_what_any_stack_tries_is_counted_but_timed_only_so_far() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    let repeats = tcp::stack::MAX_SYN_RETRIES + 73;
    for repeat in 0..=repeats {
        conn.set_seq(Side::Client, 1000);
        conn.syn(&mut trace, Side::Client, repeat as f64, vec![]);
    }
    let (connections, _) = run(&trace);
    let handshake = &connections[0].handshake;
    assert_eq!(handshake.syn_retries, repeats as u64);
    assert_eq!(handshake.syn_retries_ns.len(), tcp::stack::MAX_SYN_RETRIES);
    let first_untimed_ms = (tcp::stack::MAX_SYN_RETRIES + 1) as i64;
    let last_timed = handshake.syn_retries_ns.last().unwrap();
    assert!((last_timed - connections[0].first_ns) / 1_000_000 < first_untimed_ms);
}

#[test]
fn syn_retries_are_timed_and_an_unanswered_connection_is_s0() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.syn(&mut trace, Side::Client, 0.0, vec![]);
    for at in [1000.0, 3000.0, 7000.0] {
        conn.set_seq(Side::Client, 1000);
        conn.syn(&mut trace, Side::Client, at, vec![]);
    }
    let (connections, events) = run(&trace);
    assert_eq!(connections.len(), 1);
    let c = &connections[0];
    assert_eq!(c.state, ConnState::S0);
    let retries: Vec<i64> = c
        .handshake
        .syn_retries_ns
        .iter()
        .map(|t| (t - c.first_ns) / 1_000_000)
        .collect();
    assert_eq!(retries, vec![1000, 3000, 7000]);
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::SynRetransmission)
            .count(),
        3
    );
    assert!(
        events.iter().all(|e| e.kind != EventKind::Retransmission),
        "a SYN sent again is one event, not also a retransmission"
    );
}

#[test]
fn a_new_syn_after_close_is_a_new_connection_on_the_same_ports() {
    let mut trace = Trace::ethernet();
    let mut first = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    first.handshake(&mut trace, 0.0, 1.0);
    first.rst(&mut trace, Side::Client, 5.0);
    let mut second = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    second.set_seq(Side::Client, 900_000);
    second.handshake(&mut trace, 10.0, 1.0);
    let (connections, events) = run(&trace);
    assert_eq!(connections.len(), 2);
    assert_eq!(connections[0].state, ConnState::RSTO);
    assert_eq!(connections[1].first_frame, 5);
    assert_eq!(kinds_at(&events, 5), vec![EventKind::ReusedPorts]);
}

#[test]
fn midstream_one_direction_across_the_sequence_wrap_guesses_roles() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:443");
    conn.set_seq(Side::Server, u32::MAX - 1500);
    for i in 0..4 {
        conn.send(&mut trace, Side::Server, f64::from(i), 1000);
    }
    let (connections, events) = run(&trace);
    assert_eq!(events, vec![]);
    let c = &connections[0];
    assert!(c.roles_guessed);
    assert_eq!(
        (c.state, c.server.to_string().as_str()),
        (ConnState::OTH, "10.0.0.2:443")
    );
    assert_eq!(c.server_to_client.unique_payload_bytes, 4000);
}

#[test]
fn timestamps_that_go_backwards_do_not_break_durations() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 100.0, 10.0);
    conn.send(&mut trace, Side::Client, 50.0, 10);
    let (connections, _) = run(&trace);
    assert!(connections[0].duration_ms >= 0.0);
    // The SYN-to-ACK gap counts; the jump back in time does not.
    assert_eq!(connections[0].client_to_server.max_idle_ms, 10.0);
}

#[test]
fn a_window_update_does_not_end_a_run_of_duplicate_acks() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Client, 20.0, 1000); // 4
    let lost = conn.lose(Side::Client, 1000);
    conn.send(&mut trace, Side::Client, 20.1, 1000); // 5
    conn.send(&mut trace, Side::Client, 20.2, 1000); // 6
    let mut dup = conn.packet(Side::Server, synth::Packet::ACK);
    dup.ack = lost;
    // Each ACK numbered anew by its sender, as a stack does.
    let mut push = |at_ms, dup: &mut synth::Packet| {
        trace.push(at_ms, dup);
        dup.ip_id += 1;
    };
    push(25.0, &mut dup); // 7: new ACK
    push(25.1, &mut dup); // 8: dup 1
    push(25.2, &mut dup); // 9: dup 2
    dup.window += 100;
    push(25.3, &mut dup); // 10: window update
    push(25.4, &mut dup); // 11: dup 3, at the new window
    conn.send_at(&mut trace, Side::Client, 25.5, lost, 1000); // 12
    let (_, events) = run(&trace);
    assert_eq!(kinds_at(&events, 10), vec![EventKind::WindowUpdate]);
    let dup_numbers: Vec<u64> = events
        .iter()
        .filter(|e| e.kind == EventKind::DuplicateAck)
        .map(|e| e.value)
        .collect();
    assert_eq!(dup_numbers, vec![1, 2, 3]);
    assert_eq!(kinds_at(&events, 12), vec![EventKind::FastRetransmission]);
}

#[test]
fn zero_window_time_runs_from_the_first_zero_to_the_reopened_window() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Client, 20.0, 1000);
    conn.set_window(Side::Server, 0);
    conn.ack(&mut trace, Side::Server, 25.0);
    conn.ack(&mut trace, Side::Server, 125.0);
    conn.set_window(Side::Server, 500);
    conn.ack(&mut trace, Side::Server, 325.0);
    conn.set_window(Side::Server, 0);
    conn.ack(&mut trace, Side::Server, 400.0);
    conn.ack(&mut trace, Side::Client, 450.0);
    let (connections, _) = run(&trace);
    // 300 ms closed, then 50 ms still closed when the capture ends.
    assert_eq!(connections[0].server_to_client.zero_window_ms, 350.0);
}

/// A 4096-byte write as three segments; the server ACKs the first two at
/// once and the third `last_ack_after_ms` later, then the client writes again.
fn write_with_late_last_ack(last_ack_after_ms: f64, late_bytes: &[u32]) -> ConnectionSummary {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:5001");
    conn.handshake(&mut trace, 0.0, 2.0);
    let mut at = 3.0;
    for _ in 0..2 {
        let start = conn.next_seq(Side::Client);
        conn.send(&mut trace, Side::Client, at, 1448);
        conn.send(&mut trace, Side::Client, at, 1448);
        for &len in late_bytes {
            conn.send(&mut trace, Side::Client, at, len);
        }
        conn.ack_with_sack(&mut trace, Side::Server, at + 2.0, start + 2896, &[]);
        conn.ack(&mut trace, Side::Server, at + 2.0 + last_ack_after_ms);
        at += 2.3 + last_ack_after_ms;
    }
    let (connections, _) = run(&trace);
    connections.into_iter().next().unwrap()
}

#[test]
fn a_write_that_waits_for_the_delayed_ack_of_its_odd_segment_is_counted() {
    let c = write_with_late_last_ack(42.0, &[1200]);
    let clock = c.client_to_server.ack_clock;
    // The second write waited; after the last one nothing was sent.
    assert_eq!(clock.delayed_ack_waits, 1);
    assert!((clock.delayed_ack_wait_ms - 44.3).abs() < 0.01, "{clock:?}");
    // Held 25 ms past the round trip: over half Linux's shortest timer, the
    // bound every delayed-ACK judgement here shares.
    let c = write_with_late_last_ack(25.0, &[1200]);
    assert_eq!(c.client_to_server.ack_clock.delayed_ack_waits, 1);
}

/// What released a write that followed, at once, the ACK of the odd last
/// segment of the one before, held `held_ms` past the 2 ms round trip.
fn write_after_the_ack_of_an_odd_segment(held_ms: f64) -> Option<tcp::Release> {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:5001");
    conn.handshake(&mut trace, 0.0, 2.0);
    let start = conn.next_seq(Side::Client);
    for len in [1448, 1448, 1200] {
        conn.send(&mut trace, Side::Client, 3.0, len);
    }
    conn.ack_with_sack(&mut trace, Side::Server, 5.0, start + 2896, &[]);
    conn.ack(&mut trace, Side::Server, 5.0 + held_ms);
    conn.send(&mut trace, Side::Client, 5.05 + held_ms, 1448);
    last_release(&trace)
}

#[test]
fn only_an_ack_held_within_a_delayed_ack_timers_bounds_was_delayed() {
    let ack_delayed = |held_ms| match write_after_the_ack_of_an_odd_segment(held_ms) {
        Some(tcp::Release::Ack {
            lacked: tcp::Lacked::AllAcked { ack_delayed, .. },
            ..
        }) => ack_delayed,
        other => panic!("{other:?}"),
    };
    assert!(ack_delayed(42.0));
    // RFC 1122 bounds a delayed ACK at half a second: this one was held by something else.
    assert!(!ack_delayed(800.0));
}

#[test]
fn a_prompt_ack_or_a_late_ack_of_two_full_segments_is_not_a_delayed_ack_wait() {
    let prompt = write_with_late_last_ack(0.5, &[1200]);
    assert_eq!(prompt.client_to_server.ack_clock.delayed_ack_waits, 0);
    // A receiver that is slow to ACK two full segments is slow, not delaying.
    let slow = write_with_late_last_ack(42.0, &[1448, 1448]);
    assert_eq!(slow.client_to_server.ack_clock.delayed_ack_waits, 0);
}

#[test]
fn evenly_spaced_acks_give_the_bottleneck_rate_with_no_spread() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:5001");
    conn.handshake(&mut trace, 0.0, 2.0);
    for _ in 0..20 {
        conn.send(&mut trace, Side::Client, 3.0, 1000);
    }
    let first = conn.next_seq(Side::Client) - 20_000;
    for i in 1..=20u32 {
        conn.ack_with_sack(
            &mut trace,
            Side::Server,
            5.0 + f64::from(i),
            first + 1000 * i,
            &[],
        );
    }
    let (connections, _) = run(&trace);
    let clock = connections[0].client_to_server.ack_clock;
    // 19 one-millisecond intervals of 1000 bytes each, the last leaving nothing outstanding.
    assert_eq!(clock.samples, 19);
    assert!((clock.bytes_per_s.unwrap() - 1e6).abs() < 1.0, "{clock:?}");
    assert!(clock.spread.unwrap() < 1e-6, "{clock:?}");
}

/// Seen at the client: two turns whose answers came back `answers_after_ms`
/// after each request, then a response in two small pieces. The client
/// acknowledges the first piece `acked_after_ms` after it arrives, and the
/// second arrives 10.5 ms after that ACK, over a path whose least round
/// trip is 5 ms. Returns what released the second piece.
fn second_piece_over_a_path_that_answered_after(
    answers_after_ms: [f64; 2],
    acked_after_ms: f64,
) -> tcp::Release {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 5.0);
    for (turn, after_ms) in answers_after_ms.into_iter().enumerate() {
        let asked_ms = 10.0 + 100.0 * turn as f64;
        conn.send(&mut trace, Side::Client, asked_ms, 100);
        conn.send(&mut trace, Side::Server, asked_ms + after_ms, 300);
    }
    conn.send(&mut trace, Side::Client, 200.0, 100);
    conn.send(&mut trace, Side::Server, 205.5, 300);
    conn.ack(&mut trace, Side::Client, 205.5 + acked_after_ms);
    conn.send(&mut trace, Side::Server, 216.0 + acked_after_ms, 200);
    last_release(&trace).expect("the last piece followed a wait")
}

#[test]
fn a_late_piece_is_released_by_the_ack_when_the_path_has_taken_that_long() {
    let jittery = second_piece_over_a_path_that_answered_after([5.0, 11.0], 40.0);
    assert!(
        matches!(
            jittery,
            tcp::Release::Ack {
                lacked: tcp::Lacked::AllAcked {
                    ack_delayed: true,
                    small_held: true
                },
                ..
            }
        ),
        "{jittery:?}"
    );
    // A path that always answered at once gives no such slack: the server's
    // application wrote the piece itself.
    let steady = second_piece_over_a_path_that_answered_after([5.0, 5.0], 40.0);
    assert_eq!(steady, tcp::Release::Application);
}

#[test]
fn a_piece_a_round_trip_after_a_prompt_ack_gets_no_slack_for_the_path() {
    // A prompt ACK leaves a round trip after the data, when an application
    // pausing about a round trip writes anyway: the timing tells nothing.
    let after_prompt_ack = second_piece_over_a_path_that_answered_after([5.0, 11.0], 0.1);
    assert_eq!(after_prompt_ack, tcp::Release::Application);
}

/// Seen beside the server of an upload, over a path of 15 ms: a client slow
/// to finish its handshake (19 ms), then writes that each wait for the ACK
/// of the last, 15.3 ms after it. Returns what released the third.
fn next_write_after_a_slow_handshake(timestamps: bool) -> tcp::Release {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    if timestamps {
        conn.with_timestamps();
    }
    conn.syn(&mut trace, Side::Client, 0.0, Vec::new());
    conn.syn(&mut trace, Side::Server, 0.05, Vec::new());
    conn.ack(&mut trace, Side::Client, 19.0);
    conn.send(&mut trace, Side::Client, 25.0, 1448);
    conn.send(&mut trace, Side::Client, 25.01, 1448);
    conn.ack(&mut trace, Side::Server, 25.05);
    conn.send(&mut trace, Side::Client, 40.35, 1448);
    conn.ack(&mut trace, Side::Server, 40.4);
    conn.send(&mut trace, Side::Client, 55.7, 1448);
    last_release(&trace).expect("the third write followed a wait")
}

#[test]
fn echoed_timestamps_time_the_path_to_a_sender_that_was_slow_in_its_handshake() {
    // They show that the ACK had reached the client: it released the write.
    let released = next_write_after_a_slow_handshake(true);
    assert!(matches!(released, tcp::Release::Ack { .. }), "{released:?}");
    // Without them, only the handshake times the path, too long by 4 ms:
    // the ACK seems not to have reached the client yet.
    assert_eq!(
        next_write_after_a_slow_handshake(false),
        tcp::Release::Queued
    );
}

#[test]
fn a_tail_lost_before_the_client_is_a_timers_resend_though_its_first_segment_awaits_a_delayed_ack()
{
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 1.5);
    for turn in 0..3 {
        let asked = 10.0 + 10.0 * f64::from(turn);
        conn.send(&mut trace, Side::Client, asked, 111);
        conn.send(&mut trace, Side::Server, asked + 1.5, 1448);
        conn.send(&mut trace, Side::Server, asked + 1.51, 391);
        conn.ack(&mut trace, Side::Client, asked + 1.52);
    }
    conn.send(&mut trace, Side::Client, 40.0, 111);
    conn.send(&mut trace, Side::Server, 41.5, 1448);
    conn.lose_packets(Side::Server, 1);
    conn.send(&mut trace, Side::Server, 50.5, 391);
    assert_eq!(
        last_release(&trace),
        Some(tcp::Release::Timer { tail: true })
    );
}

/// A client whose every exchange was answered and acknowledged sends its
/// next request after two minutes, its IP identification 35 further on:
/// more packets than a sender sends of one segment before giving up, so
/// its host numbered them for others, and the request is new data sent at
/// the client's pace. One number missing over a silence a timer fits is a
/// resend of a copy lost before the capture point.
#[test]
fn a_request_after_an_idle_whose_host_numbered_packets_elsewhere_is_no_resend() {
    let after_missing = |missing: u16, silence_ms: f64| {
        let (mut trace, mut conn) = three_answered_turns();
        conn.lose_packets(Side::Client, missing);
        conn.send(&mut trace, Side::Client, 31.2 + silence_ms, 24);
        last_release(&trace)
    };
    assert_ne!(
        after_missing(35, 120_000.0),
        Some(tcp::Release::Timer { tail: true })
    );
    assert_eq!(
        after_missing(1, 1_000.0),
        Some(tcp::Release::Timer { tail: true })
    );
}

/// A connection whose client asked three times, 10 ms apart, each answered
/// at once and acknowledged.
fn three_answered_turns() -> (Trace, Conversation) {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:20000");
    conn.handshake(&mut trace, 0.0, 0.4);
    for turn in 0..3 {
        let asked = 10.0 + 10.0 * f64::from(turn);
        conn.send(&mut trace, Side::Client, asked, 24);
        conn.send(&mut trace, Side::Server, asked + 1.0, 17);
        conn.ack(&mut trace, Side::Client, asked + 1.2);
    }
    (trace, conn)
}

/// A request a second after packets its host numbered went unseen: from a
/// stack whose packets start with a TTL of 64 (Linux), a copy lost before
/// the capture point that a timer resent; from one that starts at 128
/// (Windows), whose counter every connection shares, a request like any.
#[test]
fn a_step_in_the_numbers_of_a_host_that_shares_its_counter_is_no_resend() {
    let (mut trace, mut conn) = three_answered_turns();
    conn.lose_packets(Side::Client, 1);
    conn.send(&mut trace, Side::Client, 1_031.2, 24);
    let release_with_ttl = |ttl: u8| {
        let mut tracker = Tracker::new();
        let mut last = None;
        for frame in trace.captured_frames() {
            let mut segment = decode::decode(&frame).expect("scripted frames are TCP");
            segment.ttl = ttl;
            last = tracker.process(&segment);
        }
        last.and_then(|view| view.wait).map(|wait| wait.ended_by)
    };
    let resent = Some(tcp::Release::Timer { tail: true });
    assert_eq!(release_with_ttl(64), resent);
    assert_ne!(release_with_ttl(128), resent);
}

/// A server answers, and half a minute later the client says goodbye (its
/// FIN); the server's close message passes the tap as soon as the FIN
/// could reach the server and its answer come back, one number of its IP
/// identification missing. It answers the goodbye: no timer resent a copy
/// lost before. The same message a second later could be such a resend.
#[test]
fn an_answer_to_the_peers_goodbye_is_no_resend_of_a_lost_tail() {
    let answered_at = |at_ms: f64| {
        let mut trace = Trace::ethernet();
        let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:443");
        conn.handshake(&mut trace, 0.0, 60.0);
        for turn in 0..3 {
            let asked = 100.0 + 100.0 * f64::from(turn);
            conn.send(&mut trace, Side::Client, asked, 50);
            conn.send(&mut trace, Side::Server, asked + 60.0, 900);
            conn.ack(&mut trace, Side::Client, asked + 61.0);
        }
        conn.fin(&mut trace, Side::Client, 31_000.0);
        conn.lose_packets(Side::Server, 1);
        conn.send(&mut trace, Side::Server, at_ms, 31);
        last_release(&trace)
    };
    let timer = Some(tcp::Release::Timer { tail: true });
    assert_ne!(answered_at(31_031.0), timer);
    assert_eq!(answered_at(32_000.0), timer);
}

#[test]
fn a_bare_reset_acknowledges_nothing_so_bytes_in_flight_stay_what_was_unacknowledged() {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 1.0);
    conn.send(&mut trace, Side::Client, 2.0, 1000);
    conn.ack(&mut trace, Side::Server, 3.0);
    // The server gives up with an RST whose ACK number is zero and whose ACK flag is off.
    let mut reset = conn.packet(Side::Server, synth::Packet::RST);
    reset.ack = 0;
    trace.push(4.0, &reset);
    conn.send(&mut trace, Side::Client, 5.0, 1000);
    conn.send(&mut trace, Side::Client, 6.0, 1000);
    let (connections, _) = run(&trace);
    assert_eq!(connections[0].client_to_server.max_bytes_in_flight, 2000);
}

/// The connection each segment went to, and the summaries listed, of a
/// tracker with `bytes` of budget that keeps its summaries or only counts them.
fn numbered(trace: &Trace, bytes: u64, keeps_summaries: bool) -> (Vec<u64>, tcp::Tracked) {
    let mut tracker = Tracker::new();
    tracker.set_memory_budget(bytes);
    if !keeps_summaries {
        tracker.keep_no_summaries();
    }
    let ids = trace
        .captured_frames()
        .filter_map(|frame| {
            tracker.process(&decode::decode(&frame).expect("scripted frames are TCP"))
        })
        .map(|view| view.connection)
        .collect();
    (ids, tracker.finish_all())
}

#[test]
fn a_tracker_that_only_counts_its_summaries_numbers_connections_as_one_that_keeps_them() {
    let mut trace = Trace::ethernet();
    let mut conversations: Vec<Conversation> = (0..400)
        .map(|i| {
            Conversation::new(
                &format!("10.0.{}.{}:40000", i / 200, i % 200 + 1),
                "10.9.0.1:80",
            )
        })
        .collect();
    for (i, conn) in conversations.iter_mut().enumerate() {
        let at = i as f64 * 10.0;
        conn.handshake(&mut trace, at, 1.0);
        conn.send(&mut trace, Side::Client, at + 2.0, 100);
        conn.send(&mut trace, Side::Server, at + 3.0, 1000);
    }
    // Connections retired early to keep the budget come back as new ones.
    for (i, conn) in conversations.iter_mut().take(100).enumerate() {
        conn.send(&mut trace, Side::Client, 5000.0 + i as f64, 100);
    }
    let budget = 200_000;
    let (kept_ids, kept) = numbered(&trace, budget, true);
    let (counted_ids, counted) = numbered(&trace, budget, false);
    assert!(kept.trimmed.retired_early > 0 && kept.trimmed.connections_not_listed > 0);
    assert!(!kept.connections.is_empty());
    assert!(
        kept_ids.iter().max() > Some(&399),
        "retired connections came back"
    );
    assert_eq!(counted_ids, kept_ids);
    assert_eq!(counted.trimmed, kept.trimmed);
    assert!(counted.connections.is_empty());
}
