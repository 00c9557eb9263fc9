//! No code: see `Cargo.toml`. The command line and the Python package
//! depend on this crate only for the features it turns on.
