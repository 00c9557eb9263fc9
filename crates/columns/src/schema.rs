//! The Arrow schema of each table, field for field the JSON the command line
//! writes: the same names, nested where the JSON nests.
//!
//! Times in nanoseconds since the epoch are UTC timestamps; durations stay
//! milliseconds as floats; counters are signed 64-bit integers, which every
//! reader (pandas, DuckDB, Spark) takes without conversion. A field is
//! nullable exactly where the JSON may hold null or leave it out.

use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef, Fields, TimeUnit};
use transactions::Part;

fn field(name: &str, data_type: DataType, nullable: bool) -> FieldRef {
    Arc::new(Field::new(name, data_type, nullable))
}

fn int(name: &str) -> FieldRef {
    field(name, DataType::Int64, false)
}

fn optional_int(name: &str) -> FieldRef {
    field(name, DataType::Int64, true)
}

fn float(name: &str) -> FieldRef {
    field(name, DataType::Float64, false)
}

fn optional_float(name: &str) -> FieldRef {
    field(name, DataType::Float64, true)
}

fn flag(name: &str) -> FieldRef {
    field(name, DataType::Boolean, false)
}

fn text(name: &str) -> FieldRef {
    field(name, DataType::Utf8, false)
}

fn optional_text(name: &str) -> FieldRef {
    field(name, DataType::Utf8, true)
}

fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
}

fn time(name: &str) -> FieldRef {
    field(name, timestamp_type(), false)
}

fn optional_time(name: &str) -> FieldRef {
    field(name, timestamp_type(), true)
}

fn list(name: &str, item: DataType) -> FieldRef {
    let item = Field::new("element", item, false);
    field(name, DataType::List(Arc::new(item)), false)
}

fn group(name: &str, fields: Vec<FieldRef>) -> FieldRef {
    field(name, DataType::Struct(Fields::from(fields)), false)
}

fn optional_group(name: &str, fields: Vec<FieldRef>) -> FieldRef {
    field(name, DataType::Struct(Fields::from(fields)), true)
}

/// Names to figures, as `{"stall_ms": 200.0}`.
fn figures(name: &str) -> FieldRef {
    let entry = Fields::from(vec![text("key"), float("value")]);
    let entries = Field::new("entries", DataType::Struct(entry), false);
    field(name, DataType::Map(Arc::new(entries), false), false)
}

/// One row per connection, with what limits each direction's rate.
pub fn connections() -> Vec<FieldRef> {
    let mut fields = connection_summaries();
    fields.push(rate_limit());
    fields
}

/// A connection's fields but what limits its rate.
pub(crate) fn connection_summaries() -> Vec<FieldRef> {
    vec![
        int("id"),
        text("client"),
        text("server"),
        flag("roles_guessed"),
        int("first_frame"),
        int("last_frame"),
        time("first_ns"),
        time("last_ns"),
        float("duration_ms"),
        text("state"),
        text("history"),
        group(
            "close",
            vec![optional_text("by"), text("how"), optional_int("frame")],
        ),
        group("handshake", handshake()),
        group("client_to_server", direction()),
        group("server_to_client", direction()),
    ]
}

/// What limits a connection's rate, each way.
pub(crate) fn rate_limit() -> FieldRef {
    group(
        "rate_limit",
        vec![
            optional_text("client_to_server"),
            optional_text("server_to_client"),
        ],
    )
}

fn handshake() -> Vec<FieldRef> {
    vec![
        optional_time("syn_ns"),
        optional_time("syn_ack_ns"),
        optional_time("ack_ns"),
        list("syn_retries_ns", timestamp_type()),
        int("syn_retries"),
        int("syn_ack_retries"),
        optional_float("rtt_to_server_ms"),
        optional_float("rtt_to_client_ms"),
        optional_group("client_options", syn_options()),
        optional_group("server_options", syn_options()),
        optional_group("retry_client_options", syn_options()),
    ]
}

fn syn_options() -> Vec<FieldRef> {
    vec![
        optional_int("mss"),
        optional_int("window_scale"),
        flag("sack_permitted"),
        flag("timestamps"),
    ]
}

fn direction() -> Vec<FieldRef> {
    let counters = |names: &[&str]| names.iter().map(|name| int(name)).collect::<Vec<_>>();
    let mut fields = counters(&[
        "packets",
        "data_packets",
        "wire_bytes",
        "payload_bytes",
        "unique_payload_bytes",
    ]);
    fields.push(group(
        "retransmissions",
        counters(&[
            "total",
            "timeout",
            "fast",
            "spurious",
            "handshake",
            "after_duplicate_acks",
            "repeated",
        ]),
    ));
    fields.extend(counters(&[
        "out_of_order",
        "lost_segments",
        "ack_lost_segments",
        "lost_before_capture",
        "lost_after_capture",
        "capture_drops",
        "duplicate_acks",
        "sack_acks",
        "dsacks",
        "zero_windows",
    ]));
    fields.push(float("zero_window_ms"));
    fields.extend(counters(&[
        "zero_window_probes",
        "window_full",
        "window_updates",
        "keep_alives",
    ]));
    fields.extend([
        group("window", vec![int("min"), int("max"), float("mean")]),
        flag("window_scale_known"),
        int("max_bytes_in_flight"),
        group("rtt", rtt_stats()),
        group("release_lag", rtt_stats()),
        float("max_idle_ms"),
        group("ack_clock", ack_clock()),
    ]);
    fields.extend(counters(&[
        "largest_segment",
        "most_resends",
        "most_resent_bytes",
        "unacknowledged_at_end",
    ]));
    fields
}

fn rtt_stats() -> Vec<FieldRef> {
    vec![
        int("samples"),
        optional_float("min_ms"),
        optional_float("median_ms"),
        optional_float("max_ms"),
        optional_float("in_flight_correlation"),
    ]
}

fn ack_clock() -> Vec<FieldRef> {
    vec![
        int("samples"),
        float("busy_ms"),
        optional_float("bytes_per_s"),
        optional_float("spread"),
        int("delayed_ack_waits"),
        float("delayed_ack_wait_ms"),
    ]
}

/// One row per analysis event.
pub fn events() -> Vec<FieldRef> {
    vec![
        int("frame"),
        time("timestamp_ns"),
        int("connection"),
        text("direction"),
        text("kind"),
        int("seq"),
        int("ack"),
        int("len"),
        int("window"),
        int("value"),
    ]
}

/// One row per request/response transaction.
pub fn transactions() -> Vec<FieldRef> {
    vec![
        int("connection"),
        int("index"),
        text("signature"),
        optional_text("name"),
        optional_text("forwarded_for"),
        time("request_start_ns"),
        time("request_end_ns"),
        optional_time("response_start_ns"),
        optional_time("response_end_ns"),
        optional_float("duration_ms"),
        optional_float("request_transfer_ms"),
        optional_float("server_think_ms"),
        optional_float("response_transfer_ms"),
        optional_float("client_think_ms"),
        int("request_bytes"),
        int("response_bytes"),
        int("request_packets"),
        int("response_packets"),
        int("retransmissions"),
        ledger_parts(),
        latency(),
        optional_group(
            "failure",
            vec![text("kind"), text("by"), optional_int("code"), int("frame")],
        ),
    ]
}

/// Milliseconds per part of the time ledger; null where nothing was charged
/// (the JSON leaves those parts out).
fn ledger_parts() -> FieldRef {
    let parts = Part::ALL
        .iter()
        .map(|part| optional_float(part.as_str()))
        .collect();
    group("ledger", parts)
}

fn latency() -> FieldRef {
    group(
        "latency",
        vec![
            float("network_ms"),
            float("server_ms"),
            float("client_ms"),
            float("tcp_wait_ms"),
        ],
    )
}

/// One row per connection with transactions: their ledgers summed.
pub fn ledger() -> Vec<FieldRef> {
    vec![
        int("connection"),
        int("transactions"),
        ledger_parts(),
        latency(),
    ]
}

/// One row per tick of the timeline.
pub fn timeline() -> Vec<FieldRef> {
    let mut fields = vec![
        time("start_ns"),
        int("packets"),
        int("bytes"),
        int("payload_bytes"),
        float("throughput_bps"),
    ];
    fields.extend(
        [
            "retransmissions",
            "lost_segments",
            "duplicate_acks",
            "zero_windows",
            "new_connections",
            "failed_connections",
            "transactions_started",
            "transactions_completed",
            "connections_open",
            "transactions_in_progress",
        ]
        .map(int),
    );
    fields
}

/// One row per finding, the costliest first.
pub fn findings() -> Vec<FieldRef> {
    vec![
        text("kind"),
        text("severity"),
        text("title"),
        float("cost_ms"),
        float("share"),
        int("connections"),
        int("transactions"),
        optional_int("example_connection"),
        list("frames", DataType::Int64),
        text("wireshark_filter"),
        text("explanation"),
        text("fix"),
        text("what_if"),
        optional_text("suspected"),
        figures("figures"),
    ]
}
