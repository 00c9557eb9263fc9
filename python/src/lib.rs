//! The native half of the `tcpwhy` Python package: runs the Rust analysis
//! with the GIL released and hands each table over as Arrow IPC bytes,
//! which `tcpwhy/__init__.py` opens as `pyarrow.Table`s. The stages a Spark
//! job spreads over its executors (see `tcpwhy/spark.py`) are here too:
//! decoding a file into segment records, the per-connection analysis of a
//! group of them, and the conclusion over every group.

use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use capture::CaptureError as ReadError;
use columns::segments::{self, SegmentRecord};
use columns::Tables;
use pipeline::{FileSurvey, Part, Stages};

create_exception!(
    _tcpwhy,
    CaptureError,
    PyException,
    "A capture could not be read to its end; the message names the file and byte offset."
);

/// Each table by name as Arrow IPC stream bytes, and each file that failed
/// as (path, byte offset, frames read, message).
type Outcome = (Vec<(&'static str, Py<PyBytes>)>, Vec<Failure>);
type Failure = (String, u64, u64, String);

/// Reads the capture files once, merged by time, and returns every table
/// (connections, transactions, events, timeline, findings, ledger) with
/// the files that failed; raises when no file could be read to its end.
/// The connections are split across `threads` threads (the number of cores
/// when None); the tables are the same for any number.
#[pyfunction]
#[pyo3(signature = (paths, memory_bytes=None, threads=None))]
fn analyze_to_ipc(
    py: Python<'_>,
    paths: Vec<String>,
    memory_bytes: Option<u64>,
    threads: Option<usize>,
) -> PyResult<Outcome> {
    let shards = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let (streams, failures) = py
        .detach(|| {
            let split = Stages {
                shards,
                ..stages(memory_bytes)
            };
            let (tables, failures) = columns::analyze_files(&paths, split, pipeline::Silent)?;
            Ok::<_, columns::Error>((table_streams(&tables)?, failures))
        })
        .map_err(|error| CaptureError::new_err(error.to_string()))?;
    Ok(outcome(py, streams, &failures))
}

fn stages(memory_bytes: Option<u64>) -> Stages {
    columns::all_stages(Stages {
        memory_bytes,
        ..Stages::default()
    })
}

fn table_streams(tables: &Tables) -> Result<Vec<(&'static str, Vec<u8>)>, columns::Error> {
    tables
        .named()
        .into_iter()
        .map(|(name, batch)| Ok((name, columns::ipc::stream_bytes(batch)?)))
        .collect()
}

fn outcome(
    py: Python<'_>,
    streams: Vec<(&'static str, Vec<u8>)>,
    failures: &[ReadError],
) -> Outcome {
    let streams = streams
        .into_iter()
        .map(|(name, bytes)| (name, PyBytes::new(py, &bytes).unbind()))
        .collect();
    let failures = failures
        .iter()
        .map(|error| {
            (
                error.path.clone(),
                error.offset,
                error.frames_read,
                error.to_string(),
            )
        })
        .collect();
    (streams, failures)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn arrow_error(error: columns::Error) -> PyErr {
    PyValueError::new_err(error.to_string())
}

fn malformed(error: pipeline::Malformed) -> PyErr {
    PyValueError::new_err(error.to_string())
}

/// One file decoded into segment records, a batch at a time.
#[pyclass(module = "tcpwhy._tcpwhy")]
struct FileDecoder {
    /// None once surveyed. Python calls one method at a time: the lock is never contended.
    decoder: Mutex<Option<pipeline::FileDecoder>>,
}

#[pymethods]
impl FileDecoder {
    /// File `source` of the files given, at `path`.
    #[new]
    fn new(path: String, source: usize) -> Self {
        FileDecoder {
            decoder: Mutex::new(Some(pipeline::FileDecoder::open(&path, source))),
        }
    }

    /// The next (up to) `at_most` segment records as Arrow IPC stream bytes,
    /// frames numbered within the file; None once the file is over.
    fn next_batch(&self, py: Python<'_>, at_most: usize) -> PyResult<Option<Py<PyBytes>>> {
        let mut decoder = lock(&self.decoder);
        let Some(decoder) = decoder.as_mut() else {
            return Ok(None);
        };
        let (records, more) = py.detach(|| {
            let mut records = Vec::new();
            let more = decoder.decode(at_most, |segment, payload| {
                records.push(SegmentRecord::of(segment, payload))
            });
            (records, more)
        });
        if records.is_empty() && !more {
            return Ok(None);
        }
        let batch = segments::to_batch(&records).map_err(arrow_error)?;
        let bytes = columns::ipc::stream_bytes(&batch).map_err(arrow_error)?;
        Ok(Some(PyBytes::new(py, &bytes).unbind()))
    }

    /// What the file held, as bytes for [`plan_files`] and [`conclude_to_ipc`].
    fn survey(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        let decoder = lock(&self.decoder)
            .take()
            .ok_or_else(|| PyValueError::new_err("the survey was already taken"))?;
        Ok(PyBytes::new(py, &decoder.survey().to_bytes()).unbind())
    }
}

fn surveys(bytes: &[Vec<u8>]) -> PyResult<Vec<FileSurvey>> {
    bytes
        .iter()
        .map(|survey| FileSurvey::from_bytes(survey).map_err(malformed))
        .collect()
}

fn planned(surveys: &[FileSurvey]) -> PyResult<pipeline::Plan> {
    pipeline::plan(surveys).map_err(|overlap| CaptureError::new_err(overlap.to_string()))
}

/// Places the surveyed files in time: the frames to add to each file's
/// numbers, by file, and the first TCP segment's time.
#[pyfunction]
fn plan_files(surveys_bytes: Vec<Vec<u8>>) -> PyResult<(Vec<u64>, Option<i64>)> {
    let plan = planned(&surveys(&surveys_bytes)?)?;
    let first_segment_ns = plan.first_segment_ns();
    Ok((plan.frame_offsets, first_segment_ns))
}

/// The per-connection stages over segment records given in frame order,
/// every record of each connection they hold.
#[pyclass(module = "tcpwhy._tcpwhy")]
struct PartAnalyzer {
    /// None once finished. Python calls one method at a time: the lock is never contended.
    analyzer: Mutex<Option<pipeline::PartAnalyzer>>,
}

#[pymethods]
impl PartAnalyzer {
    /// For `files` files whose first TCP segment came at `first_segment_ns`.
    #[new]
    #[pyo3(signature = (first_segment_ns, files, memory_bytes=None))]
    fn new(first_segment_ns: Option<i64>, files: usize, memory_bytes: Option<u64>) -> Self {
        PartAnalyzer {
            analyzer: Mutex::new(Some(pipeline::PartAnalyzer::new(
                stages(memory_bytes),
                first_segment_ns,
                files,
            ))),
        }
    }

    /// Segment records as Arrow IPC stream bytes.
    fn add(&self, py: Python<'_>, stream: Vec<u8>) -> PyResult<()> {
        let mut analyzer = lock(&self.analyzer);
        let analyzer = analyzer
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("the part is finished"))?;
        py.detach(|| {
            for batch in columns::ipc::read_stream(&stream)? {
                for record in segments::from_batch(&batch)? {
                    let segment = record.segment().ok_or_else(|| {
                        columns::Error::Arrow(format!(
                            "frame {}: a field is out of range",
                            record.frame
                        ))
                    })?;
                    analyzer.segment(&segment, record.payload.as_deref().unwrap_or_default());
                }
            }
            Ok(())
        })
        .map_err(arrow_error)
    }

    /// What the stages found, as bytes for [`conclude_to_ipc`].
    fn finish(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        let analyzer = lock(&self.analyzer)
            .take()
            .ok_or_else(|| PyValueError::new_err("the part is finished"))?;
        let bytes = py.detach(|| analyzer.finish().to_bytes());
        Ok(PyBytes::new(py, &bytes).unbind())
    }
}

/// Every table of the analysis the parts make together, and the files that
/// failed; raises when no file could be read to its end.
#[pyfunction]
#[pyo3(signature = (surveys_bytes, parts_bytes, memory_bytes=None))]
fn conclude_to_ipc(
    py: Python<'_>,
    surveys_bytes: Vec<Vec<u8>>,
    parts_bytes: Vec<Vec<u8>>,
    memory_bytes: Option<u64>,
) -> PyResult<Outcome> {
    let surveys = surveys(&surveys_bytes)?;
    let plan = planned(&surveys)?;
    if plan.failed.len() == surveys.len() {
        if let Some(error) = plan.failed.first() {
            return Err(CaptureError::new_err(error.to_string()));
        }
    }
    let parts = parts_bytes
        .iter()
        .map(|part| Part::from_bytes(part).map_err(malformed))
        .collect::<PyResult<Vec<Part>>>()?;
    let (streams, failures) = py
        .detach(|| {
            let (analysis, events) = pipeline::conclude_parts(plan, stages(memory_bytes), parts);
            let failures = analysis.failures();
            let tables = Tables::of(&analysis, &events)?;
            Ok::<_, columns::Error>((table_streams(&tables)?, failures))
        })
        .map_err(arrow_error)?;
    Ok(outcome(py, streams, &failures))
}

/// An empty Arrow IPC stream of the segment records' schema.
#[pyfunction]
fn segment_schema(py: Python<'_>) -> PyResult<Py<PyBytes>> {
    let batch = segments::to_batch(&[]).map_err(arrow_error)?;
    let bytes = columns::ipc::stream_bytes(&batch).map_err(arrow_error)?;
    Ok(PyBytes::new(py, &bytes).unbind())
}

#[pymodule]
fn _tcpwhy(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(analyze_to_ipc, module)?)?;
    module.add_function(wrap_pyfunction!(plan_files, module)?)?;
    module.add_function(wrap_pyfunction!(segment_schema, module)?)?;
    module.add_function(wrap_pyfunction!(conclude_to_ipc, module)?)?;
    module.add_class::<FileDecoder>()?;
    module.add_class::<PartAnalyzer>()?;
    module.add("CaptureError", module.py().get_type::<CaptureError>())?;
    Ok(())
}
