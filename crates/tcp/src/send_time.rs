//! How long a sender's segments queued on their way to the capture point,
//! read from the sender's own clock: the TCP timestamp (TSval) it writes on
//! each segment as it leaves.
//!
//! A segment reaches the capture point the path's fixed delay after it left,
//! plus whatever it waited in queues on the way. Against the capture's
//! clock, arrival minus TSval is that delay plus a constant offset between
//! the clocks, so its least over the connection is the delay with no queue,
//! and what a segment shows above the least it spent queued. TSval counts
//! whole ticks, so a tick of that is the clock's own rounding, not a queue.
//!
//! Seen at the sender's side nothing queues before the capture point and
//! this reads zero; seen at the receiver's, behind a bottleneck, it is the
//! standing queue that the fixed round trip of the handshake misses.
//!
//! The echo bounds it. A segment echoes (TSecr) the newest TSval of the
//! peer's that reached its sender, so it left no sooner than a round trip
//! after the capture point first saw the peer send that TSval: what it
//! queued is at most its arrival less that. A clock whose tick is none of
//! those known is thereby kept from inventing queues.

use std::collections::VecDeque;

use crate::seq;

/// The tick lengths TCP stacks count TSval in: a microsecond, a millisecond
/// (Linux since 4.13, the BSDs, macOS, Windows), the 4 ms and 10 ms
/// jiffies of older Linux kernels, and the 500 ms slow timer of older BSDs.
const TICKS_NS: [i64; 5] = [1_000, 1_000_000, 4_000_000, 10_000_000, 500_000_000];

/// TSvals remembered for the peer to echo; an echo older than these gives no bound.
const STAMPS_KEPT: usize = 4096;

/// Ticks a span must cover before the clock is read: a wrong tick has
/// drifted by this many ticks' difference by then.
const TICKS_TO_LEARN: u32 = 10;

/// One direction's view of its sender's clock.
#[derive(Debug, Default)]
pub struct SenderClock {
    /// The first segment's arrival and TSval.
    first: Option<(i64, u32)>,
    /// For each candidate tick, the least and the most of arrival minus
    /// departure seen since the first segment.
    offsets: [(i64, i64); TICKS_NS.len()],
}

impl SenderClock {
    /// A segment stamped `tsval` arrived at `arrival_ns`; returns how long it
    /// queued between its sender and the capture point, once the clock has
    /// run long enough to be read.
    pub fn queued_ns(&mut self, arrival_ns: i64, tsval: u32) -> Option<i64> {
        let Some((first_ns, first_tsval)) = self.first else {
            self.first = Some((arrival_ns, tsval));
            return None;
        };
        if seq::before(tsval, first_tsval) {
            return None;
        }
        let ticks = tsval.wrapping_sub(first_tsval);
        for (tick_ns, (least, most)) in TICKS_NS.iter().zip(&mut self.offsets) {
            let offset = arrival_ns - (first_ns + i64::from(ticks) * tick_ns);
            *least = (*least).min(offset);
            *most = (*most).max(offset);
        }
        if ticks < TICKS_TO_LEARN {
            return None;
        }
        let (tick_ns, least) = self.tick();
        let offset = arrival_ns - (first_ns + i64::from(ticks) * tick_ns);
        Some((offset - least - tick_ns).max(0))
    }

    /// The tick whose offsets stay closest together, and their least. A
    /// queue moves the offsets only as far as it grows; a wrong tick moves
    /// them further with every tick, without bound.
    fn tick(&self) -> (i64, i64) {
        let mut best = (TICKS_NS[0], self.offsets[0]);
        for (&tick, &(least, most)) in TICKS_NS.iter().zip(&self.offsets).skip(1) {
            let (_, (best_least, best_most)) = best;
            if most - least < best_most - best_least {
                best = (tick, (least, most));
            }
        }
        let (tick, (least, _)) = best;
        (tick, least)
    }
}

/// When the capture point first saw each of a side's recent TSvals.
#[derive(Debug, Default)]
pub struct Stamps {
    first_seen: VecDeque<(u32, i64)>,
    /// The stamp looked up last and what was found, until another is
    /// noted: the segments of a flight mostly echo one stamp.
    last_lookup: Option<(u32, Option<i64>)>,
}

impl Stamps {
    /// Gives back what its queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.first_seen.shrink_to_fit();
    }

    pub fn note(&mut self, tsval: u32, seen_ns: i64) {
        if self
            .first_seen
            .back()
            .is_some_and(|&(last, _)| !seq::after(tsval, last))
        {
            return;
        }
        if self.first_seen.len() == STAMPS_KEPT {
            self.first_seen.pop_front();
        }
        self.first_seen.push_back((tsval, seen_ns));
        self.last_lookup = None;
    }

    /// When `tsval` was first seen, if it is still remembered.
    pub fn first_seen_ns(&mut self, tsval: u32) -> Option<i64> {
        if let Some((stamp, seen_ns)) = self.last_lookup {
            if stamp == tsval {
                return seen_ns;
            }
        }
        let index = self
            .first_seen
            .partition_point(|&(stamp, _)| seq::before(stamp, tsval));
        let seen_ns = self
            .first_seen
            .get(index)
            .filter(|&&(stamp, _)| stamp == tsval)
            .map(|&(_, seen_ns)| seen_ns);
        self.last_lookup = Some((tsval, seen_ns));
        seen_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    #[test]
    fn a_steady_path_shows_no_queue() {
        let mut clock = SenderClock::default();
        for k in 0..50 {
            let queued = clock.queued_ns(7 * MS + k * MS, 1000 + k as u32);
            assert_eq!(queued, (k >= 10).then_some(0));
        }
    }

    #[test]
    fn a_growing_queue_shows_above_the_least_delay() {
        let mut clock = SenderClock::default();
        for k in 0..20 {
            clock.queued_ns(k * MS, k as u32);
        }
        // Sent 30 ms after the first, seen 80 ms after it: 50 ms queued, less a tick.
        assert_eq!(clock.queued_ns(80 * MS, 30), Some(49 * MS));
    }

    #[test]
    fn an_echo_is_found_by_the_stamp_it_echoes() {
        let mut stamps = Stamps::default();
        stamps.note(10, 100);
        stamps.note(10, 150);
        stamps.note(12, 300);
        assert_eq!(stamps.first_seen_ns(10), Some(100));
        assert_eq!(stamps.first_seen_ns(12), Some(300));
        assert_eq!(stamps.first_seen_ns(11), None);
    }

    #[test]
    fn the_tick_is_learned_from_the_span() {
        let mut clock = SenderClock::default();
        clock.queued_ns(0, 0);
        clock.queued_ns(100 * MS, 10);
        assert_eq!(clock.tick().0, 10 * MS);
        assert_eq!(clock.queued_ns(300 * MS, 20), Some(90 * MS));
    }
}
