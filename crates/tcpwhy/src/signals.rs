//! Ctrl-C and SIGTERM. The first asks the analysis to stop
//! ([`pipeline::stop`]): the read ends at once, the stages after it within
//! a second, and what they had is written, marked partial. A second, or the
//! first in a command that cannot stop part way, exits at once from a
//! thread of its own, first removing an output still being written.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// 128 + SIGINT, as a shell reports a command ended by Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;

static RECEIVED: AtomicUsize = AtomicUsize::new(0);
/// The temporary file or directory being written, to remove if a signal
/// ends the process before it is renamed into place.
static BEING_WRITTEN: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Handles SIGINT and SIGTERM from now on; with `first_stops`, the first
/// asks the work to stop rather than ending the process.
pub fn install(first_stops: bool) {
    for signal in [SIGINT, SIGTERM] {
        // Counted and the stop asked for in the handler itself: the thread
        // below may run too late to stop work that is ending.
        // Safety: the action only changes atomics, as a signal handler may.
        let _ = unsafe { signal_hook::low_level::register(signal, on_signal) };
    }
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        for _ in signals.forever() {
            if received() > 1 || !first_stops {
                exit_now();
            }
        }
    });
}

fn on_signal() {
    RECEIVED.fetch_add(1, Ordering::SeqCst);
    pipeline::stop();
}

fn exit_now() -> ! {
    if let Some(path) = being_written().take() {
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
    eprintln!("tcpwhy: stopped by a signal");
    std::process::exit(i32::from(EXIT_INTERRUPTED))
}

fn being_written() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    BEING_WRITTEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How many signals have come so far.
pub fn received() -> usize {
    RECEIVED.load(Ordering::SeqCst)
}

/// Names the temporary file or directory being written, to remove if a
/// signal ends the process before it is renamed into place; `None` once it is.
pub fn writing(path: Option<&Path>) {
    *being_written() = path.map(Path::to_path_buf);
}
