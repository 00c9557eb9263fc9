//! The HTML output stage: one self-contained report file.
//!
//! It takes plain data (connections, transactions, ticks, findings and the
//! packet detail of a few connections, or two runs diffed) and writes one
//! HTML file that needs
//! nothing else when opened: its CSS, its chart code and its data are inside.
//! It never reaches back into the capture. Every string from the capture
//! travels as JSON in a `<script type="application/json">` block with `<`,
//! `>`, `&`, U+2028 and U+2029 escaped, and the page's script renders it with
//! DOM text nodes only, and the page's content security policy lets no
//! script run but its own, by hash.

mod choose;
pub mod detail;
mod model;

use std::io::{self, Write};

use diagnose::Finding;
use tcp::ConnectionSummary;
use timeline::Tick;
use transactions::Transaction;

pub use choose::connections_to_detail;
pub use detail::{Collector, ConnectionDetail};

const CSS: &str = include_str!("../assets/report.css");
const CHARTS: &str = include_str!("../assets/chart.js");
const TABLES: &str = include_str!("../assets/table.js");

/// One kind of page: its markup, with placeholders, and its scripts in order.
struct Page {
    template: &'static str,
    scripts: [&'static str; 3],
}

/// The report of one capture.
const REPORT: Page = Page {
    template: include_str!("../assets/report.html"),
    scripts: [CHARTS, TABLES, include_str!("../assets/report.js")],
};

/// Two runs of the same workload, before and after a change.
const DIFF: Page = Page {
    template: include_str!("../assets/diff.html"),
    scripts: [CHARTS, TABLES, include_str!("../assets/diff.js")],
};

/// Everything a report shows.
pub struct Report<'a> {
    /// The input files, as the user named them.
    pub files: &'a [String],
    pub frames: u64,
    /// The first frame's time, from which the report counts its offsets.
    pub start_ns: Option<i64>,
    pub connections: &'a [ConnectionSummary],
    pub transactions: &'a [Transaction],
    pub ticks: &'a [Tick],
    pub findings: &'a [Finding],
    pub details: &'a [ConnectionDetail],
    /// The command that would detail a connection that has no detail, less its id.
    pub detail_command: String,
    /// Why the report covers only part of the capture, when it does
    /// (`trace.pcap ends inside a record at byte 8877; …`).
    pub partial: Option<String>,
}

/// Writes the report as one HTML page.
pub fn write(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let title = format!("tcpwhy report: {}", report.files.join(", "));
    REPORT.write(out, &title, &script_json(&model::build(report)))
}

/// Writes the page that sets two runs side by side: `diff` is `tcpwhy
/// diff`'s result, as its JSON output has it, and `files` the two captures.
pub fn write_diff(
    out: &mut impl Write,
    files: &[String; 2],
    diff: &impl serde::Serialize,
) -> io::Result<()> {
    let title = format!("tcpwhy diff: {} against {}", files[0], files[1]);
    let data = serde_json::json!({
        "meta": { "files": files, "version": env!("CARGO_PKG_VERSION") },
        "diff": diff,
    });
    DIFF.write(out, &title, &script_json(&data))
}

impl Page {
    fn write(&self, out: &mut impl Write, title: &str, data: &str) -> io::Result<()> {
        let mut rest = self.template;
        while let Some(start) = rest.find("{{") {
            let end = start + rest[start..].find("}}").expect("closed placeholder");
            out.write_all(&rest.as_bytes()[..start])?;
            match &rest[start + 2..end] {
                "TITLE" => out.write_all(html_text(title).as_bytes())?,
                "CSS" => out.write_all(CSS.as_bytes())?,
                "DATA" => out.write_all(data.as_bytes())?,
                "SCRIPT" => {
                    for script in self.scripts {
                        out.write_all(script.as_bytes())?;
                    }
                }
                "SCRIPT_HASH" => out.write_all(self.script_hash().as_bytes())?,
                other => panic!("unknown placeholder {other} in a page template"),
            }
            rest = &rest[end + 2..];
        }
        out.write_all(rest.as_bytes())
    }

    /// The content security policy's source for the page's one script, its
    /// SHA-256: the browser runs that script and no other, so a string from
    /// the capture that escaped its escaping still could not run.
    fn script_hash(&self) -> String {
        use base64::Engine;
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        for script in self.scripts {
            hash.update(script.as_bytes());
        }
        let digest = base64::engine::general_purpose::STANDARD.encode(hash.finalize());
        format!("sha256-{digest}")
    }
}

/// JSON that can sit inside a `<script>` element: nothing in it can close
/// the element or open a comment, and it stays valid JavaScript.
pub fn script_json(value: &impl serde::Serialize) -> String {
    let json = serde_json::to_string(value).expect("the report data serializes");
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for an HTML element's content or a quoted attribute.
fn html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
