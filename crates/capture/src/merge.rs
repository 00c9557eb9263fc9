//! Several captures merged into one timeline by timestamp.

use crate::{open, CaptureError, CaptureReader, Frame};

/// Reads several files as one capture, always taking the earliest next frame
/// (ties go to the earlier file). Frames are renumbered from 1.
pub struct MergedReader {
    readers: Vec<CaptureReader>,
    frames: u64,
}

impl MergedReader {
    pub fn open(paths: &[String]) -> Result<MergedReader, CaptureError> {
        let readers = paths
            .iter()
            .map(|path| open(path))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MergedReader { readers, frames: 0 })
    }

    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        let Some(source) = self.earliest()? else {
            return Ok(None);
        };
        self.frames += 1;
        let number = self.frames;
        let frame = self.readers[source].next_frame()?;
        Ok(frame.map(|frame| Frame {
            number,
            source,
            ..frame
        }))
    }

    /// The reader whose next frame comes first.
    fn earliest(&mut self) -> Result<Option<usize>, CaptureError> {
        if self.readers.len() == 1 {
            return Ok(Some(0));
        }
        let mut best: Option<(i64, usize)> = None;
        for (index, reader) in self.readers.iter_mut().enumerate() {
            if let Some(timestamp) = reader.peek_timestamp()? {
                if best.is_none_or(|(earliest, _)| timestamp < earliest) {
                    best = Some((timestamp, index));
                }
            }
        }
        Ok(best.map(|(_, index)| index))
    }

    pub fn bytes_read(&self) -> u64 {
        self.readers.iter().map(CaptureReader::bytes_read).sum()
    }

    pub fn total_bytes(&self) -> Option<u64> {
        self.readers.iter().map(CaptureReader::total_bytes).sum()
    }
}
