//! Handshakes that never completed, counted per server and port: a flood or
//! a scan of millions of SYNs costs a few hundred bytes per server, not a
//! connection record per SYN.

use std::net::IpAddr;

use decode::Endpoint;
use rustc_hash::FxHashMap;
use serde::{Serialize, Serializer};

use crate::connection::Connection;

/// Servers counted one by one; beyond them attempts are only totalled.
const MAX_SERVERS: usize = 65_536;
/// Attempts kept as examples per server.
const EXAMPLES: usize = 5;
/// Distinct sources are counted exactly up to this many, then estimated.
const EXACT_SOURCES: usize = 64;
/// Registers of the estimate (HyperLogLog): a few percent off for 1 kB.
const SKETCH_REGISTERS: usize = 1024;

fn endpoint_as_text<S: Serializer>(endpoint: &Endpoint, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(endpoint)
}

/// Handshakes to one server and port that never completed.
#[derive(Debug, Clone, PartialEq, Serialize, record::Wire)]
pub struct UnansweredSyns {
    #[serde(serialize_with = "endpoint_as_text")]
    pub server: Endpoint,
    /// Connection attempts: SYNs (and their retries) that never became a connection.
    pub attempts: u64,
    /// How many of them are listed among the connections; the rest are only counted.
    pub listed: u64,
    /// Distinct source addresses (estimated past 64, within a few percent).
    pub sources: u64,
    pub first_ns: i64,
    pub last_ns: i64,
    /// The first few attempts.
    pub examples: Vec<SynAttempt>,
    /// The distinct source addresses `sources` counts, to add another
    /// tracker's to (see [`merge_unanswered`]).
    #[serde(skip)]
    pub source_addresses: Sources,
}

/// One attempt, to look at.
#[derive(Debug, Clone, PartialEq, Serialize, record::Wire)]
pub struct SynAttempt {
    #[serde(serialize_with = "endpoint_as_text")]
    pub client: Endpoint,
    pub frame: u64,
    pub timestamp_ns: i64,
}

/// The lists of several trackers, each over other connections, as one:
/// counts per server added, distinct sources counted over all of them, the
/// earliest attempts kept as examples.
pub fn merge_unanswered(lists: Vec<Vec<UnansweredSyns>>) -> Vec<UnansweredSyns> {
    let mut servers: FxHashMap<Endpoint, UnansweredSyns> = FxHashMap::default();
    for syns in lists.into_iter().flatten() {
        match servers.entry(syns.server) {
            std::collections::hash_map::Entry::Vacant(vacant) => {
                vacant.insert(syns);
            }
            std::collections::hash_map::Entry::Occupied(mut occupied) => {
                let merged = occupied.get_mut();
                merged.attempts += syns.attempts;
                merged.listed += syns.listed;
                merged.source_addresses.merge(&syns.source_addresses);
                merged.sources = merged.source_addresses.estimate();
                merged.first_ns = merged.first_ns.min(syns.first_ns);
                merged.last_ns = merged.last_ns.max(syns.last_ns);
                merged.examples.extend(syns.examples);
                merged.examples.sort_by_key(|example| example.frame);
                merged.examples.truncate(EXAMPLES);
            }
        }
    }
    most_attempted_first(servers.into_values().collect())
}

/// Every server's unanswered handshakes, as the tracker retires them.
#[derive(Default)]
pub(crate) struct SynCounts {
    servers: FxHashMap<Endpoint, ServerCount>,
    /// Attempts on servers past [`MAX_SERVERS`].
    pub uncounted_servers_attempts: u64,
}

struct ServerCount {
    attempts: u64,
    listed: u64,
    first_ns: i64,
    last_ns: i64,
    sources: Sources,
    examples: Vec<SynAttempt>,
}

impl SynCounts {
    /// Counts one bare attempt; `listed` when its summary is kept as well.
    pub fn record(&mut self, connection: &Connection, listed: bool) {
        let server = connection.server();
        if self.servers.len() >= MAX_SERVERS && !self.servers.contains_key(&server) {
            self.uncounted_servers_attempts += 1;
            return;
        }
        let first_ns = connection.first_ns();
        let count = self.servers.entry(server).or_insert_with(|| ServerCount {
            attempts: 0,
            listed: 0,
            first_ns,
            last_ns: first_ns,
            sources: Sources::default(),
            examples: Vec::new(),
        });
        count.attempts += 1;
        count.listed += u64::from(listed);
        count.first_ns = count.first_ns.min(first_ns);
        count.last_ns = count.last_ns.max(connection.last_ns);
        count.sources.add(connection.client().ip);
        if count.examples.len() < EXAMPLES {
            count.examples.push(SynAttempt {
                client: connection.client(),
                frame: connection.first_frame(),
                timestamp_ns: first_ns,
            });
        }
    }

    /// Every server's count, the most attempted first.
    pub fn finish(self) -> Vec<UnansweredSyns> {
        let all: Vec<UnansweredSyns> = self
            .servers
            .into_iter()
            .map(|(server, count)| {
                let mut examples = count.examples;
                examples.sort_by_key(|example| example.frame);
                UnansweredSyns {
                    server,
                    attempts: count.attempts,
                    listed: count.listed,
                    sources: count.sources.estimate(),
                    first_ns: count.first_ns,
                    last_ns: count.last_ns,
                    examples,
                    source_addresses: count.sources,
                }
            })
            .collect();
        most_attempted_first(all)
    }
}

fn most_attempted_first(mut all: Vec<UnansweredSyns>) -> Vec<UnansweredSyns> {
    all.sort_by(|a, b| {
        b.attempts
            .cmp(&a.attempts)
            .then_with(|| a.server.cmp(&b.server))
    });
    all
}

/// Distinct addresses: a short exact list, then a HyperLogLog sketch.
#[derive(Debug, Clone, PartialEq, record::Wire)]
pub enum Sources {
    Exact(Vec<IpAddr>),
    Sketch(Box<[u8; SKETCH_REGISTERS]>),
}

impl Default for Sources {
    fn default() -> Self {
        Sources::Exact(Vec::new())
    }
}

impl Sources {
    fn add(&mut self, ip: IpAddr) {
        match self {
            Sources::Exact(ips) => {
                if ips.contains(&ip) {
                    return;
                }
                ips.push(ip);
                if ips.len() > EXACT_SOURCES {
                    *self = Sources::Sketch(self.sketch());
                }
            }
            Sources::Sketch(sketch) => sketch_add(sketch, ip),
        }
    }

    /// Adds the addresses `other` counted: what one count of both gives.
    pub fn merge(&mut self, other: &Sources) {
        match other {
            Sources::Exact(ips) => ips.iter().for_each(|&ip| self.add(ip)),
            Sources::Sketch(theirs) => {
                let mut ours = self.sketch();
                for (register, &rank) in ours.iter_mut().zip(theirs.iter()) {
                    *register = (*register).max(rank);
                }
                *self = Sources::Sketch(ours);
            }
        }
    }

    /// The addresses as a sketch.
    fn sketch(&self) -> Box<[u8; SKETCH_REGISTERS]> {
        match self {
            Sources::Exact(ips) => {
                let mut sketch = Box::new([0u8; SKETCH_REGISTERS]);
                for &ip in ips {
                    sketch_add(&mut sketch, ip);
                }
                sketch
            }
            Sources::Sketch(sketch) => sketch.clone(),
        }
    }

    pub fn estimate(&self) -> u64 {
        match self {
            Sources::Exact(ips) => ips.len() as u64,
            Sources::Sketch(sketch) => sketch_estimate(sketch),
        }
    }
}

const INDEX_BITS: u32 = SKETCH_REGISTERS.trailing_zeros();

fn sketch_add(sketch: &mut [u8; SKETCH_REGISTERS], ip: IpAddr) {
    let hash = mix(match ip {
        IpAddr::V4(ip) => u64::from(u32::from(ip)),
        IpAddr::V6(ip) => {
            let bits = u128::from(ip);
            (bits as u64) ^ mix((bits >> 64) as u64)
        }
    });
    let index = (hash >> (64 - INDEX_BITS)) as usize;
    let rank = ((hash << INDEX_BITS) | (1 << (INDEX_BITS - 1))).leading_zeros() as u8 + 1;
    sketch[index] = sketch[index].max(rank);
}

fn sketch_estimate(sketch: &[u8; SKETCH_REGISTERS]) -> u64 {
    let m = SKETCH_REGISTERS as f64;
    let alpha = 0.7213 / (1.0 + 1.079 / m);
    let sum: f64 = sketch.iter().map(|&rank| 2f64.powi(-i32::from(rank))).sum();
    let raw = alpha * m * m / sum;
    let zeros = sketch.iter().filter(|&&rank| rank == 0).count();
    let estimate = if raw <= 2.5 * m && zeros > 0 {
        m * (m / zeros as f64).ln()
    } else {
        raw
    };
    estimate.round() as u64
}

/// SplitMix64's finalizer: every input bit moves every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_exact_when_few_and_close_when_many() {
        let mut few = Sources::default();
        for i in 0..50u32 {
            few.add(IpAddr::from((i % 40).to_be_bytes()));
        }
        assert_eq!(few.estimate(), 40);
        let mut others = Sources::default();
        for i in 30..100u32 {
            others.add(IpAddr::from(i.to_be_bytes()));
        }
        few.merge(&others);
        let estimate = few.estimate() as f64;
        assert!((estimate / 100.0 - 1.0).abs() < 0.06, "{estimate}");
        let mut many = Sources::default();
        for i in 0..1_000_000u32 {
            many.add(IpAddr::from(i.wrapping_mul(2_654_435_761).to_be_bytes()));
        }
        let estimate = many.estimate() as f64;
        assert!((estimate / 1e6 - 1.0).abs() < 0.06, "{estimate}");
    }
}
