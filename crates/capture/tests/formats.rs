//! Each container format and compression reads back the frames written into it.

use std::io::{Cursor, Write};

use capture::{CaptureError, CaptureReader, MergedReader};
use synth::{Conversation, Side, Trace};

/// Timestamp, link type, captured bytes and original length of each frame.
type Read = Vec<(i64, u32, Vec<u8>, u32)>;

fn read_all(bytes: Vec<u8>) -> Result<Read, CaptureError> {
    let mut reader = CaptureReader::from_reader("test", Cursor::new(bytes))?;
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame()? {
        frames.push((
            frame.timestamp_ns,
            frame.link_type,
            frame.data.to_vec(),
            frame.original_len,
        ));
    }
    Ok(frames)
}

fn sample_trace() -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 10.0);
    conn.send(&mut trace, Side::Client, 20.001, 300);
    trace
}

/// The sample as a big-endian nanosecond pcap, written by hand.
fn big_endian_nanos(trace: &Trace) -> Vec<u8> {
    let mut out = vec![0xa1, 0xb2, 0x3c, 0x4d, 0, 2, 0, 4];
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65535u32.to_be_bytes());
    out.extend_from_slice(&1u32.to_be_bytes());
    for (timestamp, data) in trace.frames() {
        out.extend_from_slice(&((timestamp / 1_000_000_000) as u32).to_be_bytes());
        out.extend_from_slice(&((timestamp % 1_000_000_000) as u32).to_be_bytes());
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(data);
    }
    out
}

fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut padded = body.to_vec();
    padded.resize(body.len().div_ceil(4) * 4, 0);
    let total = (12 + padded.len()) as u32;
    let mut out = kind.to_le_bytes().to_vec();
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&padded);
    out.extend_from_slice(&total.to_le_bytes());
    out
}

fn section_header() -> Vec<u8> {
    let mut body = 0x1a2b_3c4du32.to_le_bytes().to_vec();
    body.extend_from_slice(&[1, 0, 0, 0]);
    body.extend_from_slice(&u64::MAX.to_le_bytes());
    block(0x0a0d_0d0a, &body)
}

/// An interface with a resolution option and an offset in seconds.
fn interface(link_type: u16, resolution: u8, offset_seconds: i64) -> Vec<u8> {
    let mut body = link_type.to_le_bytes().to_vec();
    body.extend_from_slice(&[0, 0]);
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(&[9, 0, 1, 0, resolution, 0, 0, 0]);
    body.extend_from_slice(&[14, 0, 8, 0]);
    body.extend_from_slice(&offset_seconds.to_le_bytes());
    body.extend_from_slice(&[0, 0, 0, 0]);
    block(1, &body)
}

fn enhanced_packet(interface: u32, ticks: u64, data: &[u8]) -> Vec<u8> {
    let mut body = interface.to_le_bytes().to_vec();
    body.extend_from_slice(&((ticks >> 32) as u32).to_le_bytes());
    body.extend_from_slice(&(ticks as u32).to_le_bytes());
    body.extend_from_slice(&(data.len() as u32).to_le_bytes());
    body.extend_from_slice(&(data.len() as u32 + 10).to_le_bytes());
    body.extend_from_slice(data);
    block(6, &body)
}

fn simple_packet(data: &[u8]) -> Vec<u8> {
    let mut body = (data.len() as u32).to_le_bytes().to_vec();
    body.extend_from_slice(data);
    block(3, &body)
}

#[test]
fn pcap_in_both_byte_orders_and_resolutions_reads_the_same_frames() {
    let trace = sample_trace();
    let little = read_all(trace.to_pcap()).unwrap();
    let big = read_all(big_endian_nanos(&trace)).unwrap();
    assert_eq!(little.len(), 4);
    assert_eq!(little, big);
    assert_eq!(little[3].0 - little[0].0, 20_001_000);
    assert_eq!(little[3].1, 1);
}

#[test]
fn pcapng_applies_each_interfaces_resolution_offset_and_link_type() {
    let data = [0xaa; 60];
    let mut file = section_header();
    file.extend(interface(1, 9, 0)); // nanoseconds, Ethernet
    file.extend(interface(101, 0x80 | 10, 100)); // 1/1024 s, raw IP, +100 s
    file.extend(block(0x0000_0bad, &[1, 2, 3, 4])); // unknown block: skipped
    file.extend(enhanced_packet(0, 1_500_000_000, &data));
    file.extend(enhanced_packet(1, 2048, &data[..20]));
    file.extend(simple_packet(&data[..30]));
    let frames = read_all(file).unwrap();
    assert_eq!(frames.len(), 3);
    assert_eq!(
        (frames[0].0, frames[0].1, frames[0].3),
        (1_500_000_000, 1, 70)
    );
    assert_eq!((frames[1].0, frames[1].1), (102_000_000_000, 101));
    assert_eq!(frames[1].2.len(), 20);
    assert_eq!((frames[2].1, frames[2].2.len()), (1, 30));
}

#[test]
fn a_new_section_forgets_the_previous_interfaces() {
    let mut file = section_header();
    file.extend(interface(1, 6, 0));
    file.extend(enhanced_packet(0, 1, &[0; 20]));
    file.extend(section_header());
    let packet_at = file.len() as u64;
    file.extend(enhanced_packet(0, 2, &[0; 20]));
    let error = read_all(file).unwrap_err();
    assert_eq!(error.offset, packet_at);
    assert!(
        error.reason.contains("undeclared interface 0"),
        "{}",
        error.reason
    );
}

#[test]
fn gzip_and_zstd_read_like_the_plain_file() {
    let plain = sample_trace().to_pcap();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&plain).unwrap();
    let zstd = zstd::encode_all(Cursor::new(plain.clone()), 1).unwrap();
    let expected = read_all(plain).unwrap();
    assert_eq!(read_all(gzip.finish().unwrap()).unwrap(), expected);
    assert_eq!(read_all(zstd).unwrap(), expected);
}

#[test]
fn a_truncated_record_names_its_offset_and_frame() {
    let mut file = sample_trace().to_pcap();
    let full = file.len();
    file.truncate(full - 5);
    let last_record_at = {
        let frames = read_all(sample_trace().to_pcap()).unwrap();
        (full - 16 - frames[3].2.len()) as u64
    };
    let mut reader = CaptureReader::from_reader("cut.pcap", Cursor::new(file)).unwrap();
    for _ in 0..3 {
        reader.next_frame().unwrap().unwrap();
    }
    let error = reader.next_frame().unwrap_err();
    assert_eq!(error.offset, last_record_at);
    assert_eq!(
        error.to_string(),
        format!("cut.pcap: truncated packet record (frame 4) at byte {last_record_at}")
    );
}

#[test]
fn garbage_and_implausible_lengths_are_errors_not_panics() {
    let not_a_capture = read_all(b"hello, this is text".to_vec()).unwrap_err();
    assert_eq!(not_a_capture.offset, 0);
    assert!(not_a_capture.reason.contains("not a pcap or pcapng file"));
    let mut huge = sample_trace().to_pcap();
    huge[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let error = read_all(huge).unwrap_err();
    assert_eq!(error.offset, 24);
    assert!(error.reason.contains("implausible"), "{}", error.reason);
    let mut bad_block = section_header();
    bad_block.extend_from_slice(&[1, 0, 0, 0, 7, 0, 0, 0]);
    assert!(read_all(bad_block)
        .unwrap_err()
        .reason
        .contains("bad block length 7"));
}

#[test]
fn several_files_merge_by_time_and_renumber() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut early = Trace::ethernet();
    let mut late = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    for (i, time) in [0.0, 1.0, 2.0, 3.0].into_iter().enumerate() {
        let trace = if i % 2 == 0 { &mut early } else { &mut late };
        conn.send(trace, Side::Client, time, 10);
    }
    let paths = [dir.join("b.pcap"), dir.join("a.pcap")];
    late.write(&paths[0]).unwrap();
    early.write(&paths[1]).unwrap();
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut merged = MergedReader::open(&names).unwrap();
    let mut order = Vec::new();
    while let Some(frame) = merged.next_frame().unwrap() {
        order.push((frame.number, frame.source));
    }
    assert_eq!(order, vec![(1, 1), (2, 0), (3, 1), (4, 0)]);
    assert_eq!(merged.bytes_read(), merged.total_bytes().unwrap());
    std::fs::remove_dir_all(dir).unwrap();
}
