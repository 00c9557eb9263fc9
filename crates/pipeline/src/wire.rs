//! Parts and file surveys as bytes, to move between the machines of a
//! cluster: every field as it is, so the analysis that joins them is the
//! analysis one process makes. Each record is its fields in declaration
//! order; a field or variant added to a record without being named here
//! does not compile.

use std::net::IpAddr;

use capture::{CaptureError, Place};
use decode::Endpoint;
use tcp::{
    AckClockStats, Close, CloseHow, ConnState, ConnectionSummary, Direction, DirectionSummary,
    Event, EventKind, Handshake, Repeats, Retransmissions, Role, RttStats, Sources, SynAttempt,
    SynOptions, Trimmed, UnansweredSyns, WindowStats,
};
use timeline::{Snapshot, Timeline};
use transactions::{
    AppFailure, ConnectionLedger, FailureKind, Latency, Ledger, Stretch, Transaction,
};

use crate::{Clock, FileSurvey, Matched, OtherTraffic, Part, ReadCounts, SkipCounts};

/// Bytes that are not a part or survey this build wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed(pub &'static str);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed analysis bytes: {}", self.0)
    }
}

impl std::error::Error for Malformed {}

/// Written first: bytes from another layout are refused, not misread.
const PART_MAGIC: &[u8; 8] = b"twpart02";
const SURVEY_MAGIC: &[u8; 8] = b"twfile02";

impl Part {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = PART_MAGIC.to_vec();
        self.put(&mut out);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Part, Malformed> {
        read_all(bytes, PART_MAGIC)
    }
}

impl FileSurvey {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = SURVEY_MAGIC.to_vec();
        self.put(&mut out);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<FileSurvey, Malformed> {
        read_all(bytes, SURVEY_MAGIC)
    }
}

fn read_all<T: Wire>(bytes: &[u8], magic: &[u8; 8]) -> Result<T, Malformed> {
    let mut input = bytes
        .strip_prefix(magic.as_slice())
        .ok_or(Malformed("unknown layout"))?;
    let value = T::take(&mut input)?;
    if !input.is_empty() {
        return Err(Malformed("trailing bytes"));
    }
    Ok(value)
}

/// A value written to bytes and read back whole.
trait Wire: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn take(input: &mut &[u8]) -> Result<Self, Malformed>;
}

fn take_bytes<'a>(input: &mut &'a [u8], len: usize) -> Result<&'a [u8], Malformed> {
    if input.len() < len {
        return Err(Malformed("ends early"));
    }
    let (taken, rest) = input.split_at(len);
    *input = rest;
    Ok(taken)
}

macro_rules! wire_number {
    ($($number:ty),*) => {$(
        impl Wire for $number {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
                let bytes = take_bytes(input, std::mem::size_of::<$number>())?;
                Ok(<$number>::from_le_bytes(bytes.try_into().expect("sized")))
            }
        }
    )*};
}

wire_number!(u8, u16, u32, u64, i64, f64);

impl Wire for usize {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u64).put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        usize::try_from(u64::take(input)?).map_err(|_| Malformed("length too large"))
    }
}

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        u8::from(*self).put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        match u8::take(input)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Malformed("bad flag")),
        }
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.is_some().put(out);
        if let Some(value) = self {
            value.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok(if bool::take(input)? {
            Some(T::take(input)?)
        } else {
            None
        })
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for value in self {
            value.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let len = usize::take(input)?;
        // Every value takes a byte at least: a length past the input is corrupt.
        if len > input.len() {
            return Err(Malformed("length past the end"));
        }
        (0..len).map(|_| T::take(input)).collect()
    }
}

impl<T: Wire + Copy + Default, const N: usize> Wire for [T; N] {
    fn put(&self, out: &mut Vec<u8>) {
        for value in self {
            value.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let mut values = [T::default(); N];
        for value in &mut values {
            *value = T::take(input)?;
        }
        Ok(values)
    }
}

impl<A: Wire, B: Wire, C: Wire> Wire for (A, B, C) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
        self.2.put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok((A::take(input)?, B::take(input)?, C::take(input)?))
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok((A::take(input)?, B::take(input)?))
    }
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let len = usize::take(input)?;
        let bytes = take_bytes(input, len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Malformed("text not UTF-8"))
    }
}

impl Wire for IpAddr {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            IpAddr::V4(ip) => {
                4u8.put(out);
                out.extend_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                6u8.put(out);
                out.extend_from_slice(&ip.octets());
            }
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok(match u8::take(input)? {
            4 => IpAddr::from(<[u8; 4]>::try_from(take_bytes(input, 4)?).expect("sized")),
            6 => IpAddr::from(<[u8; 16]>::try_from(take_bytes(input, 16)?).expect("sized")),
            _ => return Err(Malformed("bad address family")),
        })
    }
}

impl Wire for Sources {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Sources::Exact(ips) => {
                false.put(out);
                ips.put(out);
            }
            Sources::Sketch(registers) => {
                true.put(out);
                registers.as_slice().to_vec().put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        if !bool::take(input)? {
            return Ok(Sources::Exact(Vec::take(input)?));
        }
        let registers: Vec<u8> = Vec::take(input)?;
        let registers = registers
            .try_into()
            .map_err(|_| Malformed("sketch of another size"))?;
        Ok(Sources::Sketch(Box::new(registers)))
    }
}

/// Every field of a struct, in the order listed.
macro_rules! wire_struct {
    ($type:ident { $($field:ident),* $(,)? }) => {
        impl Wire for $type {
            fn put(&self, out: &mut Vec<u8>) {
                $(self.$field.put(out);)*
            }
            fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
                Ok($type { $($field: Wire::take(input)?,)* })
            }
        }
    };
}

/// A fieldless enum by its place in the list, which must name every variant.
macro_rules! wire_enum {
    ($type:ident { $($variant:ident),* $(,)? }) => {
        impl Wire for $type {
            fn put(&self, out: &mut Vec<u8>) {
                const VARIANTS: &[$type] = &[$($type::$variant),*];
                match self {
                    $($type::$variant)|* => {}
                }
                let place = VARIANTS.iter().position(|variant| variant == self);
                (place.unwrap_or_default() as u8).put(out);
            }
            fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
                const VARIANTS: &[$type] = &[$($type::$variant),*];
                VARIANTS
                    .get(usize::from(u8::take(input)?))
                    .copied()
                    .ok_or(Malformed(concat!("unknown ", stringify!($type))))
            }
        }
    };
}

wire_enum!(ConnState {
    S0,
    S1,
    SF,
    REJ,
    S2,
    S3,
    RSTO,
    RSTR,
    RSTOS0,
    RSTRH,
    SH,
    SHR,
    OTH
});
wire_enum!(Role { Client, Server });
wire_enum!(CloseHow { Fin, Rst, Open });
wire_enum!(Direction {
    ClientToServer,
    ServerToClient
});
wire_enum!(FailureKind {
    HttpStatus,
    TlsAlert,
    ServerReset,
    ReplyCode,
    Pop3Error,
    ImapRefusal,
    PostgresError,
    MysqlError,
    LdapResult,
    OtherProtocol
});
wire_enum!(EventKind {
    Retransmission,
    FastRetransmission,
    SpuriousRetransmission,
    OutOfOrder,
    LostSegment,
    AckLostSegment,
    DuplicateAck,
    ZeroWindow,
    ZeroWindowProbe,
    ZeroWindowProbeAck,
    WindowFull,
    WindowUpdate,
    KeepAlive,
    KeepAliveAck,
    ReusedPorts,
    SynRetransmission,
});

use transactions::Part as LedgerPart;

wire_enum!(LedgerPart {
    SynRetry,
    AcceptQueue,
    ClientStart,
    ClientThink,
    ClientPause,
    ClientIdle,
    Propagation,
    Queueing,
    Transfer,
    Server,
    ServerPause,
    ServerIdle,
    Nagle,
    DelayedAck,
    ReceiveWindow,
    ZeroWindow,
    SendBuffer,
    CongestionWindow,
    RetransmissionTimeout,
    TailLoss,
    LossRecovery,
});

/// Each part's milliseconds, in [`transactions::Part::ALL`]'s order.
impl Wire for Ledger {
    fn put(&self, out: &mut Vec<u8>) {
        for part in LedgerPart::ALL {
            self.get(part).put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let mut ledger = Ledger::default();
        for part in LedgerPart::ALL {
            ledger.charge(part, f64::take(input)?);
        }
        Ok(ledger)
    }
}

wire_struct!(Endpoint { ip, port });
wire_struct!(ConnectionSummary {
    id,
    client,
    server,
    roles_guessed,
    first_frame,
    last_frame,
    first_ns,
    last_ns,
    duration_ms,
    state,
    history,
    close,
    handshake,
    client_to_server,
    server_to_client,
});
wire_struct!(Close { by, how, frame });
wire_struct!(Handshake {
    syn_ns,
    syn_ack_ns,
    ack_ns,
    syn_retries_ns,
    syn_retries,
    syn_ack_retries,
    rtt_to_server_ms,
    rtt_to_client_ms,
    client_options,
    server_options,
    retry_client_options,
});
wire_struct!(SynOptions {
    mss,
    window_scale,
    sack_permitted,
    timestamps,
});
wire_struct!(DirectionSummary {
    packets,
    data_packets,
    wire_bytes,
    payload_bytes,
    unique_payload_bytes,
    retransmissions,
    out_of_order,
    lost_segments,
    ack_lost_segments,
    lost_before_capture,
    lost_after_capture,
    capture_drops,
    duplicate_acks,
    sack_acks,
    dsacks,
    zero_windows,
    zero_window_ms,
    zero_window_probes,
    window_full,
    window_updates,
    keep_alives,
    window,
    window_scale_known,
    max_bytes_in_flight,
    rtt,
    release_lag,
    max_idle_ms,
    ack_clock,
    largest_segment,
    most_resends,
    most_resent_bytes,
    unacknowledged_at_end,
});
wire_struct!(AckClockStats {
    samples,
    busy_ms,
    bytes_per_s,
    spread,
    delayed_ack_waits,
    delayed_ack_wait_ms,
});
wire_struct!(Retransmissions {
    total,
    timeout,
    fast,
    spurious,
    handshake,
    after_duplicate_acks,
    repeated,
});
wire_struct!(WindowStats { min, max, mean });
wire_struct!(RttStats {
    samples,
    min_ms,
    median_ms,
    max_ms,
    in_flight_correlation,
});
wire_struct!(Transaction {
    connection,
    index,
    signature,
    name,
    forwarded_for,
    request_start_ns,
    request_end_ns,
    response_start_ns,
    response_end_ns,
    duration_ms,
    request_transfer_ms,
    server_think_ms,
    response_transfer_ms,
    client_think_ms,
    request_bytes,
    response_bytes,
    request_packets,
    response_packets,
    retransmissions,
    ledger,
    latency,
    failure,
});
wire_struct!(Latency {
    network_ms,
    server_ms,
    client_ms,
    tcp_wait_ms,
});
wire_struct!(AppFailure {
    kind,
    by,
    code,
    frame,
    incidental,
});
wire_struct!(ConnectionLedger {
    connection,
    transactions,
    ledger,
    stretches,
});
wire_struct!(Stretch {
    from_frame,
    to_frame,
    ack_frame,
    ms,
    ended_by,
    inside_message,
});
wire_struct!(Event {
    frame,
    timestamp_ns,
    connection,
    direction,
    kind,
    seq,
    ack,
    len,
    window,
    value,
});
wire_struct!(UnansweredSyns {
    server,
    attempts,
    listed,
    sources,
    first_ns,
    last_ns,
    examples,
    source_addresses,
});
wire_struct!(SynAttempt {
    client,
    frame,
    timestamp_ns,
});
wire_struct!(Trimmed {
    retired_early,
    attempts_not_listed,
    connections_not_listed,
    transactions_not_listed,
});
wire_struct!(Snapshot {
    origin_ns,
    bin_ns,
    fixed,
    bins,
    span_ns,
});

impl Wire for Timeline {
    fn put(&self, out: &mut Vec<u8>) {
        self.snapshot().put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok(Timeline::restore(Snapshot::take(input)?))
    }
}

wire_struct!(Part {
    connections,
    unanswered_syns,
    trimmed,
    transactions,
    ledgers,
    events,
    timeline,
    opened,
    tcp_segments,
    selected_segments,
    matched,
    repeats,
    memory_budget_bytes,
});
wire_struct!(Matched {
    copies,
    renumbered_connections,
    unmatched_connections,
});
wire_struct!(Repeats {
    recorded_twice,
    forwarded_again,
    ttl_steps,
});
wire_struct!(CaptureError {
    path,
    offset,
    place,
    frames_read,
    reason,
    cut_short,
});
/// Where a capture error lies: a tag, then the compressed offset if any.
impl Wire for Place {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Place::Nowhere => 0u8.put(out),
            Place::File => 1u8.put(out),
            Place::Decompressed { compressed } => {
                2u8.put(out);
                compressed.put(out);
            }
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        match u8::take(input)? {
            0 => Ok(Place::Nowhere),
            1 => Ok(Place::File),
            2 => Ok(Place::Decompressed {
                compressed: Wire::take(input)?,
            }),
            _ => Err(Malformed("unknown Place")),
        }
    }
}

wire_struct!(SkipCounts {
    unsupported_link_type,
    not_ip,
    not_tcp,
    ip_fragment,
    truncated_header,
    malformed_header,
});
wire_struct!(OtherTraffic {
    udp,
    icmp,
    arp,
    other,
});
wire_struct!(Clock {
    steps_back,
    largest_step_back_ms,
    jumps,
    largest_jump_s,
    out_of_range,
    first_ns,
    latest_ns,
});
wire_struct!(ReadCounts {
    frames,
    first_frame_ns,
    skipped,
    other_traffic,
    clock,
});
wire_struct!(FileSurvey {
    path,
    source,
    read,
    span_ns,
    error,
});
