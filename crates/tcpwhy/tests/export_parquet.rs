//! `tcpwhy export --format parquet` writes one Parquet file per table whose
//! rows hold, field for field, what the JSON lines of `connections`,
//! `transactions`, `events`, `timeline` and `diagnose` say; bad input writes
//! nothing.

use crate::common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, TimestampNanosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
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

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcpwhy-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn export(capture: &Path, dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["export", "--format", "parquet", "--quiet", "-o"])
        .arg(dir)
        .arg(capture)
        .output()
        .unwrap()
}

/// Every row of a Parquet file, as JSON objects.
fn parquet_rows(path: &Path) -> Vec<Value> {
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
fn value_at(array: &dyn Array, row: usize) -> Value {
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

/// Where `parquet` differs from `json`: every JSON field must be a column
/// with the same value (ledger parts are rounded to the microsecond in
/// JSON); a column the JSON leaves out must be null.
fn differences(path: &str, json: &Value, parquet: &Value, found: &mut Vec<String>) {
    match (json, parquet) {
        (Value::Object(json), Value::Object(parquet)) => {
            for (key, value) in json {
                let at = format!("{path}.{key}");
                match parquet.get(key) {
                    Some(column) => differences(&at, value, column, found),
                    None => found.push(format!("{at}: no such column")),
                }
            }
            for (key, value) in parquet {
                if !json.contains_key(key) && !value.is_null() {
                    found.push(format!("{path}.{key}: {value} where the JSON has none"));
                }
            }
        }
        (Value::Array(json), Value::Array(parquet)) if json.len() == parquet.len() => {
            for (index, (j, p)) in json.iter().zip(parquet).enumerate() {
                differences(&format!("{path}[{index}]"), j, p, found);
            }
        }
        (Value::Number(json), Value::Number(parquet)) => {
            let (j, p) = (json.as_f64().unwrap(), parquet.as_f64().unwrap());
            if (j - p).abs() > 5e-4 + j.abs() * 1e-12 {
                found.push(format!("{path}: {j} in JSON, {p} in Parquet"));
            }
        }
        (json, parquet) if json == parquet => {}
        (json, parquet) => found.push(format!("{path}: {json} in JSON, {parquet} in Parquet")),
    }
}

fn without_type(mut line: Value) -> Value {
    line.as_object_mut().unwrap().remove("type");
    line
}

/// The JSON objects of `kind` printed by `tcpwhy COMMAND`.
fn json_objects(command: &str, capture: &Path, kind: &str) -> Vec<Value> {
    common::objects(command, capture, kind)
        .into_iter()
        .map(without_type)
        .collect()
}

fn assert_table_matches(dir: &Path, table: &str, json: Vec<Value>, capture: &Path) {
    let rows = parquet_rows(&dir.join(format!("{table}.parquet")));
    let name = capture.file_name().unwrap().to_string_lossy();
    assert_eq!(rows.len(), json.len(), "{table} rows for {name}");
    let mut found = Vec::new();
    for (index, (json, row)) in json.iter().zip(&rows).enumerate() {
        differences(&format!("{table}[{index}]"), json, row, &mut found);
    }
    assert!(
        found.is_empty(),
        "{name}: {:#?}",
        &found[..found.len().min(20)]
    );
}

#[test]
fn every_table_holds_what_the_json_lines_say_on_each_lab_capture() {
    let mut captures: Vec<PathBuf> = std::fs::read_dir(common::lab_file(""))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "pcap"))
        .collect();
    captures.sort();
    assert!(captures.len() >= 15);
    let dir = scratch_dir("lab");
    for capture in &captures {
        let output = export(capture, &dir);
        assert!(output.status.success(), "export of {}", capture.display());
        let tables = [
            (
                "connections",
                json_objects("connections", capture, "connection"),
            ),
            (
                "transactions",
                json_objects("transactions", capture, "transaction"),
            ),
            ("events", json_objects("events", capture, "event")),
            ("timeline", json_objects("timeline", capture, "tick")),
            ("findings", json_objects("diagnose", capture, "finding")),
            (
                "ledger",
                json_objects("transactions", capture, "connection_ledger"),
            ),
        ];
        for (table, json) in tables {
            assert_table_matches(&dir, table, json, capture);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn timestamps_are_typed_and_nested_fields_are_structs() {
    let dir = scratch_dir("schema");
    assert!(export(&common::lab_file("syn_drops.pcap"), &dir)
        .status
        .success());
    let file = File::open(dir.join("connections.parquet")).unwrap();
    let schema = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .schema()
        .clone();
    let first = schema.field_with_name("first_ns").unwrap();
    assert!(matches!(first.data_type(), DataType::Timestamp(..)));
    let handshake = schema.field_with_name("handshake").unwrap();
    let DataType::Struct(fields) = handshake.data_type() else {
        panic!("handshake is {}", handshake.data_type());
    };
    assert!(fields.find("syn_retries_ns").is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_truncated_capture_fails_naming_the_file_and_writes_no_table() {
    let dir = scratch_dir("truncated");
    std::fs::create_dir_all(&dir).unwrap();
    let mut bytes = std::fs::read(common::lab_file("zero_window.pcap")).unwrap();
    bytes.truncate(bytes.len() / 2 + 7);
    let truncated = dir.join("truncated.pcap");
    std::fs::write(&truncated, bytes).unwrap();
    let tables = dir.join("tables");
    let output = export(&truncated, &tables);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("truncated.pcap"), "{stderr}");
    assert!(stderr.contains("at byte"), "{stderr}");
    for table in TABLES {
        assert!(!tables.join(format!("{table}.parquet")).exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_output_directory_that_cannot_be_made_is_named_in_the_error() {
    let dir = scratch_dir("not-a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let occupied = dir.join("occupied");
    std::fs::write(&occupied, "a file where the directory should go").unwrap();
    let output = export(&common::lab_file("healthy.pcap"), &occupied);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&*occupied.to_string_lossy()), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
