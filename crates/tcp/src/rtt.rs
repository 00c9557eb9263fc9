//! Round-trip samples from data to the ACK that covers it.
//!
//! Each direction keeps a short queue of its unacknowledged data segments;
//! an ACK from the peer that covers the newest of them yields a sample. A
//! retransmission clears the queue, so no sample is ever taken from an
//! ambiguous ACK (Karn's rule). Each sample is paired with the bytes that
//! were in flight when its segment left: a queue building at a bottleneck
//! shows as round trips that grow with them.

use std::collections::VecDeque;

use crate::seq;
use crate::stack::DELAYED_ACK_MIN_NS;
use crate::summary::RttStats;

/// At most this many segments wait for an ACK; older ones give no sample.
const MAX_UNACKED: usize = 1024;
/// Samples kept for the median; past this, reservoir sampling keeps it fair.
const MAX_KEPT_SAMPLES: usize = 512;

#[derive(Debug, Default)]
pub struct RttTracker {
    /// (sequence end, time sent, bytes in flight once sent)
    unacked: VecDeque<(u32, i64, u64)>,
    samples: Samples,
    /// The longest sample within a delayed-ACK timer of the least: no ACK
    /// held back, so what it adds to the least is the path's own queueing.
    longest_prompt_ns: i64,
}

impl RttTracker {
    /// Gives back what its queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.unacked.shrink_to_fit();
        self.samples.shrink_to_fit();
    }

    /// A new data segment ending at `end_seq` was sent at `time_ns`, leaving
    /// `in_flight` bytes unacknowledged (None when unknown).
    pub fn sent(&mut self, end_seq: u32, time_ns: i64, in_flight: Option<u64>) {
        if self.unacked.len() == MAX_UNACKED {
            self.unacked.pop_front();
        }
        self.unacked
            .push_back((end_seq, time_ns, in_flight.unwrap_or(u64::MAX)));
    }

    /// Data was sent again: ACKs for what is queued are now ambiguous.
    pub fn retransmitted(&mut self) {
        self.unacked.clear();
    }

    /// The peer acknowledged up to `ack` at `time_ns`; returns the sample, if any.
    pub fn acked(&mut self, ack: u32, time_ns: i64) -> Option<i64> {
        let mut newest_covered = None;
        while let Some(&(end_seq, sent_ns, in_flight)) = self.unacked.front() {
            if !seq::at_or_before(end_seq, ack) {
                break;
            }
            newest_covered = Some((sent_ns, in_flight));
            self.unacked.pop_front();
        }
        let (sent_ns, in_flight) = newest_covered?;
        let sample = time_ns - sent_ns;
        (sample >= 0).then(|| {
            let in_flight = (in_flight != u64::MAX).then_some(in_flight);
            self.samples.add(sample, in_flight);
            if sample - self.samples.min_ns < DELAYED_ACK_MIN_NS {
                self.longest_prompt_ns = self.longest_prompt_ns.max(sample);
            }
            sample
        })
    }

    /// The quickest round trip measured so far.
    pub fn least_ns(&self) -> Option<i64> {
        self.samples.least_ns()
    }

    /// The longest round trip measured so far that no delayed ACK
    /// lengthened: how long the path has taken when its queues filled.
    pub fn longest_prompt_ns(&self) -> i64 {
        self.longest_prompt_ns
    }

    pub fn stats(&self) -> RttStats {
        self.samples.stats()
    }
}

/// ACKs that moved a window's right edge, kept to time the data they let go.
const MAX_EDGES: usize = 256;

/// The round trip from the capture point to a sender, bounded from above by
/// its receive window. A sender that stopped within a segment of the
/// window's right edge cannot go past it before an ACK moving the edge has
/// reached it, so from the first ACK seen to allow a byte to that byte
/// leaving, a round trip at least has passed. This holds at any capture
/// point, whatever the handshake showed; a sender that went past the edge
/// as seen shows that some ACK was not seen, and gives no bound.
#[derive(Debug, Default)]
pub struct WindowBound {
    /// (right edge, when first seen), both rising.
    edges: VecDeque<(u32, i64)>,
    /// The end of the sender's newest data, and when it was seen.
    last_sent: Option<(u32, i64)>,
    largest_segment: u32,
    least_ns: Option<i64>,
}

impl WindowBound {
    /// Gives back what its queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.edges.shrink_to_fit();
    }

    /// An ACK seen at `time_ns` let the sender send up to `edge`.
    pub fn allowed(&mut self, edge: u32, time_ns: i64) {
        let rises = self
            .edges
            .back()
            .is_none_or(|&(last, _)| seq::after(edge, last));
        if !rises {
            return;
        }
        if self.edges.len() == MAX_EDGES {
            self.edges.pop_front();
        }
        self.edges.push_back((edge, time_ns));
    }

    /// New data of `len` bytes ending at `end` was seen at `time_ns`.
    pub fn sent(&mut self, end: u32, len: u32, time_ns: i64) {
        self.largest_segment = self.largest_segment.max(len);
        if let Some(bound) = self.bound(end, time_ns) {
            self.least_ns = Some(self.least_ns.map_or(bound, |least| least.min(bound)));
        }
        self.last_sent = Some((end, time_ns));
        // Only the edge in force now, and later ones, can time later data.
        while self.edges.len() > 1 && self.edges[1].1 <= time_ns {
            self.edges.pop_front();
        }
    }

    /// From the ACK that let data ending at `end` go to the data, if the
    /// window had held the sender at its previous data.
    fn bound(&self, end: u32, time_ns: i64) -> Option<i64> {
        let (last_end, last_ns) = self.last_sent?;
        let in_force = self
            .edges
            .iter()
            .take_while(|&&(_, at)| at <= last_ns)
            .last()?
            .0;
        let at_the_edge = !seq::after(last_end, in_force)
            && seq::after(last_end.wrapping_add(self.largest_segment), in_force);
        if !at_the_edge || !seq::after(end, in_force) {
            return None;
        }
        let &(_, allowed_ns) = self
            .edges
            .iter()
            .find(|&&(edge, at)| at > last_ns && !seq::before(edge, end))?;
        Some(time_ns - allowed_ns).filter(|&bound| bound >= 0)
    }

    /// The least bound so far.
    pub fn least_ns(&self) -> Option<i64> {
        self.least_ns
    }
}

/// Durations sampled over a connection: their least, median and greatest,
/// and how they follow the bytes in flight, in a few numbers and a bounded
/// reservoir for the median.
#[derive(Debug, Default)]
pub struct Samples {
    kept_us: Vec<u32>,
    count: u64,
    min_ns: i64,
    max_ns: i64,
    against_in_flight: Correlation,
}

impl Samples {
    /// Gives back what its queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.kept_us.shrink_to_fit();
    }

    pub fn add(&mut self, sample_ns: i64, in_flight: Option<u64>) {
        if self.count == 0 || sample_ns < self.min_ns {
            self.min_ns = sample_ns;
        }
        self.max_ns = self.max_ns.max(sample_ns);
        self.count += 1;
        let micros = u32::try_from(sample_ns / 1000).unwrap_or(u32::MAX);
        if self.kept_us.len() < MAX_KEPT_SAMPLES {
            self.kept_us.push(micros);
        } else {
            // Deterministic reservoir: a multiplicative hash of the sample count picks the slot.
            let slot = self.count.wrapping_mul(0x9e37_79b9_7f4a_7c15) % self.count;
            if let Some(kept) = self.kept_us.get_mut(slot as usize) {
                *kept = micros;
            }
        }
        if let Some(in_flight) = in_flight {
            self.against_in_flight
                .add(in_flight as f64, sample_ns as f64);
        }
    }

    pub fn least_ns(&self) -> Option<i64> {
        (self.count > 0).then_some(self.min_ns)
    }

    pub fn stats(&self) -> RttStats {
        if self.count == 0 {
            return RttStats::default();
        }
        let mut kept = self.kept_us.clone();
        kept.sort_unstable();
        RttStats {
            samples: self.count,
            min_ms: Some(self.min_ns as f64 / 1e6),
            median_ms: Some(f64::from(kept[kept.len() / 2]) / 1e3),
            max_ms: Some(self.max_ns as f64 / 1e6),
            in_flight_correlation: self.against_in_flight.coefficient(),
        }
    }
}

/// Running sums for Pearson's correlation of two series.
#[derive(Debug, Default)]
struct Correlation {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    yy: f64,
    xy: f64,
}

impl Correlation {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.yy += y * y;
        self.xy += x * y;
    }

    /// None with fewer than three pairs or a series that never varies.
    fn coefficient(&self) -> Option<f64> {
        let covariance = self.n * self.xy - self.x * self.y;
        let spread_x = self.n * self.xx - self.x * self.x;
        let spread_y = self.n * self.yy - self.y * self.y;
        (self.n >= 3.0 && spread_x > 0.0 && spread_y > 0.0)
            .then(|| (covariance / (spread_x * spread_y).sqrt()).clamp(-1.0, 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cumulative_ack_samples_the_newest_covered_segment() {
        let mut rtt = RttTracker::default();
        rtt.sent(100, 0, None);
        rtt.sent(200, 5_000_000, None);
        assert_eq!(rtt.acked(200, 15_000_000), Some(10_000_000));
        assert_eq!(rtt.acked(200, 16_000_000), None);
        assert_eq!(rtt.stats().samples, 1);
        assert_eq!(rtt.stats().median_ms, Some(10.0));
    }

    #[test]
    fn no_sample_after_a_retransmission() {
        let mut rtt = RttTracker::default();
        rtt.sent(100, 0, None);
        rtt.retransmitted();
        assert_eq!(rtt.acked(100, 300_000_000), None);
        assert_eq!(rtt.stats().samples, 0);
    }

    #[test]
    fn a_sender_held_at_the_window_edge_bounds_its_round_trip() {
        let mut bound = WindowBound::default();
        bound.allowed(3000, 0);
        bound.sent(1000, 1000, 100);
        bound.sent(3000, 1000, 200);
        assert_eq!(bound.least_ns(), None, "streaming inside the window");
        bound.allowed(4000, 5_000);
        bound.allowed(6000, 6_000);
        bound.sent(5000, 1000, 9_000);
        assert_eq!(
            bound.least_ns(),
            Some(3_000),
            "the ACK allowing 5000 came at 6000"
        );
    }

    #[test]
    fn a_sender_past_the_edge_seen_gives_no_bound() {
        let mut bound = WindowBound::default();
        bound.allowed(2000, 0);
        bound.sent(3000, 1000, 100);
        bound.allowed(5000, 5_000);
        bound.sent(4000, 1000, 5_100);
        assert_eq!(bound.least_ns(), None, "an ACK before 100 was not seen");
    }
}
