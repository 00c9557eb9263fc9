//! Unit tests: small pcap and pcapng files built byte by byte, read back
//! through the public reader.

use std::io::{self, Cursor, Read, Write};

use crate::{CaptureError, CaptureReader, MergedReader};

/// Timestamp, link type, captured bytes and original length of a frame.
type Seen = (i64, u32, Vec<u8>, u32);

fn read_all_from(reader: impl Read + Send + 'static) -> Result<Vec<Seen>, CaptureError> {
    let mut reader = CaptureReader::from_reader("test", reader)?;
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame()? {
        assert_eq!(frame.number, frames.len() as u64 + 1);
        let seen = (frame.timestamp_ns, frame.link_type, frame.data.to_vec());
        frames.push((seen.0, seen.1, seen.2, frame.original_len));
    }
    Ok(frames)
}

fn read_all(bytes: Vec<u8>) -> Result<Vec<Seen>, CaptureError> {
    read_all_from(Cursor::new(bytes))
}

/// Writes integers in one byte order.
#[derive(Clone, Copy)]
struct Order {
    big_endian: bool,
}

const LITTLE: Order = Order { big_endian: false };
const BIG: Order = Order { big_endian: true };

impl Order {
    fn u16(self, value: u16) -> [u8; 2] {
        if self.big_endian {
            value.to_be_bytes()
        } else {
            value.to_le_bytes()
        }
    }

    fn u32(self, value: u32) -> [u8; 4] {
        if self.big_endian {
            value.to_be_bytes()
        } else {
            value.to_le_bytes()
        }
    }

    fn i64(self, value: i64) -> [u8; 8] {
        if self.big_endian {
            value.to_be_bytes()
        } else {
            value.to_le_bytes()
        }
    }
}

mod pcap_file {
    use super::Order;

    pub const MICROS: u32 = 0xa1b2_c3d4;
    pub const NANOS: u32 = 0xa1b2_3c4d;

    pub fn header(order: Order, magic: u32, snaplen: u32, link_type: u32) -> Vec<u8> {
        let mut out = order.u32(magic).to_vec();
        out.extend(order.u16(2));
        out.extend(order.u16(4));
        out.extend([0; 8]);
        out.extend(order.u32(snaplen));
        out.extend(order.u32(link_type));
        out
    }

    pub fn record(
        order: Order,
        seconds: u32,
        fraction: u32,
        data: &[u8],
        original: u32,
    ) -> Vec<u8> {
        let mut out = order.u32(seconds).to_vec();
        out.extend(order.u32(fraction));
        out.extend(order.u32(data.len() as u32));
        out.extend(order.u32(original));
        out.extend(data);
        out
    }
}

mod pcapng_file {
    use super::Order;

    pub fn block(order: Order, kind: u32, body: &[u8]) -> Vec<u8> {
        let mut padded = body.to_vec();
        padded.resize(body.len().next_multiple_of(4), 0);
        let total = order.u32(12 + padded.len() as u32);
        let mut out = order.u32(kind).to_vec();
        out.extend(total);
        out.extend(padded);
        out.extend(total);
        out
    }

    pub fn section(order: Order) -> Vec<u8> {
        let mut body = order.u32(0x1a2b_3c4d).to_vec();
        body.extend(order.u16(1));
        body.extend(order.u16(0));
        body.extend(order.i64(-1));
        block(order, 0x0a0d_0d0a, &body)
    }

    /// An interface; `resolution` and `offset_seconds` become options when given.
    pub fn interface(
        order: Order,
        link_type: u16,
        snaplen: u32,
        resolution: Option<u8>,
        offset_seconds: Option<i64>,
    ) -> Vec<u8> {
        let mut body = order.u16(link_type).to_vec();
        body.extend([0, 0]);
        body.extend(order.u32(snaplen));
        body.extend(order.u16(2)); // if_name, to be skipped
        body.extend(order.u16(3));
        body.extend(*b"et0\0");
        if let Some(resolution) = resolution {
            body.extend(order.u16(9));
            body.extend(order.u16(1));
            body.extend([resolution, 0, 0, 0]);
        }
        if let Some(offset) = offset_seconds {
            body.extend(order.u16(14));
            body.extend(order.u16(8));
            body.extend(order.i64(offset));
        }
        body.extend([0; 4]);
        block(order, 1, &body)
    }

    pub fn enhanced(
        order: Order,
        interface: u32,
        ticks: u64,
        data: &[u8],
        original: u32,
    ) -> Vec<u8> {
        let mut body = order.u32(interface).to_vec();
        body.extend(order.u32((ticks >> 32) as u32));
        body.extend(order.u32(ticks as u32));
        body.extend(order.u32(data.len() as u32));
        body.extend(order.u32(original));
        body.extend(data);
        block(order, 6, &body)
    }

    pub fn obsolete(order: Order, interface: u16, ticks: u64, data: &[u8]) -> Vec<u8> {
        let mut body = order.u16(interface).to_vec();
        body.extend(order.u16(0));
        body.extend(order.u32((ticks >> 32) as u32));
        body.extend(order.u32(ticks as u32));
        body.extend(order.u32(data.len() as u32));
        body.extend(order.u32(data.len() as u32));
        body.extend(data);
        block(order, 2, &body)
    }

    pub fn simple(order: Order, data: &[u8], original: u32) -> Vec<u8> {
        let mut body = order.u32(original).to_vec();
        body.extend(data);
        block(order, 3, &body)
    }
}

use pcapng_file::{block, enhanced, interface, obsolete, section, simple};

const SECOND: i64 = 1_000_000_000;

#[test]
fn pcap_reads_all_four_magics_alike() {
    let data = [7u8; 42];
    for order in [LITTLE, BIG] {
        for (magic, fraction) in [
            (pcap_file::MICROS, 250_000),
            (pcap_file::NANOS, 250_000_000),
        ] {
            let mut file = pcap_file::header(order, magic, 65535, 1);
            file.extend(pcap_file::record(order, 1_700_000_000, fraction, &data, 60));
            file.extend(pcap_file::record(order, 1_700_000_001, 0, &data[..10], 10));
            let frames = read_all(file).unwrap();
            assert_eq!(frames.len(), 2);
            assert_eq!(
                frames[0],
                (1_700_000_000 * SECOND + SECOND / 4, 1, data.to_vec(), 60)
            );
            assert_eq!(
                (frames[1].0, frames[1].2.len()),
                (1_700_000_001 * SECOND, 10)
            );
        }
    }
}

#[test]
fn pcap_link_type_drops_the_fcs_bits() {
    let fcs_present_four_bytes = 0x4000_0000 | 0x0400_0000;
    let mut file = pcap_file::header(
        LITTLE,
        pcap_file::MICROS,
        65535,
        fcs_present_four_bytes | 105,
    );
    file.extend(pcap_file::record(LITTLE, 1, 0, &[0; 24], 24));
    assert_eq!(read_all(file).unwrap()[0].1, 105);
}

#[test]
fn pcap_record_longer_than_any_snaplen_is_implausible() {
    let mut file = pcap_file::header(LITTLE, pcap_file::MICROS, 65535, 1);
    file.extend(pcap_file::record(LITTLE, 1, 0, &[0; 60], 60));
    let second_at = file.len() as u64;
    let mut huge = pcap_file::record(LITTLE, 2, 0, &[], 0);
    huge[8..12].copy_from_slice(&300_000u32.to_le_bytes());
    file.extend(huge);
    let error = read_all(file).unwrap_err();
    assert_eq!(error.offset, second_at);
    assert_eq!(error.frames_read, 1);
    assert_eq!(error.reason, "implausible record length 300000 (frame 2)");
    assert!(!error.cut_short, "bad data is not a capture cut short");
}

#[test]
fn pcap_record_over_a_small_snaplen_is_read() {
    let mut file = pcap_file::header(LITTLE, pcap_file::MICROS, 64, 1);
    file.extend(pcap_file::record(LITTLE, 1, 0, &[1; 1500], 1500));
    assert_eq!(read_all(file).unwrap()[0].2.len(), 1500);
}

#[test]
fn pcapng_big_endian_section_reads_like_little_endian() {
    let data = [9u8; 33];
    let frames: Vec<Vec<Seen>> = [LITTLE, BIG]
        .into_iter()
        .map(|order| {
            let mut file = section(order);
            file.extend(interface(order, 1, 0, Some(9), Some(10)));
            file.extend(enhanced(order, 0, 5 * SECOND as u64 + 7, &data, 99));
            read_all(file).unwrap()
        })
        .collect();
    assert_eq!(frames[0], vec![(15 * SECOND + 7, 1, data.to_vec(), 99)]);
    assert_eq!(frames[0], frames[1]);
}

#[test]
fn each_section_has_its_own_byte_order_and_interfaces() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, None, None));
    file.extend(enhanced(LITTLE, 0, 1_000_000, &[1; 20], 20));
    file.extend(section(BIG));
    file.extend(interface(BIG, 228, 0, Some(3), None)); // milliseconds, raw IPv4
    file.extend(enhanced(BIG, 0, 2_000, &[2; 20], 20));
    let frames = read_all(file).unwrap();
    assert_eq!((frames[0].0, frames[0].1), (SECOND, 1));
    assert_eq!((frames[1].0, frames[1].1), (2 * SECOND, 228));
}

#[test]
fn a_section_of_an_unknown_version_is_an_error_naming_it() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, None, None));
    file.extend(enhanced(LITTLE, 0, 1_000_000, &[1; 20], 20));
    let second_section_at = file.len() as u64;
    let mut future = section(LITTLE);
    future[12..14].copy_from_slice(&2u16.to_le_bytes());
    file.extend(future);
    file.extend(interface(LITTLE, 1, 0, None, None));
    file.extend(enhanced(LITTLE, 0, 2_000_000, &[2; 20], 20));
    let (frames, error) = read_until_error(file);
    assert_eq!(frames, 1);
    let error = error.expect("version 2 is refused");
    assert!(error.reason.contains("version 2.0"), "{error}");
    assert_eq!(error.offset, second_section_at + 12);
}

#[test]
fn tsresol_in_powers_of_two_and_a_negative_offset() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, Some(0x80 | 20), Some(-100)));
    file.extend(enhanced(LITTLE, 0, 3 << 20, &[0; 14], 14));
    file.extend(enhanced(LITTLE, 0, (1000 << 20) + (1 << 19), &[0; 14], 14));
    let times: Vec<i64> = read_all(file).unwrap().iter().map(|f| f.0).collect();
    assert_eq!(times, vec![-97 * SECOND, 900 * SECOND + SECOND / 2]);
}

#[test]
fn tsresol_too_fine_for_64_bits_is_an_error() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, Some(20), None));
    assert!(read_all(file)
        .unwrap_err()
        .reason
        .contains("bad if_tsresol"));
}

#[test]
fn obsolete_packet_blocks_and_skipped_blocks() {
    let mut file = section(LITTLE);
    file.extend(block(LITTLE, 4, &[1, 0, 4, 0, 10, 0, 0, 1, 0, 0, 0, 0])); // name resolution
    file.extend(interface(LITTLE, 1, 0, None, None));
    file.extend(interface(LITTLE, 113, 0, None, None));
    file.extend(obsolete(LITTLE, 1, 42, &[5; 16]));
    file.extend(block(LITTLE, 5, &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])); // statistics
    file.extend(block(LITTLE, 0x0000_0bad, &[0xff; 9])); // custom
    let frames = read_all(file).unwrap();
    assert_eq!(frames, vec![(42_000, 113, vec![5; 16], 16)]);
}

#[test]
fn simple_packets_use_interface_zero_its_snaplen_and_the_last_time() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 8, None, None));
    file.extend(enhanced(LITTLE, 0, 77, &[1; 8], 100));
    file.extend(simple(LITTLE, &[2; 10], 100)); // cut by the snaplen
    file.extend(simple(LITTLE, &[3; 6], 5)); // cut by the original length
    file.extend(simple(LITTLE, &[4; 3], 200)); // cut by the block (padding aside)
    let frames = read_all(file).unwrap();
    let seen: Vec<(i64, usize, u32)> = frames.iter().map(|f| (f.0, f.2.len(), f.3)).collect();
    assert_eq!(
        seen,
        vec![
            (77_000, 8, 100),
            (77_000, 8, 100),
            (77_000, 5, 5),
            (77_000, 4, 200)
        ]
    );
}

#[test]
fn packets_on_missing_interfaces_are_errors() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, None, None));
    let packet_at = file.len() as u64;
    file.extend(enhanced(LITTLE, 1, 0, &[0; 4], 4));
    let error = read_all(file).unwrap_err();
    assert_eq!(error.offset, packet_at);
    assert_eq!(error.reason, "packet on undeclared interface 1 (frame 1)");
    let mut file = section(LITTLE);
    file.extend(simple(LITTLE, &[0; 4], 4));
    assert!(read_all(file)
        .unwrap_err()
        .reason
        .contains("undeclared interface 0"));
}

#[test]
fn block_framing_is_checked() {
    let prefix = || {
        let mut file = section(LITTLE);
        file.extend(interface(LITTLE, 1, 0, None, None));
        file
    };
    let packet = enhanced(LITTLE, 0, 0, &[0; 12], 12);
    let at = prefix().len() as u64;
    let broken = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut packet = packet.clone();
        edit(&mut packet);
        let mut file = prefix();
        file.extend(packet);
        read_all(file).unwrap_err()
    };
    let unaligned = broken(&|p| p[4..8].copy_from_slice(&45u32.to_le_bytes()));
    assert_eq!(
        (unaligned.offset, unaligned.reason.as_str()),
        (at, "bad block length 45 (frame 1)")
    );
    let tiny = broken(&|p| p[4..8].copy_from_slice(&8u32.to_le_bytes()));
    assert!(tiny.reason.starts_with("bad block length 8"));
    let trailer = broken(&|p| {
        let end = p.len();
        p[end - 4..].copy_from_slice(&48u32.to_le_bytes());
    });
    assert!(trailer
        .reason
        .starts_with("block length trailer does not match"));
    let overrun = broken(&|p| p[20..24].copy_from_slice(&13u32.to_le_bytes()));
    assert!(overrun
        .reason
        .starts_with("packet length 13 overruns its block"));
    assert!(!overrun.cut_short && !trailer.cut_short);
    let truncated = broken(&|p| p.truncate(30));
    assert_eq!(
        (truncated.offset, truncated.reason.as_str()),
        (at, "truncated block (frame 1)")
    );
    assert!(truncated.cut_short);
}

#[test]
fn a_bad_byte_order_magic_is_an_error() {
    let mut file = section(LITTLE);
    file[8..12].copy_from_slice(&[1, 2, 3, 4]);
    let error = read_all(file).unwrap_err();
    assert_eq!(
        (error.offset, error.reason.as_str()),
        (8, "bad section byte-order magic (frame 1)")
    );
}

#[test]
fn foreign_files_are_not_captures() {
    for bytes in [vec![0xa1], b"GIF89a....".to_vec()] {
        let error = CaptureReader::from_reader("x", Cursor::new(bytes))
            .err()
            .unwrap();
        assert_eq!(error.to_string(), "x: not a pcap or pcapng file at byte 0");
    }
}

#[test]
fn an_empty_file_is_called_empty_at_no_offset() {
    let error = CaptureReader::from_reader("x", Cursor::new(Vec::new()))
        .err()
        .unwrap();
    assert_eq!(error.to_string(), "x: empty file");
    assert_eq!(error.place, crate::Place::Nowhere);
    let error = CaptureReader::from_reader("x.zst", Cursor::new(zstd(&[])))
        .err()
        .unwrap();
    assert_eq!(error.to_string(), "x.zst: empty once decompressed");
}

#[test]
fn an_error_of_the_system_names_no_offset() {
    let directory = std::env::temp_dir();
    let error = crate::open(directory.to_str().unwrap()).err().unwrap();
    assert_eq!(error.place, crate::Place::Nowhere);
    assert!(!error.to_string().contains("at byte"), "{error}");
    assert!(error.to_string().contains("Is a directory"), "{error}");
}

#[test]
fn a_header_only_pcap_has_no_frames_and_a_cut_header_is_an_error() {
    let file = pcap_file::header(LITTLE, pcap_file::MICROS, 65535, 1);
    assert_eq!(read_all(file.clone()).unwrap(), vec![]);
    let error = read_all(file[..20].to_vec()).unwrap_err();
    assert_eq!(
        (error.offset, error.reason.as_str()),
        (0, "truncated pcap file header")
    );
    let mut cut_record = file;
    cut_record.extend([0; 10]);
    let error = read_all(cut_record).unwrap_err();
    assert_eq!(
        (error.offset, error.reason.as_str()),
        (24, "truncated packet record header (frame 1)")
    );
    assert!(error.cut_short);
}

#[test]
fn a_capture_cut_inside_its_last_record_reads_every_whole_record_first() {
    let mut file = many_records();
    let whole = read_all(file.clone()).unwrap().len() as u64;
    file.truncate(file.len() - 7);
    let mut reader = CaptureReader::from_reader("cut", Cursor::new(file.clone())).unwrap();
    let mut read = 0;
    let error = loop {
        match reader.next_frame() {
            Ok(Some(_)) => read += 1,
            Ok(None) => panic!("a cut capture ends in an error"),
            Err(error) => break error,
        }
    };
    assert_eq!((read, error.frames_read), (whole - 1, whole - 1));
    assert!(error.cut_short, "{error}");
    let gzipped = gzip(&file[..file.len() / 2]);
    let error = read_all(gzipped[..gzipped.len() - 9].to_vec()).unwrap_err();
    assert!(error.cut_short, "a compressed stream cut short: {error}");
}

/// Hands out at most a few bytes per read, so records straddle every refill.
struct Trickle<R>(R, usize);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let len = out.len().min(self.1);
        self.0.read(&mut out[..len])
    }
}

/// A file with records large enough to cross the 4 MiB buffer's end many times.
fn many_records() -> Vec<u8> {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, None, None));
    for index in 0..3000u32 {
        let len = (index * 7919 % 9000) as usize;
        file.extend(enhanced(
            LITTLE,
            0,
            u64::from(index),
            &vec![index as u8; len],
            len as u32,
        ));
    }
    file
}

#[test]
fn records_straddling_refills_read_the_same() {
    let file = many_records();
    let whole = read_all(file.clone()).unwrap();
    assert_eq!(whole.len(), 3000);
    assert_eq!(read_all_from(Trickle(Cursor::new(file), 3)).unwrap(), whole);
}

#[test]
fn a_block_larger_than_the_buffer_grows_it() {
    let mut file = section(LITTLE);
    file.extend(interface(LITTLE, 1, 0, None, None));
    file.extend(block(LITTLE, 0x0000_0bad, &vec![0; 6 << 20]));
    file.extend(enhanced(LITTLE, 0, 1, &[1; 60], 60));
    assert_eq!(read_all(file).unwrap().len(), 1);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 1).unwrap()
}

#[test]
fn gzip_and_zstd_in_several_members_read_like_the_plain_file() {
    let plain = many_records();
    let (head, tail) = plain.split_at(plain.len() / 2);
    let expected = read_all(plain.clone()).unwrap();
    for compress in [gzip, zstd] {
        assert_eq!(read_all(compress(&plain)).unwrap(), expected);
        let concatenated = [compress(head), compress(tail)].concat();
        assert_eq!(
            read_all_from(Trickle(Cursor::new(concatenated), 1000)).unwrap(),
            expected
        );
    }
}

#[test]
fn a_corrupt_compressed_stream_is_an_error() {
    let mut file = gzip(&many_records());
    let middle = file.len() / 2;
    file[middle..middle + 64].fill(0x55);
    assert!(read_all(file).is_err());
}

#[test]
fn a_zstd_stream_may_begin_with_a_skippable_frame() {
    let plain = many_records();
    for magic in [0x184d_2a50u32, 0x184d_2a5f] {
        let mut file = magic.to_le_bytes().to_vec();
        file.extend(6u32.to_le_bytes());
        file.extend(b"tcpwhy");
        file.extend(zstd(&plain));
        assert_eq!(read_all(file).unwrap(), read_all(plain.clone()).unwrap());
    }
}

#[test]
fn an_error_in_compressed_input_is_placed_in_the_decompressed_stream() {
    // Bad data inside the capture: where it lies in the decompressed bytes.
    let mut plain = pcap_at(LITTLE, &[1, 2, 3]);
    plain[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let error = read_all(zstd(&plain)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "test: implausible record length 4294967295 (frame 1) at byte 24 in the decompressed stream"
    );
    // Damage the decoder finds (a bad checksum): where it had read to as well.
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    encoder.include_checksum(true).unwrap();
    encoder.write_all(&many_records()).unwrap();
    let mut damaged = encoder.finish().unwrap();
    *damaged.last_mut().unwrap() ^= 0xff;
    let (_, error) = read_until_error(damaged.clone());
    let error = error.expect("the damage is found");
    let crate::Place::Decompressed {
        compressed: Some(compressed),
    } = error.place
    else {
        panic!("{error}");
    };
    assert!(compressed <= damaged.len() as u64, "{error}");
    assert!(
        error
            .to_string()
            .contains(" in the decompressed stream (byte "),
        "{error}"
    );
}

/// Frames read until the end or an error, and the error.
fn read_until_error(file: Vec<u8>) -> (usize, Option<CaptureError>) {
    let mut reader = CaptureReader::from_reader("damaged", Cursor::new(file)).unwrap();
    let mut frames = 0;
    loop {
        match reader.next_frame() {
            Ok(Some(_)) => frames += 1,
            Ok(None) => return (frames, None),
            Err(error) => return (frames, Some(error)),
        }
    }
}

#[test]
fn zstd_damage_keeps_the_frames_decoded_before_it() {
    let plain = many_records();
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    encoder.include_checksum(true).unwrap();
    encoder.write_all(&plain).unwrap();
    let compressed = encoder.finish().unwrap();
    // A bad checksum: every frame is intact, and the error comes after them.
    let mut bad_checksum = compressed.clone();
    *bad_checksum.last_mut().unwrap() ^= 0xff;
    let (frames, error) = read_until_error(bad_checksum);
    assert_eq!(frames, 3000);
    let error = error.expect("the checksum is checked");
    assert!(error.reason.contains("checksum"), "{error}");
    // Damage in the middle: the frames of the blocks before it are read.
    let mut damaged = compressed;
    let middle = damaged.len() * 3 / 4;
    damaged[middle..middle + 64].fill(0x55);
    let (frames, error) = read_until_error(damaged);
    assert!(error.is_some());
    assert!(frames > 1000, "only {frames} frames before the damage");
}

/// A file in the temporary directory, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("capture-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }

    fn name(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn progress_counts_file_bytes_for_plain_and_compressed_files() {
    let plain = many_records();
    for (name, bytes) in [
        ("p.pcapng", plain.clone()),
        ("p.pcapng.gz", gzip(&plain)),
        ("p.pcapng.zst", zstd(&plain)),
    ] {
        let file = TempFile::new(name, &bytes);
        let mut reader = crate::open(&file.name()).unwrap();
        assert_eq!(reader.total_bytes(), Some(bytes.len() as u64));
        let mut frames = 0;
        while reader.next_frame().unwrap().is_some() {
            frames += 1;
            assert!(reader.bytes_read() <= bytes.len() as u64, "{name}");
        }
        assert_eq!(
            (frames, reader.bytes_read()),
            (3000, bytes.len() as u64),
            "{name}"
        );
    }
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let error = crate::open("/nonexistent/x.pcap").err().unwrap();
    assert!(
        error.to_string().starts_with("/nonexistent/x.pcap: "),
        "{error}"
    );
    assert_eq!(error.offset, 0);
}

fn pcap_at(order: Order, seconds: &[u32]) -> Vec<u8> {
    let mut file = pcap_file::header(order, pcap_file::MICROS, 65535, 1);
    for &second in seconds {
        file.extend(pcap_file::record(order, second, 0, &[second as u8; 20], 20));
    }
    file
}

#[test]
fn merge_orders_by_time_keeps_file_order_on_ties_and_renumbers() {
    let files = [
        TempFile::new("m0.pcap", &pcap_at(LITTLE, &[1, 4, 4, 9])),
        TempFile::new("m1.pcap", &pcap_at(BIG, &[2, 4, 8])),
        TempFile::new("m2.pcap", &pcap_at(LITTLE, &[])),
        TempFile::new("m3.pcap", &pcap_at(LITTLE, &[0, 4])),
    ];
    let names: Vec<String> = files.iter().map(TempFile::name).collect();
    let mut merged = MergedReader::open(&names).unwrap();
    let mut seen = Vec::new();
    while let Some(frame) = merged.next_frame().unwrap() {
        seen.push((
            frame.number,
            frame.timestamp_ns / SECOND,
            frame.source,
            frame.data[0],
        ));
    }
    let expected_order = [
        (0, 3),
        (1, 0),
        (2, 1),
        (4, 0),
        (4, 0),
        (4, 1),
        (4, 3),
        (8, 1),
        (9, 0),
    ];
    let expected: Vec<(u64, i64, usize, u8)> = expected_order
        .iter()
        .enumerate()
        .map(|(index, &(second, source))| (index as u64 + 1, second, source, second as u8))
        .collect();
    assert_eq!(seen, expected);
    let total: u64 = files
        .iter()
        .map(|f| std::fs::metadata(&f.0).unwrap().len())
        .sum();
    assert_eq!(
        (merged.bytes_read(), merged.total_bytes()),
        (total, Some(total))
    );
}

#[test]
fn merging_one_file_passes_its_frames_through() {
    let file = TempFile::new("single.pcap", &pcap_at(LITTLE, &[5, 3, 7]));
    let mut merged = MergedReader::open(&[file.name()]).unwrap();
    let mut seen = Vec::new();
    while let Some(frame) = merged.next_frame().unwrap() {
        seen.push((frame.number, frame.timestamp_ns / SECOND, frame.source));
    }
    assert_eq!(seen, vec![(1, 5, 0), (2, 3, 0), (3, 7, 0)]);
}

#[test]
fn a_broken_file_stops_with_its_name_and_the_others_are_read_on() {
    let mut cut = pcap_at(LITTLE, &[1, 2, 3]);
    cut.truncate(cut.len() - 1);
    let files = [
        TempFile::new("ok.pcap", &pcap_at(LITTLE, &[1, 2, 3])),
        TempFile::new("cut.pcap", &cut),
        TempFile::new("text.pcap", b"not a capture at all"),
    ];
    let names: Vec<String> = files.iter().map(TempFile::name).collect();
    let mut merged = MergedReader::open(&names).unwrap();
    let mut seen = Vec::new();
    while let Some(frame) = merged.next_frame().unwrap() {
        seen.push((frame.timestamp_ns / SECOND, frame.source));
    }
    assert_eq!(seen, [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0)]);
    let failures = merged.failures();
    let failed: Vec<&str> = failures.iter().map(|error| error.path.as_str()).collect();
    assert_eq!(failed, [names[1].as_str(), names[2].as_str()]);
    assert_eq!(failures[0].reason, "truncated packet record (frame 3)");
    assert_eq!(failures[0].offset, 24 + 2 * 36);
}

#[test]
fn one_broken_file_alone_is_an_error() {
    let mut cut = pcap_at(LITTLE, &[1, 2]);
    cut.truncate(cut.len() - 1);
    let file = TempFile::new("alone.pcap", &cut);
    let mut merged = MergedReader::open(&[file.name()]).unwrap();
    assert!(merged.next_frame().unwrap().is_some());
    let Err(error) = merged.next_frame() else {
        panic!("the cut record should fail");
    };
    assert_eq!(error.path, file.name());
    let text = TempFile::new("alone.txt", b"not a capture at all");
    assert!(MergedReader::open(&[text.name(), text.name()]).is_err());
}

/// A pcap file larger than the steps in which a mapped file's pages are
/// mapped ahead and released, its records of varied lengths and contents.
fn large_pcap() -> Vec<u8> {
    let mut file = pcap_file::header(LITTLE, pcap_file::MICROS, 65535, 1);
    for index in 0..40_000u32 {
        let len = 60 + (index * 7919 % 1455) as usize;
        let data: Vec<u8> = (0..len).map(|at| (index as usize + at) as u8).collect();
        file.extend(pcap_file::record(LITTLE, index, 0, &data, len as u32));
    }
    file
}

#[test]
fn a_mapped_file_paged_ahead_from_another_thread_reads_like_a_stream() {
    let bytes = large_pcap();
    let expected = read_all(bytes.clone()).unwrap();
    let file = TempFile::new("ahead.pcap", &bytes);
    let mut reader = MergedReader::open(&[file.name()]).unwrap();
    let mut map_ahead = reader.map_ahead().expect("a regular file is mapped");
    let (offsets, received) = std::sync::mpsc::channel();
    let pager = std::thread::spawn(move || {
        for offset in received {
            map_ahead.advance(offset);
        }
    });
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        frames.push((
            frame.timestamp_ns,
            frame.link_type,
            frame.data.to_vec(),
            frame.original_len,
        ));
        offsets.send(reader.bytes_read()).unwrap();
    }
    drop(offsets);
    pager.join().unwrap();
    assert_eq!(frames.len(), 40_000);
    assert!(frames == expected, "frames differ from the stream's");
    assert_eq!(reader.bytes_read(), bytes.len() as u64);
}

#[test]
fn streams_and_several_files_are_not_paged_ahead() {
    let file = TempFile::new("one.pcap", &pcap_at(LITTLE, &[1, 2]));
    let both = MergedReader::open(&[file.name(), file.name()]).unwrap();
    assert!(both.map_ahead().is_none());
    let stream = CaptureReader::from_reader("stdin", Cursor::new(pcap_at(LITTLE, &[1]))).unwrap();
    assert!(stream.map_ahead().is_none());
}
