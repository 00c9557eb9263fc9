//! The ACK clock of one direction's data: how fast and how evenly the peer's
//! ACKs release it (a bottleneck link spaces them evenly at its own rate),
//! and the pauses where the sender sat waiting for a late, delayed ACK.
//!
//! Everything here is a running sum: a few numbers per direction, whatever
//! the length of the connection.

use crate::stack::{DELAYED_ACK_MAX_NS, DELAYED_ACK_MIN_NS, HOST_REACTION_NS};
use crate::summary::AckClockStats;

/// What one ACK from the peer did to this direction's data.
#[derive(Debug, Clone, Copy)]
pub struct Ack {
    pub at_ns: i64,
    /// Bytes of this direction's data it newly acknowledged.
    pub bytes: u64,
    /// Whether this direction's data remains unacknowledged after it.
    pub leaves_outstanding: bool,
    /// A bare ACK, with no data of the peer sent since this direction's last data.
    pub bare: bool,
}

#[derive(Debug, Default)]
pub struct AckClock {
    last_data_ns: Option<i64>,
    largest_segment: u64,
    /// The last ACK that moved forward, and whether it left data outstanding.
    last_advance: Option<(i64, bool)>,
    /// Bytes acknowledged at the same instant as the last advance, not yet in a sample.
    pending_bytes: u64,
    /// When a late bare ACK covered everything this side had sent.
    late_ack_ns: Option<i64>,
    busy_ns: i64,
    busy_bytes: u64,
    samples: u64,
    /// Byte-weighted sums of ln(rate) and its square, for the spread.
    log_rate_sum: f64,
    log_rate_square_sum: f64,
    waits: u64,
    wait_ns: i64,
}

impl AckClock {
    pub fn last_data_ns(&self) -> Option<i64> {
        self.last_data_ns
    }

    /// `len` bytes of new data left this side at `at_ns`; `rtt_ns` is the
    /// handshake's round trip (0 if unknown).
    pub fn sent(&mut self, at_ns: i64, len: u32, rtt_ns: i64) {
        self.largest_segment = self.largest_segment.max(u64::from(len));
        let resumed_on_late_ack = self
            .late_ack_ns
            .take()
            // Resumed within a round trip and the host's reaction: it was waiting for the ACK.
            .is_some_and(|ack_ns| at_ns - ack_ns <= rtt_ns + HOST_REACTION_NS);
        if let (true, Some(last)) = (resumed_on_late_ack, self.last_data_ns) {
            self.waits += 1;
            self.wait_ns += at_ns - last;
        }
        self.last_data_ns = Some(at_ns);
    }

    /// The peer acknowledged more of this side's data.
    pub fn acked(&mut self, ack: Ack, rtt_ns: i64) {
        self.note_late_ack(ack, rtt_ns);
        let Some((previous_ns, busy)) = self.last_advance else {
            self.last_advance = Some((ack.at_ns, ack.leaves_outstanding));
            return;
        };
        if !busy {
            self.last_advance = Some((ack.at_ns, ack.leaves_outstanding));
            return;
        }
        let bytes = ack.bytes + self.pending_bytes;
        let elapsed_ns = ack.at_ns - previous_ns;
        if elapsed_ns <= 0 {
            // ACKs in one instant: their bytes join the next interval's sample.
            self.pending_bytes = bytes;
            self.last_advance = Some((previous_ns, ack.leaves_outstanding));
            return;
        }
        self.pending_bytes = 0;
        self.record(bytes, elapsed_ns);
        self.last_advance = Some((ack.at_ns, ack.leaves_outstanding));
    }

    fn record(&mut self, bytes: u64, elapsed_ns: i64) {
        let log_rate = (bytes as f64 * 1e9 / elapsed_ns as f64).ln();
        let weight = bytes as f64;
        self.samples += 1;
        self.busy_ns += elapsed_ns;
        self.busy_bytes += bytes;
        self.log_rate_sum += weight * log_rate;
        self.log_rate_square_sum += weight * log_rate * log_rate;
    }

    /// A bare ACK of less than two full segments that covers all that was
    /// sent, long after the last of it: the receiver held it back on purpose
    /// (receivers acknowledge every second full segment at once).
    fn note_late_ack(&mut self, ack: Ack, rtt_ns: i64) {
        self.late_ack_ns = None;
        let Some(last_data) = self.last_data_ns else {
            return;
        };
        let beyond_round_trip = ack.at_ns - last_data - rtt_ns;
        let late = (DELAYED_ACK_MIN_NS..=DELAYED_ACK_MAX_NS).contains(&beyond_round_trip);
        let held_back = ack.bytes < 2 * self.largest_segment;
        if late && held_back && ack.bare && !ack.leaves_outstanding {
            self.late_ack_ns = Some(ack.at_ns);
        }
    }

    pub fn stats(&self) -> AckClockStats {
        let measured = self.busy_ns > 0 && self.busy_bytes > 0;
        let weight = self.busy_bytes as f64;
        let spread = measured.then(|| {
            let mean = self.log_rate_sum / weight;
            (self.log_rate_square_sum / weight - mean * mean)
                .max(0.0)
                .sqrt()
        });
        AckClockStats {
            samples: self.samples,
            busy_ms: self.busy_ns as f64 / 1e6,
            bytes_per_s: measured.then(|| weight * 1e9 / self.busy_ns as f64),
            spread,
            delayed_ack_waits: self.waits,
            delayed_ack_wait_ms: self.wait_ns as f64 / 1e6,
        }
    }
}
