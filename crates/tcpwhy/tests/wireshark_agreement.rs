//! Our analysis events against tshark's `tcp.analysis.*`, frame by frame, on
//! every capture in ../shared/captures/ppa and every capture the project ships.
//!
//! Every disagreement is printed. The test fails on any that is not pinned in
//! `PINNED`, where each entry says why our answer is the right one, or
//! explained by the one rule where we knowingly part from tshark: data sent
//! again soon after the sender's newest is a retransmission, not
//! out-of-order, when an earlier frame of the capture carried the same bytes
//! (checked here from tshark's own sequence numbers).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

/// The categories compared, with the tshark fields that make up each. A SYN
/// or SYN-ACK sent again is one event of ours, `syn_retransmission`, which
/// tshark flags `tcp.analysis.retransmission`.
const CATEGORIES: [(&str, &[&str]); 5] = [
    (
        "retransmission",
        &[
            "tcp.analysis.retransmission",
            "tcp.analysis.fast_retransmission",
            "tcp.analysis.spurious_retransmission",
        ],
    ),
    ("duplicate_ack", &["tcp.analysis.duplicate_ack"]),
    ("zero_window", &["tcp.analysis.zero_window"]),
    ("lost_segment", &["tcp.analysis.lost_segment"]),
    ("out_of_order", &["tcp.analysis.out_of_order"]),
];

/// Where we knowingly differ from tshark: (file, frame, category, what we say, why).
const PINNED: &[(&str, u64, &str, bool, &str)] = &[];

/// The book's captures beside the checkout, and the project's own.
fn capture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<PathBuf> = std::fs::read_dir(synth::shared_captures("ppa"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    for own in ["examples", "tests/captures"] {
        if let Ok(entries) = std::fs::read_dir(root.join(own)) {
            files.extend(entries.map(|entry| entry.unwrap().path()).filter(|path| {
                let name = path.to_string_lossy();
                name.ends_with(".pcap") || name.ends_with(".pcapng")
            }));
        }
    }
    files.sort();
    files
}

type Flags = BTreeSet<(u64, &'static str)>;

fn tshark_flags(file: &Path) -> Flags {
    let mut args: Vec<String> = ["-n", "-r"].map(String::from).to_vec();
    args.push(file.display().to_string());
    args.extend(["-Y", "tcp", "-T", "fields", "-e", "frame.number"].map(String::from));
    for (_, fields) in CATEGORIES {
        for field in fields {
            args.push("-e".into());
            args.push(field.to_string());
        }
    }
    let output = Command::new("tshark")
        .args(&args)
        .output()
        .expect("tshark must be installed (apt-get install tshark)");
    let mut flags = Flags::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let mut cells = line.split('\t');
        let frame: u64 = cells
            .next()
            .and_then(|f| f.parse().ok())
            .expect("frame number");
        let cells: Vec<&str> = cells.collect();
        let mut column = 0;
        for (category, fields) in CATEGORIES {
            let present = cells[column..column + fields.len()]
                .iter()
                .any(|cell| !cell.is_empty());
            column += fields.len();
            if present {
                flags.insert((frame, category));
            }
        }
    }
    flags
}

/// A data frame as tshark numbers it: the direction it travels and the
/// relative bytes `[seq, seq + len)` it carries.
struct DataFrame {
    frame: u64,
    direction: String,
    seq: u64,
    len: u64,
}

fn tshark_data_frames(file: &Path) -> Vec<DataFrame> {
    let fields = [
        "frame.number",
        "tcp.stream",
        "ip.src",
        "ipv6.src",
        "tcp.srcport",
        "tcp.seq",
        "tcp.len",
    ];
    let mut args: Vec<String> = ["-n", "-r"].map(String::from).to_vec();
    args.push(file.display().to_string());
    args.extend(["-Y", "tcp.len > 0", "-T", "fields"].map(String::from));
    for field in fields {
        args.extend(["-e".to_string(), field.to_string()]);
    }
    let output = Command::new("tshark").args(&args).output().expect("tshark");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            Some(DataFrame {
                frame: cells[0].parse().ok()?,
                direction: cells[1..5].join(" "),
                seq: cells[5].parse().ok()?,
                len: cells[6].parse().ok()?,
            })
        })
        .collect()
}

/// Whether a frame before `frame`, in the same direction, carried any of its bytes.
fn bytes_seen_before(frames: &[DataFrame], frame: u64) -> bool {
    let Some(resend) = frames.iter().find(|f| f.frame == frame) else {
        return false;
    };
    frames
        .iter()
        .take_while(|earlier| earlier.frame < frame)
        .filter(|earlier| earlier.direction == resend.direction)
        .any(|earlier| {
            earlier.seq < resend.seq + resend.len && resend.seq < earlier.seq + earlier.len
        })
}

/// tshark's out-of-order that we call a retransmission, because the capture
/// saw its bytes before.
fn resend_of_seen_bytes(theirs: &Flags, ours: &Flags, frame: u64, frames: &[DataFrame]) -> bool {
    let reordered = (frame, "out_of_order");
    let resent = (frame, "retransmission");
    theirs.contains(&reordered)
        && !theirs.contains(&resent)
        && ours.contains(&resent)
        && !ours.contains(&reordered)
        && bytes_seen_before(frames, frame)
}

fn category_of(kind: &str) -> Option<&'static str> {
    match kind {
        "retransmission"
        | "syn_retransmission"
        | "fast_retransmission"
        | "spurious_retransmission" => Some("retransmission"),
        "duplicate_ack" => Some("duplicate_ack"),
        "zero_window" => Some("zero_window"),
        "lost_segment" => Some("lost_segment"),
        "out_of_order" => Some("out_of_order"),
        _ => None,
    }
}

/// Our flags per frame, and the connection of each flagged frame.
fn our_flags(file: &Path) -> (Flags, BTreeMap<u64, u64>) {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["events", "--format", "csv", "--quiet"])
        .arg(file)
        .output()
        .expect("run tcpwhy");
    let mut flags = Flags::new();
    let mut connection_of = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let frame: u64 = cells[0].parse().expect("frame");
        let connection: u64 = cells[2].parse().expect("connection");
        if let Some(category) = category_of(cells[4]) {
            flags.insert((frame, category));
            connection_of.insert(frame, connection);
        }
    }
    (flags, connection_of)
}

#[test]
fn per_frame_analysis_flags_match_tshark_on_every_reference_capture() {
    let files = capture_files();
    let pinned: BTreeMap<(&str, u64, &str), bool> = PINNED
        .iter()
        .map(|&(file, frame, category, ours, _)| ((file, frame, category), ours))
        .collect();
    let mut unexplained = Vec::new();
    let mut agreed = 0;
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let theirs = tshark_flags(file);
        let (ours, connection_of) = our_flags(file);
        agreed += theirs.intersection(&ours).count();
        let mut data_frames = None;
        for &(frame, category) in theirs.symmetric_difference(&ours) {
            let we_flag = ours.contains(&(frame, category));
            let frames = data_frames.get_or_insert_with(|| tshark_data_frames(file));
            let verdict = match pinned.get(&(name, frame, category)) {
                Some(&pinned_ours) if pinned_ours == we_flag => "pinned",
                _ if resend_of_seen_bytes(&theirs, &ours, frame, frames) => "seen before",
                _ => "UNEXPLAINED",
            };
            let connection = connection_of.get(&frame).map_or("-".into(), u64::to_string);
            println!(
                "{verdict}: {name} frame {frame} connection {connection}: {category} — tshark {}, tcpwhy {}",
                if we_flag { "no" } else { "yes" },
                if we_flag { "yes" } else { "no" },
            );
            if verdict == "UNEXPLAINED" {
                unexplained.push(format!("{name}:{frame}:{category}"));
            }
        }
    }
    println!("{agreed} flags agreed across {} captures", files.len());
    assert!(agreed > 100, "too few flags compared: is tshark working?");
    assert!(
        unexplained.is_empty(),
        "unexplained disagreements: {unexplained:?}"
    );
}

/// The frames of one category among `flags`.
fn frames_of(flags: &Flags, category: &str) -> BTreeSet<u64> {
    flags
        .iter()
        .filter(|(_, of)| *of == category)
        .map(|&(frame, _)| frame)
        .collect()
}

#[test]
fn duplicate_acks_over_ipv6_match_tshark_as_over_ipv4() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let original = root.join("tests/captures/loss_upstream-client.pcap");
    let converted = std::env::temp_dir().join(format!("ipv6-{}.pcap", std::process::id()));
    synth::rewrite::Capture::read(&original)
        .as_ipv6()
        .write(&converted);
    let theirs = frames_of(&tshark_flags(&converted), "duplicate_ack");
    let ours = frames_of(&our_flags(&converted).0, "duplicate_ack");
    let over_ipv4 = frames_of(&tshark_flags(&original), "duplicate_ack");
    std::fs::remove_file(&converted).unwrap();
    assert_eq!(theirs, over_ipv4, "the conversion keeps every segment");
    assert_eq!(ours, theirs);
}

/// Of the packets matching `filter`, tshark's `value` by its `key` (two
/// numeric fields).
fn tshark_by(file: &Path, filter: &str, key: &str, value: &str) -> BTreeMap<u64, f64> {
    let output = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(file)
        .args(["-Y", filter, "-T", "fields", "-e", key, "-e", value])
        .output()
        .expect("run tshark");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('\t')?;
            Some((key.parse().ok()?, value.parse().ok()?))
        })
        .collect()
}

#[test]
fn offsets_count_from_the_first_frame_as_wireshark_relative_time_does() {
    let mut compared = 0;
    for file in common::book_captures_and_demo() {
        let end = common::objects_read_so_far("connections", &file, "end");
        let Some(start_ns) = end[0]["start_ns"].as_i64() else {
            continue;
        };
        let theirs = tshark_by(&file, "frame", "frame.number", "frame.time_relative");
        for connection in common::objects_read_so_far("connections", &file, "connection") {
            let frame = connection["first_frame"].as_u64().unwrap();
            let ours = (connection["first_ns"].as_i64().unwrap() - start_ns) as f64 / 1e9;
            assert!(
                (ours - theirs[&frame]).abs() < 1e-6,
                "{}: frame {frame} at +{ours:.9} s, tshark +{:.9} s",
                file.display(),
                theirs[&frame]
            );
            compared += 1;
        }
    }
    // The book's captures and the demo open 192 connections.
    assert!(compared >= 150, "only {compared} connections compared");
}

/// What `tcpwhy COMMAND FILE` prints as a text table.
fn text_table(command: &str, file: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args([command, "--quiet"])
        .arg(file)
        .output()
        .expect("run tcpwhy");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The events table's offsets are Wireshark's relative times too, though it
/// writes each event as it is raised: on a capture whose first two frames
/// are not TCP, each row's "+seconds" is its frame's `frame.time_relative`.
#[test]
fn the_events_table_counts_from_the_first_frame_as_it_streams() {
    let file = synth::shared_captures("ppa").join("http_espn.pcapng");
    let theirs = tshark_by(&file, "frame", "frame.number", "frame.time_relative");
    let text = text_table("events", &file);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|row| row.split_whitespace().collect())
        .filter(|cells: &Vec<&str>| cells.len() > 3 && cells[2].starts_with('+'))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    for cells in rows {
        let frame: u64 = cells[0].parse().unwrap();
        let ours: f64 = cells[2].trim_start_matches('+').parse().unwrap();
        assert!(
            (ours - theirs[&frame]).abs() < 1e-6,
            "frame {frame}: +{ours} against tshark's +{}",
            theirs[&frame]
        );
    }
}

/// A duration as the text tables print it ("62.8 ms", "11 µs", "1.2 s"), in milliseconds.
fn printed_ms(value: &str, unit: &str) -> f64 {
    let scale = match unit {
        "µs" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        other => panic!("unit {other}"),
    };
    value.parse::<f64>().unwrap() * scale
}

/// The connections table gives each connection its own path round trip:
/// on a page load where most servers sat 10 ms away and a few 63 ms,
/// each row agrees with tshark's round trip through that connection's
/// handshake (the least of it and its data's round trips, so never more).
#[test]
fn the_connections_table_gives_each_connection_its_path_round_trip() {
    let file = synth::shared_captures("ppa").join("http_espn.pcapng");
    // Each stream's round trip through its handshake (SYN to the ACK of the SYN-ACK).
    let theirs = tshark_by(
        &file,
        "tcp.analysis.initial_rtt",
        "tcp.stream",
        "tcp.analysis.initial_rtt",
    );
    let text = text_table("connections", &file);
    let mut compared = 0;
    for row in text.lines().skip(1).filter(|row| row.contains(" → ")) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let id: u64 = cells[0].parse().unwrap();
        let ours = printed_ms(cells[cells.len() - 2], cells[cells.len() - 1]);
        let handshake = theirs[&id] * 1e3;
        assert!(
            ours <= handshake * 1.005 && ours >= handshake * 0.9,
            "connection {id}: path rtt {ours} ms, tshark's handshake {handshake} ms"
        );
        compared += 1;
    }
    assert_eq!(compared, theirs.len(), "{text}");
}
