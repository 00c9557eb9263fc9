//! Several captures merged into one timeline by timestamp, as from a ring
//! buffer's rotation or from capture points on both ends of a link.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::{open, CaptureError, CaptureReader, Frame, MapAhead, MappedFile};

/// Reads several files as one capture, always taking the earliest next frame
/// (ties go to the earlier file). Frames are renumbered from 1. Of several
/// files, one that cannot be read to its end stops at its error, which
/// [`MergedReader::failures`] keeps, and the others are read on.
pub struct MergedReader {
    readers: Vec<CaptureReader>,
    /// Each reader's place among the files given.
    sources: Vec<usize>,
    /// Next timestamp and index of each reader with frames left; unused for one file.
    queue: BinaryHeap<Reverse<(i64, usize)>>,
    /// The reader that handed out the last frame, to be queued again.
    last: Option<usize>,
    frames: u64,
    /// How many files were given.
    files: usize,
    /// Several files were given: they are merged, and a failed one left behind.
    merging: bool,
    /// The files that failed, by their place among the files given.
    failures: Vec<(usize, CaptureError)>,
}

impl MergedReader {
    /// Fails only when no file opens: of several, the ones that do are read.
    pub fn open(paths: &[String]) -> Result<MergedReader, CaptureError> {
        let mut merged = MergedReader {
            readers: Vec::with_capacity(paths.len()),
            sources: Vec::with_capacity(paths.len()),
            queue: BinaryHeap::with_capacity(paths.len()),
            last: None,
            frames: 0,
            files: paths.len(),
            merging: paths.len() > 1,
            failures: Vec::new(),
        };
        for (source, path) in paths.iter().enumerate() {
            match open(path) {
                Ok(reader) => {
                    merged.readers.push(reader);
                    merged.sources.push(source);
                }
                Err(error) => merged.failures.push((source, error)),
            }
        }
        if merged.readers.is_empty() {
            if let Some((_, error)) = merged.failures.pop() {
                return Err(error);
            }
        }
        if merged.merging {
            for index in 0..merged.readers.len() {
                merged.enqueue(index);
            }
        }
        Ok(merged)
    }

    /// The next frame in time; an error only when a single file was given.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        let index = if self.merging {
            if let Some(last) = self.last.take() {
                self.enqueue(last);
            }
            let Some(Reverse((_, index))) = self.queue.pop() else {
                return Ok(None);
            };
            self.last = Some(index);
            index
        } else {
            0
        };
        let source = self.sources[index];
        let Some(reader) = self.readers.get_mut(index) else {
            return Ok(None);
        };
        // Once its next timestamp is known, a reader holds the whole record.
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

    /// Queues a reader by its next frame's time, unless it has none left or
    /// fails to say.
    fn enqueue(&mut self, index: usize) {
        match self.readers[index].peek_timestamp() {
            Ok(Some(timestamp)) => self.queue.push(Reverse((timestamp, index))),
            Ok(None) => {}
            Err(error) => self.failures.push((self.sources[index], error)),
        }
    }

    /// The files that failed so far, in the order given.
    pub fn failures(&self) -> Vec<CaptureError> {
        let mut failures = self.failures.clone();
        failures.sort_by_key(|(source, _)| *source);
        failures.into_iter().map(|(_, error)| error).collect()
    }

    /// For one mapped file: a handle that maps its pages ahead of this
    /// reader, for another thread to call with [`MergedReader::bytes_read`]
    /// (see [`MapAhead`]).
    pub fn map_ahead(&self) -> Option<MapAhead> {
        match self.readers.as_slice() {
            [reader] if !self.merging => reader.map_ahead(),
            _ => None,
        }
    }

    /// Each file's bytes by its place among the files given, where it is
    /// read in place (see [`CaptureReader::mapped_file`]); None for the others.
    pub fn mapped_files(&self) -> Vec<Option<MappedFile>> {
        let mut files = vec![None; self.files];
        for (reader, &source) in self.readers.iter().zip(&self.sources) {
            files[source] = reader.mapped_file();
        }
        files
    }

    /// Keeps the pages of the file at `source` among those given mapped
    /// from `offset` on (see [`CaptureReader::hold_from`]): a holder of
    /// places in it reads them after the reader has moved on.
    pub fn hold_from(&mut self, source: usize, offset: Option<usize>) {
        if let Some(index) = self.sources.iter().position(|&at| at == source) {
            self.readers[index].hold_from(offset);
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
