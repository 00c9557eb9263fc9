//! What the connection table learns across connections, in the capture's
//! order: each host's latest IP identification, when to sweep the table,
//! and whether the capture drops packets.
//!
//! A capture's connections may be split into shards, each with a tracker
//! of its own, and still be read as one table reads them: the reader notes
//! each host's numbering and the sweeps for every segment in the capture's
//! order ([`HostNumbering`], [`SweepClock`]) and tells the shards; drops
//! each shard learns alone, noting where its reading rested on not knowing
//! of them ([`DropsSeen`]), so that a disagreement is found and the shards
//! read again knowing ([`CaptureDrops::KnownAfter`]).

use std::net::IpAddr;

use decode::Segment;
use rustc_hash::FxHashMap;

use crate::tracker::{flow_key, FlowKey};

/// Hosts whose latest IP identification is remembered; past this many
/// (a flood from spoofed addresses) the memory starts afresh.
const HOSTS_REMEMBERED: usize = 1 << 16;
/// How often (in capture time) the table is swept for connections to retire.
const SWEEP_INTERVAL_NS: i64 = 10_000_000_000;

/// Each host's latest nonzero IP identification, and the flow it numbered.
#[derive(Default)]
pub struct HostNumbering {
    latest: FxHashMap<IpAddr, (u16, FlowKey)>,
}

impl HostNumbering {
    /// Notes `segment`'s IP identification as its host's latest; returns
    /// the one the host gave its previous packet, if that was on another
    /// flow. (A connection replaced on its flow has no numbers of its
    /// sender's yet, so another flow is another connection.)
    pub fn note(&mut self, segment: &Segment) -> Option<u16> {
        self.note_on(segment, flow_key(segment))
    }

    /// [`HostNumbering::note`] for a segment of `flow`, its flow's key.
    pub(crate) fn note_on(&mut self, segment: &Segment, flow: FlowKey) -> Option<u16> {
        let id = segment.ip_id.filter(|&id| id != 0)?;
        if self.latest.len() >= HOSTS_REMEMBERED {
            self.latest.clear();
        }
        let (other, on) = self.latest.insert(segment.src.ip, (id, flow))?;
        (on != flow).then_some(other)
    }
}

/// When the connection table is swept: after a segment that comes more
/// than `SWEEP_INTERVAL_NS` (10 s) of capture time after the last sweep.
#[derive(Default, Clone, Copy)]
pub struct SweepClock {
    latest_ns: i64,
    last_sweep_ns: i64,
}

impl SweepClock {
    /// Notes a segment's time; returns the time to sweep at once the
    /// segment is read, when a sweep is due.
    pub fn after(&mut self, timestamp_ns: i64) -> Option<i64> {
        self.latest_ns = self.latest_ns.max(timestamp_ns);
        let due = self.latest_ns.saturating_sub(self.last_sweep_ns) > SWEEP_INTERVAL_NS;
        due.then(|| {
            self.last_sweep_ns = self.latest_ns;
            self.latest_ns
        })
    }
}

/// How a tracker knows that the capture drops packets their receivers got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaptureDrops {
    /// From its own connections, from the first segment that acknowledged
    /// data the capture never saw.
    #[default]
    Learnt,
    /// Known beforehand: from the frame after this one (None: never).
    KnownAfter(Option<u64>),
}

/// What a tracker saw of the capture dropping packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DropsSeen {
    /// The first frame that acknowledged data the capture never saw.
    pub first_frame: Option<u64>,
    /// The last frame whose reading rested on no drops being known yet.
    pub last_resting_frame: Option<u64>,
}

impl DropsSeen {
    /// The first frame of all shards' that acknowledged data the capture
    /// never saw: where one tracker over every connection would have
    /// learnt that the capture drops packets.
    pub fn first_of(shards: &[DropsSeen]) -> Option<u64> {
        shards.iter().filter_map(|seen| seen.first_frame).min()
    }

    /// Whether shards that learnt of drops each alone read every segment
    /// as one tracker over all their connections would have: none rested
    /// on not knowing of drops another shard had seen before.
    pub fn read_as_one(shards: &[DropsSeen]) -> bool {
        let Some(first) = Self::first_of(shards) else {
            return true;
        };
        shards
            .iter()
            .all(|seen| seen.last_resting_frame.is_none_or(|frame| frame <= first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_that_rested_on_no_drops_before_any_was_seen_read_as_one() {
        let shards = [
            DropsSeen {
                first_frame: Some(50),
                last_resting_frame: Some(40),
            },
            DropsSeen {
                first_frame: None,
                last_resting_frame: Some(50),
            },
        ];
        assert_eq!(DropsSeen::first_of(&shards), Some(50));
        assert!(DropsSeen::read_as_one(&shards));
    }

    #[test]
    fn a_shard_that_rested_on_no_drops_after_another_saw_one_did_not() {
        let shards = [
            DropsSeen {
                first_frame: Some(50),
                last_resting_frame: None,
            },
            DropsSeen {
                first_frame: Some(90),
                last_resting_frame: Some(51),
            },
        ];
        assert!(!DropsSeen::read_as_one(&shards));
    }

    #[test]
    fn the_table_is_swept_once_an_interval_has_passed() {
        let mut clock = SweepClock::default();
        let start = 1_000 * SWEEP_INTERVAL_NS;
        assert_eq!(clock.after(start), Some(start));
        assert_eq!(clock.after(start + SWEEP_INTERVAL_NS), None);
        assert_eq!(clock.after(start - 5), None);
        let later = start + SWEEP_INTERVAL_NS + 1;
        assert_eq!(clock.after(later), Some(later));
    }
}
