//! Feeds arbitrary bytes through the reader, the decoder and the tracker:
//! any input must end in frames or an error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| tcpwhy_fuzz::run_capture(bytes));
