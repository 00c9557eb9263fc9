//! The whole analysis as a library: capture → decode → tcp → transactions →
//! timeline → diagnose, over one or more capture files.
//!
//! The command line, the tests and the bindings all call [`analyze`]; none of
//! them wires the stages again. One thread reads and decodes frames into
//! batches of segments; another tracks connections, or several do, each over
//! its share of them ([`Stages::shards`], see `shards`). One more maps a
//! mapped file's pages ahead of the reader (see [`capture::MapAhead`])
//! whenever a core is free. Several files are merged by time, and a packet
//! that two of them captured is analysed once (see `copies`). Output
//! (tables, JSON, HTML) is not done here. A [`Selection`] narrows what the
//! stages after the tracker see.
//!
//! The pieces: `result` holds what a pass produced ([`Analysis`]) and
//! `notes` what the reader should know to trust it ([`Note`]); `counts`
//! what reading counts; `threads` runs the reading and tracking threads,
//! `shards` the reader and the tracking threads of a split, and `payloads`
//! hands the segments' payloads from one to the other (by place in a
//! mapped file, which the reader keeps mapped until they are read);
//! [`Analyzer`] is the stages fed segment by segment; `stop` ends the work
//! early on a signal.

mod analyzer;
mod copies;
mod counts;
pub mod files;
mod notes;
pub mod part;
mod payloads;
mod result;
mod select;
mod shards;
mod stop;
mod threads;
mod wire;

use capture::{CaptureError, Frame};
use tcp::Event;

pub use analyzer::Analyzer;
pub use copies::Matched;
pub use counts::{Clock, Counts, OtherTraffic, ReadCounts, SkipCounts};
pub use files::{
    conclude_parts, flow_key, plan, FileDecoder, FileSurvey, Overlap, PartAnalyzer, Plan,
};
pub use notes::Note;
pub use part::Part;
pub use result::{Analysis, RateLimit};
pub use select::{Instant, Network, Selection};
pub use stop::{out_of_time, stop, stop_requested, GRACE};
pub use threads::analyze_observed;
pub use wire::Malformed;

/// Told how far the read has got, for a progress bar; then, once the read
/// is over, what the analysis is doing; `finish` once it is all over.
pub trait ReadProgress: Send + 'static {
    fn update(&mut self, bytes_read: u64);
    /// The analysis after the read is at `doing` ("diagnosing").
    fn stage(&mut self, _doing: &'static str) {}
    fn finish(&mut self);
}

/// No progress shown.
pub struct Silent;

impl ReadProgress for Silent {
    fn update(&mut self, _: u64) {}
    fn finish(&mut self) {}
}

/// The memory the analysis may hold unless told otherwise: enough for a
/// million connections with their transactions, and it fits a laptop.
pub const DEFAULT_MEMORY_BYTES: u64 = 1 << 30;

/// Which later stages a command needs, and what traffic they look at.
#[derive(Clone, Default)]
pub struct Stages {
    pub transactions: bool,
    /// Some to build the timeline: with a tick in nanoseconds, or chosen from the capture.
    pub timeline: Option<Option<i64>>,
    pub diagnose: bool,
    /// The memory budget in bytes; [`DEFAULT_MEMORY_BYTES`] when None.
    pub memory_bytes: Option<u64>,
    /// The traffic the stages after the tracker see; connection ids stay
    /// those of the whole capture.
    pub selection: Selection,
    /// No connection is listed: the tracker only numbers connections, as
    /// a pass that lists them would, for the segments handed to an observer
    /// (a second pass over files already analysed).
    pub numbers_only: bool,
    /// Threads the connections are split across (see the `shards`
    /// module); 0 or 1 for one. The result is the same for any count.
    pub shards: usize,
    /// The caller's `on_event` must see every analysis event also when the
    /// connections are split across threads: they are then kept until the
    /// read is over. One thread hands them on as they come either way.
    pub events: bool,
}

impl Stages {
    /// The timeline and the diagnosis read the transactions too.
    pub(crate) fn wants_transactions(&self) -> bool {
        self.transactions || self.timeline.is_some() || self.diagnose
    }
}

/// Reads every file once, calling `on_event` for each analysis event as it is raised.
pub fn analyze(
    paths: &[String],
    stages: Stages,
    progress: impl ReadProgress,
    on_event: impl FnMut(&Event),
) -> Result<Analysis, CaptureError> {
    if shards::can_split(paths, &stages) {
        return shards::analyze(paths, stages, progress, on_event);
    }
    analyze_observed(paths, stages, progress, on_event, |_, _| {})
}

/// The stages in one thread over frames already in memory (scripted traces,
/// tests): each frame decoded, then analysed as [`analyze`] would.
pub fn analyze_frames<'a>(frames: impl IntoIterator<Item = Frame<'a>>, stages: Stages) -> Analysis {
    let mut analyzer = Analyzer::new(stages);
    let mut read = ReadCounts::default();
    for frame in frames {
        analyzer.frame(&frame, &mut read);
    }
    analyzer.finish(read, None)
}

/// The stages in one thread over a capture held in memory, reading at most
/// `max_frames` frames: what the fuzz targets and their corpus replay run.
pub fn analyze_bytes(bytes: &[u8], stages: Stages, max_frames: u64) -> Analysis {
    let reader =
        capture::CaptureReader::from_reader("memory", std::io::Cursor::new(bytes.to_vec()));
    let mut read = ReadCounts::default();
    let mut reader = match reader {
        Ok(reader) => reader,
        Err(error) => return Analyzer::new(stages).finish(read, Some(error)),
    };
    let mut analyzer = Analyzer::new(stages);
    let mut error = None;
    while read.frames < max_frames {
        match reader.next_frame() {
            Ok(Some(frame)) => analyzer.frame(&frame, &mut read),
            Ok(None) => break,
            Err(read_error) => {
                error = Some(read_error);
                break;
            }
        }
    }
    analyzer.finish(read, error)
}
