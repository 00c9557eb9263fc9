//! A progress bar on stderr for runs that take longer than a second: how
//! far the read has got, then what the analysis is doing.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reads shorter than this show no bar at all.
const SHOW_AFTER: Duration = Duration::from_secs(1);

pub struct Progress {
    total: Option<u64>,
    started: Instant,
    enabled: bool,
    bar: Option<ProgressBar>,
    /// The bar shows the rate and time left: it has measured a rate.
    rated: bool,
}

impl Progress {
    /// A bar for `total` bytes, drawn only when stderr is a terminal and not `quiet`.
    pub fn new(total: Option<u64>, quiet: bool) -> Self {
        Progress {
            total,
            started: Instant::now(),
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: None,
            rated: false,
        }
    }

    fn show(&mut self, bytes_read: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= SHOW_AFTER {
            self.bar = Some(self.make_bar(bytes_read));
        }
        let Some(bar) = &self.bar else {
            return;
        };
        bar.set_position(bytes_read);
        if !self.rated && bar.per_sec() > 0.0 {
            bar.set_style(style(self.total, true));
            self.rated = true;
        }
    }

    /// A bar that starts at `bytes_read`: the rate counts only what is read
    /// from now on, not the first second's bytes as if read in no time. It
    /// shows the rate once it has one.
    fn make_bar(&self, bytes_read: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(self.total, ProgressDrawTarget::hidden())
            .with_style(style(self.total, false));
        bar.set_position(bytes_read);
        bar.reset_eta();
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// In the bar's place once the read is over: a spinner saying what the
    /// analysis is doing (on its own when the read showed no bar but the
    /// run has taken a second by now).
    fn tell(&mut self, doing: &'static str) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.started.elapsed() >= SHOW_AFTER {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
            bar.set_message(doing);
        }
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The bar's look: with the rate (and, of a known total, the time left)
/// once there is a rate to show.
fn style(total: Option<u64>, rated: bool) -> ProgressStyle {
    let template = match (total, rated) {
        (Some(_), true) => {
            "{spinner} reading {bytes}/{total_bytes} [{bar:30}] {bytes_per_sec}, {eta} left"
        }
        (Some(_), false) => "{spinner} reading {bytes}/{total_bytes} [{bar:30}]",
        (None, true) => "{spinner} reading {bytes} {bytes_per_sec}",
        (None, false) => "{spinner} reading {bytes}",
    };
    ProgressStyle::with_template(template)
        .expect("valid template")
        .progress_chars("=> ")
}

impl pipeline::ReadProgress for Progress {
    fn update(&mut self, bytes_read: u64) {
        self.show(bytes_read);
    }

    fn stage(&mut self, doing: &'static str) {
        self.tell(doing);
    }

    fn finish(&mut self) {
        self.clear();
    }
}
