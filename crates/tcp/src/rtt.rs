//! Round-trip samples from data to the ACK that covers it.
//!
//! Each direction keeps a short queue of its unacknowledged data segments;
//! an ACK from the peer that covers the newest of them yields a sample. A
//! retransmission clears the queue, so no sample is ever taken from an
//! ambiguous ACK (Karn's rule).

use std::collections::VecDeque;

use crate::seq;
use crate::summary::RttStats;

/// At most this many segments wait for an ACK; older ones give no sample.
const MAX_UNACKED: usize = 1024;
/// Samples kept for the median; past this, reservoir sampling keeps it fair.
const MAX_KEPT_SAMPLES: usize = 512;

#[derive(Debug, Default)]
pub struct RttTracker {
    unacked: VecDeque<(u32, i64)>,
    kept_us: Vec<u32>,
    samples: u64,
    min_ns: i64,
    max_ns: i64,
}

impl RttTracker {
    /// A new data segment ending at `end_seq` was sent at `time_ns`.
    pub fn sent(&mut self, end_seq: u32, time_ns: i64) {
        if self.unacked.len() == MAX_UNACKED {
            self.unacked.pop_front();
        }
        self.unacked.push_back((end_seq, time_ns));
    }

    /// Data was sent again: ACKs for what is queued are now ambiguous.
    pub fn retransmitted(&mut self) {
        self.unacked.clear();
    }

    /// The peer acknowledged up to `ack` at `time_ns`; returns the sample, if any.
    pub fn acked(&mut self, ack: u32, time_ns: i64) -> Option<i64> {
        let mut newest_covered = None;
        while let Some(&(end_seq, sent_ns)) = self.unacked.front() {
            if !seq::at_or_before(end_seq, ack) {
                break;
            }
            newest_covered = Some(sent_ns);
            self.unacked.pop_front();
        }
        let sample = time_ns - newest_covered?;
        (sample >= 0).then(|| {
            self.record(sample);
            sample
        })
    }

    fn record(&mut self, sample_ns: i64) {
        if self.samples == 0 || sample_ns < self.min_ns {
            self.min_ns = sample_ns;
        }
        self.max_ns = self.max_ns.max(sample_ns);
        self.samples += 1;
        let micros = u32::try_from(sample_ns / 1000).unwrap_or(u32::MAX);
        if self.kept_us.len() < MAX_KEPT_SAMPLES {
            self.kept_us.push(micros);
        } else {
            // Deterministic reservoir: a multiplicative hash of the sample count picks the slot.
            let slot = self.samples.wrapping_mul(0x9e37_79b9_7f4a_7c15) % self.samples;
            if let Some(kept) = self.kept_us.get_mut(slot as usize) {
                *kept = micros;
            }
        }
    }

    pub fn stats(&self) -> RttStats {
        if self.samples == 0 {
            return RttStats::default();
        }
        let mut kept = self.kept_us.clone();
        kept.sort_unstable();
        RttStats {
            samples: self.samples,
            min_ms: Some(self.min_ns as f64 / 1e6),
            median_ms: Some(f64::from(kept[kept.len() / 2]) / 1e3),
            max_ms: Some(self.max_ns as f64 / 1e6),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cumulative_ack_samples_the_newest_covered_segment() {
        let mut rtt = RttTracker::default();
        rtt.sent(100, 0);
        rtt.sent(200, 5_000_000);
        assert_eq!(rtt.acked(200, 15_000_000), Some(10_000_000));
        assert_eq!(rtt.acked(200, 16_000_000), None);
        assert_eq!(rtt.stats().samples, 1);
        assert_eq!(rtt.stats().median_ms, Some(10.0));
    }

    #[test]
    fn no_sample_after_a_retransmission() {
        let mut rtt = RttTracker::default();
        rtt.sent(100, 0);
        rtt.retransmitted();
        assert_eq!(rtt.acked(100, 300_000_000), None);
        assert_eq!(rtt.stats().samples, 0);
    }
}
