//! Ctrl-C and SIGTERM. The first stops the reading: tcpwhy finishes the
//! analysis with what it has read and prints it, marked partial. A second
//! exits at once, first removing a report still being written.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

static RECEIVED: AtomicUsize = AtomicUsize::new(0);
/// The file being written, to remove if a signal ends the process; null when none.
static BEING_WRITTEN: AtomicPtr<libc::c_char> = AtomicPtr::new(ptr::null_mut());

/// Handles SIGINT and SIGTERM from now on.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // Safety: the handler only touches atomics and calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, ptr::null_mut());
        }
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    if RECEIVED.fetch_add(1, Ordering::SeqCst) == 0 {
        pipeline::stop_reading();
        return;
    }
    let path = BEING_WRITTEN.load(Ordering::SeqCst);
    // Safety: unlink and _exit are async-signal-safe; `path` is a leaked CString or null.
    unsafe {
        if !path.is_null() {
            libc::unlink(path);
        }
        libc::_exit(128 + signal);
    }
}

/// How many signals have come so far.
pub fn received() -> usize {
    RECEIVED.load(Ordering::SeqCst)
}

/// Names the temporary file being written, to remove if a signal ends the
/// process before it is renamed into place; `None` once it is. A name set
/// is never freed: the handler may be reading it, and a run writes one file.
pub fn writing(path: Option<&Path>) {
    let name = path
        .and_then(|path| CString::new(path.as_os_str().as_bytes()).ok())
        .map_or(ptr::null_mut(), CString::into_raw);
    BEING_WRITTEN.store(name, Ordering::SeqCst);
}
