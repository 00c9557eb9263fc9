//! What one direction counts segment by segment: the part of its summary
//! that grows with each segment. The rest of the summary (round trips,
//! release lags, the ACK clock, what is left unacknowledged) is read from
//! the direction's trackers once, when it is summarized, and takes no room
//! in a live connection.

use crate::summary::{AckClockStats, DirectionSummary, Retransmissions, RttStats, WindowStats};

/// One direction's counters, named as in [`DirectionSummary`].
#[derive(Debug, Default)]
pub struct Counters {
    pub packets: u64,
    pub data_packets: u64,
    pub wire_bytes: u64,
    pub payload_bytes: u64,
    pub unique_payload_bytes: u64,
    pub retransmissions: Retransmissions,
    pub out_of_order: u64,
    pub lost_segments: u64,
    pub ack_lost_segments: u64,
    pub lost_before_capture: u64,
    pub lost_after_capture: u64,
    pub capture_drops: u64,
    pub duplicate_acks: u64,
    pub sack_acks: u64,
    pub dsacks: u64,
    pub zero_windows: u64,
    /// Zero-window runs that have ended; one still open is added at the summary.
    pub zero_window_ms: f64,
    pub zero_window_probes: u64,
    pub window_full: u64,
    pub window_updates: u64,
    pub keep_alives: u64,
    pub window: WindowStats,
    pub max_bytes_in_flight: u64,
    pub max_idle_ms: f64,
    pub largest_segment: u64,
    pub most_resends: u64,
    pub most_resent_bytes: u64,
}

/// The figures read from a direction's trackers when it is summarized.
pub struct Measured {
    pub rtt: RttStats,
    pub release_lag: RttStats,
    pub ack_clock: AckClockStats,
    pub window_scale_known: bool,
    pub zero_window_ms: f64,
    pub unacknowledged_at_end: u64,
}

impl Counters {
    /// The direction's summary: these counters and what was `measured`.
    pub fn summary(&self, measured: Measured) -> DirectionSummary {
        DirectionSummary {
            packets: self.packets,
            data_packets: self.data_packets,
            wire_bytes: self.wire_bytes,
            payload_bytes: self.payload_bytes,
            unique_payload_bytes: self.unique_payload_bytes,
            retransmissions: self.retransmissions,
            out_of_order: self.out_of_order,
            lost_segments: self.lost_segments,
            ack_lost_segments: self.ack_lost_segments,
            lost_before_capture: self.lost_before_capture,
            lost_after_capture: self.lost_after_capture,
            capture_drops: self.capture_drops,
            duplicate_acks: self.duplicate_acks,
            sack_acks: self.sack_acks,
            dsacks: self.dsacks,
            zero_windows: self.zero_windows,
            zero_window_ms: measured.zero_window_ms,
            zero_window_probes: self.zero_window_probes,
            window_full: self.window_full,
            window_updates: self.window_updates,
            keep_alives: self.keep_alives,
            window: self.window,
            window_scale_known: measured.window_scale_known,
            max_bytes_in_flight: self.max_bytes_in_flight,
            rtt: measured.rtt,
            release_lag: measured.release_lag,
            max_idle_ms: self.max_idle_ms,
            ack_clock: measured.ack_clock,
            largest_segment: self.largest_segment,
            most_resends: self.most_resends,
            most_resent_bytes: self.most_resent_bytes,
            unacknowledged_at_end: measured.unacknowledged_at_end,
        }
    }
}
