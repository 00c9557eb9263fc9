//! Tables as Arrow IPC stream bytes, and back: how the Python package hands the
//! tables to pyarrow without copying them row by row.

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;

use crate::Error;

/// One table as an Arrow IPC stream holding its single batch.
pub fn stream_bytes(batch: &RecordBatch) -> Result<Vec<u8>, Error> {
    let arrow_error = |error: arrow_schema::ArrowError| Error::Arrow(error.to_string());
    let mut writer = StreamWriter::try_new(Vec::new(), &batch.schema()).map_err(arrow_error)?;
    writer.write(batch).map_err(arrow_error)?;
    writer.into_inner().map_err(arrow_error)
}

/// The batches of an Arrow IPC stream.
pub fn read_stream(bytes: &[u8]) -> Result<Vec<RecordBatch>, Error> {
    let arrow_error = |error: arrow_schema::ArrowError| Error::Arrow(error.to_string());
    let reader = StreamReader::try_new(bytes, None).map_err(arrow_error)?;
    reader.map(|batch| batch.map_err(arrow_error)).collect()
}
