//! The kinds of finding, by the names every output gives them.

use std::cmp::Ordering;
use std::fmt;

use serde::Serialize;

/// What a finding is about: a cause the time ledger charged (see
/// [`crate::Cause::kind`]), a structural finding, or the summary of where
/// the time went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, record::Columns)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    ConnectionSetupFailure,
    AcceptQueueOverflow,
    ClientDelay,
    ClientThink,
    ServerIdle,
    ApplicationLimited,
    SplitResponse,
    Chattiness,
    PathLatency,
    BottleneckLink,
    Transfer,
    SlowStart,
    ServerThinkTime,
    PeriodicStalls,
    ServerSaturation,
    PoolQueueing,
    NagleDelayedAck,
    DelayedAck,
    ReceiveWindowLimited,
    ZeroWindow,
    SendBufferLimited,
    PacketLoss,
    PeriodicLoss,
    TailLoss,
    DeadPeer,
    MtuBlackHole,
    ApplicationFailure,
    PortReuse,
    TcpOptions,
    SynFlood,
    LatencySplit,
}

impl FindingKind {
    /// Time that is a side's own pace (the client's start and its pauses
    /// between turns, the server's idle time): nobody waited for it, so it
    /// is no share of the time at stake.
    pub fn is_own_pace(self) -> bool {
        matches!(
            self,
            FindingKind::ClientDelay | FindingKind::ClientThink | FindingKind::ServerIdle
        )
    }

    /// The name it is serialized as.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::ConnectionSetupFailure => "connection_setup_failure",
            FindingKind::AcceptQueueOverflow => "accept_queue_overflow",
            FindingKind::ClientDelay => "client_delay",
            FindingKind::ClientThink => "client_think",
            FindingKind::ServerIdle => "server_idle",
            FindingKind::ApplicationLimited => "application_limited",
            FindingKind::SplitResponse => "split_response",
            FindingKind::Chattiness => "chattiness",
            FindingKind::PathLatency => "path_latency",
            FindingKind::BottleneckLink => "bottleneck_link",
            FindingKind::Transfer => "transfer",
            FindingKind::SlowStart => "slow_start",
            FindingKind::ServerThinkTime => "server_think_time",
            FindingKind::PeriodicStalls => "periodic_stalls",
            FindingKind::ServerSaturation => "server_saturation",
            FindingKind::PoolQueueing => "pool_queueing",
            FindingKind::NagleDelayedAck => "nagle_delayed_ack",
            FindingKind::DelayedAck => "delayed_ack",
            FindingKind::ReceiveWindowLimited => "receive_window_limited",
            FindingKind::ZeroWindow => "zero_window",
            FindingKind::SendBufferLimited => "send_buffer_limited",
            FindingKind::PacketLoss => "packet_loss",
            FindingKind::PeriodicLoss => "periodic_loss",
            FindingKind::TailLoss => "tail_loss",
            FindingKind::DeadPeer => "dead_peer",
            FindingKind::MtuBlackHole => "mtu_black_hole",
            FindingKind::ApplicationFailure => "application_failure",
            FindingKind::PortReuse => "port_reuse",
            FindingKind::TcpOptions => "tcp_options",
            FindingKind::SynFlood => "syn_flood",
            FindingKind::LatencySplit => "latency_split",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Kinds order by name, as a listing of them reads.
impl Ord for FindingKind {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for FindingKind {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::FindingKind;

    const ALL: [FindingKind; 31] = [
        FindingKind::ConnectionSetupFailure,
        FindingKind::AcceptQueueOverflow,
        FindingKind::ClientDelay,
        FindingKind::ClientThink,
        FindingKind::ServerIdle,
        FindingKind::ApplicationLimited,
        FindingKind::SplitResponse,
        FindingKind::Chattiness,
        FindingKind::PathLatency,
        FindingKind::BottleneckLink,
        FindingKind::Transfer,
        FindingKind::SlowStart,
        FindingKind::ServerThinkTime,
        FindingKind::PeriodicStalls,
        FindingKind::ServerSaturation,
        FindingKind::PoolQueueing,
        FindingKind::NagleDelayedAck,
        FindingKind::DelayedAck,
        FindingKind::ReceiveWindowLimited,
        FindingKind::ZeroWindow,
        FindingKind::SendBufferLimited,
        FindingKind::PacketLoss,
        FindingKind::PeriodicLoss,
        FindingKind::TailLoss,
        FindingKind::DeadPeer,
        FindingKind::MtuBlackHole,
        FindingKind::ApplicationFailure,
        FindingKind::PortReuse,
        FindingKind::TcpOptions,
        FindingKind::SynFlood,
        FindingKind::LatencySplit,
    ];

    #[test]
    fn each_kind_serializes_to_its_name_and_no_two_share_one() {
        let mut names = std::collections::BTreeSet::new();
        for kind in ALL {
            let serialized = serde_json::to_string(&kind).unwrap();
            assert_eq!(serialized, format!("\"{kind}\""));
            assert!(names.insert(kind.as_str()), "{kind} twice");
        }
    }
}
