//! Feeds arbitrary bytes through the reader, the decoder and the tracker:
//! any input must end in frames or an error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Bounds the work per input; a hostile file cannot make the reader loop forever.
const MAX_FRAMES: usize = 10_000;

fuzz_target!(|bytes: &[u8]| {
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
});
