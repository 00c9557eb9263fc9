//! Several captures merged into one timeline by timestamp, as from a ring
//! buffer's rotation or from capture points on both ends of a link.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{open, CaptureError, CaptureReader, Frame, MapAhead};

/// Reads several files as one capture, always taking the earliest next frame
/// (ties go to the earlier file). Frames are renumbered from 1.
pub struct MergedReader {
    readers: Vec<CaptureReader>,
    /// Next timestamp and index of each reader with frames left; unused for one file.
    queue: BinaryHeap<Reverse<(i64, usize)>>,
    /// The reader that handed out the last frame, to be queued again.
    last: Option<usize>,
    frames: u64,
}

impl MergedReader {
    pub fn open(paths: &[String]) -> Result<MergedReader, CaptureError> {
        let readers = paths
            .iter()
            .map(|path| open(path))
            .collect::<Result<Vec<_>, _>>()?;
        let mut merged = MergedReader {
            queue: BinaryHeap::with_capacity(readers.len()),
            last: None,
            frames: 0,
            readers,
        };
        if merged.readers.len() > 1 {
            for index in 0..merged.readers.len() {
                merged.enqueue(index)?;
            }
        }
        Ok(merged)
    }

    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        let Some(source) = self.earliest()? else {
            return Ok(None);
        };
        let Some(reader) = self.readers.get_mut(source) else {
            return Ok(None);
        };
        let Some(frame) = reader.next_frame()? else {
            return Ok(None);
        };
        self.frames += 1;
        Ok(Some(Frame {
            number: self.frames,
            source,
            ..frame
        }))
    }

    /// The reader whose next frame comes first.
    fn earliest(&mut self) -> Result<Option<usize>, CaptureError> {
        if self.readers.len() == 1 {
            return Ok(Some(0));
        }
        if let Some(last) = self.last.take() {
            self.enqueue(last)?;
        }
        self.last = self.queue.pop().map(|Reverse((_, index))| index);
        Ok(self.last)
    }

    /// Queues a reader by its next frame's time, unless it has none left.
    fn enqueue(&mut self, index: usize) -> Result<(), CaptureError> {
        let Some(reader) = self.readers.get_mut(index) else {
            return Ok(());
        };
        if let Some(timestamp) = reader.peek_timestamp()? {
            self.queue.push(Reverse((timestamp, index)));
        }
        Ok(())
    }

    /// For one mapped file: a handle that maps its pages ahead of this
    /// reader, for another thread to call with [`MergedReader::bytes_read`]
    /// (see [`MapAhead`]).
    pub fn map_ahead(&self) -> Option<MapAhead> {
        match self.readers.as_slice() {
            [reader] => reader.map_ahead(),
            _ => None,
        }
    }

    /// Bytes taken from all the files so far.
    pub fn bytes_read(&self) -> u64 {
        self.readers.iter().map(CaptureReader::bytes_read).sum()
    }

    /// The files' total size, when every size is known.
    pub fn total_bytes(&self) -> Option<u64> {
        self.readers.iter().map(CaptureReader::total_bytes).sum()
    }
}
