//! Each lab capture in tests/captures shows what its manifest says it shows.
//!
//! `lab/run.py` records every scenario with real Linux TCP and writes beside
//! the capture the figures it measured from it. Here tshark measures each
//! capture again, independently of tcpwhy, and the figures must agree: the
//! delayed-ACK stall and what released it, the advertised window, the SYN
//! retry schedule, the side the loss is on, and so on. A last test checks
//! that tcpwhy's own reports find the same figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;

/// Linux holds a delayed ACK at least 40 ms; its timer and the lab's wire add a little.
const DELAYED_ACK_MS: std::ops::RangeInclusive<f64> = 36.0..=60.0;
/// 1500-byte MTU less IP and TCP headers and timestamps: no frame on a real link carries more.
const MSS: u64 = 1448;
const MAX_CAPTURE_BYTES: u64 = 2_000_000;
const CLIENT: &str = "10.77.0.1";
const SERVER: &str = "10.77.0.2";

/// The scenarios `lab/run.py` makes; each has a test below.
const SCENARIOS: [&str; 28] = [
    "app_failures",
    "chatty_high_rtt",
    "delayed_ack",
    "drops_at_tap",
    "healthy",
    "link_rate_limit",
    "loss_bursts_downstream",
    "loss_upstream",
    "nagle_delayed_ack",
    "nagle_fixed",
    "odd_segments_delayed_ack",
    "periodic_stalls",
    "pool_queueing",
    "port_reuse",
    "proxy_idle",
    "proxy_idle_off",
    "proxy_nagle",
    "proxy_pool",
    "proxy_snat",
    "proxy_window",
    "proxy_window_off",
    "receive_window_limit",
    "server_think_time",
    "small_writes",
    "stopped_reading",
    "syn_drops",
    "taps_mislabelled",
    "zero_window",
];

const FIELDS: [&str; 17] = [
    "frame.time_epoch",
    "ip.src",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.stream",
    "tcp.flags.syn",
    "tcp.flags.ack",
    "tcp.flags.fin",
    "tcp.seq",
    "tcp.ack",
    "tcp.len",
    "tcp.window_size",
    "tcp.analysis.retransmission",
    "tcp.analysis.lost_segment",
    "tcp.analysis.zero_window",
    "tcp.analysis.bytes_in_flight",
    "tcp.analysis.out_of_order",
];

/// One TCP packet as tshark dissects it.
#[derive(Debug, Clone)]
struct Packet {
    time: f64,
    src: String,
    sport: u64,
    dport: u64,
    stream: u64,
    syn: bool,
    ack_flag: bool,
    fin: bool,
    seq: u64,
    ack: u64,
    len: u64,
    window: u64,
    retransmission: bool,
    lost_before: bool,
    zero_window: bool,
    in_flight: u64,
    out_of_order: bool,
}

impl Packet {
    fn parse(line: &str) -> Packet {
        let cells: Vec<&str> = line.split('\t').collect();
        let number = |index: usize| cells[index].parse::<u64>().unwrap_or(0);
        let flag = |index: usize| matches!(cells[index], "1" | "True");
        let present = |index: usize| !cells[index].is_empty();
        Packet {
            time: cells[0].parse().unwrap(),
            src: cells[1].to_string(),
            sport: number(2),
            dport: number(3),
            stream: number(4),
            syn: flag(5),
            ack_flag: flag(6),
            fin: flag(7),
            seq: number(8),
            ack: number(9),
            len: number(10),
            window: number(11),
            retransmission: present(12),
            lost_before: present(13),
            zero_window: present(14),
            in_flight: number(15),
            out_of_order: present(16),
        }
    }

    fn is_syn(&self) -> bool {
        self.syn && !self.ack_flag
    }

    /// Data sent again: Wireshark calls a resend out-of-order when it follows
    /// new data within a round trip, and the lab's wire never reorders.
    fn is_resent(&self) -> bool {
        self.len > 0 && (self.retransmission || self.out_of_order)
    }

    fn is_syn_ack(&self) -> bool {
        self.syn && self.ack_flag
    }
}

/// A scenario's manifest and the packets of its capture.
struct Lab {
    manifest: Value,
    packets: Vec<Packet>,
}

impl Lab {
    fn load(scenario: &str) -> Lab {
        let manifest = read_manifest(&captures_dir().join(format!("{scenario}.json")));
        let capture = captures_dir().join(manifest["capture"].as_str().unwrap());
        Lab {
            packets: tshark(&capture),
            manifest,
        }
    }

    fn expect(&self, key: &str) -> f64 {
        self.manifest["expect"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("the manifest has no number expect.{key}"))
    }

    fn data_from(&self, src: &str) -> Vec<&Packet> {
        self.packets
            .iter()
            .filter(|p| p.src == src && p.len > 0)
            .collect()
    }
}

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

fn read_manifest(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}; regenerate with lab/run.py", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn manifest_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(captures_dir())
        .expect("tests/captures")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
}

/// Every TCP packet of a capture, from tshark.
fn tshark(capture: &Path) -> Vec<Packet> {
    let mut command = Command::new("tshark");
    command.args(["-n", "-r"]).arg(capture);
    command.args(["-Y", "tcp", "-T", "fields"]);
    for field in FIELDS {
        command.args(["-e", field]);
    }
    let output = command.output().unwrap_or_else(|e| {
        panic!("the lab capture tests measure captures with tshark, which could not run ({e}): install it, e.g. `apt-get install tshark`")
    });
    assert!(
        output.status.success(),
        "tshark failed on {}: {}",
        capture.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let packets: Vec<Packet> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(Packet::parse)
        .collect();
    assert!(!packets.is_empty(), "no TCP in {}", capture.display());
    packets
}

fn close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= expected.abs() * 0.1,
        "{what}: the capture shows {actual:.3}, the manifest says {expected:.3} (±10%)"
    );
}

fn median(mut values: Vec<f64>) -> f64 {
    assert!(!values.is_empty(), "nothing to take the median of");
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn gaps(times: &[f64]) -> Vec<f64> {
    times.windows(2).map(|pair| pair[1] - pair[0]).collect()
}

fn by_stream<'a>(packets: impl IntoIterator<Item = &'a Packet>) -> BTreeMap<u64, Vec<&'a Packet>> {
    let mut streams: BTreeMap<u64, Vec<&Packet>> = BTreeMap::new();
    for p in packets {
        streams.entry(p.stream).or_default().push(p);
    }
    streams
}

/// A gap of over 5 ms inside one message: between consecutive data segments
/// of one sender in one connection, with no data from the peer in between.
struct Stall<'a> {
    before: &'a Packet,
    after: &'a Packet,
}

impl Stall<'_> {
    fn ms(&self) -> f64 {
        (self.after.time - self.before.time) * 1e3
    }
}

fn stalls<'a>(lab: &'a Lab, sender: &str) -> Vec<Stall<'a>> {
    let data = lab.packets.iter().filter(|p| p.len > 0);
    let mut found = Vec::new();
    for segments in by_stream(data).values() {
        for pair in segments.windows(2) {
            let stall = Stall {
                before: pair[0],
                after: pair[1],
            };
            let same_message = pair[0].src == sender && pair[1].src == sender;
            if same_message && stall.ms() > 5.0 && !pair[1].retransmission {
                found.push(stall);
            }
        }
    }
    found
}

/// The peer's first ACK covering the segment before the stall: how long it
/// took, and how soon after it the held segment followed (both in ms).
fn releasing_ack(lab: &Lab, stall: &Stall) -> (f64, f64) {
    let end = stall.before.seq + stall.before.len;
    let ack = lab
        .packets
        .iter()
        .find(|p| {
            p.stream == stall.before.stream
                && p.src != stall.before.src
                && p.ack_flag
                && p.ack >= end
                && p.time >= stall.before.time
        })
        .expect("the stalled segment is acknowledged");
    (
        (ack.time - stall.before.time) * 1e3,
        (stall.after.time - ack.time) * 1e3,
    )
}

/// Delayed-ACK stalls: their count and median length are the manifest's,
/// and each ends when the peer's delayed ACK arrives.
fn check_delayed_ack_stalls(lab: &Lab, sender: &str) -> usize {
    let found = stalls(lab, sender);
    assert_eq!(found.len() as f64, lab.expect("stalls"), "stall count");
    let stall = median(found.iter().map(Stall::ms).collect());
    close(stall, lab.expect("stall_ms"), "median stall ms");
    assert!(
        DELAYED_ACK_MS.contains(&stall),
        "a {stall:.1} ms stall is no delayed ACK"
    );
    for stall in &found {
        let (ack_ms, release_ms) = releasing_ack(lab, stall);
        assert!(
            DELAYED_ACK_MS.contains(&ack_ms),
            "the ACK came {ack_ms:.1} ms after the segment"
        );
        assert!(
            release_ms < 10.0,
            "the held segment left {release_ms:.1} ms after the ACK"
        );
    }
    found.len()
}

fn handshake_rtt_ms(lab: &Lab) -> f64 {
    let syn = lab.packets.iter().find(|p| p.is_syn()).unwrap();
    let ack = lab
        .packets
        .iter()
        .find(|p| p.stream == syn.stream && p.src == syn.src && p.ack_flag && !p.syn)
        .unwrap();
    (ack.time - syn.time) * 1e3
}

/// New payload bytes per second from `src`, first data segment to last.
fn throughput(lab: &Lab, src: &str) -> f64 {
    let data = lab.data_from(src);
    let unique: u64 = data
        .iter()
        .filter(|p| !p.retransmission)
        .map(|p| p.len)
        .sum();
    unique as f64 / (data.last().unwrap().time - data[0].time)
}

fn windows_from(lab: &Lab, src: &str) -> Vec<u64> {
    lab.packets
        .iter()
        .filter(|p| p.src == src && !p.syn)
        .map(|p| p.window)
        .collect()
}

fn count(packets: &[&Packet], keep: impl Fn(&Packet) -> bool) -> u64 {
    packets.iter().filter(|p| keep(p)).count() as u64
}

fn all_from<'a>(lab: &'a Lab, src: &str) -> Vec<&'a Packet> {
    lab.packets.iter().filter(|p| p.src == src).collect()
}

/// Silences with no payload either way, of at least 200 ms: (start, ms).
fn silences(lab: &Lab) -> Vec<(f64, f64)> {
    let data: Vec<&Packet> = lab.packets.iter().filter(|p| p.len > 0).collect();
    data.windows(2)
        .map(|pair| (pair[0].time, (pair[1].time - pair[0].time) * 1e3))
        .filter(|(_, ms)| *ms >= 200.0)
        .collect()
}

/// Last request byte to first response byte, per exchange (ms).
fn response_delays_ms(lab: &Lab) -> Vec<f64> {
    let mut delays = Vec::new();
    let mut last_request: BTreeMap<u64, f64> = BTreeMap::new();
    for p in lab.packets.iter().filter(|p| p.len > 0) {
        if p.src == CLIENT {
            last_request.insert(p.stream, p.time);
        } else if let Some(asked) = last_request.remove(&p.stream) {
            delays.push((p.time - asked) * 1e3);
        }
    }
    delays
}

/// SYN times per connection attempt (tshark stream).
fn syns_by_stream(lab: &Lab) -> BTreeMap<u64, Vec<f64>> {
    let mut syns: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for p in lab.packets.iter().filter(|p| p.is_syn()) {
        syns.entry(p.stream).or_default().push(p.time);
    }
    syns
}

#[test]
fn every_manifest_is_a_known_scenario_with_a_small_wire_sized_capture() {
    let mut seen = BTreeSet::new();
    for path in manifest_paths() {
        let manifest = read_manifest(&path);
        let name = manifest["scenario"].as_str().unwrap().to_string();
        assert!(
            SCENARIOS.contains(&name.as_str()),
            "{name} has no check here"
        );
        let mut captures = vec![manifest["capture"].as_str().unwrap().to_string()];
        for other in ["sender_side_capture", "back_capture"] {
            if let Some(other) = manifest["expect"][other].as_str() {
                captures.push(other.to_string());
            }
        }
        for capture in captures {
            let capture = captures_dir().join(capture);
            let size = std::fs::metadata(&capture).unwrap().len();
            assert!(
                size < MAX_CAPTURE_BYTES,
                "{}: {size} bytes",
                capture.display()
            );
            let largest = tshark(&capture).iter().map(|p| p.len).max().unwrap();
            assert!(
                largest <= MSS,
                "{}: a {largest}-byte segment",
                capture.display()
            );
        }
        seen.insert(name);
    }
    let all: BTreeSet<String> = SCENARIOS.iter().map(|s| s.to_string()).collect();
    assert_eq!(seen, all, "every scenario has its manifest");
}

#[test]
fn delayed_ack_holds_the_second_write_of_each_response() {
    let lab = Lab::load("delayed_ack");
    assert_eq!(lab.manifest["expect"]["stalled_side"], SERVER);
    let stalled = check_delayed_ack_stalls(&lab, SERVER);
    assert!(stalled as f64 >= lab.expect("exchanges") * 0.8);
}

#[test]
fn nagle_holds_the_second_piece_of_each_request_until_the_delayed_ack() {
    let lab = Lab::load("nagle_delayed_ack");
    assert_eq!(lab.manifest["expect"]["stalled_side"], CLIENT);
    let stalled = check_delayed_ack_stalls(&lab, CLIENT);
    assert!(stalled as f64 >= lab.expect("exchanges") * 0.8);
}

#[test]
fn with_nodelay_no_request_waits_for_an_ack() {
    let lab = Lab::load("nagle_fixed");
    assert_eq!(lab.manifest["expect"]["before"], "nagle_delayed_ack.pcap");
    assert_eq!(stalls(&lab, CLIENT).len() as f64, lab.expect("stalls"));
    let requests = lab.data_from(CLIENT).len() as f64;
    assert_eq!(
        requests,
        lab.expect("exchanges") * 2.0,
        "two pieces a request"
    );
}

/// The packets of the capture a manifest names as its other one.
fn other_capture(lab: &Lab) -> Vec<Packet> {
    tshark(&captures_dir().join(lab.manifest["expect"]["other_capture"].as_str().unwrap()))
}

#[test]
fn mislabelled_taps_hold_the_same_packets() {
    let lab = Lab::load("taps_mislabelled");
    let other = other_capture(&lab);
    assert_eq!(lab.packets.len() as f64, lab.expect("packets"));
    let numbers = |packets: &[Packet]| -> Vec<(String, u64, u64, u64)> {
        packets
            .iter()
            .map(|p| (p.src.clone(), p.seq, p.ack, p.len))
            .collect()
    };
    assert_eq!(numbers(&other), numbers(&lab.packets));
}

#[test]
fn the_dropping_tap_misses_data_the_sender_never_resent() {
    let lab = Lab::load("drops_at_tap");
    let sender_side = other_capture(&lab);
    assert!(sender_side.iter().all(|p| !p.retransmission));
    let sent = sender_side
        .iter()
        .filter(|p| p.src == CLIENT && p.len > 0)
        .count();
    let seen = lab.data_from(CLIENT).len();
    assert_eq!((sent - seen) as f64, lab.expect("missed_by_server_capture"));
}

#[test]
fn odd_segments_wait_for_a_delayed_ack_after_each_write() {
    let lab = Lab::load("odd_segments_delayed_ack");
    let segments = lab.data_from(CLIENT).len() as f64;
    let writes = lab.expect("writes");
    assert_eq!(segments, writes * 3.0, "three segments a write");
    let stalled = check_delayed_ack_stalls(&lab, CLIENT);
    assert!(
        stalled as f64 >= writes / 2.0,
        "only {stalled} writes stalled"
    );
    // Each stall follows a write's odd third segment, the one the receiver left unacknowledged.
    for stall in stalls(&lab, CLIENT) {
        assert!(stall.before.len < MSS, "a stall after a full segment");
    }
}

#[test]
fn the_receive_window_limits_throughput_to_window_over_rtt() {
    let lab = Lab::load("receive_window_limit");
    let windows = windows_from(&lab, SERVER);
    let window = *windows.iter().max().unwrap() as f64;
    assert_eq!(
        window,
        lab.expect("window_bytes"),
        "largest advertised window"
    );
    assert!(window < 16_384.0, "the window stays small: {window}");
    let rtt = handshake_rtt_ms(&lab);
    close(rtt, lab.expect("rtt_ms"), "handshake RTT ms");
    let rate = throughput(&lab, CLIENT);
    close(rate, lab.expect("throughput_bytes_per_s"), "throughput");
    let window_per_rtt = window / (rtt / 1e3);
    assert!(
        (rate - window_per_rtt).abs() <= window_per_rtt * 0.15,
        "{rate:.0} B/s is not window/RTT = {window_per_rtt:.0} B/s"
    );
}

#[test]
fn the_stopped_reader_keeps_its_window_shut_to_the_end_while_the_writer_probes_it() {
    let lab = Lab::load("stopped_reading");
    let from_server = all_from(&lab, SERVER);
    let from_client = all_from(&lab, CLIENT);
    let zero: Vec<&&Packet> = from_server.iter().filter(|p| p.zero_window).collect();
    assert_eq!(zero.len() as f64, lab.expect("zero_windows_min"));
    let last_open = from_server
        .iter()
        .filter(|p| !p.syn && p.window > 0)
        .map(|p| p.time)
        .fold(0.0, f64::max);
    assert!(
        zero.last().unwrap().time > last_open,
        "the window opened again"
    );
    let probes = from_client
        .iter()
        .filter(|p| p.len == 0 && !p.fin && p.time > zero[0].time)
        .count();
    assert_eq!(probes as f64, lab.expect("window_probes_min"));
}

#[test]
fn the_slow_reader_advertises_zero_windows() {
    let lab = Lab::load("zero_window");
    let from_server = all_from(&lab, SERVER);
    let from_client = all_from(&lab, CLIENT);
    let zero = count(&from_server, |p| p.zero_window);
    assert_eq!(
        zero as f64,
        lab.expect("zero_windows_min"),
        "zero-window ACKs"
    );
    assert!(zero > 0);
    assert_eq!(
        count(&from_client, |p| p.zero_window),
        0,
        "the sender never stops reading"
    );
    let mut shut_ms = 0.0;
    let mut shut_at = None;
    for p in from_server.iter().filter(|p| !p.syn) {
        match (p.window, shut_at) {
            (0, None) => shut_at = Some(p.time),
            (w, Some(t)) if w > 0 => {
                shut_ms += (p.time - t) * 1e3;
                shut_at = None;
            }
            _ => {}
        }
    }
    close(
        shut_ms,
        lab.expect("zero_window_ms"),
        "time the window was shut",
    );
}

#[test]
fn loss_bursts_after_the_capture_point_show_as_periodic_retransmissions() {
    let lab = Lab::load("loss_bursts_downstream");
    let from_client = all_from(&lab, CLIENT);
    let resent: Vec<f64> = from_client
        .iter()
        .filter(|p| p.is_resent())
        .map(|p| p.time)
        .collect();
    assert_eq!(resent.len() as f64, lab.expect("retransmissions_min"));
    assert_eq!(count(&all_from(&lab, SERVER), |p| p.retransmission), 0);
    // Downstream of the tap: the capture saw every segment the sender sent.
    assert_eq!(count(&from_client, |p| p.lost_before), 0, "a gap upstream");
    let bursts: Vec<f64> = resent
        .iter()
        .enumerate()
        .filter(|(i, t)| *i == 0 || **t - resent[i - 1] >= 0.4)
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(bursts.len() as f64, lab.expect("bursts"));
    let period = median(gaps(&bursts));
    close(period, lab.expect("burst_period_s"), "burst period s");
    close(period, 1.0, "the wire drops one burst a second");
}

#[test]
fn loss_before_the_capture_point_shows_as_gaps_at_the_receiver() {
    let lab = Lab::load("loss_upstream");
    assert_eq!(lab.manifest["capture_point"], "server");
    let from_client = all_from(&lab, CLIENT);
    let gaps = count(&from_client, |p| p.lost_before);
    assert!(gaps > 0);
    assert_eq!(
        gaps as f64,
        lab.expect("lost_segments_min"),
        "gaps at the receiver"
    );
    assert_eq!(count(&all_from(&lab, SERVER), |p| p.lost_before), 0);
    // The sender's own tap, recorded at the same time, saw nothing missing.
    let sender_side = lab.manifest["expect"]["sender_side_capture"]
        .as_str()
        .unwrap();
    let sent = tshark(&captures_dir().join(sender_side));
    let data_lost_there = sent
        .iter()
        .filter(|p| p.src == CLIENT && p.lost_before)
        .count();
    assert_eq!(
        data_lost_there, 0,
        "the sender's tap is upstream of the loss"
    );
    let resent = sent
        .iter()
        .filter(|p| p.src == CLIENT && p.is_resent())
        .count() as f64;
    assert_eq!(
        resent,
        lab.expect("sender_side_resent"),
        "resent at the sender"
    );
    assert!(resent >= gaps as f64, "{resent} resent for {gaps} gaps");
}

#[test]
fn dropped_syns_are_retried_after_one_three_and_seven_seconds() {
    let lab = Lab::load("syn_drops");
    let syns = syns_by_stream(&lab);
    assert_eq!(syns.len() as f64, lab.expect("connections"), "connections");
    let most_retried = syns.values().max_by_key(|times| times.len()).unwrap();
    let offsets: Vec<f64> = most_retried[1..]
        .iter()
        .map(|t| t - most_retried[0])
        .collect();
    let expected = lab.manifest["expect"]["syn_retry_after_s"]
        .as_array()
        .unwrap();
    assert_eq!(offsets.len(), expected.len(), "SYN retries");
    for (offset, wanted) in offsets.iter().zip(expected) {
        close(*offset, wanted.as_f64().unwrap(), "SYN retry s");
    }
    for (gap, doubling) in gaps(most_retried).iter().zip([1.0, 2.0, 4.0]) {
        close(*gap, doubling, "SYN retry gap s (exponential backoff)");
    }
    let answered: BTreeSet<u64> = lab
        .packets
        .iter()
        .filter(|p| p.is_syn_ack())
        .map(|p| p.stream)
        .collect();
    let unanswered: Vec<_> = syns.keys().filter(|s| !answered.contains(s)).collect();
    assert_eq!(
        unanswered.len() as f64,
        lab.expect("unanswered_connections")
    );
    assert!(!unanswered.is_empty());
    for stream in unanswered {
        assert!(
            syns[stream].len() >= 4,
            "an unanswered client gave up early"
        );
    }
}

#[test]
fn the_server_thinks_before_each_response() {
    let lab = Lab::load("server_think_time");
    let think = median(response_delays_ms(&lab));
    close(think, lab.expect("server_think_ms"), "server think ms");
    assert!(think >= 120.0, "the server was set to think 120 ms");
}

#[test]
fn responses_go_out_in_tiny_segments_with_gaps() {
    let lab = Lab::load("small_writes");
    let responses = lab.data_from(SERVER);
    let sizes: BTreeSet<u64> = responses.iter().map(|p| p.len).collect();
    let wanted: BTreeSet<u64> = lab.manifest["expect"]["response_segment_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert_eq!(sizes, wanted, "response segment sizes");
    assert_eq!(responses.len() as f64, lab.expect("response_segments"));
    let gap = median(stalls(&lab, SERVER).iter().map(Stall::ms).collect());
    close(
        gap,
        lab.expect("segment_gap_ms"),
        "gap between response segments",
    );
    close(
        gap,
        lab.expect("write_gap_ms"),
        "gap against the server's pause",
    );
}

#[test]
fn data_stops_both_ways_periodically() {
    let lab = Lab::load("periodic_stalls");
    let silent = silences(&lab);
    assert_eq!(silent.len() as f64, lab.expect("stalls"), "stalls");
    close(
        median(silent.iter().map(|s| s.1).collect()),
        lab.expect("stall_ms"),
        "stall ms",
    );
    let starts: Vec<f64> = silent.iter().map(|s| s.0).collect();
    close(
        median(gaps(&starts)),
        lab.expect("period_s"),
        "stall period s",
    );
}

#[test]
fn many_turns_each_cost_a_round_trip() {
    let lab = Lab::load("chatty_high_rtt");
    let rtt = handshake_rtt_ms(&lab);
    close(rtt, lab.expect("rtt_ms"), "RTT ms");
    let requests = lab.data_from(CLIENT);
    let responses = lab.data_from(SERVER);
    assert_eq!(requests.len() as f64, lab.expect("turns"), "turns");
    let span = responses.last().unwrap().time - requests[0].time;
    close(span, lab.expect("exchange_s"), "exchange s");
    let turns_by_rtt = requests.len() as f64 * rtt / 1e3;
    assert!(
        (span - turns_by_rtt).abs() <= turns_by_rtt * 0.1,
        "{span:.2} s is not turns × RTT = {turns_by_rtt:.2} s"
    );
}

#[test]
fn the_link_rate_limits_throughput_not_the_window() {
    let lab = Lab::load("link_rate_limit");
    let rate = throughput(&lab, CLIENT);
    close(rate, lab.expect("throughput_bytes_per_s"), "throughput");
    close(
        rate,
        lab.expect("link_bytes_per_s"),
        "throughput against the link rate",
    );
    let window = *windows_from(&lab, SERVER).iter().max().unwrap() as f64;
    assert_eq!(window, lab.expect("window_bytes"));
    let in_flight = lab.packets.iter().map(|p| p.in_flight).max().unwrap() as f64;
    assert_eq!(in_flight, lab.expect("in_flight_max_bytes"));
    assert!(
        in_flight < window * 0.75,
        "{in_flight} in flight against a {window} window"
    );
    assert_eq!(count(&all_from(&lab, CLIENT), |p| p.retransmission), 0);
}

#[test]
fn a_client_port_is_reused_while_the_server_holds_time_wait() {
    let lab = Lab::load("port_reuse");
    let connections = by_stream(&lab.packets);
    assert_eq!(connections.len() as f64, lab.expect("connections"));
    let ports: BTreeSet<u64> = lab
        .packets
        .iter()
        .filter(|p| p.is_syn())
        .map(|p| p.sport)
        .collect();
    let wanted: BTreeSet<u64> = lab.manifest["expect"]["client_ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert_eq!(ports, wanted, "client ports");
    let mut server_fin_by_port: BTreeMap<u64, f64> = BTreeMap::new();
    let mut reuses = Vec::new();
    for segments in connections.values() {
        let syn = segments.iter().find(|p| p.is_syn()).unwrap();
        assert!(
            segments.iter().any(|p| p.is_syn_ack()),
            "a reused port was refused"
        );
        if let Some(fin) = server_fin_by_port.get(&syn.sport) {
            reuses.push((syn.time - fin) * 1e3);
        }
        let first_fin = segments.iter().find(|p| p.fin).unwrap();
        assert_eq!(first_fin.src, SERVER, "the server closes first");
        server_fin_by_port.insert(first_fin.dport, first_fin.time);
    }
    assert_eq!(reuses.len() as f64, lab.expect("reuses_in_time_wait"));
    assert_eq!(
        reuses.len(),
        connections.len() - 1,
        "every later connection reuses the port"
    );
    let reuse = median(reuses.clone());
    close(
        reuse,
        lab.expect("reuse_after_ms"),
        "reuse after the server's FIN, ms",
    );
    // Linux holds TIME_WAIT for 60 s.
    assert!(reuses.iter().all(|ms| *ms < 60_000.0));
}

#[test]
fn the_pool_to_the_back_tier_grows_one_connection_a_second() {
    let lab = Lab::load("pool_queueing");
    let first_syns = |port: u64| -> Vec<f64> {
        syns_by_stream(&lab)
            .iter()
            .filter(|(stream, _)| {
                lab.packets
                    .iter()
                    .any(|p| p.stream == **stream && p.is_syn() && p.dport == port)
            })
            .map(|(_, times)| times[0])
            .collect()
    };
    let front = first_syns(8080);
    let mut back = first_syns(9090);
    back.sort_by(f64::total_cmp);
    assert_eq!(front.len() as f64, lab.expect("front_connections"));
    assert_eq!(back.len() as f64, lab.expect("back_connections"));
    assert!(back.len() >= 2 && back.len() < front.len());
    let interval = median(gaps(&back));
    close(
        interval,
        lab.expect("back_connection_interval_s"),
        "pool growth interval s",
    );
    close(interval, 1.0, "one new back-tier connection a second");
}

#[test]
fn the_healthy_baseline_has_nothing_wrong() {
    let lab = Lab::load("healthy");
    let all: Vec<&Packet> = lab.packets.iter().collect();
    assert_eq!(
        count(&all, |p| p.retransmission) as f64,
        lab.expect("retransmissions")
    );
    assert_eq!(
        count(&all, |p| p.retransmission || p.lost_before || p.zero_window),
        0
    );
    let slowest = response_delays_ms(&lab).into_iter().fold(0.0, f64::max);
    close(
        slowest,
        lab.expect("slowest_response_ms"),
        "slowest response ms",
    );
    assert!(slowest < 20.0, "a {slowest:.1} ms response");
}

/// The values of one field over the packets a display filter matches, with
/// the TLS ports of the `app_failures` scenario decoded as TLS.
fn tshark_values(lab: &Lab, filter: &str, field: &str) -> Vec<String> {
    let capture = captures_dir().join(lab.manifest["capture"].as_str().unwrap());
    let output = Command::new("tshark")
        .args([
            "-n",
            "-d",
            "tcp.port==8081,tls",
            "-d",
            "tcp.port==8082,tls",
            "-r",
        ])
        .arg(capture)
        .args(["-Y", filter, "-T", "fields", "-e", field])
        .output()
        .expect("tshark runs");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn requests_fail_with_error_statuses_tls_alerts_in_the_clear_and_a_reset() {
    let lab = Lab::load("app_failures");
    let expect = &lab.manifest["expect"];
    let statuses: Vec<u64> = tshark_values(&lab, "http.response.code >= 400", "http.response.code")
        .iter()
        .map(|code| code.parse().unwrap())
        .collect();
    let expected: Vec<u64> = expect["http_errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|code| code.as_u64().unwrap())
        .collect();
    assert_eq!(statuses, expected);
    // TLS alert descriptions: 48 unknown_ca, 70 protocol_version.
    let alerts: Vec<&str> = tshark_values(&lab, "tls.alert_message", "tls.alert_message.desc")
        .iter()
        .map(|code| match code.as_str() {
            "48" => "unknown_ca",
            "70" => "protocol_version",
            other => panic!("an unexpected alert {other}"),
        })
        .collect();
    assert_eq!(alerts, expect["tls_alerts"].as_array().unwrap().as_slice());
    let resets = tshark_values(&lab, "tcp.flags.reset == 1", "ip.src");
    let from_server = resets.iter().filter(|src| *src == SERVER).count();
    assert_eq!(from_server as f64, lab.expect("server_resets"));
}

/// tcpwhy's connection objects for a capture.
fn connections(capture: &Path) -> Vec<Value> {
    common::objects("connections", capture, "connection")
}

/// For each connection `sender` sends data on, in the order they opened:
/// when the last byte of each of its messages of `size` bytes passed.
fn message_ends(packets: &[Packet], sender: &str, size: u64) -> Vec<Vec<f64>> {
    let mut streams: Vec<Vec<&Packet>> = by_stream(packets).into_values().collect();
    streams.sort_by(|x, y| x[0].time.total_cmp(&y[0].time));
    streams
        .into_iter()
        .filter_map(|stream| {
            let data: Vec<&Packet> = stream
                .into_iter()
                .filter(|p| p.src == sender && p.len > 0 && !p.retransmission)
                .collect();
            let first = data.first()?.seq;
            let mut ends = Vec::new();
            for p in &data {
                while p.seq + p.len - first >= size * (ends.len() as u64 + 1) {
                    ends.push(p.time);
                }
            }
            Some(ends)
        })
        .collect()
}

#[test]
fn the_proxy_holds_each_second_piece_until_the_back_servers_delayed_ack() {
    let lab = Lab::load("proxy_nagle");
    let back =
        tshark(&captures_dir().join(lab.manifest["expect"]["back_capture"].as_str().unwrap()));
    let proxy_back = lab.manifest["expect"]["proxy_back"].as_str().unwrap();
    let came_in = message_ends(&lab.packets, CLIENT, 300);
    let went_out = message_ends(&back, proxy_back, 300);
    let added: Vec<f64> = came_in
        .iter()
        .zip(&went_out)
        .flat_map(|(ins, outs)| ins.iter().zip(outs).map(|(i, o)| (o - i) * 1e3))
        .collect();
    assert_eq!(added.len() as f64, lab.expect("requests"));
    close(
        median(added.clone()),
        lab.expect("request_added_ms_p50"),
        "request added ms",
    );
    close(
        added.iter().sum(),
        lab.expect("request_added_ms_total"),
        "request added in all",
    );
    // Each hold: a pause in the proxy's data toward the server, ended
    // within 2 ms of the server's ACK of everything sent, 35 ms or more late.
    let mut holds = Vec::new();
    for stream in by_stream(&back).values() {
        let mut last_data: Option<&Packet> = None;
        for p in stream {
            if p.src == proxy_back && p.len > 0 {
                if let Some(held) = last_data.filter(|held| (p.time - held.time) * 1e3 >= 20.0) {
                    let released = stream.iter().find(|a| {
                        a.src != proxy_back && a.ack >= held.seq + held.len && a.time > held.time
                    });
                    if let Some(ack) = released.filter(|ack| (p.time - ack.time) * 1e3 <= 2.0) {
                        holds.push((ack.time - held.time) * 1e3);
                    }
                }
                last_data = Some(p);
            } else if p.len > 0 {
                last_data = None;
            }
        }
    }
    assert_eq!(holds.len() as f64, lab.expect("nagle_holds"));
    close(median(holds.clone()), lab.expect("hold_ms_p50"), "hold ms");
    assert!(holds.iter().all(|&hold| hold >= 35.0), "{holds:?}");
}

#[test]
fn the_nat_behind_the_proxy_reuses_its_four_ports_within_time_wait() {
    let lab = Lab::load("proxy_snat");
    let back =
        tshark(&captures_dir().join(lab.manifest["expect"]["back_capture"].as_str().unwrap()));
    let front_syns = lab.packets.iter().filter(|p| p.is_syn()).count();
    assert_eq!(front_syns as f64, lab.expect("front_side_connections"));
    let mut streams: Vec<Vec<&Packet>> = by_stream(&back).into_values().collect();
    streams.sort_by(|x, y| x[0].time.total_cmp(&y[0].time));
    assert_eq!(streams.len() as f64, lab.expect("back_side_connections"));
    let ports: BTreeSet<u64> = back
        .iter()
        .filter(|p| p.is_syn())
        .map(|p| p.sport)
        .collect();
    let wanted: BTreeSet<u64> = lab.manifest["expect"]["back_source_ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap())
        .collect();
    assert_eq!(ports, wanted);
    let mut ended: BTreeMap<u64, f64> = BTreeMap::new();
    let mut reuses = Vec::new();
    for stream in streams {
        let syn = stream.iter().find(|p| p.is_syn()).unwrap();
        if let Some(fin) = ended.get(&syn.sport) {
            if syn.time - fin < 60.0 {
                reuses.push((syn.time - fin) * 1e3);
            }
        }
        if let Some(fin) = stream.iter().find(|p| p.fin) {
            ended.insert(syn.sport, fin.time);
        }
    }
    assert_eq!(reuses.len() as f64, lab.expect("reuses_in_time_wait"));
    close(
        median(reuses),
        lab.expect("reuse_after_ms_p50"),
        "reuse after ms",
    );
}

/// Each HTTP request line in a capture with its tshark stream and
/// X-Forwarded-For, if any.
fn http_requests(capture: &Path, port: u16) -> Vec<(u64, String, Option<String>)> {
    let output = Command::new("tshark")
        .args(["-n", "-r"])
        .arg(capture)
        .args([
            "-d",
            &format!("tcp.port=={port},http"),
            "-Y",
            "http.request",
        ])
        .args(["-T", "fields", "-e", "tcp.stream", "-e", "http.request.uri"])
        .args(["-e", "http.x_forwarded_for"])
        .output()
        .expect("tshark runs");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            let forwarded = (!cells[2].is_empty()).then(|| cells[2].to_string());
            (cells[0].parse().unwrap(), cells[1].to_string(), forwarded)
        })
        .collect()
}

#[test]
fn the_pooling_proxy_sends_every_clients_requests_over_two_connections() {
    let lab = Lab::load("proxy_pool");
    let back = captures_dir().join(lab.manifest["expect"]["back_capture"].as_str().unwrap());
    let front = http_requests(
        &captures_dir().join(lab.manifest["capture"].as_str().unwrap()),
        8080,
    );
    let forwarded = http_requests(&back, 9090);
    assert_eq!(front.len() as f64, lab.expect("requests"));
    assert_eq!(forwarded.len(), front.len());
    let clients: BTreeSet<String> = lab.manifest["expect"]["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    // Each back connection carries the requests of several clients, each
    // request naming its own client.
    let mut carried: BTreeMap<u64, (u64, BTreeSet<String>)> = BTreeMap::new();
    for (stream, _, forwarded_for) in &forwarded {
        let client = forwarded_for
            .clone()
            .expect("every request says whom it is for");
        assert!(clients.contains(&client), "{client}");
        let entry = carried.entry(*stream).or_default();
        entry.0 += 1;
        entry.1.insert(client);
    }
    let mut found: Vec<(u64, u64)> = carried
        .values()
        .map(|(requests, clients)| (*requests, clients.len() as u64))
        .collect();
    found.sort();
    let mut planted: Vec<(u64, u64)> = lab.manifest["expect"]["back_connections_carried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["requests"].as_u64().unwrap(),
                b["front_connections"].as_u64().unwrap(),
            )
        })
        .collect();
    planted.sort();
    assert_eq!(found, planted);
    assert!(found.iter().all(|&(_, clients)| clients > 1));
}

/// Per response the proxy sent after the first: the bytes it sent before
/// the client's first ACK of them came back, and first to last segment in ms.
fn responses_after_idle(lab: &Lab) -> Vec<(u64, f64)> {
    let mut found = Vec::new();
    for stream in by_stream(&lab.packets).into_values() {
        let mut responses: Vec<Vec<&Packet>> = Vec::new();
        let mut answering = false;
        for p in stream.iter().filter(|p| p.len > 0 && !p.retransmission) {
            if p.src == SERVER {
                if !answering {
                    responses.push(Vec::new());
                }
                responses.last_mut().unwrap().push(p);
            }
            answering = p.src == SERVER;
        }
        for response in responses.iter().skip(1) {
            let first = response[0];
            let acked = stream
                .iter()
                .find(|a| a.src == CLIENT && a.time > first.time && a.ack > first.seq)
                .map_or(f64::INFINITY, |a| a.time);
            let first_flight = response
                .iter()
                .filter(|p| p.time < acked)
                .map(|p| p.len)
                .sum();
            let took = (response.last().unwrap().time - first.time) * 1e3;
            found.push((first_flight, took));
        }
    }
    found
}

#[test]
fn after_idle_the_proxy_restarts_from_its_initial_window_only_with_the_sysctl_on() {
    for scenario in ["proxy_idle", "proxy_idle_off"] {
        let lab = Lab::load(scenario);
        let measured = responses_after_idle(&lab);
        let flights: Vec<u64> = lab.manifest["expect"]["first_flight_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap())
            .collect();
        assert_eq!(
            measured.iter().map(|&(bytes, _)| bytes).collect::<Vec<_>>(),
            flights
        );
        let took: Vec<f64> = measured.iter().map(|&(_, ms)| ms).collect();
        let planted: Vec<f64> = lab.manifest["expect"]["response_ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|ms| ms.as_f64().unwrap())
            .collect();
        close(
            median(took),
            median(planted),
            &format!("{scenario}: response ms"),
        );
    }
    let restarted = responses_after_idle(&Lab::load("proxy_idle"));
    let kept = responses_after_idle(&Lab::load("proxy_idle_off"));
    // Ten segments after each gap with the sysctl on; the whole window without.
    assert!(restarted.iter().all(|&(bytes, _)| bytes <= 10 * MSS));
    assert!(kept.iter().all(|&(bytes, _)| bytes > 40 * MSS));
}

#[test]
fn the_proxys_small_buffer_keeps_its_window_small_and_open() {
    for scenario in ["proxy_window", "proxy_window_off"] {
        let lab = Lab::load(scenario);
        let windows: Vec<f64> = lab
            .packets
            .iter()
            .filter(|p| p.src == SERVER && !p.syn && p.len == 0)
            .map(|p| p.window as f64)
            .collect();
        close(
            median(windows),
            lab.expect("proxy_window_bytes_p50"),
            &format!("{scenario}: the proxy's window"),
        );
        let zero = lab.packets.iter().filter(|p| p.zero_window).count();
        assert_eq!(zero as f64, lab.expect("zero_windows"));
    }
    let small = Lab::load("proxy_window");
    assert!(small.expect("proxy_window_bytes_max") <= 8.0 * 1024.0 + MSS as f64);
}

#[test]
fn tcpwhy_reports_the_figures_the_lab_measured() {
    for path in manifest_paths() {
        let manifest = read_manifest(&path);
        let name = manifest["scenario"].as_str().unwrap();
        let capture = captures_dir().join(manifest["capture"].as_str().unwrap());
        let expect = &manifest["expect"];
        println!("checking {name}: {}", manifest["figure"]);
        let conns = connections(&capture);
        check_engine_windows_and_rates(name, &conns, expect);
        check_engine_counts(name, &conns, expect);
        if expect.get("syn_retry_after_s").is_some() {
            check_engine_syn_retries(&conns, expect);
        }
    }
}

fn check_engine_windows_and_rates(name: &str, conns: &[Value], expect: &Value) {
    let first = &conns[0];
    if let Some(window) = expect["window_bytes"].as_f64() {
        let measured = first["server_to_client"]["window"]["max"].as_f64().unwrap();
        close(measured, window, &format!("{name}: receive window"));
    }
    if let Some(rtt) = expect["rtt_ms"].as_f64() {
        let handshake = &first["handshake"];
        let measured = handshake["rtt_to_server_ms"].as_f64().unwrap()
            + handshake["rtt_to_client_ms"].as_f64().unwrap();
        close(measured, rtt, &format!("{name}: handshake RTT"));
    }
    if let Some(rate) = expect["throughput_bytes_per_s"].as_f64() {
        let seconds = first["duration_ms"].as_f64().unwrap() / 1e3;
        let bytes = first["client_to_server"]["unique_payload_bytes"]
            .as_f64()
            .unwrap();
        close(bytes / seconds, rate, &format!("{name}: throughput"));
    }
}

fn check_engine_counts(name: &str, conns: &[Value], expect: &Value) {
    let c2s = &conns[0]["client_to_server"];
    let s2c = &conns[0]["server_to_client"];
    if let Some(count) = expect["zero_windows_min"].as_u64() {
        assert_eq!(
            s2c["zero_windows"].as_u64(),
            Some(count),
            "{name}: zero windows"
        );
    }
    if let Some(count) = expect["retransmissions_min"].as_u64() {
        let total = c2s["retransmissions"]["total"].as_u64();
        assert_eq!(total, Some(count), "{name}: retransmissions");
    }
    if let Some(count) = expect["lost_segments_min"].as_u64() {
        assert_eq!(
            c2s["lost_segments"].as_u64(),
            Some(count),
            "{name}: lost segments"
        );
    }
    if let Some(count) = expect["retransmissions"].as_u64() {
        let total: u64 = conns
            .iter()
            .flat_map(|c| [&c["client_to_server"], &c["server_to_client"]])
            .map(|direction| direction["retransmissions"]["total"].as_u64().unwrap())
            .sum();
        assert_eq!(total, count, "{name}: retransmissions");
    }
    if let Some(count) = expect["connections"].as_u64() {
        assert_eq!(conns.len() as u64, count, "{name}: connections");
    }
    if let Some(count) = expect["front_connections"].as_u64() {
        let back = expect["back_connections"].as_u64().unwrap();
        assert_eq!(conns.len() as u64, count + back, "{name}: connections");
    }
}

fn check_engine_syn_retries(conns: &[Value], expect: &Value) {
    let retries_of = |c: &Value| c["handshake"]["syn_retries_ns"].as_array().unwrap().len();
    let most_retried = conns.iter().max_by_key(|c| retries_of(c)).unwrap();
    let syn = most_retried["handshake"]["syn_ns"].as_i64().unwrap();
    let retries: Vec<f64> = most_retried["handshake"]["syn_retries_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t.as_i64().unwrap() - syn) as f64 / 1e9)
        .collect();
    let expected = expect["syn_retry_after_s"].as_array().unwrap();
    assert_eq!(retries.len(), expected.len(), "SYN retries");
    for (measured, wanted) in retries.iter().zip(expected) {
        close(*measured, wanted.as_f64().unwrap(), "SYN retry time");
    }
    let unanswered = conns.iter().filter(|c| c["state"] == "S0").count();
    assert_eq!(
        unanswered as u64,
        expect["unanswered_connections"].as_u64().unwrap()
    );
}
