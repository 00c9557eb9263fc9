//! docs/formats.md documents the JSON lines with real lines: every field the
//! commands write is in its examples, and every field of its examples is
//! one the commands write. The commands run on every lab capture, the
//! example capture and a book capture whose client retried its SYNs with
//! other options and never had an answer, so each nested object is seen
//! filled in at least once.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

/// Field paths by line type: `handshake.client_options.mss`, with `[]` for
/// the objects of a list (`unanswered_syns[].examples[].frame`).
type Fields = BTreeMap<String, BTreeSet<String>>;

/// A finding's `figures` is a map from a figure's name to its value: its
/// keys are names, not fields, and depend on the finding.
const MAPS: [&str; 1] = ["figures"];

const COMMANDS: [&str; 5] = [
    "connections",
    "events",
    "transactions",
    "timeline",
    "diagnose",
];

fn formats_md() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats.md");
    std::fs::read_to_string(path).unwrap()
}

fn example_capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap")
}

fn field_paths(value: &Value, prefix: &str, paths: &mut BTreeSet<String>) {
    match value {
        Value::Object(members) if !MAPS.contains(&prefix) => {
            for (name, member) in members {
                let path = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                field_paths(member, &path, paths);
                paths.insert(path);
            }
        }
        Value::Array(items) => {
            for item in items.iter().filter(|item| item.is_object()) {
                field_paths(item, &format!("{prefix}[]"), paths);
            }
        }
        _ => {}
    }
}

fn add_line(line: &Value, fields: &mut Fields) {
    let kind = line["type"].as_str().expect("every line has a type");
    field_paths(line, "", fields.entry(kind.to_string()).or_default());
}

/// The objects of the doc's ```json blocks.
fn documented_lines(doc: &str) -> Vec<Value> {
    let mut lines = Vec::new();
    for block in doc.split("```json\n").skip(1) {
        let (json, _) = block.split_once("```").expect("a json block ends");
        for value in serde_json::Deserializer::from_str(json).into_iter::<Value>() {
            lines.push(value.unwrap_or_else(|error| panic!("a json block: {error}\n{json}")));
        }
    }
    lines
}

/// Every line the commands write on the captures, read once for both tests.
fn written_lines() -> &'static [Value] {
    static LINES: OnceLock<Vec<Value>> = OnceLock::new();
    LINES.get_or_init(write_lines)
}

fn write_lines() -> Vec<Value> {
    let mut captures = common::lab_captures();
    captures.push(example_capture());
    let retried = synth::shared_captures("ppa").join("http_espn_fail.pcapng");
    captures.push(retried);
    let mut lines = Vec::new();
    for capture in &captures {
        for command in COMMANDS {
            lines.extend(common::json_lines(command, &[], capture));
        }
    }
    lines.extend(common::json_lines(
        "connection",
        &["14"],
        &example_capture(),
    ));
    lines
}

/// The paths of `theirs` missing from `ours`, by line type.
fn missing(ours: &Fields, theirs: &Fields) -> Vec<String> {
    let empty = BTreeSet::new();
    theirs
        .iter()
        .flat_map(|(kind, paths)| {
            let known = ours.get(kind).unwrap_or(&empty);
            paths
                .difference(known)
                .map(move |path| format!("{kind}: {path}"))
        })
        .chain(
            theirs
                .keys()
                .filter(|kind| !ours.contains_key(*kind))
                .map(|kind| format!("{kind} lines")),
        )
        .collect()
}

#[test]
fn every_json_field_is_documented_and_every_documented_field_is_written() {
    let mut documented = Fields::new();
    for line in documented_lines(&formats_md()) {
        add_line(&line, &mut documented);
    }
    let mut written = Fields::new();
    for line in written_lines() {
        add_line(line, &mut written);
    }
    let undocumented = missing(&documented, &written);
    assert!(
        undocumented.is_empty(),
        "written but not in docs/formats.md's examples: {undocumented:#?}"
    );
    let unwritten = missing(&written, &documented);
    assert!(
        unwritten.is_empty(),
        "in docs/formats.md's examples but written by no command: {unwritten:#?}"
    );
}

#[test]
fn every_figure_a_finding_gives_is_documented() {
    let doc = formats_md();
    let figures: BTreeSet<String> = written_lines()
        .iter()
        .filter(|line| line["type"] == "finding")
        .flat_map(|finding| finding["figures"].as_object().unwrap().keys().cloned())
        .collect();
    assert!(figures.len() > 10, "the lab's findings give figures");
    let undocumented: Vec<&String> = figures
        .iter()
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "figures not in docs/formats.md: {undocumented:?}"
    );
}
