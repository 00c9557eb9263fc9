//! `tcpwhy export --format parquet` writes one Parquet file per table whose
//! rows hold, field for field, what the JSON lines of `connections`,
//! `transactions`, `events`, `timeline` and `diagnose` say; bad input writes
//! nothing, in any format.

use crate::common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use common::parquet_rows;

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcpwhy-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn export(capture: &Path, dir: &Path) -> std::process::Output {
    export_as("parquet", capture, dir)
}

fn export_as(format: &str, capture: &Path, dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["export", "--format", format, "--quiet", "-o"])
        .arg(dir)
        .arg(capture)
        .output()
        .unwrap()
}

/// Where `parquet` differs from `json`: every column must be a JSON field
/// with the same value, and every JSON field a column.
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
            for key in parquet.keys().filter(|key| !json.contains_key(*key)) {
                found.push(format!("{path}.{key}: a column the JSON leaves out"));
            }
        }
        (Value::Array(json), Value::Array(parquet)) if json.len() == parquet.len() => {
            for (index, (j, p)) in json.iter().zip(parquet).enumerate() {
                differences(&format!("{path}[{index}]"), j, p, found);
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
    let captures = common::lab_captures();
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
    for format in ["parquet", "csv", "json"] {
        let tables = dir.join(format);
        let output = export_as(format, &truncated, &tables);
        assert_eq!(output.status.code(), Some(2), "{format}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("truncated.pcap"), "{stderr}");
        assert!(stderr.contains("at byte"), "{stderr}");
        let written: Vec<_> = std::fs::read_dir(&tables)
            .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
            .unwrap_or_default();
        assert!(written.is_empty(), "{format}: {written:?}");
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

/// `tcpwhy export` with files limited to `max_bytes` each, as a disk that
/// fills up would stop them.
fn export_limited(capture: &Path, dir: &Path, max_bytes: u64) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_tcpwhy"));
    command
        .args(["export", "--format", "csv", "--quiet", "-o"])
        .arg(dir)
        .arg(capture);
    // Safety: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || {
            // A write past the limit then fails instead of killing the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: max_bytes,
                rlim_max: max_bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

#[test]
fn an_export_that_cannot_write_a_table_writes_none_and_names_it() {
    let capture = common::lab_file("healthy.pcap");
    let dir = scratch_dir("full");
    let whole = export_as("csv", &capture, &dir);
    assert!(whole.status.success());
    let mut sizes: Vec<(u64, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap())
        .map(|entry| {
            (
                entry.metadata().unwrap().len(),
                entry.file_name().to_string_lossy().into(),
            )
        })
        .collect();
    sizes.sort();
    let (largest, name) = sizes.last().unwrap().clone();
    assert!(sizes[sizes.len() - 2].0 < largest, "{sizes:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    // Room for every table but the largest.
    let output = export_limited(&capture, &dir, largest - 1);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        !dir.exists(),
        "tables were left: {:?}",
        std::fs::read_dir(&dir).map(|d| d.count())
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let table = name.trim_end_matches(".csv");
    assert!(
        stderr.contains(&format!(
            "{}: writing the {table} table: ",
            dir.join(&name).display()
        )),
        "{stderr}"
    );
    // Over an earlier export, the earlier tables stay as they were.
    assert!(export_as("json", &capture, &dir).status.success());
    let before: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let output = export_limited(&capture, &dir, largest - 1);
    assert_eq!(output.status.code(), Some(2));
    let after: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
