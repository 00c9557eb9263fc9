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
}

impl RttTracker {
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
            sample
        })
    }

    /// The quickest round trip measured so far.
    pub fn least_ns(&self) -> Option<i64> {
        self.samples.least_ns()
    }

    pub fn stats(&self) -> RttStats {
        self.samples.stats()
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
}
