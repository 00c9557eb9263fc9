//! Matching survives what lies between two points: the lab's server-side
//! capture is rewritten as a NAT and a router would have left it (client
//! address and port translated, the client's sequence numbers offset, TTLs
//! one lower past the router) and stamped by a clock 1.5 s ahead; `compare`
//! must find the same packets, losses and delays as on the original pair.

use std::path::{Path, PathBuf};

const PCAP_HEADER: usize = 24;
const RECORD_HEADER: usize = 16;
const ETHERNET_HEADER: usize = 14;
const CLIENT: [u8; 4] = [10, 77, 0, 1];
const TRANSLATED_CLIENT: [u8; 4] = [198, 51, 100, 7];
const TRANSLATED_PORT: u16 = 61000;
const SEQUENCE_OFFSET: u32 = 0x1234_5678;
const CLOCK_AHEAD_S: u32 = 1;
const CLOCK_AHEAD_US: u32 = 500_000;

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/captures")
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// One IPv4/TCP Ethernet frame as it would look past the NAT and router.
fn translate(frame: &mut [u8]) {
    let ip = ETHERNET_HEADER;
    let tcp = ip + usize::from(frame[ip] & 0x0f) * 4;
    let from_client = frame[ip + 12..ip + 16] == CLIENT;
    let (address, port, number) = if from_client {
        (ip + 12, tcp, tcp + 4)
    } else {
        (ip + 16, tcp + 2, tcp + 8)
    };
    frame[address..address + 4].copy_from_slice(&TRANSLATED_CLIENT);
    frame[port..port + 2].copy_from_slice(&TRANSLATED_PORT.to_be_bytes());
    let acknowledges = frame[tcp + 13] & 0x10 != 0;
    if from_client || acknowledges {
        let shifted = u32_at(frame, number).wrapping_add(SEQUENCE_OFFSET);
        frame[number..number + 4].copy_from_slice(&shifted.to_be_bytes());
    }
    // The router sits between the client's side and this capture.
    frame[ip + 8] = if from_client {
        frame[ip + 8] - 1
    } else {
        frame[ip + 8] + 1
    };
}

/// A little-endian microsecond pcap file with every frame translated and
/// every timestamp 1.5 s later.
fn translated_copy(name: &str) -> PathBuf {
    let mut bytes = std::fs::read(captures_dir().join(name)).expect("lab capture");
    let mut at = PCAP_HEADER;
    while at + RECORD_HEADER <= bytes.len() {
        let field = |bytes: &[u8], offset: usize| {
            u32::from_le_bytes(bytes[at + offset..at + offset + 4].try_into().unwrap())
        };
        let (seconds, micros, length) = (field(&bytes, 0), field(&bytes, 4), field(&bytes, 8));
        let micros = micros + CLOCK_AHEAD_US;
        let seconds = seconds + CLOCK_AHEAD_S + micros / 1_000_000;
        bytes[at..at + 4].copy_from_slice(&seconds.to_le_bytes());
        bytes[at + 4..at + 8].copy_from_slice(&(micros % 1_000_000).to_le_bytes());
        let frame = at + RECORD_HEADER;
        translate(&mut bytes[frame..frame + length as usize]);
        at = frame + length as usize;
    }
    let path = std::env::temp_dir().join(format!("tcpwhy-nat-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).expect("temporary capture written");
    path
}

#[test]
fn packets_are_matched_through_nat_a_router_and_an_offset_clock() {
    let client_side = captures_dir().join("loss_upstream-client.pcap");
    let server_side = captures_dir().join("loss_upstream-server.pcap");
    let translated = translated_copy("loss_upstream-server.pcap");
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let direct = compare::compare(&path(&client_side), &path(&server_side)).unwrap();
    let through_nat = compare::compare(&path(&client_side), &path(&translated)).unwrap();
    std::fs::remove_file(&translated).ok();

    assert_eq!(direct.connections_rewritten, 0);
    assert_eq!(through_nat.connections_rewritten, 1);
    assert_eq!(through_nat.packets_matched, direct.packets_matched);
    let clock_ahead_ms = f64::from(CLOCK_AHEAD_S) * 1e3 + f64::from(CLOCK_AHEAD_US) / 1e3;
    let offset_error_ms = through_nat.clock_offset_ms - direct.clock_offset_ms - clock_ahead_ms;
    assert!(
        offset_error_ms.abs() < 0.001,
        "{}",
        through_nat.clock_offset_ms
    );
    assert_eq!(through_nat.nearer_a, direct.nearer_a);
    for (nat, plain) in [
        (&through_nat.a_to_b, &direct.a_to_b),
        (&through_nat.b_to_a, &direct.b_to_a),
    ] {
        assert_eq!(nat.hops, Some(1));
        assert_eq!(nat.losses, plain.losses);
        let (nat_delay, plain_delay) = (nat.delay.as_ref().unwrap(), plain.delay.as_ref().unwrap());
        assert!((nat_delay.p50_ms - plain_delay.p50_ms).abs() < 0.001);
    }
    assert_eq!(through_nat.a_to_b.losses.between_points, 35);
}
