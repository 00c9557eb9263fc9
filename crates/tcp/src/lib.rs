//! Segments in, connections and analysis events out.
//!
//! The [`Tracker`] follows every TCP connection in a capture: it splits a
//! reused 4-tuple into instances, keeps per-direction sequence state, raises
//! Wireshark's `tcp.analysis.*` events, measures RTT, and hands back a
//! [`ConnectionSummary`] per connection. State is per live connection; closed
//! connections are summarized and their state dropped. Request/response
//! transactions are the next stage's job, not this one's.

mod capture_wide;
mod clock;
mod connection;
mod counters;
mod direction;
mod event;
mod holes;
mod ip_id;
mod recorded_twice;
mod release;
mod rtt;
mod send_time;
mod seq;
mod services;
pub mod stack;
mod summary;
mod syn_flood;
mod tracker;
mod view;

pub use capture_wide::{CaptureDrops, DropsSeen, HostNumbering, SweepClock};
pub use direction::SideRtts;
pub use event::{Direction, Event, EventKind, EventSet};
pub use recorded_twice::Repeats;
pub use release::{Lacked, Release, Wait};
pub use seq::SeqNumber;
pub use summary::{
    AckClockStats, Close, CloseHow, ConnState, ConnectionSummary, DirectionSummary, Handshake,
    PathRtt, Retransmissions, Role, RttStats, SynOptions, WindowStats,
};
pub use syn_flood::{merge_unanswered, Sources, SynAttempt, UnansweredSyns};
pub use tracker::{Departed, Tracked, Tracker, Trimmed};
pub use view::{SegmentView, Wire};
