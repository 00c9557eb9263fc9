//! What the proxy did to each exchange it carried, read from the segments
//! it sent on the far side, each named as the diagnosis names its kind of
//! finding: a small segment held until the ACK of its previous one (Nagle),
//! a request queued for a busy pooled connection, a sender starting again
//! from its initial window after idle (slow start after idle), a window one
//! side kept small or shut; and the bytes of one message in fewer or more
//! segments than they came in (writes coalesced or split).

use std::collections::{BTreeMap, BTreeSet};

use diagnose::FindingKind;
use serde::Serialize;
use tcp::stack::LINUX_RTO_MIN_NS;
use tcp::{Direction, Lacked, Release, SegmentView, Wait};
use transactions::Transaction;

use super::pairing::Carried;
use super::side::Side;

/// Something that cost an exchange time at the proxy: a kind of finding,
/// as the diagnosis names it, and where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CauseKind {
    /// `nagle_delayed_ack`: a small segment held until the ACK of the
    /// previous one. `pool_queueing`: a request queued for a pooled back
    /// connection still busy with another exchange. `zero_window`: a window
    /// shut. `slow_start`: a message sent from the initial window again
    /// after an idle gap longer than the retransmission timeout, with the
    /// message already in hand and the receiver's window open (Linux's
    /// `net.ipv4.tcp_slow_start_after_idle`). `receive_window_limited`: an
    /// open but small window that each flight filled, waiting for the ACK
    /// that opened it again.
    pub kind: FindingKind,
    pub place: Place,
}

impl CauseKind {
    pub fn new(kind: FindingKind, place: Place) -> Self {
        CauseKind { kind, place }
    }
}

/// Where a cause took hold: the proxy on one of its sides (what it sent
/// there, or the window it advertised there), or an end (the window it
/// advertised to the proxy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// The proxy on its side toward the client.
    ProxyClientSide,
    /// The proxy on its side toward the server.
    ProxyServerSide,
    Client,
    Server,
}

/// Exchanges whose messages the proxy sent on in fewer segments than they
/// came in (writes coalesced), or in more (writes split): no time of its
/// own, but what it did to the traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Resegmented {
    pub coalesced: usize,
    pub split: usize,
}

/// One cause, summed over the exchanges it touched.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    #[serde(flatten)]
    pub kind: CauseKind,
    pub transactions: usize,
    /// The proxy's added time in those exchanges (the time the window was
    /// shut, for the window causes; none for a change of segmentation alone).
    pub cost_ms: f64,
    /// The measured figures behind it, by name, each the median over the
    /// exchanges (`restart_flight_bytes`, `window_bytes`).
    pub figures: BTreeMap<&'static str, f64>,
}

/// A cause one exchange shows: its time and figures.
pub struct Shown {
    pub kind: CauseKind,
    pub cost_ms: f64,
    pub figures: Vec<(&'static str, f64)>,
}

impl Shown {
    fn of(kind: CauseKind, cost_ms: f64) -> Shown {
        Shown {
            kind,
            cost_ms,
            figures: Vec::new(),
        }
    }
}

/// A message's bytes passed, segment by segment: (when, bytes so far).
struct Progress {
    steps: Vec<(i64, u64)>,
}

impl Progress {
    /// The bytes that had passed by `at_ns`.
    fn bytes_by(&self, at_ns: i64) -> u64 {
        let passed = self.steps.partition_point(|&(t, _)| t <= at_ns);
        passed.checked_sub(1).map_or(0, |last| self.steps[last].1)
    }
}

/// One message through the proxy, one way: the segments that carried it in
/// on one side and out on the other.
#[derive(Clone, Copy)]
struct Leg<'a> {
    side: &'a Side,
    connection: u64,
    direction: Direction,
    span: (i64, i64),
}

impl<'a> Leg<'a> {
    /// The data segments of the message, first copies only.
    fn sent(&self) -> impl Iterator<Item = &'a SegmentView> {
        self.side
            .data_between(self.connection, self.direction, self.span)
            .filter(|view| !view.resent())
    }

    /// How many of the message's bytes had passed by each of its segments.
    fn progress(&self) -> Progress {
        let mut passed = 0;
        let steps = self
            .sent()
            .map(|view| {
                passed += u64::from(view.len);
                (view.timestamp_ns, passed)
            })
            .collect();
        Progress { steps }
    }

    /// The receive window the receiver of this leg advertised at `at_ns`.
    fn receiver_window_at(&self, at_ns: i64) -> Option<u64> {
        let back_the_other_way = match self.direction {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        };
        self.side
            .window_at(self.connection, back_the_other_way, at_ns)
    }
}
/// One exchange as it passed the proxy.
pub struct Exchange<'a> {
    pub front_connection: u64,
    pub back_connection: u64,
    pub front: &'a Transaction,
    pub back: &'a Transaction,
}

impl Exchange<'_> {
    /// Last request byte in at the front to last request byte out at the back.
    pub fn request_added_ms(&self) -> f64 {
        (self.back.request_end_ns - self.front.request_end_ns) as f64 / 1e6
    }

    /// Last response byte in at the back to last response byte out at the front.
    pub fn response_added_ms(&self) -> Option<f64> {
        Some((self.front.response_end_ns? - self.back.response_end_ns?) as f64 / 1e6)
    }

    /// The causes this exchange shows, each with the time it cost.
    pub fn causes(&self, front: &Side, back: &Side) -> Vec<Shown> {
        let mut causes = self.nagle(front, back);
        causes.extend(self.pooled_connection_wait(back));
        let request = Some(self.request_legs(front, back));
        let response = self.response_legs(front, back);
        let ways = [
            (request, Place::ProxyServerSide),
            (response, Place::ProxyClientSide),
        ];
        for (legs, place) in ways {
            let Some((came_in, went_out)) = legs else {
                continue;
            };
            if let Some((cost_ms, figures)) = slow_start_after_idle(came_in, went_out) {
                causes.push(Shown {
                    kind: CauseKind::new(FindingKind::SlowStart, place),
                    cost_ms,
                    figures,
                });
            }
        }
        // The proxy receives one leg of each message and sends the other on.
        let windows = [
            request.map(|(into, on)| (into, Some(on), Place::ProxyClientSide)),
            request.map(|(_, out)| (out, None, Place::Server)),
            response.map(|(into, on)| (into, Some(on), Place::ProxyServerSide)),
            response.map(|(_, out)| (out, None, Place::Client)),
        ];
        for (leg, passed_on, place) in windows.into_iter().flatten() {
            if let Some((cost_ms, figures)) = held_by_receive_window(leg, passed_on) {
                causes.push(Shown {
                    kind: CauseKind::new(FindingKind::ReceiveWindowLimited, place),
                    cost_ms,
                    figures,
                });
            }
        }
        causes
    }

    /// The request as it came in at the front and went out at the back.
    fn request_legs<'a>(&self, front: &'a Side, back: &'a Side) -> (Leg<'a>, Leg<'a>) {
        (
            Leg {
                side: front,
                connection: self.front_connection,
                direction: Direction::ClientToServer,
                span: (self.front.request_start_ns, self.front.request_end_ns),
            },
            Leg {
                side: back,
                connection: self.back_connection,
                direction: Direction::ClientToServer,
                span: (self.back.request_start_ns, self.back.request_end_ns),
            },
        )
    }

    /// The response as it came in at the back and went out at the front.
    fn response_legs<'a>(&self, front: &'a Side, back: &'a Side) -> Option<(Leg<'a>, Leg<'a>)> {
        Some((
            Leg {
                side: back,
                connection: self.back_connection,
                direction: Direction::ServerToClient,
                span: (self.back.response_start_ns?, self.back.response_end_ns?),
            },
            Leg {
                side: front,
                connection: self.front_connection,
                direction: Direction::ServerToClient,
                span: (self.front.response_start_ns?, self.front.response_end_ns?),
            },
        ))
    }

    /// A small segment of a message the proxy held until the ACK of the
    /// message's previous small segment.
    fn nagle(&self, front: &Side, back: &Side) -> Vec<Shown> {
        let mut causes = Vec::new();
        let (_, request_out) = self.request_legs(front, back);
        if held_by_nagle(request_out) {
            let kind = CauseKind::new(FindingKind::NagleDelayedAck, Place::ProxyServerSide);
            causes.push(Shown::of(kind, self.request_added_ms()));
        }
        if let Some((_, response_out)) = self.response_legs(front, back) {
            if held_by_nagle(response_out) {
                let added = self.response_added_ms().unwrap_or(0.0);
                let kind = CauseKind::new(FindingKind::NagleDelayedAck, Place::ProxyClientSide);
                causes.push(Shown::of(kind, added));
            }
        }
        causes
    }

    /// The request was in at the front while the back connection that
    /// carried it was still busy with its previous exchange: it queued for
    /// the connection, and left only once that exchange had its response.
    /// Its cost: all the time the proxy added to the request.
    fn pooled_connection_wait(&self, back: &Side) -> Option<Shown> {
        let previous = back
            .transactions_of(self.back_connection)
            .get((self.back.index as usize).checked_sub(2)?)?;
        let free_ns = previous.response_end_ns?;
        let queued = self.front.request_end_ns < free_ns && free_ns <= self.back.request_start_ns;
        let kind = CauseKind::new(FindingKind::PoolQueueing, Place::ProxyServerSide);
        queued.then(|| Shown::of(kind, self.request_added_ms()))
    }

    /// Its messages sent on in fewer or more segments than they came in.
    pub fn resegmented(&self) -> Resegmented {
        let mut resegmented = Resegmented::default();
        let segmentation = [
            (self.front.request_packets, self.back.request_packets),
            (self.back.response_packets, self.front.response_packets),
        ];
        for (came_in, went_out) in segmentation {
            if went_out == 0 || came_in == 0 {
                continue;
            }
            match went_out.cmp(&came_in) {
                std::cmp::Ordering::Less => resegmented.coalesced = 1,
                std::cmp::Ordering::Greater => resegmented.split = 1,
                std::cmp::Ordering::Equal => {}
            }
        }
        resegmented
    }
}

/// One flight of a message: the bytes sent in it, the most the sender had
/// in flight during it, and when its last segment left.
struct Flight {
    bytes: u64,
    peak_in_flight: u64,
    last_ns: i64,
}

/// Segments grouped by the flight they left in, in order.
fn flights<'a>(sent: impl IntoIterator<Item = &'a SegmentView>) -> Vec<Flight> {
    let mut flights: Vec<(u32, Flight)> = Vec::new();
    for view in sent {
        let Some(number) = view.flight else {
            continue;
        };
        let in_flight = view.in_flight.unwrap_or(0);
        match flights.last_mut() {
            Some((last, flight)) if *last == number => {
                flight.bytes += u64::from(view.len);
                flight.peak_in_flight = flight.peak_in_flight.max(in_flight);
                flight.last_ns = view.timestamp_ns;
            }
            _ => flights.push((
                number,
                Flight {
                    bytes: u64::from(view.len),
                    peak_in_flight: in_flight,
                    last_ns: view.timestamp_ns,
                },
            )),
        }
    }
    flights.into_iter().map(|(_, flight)| flight).collect()
}

/// A message the proxy sent after an idle gap longer than its
/// retransmission timeout, starting from a flight under half the window it
/// had reached before the gap and growing it flight by flight, while the
/// message's bytes were already in (`came_in` had delivered more than had
/// left at the end of each flight but the last) and the receiver's window
/// stayed open. Its cost: the time beyond what the window reached before
/// the gap would have taken, or the message's arrival, whichever is later.
fn slow_start_after_idle(came_in: Leg, went_out: Leg) -> Option<(f64, Vec<(&'static str, f64)>)> {
    let sent: Vec<&SegmentView> = went_out.sent().collect();
    let first = *sent.first()?;
    let Wait {
        since_ns,
        ended_by: Release::Application,
    } = first.wait?
    else {
        return None;
    };
    let rtt_ns = first.rtts.to_sender_ns + first.rtts.to_receiver_ns;
    // Linux restarts the window of a sender idle for an RTO, at least its
    // least RTO over the round trip: one idle for less kept its window.
    if rtt_ns == 0 || first.timestamp_ns - since_ns < LINUX_RTO_MIN_NS + rtt_ns {
        return None;
    }
    let before = window_reached_before(went_out, since_ns)?;
    let flights = flights(sent.iter().copied());
    let restart = flights.first()?.bytes;
    let growing = flights.len() >= 2
        && flights[1].bytes > restart
        && flights[..flights.len() - 1]
            .windows(2)
            .all(|pair| pair[1].bytes >= pair[0].bytes);
    let window_open = !sent.iter().any(|view| released_by_window(view))
        && flights.iter().all(|flight| {
            went_out
                .receiver_window_at(flight.last_ns)
                .is_none_or(|window| window > flight.peak_in_flight)
        });
    let (arrived, left) = (came_in.progress(), went_out.progress());
    let data_waiting = flights[..flights.len() - 1]
        .iter()
        .all(|flight| arrived.bytes_by(flight.last_ns) > left.bytes_by(flight.last_ns));
    if 2 * restart > before || !growing || !window_open || !data_waiting {
        return None;
    }
    let message_bytes: u64 = sent.iter().map(|view| u64::from(view.len)).sum();
    let flights_needed = message_bytes.div_ceil(before);
    let at_that_window_ns = (flights_needed as i64 - 1) * rtt_ns;
    let all_in_ns = came_in.span.1 - first.timestamp_ns;
    let took_ns = sent.last()?.timestamp_ns - first.timestamp_ns;
    let cost_ns = took_ns - at_that_window_ns.max(all_in_ns);
    (cost_ns > 0).then(|| {
        let figures = vec![
            ("restart_flight_bytes", restart as f64),
            ("window_before_idle_bytes", before as f64),
            ("idle_ms", (first.timestamp_ns - since_ns) as f64 / 1e6),
            ("flights", flights.len() as f64),
            ("rtt_ms", rtt_ns as f64 / 1e6),
        ];
        (cost_ns as f64 / 1e6, figures)
    })
}

/// The window the sender had reached in its last busy stretch before
/// `idle_since_ns` (back to the data its application last released after
/// a pause, or to its first): its largest flight, grown by the factor its
/// ACKs grew the flight before it (up to twice, slow start's doubling), as
/// the flight after it would have been sent had there been more to send.
fn window_reached_before(leg: Leg, idle_since_ns: i64) -> Option<u64> {
    let mut stretch: Vec<&SegmentView> = Vec::new();
    for view in leg
        .side
        .data_before(leg.connection, leg.direction, idle_since_ns + 1)
        .filter(|view| !view.resent())
    {
        stretch.push(view);
        if matches!(
            view.wait,
            Some(Wait {
                ended_by: Release::Application,
                ..
            })
        ) {
            break;
        }
    }
    let flights = flights(stretch.into_iter().rev());
    let (largest_at, largest) = flights
        .iter()
        .enumerate()
        .max_by_key(|(_, flight)| flight.bytes)?;
    let growth = match largest_at
        .checked_sub(1)
        .map(|previous| flights[previous].bytes)
    {
        Some(previous) if previous > 0 => (largest.bytes as f64 / previous as f64).clamp(1.0, 2.0),
        _ => 1.0,
    };
    Some((largest.bytes as f64 * growth) as u64)
}

/// Data that waited for the receiver's window to open.
fn released_by_window(view: &SegmentView) -> bool {
    matches!(
        view.wait,
        Some(Wait {
            ended_by: Release::Ack {
                lacked: Lacked::ReceiveWindow | Lacked::ZeroWindow,
                ..
            },
            ..
        })
    )
}

/// A message whose sender spent at least half its transfer waiting for an
/// open but small receive window: its flights filled the window, and each
/// next one left when an ACK opened it again. When the receiver is the
/// proxy (`passed_on`: the leg it sent the message on by), a wait counts
/// only while the proxy held less than a window of the message unsent: a
/// window kept small by what it could not pass on is the far side's doing.
/// Its cost: those waits.
fn held_by_receive_window(
    leg: Leg,
    passed_on: Option<Leg>,
) -> Option<(f64, Vec<(&'static str, f64)>)> {
    let sent: Vec<&SegmentView> = leg.sent().collect();
    let transfer_ns = sent.last()?.timestamp_ns - sent.first()?.timestamp_ns;
    let arrived = leg.progress();
    let left = passed_on.map(|on| on.progress());
    let mut waited_ns = 0;
    let mut windows = Vec::new();
    for view in &sent {
        let Some(Wait {
            since_ns,
            ended_by:
                Release::Ack {
                    lacked: Lacked::ReceiveWindow,
                    at_ns,
                    ..
                },
        }) = view.wait
        else {
            continue;
        };
        let window = leg.receiver_window_at(at_ns).unwrap_or(0);
        let held_unsent = left.as_ref().map_or(0, |left| {
            arrived
                .bytes_by(view.timestamp_ns)
                .saturating_sub(left.bytes_by(view.timestamp_ns))
        });
        if held_unsent < window {
            waited_ns += view.timestamp_ns - since_ns;
            windows.push(window as f64);
        }
    }
    if transfer_ns == 0 || 2 * waited_ns < transfer_ns {
        return None;
    }
    let rtt_ns = sent[0].rtts.to_sender_ns + sent[0].rtts.to_receiver_ns;
    let mut figures = vec![("rtt_ms", rtt_ns as f64 / 1e6)];
    figures.extend(super::median(windows).map(|window| ("window_bytes", window)));
    Some((waited_ns as f64 / 1e6, figures))
}

/// Whether a segment of the message after its first waited for the ACK of
/// everything before it while a small segment was outstanding — Nagle's
/// algorithm — and that ACK reached the sender after its previous segment
/// left, so the sender stood waiting. (The message's first segment waited
/// for the message itself, whatever came before it.)
fn held_by_nagle(leg: Leg) -> bool {
    leg.sent().any(|view| {
        let Some(wait) = view.wait else {
            return false;
        };
        match wait.ended_by {
            Release::Ack {
                at_ns,
                lacked:
                    Lacked::AllAcked {
                        small_held: true, ..
                    },
                ..
            } => wait.since_ns >= leg.span.0 && at_ns + view.rtts.to_sender_ns > wait.since_ns,
            _ => false,
        }
    })
}

/// Zero windows on either side of the proxy, by who shut the window, with
/// the time it stayed shut, over the connections that carried exchanges.
pub fn zero_windows(front: &Side, back: &Side, carried: &[Carried]) -> Vec<Cause> {
    let front_ids: BTreeSet<u64> = carried.iter().map(|c| c.front_connection).collect();
    let back_ids: BTreeSet<u64> = carried.iter().map(|c| c.back_connection).collect();
    let mut causes: Vec<Cause> = Vec::new();
    let mut add = |place: Place, shut: &tcp::DirectionSummary| {
        let kind = CauseKind::new(FindingKind::ZeroWindow, place);
        if shut.zero_windows == 0 {
            return;
        }
        match causes.iter_mut().find(|cause| cause.kind == kind) {
            Some(cause) => {
                cause.transactions += 1;
                cause.cost_ms += shut.zero_window_ms;
            }
            None => causes.push(Cause {
                kind,
                transactions: 1,
                cost_ms: shut.zero_window_ms,
                figures: BTreeMap::new(),
            }),
        }
    };
    // A direction's zero windows are those its sender advertised.
    for connection in front_ids.iter().filter_map(|&id| front.connection(id)) {
        add(Place::Client, &connection.client_to_server);
        add(Place::ProxyClientSide, &connection.server_to_client);
    }
    for connection in back_ids.iter().filter_map(|&id| back.connection(id)) {
        add(Place::ProxyServerSide, &connection.client_to_server);
        add(Place::Server, &connection.server_to_client);
    }
    causes
}
