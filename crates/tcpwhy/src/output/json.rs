//! JSON lines: one object per connection or event, then an `end` object.

use std::io::{self, Write};

use serde::Serialize;
use tcp::{ConnectionSummary, Event};

use crate::pipeline::{Analysis, Counts};

#[derive(Serialize)]
struct Line<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

#[derive(Serialize)]
struct End<'a> {
    connections: usize,
    #[serde(flatten)]
    counts: &'a Counts,
    /// True when an error stopped the read: everything above is what came before it.
    partial: bool,
    error: Option<String>,
}

fn line<T: Serialize>(out: &mut impl Write, kind: &'static str, body: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &Line { kind, body })?;
    out.write_all(b"\n")
}

pub fn connections(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    for connection in &analysis.connections {
        line::<ConnectionSummary>(out, "connection", connection)?;
    }
    end(out, analysis)
}

pub fn event(out: &mut impl Write, event: &Event) -> io::Result<()> {
    line(out, "event", event)
}

pub fn end(out: &mut impl Write, analysis: &Analysis) -> io::Result<()> {
    let end = End {
        connections: analysis.connections.len(),
        counts: &analysis.counts,
        partial: analysis.error.is_some(),
        error: analysis.error.as_ref().map(ToString::to_string),
    };
    line(out, "end", &end)
}
