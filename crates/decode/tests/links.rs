//! Every supported encapsulation decodes to the same TCP segment.

use capture::Frame;
use decode::{decode, NonTcp, Skip};
use synth::{Link, Packet, TcpOption};

fn sample(src: &str, dst: &str) -> Packet {
    Packet {
        src: src.parse().unwrap(),
        dst: dst.parse().unwrap(),
        seq: 0xffff_fff0,
        ack: 77,
        flags: Packet::ACK | Packet::PSH,
        window: 501,
        payload_len: 1200,
        options: vec![
            TcpOption::Timestamps(11, 22),
            TcpOption::Sack(100, 200),
            TcpOption::Sack(300, 400),
        ],
        ip_id: 0,
    }
}

fn decode_on(link: Link, packet: &Packet, snaplen: usize) -> Result<decode::Segment, Skip> {
    let bytes = link.frame(packet);
    let frame = Frame {
        number: 9,
        timestamp_ns: 1234,
        link_type: link.link_type(),
        data: &bytes[..bytes.len().min(snaplen)],
        original_len: bytes.len() as u32,
        source: 0,
    };
    decode(&frame)
}

const LINKS: [Link; 11] = [
    Link::Ethernet,
    Link::Vlan(&[10]),
    Link::Vlan(&[100, 10]),
    Link::LinuxSll,
    Link::LinuxSll2,
    Link::RawIp,
    Link::Null,
    Link::Vxlan,
    Link::Gre,
    Link::Wlan,
    Link::Radiotap,
];

#[test]
fn every_link_type_yields_the_same_segment() {
    for packet in [
        sample("10.0.0.1:40000", "10.0.0.2:80"),
        sample("[2001:db8::1]:40000", "[2001:db8::2]:443"),
    ] {
        for link in LINKS {
            let segment = decode_on(link, &packet, usize::MAX)
                .unwrap_or_else(|skip| panic!("{link:?}: {skip:?}"));
            assert_eq!(segment.src.port, packet.src.port(), "{link:?}");
            assert_eq!(segment.dst.ip, packet.dst.ip(), "{link:?}");
            assert_eq!(segment.seq, 0xffff_fff0);
            assert_eq!(segment.ack, 77);
            assert_eq!(segment.window, 501);
            assert_eq!(segment.payload_len, 1200, "{link:?}");
            assert_eq!(segment.options.timestamps, Some((11, 22)));
            assert_eq!(segment.options.sack.as_slice(), &[(100, 200), (300, 400)]);
            assert_eq!((segment.frame, segment.timestamp_ns), (9, 1234));
        }
    }
}

#[test]
fn payload_length_comes_from_the_ip_header_when_snaplen_cuts_the_frame() {
    let packet = sample("10.0.0.1:40000", "10.0.0.2:80");
    let segment = decode_on(Link::Ethernet, &packet, 96).unwrap();
    assert_eq!(segment.payload_len, 1200);
}

#[test]
fn a_frame_cut_inside_the_tcp_header_is_truncated() {
    let packet = sample("10.0.0.1:40000", "10.0.0.2:80");
    assert_eq!(
        decode_on(Link::Ethernet, &packet, 14 + 20 + 10),
        Err(Skip::Truncated)
    );
}

#[test]
fn non_tcp_and_fragments_are_skipped_with_a_reason() {
    let packet = sample("10.0.0.1:40000", "10.0.0.2:80");
    let mut bytes = Link::Ethernet.frame(&packet);
    let frame = |bytes: &[u8]| {
        decode(&Frame {
            number: 1,
            timestamp_ns: 0,
            link_type: 1,
            data: bytes,
            original_len: bytes.len() as u32,
            source: 0,
        })
    };
    bytes[14 + 9] = 17; // UDP to a port that is no tunnel
    assert_eq!(frame(&bytes), Err(Skip::NotTcp(NonTcp::Udp)));
    bytes[14 + 9] = 1; // ICMP
    assert_eq!(frame(&bytes), Err(Skip::NotTcp(NonTcp::Icmp)));
    bytes[14 + 9] = 6;
    bytes[14 + 6] = 0x20; // more fragments
    assert_eq!(frame(&bytes), Err(Skip::Fragment));
    bytes[12] = 0x08;
    bytes[13] = 0x06; // ARP
    assert_eq!(frame(&bytes), Err(Skip::NotIp(NonTcp::Arp)));
}

#[test]
fn a_tso_frame_with_zero_ip_length_takes_its_length_from_the_wire() {
    let packet = sample("10.0.0.1:40000", "10.0.0.2:80");
    let mut bytes = Link::Ethernet.frame(&packet);
    bytes[14 + 2] = 0;
    bytes[14 + 3] = 0;
    let frame = Frame {
        number: 1,
        timestamp_ns: 0,
        link_type: 1,
        data: &bytes[..80],
        original_len: bytes.len() as u32,
        source: 0,
    };
    assert_eq!(decode(&frame).unwrap().payload_len, 1200);
}

/// Decodes `bytes` as a frame of `link` whose first `kept` bytes were kept.
fn captured_payload(link: Link, bytes: &[u8], kept: usize) -> Vec<u8> {
    let data = &bytes[..bytes.len().min(kept)];
    let frame = Frame {
        number: 1,
        timestamp_ns: 0,
        link_type: link.link_type(),
        data,
        original_len: bytes.len() as u32,
        source: 0,
    };
    decode(&frame).unwrap().payload(data).to_vec()
}

#[test]
fn the_captured_payload_is_found_under_every_link_cut_and_padding() {
    let mut packet = sample("10.0.0.1:40000", "10.0.0.2:80");
    packet.payload_len = 40;
    for link in LINKS {
        let mut bytes = link.frame(&packet);
        let start = bytes.len() - 40;
        bytes[start..].copy_from_slice(&[b'G'; 40]);
        assert_eq!(
            captured_payload(link, &bytes, usize::MAX),
            [b'G'; 40],
            "{link:?}"
        );
        assert_eq!(
            captured_payload(link, &bytes, start + 5),
            [b'G'; 5],
            "{link:?}"
        );
        assert!(captured_payload(link, &bytes, start).is_empty(), "{link:?}");
    }
    // Ethernet padding after a short IPv4 packet is not payload.
    let mut bytes = Link::Ethernet.frame(&packet);
    bytes.extend_from_slice(&[0xaa; 16]);
    let payload = captured_payload(Link::Ethernet, &bytes, usize::MAX);
    assert_eq!(payload.len(), 40);
}

#[test]
fn wireless_frames_without_a_readable_packet_are_skipped_as_not_ip() {
    let packet = sample("10.0.0.1:40000", "10.0.0.2:80");
    let mut bytes = Link::Wlan.frame(&packet);
    let frame = |bytes: &[u8]| {
        decode(&Frame {
            number: 1,
            timestamp_ns: 0,
            link_type: Link::Wlan.link_type(),
            data: bytes,
            original_len: bytes.len() as u32,
            source: 0,
        })
    };
    assert!(frame(&bytes).is_ok());
    bytes[1] |= 0x40; // protected: encrypted by WPA
    assert_eq!(frame(&bytes), Err(Skip::NotIp(NonTcp::Other)));
    bytes[1] &= !0x40;
    bytes[0] = 0x80; // a beacon: a management frame
    assert_eq!(frame(&bytes), Err(Skip::NotIp(NonTcp::Other)));
    bytes[0] = 0x48; // a null data frame: no data
    assert_eq!(frame(&bytes), Err(Skip::NotIp(NonTcp::Other)));
    assert_eq!(frame(&bytes[..1]), Err(Skip::Truncated));
}
