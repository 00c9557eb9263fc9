//! What each fuzz target runs on one input, shared with the corpus replay
//! that `cargo test` runs on a stable compiler.

/// Bounds the work per input; a hostile file cannot make the reader loop forever.
pub const MAX_FRAMES: u64 = 10_000;
/// A budget so small that a few dozen connections make the tracker retire,
/// fold and leave out connections: inputs of odd length run with it.
const TINY_MEMORY_BYTES: u64 = 64 << 10;

/// The reader, the decoder and the tracker.
pub fn run_capture(bytes: &[u8]) {
    let Ok(mut reader) =
        capture::CaptureReader::from_reader("fuzz", std::io::Cursor::new(bytes.to_vec()))
    else {
        return;
    };
    let mut tracker = tcp::Tracker::new();
    for _ in 0..MAX_FRAMES {
        match reader.next_frame() {
            Ok(Some(frame)) => {
                if let Ok(segment) = decode::decode(&frame) {
                    tracker.process(&segment);
                    tracker.drain_events().for_each(drop);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    let _ = tracker.finish();
}

/// The whole analysis, capture to findings, timeline and the report.
pub fn run_pipeline(bytes: &[u8]) {
    let stages = pipeline::Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        memory_bytes: (bytes.len() % 2 == 1).then_some(TINY_MEMORY_BYTES),
        ..pipeline::Stages::default()
    };
    let analysis = pipeline::analyze_bytes(bytes, stages, MAX_FRAMES);
    let files = ["fuzz <input>.pcap".to_string()];
    let report = report::Report {
        files: &files,
        frames: analysis.counts.frames,
        start_ns: analysis.first_ns,
        connections: &analysis.connections,
        transactions: &analysis.transactions,
        ticks: &analysis.ticks,
        findings: &analysis.findings,
        details: &[],
        detail_command: "tcpwhy report".to_string(),
        partial: None,
    };
    report::write(&mut std::io::sink(), &report).expect("a sink takes any report");
}
