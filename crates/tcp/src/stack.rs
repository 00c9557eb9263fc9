//! What TCP stacks do, that more than one stage reads: how soon a host acts
//! on an ACK, how long a receiver holds one back, the retransmission timer's
//! floor, how long TIME_WAIT lasts and the segment sizes Ethernet carries.
//! Each fact is stated once, with where it comes from. The diagnosis's own
//! thresholds (when a cause is worth a word) are not facts about stacks:
//! they are in `diagnose::rules`.

/// The time a sending host takes to act on an ACK it was waiting for: the
/// kernel sends within microseconds, and an application blocked on the
/// socket runs again within about a millisecond of being woken (Linux CFS's
/// wakeup granularity, `sysctl_sched_wakeup_granularity` in
/// kernel/sched/fair.c; 0.75 ms, EEVDF's base slice, since 6.6). A sender
/// that resumed later than this after an ACK reached it was not waiting
/// for that ACK.
pub const HOST_REACTION_NS: i64 = 2_000_000;

/// Receivers hold back the ACK of a lone segment for their delayed-ACK
/// timer (at least 40 ms on Linux, `TCP_DELACK_MIN` in include/net/tcp.h;
/// 100 ms on macOS, 200 ms on Windows) and acknowledge every second full
/// segment at once (RFC 1122, 4.2.3.2). An ACK later than the round trip by
/// at least half the shortest of those timers was held back.
pub const DELAYED_ACK_MIN_NS: i64 = 20_000_000;
/// No delayed-ACK timer holds an ACK longer: "the delay MUST be less than
/// 0.5 seconds" (RFC 1122, 4.2.3.2).
pub const DELAYED_ACK_MAX_NS: i64 = 500_000_000;

/// The least retransmission timeout the standard allows: "if it is less
/// than 1 second, then the RTO SHOULD be rounded up to 1 second" (RFC 6298,
/// 2.4). Stacks set lower floors (see [`LINUX_RTO_MIN_NS`]), so no first
/// timeout waits longer than this over the round trip.
pub const RTO_FLOOR_NS: i64 = 1_000_000_000;
/// Linux's least retransmission timeout, below the standard's
/// [`RTO_FLOOR_NS`]: `TCP_RTO_MIN` (HZ/5) in include/net/tcp.h. Its RTO is
/// at least this plus the smoothed round trip.
pub const LINUX_RTO_MIN_NS: i64 = 200_000_000;

/// How long the side that closed first keeps a 4-tuple in TIME_WAIT on
/// Linux: `TCP_TIMEWAIT_LEN` (60*HZ) in include/net/tcp.h. The standard's
/// 2 × MSL is longer (RFC 9293, 3.4.2), as is Windows's 120 to 240 s
/// (`TcpTimedWaitDelay`): a port used again sooner meets it everywhere.
pub const TIME_WAIT_NS: i64 = 60_000_000_000;

/// The IPv4 TTL that Linux, macOS and the BSDs start their packets with
/// (`IPDEFTTL`, 64). Windows starts at 128 and routers commonly at 255, and
/// those number their packets from a counter shared by every connection (to
/// one destination, or to all): a packet that arrives with more TTL left
/// came from a stack whose identification steps say nothing of its
/// connection's own packets.
pub const UNIX_INITIAL_TTL: u8 = 64;

/// The times Linux tries a SYN again by default (`net.ipv4.tcp_syn_retries`,
/// `TCP_SYN_RETRIES` in include/net/tcp.h), the last after about two minutes.
pub const LINUX_SYN_RETRIES: usize = 6;
/// The most times a stack tries a SYN again: Linux's
/// `net.ipv4.tcp_syn_retries` takes at most 127 (`MAX_TCP_SYNCNT` in
/// include/net/tcp.h); Windows and the BSDs try fewer. More repeats of one
/// SYN come from a tool or a flood, not from a stack waiting for an answer.
pub const MAX_SYN_RETRIES: usize = 127;

/// The largest packet Ethernet carries, in bytes (RFC 894).
pub const ETHERNET_MTU: u16 = 1500;
/// The MSS a full Ethernet frame allows over IPv4: the MTU less 20 bytes of
/// IPv4 header and 20 of TCP header (RFC 879).
pub const ETHERNET_MSS_V4: u16 = ETHERNET_MTU - 40;
/// The MSS a full Ethernet frame allows over IPv6: the MTU less 40 bytes of
/// IPv6 header (RFC 8200) and 20 of TCP header.
pub const ETHERNET_MSS_V6: u16 = ETHERNET_MTU - 60;
/// The MSS a side assumes when the peer's SYN carries none, over IPv4: the
/// 576 bytes every host takes less 40 of headers (RFC 879; RFC 9293, 3.7.1,
/// which gives IPv6 1220).
pub const DEFAULT_MSS_V4: u16 = 536;
