//! Every threshold the diagnosis uses, and every severity rule, in one place.
//!
//! Causes are told apart by mechanism (what ended each wait, read by the
//! `tcp` stage), never by the length of a pause. The numbers here say when
//! a cause is worth a word, when a pattern is one, and how much a detector
//! looks at; each is grounded in how people feel delay, in statistics, or
//! in how TCP stacks behave, not in any one capture. What stacks do (their
//! timers, TIME_WAIT, the MSS) is not a threshold: it is in `tcp::stack`.

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

/// From this share of requests failing, application failures are critical:
/// one request in five is more than the odd broken link or bad input, as a
/// fifth of the time at stake makes a cause a main one ([`MAIN_SHARE`]).
pub const FAILED_CRITICAL_SHARE: f64 = 0.2;

/// How loud application failures are, from the `failed_share` of requests
/// that failed: they cost no time, but any failure is worth a warning, and
/// critical from [`FAILED_CRITICAL_SHARE`].
pub fn failure_severity(failed_share: f64) -> Severity {
    if failed_share >= FAILED_CRITICAL_SHARE {
        Severity::Critical
    } else {
        Severity::Warning
    }
}

/// How loud a structural finding is that costs no time while nothing fails
/// (ports reused inside TIME_WAIT): a warning once it happened a pattern's
/// [`PATTERN_REPEATS`] times, a habit that fails as soon as one attempt
/// meets trouble, or once an attempt did (`failed` > 0); info otherwise.
pub fn structural_severity(occurrences: usize, failed: usize) -> Severity {
    if occurrences >= PATTERN_REPEATS || failed > 0 {
        Severity::Warning
    } else {
        Severity::Info
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

/// A full-size segment sent this many times in a row by its timer without
/// an ACK, while smaller packets got through, is too large for the path (an
/// MTU black hole): three copies lost in a row to chance is one in a
/// million at 1% loss.
pub const BLACK_HOLE_RESENDS: u64 = 3;
/// Segments at least this large are the ones a smaller MTU drops: tunnels,
/// VPNs and PPPoE take from tens to a couple of hundred bytes off a
/// 1500-byte MTU, so a segment under 1000 bytes fits through any of them.
pub const LARGE_SEGMENT_BYTES: u64 = 1000;
/// A resent segment within this percentage of the largest the sender sent
/// is a full-size one (options and a last short write trim a few bytes).
pub const FULL_SIZE_PERCENT: u64 = 90;

/// Tukey's far-out fence: a value more than this many interquartile ranges
/// above the third quartile is an outlier of the rest (1.5 marks the
/// merely unusual; 3 what does not belong to the same process).
pub const FAR_OUT_IQRS: f64 = 3.0;

/// Handshakes tried again count as the path's loss while no more than this
/// many standard deviations above the count its loss rate predicts: three
/// leave 0.1% to chance.
pub const EXPLAINED_DEVIATIONS: f64 = 3.0;

/// A connection reset after this long without a byte from the server gave
/// up waiting rather than being refused: a server that refuses does so at
/// once, and a second is past the point a person stays with a task
/// ([`FLOW_BROKEN_MS`]).
pub const GAVE_UP_AFTER_MS: f64 = 1_000.0;
/// Attempts to one server needed to judge how setup failures follow the
/// number of connections open: fewer cannot split into quiet and busy ones.
pub const LOAD_ATTEMPTS: usize = 8;
/// Failures rise with load when at least this many attempts were made
/// while fewer connections were open than at the first failure, none of
/// them failed ...
pub const LOAD_QUIET_ATTEMPTS: usize = 2;
/// ... and at least this share of the busier ones failed: most of them.
pub const LOAD_BUSY_FAILED_SHARE: f64 = 0.5;

/// Handshakes to one server and port that never completed, and the distinct
/// sources they came from, that make a SYN flood or a scan rather than a
/// few clients retrying: a thousand attempts from a hundred hosts is beyond
/// any one client's retries or any office behind one NAT.
pub const FLOOD_ATTEMPTS: u64 = 1000;
pub const FLOOD_SOURCES: u64 = 100;

/// A server with fewer answered requests is not looked at as a tier of a
/// pool: too few to show how its answers follow another's.
pub const MIN_TIER_REQUESTS: usize = 10;
/// Tiers looked at, the busiest first: bounds the pairs of tiers tried.
pub const MAX_TIERS: usize = 8;
/// A front tier answers after a back tier's calls when at least this share
/// of its answers follows a back answer: most, leaving room for answers
/// served from a cache or failed without a call.
pub const LINKED_SHARE: f64 = 0.8;

/// Transactions per time window when reading how response time follows
/// load: enough for a median, few enough for many windows.
pub const TRANSACTIONS_PER_WINDOW: usize = 4;
/// Windows needed to compare the busiest third with the quietest: two each.
pub const SATURATION_MIN_WINDOWS: usize = 6;
/// Windows at most, however many transactions: bounds the work.
pub const MAX_WINDOWS: usize = 30;
/// Answered transactions needed to judge saturation: enough for the least
/// number of windows.
pub const SATURATION_MIN_TRANSACTIONS: usize = SATURATION_MIN_WINDOWS * TRANSACTIONS_PER_WINDOW;
/// Throughput within this share of another is the same work done: a stall
/// would cut it far more, so a server this close to its peak is as busy as
/// it gets.
pub const SAME_THROUGHPUT_SHARE: f64 = 0.75;
/// A saturated server carries at least this many times the requests in
/// flight it did at the knee, where it first reached that throughput ...
pub const SATURATED_LOAD_RATIO: f64 = 2.0;
/// ... and at least this many at once on average: with one at a time
/// nothing queues.
pub const SATURATED_MIN_LOAD: f64 = 1.5;
/// ... while each answer takes at least this many times as long: twice as
/// slow for the same work is a queue, not noise. A transaction whose
/// server time is this far above the quiet times queued.
pub const SATURATED_SLOWDOWN: f64 = 2.0;
/// ... and at least this much longer, so that answers of a few milliseconds
/// are not called saturated for doubling (a fifth of what a person notices,
/// [`NOTICED_MS`]).
pub const SATURATED_MIN_EXTRA_MS: f64 = 20.0;

/// Frames listed as evidence of a finding, and kept per kind of event:
/// enough to look at in Wireshark, bounded however large the capture.
pub const EVIDENCE_FRAMES: usize = 20;

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
    fn a_fifth_of_requests_failing_is_critical_and_fewer_a_warning() {
        assert_eq!(failure_severity(0.2), Severity::Critical);
        assert_eq!(failure_severity(1.0 / 17.0), Severity::Warning);
    }

    #[test]
    fn a_structural_finding_is_a_warning_once_a_habit_or_once_it_failed() {
        assert_eq!(structural_severity(2, 0), Severity::Info);
        assert_eq!(structural_severity(3, 0), Severity::Warning);
        assert_eq!(structural_severity(1, 1), Severity::Warning);
    }

    #[test]
    fn one_exchange_over_a_long_path_is_quiet_until_it_breaks_the_flow() {
        assert_eq!(severity(344.0, 344.0, 1.0, 1.0, false), Severity::Info);
        assert_eq!(severity(1_200.0, 120.0, 0.9, 0.9, false), Severity::Warning);
    }
}
