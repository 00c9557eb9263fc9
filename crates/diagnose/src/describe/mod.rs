//! One finding per cause, from what the ledger charged to it: its title,
//! the mechanism that proves it, its evidence on the connection where it
//! cost most, the fix, and what removing it would buy. The causes are
//! described by the ledger group their time falls in, one module each, and
//! the summary of where all the time went in its own.

mod client;
mod loss;
mod network;
mod server;
mod setup;
mod summary;
mod tcp_waits;

use std::cell::OnceCell;
use std::collections::BTreeMap;

use tcp::{ConnectionSummary, Direction, DirectionSummary};
use transactions::{ConnectionLedger, Stretch};

use crate::cause::Cause;
use crate::charges::{CauseTotal, Context};
pub(crate) use crate::units::{bytes, duration};
use crate::{detectors, Finding, FindingKind, Inputs};

pub use summary::summary;

/// The finding for `cause`, or None where another detector describes it.
pub fn finding(
    cause: Cause,
    total: &CauseTotal,
    inputs: &Inputs,
    context: &Context,
    totals: &BTreeMap<Cause, CauseTotal>,
) -> Option<Finding> {
    let facts = Facts::of(cause, total, inputs);
    let mut found = match cause {
        Cause::SetupFailure | Cause::Transfer => return None,
        Cause::PoolQueueing => context.pool.as_ref()?.finding.clone(),
        Cause::ServerSaturation => context.saturation.as_ref()?.finding.clone(),
        Cause::MtuBlackHole => detectors::black_hole_finding(inputs)?,
        Cause::AcceptQueue => setup::accept_queue(&facts),
        Cause::ClientDelay => client::client_delay(&facts, inputs),
        Cause::ClientThink => client::client_think(&facts),
        Cause::ServerIdle => server::server_idle(&facts),
        Cause::ApplicationLimited => client::application_limited(&facts),
        Cause::SplitResponse => server::split_response(&facts),
        Cause::Chattiness => network::chattiness(&facts),
        Cause::PathLatency => network::path_latency(&facts),
        Cause::BottleneckLink => network::bottleneck_link(&facts, context),
        Cause::SlowStart => tcp_waits::slow_start(&facts),
        Cause::ServerThink => server::server_think(&facts, totals),
        Cause::PeriodicStalls => server::periodic_stalls(&facts, inputs),
        Cause::NagleDelayedAck => tcp_waits::nagle(&facts),
        Cause::DelayedAck => tcp_waits::delayed_ack(&facts),
        Cause::ReceiveWindow => tcp_waits::receive_window(&facts),
        Cause::ZeroWindow => tcp_waits::zero_window(&facts),
        Cause::SendBuffer => tcp_waits::send_buffer(&facts),
        Cause::PacketLoss => loss::packet_loss(&facts, inputs),
        Cause::PeriodicLoss => loss::periodic_loss(&facts, inputs),
        Cause::TailLoss => loss::tail_loss(&facts),
        Cause::DeadPeer => loss::dead_peer(&facts),
    };
    found.cost_ms = total.cost_ms;
    found.transactions = total.transactions();
    found.connections = total.per_connection.len() as u64;
    if found.example_connection.is_none() {
        found.example_connection = facts.example.map(|c| c.id);
    }
    if found.frames.is_empty() {
        found.frames = facts.frames();
    }
    if found.wireshark_filter.is_empty() {
        found.wireshark_filter = facts.filter("");
    }
    if found.what_if.is_empty() {
        found.what_if = facts.what_if();
    }
    found
        .figures
        .insert("per_transaction_ms", round(total.per_transaction_ms()));
    Some(found)
}

/// What the ledger says of one cause, gathered for its text.
struct Facts<'a> {
    kind: FindingKind,
    cause: Cause,
    inputs: &'a Inputs<'a>,
    total: &'a CauseTotal,
    example: Option<&'a ConnectionSummary>,
    /// The longest stretch charged to the cause on the example connection.
    stretch: Option<Stretch>,
    /// Separate stretches charged to the cause's parts, over all
    /// connections: counted when a text first asks (see [`Facts::stretches`]).
    stretches: OnceCell<u64>,
    /// The cause is a side's own pace (its think time or idle time), which
    /// the time at stake of the transactions it touched leaves out.
    own_pace: bool,
}

impl<'a> Facts<'a> {
    fn of(cause: Cause, total: &'a CauseTotal, inputs: &'a Inputs<'a>) -> Self {
        let example_id = total.example_connection(inputs.connections);
        let example = example_id.and_then(|id| inputs.connection(id));
        let stretch = example_id
            .and_then(|id| inputs.ledger(id))
            .and_then(|ledger| {
                cause
                    .evidence_parts()
                    .iter()
                    .find_map(|&part| ledger.longest(part))
            });
        Facts {
            kind: cause.kind(),
            cause,
            inputs,
            total,
            example,
            stretch,
            stretches: OnceCell::new(),
            own_pace: matches!(cause, Cause::ClientThink | Cause::ServerIdle),
        }
    }

    /// The summaries of the connections it touched, in their list's order
    /// (read one after another, not as the costs' map happens to hold them).
    fn touched_connections(&self) -> impl Iterator<Item = &'a ConnectionSummary> + '_ {
        self.total
            .per_connection
            .touched_of(self.inputs.connections)
    }

    /// The ledgers of the connections it touched, in their list's order.
    fn touched_ledgers(&self) -> impl Iterator<Item = &'a ConnectionLedger> + '_ {
        self.inputs.ledgers.iter().filter(|ledger| {
            self.total
                .per_connection
                .touches(ledger.connection, self.inputs.connections)
        })
    }

    /// Separate stretches charged to the cause's parts, over all connections.
    fn stretches(&self) -> u64 {
        *self.stretches.get_or_init(|| {
            self.touched_ledgers()
                .map(|ledger| {
                    self.cause
                        .evidence_parts()
                        .iter()
                        .map(|&part| ledger.stretch_count(part))
                        .sum::<u64>()
                })
                .sum()
        })
    }

    /// The least and the most of the path round trips of the connections
    /// it touched, where the capture timed any.
    fn round_trips(&self) -> Option<(f64, f64)> {
        spread(
            self.touched_connections()
                .filter_map(|c| c.rtt().known_round_trip_ms()),
        )
    }

    fn frames(&self) -> Vec<u64> {
        self.stretch
            .map_or_else(Vec::new, |stretch| stretch.frames())
    }

    /// The example connection, its evidence frames, and `more` (a clause in
    /// Wireshark's display-filter language) when given.
    fn filter(&self, more: &str) -> String {
        let Some(c) = self.example else {
            return more.to_string();
        };
        let frames = self.frames();
        let mut filter = format!("tcp.stream == {}", c.id);
        if !frames.is_empty() {
            let list: Vec<String> = frames.iter().map(u64::to_string).collect();
            filter += &format!(" && frame.number in {{{}}}", list.join(", "));
        } else if !more.is_empty() {
            filter += &format!(" && ({more})");
        }
        filter
    }

    /// Which side sent the data that waited (from the example's evidence).
    fn sender(&self) -> (&'static str, &'static str) {
        match self.stretch.map(|s| s.ended_by) {
            Some(Direction::ServerToClient) => ("server", "client"),
            _ => ("client", "server"),
        }
    }

    /// The sender's direction summary on the example connection.
    fn sender_data(&self) -> Option<&'a DirectionSummary> {
        let c = self.example?;
        Some(match self.stretch.map(|s| s.ended_by) {
            Some(Direction::ServerToClient) => &c.server_to_client,
            _ => &c.client_to_server,
        })
    }

    fn receiver_data(&self) -> Option<&'a DirectionSummary> {
        let c = self.example?;
        Some(match self.stretch.map(|s| s.ended_by) {
            Some(Direction::ServerToClient) => &c.client_to_server,
            _ => &c.server_to_client,
        })
    }

    /// Mean time of one stretch of the cause.
    fn typical_wait_ms(&self) -> f64 {
        self.total.cost_ms / self.stretches().max(1) as f64
    }

    fn round_trip_ms(&self) -> f64 {
        self.example.map_or(0.0, |c| c.rtt().round_trip_ms())
    }

    /// The round trip of the connections touched: one where they share it
    /// (as printed), else from the least to the most.
    fn round_trips_text(&self) -> String {
        match self.round_trips() {
            Some((least, most)) if duration(least) != duration(most) => {
                format!("a round trip of {} to {}", duration(least), duration(most))
            }
            _ => a_round_trip(self.round_trip_ms()),
        }
    }

    fn what_if(&self) -> String {
        let n = self.total.transactions().max(1) as f64;
        let touched_ms = self.total.touched_ms;
        let (with, without) = if self.own_pace {
            // The time at stake leaves out a side's own pace: it came on top.
            ((touched_ms + self.total.cost_ms) / n, touched_ms / n)
        } else {
            (
                touched_ms / n,
                (touched_ms - self.total.cost_ms).max(0.0) / n,
            )
        };
        format!(
            "Without it, the {} it touches would take {} on average instead of {}, {} sooner in all.",
            count(self.total.transactions(), "transaction"),
            duration(without),
            duration(with),
            duration(self.total.cost_ms)
        )
    }

    fn example_text(&self) -> String {
        match (self.example, self.stretch) {
            (Some(c), Some(stretch)) => format!(
                " On connection {} the longest such wait ran {} from frame {} to frame {}{}.",
                c.id,
                duration(stretch.ms),
                stretch.from_frame,
                stretch.to_frame,
                stretch.ack_frame.map_or(String::new(), |ack| format!(
                    ", released by the ACK in frame {ack}"
                ))
            ),
            _ => String::new(),
        }
    }
}

/// A finding of `kind` with its title, explanation and fix; the rest is
/// filled in by the caller.
fn with_text(kind: FindingKind, title: String, explanation: String, fix: &str) -> Finding {
    Finding {
        explanation,
        fix: fix.to_string(),
        ..Finding::new(kind, &title, 0.0)
    }
}

/// A figure to the thousandth.
pub(crate) fn round(value: f64) -> f64 {
    (value * 1e3).round() / 1e3
}

/// `1 request`, `4 requests`.
fn count(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// A round trip of `ms`, as its length: `a 42.0 ms round trip`. A capture
/// whose clock ticks coarsely can time one as nothing, which no figure
/// may then be divided by or read against.
fn a_round_trip(ms: f64) -> String {
    if ms > 0.0 {
        format!("a {} round trip", duration(ms))
    } else {
        "a round trip too short for the capture's clock to time".to_string()
    }
}

/// The least and the most of `values`, if any.
fn spread(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |spread, value| match spread {
        None => Some((value, value)),
        Some((least, most)) => Some((least.min(value), most.max(value))),
    })
}

/// `text` with its first letter in capitals, to open a sentence.
fn capitalized(text: &str) -> String {
    let mut letters = text.chars();
    letters.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(letters).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_trip_the_clock_could_not_time_is_not_given_a_length() {
        assert_eq!(a_round_trip(42.0), "a 42.0 ms round trip");
        assert_eq!(
            capitalized(&a_round_trip(0.0)),
            "A round trip too short for the capture's clock to time"
        );
    }
}
