//! A zstd stream read block by block, so that damage costs only what follows it.
//!
//! The decoder is offered no more input than it asks for next (its hint: a
//! block, or a frame's checksum). Each call then decodes at most one block,
//! and the output of every block before a damaged one, or before a frame's
//! bad checksum, has been handed out when the error comes. Offered all the
//! input at once, the decoder would drop the output of its last call with
//! the error: everything decoded in the same read.

use std::io::{self, BufRead, Read};

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

/// Input offered before the decoder has said what it wants: a frame header's start.
const FIRST_HINT: usize = 5;
const FRAME_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// A skippable frame's magic is 0x184D2A50 to 0x184D2A5F, little-endian:
/// these are its last three bytes.
const SKIPPABLE_MAGIC_TAIL: [u8; 3] = [0x2a, 0x4d, 0x18];

/// Whether `head` begins a zstd stream: a frame, or a skippable frame
/// (metadata some writers put first).
pub fn starts_a_frame(head: &[u8]) -> bool {
    head.starts_with(&FRAME_MAGIC)
        || (head.first().is_some_and(|byte| byte & 0xf0 == 0x50)
            && head.get(1..4) == Some(&SKIPPABLE_MAGIC_TAIL[..]))
}

pub struct Unzstd<R> {
    source: R,
    decoder: Decoder<'static>,
    /// Input the decoder asks for next; 0 between frames.
    hint: usize,
}

impl<R: BufRead> Unzstd<R> {
    pub fn new(source: R) -> io::Result<Self> {
        Ok(Unzstd {
            source,
            decoder: Decoder::new()?,
            hint: FIRST_HINT,
        })
    }
}

impl<R: BufRead> Read for Unzstd<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let available = self.source.fill_buf()?;
            let offered = &available[..available.len().min(self.hint.max(1))];
            let at_end = offered.is_empty();
            if at_end && self.hint == 0 {
                return Ok(0);
            }
            let mut input = InBuffer::around(offered);
            let mut output = OutBuffer::around(&mut *out);
            let hint = self.decoder.run(&mut input, &mut output)?;
            let (consumed, written) = (input.pos(), output.pos());
            self.source.consume(consumed);
            self.hint = hint;
            if written > 0 {
                return Ok(written);
            }
            if at_end && hint != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "zstd stream ends inside a frame",
                ));
            }
        }
    }
}
