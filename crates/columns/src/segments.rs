//! Segment records: each TCP segment of a capture as one row, with what the
//! per-connection stages read of it. A cluster decodes files into these
//! rows, groups them by `flow` (the same for both directions of a
//! connection) and hands each group back in frame order.

use std::net::IpAddr;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, FieldRef, Fields};
use serde::{Deserialize, Serialize};

use decode::{Endpoint, Flags, Options, SackBlocks, Segment};

use crate::Error;

/// One segment as a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentRecord {
    /// The file's place among the files given.
    pub file: i32,
    /// The frame number: within the file once decoded, within the capture
    /// once the files are placed in time.
    pub frame: i64,
    pub time_ns: i64,
    /// The connection's key, the same both ways: rows to keep together.
    pub flow: i64,
    pub src_ip: String,
    pub src_port: i32,
    pub dst_ip: String,
    pub dst_port: i32,
    pub seq: i64,
    pub ack: i64,
    pub flags: i16,
    pub window: i32,
    pub payload_len: i64,
    pub wire_len: i64,
    pub ip_id: Option<i32>,
    pub ttl: i16,
    pub mss: Option<i32>,
    pub window_scale: Option<i16>,
    pub sack_permitted: bool,
    pub ts_val: Option<i64>,
    pub ts_ecr: Option<i64>,
    pub sack: Vec<SackBlock>,
    /// The payload's captured start, where it may name a transaction.
    pub payload: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SackBlock {
    pub left: i64,
    pub right: i64,
}

/// The rows' schema, in the types Spark reads (no unsigned integers).
pub fn schema() -> Vec<FieldRef> {
    let field = |name: &str, data_type: DataType, nullable: bool| {
        Arc::new(Field::new(name, data_type, nullable))
    };
    let sack_block = Fields::from(vec![
        Field::new("left", DataType::Int64, false),
        Field::new("right", DataType::Int64, false),
    ]);
    vec![
        field("file", DataType::Int32, false),
        field("frame", DataType::Int64, false),
        field("time_ns", DataType::Int64, false),
        field("flow", DataType::Int64, false),
        field("src_ip", DataType::Utf8, false),
        field("src_port", DataType::Int32, false),
        field("dst_ip", DataType::Utf8, false),
        field("dst_port", DataType::Int32, false),
        field("seq", DataType::Int64, false),
        field("ack", DataType::Int64, false),
        field("flags", DataType::Int16, false),
        field("window", DataType::Int32, false),
        field("payload_len", DataType::Int64, false),
        field("wire_len", DataType::Int64, false),
        field("ip_id", DataType::Int32, true),
        field("ttl", DataType::Int16, false),
        field("mss", DataType::Int32, true),
        field("window_scale", DataType::Int16, true),
        field("sack_permitted", DataType::Boolean, false),
        field("ts_val", DataType::Int64, true),
        field("ts_ecr", DataType::Int64, true),
        field(
            "sack",
            DataType::List(Arc::new(Field::new(
                "element",
                DataType::Struct(sack_block),
                false,
            ))),
            false,
        ),
        field("payload", DataType::Binary, true),
    ]
}

impl SegmentRecord {
    /// `segment`, decoded from file `file`, with its payload start `payload`.
    pub fn of(segment: &Segment, payload: &[u8]) -> Self {
        let options = &segment.options;
        SegmentRecord {
            file: segment.source as i32,
            frame: segment.frame as i64,
            time_ns: segment.timestamp_ns,
            flow: pipeline::flow_key(segment) as i64,
            src_ip: segment.src.ip.to_string(),
            src_port: i32::from(segment.src.port),
            dst_ip: segment.dst.ip.to_string(),
            dst_port: i32::from(segment.dst.port),
            seq: i64::from(segment.seq),
            ack: i64::from(segment.ack),
            flags: i16::from(segment.flags.0),
            window: i32::from(segment.window),
            payload_len: i64::from(segment.payload_len),
            wire_len: i64::from(segment.wire_len),
            ip_id: segment.ip_id.map(i32::from),
            ttl: i16::from(segment.ttl),
            mss: options.mss.map(i32::from),
            window_scale: options.window_scale.map(i16::from),
            sack_permitted: options.sack_permitted,
            ts_val: options.timestamps.map(|(value, _)| i64::from(value)),
            ts_ecr: options.timestamps.map(|(_, echo)| i64::from(echo)),
            sack: options
                .sack
                .as_slice()
                .iter()
                .map(|&(left, right)| SackBlock {
                    left: i64::from(left),
                    right: i64::from(right),
                })
                .collect(),
            payload: (!payload.is_empty()).then(|| payload.to_vec()),
        }
    }

    /// The segment again, and its payload start; None when a field is out of its range.
    pub fn segment(&self) -> Option<Segment> {
        let endpoint = |ip: &str, port: i32| {
            Some(Endpoint {
                ip: ip.parse::<IpAddr>().ok()?,
                port: u16::try_from(port).ok()?,
            })
        };
        let mut sack = SackBlocks::default();
        for block in &self.sack {
            sack.push(
                u32::try_from(block.left).ok()?,
                u32::try_from(block.right).ok()?,
            );
        }
        let timestamps = match (self.ts_val, self.ts_ecr) {
            (Some(value), Some(echo)) => {
                Some((u32::try_from(value).ok()?, u32::try_from(echo).ok()?))
            }
            _ => None,
        };
        Some(Segment {
            frame: u64::try_from(self.frame).ok()?,
            source: usize::try_from(self.file).ok()?,
            timestamp_ns: self.time_ns,
            wire_len: u32::try_from(self.wire_len).ok()?,
            src: endpoint(&self.src_ip, self.src_port)?,
            dst: endpoint(&self.dst_ip, self.dst_port)?,
            seq: u32::try_from(self.seq).ok()?,
            ack: u32::try_from(self.ack).ok()?,
            flags: Flags(u8::try_from(self.flags).ok()?),
            window: u16::try_from(self.window).ok()?,
            payload_len: u32::try_from(self.payload_len).ok()?,
            options: Options {
                mss: self.mss.map(u16::try_from).transpose().ok()?,
                window_scale: self.window_scale.map(u8::try_from).transpose().ok()?,
                sack_permitted: self.sack_permitted,
                timestamps,
                sack,
            },
            captured_payload: Default::default(),
            ip_id: self.ip_id.map(u16::try_from).transpose().ok()?,
            ttl: u8::try_from(self.ttl).ok()?,
        })
    }
}

/// The records as one batch.
pub fn to_batch(records: &[SegmentRecord]) -> Result<RecordBatch, Error> {
    serde_arrow::to_record_batch(&schema(), &records)
        .map_err(|error| Error::Arrow(error.to_string()))
}

/// The records of a batch of [`schema`].
pub fn from_batch(batch: &RecordBatch) -> Result<Vec<SegmentRecord>, Error> {
    serde_arrow::from_record_batch(batch).map_err(|error| Error::Arrow(error.to_string()))
}
