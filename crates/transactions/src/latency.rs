//! Where a transaction's time went, in four kinds: the network, the server,
//! the client, and waits that TCP itself imposed. Each is the sum of its
//! ledger's parts of that kind (see [`crate::ledger`]); the setup's waits
//! count among TCP's.

use serde::Serialize;

use crate::ledger::Ledger;

/// A transaction's time by kind, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, record::Wire, record::Columns)]
pub struct Latency {
    /// Round trips, queues and transfer on the wire.
    pub network_ms: f64,
    /// The server's processing and its pauses mid-response.
    pub server_ms: f64,
    /// The client's wait before its first request, its think time before
    /// this request, and its pauses mid-request.
    pub client_ms: f64,
    /// TCP's own waits: setup retries, retransmission timeouts, delayed ACKs,
    /// Nagle, full windows.
    pub tcp_wait_ms: f64,
}

impl Latency {
    /// The ledger's parts summed by kind.
    pub fn of(ledger: &Ledger) -> Latency {
        let mut latency = Latency::default();
        for (part, ms) in ledger.parts() {
            *match part.group() {
                "network" => &mut latency.network_ms,
                "server" => &mut latency.server_ms,
                "client" => &mut latency.client_ms,
                _ => &mut latency.tcp_wait_ms,
            } += ms;
        }
        latency
    }

    pub fn total_ms(&self) -> f64 {
        self.network_ms + self.server_ms + self.client_ms + self.tcp_wait_ms
    }

    pub fn add(&mut self, other: &Latency) {
        self.network_ms += other.network_ms;
        self.server_ms += other.server_ms;
        self.client_ms += other.client_ms;
        self.tcp_wait_ms += other.tcp_wait_ms;
    }

    /// The kinds, named, in a fixed order.
    pub fn parts(&self) -> [(&'static str, f64); 4] {
        [
            ("network", self.network_ms),
            ("server", self.server_ms),
            ("client", self.client_ms),
            ("tcp_waits", self.tcp_wait_ms),
        ]
    }
}
