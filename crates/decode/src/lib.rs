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
