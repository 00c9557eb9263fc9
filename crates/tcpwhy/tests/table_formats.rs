//! CSV and JSON lines carry exactly the fields of the Parquet tables. On
//! every lab capture, for every table that `tcpwhy export` writes: the CSV
//! header is the schema's fields flattened with dots, each JSON object has
//! the schema's fields, nested as it nests them, and the three formats hold
//! the same values, row for row; the commands' own CSV and JSON lines are
//! the rows of the exported tables.

use crate::common;

use std::fs::File;
use std::path::Path;
use std::process::Command;

use arrow_schema::{DataType, Fields};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};

const TABLES: [&str; 6] = [
    "connections",
    "transactions",
    "events",
    "timeline",
    "findings",
    "ledger",
];

/// The tables a command writes on its own: (table, command, JSON line type).
const COMMANDS: [(&str, &str, &str); 5] = [
    ("connections", "connections", "connection"),
    ("transactions", "transactions", "transaction"),
    ("events", "events", "event"),
    ("timeline", "timeline", "tick"),
    ("findings", "diagnose", "finding"),
];

fn tcpwhy(args: &[&str], paths: &[&Path]) -> Vec<u8> {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .arg("--quiet")
        .args(paths)
        .output()
        .unwrap();
    assert!(output.status.success(), "tcpwhy {args:?} {paths:?}");
    output.stdout
}

fn parquet_fields(path: &Path) -> Fields {
    let file = File::open(path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    reader.schema().fields().clone()
}

/// The fields' names, a struct's members after it with their names joined
/// by a dot.
fn dotted_names(fields: &Fields, prefix: &str, names: &mut Vec<String>) {
    for field in fields {
        let name = format!("{prefix}{}", field.name());
        match field.data_type() {
            DataType::Struct(members) => dotted_names(members, &format!("{name}."), names),
            _ => names.push(name),
        }
    }
}

/// The value at a dotted path in a row: null when a struct on the way is.
fn at_path(row: &Value, path: &str) -> Value {
    let mut value = row;
    for name in path.split('.') {
        if value.is_null() {
            break;
        }
        value = &value[name];
    }
    value.clone()
}

/// Whether a CSV cell holds `value`: null as an empty cell, a list or a
/// map as JSON, a number as its exact text.
fn cell_holds(cell: &str, value: &Value) -> bool {
    match value {
        Value::Null => cell.is_empty(),
        Value::String(text) => cell == text,
        Value::Bool(flag) => cell == flag.to_string(),
        Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            serde_json::from_str::<Value>(cell).is_ok_and(|parsed| &parsed == value)
        }
    }
}

/// Where an object's keys differ from the fields, in it and in its structs.
fn key_differences(
    fields: &Fields,
    object: &Map<String, Value>,
    path: &str,
    found: &mut Vec<String>,
) {
    let names: Vec<&String> = fields.iter().map(|field| field.name()).collect();
    let mut keys: Vec<&String> = object.keys().collect();
    let mut expected = names.clone();
    keys.sort();
    expected.sort();
    if keys != expected {
        found.push(format!("{path}: keys {keys:?}, fields {expected:?}"));
        return;
    }
    for field in fields {
        if let (DataType::Struct(members), Value::Object(member)) =
            (field.data_type(), &object[field.name()])
        {
            key_differences(members, member, &format!("{path}.{}", field.name()), found);
        }
    }
}

fn csv_table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let rows = reader
        .records()
        .map(|record| record.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The three files of one table agree: fields and values.
fn check_table(dirs: &[std::path::PathBuf; 3], table: &str, capture: &str) {
    let [parquet_dir, csv_dir, json_dir] = dirs;
    let at = |dir: &Path, extension: &str| dir.join(format!("{table}.{extension}"));
    let fields = parquet_fields(&at(parquet_dir, "parquet"));
    let rows = common::parquet_rows(&at(parquet_dir, "parquet"));

    let (header, cells) = csv_table(&at(csv_dir, "csv"));
    let mut names = Vec::new();
    dotted_names(&fields, "", &mut names);
    assert_eq!(header, names, "{capture}: {table}.csv header");
    assert_eq!(cells.len(), rows.len(), "{capture}: {table}.csv rows");
    for (index, (line, row)) in cells.iter().zip(&rows).enumerate() {
        for (name, cell) in names.iter().zip(line) {
            let value = at_path(row, name);
            assert!(
                cell_holds(cell, &value),
                "{capture}: {table}.csv row {index}, {name}: {cell:?} where Parquet has {value}"
            );
        }
    }

    let objects = json_lines(&std::fs::read(at(json_dir, "jsonl")).unwrap());
    assert_eq!(objects.len(), rows.len(), "{capture}: {table}.jsonl rows");
    for (index, (object, row)) in objects.iter().zip(&rows).enumerate() {
        let mut found = Vec::new();
        key_differences(&fields, object.as_object().unwrap(), table, &mut found);
        assert!(
            found.is_empty(),
            "{capture}: {table}.jsonl row {index}: {found:?}"
        );
        assert_eq!(object, row, "{capture}: {table}.jsonl row {index}");
    }
}

#[test]
fn csv_and_json_lines_hold_the_fields_and_values_of_the_parquet_tables() {
    let captures = common::lab_captures();
    assert!(captures.len() >= 15);
    let scratch = std::env::temp_dir().join(format!("tcpwhy-table-formats-{}", std::process::id()));
    let dirs = ["parquet", "csv", "json"].map(|format| scratch.join(format));
    for capture in &captures {
        let name = capture.file_name().unwrap().to_string_lossy();
        for (format, dir) in ["parquet", "csv", "json"].iter().zip(&dirs) {
            let dir = dir.to_str().unwrap();
            tcpwhy(&["export", "--format", format, "-o", dir], &[capture]);
        }
        for table in TABLES {
            check_table(&dirs, table, &name);
        }
        let [_, csv_dir, json_dir] = &dirs;
        for (table, command, kind) in COMMANDS {
            let csv = tcpwhy(&[command, "--format", "csv"], &[capture]);
            let exported = std::fs::read(csv_dir.join(format!("{table}.csv"))).unwrap();
            assert!(
                csv == exported,
                "{name}: `{command} --format csv` is not {table}.csv"
            );
            let json = tcpwhy(&[command, "--format", "json"], &[capture]);
            assert_eq!(
                lines_of_type(&json, kind),
                json_lines(&std::fs::read(json_dir.join(format!("{table}.jsonl"))).unwrap()),
                "{name}: `{command} --format json` lines of type {kind}"
            );
        }
        let transactions = tcpwhy(&["transactions", "--format", "json"], &[capture]);
        assert_eq!(
            lines_of_type(&transactions, "connection_ledger"),
            json_lines(&std::fs::read(json_dir.join("ledger.jsonl")).unwrap()),
            "{name}: connection_ledger lines"
        );
    }
    std::fs::remove_dir_all(&scratch).unwrap();
}

/// The JSON lines of one type, without the type.
fn lines_of_type(bytes: &[u8], kind: &str) -> Vec<Value> {
    json_lines(bytes)
        .into_iter()
        .filter(|line| line["type"] == kind)
        .map(|mut line| {
            line.as_object_mut().unwrap().remove("type");
            line
        })
        .collect()
}

#[test]
fn export_writes_files_only() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-no-table-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["export", "--format", "table", "-o"])
        .arg(&dir)
        .arg(common::lab_file("healthy.pcap"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("possible values: parquet, csv, json"));
    assert!(!dir.exists());
}
