//! Frames in, TCP segments out.
//!
//! Each captured frame is peeled layer by layer (link, IP, tunnels, TCP) into
//! one small, `Copy` [`Segment`] that carries only what the TCP analysis needs.
//! Header bytes are read through checked views over the frame (see [`wire`]);
//! nothing here allocates, and malformed bytes are a [`Skip`], never a panic.
//! Connection tracking is not done here: that is the `tcp` crate's job.

mod layers;
mod segment;
pub mod wire;

pub use layers::decode;
pub use segment::{CapturedPayload, Endpoint, Flags, NonTcp, Options, SackBlocks, Segment, Skip};

/// The time from `from_ns` to `to_ns`; None when `to_ns` comes first. A
/// capture's clock may step back, and a duration across the step is none:
/// every duration a later stage reports is taken through this.
pub fn elapsed_ns(from_ns: i64, to_ns: i64) -> Option<i64> {
    to_ns.checked_sub(from_ns).filter(|elapsed| *elapsed >= 0)
}

/// [`elapsed_ns`] in milliseconds.
pub fn elapsed_ms(from_ns: i64, to_ns: i64) -> Option<f64> {
    elapsed_ns(from_ns, to_ns).map(|elapsed| elapsed as f64 / 1e6)
}
