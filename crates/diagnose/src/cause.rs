//! The causes a transaction's time can be charged to: one finding kind each.

use transactions::Part;

use crate::FindingKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cause {
    SetupFailure,
    AcceptQueue,
    /// The client waited after connecting before its first request: the
    /// connection was open before the request was ready, and nothing shows
    /// that anyone waited for it (a browser opens connections ahead of
    /// need): the client's own pace.
    ClientDelay,
    /// The client's think time between turns, and its pauses where no one
    /// was shown to wait: its own pace, not time lost.
    ClientThink,
    /// The server's pauses where no one was shown to wait: its own pace.
    ServerIdle,
    ApplicationLimited,
    SplitResponse,
    Chattiness,
    PathLatency,
    BottleneckLink,
    /// Data moving at the path's pace with no queue in sight: not a fault.
    Transfer,
    SlowStart,
    ServerThink,
    PeriodicStalls,
    ServerSaturation,
    PoolQueueing,
    NagleDelayedAck,
    DelayedAck,
    ReceiveWindow,
    ZeroWindow,
    SendBuffer,
    PacketLoss,
    PeriodicLoss,
    TailLoss,
    DeadPeer,
    MtuBlackHole,
}

impl Cause {
    /// The finding kind that names it.
    pub fn kind(self) -> FindingKind {
        match self {
            Cause::SetupFailure => FindingKind::ConnectionSetupFailure,
            Cause::AcceptQueue => FindingKind::AcceptQueueOverflow,
            Cause::ClientDelay => FindingKind::ClientDelay,
            Cause::ClientThink => FindingKind::ClientThink,
            Cause::ServerIdle => FindingKind::ServerIdle,
            Cause::ApplicationLimited => FindingKind::ApplicationLimited,
            Cause::SplitResponse => FindingKind::SplitResponse,
            Cause::Chattiness => FindingKind::Chattiness,
            Cause::PathLatency => FindingKind::PathLatency,
            Cause::BottleneckLink => FindingKind::BottleneckLink,
            Cause::Transfer => FindingKind::Transfer,
            Cause::SlowStart => FindingKind::SlowStart,
            Cause::ServerThink => FindingKind::ServerThinkTime,
            Cause::PeriodicStalls => FindingKind::PeriodicStalls,
            Cause::ServerSaturation => FindingKind::ServerSaturation,
            Cause::PoolQueueing => FindingKind::PoolQueueing,
            Cause::NagleDelayedAck => FindingKind::NagleDelayedAck,
            Cause::DelayedAck => FindingKind::DelayedAck,
            Cause::ReceiveWindow => FindingKind::ReceiveWindowLimited,
            Cause::ZeroWindow => FindingKind::ZeroWindow,
            Cause::SendBuffer => FindingKind::SendBufferLimited,
            Cause::PacketLoss => FindingKind::PacketLoss,
            Cause::PeriodicLoss => FindingKind::PeriodicLoss,
            Cause::TailLoss => FindingKind::TailLoss,
            Cause::DeadPeer => FindingKind::DeadPeer,
            Cause::MtuBlackHole => FindingKind::MtuBlackHole,
        }
    }

    /// The ledger parts whose longest stretch shows it, most telling first.
    pub fn evidence_parts(self) -> &'static [Part] {
        match self {
            Cause::SetupFailure => &[Part::SynRetry],
            Cause::AcceptQueue => &[Part::AcceptQueue],
            Cause::ClientDelay => &[Part::ClientStart],
            Cause::ClientThink => &[Part::ClientThink, Part::ClientIdle],
            Cause::ServerIdle => &[Part::ServerIdle],
            Cause::ApplicationLimited => &[Part::ServerPause, Part::ClientPause],
            Cause::SplitResponse => &[Part::ServerPause],
            Cause::Chattiness | Cause::PathLatency => &[Part::Propagation],
            Cause::BottleneckLink => &[Part::CongestionWindow, Part::Transfer, Part::Queueing],
            Cause::Transfer => &[Part::Transfer],
            Cause::SlowStart => &[Part::CongestionWindow],
            Cause::ServerThink
            | Cause::PeriodicStalls
            | Cause::ServerSaturation
            | Cause::PoolQueueing => &[Part::Server],
            Cause::NagleDelayedAck => &[Part::Nagle],
            Cause::DelayedAck => &[Part::DelayedAck],
            Cause::ReceiveWindow => &[Part::ReceiveWindow],
            Cause::ZeroWindow => &[Part::ZeroWindow],
            Cause::SendBuffer => &[Part::SendBuffer],
            Cause::TailLoss => &[Part::TailLoss],
            Cause::PacketLoss | Cause::PeriodicLoss | Cause::DeadPeer | Cause::MtuBlackHole => &[
                Part::RetransmissionTimeout,
                Part::TailLoss,
                Part::LossRecovery,
            ],
        }
    }

    /// Time that exists only because something is wrong (TCP's waits, loss,
    /// stalls, pauses, failures), rather than time every exchange spends
    /// (round trips, transfer, a new connection's slow start, which every
    /// stack does by design, the server's and the client's work).
    pub fn is_waste(self) -> bool {
        !matches!(
            self,
            Cause::Chattiness
                | Cause::PathLatency
                | Cause::BottleneckLink
                | Cause::Transfer
                | Cause::SlowStart
                | Cause::ServerThink
                | Cause::ClientThink
                | Cause::ServerIdle
                | Cause::ClientDelay
        )
    }

    /// Something is wrong: time wasted, or a link so full that a queue
    /// builds before it, rather than the distance and work every exchange pays.
    pub fn is_fault(self) -> bool {
        self.is_waste() || self == Cause::BottleneckLink
    }

    /// Time that is how traffic normally moves, or a side's own pace:
    /// never louder than info, and not time anyone lost.
    pub fn is_benign(self) -> bool {
        matches!(
            self,
            Cause::Transfer | Cause::ClientThink | Cause::ServerIdle | Cause::ClientDelay
        )
    }

    /// How its waits add up along a chain of requests that a client made
    /// one right after another, where whoever waited for the first waited
    /// for the next: the server's answers too, each of which the chain
    /// waited for before it went on.
    pub fn chain(self) -> Chain {
        match self {
            Cause::PathLatency => Chain::Never,
            Cause::Chattiness | Cause::ServerThink => Chain::Always,
            _ if self.is_waste() => Chain::Always,
            _ => Chain::NoticedSteps,
        }
    }

    /// What the packets themselves show (a segment sent again, a window
    /// advertised shut or full, a SYN unanswered), rather than what is read
    /// from timing alone (a segment held until an ACK, a writer's pauses),
    /// which once may be a coincidence.
    pub fn is_seen_in_packets(self) -> bool {
        matches!(
            self,
            Cause::SetupFailure
                | Cause::AcceptQueue
                | Cause::ReceiveWindow
                | Cause::ZeroWindow
                | Cause::PacketLoss
                | Cause::PeriodicLoss
                | Cause::TailLoss
                | Cause::DeadPeer
                | Cause::MtuBlackHole
        )
    }

    /// Whether the protocol's lengths complete what timing suggests: a small
    /// segment held until an ACK, where they say its message had begun
    /// before it, is the second write of one message, the very pattern
    /// Nagle's algorithm holds back. (For other waits they show only that
    /// the peer waited, not what held the sender.)
    pub fn is_shown_by_framing(self) -> bool {
        self == Cause::NagleDelayedAck
    }

    /// Whether the cause's waits show it once they recur on a connection,
    /// each longer than a host takes to react (see
    /// [`tcp::stack::HOST_REACTION_NS`]): a sender that stopped with all it
    /// had sent outstanding and went on as the ACK of all of it came back.
    /// An application's own timer may fire just after such an ACK once, or
    /// on every wait shorter than a host's reaction, but not time after time
    /// at the end of longer waits.
    pub fn is_shown_by_recurring_waits(self) -> bool {
        self == Cause::SendBuffer
    }

    /// Something that went wrong in the packets (a loss, a shut window, a
    /// connection that did not open or was given up): listed however little
    /// it cost, with its rate.
    pub fn is_incident(self) -> bool {
        self.is_seen_in_packets() && self != Cause::ReceiveWindow
    }

    /// Counted in the time at stake: all but each side's own pace.
    pub fn is_at_stake(self) -> bool {
        !self.kind().is_own_pace()
    }
}

/// How a cause's waits add up along a chain of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// Felt per request: distance (its sum along a chain is chattiness).
    Never,
    /// Every wait adds up: waste, chattiness's round trips, the server's answers.
    Always,
    /// Only the steps a person notices add up: the time every exchange
    /// spends moving its bytes, and each side's own pace.
    NoticedSteps,
}
