//! One capture in many files, analysed on many machines, with the stages of
//! the one-process run.
//!
//! A rotating capture's files are decoded each on its own ([`FileDecoder`]):
//! segments numbered within their file, and a [`FileSurvey`] of what the
//! file held. [`plan`] then places the files in time, as the merged reader
//! would read them, so each file's frames take the numbers one run over all
//! the files gives them. Segments grouped by connection are analysed by a
//! [`PartAnalyzer`] each, and [`conclude_parts`] makes the parts one
//! analysis. A file that cannot be read to its end counts up to its error,
//! which the analysis then names; the other files are read whole.

use std::fmt;
use std::hash::{Hash, Hasher};

use capture::{CaptureError, CaptureReader};
use decode::Segment;
use tcp::Event;

use crate::analyzer::headers_of;
use crate::copies::CopyFilter;
use crate::part::{combine, conclude, evidence_of, Part};
use crate::{Analysis, Analyzer, ReadCounts, Stages};

/// The same number for both directions of a connection (and for the
/// connections that later reuse its ports): what keeps a connection's
/// segments together when a cluster groups them.
pub fn flow_key(segment: &Segment) -> u64 {
    let ends = if segment.src <= segment.dst {
        (segment.src, segment.dst)
    } else {
        (segment.dst, segment.src)
    };
    let mut hasher = std::hash::DefaultHasher::new();
    ends.hash(&mut hasher);
    hasher.finish()
}

/// What one file held, once decoded.
#[derive(Debug, Clone, record::Wire)]
pub struct FileSurvey {
    pub path: String,
    /// The file's place among the files given.
    pub source: usize,
    /// Its frames, counted as the decode stage counts them.
    pub read: ReadCounts,
    /// Its earliest and latest frame times; None without frames.
    pub span_ns: Option<(i64, i64)>,
    /// What stopped the read before the end, if anything did.
    pub error: Option<CaptureError>,
}

/// Reads one file and decodes its frames, numbered from 1 within the file.
pub struct FileDecoder {
    reader: Option<CaptureReader>,
    survey: FileSurvey,
}

impl FileDecoder {
    /// A file that cannot be opened is surveyed with its error and no frames.
    pub fn open(path: &str, source: usize) -> Self {
        let (reader, error) = match capture::open(path) {
            Ok(reader) => (Some(reader), None),
            Err(error) => (None, Some(error)),
        };
        FileDecoder {
            reader,
            survey: FileSurvey {
                path: path.to_string(),
                source,
                read: ReadCounts::default(),
                span_ns: None,
                error,
            },
        }
    }

    /// Decodes frames until `at_most` TCP segments have been handed to
    /// `on_segment` with their payload starts that may name a transaction,
    /// or the file ends; false once it has ended.
    pub fn decode(&mut self, at_most: usize, mut on_segment: impl FnMut(&Segment, &[u8])) -> bool {
        let Some(reader) = &mut self.reader else {
            return false;
        };
        let survey = &mut self.survey;
        let mut segments = 0;
        while segments < at_most {
            let whole = match reader.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(error) => {
                    survey.error = Some(error);
                    break;
                }
            };
            let frame = capture::Frame {
                source: survey.source,
                ..headers_of(whole)
            };
            let (earliest, latest) = survey
                .span_ns
                .unwrap_or((frame.timestamp_ns, frame.timestamp_ns));
            survey.span_ns = Some((
                earliest.min(frame.timestamp_ns),
                latest.max(frame.timestamp_ns),
            ));
            let decoded = decode::decode(&frame);
            survey.read.count(frame.timestamp_ns, &decoded);
            if let Ok(segment) = decoded {
                on_segment(
                    &segment,
                    segment.whole_payload(frame.data.len(), whole.data),
                );
                segments += 1;
            }
        }
        if segments < at_most {
            self.reader = None;
        }
        self.reader.is_some()
    }

    /// What the file held: all of it once [`FileDecoder::decode`] said it had ended.
    pub fn survey(self) -> FileSurvey {
        self.survey
    }
}

/// Where each file's frames fall in the capture the files make together.
#[derive(Debug, Clone)]
pub struct Plan {
    /// By file: the frames of the files before it in time, to add to its own numbers.
    pub frame_offsets: Vec<u64>,
    /// Every file's counts, in the order of their frames.
    pub read: ReadCounts,
    /// The files that could not be read to their end, in the order given.
    pub failed: Vec<CaptureError>,
}

impl Plan {
    /// The capture's first TCP segment's time, from which every part's
    /// timeline counts, as one process's does: frames before it carried no
    /// TCP (see [`PartAnalyzer::new`]).
    pub fn first_segment_ns(&self) -> Option<i64> {
        self.read.clock.first_ns
    }
}

/// Two files whose frames interleave in time: numbering them as one merged
/// capture needs every frame's time, which the files alone do not give.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlap {
    pub earlier: String,
    pub later: String,
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} and {} overlap in time: files analysed apart must follow each other, \
             as a rotating capture writes them, given in the order written where one \
             ends at the time the next begins; analyse captures from several points \
             in one process",
            self.earlier, self.later
        )
    }
}

impl std::error::Error for Overlap {}

/// Places the files in time: the merged reader reads them one after the
/// other, by their first frame (the file given first on a tie), when none
/// starts before the previous one ends.
pub fn plan(surveys: &[FileSurvey]) -> Result<Plan, Overlap> {
    let mut in_time: Vec<(&FileSurvey, (i64, i64))> = surveys
        .iter()
        .filter_map(|survey| survey.span_ns.map(|span| (survey, span)))
        .collect();
    in_time.sort_by_key(|&(survey, (earliest, _))| (earliest, survey.source));
    for pair in in_time.windows(2) {
        let [(earlier, (_, ends)), (later, (starts, _))] = pair else {
            continue;
        };
        if (*ends, earlier.source) >= (*starts, later.source) {
            return Err(Overlap {
                earlier: earlier.path.clone(),
                later: later.path.clone(),
            });
        }
    }
    let files = surveys.iter().map(|s| s.source + 1).max().unwrap_or(0);
    let mut frame_offsets = vec![0; files];
    let mut read = ReadCounts::default();
    for (survey, _) in in_time {
        frame_offsets[survey.source] = read.frames;
        read.append(&survey.read);
    }
    let mut failed: Vec<&FileSurvey> = surveys.iter().filter(|s| s.error.is_some()).collect();
    failed.sort_by_key(|survey| survey.source);
    Ok(Plan {
        frame_offsets,
        read,
        failed: failed.iter().filter_map(|s| s.error.clone()).collect(),
    })
}

/// The per-connection stages over the segments of some connections, every
/// segment of each, in frame order.
pub struct PartAnalyzer {
    analyzer: Analyzer,
    /// Several files may hold one packet twice (see [`crate::copies`]).
    copies: Option<CopyFilter>,
    events: Vec<Event>,
}

impl PartAnalyzer {
    /// For a capture of `files` files whose first TCP segment came at
    /// `first_segment_ns` ([`Plan::first_segment_ns`]).
    pub fn new(stages: Stages, first_segment_ns: Option<i64>, files: usize) -> Self {
        PartAnalyzer {
            analyzer: Analyzer::for_part(stages, first_segment_ns),
            copies: (files > 1).then(CopyFilter::default),
            events: Vec::new(),
        }
    }

    pub fn segment(&mut self, segment: &Segment, payload: &[u8]) {
        if let Some(copies) = &mut self.copies {
            if copies.is_copy(segment, payload) {
                return;
            }
        }
        self.analyzer.segment(segment, payload);
        let events = &mut self.events;
        self.analyzer.drain_events(|event| events.push(*event));
    }

    pub fn finish(self) -> Part {
        let mut part = self.analyzer.into_part();
        part.events = self.events;
        part.matched = self.copies.map(CopyFilter::finish).unwrap_or_default();
        part
    }
}

/// The analysis of every part, with the events in frame order: the
/// connections numbered, the timeline read out and the whole diagnosed as
/// one run over all the files would.
pub fn conclude_parts(
    plan: Plan,
    stages: Stages,
    parts: impl IntoIterator<Item = Part>,
) -> (Analysis, Vec<Event>) {
    let diagnose = stages.diagnose;
    let empty = Analyzer::for_part(stages, plan.first_segment_ns()).into_part();
    let mut whole = combine(std::iter::once(empty).chain(parts).collect());
    let events = std::mem::take(&mut whole.events);
    let evidence = diagnose.then(|| evidence_of(&events));
    let mut failed = plan.failed.into_iter();
    let mut analysis = conclude(whole, evidence, plan.read, failed.next());
    analysis.other_failures = failed.collect();
    (analysis, events)
}
