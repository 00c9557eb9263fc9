//! Stopping the analysis under way, from a signal handler: the read stops
//! at once, and the stages after it within [`GRACE`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Set once a stop is asked for. Storing it is all [`stop`] does, so that a
/// signal handler may call it.
static STOP: AtomicBool = AtomicBool::new(false);
/// When the work first saw the stop asked for (within a batch's wait of it
/// while reading): the stages after the read have [`GRACE`] from then
/// to finish with what was read.
static STOP_SEEN_AT: OnceLock<std::time::Instant> = OnceLock::new();
/// How long the work after the read may go on once a stop is asked for:
/// enough to diagnose what a live capture brought in, short enough that
/// the process ends within a second whatever stage it was in.
pub const GRACE: Duration = Duration::from_millis(500);

/// Asks the analysis under way to stop: the read stops at once, and what
/// comes after it stops by [`GRACE`] later, the results marked interrupted.
/// Safe to call from a signal handler.
pub fn stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Whether a stop was asked for: the results are then partial.
pub fn stop_requested() -> bool {
    let asked = STOP.load(Ordering::SeqCst);
    if asked {
        STOP_SEEN_AT.get_or_init(std::time::Instant::now);
    }
    asked
}

/// Whether the work after the read must end now: a stop was asked for
/// [`GRACE`] ago or more. Long stages ask this between steps.
pub fn out_of_time() -> bool {
    stop_requested()
        && STOP_SEEN_AT
            .get()
            .is_some_and(|seen| seen.elapsed() >= GRACE)
}
