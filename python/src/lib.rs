//! The native half of the `tcpwhy` Python package: runs the Rust analysis
//! with the GIL released and hands each table over as Arrow IPC bytes,
//! which `tcpwhy/__init__.py` opens as `pyarrow.Table`s.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

create_exception!(
    _tcpwhy,
    CaptureError,
    PyException,
    "A capture could not be read to its end; the message names the file and byte offset."
);

/// Reads the capture files once, merged by time, and returns each table
/// (connections, transactions, events, timeline, findings, ledger) by name
/// as Arrow IPC stream bytes.
#[pyfunction]
#[pyo3(signature = (paths, memory_bytes=None))]
fn analyze_to_ipc(
    py: Python<'_>,
    paths: Vec<String>,
    memory_bytes: Option<u64>,
) -> PyResult<Vec<(&'static str, Py<PyBytes>)>> {
    let streams = py
        .detach(|| table_streams(&paths, memory_bytes))
        .map_err(|error| CaptureError::new_err(error.to_string()))?;
    Ok(streams
        .into_iter()
        .map(|(name, bytes)| (name, PyBytes::new(py, &bytes).unbind()))
        .collect())
}

fn table_streams(
    paths: &[String],
    memory_bytes: Option<u64>,
) -> Result<Vec<(&'static str, Vec<u8>)>, columns::Error> {
    let settings = pipeline::Stages {
        memory_bytes,
        ..pipeline::Stages::default()
    };
    let tables = columns::analyze(paths, settings, pipeline::Silent)?;
    tables
        .named()
        .into_iter()
        .map(|(name, batch)| Ok((name, columns::ipc::stream_bytes(batch)?)))
        .collect()
}

#[pymodule]
fn _tcpwhy(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(analyze_to_ipc, module)?)?;
    module.add("CaptureError", module.py().get_type::<CaptureError>())?;
    Ok(())
}
