//! A capture rotated into many files is one capture: read as one merged
//! capture in one process, or decoded file by file and analysed in groups
//! of connections, it gives what the single file gives.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pipeline::{Analysis, FileDecoder, FileSurvey, Part, PartAnalyzer, Silent, Stages};
use tcp::Event;

fn capture(name: &str) -> String {
    format!("{}/../../tests/captures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn every_stage() -> Stages {
    Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        ..Stages::default()
    }
}

/// A classic pcap file cut into files of `frames_per_file` records each, as
/// `editcap -c` cuts it, written under `directory`.
fn rotate(path: &str, frames_per_file: usize, directory: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).expect("capture reads");
    let (header, mut records) = bytes.split_at(24);
    let little_endian = header[..4] == [0xd4, 0xc3, 0xb2, 0xa1];
    let mut files = Vec::new();
    let mut chunk = header.to_vec();
    let mut in_chunk = 0;
    while records.len() >= 16 {
        let length_bytes: [u8; 4] = records[8..12].try_into().expect("four bytes");
        let length = if little_endian {
            u32::from_le_bytes(length_bytes)
        } else {
            u32::from_be_bytes(length_bytes)
        } as usize;
        let (record, rest) = records.split_at(16 + length);
        chunk.extend_from_slice(record);
        records = rest;
        in_chunk += 1;
        if in_chunk == frames_per_file || records.len() < 16 {
            let file: PathBuf = directory.join(format!("part-{:03}.pcap", files.len()));
            std::fs::write(&file, &chunk).expect("part writes");
            files.push(file.display().to_string());
            chunk.truncate(24);
            in_chunk = 0;
        }
    }
    files
}

/// The capture at `path` (classic pcap of Ethernet frames) with an ARP frame
/// recorded a second before its first, written under `directory`: a capture
/// whose first frame is not TCP.
fn with_arp_first(path: &str, directory: &Path) -> String {
    let bytes = std::fs::read(path).expect("capture reads");
    let (header, records) = bytes.split_at(24);
    assert_eq!(
        header[..4],
        [0xd4, 0xc3, 0xb2, 0xa1],
        "a little-endian pcap"
    );
    let captured = u32::from_le_bytes(records[8..12].try_into().expect("four bytes")) as usize;
    let mut arp = records[..16 + captured].to_vec();
    let seconds = u32::from_le_bytes(arp[..4].try_into().expect("four bytes"));
    arp[..4].copy_from_slice(&(seconds - 1).to_le_bytes());
    arp[16 + 12..16 + 14].copy_from_slice(&[0x08, 0x06]);
    let file = directory.join("arp-first.pcap");
    std::fs::write(&file, [header, &arp, records].concat()).expect("capture writes");
    file.display().to_string()
}

fn analyzed(paths: &[String]) -> (Analysis, Vec<Event>) {
    let mut events = Vec::new();
    let analysis = pipeline::analyze(paths, every_stage(), Silent, |event| events.push(*event))
        .expect("captures read");
    (analysis, events)
}

/// What a cluster does: each file decoded alone, the segments grouped by
/// connection into `groups` parts in frame order, each part analysed and
/// carried as bytes, then all concluded together.
fn analyzed_in_parts(paths: &[String], groups: u64) -> (Analysis, Vec<Event>) {
    let mut segments = Vec::new();
    let mut surveys: Vec<FileSurvey> = Vec::new();
    for (source, path) in paths.iter().enumerate() {
        let mut decoder = FileDecoder::open(path, source);
        while decoder.decode(100, |segment, payload| {
            segments.push((*segment, payload.to_vec()))
        }) {}
        let survey = decoder.survey();
        surveys.push(FileSurvey::from_bytes(&survey.to_bytes()).expect("survey bytes read"));
    }
    let plan = pipeline::plan(&surveys).expect("rotated files follow each other");
    let mut by_group: BTreeMap<u64, Vec<_>> = BTreeMap::new();
    for (mut segment, payload) in segments {
        segment.frame += plan.frame_offsets[segment.source];
        let group = pipeline::flow_key(&segment) % groups;
        by_group.entry(group).or_default().push((segment, payload));
    }
    let first_ns = plan.first_segment_ns();
    let parts: Vec<Part> = by_group
        .into_values()
        .map(|mut group| {
            group.sort_by_key(|(segment, _)| segment.frame);
            let mut analyzer = PartAnalyzer::new(every_stage(), first_ns, paths.len());
            for (segment, payload) in &group {
                analyzer.segment(segment, payload);
            }
            Part::from_bytes(&analyzer.finish().to_bytes()).expect("part bytes read")
        })
        .collect();
    pipeline::conclude_parts(plan, every_stage(), parts)
}

fn assert_same(expected: &(Analysis, Vec<Event>), got: &(Analysis, Vec<Event>)) {
    let ((expected, expected_events), (got, got_events)) = (expected, got);
    assert_eq!(got.connections, expected.connections);
    assert_eq!(got.transactions, expected.transactions);
    assert_eq!(got.ledgers, expected.ledgers);
    assert_eq!(got_events, expected_events);
    assert_eq!(got.ticks, expected.ticks);
    assert_eq!(got.findings, expected.findings);
    assert_eq!(got.unanswered_syns, expected.unanswered_syns);
    assert_eq!(
        serde_json::to_value(&got.counts).unwrap(),
        serde_json::to_value(&expected.counts).unwrap()
    );
    assert_eq!(got.first_ns, expected.first_ns);
}

fn temporary_directory(name: &str) -> PathBuf {
    let directory = std::env::temp_dir().join(format!("tcpwhy-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&directory).expect("temporary directory");
    directory
}

#[test]
fn rotated_files_analysed_in_parts_give_what_one_process_gives() {
    let rotations = [
        ("pool_queueing.pcap", 50),
        ("syn_drops.pcap", 3),
        ("port_reuse.pcap", 2),
        ("loss_bursts_downstream.pcap", 200),
    ];
    for (name, frames_per_file) in rotations {
        let directory = temporary_directory(name);
        let paths = rotate(&capture(name), frames_per_file, &directory);
        assert!(paths.len() >= 30, "{name}: {} files", paths.len());
        let merged = analyzed(&paths);
        assert!(!merged.0.findings.is_empty(), "{name}: nothing found");
        let spans_files =
            |c: &tcp::ConnectionSummary| c.last_frame - c.first_frame >= frames_per_file as u64;
        assert!(
            merged.0.connections.iter().any(spans_files),
            "{name}: no connection spans files"
        );
        for groups in [1, 2, 7] {
            assert_same(&merged, &analyzed_in_parts(&paths, groups));
        }
        std::fs::remove_dir_all(directory).ok();
    }
}

#[test]
fn parts_count_time_from_the_first_segment_as_one_process_does() {
    let directory = temporary_directory("arp-first");
    let capture = with_arp_first(&capture("periodic_stalls.pcap"), &directory);
    let paths = rotate(&capture, 100, &directory);
    let merged = analyzed(&paths);
    assert_eq!(
        merged.0.counts.other_traffic.arp, 1,
        "the ARP frame is not TCP"
    );
    for groups in [1, 3] {
        assert_same(&merged, &analyzed_in_parts(&paths, groups));
    }
    std::fs::remove_dir_all(directory).ok();
}
