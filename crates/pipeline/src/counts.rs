//! What reading counts as frames go by: frames by outcome, the clock, and
//! what the frames without TCP held.

use decode::{NonTcp, Segment, Skip};
use tcp::Repeats;

use crate::copies::Matched;

/// Frame counts by outcome.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub frames: u64,
    pub tcp_segments: u64,
    /// The TCP segments the selection kept: all of them without one.
    pub selected_segments: u64,
    /// Frames that another input file had already captured, left out of the
    /// analysis, and the connections whose matching across files says more.
    #[serde(flatten)]
    pub matched: Matched,
    /// Frames one file holds twice (see [`tcp::Tracker::process`]), left out.
    #[serde(flatten)]
    pub repeats: Repeats,
    pub skipped: SkipCounts,
    pub clock: Clock,
    /// The frames without TCP, by what they carried.
    pub other_traffic: OtherTraffic,
}

/// What the decode stage counts as frames go by: every frame, those
/// without a usable TCP segment by reason and protocol, and the clock of the
/// TCP segments.
#[derive(Debug, Default, Clone, record::Wire)]
pub struct ReadCounts {
    pub frames: u64,
    /// The first frame's time, whatever it carried: offsets count from it,
    /// as Wireshark's relative time does.
    pub first_frame_ns: Option<i64>,
    pub skipped: SkipCounts,
    pub other_traffic: OtherTraffic,
    pub clock: Clock,
}

impl ReadCounts {
    /// One frame, stamped at `timestamp_ns`, and what decoding made of it.
    pub fn count(&mut self, timestamp_ns: i64, decoded: &Result<Segment, Skip>) {
        self.frames += 1;
        self.first_frame_ns.get_or_insert(timestamp_ns);
        match decoded {
            Ok(segment) => self.clock.observe(segment.timestamp_ns),
            Err(skip) => {
                self.skipped.add(*skip);
                if let Skip::NotIp(protocol) | Skip::NotTcp(protocol) = skip {
                    self.other_traffic.add(*protocol);
                }
            }
        }
    }

    /// Adds the counts of frames that came after these (see [`Clock::append`]).
    pub fn append(&mut self, later: &ReadCounts) {
        self.frames += later.frames;
        self.first_frame_ns = self.first_frame_ns.or(later.first_frame_ns);
        self.skipped.add_all(&later.skipped);
        self.other_traffic.add_all(&later.other_traffic);
        self.clock.append(&later.clock);
    }
}

/// Frames that held no TCP, by protocol: what a capture of little TCP holds.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, record::Wire)]
pub struct OtherTraffic {
    pub udp: u64,
    pub icmp: u64,
    pub arp: u64,
    pub other: u64,
}

impl OtherTraffic {
    fn add(&mut self, protocol: NonTcp) {
        let counter = match protocol {
            NonTcp::Udp => &mut self.udp,
            NonTcp::Icmp => &mut self.icmp,
            NonTcp::Arp => &mut self.arp,
            NonTcp::Other => &mut self.other,
        };
        *counter += 1;
    }

    pub fn total(&self) -> u64 {
        self.udp + self.icmp + self.arp + self.other
    }

    fn add_all(&mut self, other: &OtherTraffic) {
        self.udp += other.udp;
        self.icmp += other.icmp;
        self.arp += other.arp;
        self.other += other.other;
    }
}

#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, record::Wire)]
pub struct SkipCounts {
    pub unsupported_link_type: u64,
    pub not_ip: u64,
    pub not_tcp: u64,
    pub ip_fragment: u64,
    pub truncated_header: u64,
    pub malformed_header: u64,
}

impl SkipCounts {
    fn add_all(&mut self, other: &SkipCounts) {
        self.unsupported_link_type += other.unsupported_link_type;
        self.not_ip += other.not_ip;
        self.not_tcp += other.not_tcp;
        self.ip_fragment += other.ip_fragment;
        self.truncated_header += other.truncated_header;
        self.malformed_header += other.malformed_header;
    }

    fn add(&mut self, skip: Skip) {
        let counter = match skip {
            Skip::UnsupportedLinkType => &mut self.unsupported_link_type,
            Skip::NotIp(_) => &mut self.not_ip,
            Skip::NotTcp(_) => &mut self.not_tcp,
            Skip::Fragment => &mut self.ip_fragment,
            Skip::Truncated => &mut self.truncated_header,
            Skip::Malformed => &mut self.malformed_header,
        };
        *counter += 1;
    }
}

/// A step back of the clock at least this long is counted: smaller ones are
/// the usual disorder of a capture taken on several cores.
const STEP_BACK_NS: i64 = 1_000_000;
/// A gap between two frames at least this long is counted as a jump of the clock.
const JUMP_NS: i64 = 86_400_000_000_000;

/// How the capture's clock behaved, frame to frame. Every stage takes its
/// times as they come, with arithmetic that cannot overflow; these counts
/// say when the figures rest on a clock that stepped back or jumped.
#[derive(Debug, Default, Clone, serde::Serialize, record::Wire)]
pub struct Clock {
    /// Frames stamped at least 1 ms before an earlier frame.
    pub steps_back: u64,
    pub largest_step_back_ms: f64,
    /// Gaps of a day or more between one frame and the next.
    pub jumps: u64,
    pub largest_jump_s: f64,
    /// Frames stamped before 1896 or after 2116, counted at the nearest bound.
    pub out_of_range: u64,
    #[serde(skip)]
    pub(crate) first_ns: Option<i64>,
    #[serde(skip)]
    pub(crate) latest_ns: Option<i64>,
}

impl Clock {
    fn observe(&mut self, timestamp_ns: i64) {
        if timestamp_ns <= capture::EARLIEST_TIMESTAMP_NS
            || timestamp_ns >= capture::LATEST_TIMESTAMP_NS
        {
            self.out_of_range += 1;
        }
        let Some(latest) = self.latest_ns else {
            self.first_ns = Some(timestamp_ns);
            self.latest_ns = Some(timestamp_ns);
            return;
        };
        let step = timestamp_ns.saturating_sub(latest);
        if step <= -STEP_BACK_NS {
            self.steps_back += 1;
            self.largest_step_back_ms = self.largest_step_back_ms.max(-step as f64 / 1e6);
        } else if step >= JUMP_NS {
            self.jumps += 1;
            self.largest_jump_s = self.largest_jump_s.max(step as f64 / 1e9);
        }
        self.latest_ns = Some(latest.max(timestamp_ns));
    }

    /// Counts `later` as though its frames had been observed after these:
    /// exact when all of them come at or after the latest of these, as the
    /// files of a rotating capture do.
    pub fn append(&mut self, later: &Clock) {
        let (Some(latest), Some(next)) = (self.latest_ns, later.first_ns) else {
            if self.latest_ns.is_none() {
                *self = later.clone();
            }
            return;
        };
        let out_of_range = self.out_of_range + later.out_of_range;
        self.observe(next);
        self.steps_back += later.steps_back;
        self.largest_step_back_ms = self.largest_step_back_ms.max(later.largest_step_back_ms);
        self.jumps += later.jumps;
        self.largest_jump_s = self.largest_jump_s.max(later.largest_jump_s);
        self.out_of_range = out_of_range;
        self.latest_ns = later.latest_ns.map(|ns| ns.max(latest));
    }

    pub fn is_steady(&self) -> bool {
        self.steps_back == 0 && self.jumps == 0 && self.out_of_range == 0
    }
}

#[cfg(test)]
mod tests {
    use super::Clock;

    const MS: i64 = 1_000_000;
    const START: i64 = 1_700_000_000_000 * MS;

    fn clock_of(times: &[i64]) -> Clock {
        let mut clock = Clock::default();
        for &time in times {
            clock.observe(time);
        }
        clock
    }

    #[test]
    fn a_step_back_of_a_millisecond_or_more_and_a_jump_of_a_day_are_counted() {
        let day = 86_400_000 * MS;
        let clock = clock_of(&[
            START,
            START + 10 * MS,
            START + 9 * MS + 500_000,
            START,
            START + day + 10 * MS,
        ]);
        assert_eq!(clock.steps_back, 1);
        assert_eq!(clock.largest_step_back_ms, 10.0);
        assert_eq!(clock.jumps, 1);
        assert!(!clock.is_steady());
        assert!(clock_of(&[START, START + MS]).is_steady());
    }

    #[test]
    fn a_later_files_clock_appended_counts_as_one_clock_over_both() {
        let (first, second) = (
            [START, START + 5 * MS, START + 2 * MS],
            [START + MS, START + 8 * MS],
        );
        let mut appended = clock_of(&first);
        appended.append(&clock_of(&second));
        let whole = clock_of(&[first.as_slice(), second.as_slice()].concat());
        assert_eq!(appended.steps_back, whole.steps_back);
        assert_eq!(appended.largest_step_back_ms, whole.largest_step_back_ms);
        assert_eq!(appended.latest_ns, whole.latest_ns);
    }
}
