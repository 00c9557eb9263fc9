//! A mapped capture's payloads are read where they lie, by the tracking
//! threads, long after the reader has moved on: what the transactions read
//! of them is what a compressed copy of the capture, whose payloads are
//! copied out of the decompressor's buffer, gives.

use std::io::Write;
use std::path::{Path, PathBuf};

use pipeline::{Analysis, Silent, Stages};
use synth::{Conversation, Side, Trace};

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

fn analysed(capture: &Path, shards: usize) -> Analysis {
    let stages = Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        shards,
        ..Stages::default()
    };
    let paths = [capture.display().to_string()];
    pipeline::analyze(&paths, stages, Silent, |_| {}).expect("capture read")
}

fn everything(analysis: &Analysis) -> String {
    format!(
        "{:?}",
        (
            &analysis.connections,
            &analysis.transactions,
            &analysis.ledgers,
            &analysis.ticks,
            &analysis.findings,
            &analysis.counts,
        )
    )
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

    let copied = analysed(&compressed, 1);
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
        let in_place = analysed(&mapped, shards);
        assert!(
            everything(&in_place) == everything(&copied),
            "{shards} shards reading in place disagree with a copied stream"
        );
    }
    let _ = std::fs::remove_file(mapped);
    let _ = std::fs::remove_file(compressed);
}
