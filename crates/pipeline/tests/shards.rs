//! Connections split across threads give the analysis of one thread,
//! also where a shard must read the capture again because another shard
//! saw first that the capture drops packets, and where the shards read a
//! mapped capture's payloads in place long after the reader moved on.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pipeline::{Analysis, ReadProgress, Stages};
use synth::{Conversation, Side, Trace};

/// The stages the progress bar was told of.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<Vec<&'static str>>>);

impl ReadProgress for Told {
    fn update(&mut self, _: u64) {}

    fn stage(&mut self, doing: &'static str) {
        self.0.lock().unwrap().push(doing);
    }

    fn finish(&mut self) {}
}

fn sweep_case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/sweep-cases")
        .join(name)
}

/// Everything the analysis holds, as text, and the stages it told of.
fn analysed(capture: &Path, shards: usize) -> (String, Vec<&'static str>) {
    let (analysis, told) = analysis_of(capture, shards);
    (everything(&analysis), told)
}

/// The whole analysis of `capture` in `shards` shards, and the stages it told of.
fn analysis_of(capture: &Path, shards: usize) -> (Analysis, Vec<&'static str>) {
    let stages = Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        shards,
        ..Stages::default()
    };
    let told = Told::default();
    let paths = [capture.display().to_string()];
    let analysis = pipeline::analyze(&paths, stages, told.clone(), |_| {}).expect("capture read");
    let stages_told = told.0.lock().unwrap().clone();
    (analysis, stages_told)
}

fn everything(analysis: &Analysis) -> String {
    format!(
        "{:?}",
        (
            &analysis.connections,
            &analysis.rate_limits,
            &analysis.unanswered_syns,
            &analysis.trimmed,
            analysis.memory_budget_bytes,
            &analysis.transactions,
            &analysis.ledgers,
            &analysis.ticks,
            &analysis.findings,
            &analysis.counts,
            analysis.first_ns,
        )
    )
}

const READ_AGAIN: &str = "reading again: the capture drops packets";

#[test]
fn shards_that_learnt_of_drops_too_late_read_again_and_agree_with_one_thread() {
    let capture = sweep_case("capture_drops_seen_first_on_another_connection.pcap");
    let (one, told) = analysed(&capture, 1);
    assert!(!told.contains(&READ_AGAIN));
    let mut read_again = Vec::new();
    for shards in 2..=8 {
        let (split, told) = analysed(&capture, shards);
        assert!(split == one, "{shards} shards disagree with one thread");
        if told.contains(&READ_AGAIN) {
            read_again.push(shards);
        }
    }
    // Which connections share a shard decides whether one learns too late.
    assert!(
        !read_again.is_empty(),
        "no split of the capture had a shard learn of its drops too late"
    );
}

/// Segments of the upload between two requests: some 3 MB, so that the
/// reader releases the pages behind it between requests.
const UPLOAD_SEGMENTS_BETWEEN: u32 = 2_000;
const REQUESTS: u32 = 12;

/// One long upload, and between its stretches a named request on a
/// connection of its own (each on ports of its own, so on shards that are
/// seldom handed a segment), answered at once.
fn upload_among_requests() -> Trace {
    let mut trace = Trace::ethernet();
    let mut upload = Conversation::new("10.0.0.1:40000", "10.0.0.2:5001");
    upload.handshake(&mut trace, 0.0, 1.0);
    let mut now = 2.0;
    for request in 0..REQUESTS {
        for _ in 0..UPLOAD_SEGMENTS_BETWEEN {
            upload.send(&mut trace, Side::Client, now, 1448);
            now += 0.01;
        }
        upload.ack(&mut trace, Side::Server, now);
        let client = format!("10.0.1.{}:{}", request + 1, 41_000 + request);
        let mut asking = Conversation::new(&client, "10.0.0.2:80");
        asking.handshake(&mut trace, now, 1.0);
        let ask = format!("GET /item-{request} HTTP/1.1\r\nHost: shop\r\n\r\n");
        asking.send_bytes(&mut trace, Side::Client, now + 2.0, ask.as_bytes());
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        asking.send_bytes(&mut trace, Side::Server, now + 3.0, answer);
        asking.ack(&mut trace, Side::Client, now + 4.0);
        now += 5.0;
    }
    trace
}

fn written(name: &str, bytes: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("tcpwhy-{}-{name}", std::process::id()));
    std::fs::File::create(&path)
        .and_then(|mut file| file.write_all(bytes))
        .expect("capture written");
    path
}

#[test]
fn payloads_read_in_place_are_those_a_copied_stream_gives() {
    let pcap = upload_among_requests().to_pcap();
    assert!(pcap.len() > 30 << 20, "large enough to release pages");
    let mapped = written("in-place.pcap", &pcap);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&pcap).expect("compressed");
    let compressed = written("copied.pcap.gz", &gzip.finish().expect("compressed"));

    let (copied, _) = analysis_of(&compressed, 1);
    let names: Vec<&str> = copied
        .transactions
        .iter()
        .filter_map(|transaction| transaction.name.as_deref())
        .filter(|name| name.contains("/item-"))
        .collect();
    assert_eq!(
        names.len(),
        REQUESTS as usize,
        "every request named: {names:?}"
    );
    for shards in [1, 2, 3] {
        let (in_place, _) = analysed(&mapped, shards);
        assert!(
            in_place == everything(&copied),
            "{shards} shards reading in place disagree with a copied stream"
        );
    }
    let _ = std::fs::remove_file(mapped);
    let _ = std::fs::remove_file(compressed);
}
