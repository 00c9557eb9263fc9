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
/// Below this share of the time at stake a cause does not matter against the rest.
pub const MATTERS_SHARE: f64 = 0.05;
/// From this share of the time at stake a cause is a main one.
pub const MAIN_SHARE: f64 = 0.2;
/// What a cause cost the actions a person waited on (see `crate::actions`:
/// a request and its answer, or a chain of requests a client made one right
/// after another).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerAction {
    /// The median over the actions it touched.
    pub typical_ms: f64,
    /// The most it cost one action.
    pub worst_ms: f64,
    /// How many actions it touched.
    pub actions: u64,
    /// How many requests and answers it touched.
    pub transactions: u64,
}

/// How loud a finding is, from what it cost each action a person waited on
/// (`felt`), its `share` of the time at stake, whether the packets
/// themselves show it (`seen`: a resend, a shut window, a small segment
/// held until an ACK where the protocol's lengths say it was the rest of a
/// message begun before it; timing alone may coincide once) and whether its time is `waste` (time that exists only
/// because something is wrong: TCP's waits, loss, stalls, pauses) rather
/// than time every exchange spends (round trips, transfer, the server's
/// work). Time is never summed over actions that nobody waited on in
/// sequence.
///
/// - **info** when it takes under 5% of the time at stake, or when no one
///   would notice it: no action waited a second for it (a person's flow
///   broken), and it did not typically cost a noticeable delay (0.1 s of
///   waste, a second of time every exchange spends) that the packets show
///   or that recurred on as many requests as a pattern needs;
/// - **critical** when it is a main cause (20% or more of the time at
///   stake) and typically breaks a person's flow: a second or more per action;
/// - **warning** otherwise.
///
/// So a keystroke's echo across a long path, a page's round trips, or one
/// segment held a tenth of a second that timing alone suggests is never
/// loud, and one answer a person waited seconds for always is.
pub fn severity(felt: PerAction, share: f64, seen: bool, waste: bool) -> Severity {
    let noticed_ms = if waste { NOTICED_MS } else { FLOW_BROKEN_MS };
    let flow_broken_once = felt.worst_ms >= FLOW_BROKEN_MS;
    let recurs = felt.transactions >= PATTERN_REPEATS as u64;
    let noticed_typically = felt.typical_ms >= noticed_ms && (recurs || seen);
    if share < MATTERS_SHARE || !(flow_broken_once || noticed_typically) {
        return Severity::Info;
    }
    if share >= MAIN_SHARE && felt.typical_ms >= FLOW_BROKEN_MS {
        Severity::Critical
    } else {
        Severity::Warning
    }
}

/// From this share of requests failing, application failures are critical:
/// one request in five is more than the odd broken link or bad input, as a
/// fifth of the time at stake makes a cause a main one ([`MAIN_SHARE`]).
pub const FAILED_CRITICAL_SHARE: f64 = 0.2;

/// How loud application failures are, from the `needed_share` of requests
/// that failed while something depended on them (not a site's icon, not a
/// client's question about what the server offers): they cost no time, but
/// any such failure is worth a warning, and critical from
/// [`FAILED_CRITICAL_SHARE`]; failures nothing depended on are info.
pub fn failure_severity(needed_share: f64) -> Severity {
    if needed_share >= FAILED_CRITICAL_SHARE {
        Severity::Critical
    } else if needed_share > 0.0 {
        Severity::Warning
    } else {
        Severity::Info
    }
}

/// How loud connections that never opened are as failures, whatever they
/// cost in time: a warning once more attempts failed than opened (the
/// client could not do what it set out to: no web access, a service down);
/// info when a client fell back to another address or port, or a stray
/// attempt among many that opened was refused.
pub fn setup_failure_severity(never_opened: usize, connections: usize) -> Severity {
    if never_opened > 0 && 2 * never_opened > connections {
        Severity::Warning
    } else {
        Severity::Info
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
/// A queue that delays packets by less than this is the good queue that
/// absorbs bursts, not a standing one: CoDel's target (RFC 8289), the delay
/// a bottleneck's queue may keep for as long as it likes. A full link with
/// a queue this short is how a transfer uses a path well.
pub const STANDING_QUEUE_MS: f64 = 5.0;

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

    fn felt(typical_ms: f64, worst_ms: f64, actions: u64) -> PerAction {
        PerAction {
            typical_ms,
            worst_ms,
            actions,
            transactions: actions,
        }
    }

    #[test]
    fn a_single_fast_answer_is_never_loud() {
        let once = felt(40.0, 40.0, 1);
        assert_eq!(severity(once, 0.9, true, false), Severity::Info);
        assert_eq!(severity(once, 0.9, true, true), Severity::Info);
    }

    #[test]
    fn two_hundred_ms_per_call_is_a_warning_and_a_chain_of_calls_past_a_second_critical() {
        let calls = felt(200.0, 210.0, 50);
        assert_eq!(severity(calls, 0.95, true, true), Severity::Warning);
        let chains = felt(2_000.0, 2_100.0, 5);
        assert_eq!(severity(chains, 0.95, true, true), Severity::Critical);
    }

    #[test]
    fn a_small_share_is_info_however_long() {
        let long = felt(5_000.0, 5_000.0, 10);
        assert_eq!(severity(long, 0.04, true, true), Severity::Info);
    }

    #[test]
    fn a_noticeable_delay_is_loud_where_the_packets_show_it_or_once_it_recurs() {
        let once = felt(150.0, 150.0, 1);
        assert_eq!(severity(once, 0.5, true, true), Severity::Warning);
        // A hold that timing alone shows may have coincided once.
        assert_eq!(severity(once, 0.5, false, true), Severity::Info);
        let thrice = felt(150.0, 150.0, 3);
        assert_eq!(severity(thrice, 0.5, false, true), Severity::Warning);
    }

    #[test]
    fn round_trips_summed_over_many_requests_stay_quiet() {
        let echoes = felt(30.0, 45.0, 97);
        assert_eq!(severity(echoes, 0.9, true, false), Severity::Info);
    }

    #[test]
    fn one_answer_a_person_waited_seconds_for_is_loud_among_fast_ones() {
        let one_slow = felt(5.0, 5_390.0, 6);
        assert_eq!(severity(one_slow, 0.9, true, false), Severity::Warning);
    }

    #[test]
    fn a_fifth_of_requests_failing_is_critical_and_fewer_a_warning() {
        assert_eq!(failure_severity(0.2), Severity::Critical);
        assert_eq!(failure_severity(1.0 / 17.0), Severity::Warning);
        assert_eq!(failure_severity(0.0), Severity::Info);
    }

    #[test]
    fn connections_that_never_opened_are_a_failure_once_a_main_share() {
        assert_eq!(setup_failure_severity(1, 1), Severity::Warning);
        assert_eq!(setup_failure_severity(1, 2), Severity::Info);
        assert_eq!(setup_failure_severity(1, 40), Severity::Info);
    }

    #[test]
    fn a_structural_finding_is_a_warning_once_a_habit_or_once_it_failed() {
        assert_eq!(structural_severity(2, 0), Severity::Info);
        assert_eq!(structural_severity(3, 0), Severity::Warning);
        assert_eq!(structural_severity(1, 1), Severity::Warning);
    }

    #[test]
    fn one_exchange_over_a_long_path_is_quiet_until_it_breaks_the_flow() {
        let long_path = felt(344.0, 344.0, 1);
        assert_eq!(severity(long_path, 1.0, true, false), Severity::Info);
        let broken = felt(1_200.0, 1_200.0, 1);
        assert_eq!(severity(broken, 0.1, true, false), Severity::Warning);
        assert_eq!(severity(broken, 0.9, true, false), Severity::Critical);
    }
}
