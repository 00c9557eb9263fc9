//! Each table's schema is derived from its records' declarations
//! (`record::Columns`), their values from the same declarations through
//! serde: the two agree when every field serde writes for a real record is
//! a column, and every column that may not be null is a field it writes.

use std::collections::BTreeSet;
use std::path::Path;

use arrow_schema::{DataType, FieldRef};
use pipeline::{Analysis, Silent, Stages};
use serde::Serialize;
use serde_json::Value;
use tcp::Event;
use transactions::Latency;

fn analysed(name: &str) -> (Analysis, Vec<Event>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/captures")
        .join(name);
    let stages = Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        ..Stages::default()
    };
    let mut events = Vec::new();
    let paths = [path.display().to_string()];
    let analysis = pipeline::analyze(&paths, stages, Silent, |event| events.push(*event))
        .expect("capture read");
    (analysis, events)
}

/// The dotted names of the schema's leaves (and groups), and of those
/// leaves that may not be null.
fn schema_leaves(fields: &[FieldRef]) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut all, mut required) = (BTreeSet::new(), BTreeSet::new());
    collect_leaves(fields, "", true, &mut all, &mut required);
    (all, required)
}

fn collect_leaves(
    fields: &[FieldRef],
    prefix: &str,
    required_so_far: bool,
    all: &mut BTreeSet<String>,
    required: &mut BTreeSet<String>,
) {
    for field in fields {
        let name = format!("{prefix}{}", field.name());
        let is_required = required_so_far && !field.is_nullable();
        if let DataType::Struct(children) = field.data_type() {
            // A group that may be null is written whole as null.
            all.insert(name.clone());
            let children: Vec<FieldRef> = children.iter().cloned().collect();
            collect_leaves(&children, &format!("{name}."), is_required, all, required);
            continue;
        }
        if is_required {
            required.insert(name.clone());
        }
        all.insert(name);
    }
}

/// The dotted names of the fields serde writes for `record`; the map of
/// figures is one field, as it is one column.
fn written_leaves(record: &impl Serialize) -> BTreeSet<String> {
    let mut leaves = BTreeSet::new();
    collect_written(&serde_json::to_value(record).unwrap(), "", &mut leaves);
    leaves
}

fn collect_written(value: &Value, name: &str, leaves: &mut BTreeSet<String>) {
    match value {
        Value::Object(object) if name != "figures" => {
            for (key, value) in object {
                let child = if name.is_empty() {
                    key.clone()
                } else {
                    format!("{name}.{key}")
                };
                collect_written(value, &child, leaves);
            }
        }
        _ => {
            leaves.insert(name.to_owned());
        }
    }
}

fn leaves_of<T: Serialize>(records: &[T]) -> Vec<BTreeSet<String>> {
    records.iter().map(written_leaves).collect()
}

fn assert_agree(table: &str, fields: &[FieldRef], records: &[BTreeSet<String>]) {
    assert!(!records.is_empty(), "{table}: no records to check");
    let (columns, required) = schema_leaves(fields);
    for written in records {
        let not_columns: Vec<_> = written.difference(&columns).collect();
        assert!(
            not_columns.is_empty(),
            "{table}: written but no column: {not_columns:?}"
        );
        let not_written: Vec<_> = required.difference(written).collect();
        assert!(
            not_written.is_empty(),
            "{table}: a column that may not be null, not written: {not_written:?}"
        );
    }
}

/// Records of every table, from captures that between them have each kind.
#[derive(Default)]
struct Written {
    connections: Vec<BTreeSet<String>>,
    transactions: Vec<BTreeSet<String>>,
    events: Vec<BTreeSet<String>>,
    timeline: Vec<BTreeSet<String>>,
    findings: Vec<BTreeSet<String>>,
    ledger: Vec<BTreeSet<String>>,
}

impl Written {
    fn add(&mut self, capture: &str) {
        let (analysis, events) = analysed(capture);
        self.connections.extend(leaves_of(&analysis.connections));
        self.transactions.extend(leaves_of(&analysis.transactions));
        self.events.extend(leaves_of(&events));
        self.timeline.extend(leaves_of(&analysis.ticks));
        self.findings.extend(leaves_of(&analysis.findings));
        let ledger_rows: Vec<Value> = analysis
            .ledgers
            .iter()
            .map(|ledger| {
                let mut row = serde_json::to_value(ledger).unwrap();
                row["latency"] = serde_json::to_value(Latency::of(&ledger.ledger)).unwrap();
                row
            })
            .collect();
        self.ledger.extend(leaves_of(&ledger_rows));
    }
}

#[test]
fn every_tables_schema_and_its_records_name_the_same_fields() {
    let mut written = Written::default();
    for capture in ["app_failures.pcap", "loss_upstream-client.pcap"] {
        written.add(capture);
    }
    use columns::schema;
    assert_agree("connections", &schema::connections(), &written.connections);
    assert_agree(
        "transactions",
        &schema::transactions(),
        &written.transactions,
    );
    assert_agree("events", &schema::events(), &written.events);
    assert_agree("timeline", &schema::timeline(), &written.timeline);
    assert_agree("findings", &schema::findings(), &written.findings);
    assert_agree("ledger", &schema::ledger(), &written.ledger);
}
