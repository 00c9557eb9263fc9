//! Where the tests find the public captures they read beside the scripted
//! ones: the book's and tcpdump's test set, fetched by
//! `tests/fetch-captures.sh` into `../shared/captures` beside the checkout,
//! or wherever `TCPWHY_CAPTURES` says.

use std::path::{Path, PathBuf};

/// Names the directory of the shared captures.
pub const VARIABLE: &str = "TCPWHY_CAPTURES";

/// `SUBDIR` (`ppa` or `tcpdump-tests`) of the shared captures. Panics with
/// one line saying how to get them when it is missing.
pub fn shared_captures(subdir: &str) -> PathBuf {
    let root = std::env::var_os(VARIABLE).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures"),
        PathBuf::from,
    );
    let dir = root.join(subdir);
    assert!(
        dir.is_dir(),
        "{} is missing: run tests/fetch-captures.sh, or set {VARIABLE} to the directory that holds ppa/ and tcpdump-tests/",
        dir.display()
    );
    dir
}
