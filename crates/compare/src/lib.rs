//! Two captures side by side.
//!
//! [`compare`] reads two captures of the same traffic taken at two points
//! of its path: it matches their packets, and tells the delay between the
//! points, where packets were lost, which capture dropped some, which point
//! is nearer which host, and when the two were really taken on one segment.
//! [`diff`] reads two captures of the same workload before and after a
//! change, and tells which findings went away, which came, and how each kind
//! of transaction's response time moved.

pub mod diff;
mod losses;
mod packets;
mod pairing;
mod points;
mod render;
mod timing;

pub use losses::Losses;
pub use points::{compare, Comparison, Point, Way};
pub use timing::Delay;
