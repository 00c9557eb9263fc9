//! What the handshake and segment sizes say about the path: TCP options one
//! side offered and the other never saw or never answered (a proxy or load
//! balancer strips them), an MSS clamped below what Ethernet carries, SYNs
//! answered only once retried without options, and MTU black holes (full-size
//! segments sent again and again while small ones get through).

use tcp::stack::{DEFAULT_MSS_V4, ETHERNET_MSS_V4, ETHERNET_MSS_V6, ETHERNET_MTU};
use tcp::{ConnectionSummary, DirectionSummary, SynOptions};

use super::counted;
use crate::rules::{BLACK_HOLE_RESENDS, FULL_SIZE_PERCENT, LARGE_SEGMENT_BYTES};
use crate::{Finding, FindingKind, Inputs};

/// What one handshake lacked.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Missing {
    window_scale: bool,
    sack: bool,
    timestamps: bool,
    /// The smaller MSS, where it is below what Ethernet carries.
    small_mss: Option<u16>,
    /// Answered only once the client retried its SYN without window scaling.
    answered_without_scaling: bool,
}

impl Missing {
    fn any(&self) -> bool {
        *self != Missing::default()
    }

    /// "window scaling, SACK": the options offered by one side only.
    fn options(&self) -> Vec<&'static str> {
        [
            (self.window_scale, "window scaling"),
            (self.sack, "SACK"),
            (self.timestamps, "timestamps"),
        ]
        .into_iter()
        .filter_map(|(missing, name)| missing.then_some(name))
        .collect()
    }
}

fn one_sided(client: bool, server: bool) -> bool {
    client != server
}

fn missing(c: &ConnectionSummary) -> Option<Missing> {
    let client = c.handshake.client_options?;
    let server = c.handshake.server_options?;
    let ethernet_mss = if c.server.ip.is_ipv6() {
        ETHERNET_MSS_V6
    } else {
        ETHERNET_MSS_V4
    };
    // IPv4's default for IPv6 too, whose own (1220) is as far below what Ethernet carries.
    let mss = |options: SynOptions| options.mss.unwrap_or(DEFAULT_MSS_V4);
    let smaller = mss(client).min(mss(server));
    let retry = c.handshake.retry_client_options;
    Some(Missing {
        window_scale: one_sided(client.window_scale.is_some(), server.window_scale.is_some()),
        sack: one_sided(client.sack_permitted, server.sack_permitted),
        timestamps: one_sided(client.timestamps, server.timestamps),
        small_mss: (smaller < ethernet_mss).then_some(smaller),
        answered_without_scaling: client.window_scale.is_some()
            && retry.is_some_and(|retry| retry.window_scale.is_none()),
    })
}

pub fn tcp_options(inputs: &Inputs) -> Option<Finding> {
    let affected: Vec<(&ConnectionSummary, Missing)> = inputs
        .connections
        .iter()
        .filter_map(|c| Some((c, missing(c)?)))
        .filter(|(_, missing)| missing.any())
        .collect();
    let &(example, first) = affected.first()?;
    let count = |pick: fn(&Missing) -> bool| affected.iter().filter(|(_, m)| pick(m)).count();
    let mut lacks: Vec<String> = [
        (count(|m| m.window_scale), "window scaling"),
        (count(|m| m.sack), "SACK"),
        (count(|m| m.timestamps), "timestamps"),
    ]
    .into_iter()
    .filter(|&(n, _)| n > 0)
    .map(|(n, name)| format!("{name} from one side only on {n}"))
    .collect();
    let small: Vec<u16> = affected.iter().filter_map(|(_, m)| m.small_mss).collect();
    if let Some(&least) = small.iter().min() {
        lacks.push(format!(
            "an MSS down to {least} (Ethernet carries {ETHERNET_MSS_V4}) on {}",
            small.len()
        ));
    }
    let retried = count(|m| m.answered_without_scaling);
    let mut found = Finding::new(
        FindingKind::TcpOptions,
        &format!(
            "{} of {} handshakes came out short of what both ends and Ethernet allow: {}",
            affected.len(),
            inputs.connections.len(),
            lacks.join(", ")
        ),
        0.0,
    );
    found.connections = affected.len() as u64;
    found.example_connection = Some(example.id);
    found.wireshark_filter = format!("tcp.stream == {} && tcp.flags.syn == 1", example.id);
    found.explanation = explanation(example, &first, retried);
    found.fix = format!(
        "Find the box that rewrites SYNs (firewall, load balancer, proxy, VPN concentrator) by \
         capturing on both sides of it; let it pass window scaling, SACK and timestamps, and \
         clamp the MSS only as far as the path's MTU needs ({ETHERNET_MSS_V4} on Ethernet, less \
         only for tunnels)."
    );
    found.what_if = format!(
        "With window scaling a receiver can offer more than 64 kB; with SACK a loss costs one \
         round trip however many segments it hits; with a full-size MSS each packet carries up \
         to {:.1} times the data of a {DEFAULT_MSS_V4}-byte one.",
        f64::from(ETHERNET_MSS_V4) / f64::from(DEFAULT_MSS_V4)
    );
    found.suspected = Some(
        "what a missing option costs shows in the window and loss findings; a peer may also \
         simply not support it"
            .into(),
    );
    found.figures.insert("connections", affected.len() as f64);
    if let Some(&least) = small.iter().min() {
        found.figures.insert("smallest_mss", f64::from(least));
    }
    Some(found)
}

fn explanation(example: &ConnectionSummary, missing: &Missing, retried: usize) -> String {
    let options = missing.options();
    let mut text = format!(
        "On connection {} ({} → {})",
        example.id, example.client, example.server
    );
    if options.is_empty() {
        text.push_str(" both SYNs carried the same options");
    } else {
        text.push_str(&format!(
            " {} came from one side only, so the connection runs without {}",
            options.join(", "),
            if options.len() == 1 { "it" } else { "them" }
        ));
    }
    if let Some(mss) = missing.small_mss {
        text.push_str(&format!(
            "; the MSS is {mss}, below the {ETHERNET_MSS_V4} a {ETHERNET_MTU}-byte Ethernet MTU \
             carries (a middlebox clamping it, a tunnel, or a SYN without the option: \
             {DEFAULT_MSS_V4})"
        ));
    }
    text.push_str(
        ". A proxy, firewall or load balancer that rewrites SYNs often strips options the \
         two ends would both have used.",
    );
    if retried > 0 {
        text.push_str(&format!(
            " {retried} connections were answered only after the client sent its SYN again \
             without window scaling: something on the path drops SYNs that carry it."
        ));
    }
    text
}

/// Full-size segments sent again and again by timeout while smaller data
/// got through: a hop with a smaller MTU drops them and no ICMP
/// "fragmentation needed" reaches the sender.
/// Whether a full-size segment of `c` was sent again and again by timeout
/// without an ACK while smaller packets got through: a hop that drops
/// packets larger than its MTU.
pub fn black_holed(c: &ConnectionSummary) -> bool {
    [
        (&c.client_to_server, &c.server_to_client),
        (&c.server_to_client, &c.client_to_server),
    ]
    .iter()
    .any(|(data, peer)| stuck_behind_mtu(c, data, peer))
}

fn stuck_behind_mtu(
    c: &ConnectionSummary,
    data: &DirectionSummary,
    peer: &DirectionSummary,
) -> bool {
    let small_got_through =
        c.handshake.ack_ns.is_some() && (data.rtt.samples > 0 || peer.payload_bytes > 0);
    // A hole never lets the segment through: one acknowledged in the end
    // was lost for a while, not too large for the path.
    let never_acknowledged = data.unacknowledged_at_end > 0;
    data.most_resends >= BLACK_HOLE_RESENDS
        && never_acknowledged
        && data.most_resent_bytes >= LARGE_SEGMENT_BYTES
        && data.most_resent_bytes * 100 >= data.largest_segment * FULL_SIZE_PERCENT
        && small_got_through
}

pub fn mtu_black_hole(inputs: &Inputs) -> Option<Finding> {
    let stuck: Vec<(&ConnectionSummary, &'static str, u64, u64, f64)> = inputs
        .connections
        .iter()
        .flat_map(|c| {
            [
                (c, "client", &c.client_to_server, &c.server_to_client),
                (c, "server", &c.server_to_client, &c.client_to_server),
            ]
        })
        .filter(|(c, _, data, peer)| stuck_behind_mtu(c, data, peer))
        .map(|(c, side, data, _)| {
            (
                c,
                side,
                data.most_resent_bytes,
                data.most_resends,
                data.max_idle_ms,
            )
        })
        .collect();
    let &(example, side, bytes, resends, _) = stuck.iter().max_by_key(|s| s.3)?;
    let cost: f64 = stuck.iter().map(|s| s.4).sum();
    let mut found = Finding::new(
        FindingKind::MtuBlackHole,
        &format!(
            "MTU black hole suspected: {} sent a {bytes}-byte segment {} times \
             without an ACK while smaller packets got through",
            counted(stuck.len(), "connection"),
            resends + 1
        ),
        cost,
    );
    found.connections = stuck.len() as u64;
    found.example_connection = Some(example.id);
    found.wireshark_filter = format!(
        "tcp.stream == {} && (tcp.analysis.retransmission || icmp.type == 3 || icmpv6.type == 2)",
        example.id
    );
    found.explanation = format!(
        "The {side} of connection {} sent the same {bytes}-byte segment again {resends} times, \
         each after a longer timeout, and it was never acknowledged, though the handshake and \
         smaller segments went through: a hop with a smaller MTU drops full-size packets, and \
         the ICMP \"fragmentation needed\" (\"packet too big\") that should shrink them never \
         reaches the sender.",
        example.id
    );
    found.fix = "Let ICMP type 3 code 4 (IPv6: type 2) through the firewalls on the path, or \
        clamp the MSS at the tunnel or VPN edge to its MTU (iptables TCPMSS --clamp-mss-to-pmtu, \
        nftables 'tcp option maxseg size set rt mtu'); net.ipv4.tcp_mtu_probing=1 lets Linux \
        senders find the size themselves."
        .into();
    found.what_if = format!(
        "With segments the path carries, the {:.1} s these connections stood still would go.",
        cost / 1e3
    );
    found.suspected = Some(
        "inferred from full-size segments resent without an ACK while smaller ones got \
         through; a capture on the far side of the suspect hop would confirm it"
            .into(),
    );
    found.figures.insert("resent_segment_bytes", bytes as f64);
    found.figures.insert("resends", resends as f64);
    Some(found)
}
