//! `tcpwhy`: reads a packet capture and explains why TCP traffic in it is slow.
//!
//! This binary is thin: it parses the command line, runs the pipeline
//! (capture → decode → tcp → …) over the selected traffic and hands the
//! results to `output`.

mod cli;
mod command_line;
mod connection;
mod export;
mod html;
mod output;
mod progress;
mod signals;
mod two_captures;
mod units;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
