//! Findings about structure more than time, and the patterns that decide
//! where some server and loss time belongs: connections that never opened,
//! ports reused inside TIME_WAIT, SYN options stripped on the way, a pool
//! to a back tier too small for its front, a saturated server, and MTU
//! black holes.

mod app_failures;
mod options;
mod pool;
mod port_reuse;
mod saturation;
mod setup;
mod syn_flood;

use serde::Serialize;
use tcp::ConnectionSummary;
use transactions::{ConnectionLedger, Part};

pub use options::black_holed;
pub use pool::PoolQueueing;
pub use saturation::Saturation;
pub use setup::FailedSetups;

use crate::queue::shows_queue;
use crate::rules::BULK_BYTES;
use crate::{Finding, Inputs};

/// The structural findings, with `setup_ms` the ledger's SYN-retry time of
/// connections that did open, `failed` those that did not, and `total_ms`
/// the time at stake.
pub fn structural(
    inputs: &Inputs,
    setup_ms: f64,
    failed: &FailedSetups,
    total_ms: f64,
) -> Vec<Finding> {
    [
        setup::setup_failures(inputs, setup_ms, failed, total_ms),
        port_reuse::port_reuse(inputs),
        options::tcp_options(inputs),
        syn_flood::syn_flood(inputs),
        app_failures::application_failures(inputs),
    ]
    .into_iter()
    .flatten()
    .collect()
}

pub fn pool_queueing(inputs: &Inputs) -> Option<PoolQueueing> {
    pool::pool_queueing(inputs)
}

pub fn saturation(inputs: &Inputs) -> Option<Saturation> {
    saturation::saturation(inputs)
}

pub fn black_hole_finding(inputs: &Inputs) -> Option<Finding> {
    options::mtu_black_hole(inputs)
}

/// What limits a bulk flow's rate, named from the waits its ledger charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    ReceiveWindow,
    ZeroWindow,
    SendBuffer,
    Application,
    Loss,
    /// Congestion-window, send-buffer and receive-window waits with round
    /// trips growing with the bytes in flight, or no wait at all: the data
    /// moved as fast as the path took it.
    BottleneckLink,
    SlowStart,
}

/// What limits each bulk flow of `c` (client to server, server to client),
/// named from the waits its ledger charged; None for flows under 256 kB.
pub fn limiter(c: &ConnectionSummary, ledger: Option<&ConnectionLedger>) -> [Option<Limiter>; 2] {
    c.directions().map(|data| {
        if data.unique_payload_bytes < BULK_BYTES {
            return None;
        }
        let ledger = &ledger?.ledger;
        // With a standing queue the link is full, whatever else held the
        // bytes in flight (as the ledger's charges read it).
        let queue = shows_queue(c, data);
        let congestion = if queue {
            Limiter::BottleneckLink
        } else {
            Limiter::SlowStart
        };
        let held_in_flight = [Part::SendBuffer, Part::ReceiveWindow].map(|part| ledger.get(part));
        let ([own_buffer, own_window], queued) = if queue {
            ([0.0; 2], held_in_flight.iter().sum())
        } else {
            (held_in_flight, 0.0)
        };
        let waits = [
            (Limiter::ReceiveWindow, own_window),
            (Limiter::ZeroWindow, ledger.get(Part::ZeroWindow)),
            (Limiter::SendBuffer, own_buffer),
            (
                Limiter::Application,
                [
                    Part::ClientPause,
                    Part::ServerPause,
                    Part::ClientIdle,
                    Part::ServerIdle,
                ]
                .map(|part| ledger.get(part))
                .iter()
                .sum(),
            ),
            (
                Limiter::Loss,
                ledger.get(Part::RetransmissionTimeout)
                    + ledger.get(Part::TailLoss)
                    + ledger.get(Part::LossRecovery),
            ),
            (
                congestion,
                ledger.get(Part::CongestionWindow) + ledger.get(Part::Queueing) + queued,
            ),
        ];
        let (limiter, waited) = waits.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        Some(if waited > 0.0 {
            limiter
        } else {
            Limiter::BottleneckLink
        })
    })
}

/// `1 attempt`, `4 attempts`.
pub(crate) fn counted(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}

pub(crate) fn distinct_connections(ids: impl Iterator<Item = u64>) -> u64 {
    crate::charges::distinct(ids)
}
