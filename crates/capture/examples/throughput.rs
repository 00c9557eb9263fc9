//! Measures read throughput: `cargo run --release -p capture --example throughput -- FILE...`
//! reads every frame of the files (merged) and prints frames, bytes and GB/s.

use std::time::Instant;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    let started = Instant::now();
    let mut reader = match capture::MergedReader::open(&paths) {
        Ok(reader) => reader,
        Err(error) => return eprintln!("{error}"),
    };
    let (mut frames, mut captured) = (0u64, 0u64);
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                frames += 1;
                captured += frame.data.len() as u64;
            }
            Ok(None) => break,
            Err(error) => return eprintln!("{frames} frames, then {error}"),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let file_bytes = reader.bytes_read();
    println!(
        "{frames} frames, {captured} captured bytes, {file_bytes} file bytes in {seconds:.3} s: {:.2} GB/s",
        file_bytes as f64 / seconds / 1e9
    );
}
