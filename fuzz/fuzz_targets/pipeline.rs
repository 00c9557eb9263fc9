//! Feeds arbitrary bytes through the whole analysis: reader, decoder, tracker,
//! transactions, timeline, diagnosis and the report's model. Any input must
//! end in results or an error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| tcpwhy_fuzz::run_pipeline(bytes));
