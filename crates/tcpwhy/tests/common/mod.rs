//! Running tcpwhy on the project's lab captures and reading its JSON lines
//! and Parquet tables.

#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, TimestampNanosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};

pub mod scoring;

/// A file in tests/captures.
pub fn lab_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/captures")
        .join(name)
}

/// A file in tests/sweep-cases: single scenarios of the full sweeps,
/// each with its sweep manifest, that a test pins one by one.
pub fn sweep_case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/sweep-cases")
        .join(name)
}

/// Every lab capture, by name.
pub fn lab_captures() -> Vec<PathBuf> {
    captures_in(&lab_file(""))
}

/// Every pcap file in `dir`, by name.
pub fn captures_in(dir: &Path) -> Vec<PathBuf> {
    let mut captures: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "pcap"))
        .collect();
    captures.sort();
    captures
}

/// The manifest of a lab scenario.
pub fn manifest(scenario: &str) -> Value {
    let text = std::fs::read_to_string(lab_file(&format!("{scenario}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs `tcpwhy COMMAND --format json --quiet ARGS… CAPTURE`.
fn run_json(command: &str, args: &[&str], capture: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([command, "--format", "json", "--quiet"])
        .args(args)
        .arg(capture)
        .output()
        .unwrap()
}

/// The JSON lines a run printed.
fn lines_of(output: &std::process::Output) -> Vec<Value> {
    std::str::from_utf8(&output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The lines of one `type`.
fn of_type(lines: Vec<Value>, kind: &str) -> Vec<Value> {
    lines
        .into_iter()
        .filter(|line| line["type"] == kind)
        .collect()
}

/// Every JSON line `tcpwhy COMMAND --format json ARGS… CAPTURE` prints; it must succeed.
pub fn json_lines(command: &str, args: &[&str], capture: &Path) -> Vec<Value> {
    let output = run_json(command, args, capture);
    assert!(
        output.status.success(),
        "tcpwhy {command} failed on {}",
        capture.display()
    );
    lines_of(&output)
}

/// The objects of one `type` among those lines.
pub fn objects(command: &str, capture: &Path, kind: &str) -> Vec<Value> {
    of_type(json_lines(command, &[], capture), kind)
}

/// The objects of one `type` that `tcpwhy COMMAND --format json CAPTURE`
/// prints, also when the capture is cut short (exit 2, results marked partial).
pub fn objects_read_so_far(command: &str, capture: &Path, kind: &str) -> Vec<Value> {
    of_type(lines_of(&run_json(command, &[], capture)), kind)
}

/// The objects of one `type` that `tcpwhy COMMAND --format json CAPTURE`
/// prints when its results are usable: the capture read to the end, or to a
/// record it ends inside (exit 0 or 3). Any other exit fails.
pub fn usable_objects(command: &str, capture: &Path, kind: &str) -> Vec<Value> {
    let output = run_json(command, &[], capture);
    assert!(
        matches!(output.status.code(), Some(0 | 3)),
        "tcpwhy {command} failed on {} ({}): {}",
        capture.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    of_type(lines_of(&output), kind)
}

/// Every row of a Parquet file, as JSON objects.
pub fn parquet_rows(path: &Path) -> Vec<Value> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for batch in reader {
        let batch: RecordBatch = batch.unwrap();
        let columns = batch.schema().fields().clone();
        for row in 0..batch.num_rows() {
            let object = columns
                .iter()
                .zip(batch.columns())
                .map(|(field, column)| (field.name().clone(), value_at(column.as_ref(), row)))
                .collect::<Map<_, _>>();
            rows.push(Value::Object(object));
        }
    }
    rows
}

/// One cell as JSON; timestamps as nanoseconds since the epoch, as in the JSON lines.
pub fn value_at(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Boolean => Value::from(array.as_boolean().value(row)),
        DataType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(row)),
        DataType::Float64 => Value::from(array.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Value::from(array.as_string::<i32>().value(row)),
        DataType::Timestamp(..) => {
            Value::from(array.as_primitive::<TimestampNanosecondType>().value(row))
        }
        DataType::List(_) => {
            let items = array.as_list::<i32>().value(row);
            Value::Array((0..items.len()).map(|i| value_at(&items, i)).collect())
        }
        DataType::Struct(fields) => {
            let group = array.as_struct();
            let object = fields
                .iter()
                .zip(group.columns())
                .map(|(field, column)| (field.name().clone(), value_at(column.as_ref(), row)))
                .collect::<Map<_, _>>();
            Value::Object(object)
        }
        DataType::Map(..) => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let object = (0..entries.len())
                .map(|i| {
                    (
                        value_at(keys, i).as_str().unwrap().to_owned(),
                        value_at(values, i),
                    )
                })
                .collect::<Map<_, _>>();
            Value::Object(object)
        }
        other => panic!("no JSON form for {other}"),
    }
}

/// Sends `signal` to `child` once it handles it: a signal sent before then
/// would end it (or, where the default is to ignore it, be lost), and the
/// test would not test what it means to.
pub fn signal_when_handled(child: &std::process::Child, signal: i32) {
    let started = std::time::Instant::now();
    while !handles(child.id(), signal) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "tcpwhy never came to handle signal {signal}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Safety: kill only sends a signal to the child started by the test.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// Whether process `pid` has a handler for `signal`: its bit in the mask
/// of caught signals Linux shows in /proc/PID/status.
fn handles(pid: u32, signal: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// The frames a finding cites.
pub fn frames_of(finding: &Value) -> Vec<u64> {
    finding["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|frame| frame.as_u64().unwrap())
        .collect()
}

/// The book's captures beside the checkout, and the demo the project ships.
pub fn book_captures_and_demo() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(synth::shared_captures("ppa"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap"));
    files
}
