//! A table's rows written a slice at a time: each slice made an Arrow batch
//! of the table's schema and rendered on a core, the slices written in order.

use std::io::{self, Write};

use arrow_array::RecordBatch;

/// Rows per batch: enough to keep a core busy, few enough that the batches
/// rendered at once stay small.
const ROWS_PER_BATCH: usize = 10_000;

/// Writes `rows` as `render` writes the batches that `batch` makes of them;
/// the rows after those under way when the work runs out of time after a
/// signal are left out.
pub fn write<T: Sync>(
    out: &mut dyn Write,
    rows: &[T],
    batch: impl Fn(&[T]) -> Result<RecordBatch, columns::Error> + Sync,
    render: impl Fn(&mut Vec<u8>, &RecordBatch) -> io::Result<()> + Sync,
) -> io::Result<()> {
    let rendered = |slice: &[T]| -> io::Result<Vec<u8>> {
        let batch = batch(slice).map_err(io::Error::other)?;
        let mut bytes = Vec::new();
        render(&mut bytes, &batch)?;
        Ok(bytes)
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for round in rows.chunks(ROWS_PER_BATCH * threads) {
        if pipeline::out_of_time() {
            break;
        }
        let slices: Vec<io::Result<Vec<u8>>> = std::thread::scope(|scope| {
            let workers: Vec<_> = round
                .chunks(ROWS_PER_BATCH)
                .map(|slice| scope.spawn(|| rendered(slice)))
                .collect();
            workers
                .into_iter()
                .map(|worker| worker.join().expect("rendering a batch panicked"))
                .collect()
        });
        for bytes in slices {
            out.write_all(&bytes?)?;
        }
    }
    Ok(())
}
