//! Which traffic a command looks at: hosts, ports, networks, connection ids
//! and a time window.
//!
//! The tracker still sees every segment, so connections keep the ids they
//! have in the whole capture (Wireshark's `tcp.stream`); the selection is
//! applied to what the tracker hands on. Criteria of different kinds must all
//! match; several values of one kind match when any does.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

use decode::{Endpoint, Segment};
use rustc_hash::FxHashSet;
use tcp::{Event, SegmentView};

/// An address prefix: `10.1.0.0/16`, `2001:db8::/32`, or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix_len: u8,
}

impl Network {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let (bits, ours, theirs) = match (self.address, ip) {
            (IpAddr::V4(ours), IpAddr::V4(theirs)) => (
                32,
                u128::from(u32::from(ours)),
                u128::from(u32::from(theirs)),
            ),
            (IpAddr::V6(ours), IpAddr::V6(theirs)) => (128, u128::from(ours), u128::from(theirs)),
            _ => return false,
        };
        let host_bits = bits - u32::from(self.prefix_len);
        host_bits >= 128 || ours >> host_bits == theirs >> host_bits
    }
}

impl FromStr for Network {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (address, prefix) = text.split_once('/').unwrap_or((text, ""));
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("{text:?} is not a network such as 10.1.0.0/16"))?;
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix_len = match prefix {
            "" => bits,
            prefix => prefix
                .parse()
                .ok()
                .filter(|&len| len <= bits)
                .ok_or_else(|| format!("{text:?}: the prefix length must be 0 to {bits}"))?,
        };
        Ok(Network {
            address,
            prefix_len,
        })
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix_len)
    }
}

/// An instant as a user names it, resolved once the capture's start is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instant {
    /// Nanoseconds since the Unix epoch.
    Epoch(i64),
    /// Nanoseconds after the capture's first packet.
    FromStart(i64),
    /// Nanoseconds after midnight UTC, on the capture's first day.
    TimeOfDay(i64),
}

impl Instant {
    /// Nanoseconds since the epoch, for a capture starting at `start_ns`;
    /// a time of day falls on the day of `day_of_ns`, or the next day when
    /// that would put it before `not_before_ns`.
    fn resolve(self, start_ns: i64, day_of_ns: i64, not_before_ns: i64) -> i64 {
        match self {
            Instant::Epoch(ns) => ns,
            Instant::FromStart(ns) => start_ns.saturating_add(ns),
            Instant::TimeOfDay(ns) => {
                let at = day_of_ns - capture::time_of_day_ns(day_of_ns) + ns;
                if at < not_before_ns {
                    at + capture::NS_PER_DAY
                } else {
                    at
                }
            }
        }
    }
}

/// What to keep of a capture; the default keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub hosts: Vec<IpAddr>,
    pub ports: Vec<u16>,
    pub networks: Vec<Network>,
    pub connections: Vec<u64>,
    /// Keep the packets from the first instant to the second, both included.
    pub between: Option<(Instant, Instant)>,
}

impl Selection {
    pub fn is_everything(&self) -> bool {
        *self == Selection::default()
    }

    /// The time window in nanoseconds since the epoch, for a capture whose
    /// first packet came at `start_ns`; everything when no window was given.
    pub fn window_ns(&self, start_ns: i64) -> (i64, i64) {
        match self.between {
            None => (i64::MIN, i64::MAX),
            Some((from, to)) => {
                let from = from.resolve(start_ns, start_ns, i64::MIN);
                (from, to.resolve(start_ns, from, from))
            }
        }
    }

    /// Whether a connection between these endpoints, with this id, is selected
    /// (the time window aside).
    fn keeps_connection(&self, id: u64, a: &Endpoint, b: &Endpoint) -> bool {
        let either = |test: &dyn Fn(&Endpoint) -> bool| test(a) || test(b);
        (self.connections.is_empty() || self.connections.contains(&id))
            && (self.hosts.is_empty() || self.hosts.iter().any(|&host| either(&|e| e.ip == host)))
            && (self.ports.is_empty() || self.ports.iter().any(|&port| either(&|e| e.port == port)))
            && (self.networks.is_empty()
                || self
                    .networks
                    .iter()
                    .any(|net| either(&|e| net.contains(e.ip))))
    }
}

/// A selection at work during one pass: its window, once the capture's
/// start is known, and the connections it has kept so far.
pub(crate) struct Selecting {
    selection: Selection,
    window: Option<(i64, i64)>,
    kept: FxHashSet<u64>,
}

impl Selecting {
    pub(crate) fn new(selection: Selection) -> Option<Self> {
        (!selection.is_everything()).then(|| Selecting {
            selection,
            window: None,
            kept: FxHashSet::default(),
        })
    }

    /// The window, resolved the first time for a capture whose first frame
    /// came at `start_ns`.
    pub(crate) fn window(&mut self, start_ns: i64) -> (i64, i64) {
        let selection = &self.selection;
        *self
            .window
            .get_or_insert_with(|| selection.window_ns(start_ns))
    }

    /// Whether the segment the tracker made `view` of is selected.
    pub(crate) fn keeps(&mut self, segment: &Segment, view: &SegmentView) -> bool {
        let (from, to) = self.window(segment.timestamp_ns);
        let selection = &self.selection;
        let kept = (from..=to).contains(&segment.timestamp_ns)
            && selection.keeps_connection(view.connection, &segment.src, &segment.dst);
        if kept {
            self.kept.insert(view.connection);
        }
        kept
    }

    /// Whether the event was raised by a selected segment: its connection
    /// was kept at that segment, and the segment lies in the window.
    pub(crate) fn keeps_event(&self, event: &Event) -> bool {
        let (from, to) = self.window.unwrap_or((i64::MIN, i64::MAX));
        self.kept.contains(&event.connection) && (from..=to).contains(&event.timestamp_ns)
    }

    pub(crate) fn kept_connection(&self, id: u64) -> bool {
        self.kept.contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capture::NS_PER_DAY;

    #[test]
    fn networks_hold_the_addresses_under_their_prefix() {
        let net: Network = "10.1.0.0/16".parse().unwrap();
        assert!(net.contains("10.1.200.3".parse().unwrap()));
        assert!(!net.contains("10.2.0.1".parse().unwrap()));
        assert!(!net.contains("::1".parse().unwrap()));
        let v6: Network = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains("2001:db8:1:2::1000".parse().unwrap()));
        let everything: Network = "0.0.0.0/0".parse().unwrap();
        assert!(everything.contains("192.0.2.1".parse().unwrap()));
        let one: Network = "192.0.2.1".parse().unwrap();
        assert!(one.contains("192.0.2.1".parse().unwrap()));
        assert!(!one.contains("192.0.2.2".parse().unwrap()));
        assert!("10.0.0.0/33".parse::<Network>().is_err());
        assert!("ten/8".parse::<Network>().is_err());
    }

    #[test]
    fn a_time_of_day_falls_on_the_captures_day_and_an_end_before_the_start_on_the_next() {
        let day = 20_000 * NS_PER_DAY;
        let hour = NS_PER_DAY / 24;
        let start = day + 23 * hour;
        let selection = Selection {
            between: Some((
                Instant::TimeOfDay(23 * hour + hour / 2),
                Instant::TimeOfDay(hour),
            )),
            ..Selection::default()
        };
        assert_eq!(
            selection.window_ns(start),
            (start + hour / 2, day + NS_PER_DAY + hour)
        );
        let offsets = Selection {
            between: Some((Instant::FromStart(5), Instant::Epoch(start + 9))),
            ..Selection::default()
        };
        assert_eq!(offsets.window_ns(start), (start + 5, start + 9));
    }
}
