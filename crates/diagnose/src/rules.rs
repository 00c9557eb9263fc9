//! Every threshold the diagnosis uses, and the severity rule, in one place.
//!
//! Causes are told apart by mechanism (what ended each wait, read by the
//! `tcp` stage), never by the length of a pause. The few numbers here say
//! when a cause is worth a word, and each is grounded in how people feel
//! delay or in how TCP stacks behave, not in any one capture.

use crate::Severity;

/// A delay a person notices on one interaction (Nielsen's 0.1 s: the limit
/// for feeling that a system reacts at once).
pub const NOTICED_MS: f64 = 100.0;
/// A delay that breaks a person's flow on one interaction (Nielsen's 1 s).
pub const FLOW_BROKEN_MS: f64 = 1_000.0;
/// Time lost in all that makes a capture's work noticeably slower, whatever
/// the time per interaction.
pub const NOTICED_IN_ALL_MS: f64 = 1_000.0;
/// Time lost in all that is severe on its own.
pub const SEVERE_IN_ALL_MS: f64 = 10_000.0;
/// Below this share of the time at stake a cause does not matter against the rest.
pub const MATTERS_SHARE: f64 = 0.05;
/// From this share of the time at stake a cause is a main one.
pub const MAIN_SHARE: f64 = 0.2;
/// A cause that takes at least this share of the transactions it touches
/// makes them at least twice as slow.
pub const DOUBLES_SHARE: f64 = 0.5;

/// How loud a finding is, from the time it costs (`cost_ms` in all, as a
/// person waited it: transactions that ran at once count their common time
/// once; `per_transaction_ms` on each transaction it touches), its `share` of the
/// time at stake, its share of the time of the transactions it touches, and
/// whether its time is `waste` (time that exists only because something is
/// wrong: TCP's waits, loss, stalls, pauses) rather than time every exchange
/// spends (round trips, transfer, the server's work, the client's):
///
/// - **info** when it takes under 5% of the time at stake, or when no one
///   would notice it: waste under 0.1 s per transaction and under 1 s in all
///   (unless it makes the transactions it touches at least twice as slow
///   while costing 0.1 s); time every exchange spends, under 1 s per
///   transaction and in all (distance and work are worth a word only once
///   they break a person's flow);
/// - **critical** when it is a main cause (20% or more of the time at
///   stake) and severe: 1 s or more per transaction, or 10 s in all (waste
///   also when 0.1 s per transaction adds up to a second);
/// - **warning** otherwise.
///
/// So a single fast page load, or anything in a capture shorter than 0.1 s,
/// is never critical, and the round trips and server time of healthy
/// traffic stay quiet however much of it they take.
pub fn severity(
    cost_ms: f64,
    per_transaction_ms: f64,
    share: f64,
    share_of_touched: f64,
    waste: bool,
) -> Severity {
    let doubles = waste && share_of_touched >= DOUBLES_SHARE && cost_ms >= NOTICED_MS;
    let per_transaction_noticed = if waste { NOTICED_MS } else { FLOW_BROKEN_MS };
    let noticed =
        per_transaction_ms >= per_transaction_noticed || cost_ms >= NOTICED_IN_ALL_MS || doubles;
    if share < MATTERS_SHARE || !noticed {
        return Severity::Info;
    }
    let adds_up = waste && per_transaction_ms >= NOTICED_MS && cost_ms >= NOTICED_IN_ALL_MS;
    let severe = per_transaction_ms >= FLOW_BROKEN_MS || cost_ms >= SEVERE_IN_ALL_MS || adds_up;
    if share >= MAIN_SHARE && severe {
        Severity::Critical
    } else {
        Severity::Warning
    }
}

/// A transfer this large is a bulk flow: what limits its rate is named.
pub const BULK_BYTES: u64 = 256 * 1024;

/// Round trips that rise with the bytes in flight this closely (Pearson's
/// r) show a queue building before a bottleneck link.
pub const QUEUE_CORRELATION: f64 = 0.5;
/// And the typical round trip stands this far above the least: the queue is standing.
pub const QUEUE_RTT_RATIO: f64 = 1.5;

/// Stalls or loss bursts this evenly spaced (each interval within this
/// share of the typical one) recur at a period.
pub const PERIOD_TOLERANCE: f64 = 0.2;
/// Times something must happen to be a pattern rather than a coincidence
/// (recurrences to call it periodic, ports reused to call it a habit).
pub const PATTERN_REPEATS: usize = 3;

/// Retransmissions this far apart belong to separate bursts of loss.
pub const LOSS_BURST_GAP_MS: f64 = 100.0;
/// A pattern is believed when chance alone would give it less often than
/// this (the usual 1% significance level).
pub const SIGNIFICANCE: f64 = 0.01;

/// A segment sent again this many times in a row by its timer, never
/// acknowledged: the peer let two timeouts pass, each twice the last, so it
/// is gone (or the path drops everything to it).
pub const DEAD_AFTER_RESENDS: u64 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_fast_answer_is_never_loud() {
        assert_eq!(severity(40.0, 40.0, 0.9, 0.9, false), Severity::Info);
        assert_eq!(severity(40.0, 40.0, 0.9, 0.9, true), Severity::Info);
    }

    #[test]
    fn two_hundred_ms_per_call_over_many_calls_is_critical() {
        assert_eq!(
            severity(20_000.0, 200.0, 0.95, 0.95, true),
            Severity::Critical
        );
    }

    #[test]
    fn a_small_share_is_info_however_long() {
        assert_eq!(severity(5_000.0, 500.0, 0.04, 0.9, true), Severity::Info);
    }

    #[test]
    fn waste_that_doubles_short_transactions_is_noticed_and_round_trips_are_not() {
        assert_eq!(severity(900.0, 45.0, 0.9, 0.95, true), Severity::Warning);
        assert_eq!(severity(900.0, 45.0, 0.9, 0.95, false), Severity::Info);
    }

    #[test]
    fn one_exchange_over_a_long_path_is_quiet_until_it_breaks_the_flow() {
        assert_eq!(severity(344.0, 344.0, 1.0, 1.0, false), Severity::Info);
        assert_eq!(severity(1_200.0, 120.0, 0.9, 0.9, false), Severity::Warning);
    }
}
