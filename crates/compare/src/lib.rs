//! Two captures side by side.
//!
//! [`compare`] reads two captures of the same traffic taken at two points
//! of its path: it matches their packets, and tells the delay between the
//! points, where packets were lost, which capture dropped some, which point
//! is nearer which host, and when the two were really taken on one segment.
//! [`proxy`] reads the two sides of a proxy that terminates TCP: it pairs
//! each client connection with the proxy's connection to the server, and
//! tells the time the proxy added and why.
//! [`diff`] reads two captures of the same workload before and after a
//! change, and tells which findings went away, which came, and how each kind
//! of transaction's response time moved, and sets both runs' throughput,
//! window and retransmissions over time on shared axes ([`series`]).

pub mod diff;
mod losses;
mod packets;
mod pairing;
mod points;
pub mod proxy;
mod render;
pub mod series;
mod timing;
mod work;

pub use losses::Losses;
pub use points::{compare, Comparison, Point, Way};
pub use timing::Delay;
