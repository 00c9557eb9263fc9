//! Segments' payloads on their way from the reader to the threads that
//! analyse them: by place in a mapped file, which the reader keeps mapped
//! until they are analysed, or copied out of a stream's buffer, which the
//! next read overwrites.

use std::collections::VecDeque;
use std::sync::Arc;

use capture::{MappedFile, MergedReader};

/// Where a segment's payload lies.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PayloadAt {
    /// In the batch's copy.
    Copied { start: u32, len: u32 },
    /// In the file at `file` among those given, which is mapped.
    InFile { file: u32, start: usize, len: u32 },
}

impl PayloadAt {
    pub(crate) const NONE: PayloadAt = PayloadAt::Copied { start: 0, len: 0 };
}

/// The input files read in place, by their place among those given.
pub(crate) type Files = Arc<[Option<MappedFile>]>;

/// The files of `reader` read in place.
pub(crate) fn files_of(reader: &MergedReader) -> Files {
    reader.mapped_files().into()
}

/// A batch's payloads: places in the mapped files, and a copy of the others.
pub(crate) struct Payloads {
    files: Files,
    copied: Vec<u8>,
    /// The first place this batch holds in each file, by file.
    first_held: Vec<Option<usize>>,
    /// Payload bytes, in place or copied.
    bytes: usize,
}

impl Payloads {
    pub(crate) fn new(files: Files) -> Self {
        Payloads {
            first_held: vec![None; files.len()],
            files,
            copied: Vec::new(),
            bytes: 0,
        }
    }

    /// Adds `payload`, a slice of a frame read from the file at `source`.
    pub(crate) fn add(&mut self, source: usize, payload: &[u8]) -> PayloadAt {
        self.bytes += payload.len();
        let len = payload.len() as u32;
        let place = self
            .files
            .get(source)
            .and_then(|file| file.as_ref()?.place_of(payload));
        match place {
            Some(place) => {
                self.first_held[source].get_or_insert(place.start);
                PayloadAt::InFile {
                    file: source as u32,
                    start: place.start,
                    len,
                }
            }
            None => {
                let start = self.copied.len() as u32;
                self.copied.extend_from_slice(payload);
                PayloadAt::Copied { start, len }
            }
        }
    }

    pub(crate) fn get(&self, at: PayloadAt) -> &[u8] {
        match at {
            PayloadAt::Copied { start, len } => {
                &self.copied[start as usize..(start + len) as usize]
            }
            PayloadAt::InFile { file, start, len } => {
                let file = self.files[file as usize].as_ref().expect("a mapped file");
                file.at(start..start + len as usize)
            }
        }
    }

    /// Whether `at` is the first place this batch holds in its file.
    pub(crate) fn is_first_hold(&self, at: PayloadAt) -> bool {
        match at {
            PayloadAt::InFile { file, start, .. } => self.first_held[file as usize] == Some(start),
            PayloadAt::Copied { .. } => false,
        }
    }

    /// Payload bytes held, in place or copied.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The first place held in each file, by file.
    pub(crate) fn first_held(&self) -> &[Option<usize>] {
        &self.first_held
    }

    pub(crate) fn clear(&mut self) {
        self.copied.clear();
        self.first_held.fill(None);
        self.bytes = 0;
    }
}

/// What the reader knows of the places its batches hold in the mapped
/// files, so that it releases no page a batch still refers to: for each
/// thread it hands batches to, the first place each batch sent and not yet
/// handed back holds in each file, oldest first.
pub(crate) struct Holds {
    sent: Vec<VecDeque<Vec<Option<usize>>>>,
    /// What the reader was last told, by file.
    told: Vec<Option<usize>>,
}

impl Holds {
    pub(crate) fn new(threads: usize, files: &Files) -> Self {
        Holds {
            sent: vec![VecDeque::new(); threads],
            told: vec![None; files.len()],
        }
    }

    /// A batch holding `first_held` went to `thread`.
    pub(crate) fn sent(&mut self, thread: usize, first_held: &[Option<usize>]) {
        self.sent[thread].push_back(first_held.to_vec());
    }

    /// `thread` handed back the oldest batch it was sent.
    pub(crate) fn returned(&mut self, thread: usize) {
        self.sent[thread].pop_front();
    }

    /// Tells `reader` the first place in each file that a batch sent and not
    /// yet handed back, or one of `filling`, holds.
    pub(crate) fn tell<'a>(
        &mut self,
        reader: &mut MergedReader,
        filling: impl Iterator<Item = &'a [Option<usize>]>,
    ) {
        let first = self.first_held(filling);
        for (file, (told, first)) in self.told.iter_mut().zip(first).enumerate() {
            if *told != first {
                reader.hold_from(file, first);
                *told = first;
            }
        }
    }

    /// The first place in each file that a batch sent and not yet handed
    /// back, or one of `filling`, holds.
    fn first_held<'a>(
        &self,
        filling: impl Iterator<Item = &'a [Option<usize>]>,
    ) -> Vec<Option<usize>> {
        let mut first = vec![None; self.told.len()];
        for held in self.sent.iter().flatten() {
            lower_to(&mut first, held);
        }
        for held in filling {
            lower_to(&mut first, held);
        }
        first
    }
}

/// Lowers each file's first place in `first` to the one `held` gives.
fn lower_to(first: &mut [Option<usize>], held: &[Option<usize>]) {
    for (first, &held) in first.iter_mut().zip(held) {
        *first = match (*first, held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_place_held_is_the_least_of_every_batch_out_or_filling() {
        let files: Files = vec![None, None].into();
        let mut holds = Holds::new(2, &files);
        holds.sent(0, &[Some(500), None]);
        holds.sent(0, &[Some(900), Some(40)]);
        holds.sent(1, &[None, None]);
        let filling = [[Some(700), None], [None, Some(80)]];
        let held = |holds: &Holds| holds.first_held(filling.iter().map(|batch| &batch[..]));
        assert_eq!(held(&holds), [Some(500), Some(40)]);
        holds.returned(0);
        assert_eq!(held(&holds), [Some(700), Some(40)]);
        holds.returned(0);
        assert_eq!(held(&holds), [Some(700), Some(80)]);
        holds.returned(1);
        assert_eq!(holds.first_held(std::iter::empty()), [None, None]);
    }
}
