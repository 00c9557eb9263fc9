//! Messages that open with a header of a fixed size saying how long a body
//! follows (TLS records, DNP3 frames), read across segments.

use super::{Asks, Completed, Framing, Step};

/// What a protocol says of its `N`-byte headers.
pub trait Headed<const N: usize> {
    /// The length of the body after a complete `header`, given the first
    /// bytes of that body the capture kept; none when it is no header of
    /// the protocol.
    fn body_len(&mut self, header: &[u8; N], body: &[u8]) -> Option<u64>;
    /// What the message `header` opened asks for, once it has ended.
    fn asks(&self, header: &[u8; N]) -> Asks;
    /// Whether the end of the body `header` opened ends the application's
    /// message too, rather than a piece of it (a TLS record of application
    /// data carries any part of whatever the application wrote).
    fn ends_message(&self, _header: &[u8; N]) -> bool {
        true
    }
}

/// One direction's messages: the header read so far, or the body's bytes
/// still to come.
#[derive(Debug)]
pub struct HeaderThenBody<const N: usize> {
    header: [u8; N],
    have: usize,
    body_left: u64,
    completed: Completed,
}

impl<const N: usize> HeaderThenBody<N> {
    pub fn new() -> Self {
        HeaderThenBody {
            header: [0; N],
            have: 0,
            body_left: 0,
            completed: Completed::default(),
        }
    }

    /// What the messages the last bytes completed ask for.
    pub fn asks(&self) -> Option<Asks> {
        self.completed.0
    }

    /// Reads a segment's `len` bytes, of which the capture kept `captured`.
    pub fn take(&mut self, captured: &[u8], len: usize, protocol: &mut impl Headed<N>) -> Step {
        self.completed = Completed::default();
        let mut at = 0;
        while at < len {
            if self.body_left > 0 {
                let skipped = self.body_left.min((len - at) as u64);
                self.body_left -= skipped;
                at += skipped as usize;
                if self.body_left == 0 {
                    self.end(protocol);
                }
                continue;
            }
            let available = captured.get(at..len.min(captured.len())).unwrap_or(&[]);
            if available.is_empty() {
                return Step::Lost;
            }
            let taken = (N - self.have).min(available.len());
            self.header[self.have..self.have + taken].copy_from_slice(&available[..taken]);
            self.have += taken;
            at += taken;
            if self.have < N {
                continue;
            }
            let body = captured.get(at..).unwrap_or_default();
            let Some(body_len) = protocol.body_len(&self.header, body) else {
                return Step::Lost;
            };
            self.body_left = body_len;
            if body_len == 0 {
                self.end(protocol);
            }
        }
        Step::Framed(if self.have > 0 || self.body_left > 0 {
            Framing::Unfinished
        } else if protocol.ends_message(&self.header) {
            Framing::Complete
        } else {
            Framing::Unknown
        })
    }

    fn end(&mut self, protocol: &impl Headed<N>) {
        self.completed.note(protocol.asks(&self.header));
        self.have = 0;
    }
}
