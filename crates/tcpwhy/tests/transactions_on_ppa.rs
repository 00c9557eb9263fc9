//! Transaction names on the book's captures against what tshark decodes:
//! HTTP methods, paths and status codes, and the TLS server name.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Captures in ../shared/captures/ppa with HTTP requests and responses.
const HTTP_CAPTURES: [&str; 11] = [
    "http_espn.pcapng",
    "http_espn_fail.pcapng",
    "http_google.pcapng",
    "http_ip4and6.pcapng",
    "http_post.pcapng",
    "ppa1e_http-client-refuse.pcap",
    "ppa1e_http-fault-post.pcap",
    "ppa1e_http.cap",
    "ppa2e_http_espn.pcap",
    "weather_broken.pcapng",
    "weather_working.pcapng",
];

fn ppa(name: &str) -> PathBuf {
    synth::shared_captures("ppa").join(name)
}

/// tshark's values of `fields` for the packets matching `filter`, one row per
/// packet. `reassembly` off makes tshark read each message's first segment,
/// as tcpwhy does, so a response the capture cut short still counts.
fn tshark(file: &Path, filter: &str, fields: &[&str], reassembly: bool) -> Vec<Vec<String>> {
    let mut command = Command::new("tshark");
    let desegment = format!(
        "tcp.desegment_tcp_streams:{}",
        if reassembly { "TRUE" } else { "FALSE" }
    );
    command
        .args(["-n", "-o", &desegment, "-r"])
        .arg(file)
        .args(["-Y", filter, "-T", "fields"]);
    for field in fields {
        command.args(["-e", field]);
    }
    let output = command.output().expect("tshark runs");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| line.split('\t').map(String::from).collect())
        .collect()
}

/// Named transactions of each connection, in order.
fn names_by_connection(file: &Path) -> BTreeMap<u64, Vec<String>> {
    let mut names: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    for t in common::objects_read_so_far("transactions", file, "transaction") {
        if let Some(name) = t["name"].as_str() {
            names
                .entry(t["connection"].as_u64().unwrap())
                .or_default()
                .push((t["index"].as_u64().unwrap(), name.to_string()));
        }
    }
    names
        .into_iter()
        .map(|(connection, mut named)| {
            named.sort();
            (
                connection,
                named.into_iter().map(|(_, name)| name).collect(),
            )
        })
        .collect()
}

/// Whether our request (`GET /a…` when the capture cut the path) is tshark's.
fn same_request(ours: &str, method: &str, uri: &str) -> bool {
    let Some(path) = ours
        .strip_prefix(method)
        .and_then(|rest| rest.strip_prefix(' '))
    else {
        return false;
    };
    match path.strip_suffix('…') {
        Some(cut) => uri.starts_with(cut),
        None => path == uri,
    }
}

#[test]
fn http_names_carry_tsharks_method_path_and_status() {
    let mut compared = 0;
    for capture in HTTP_CAPTURES {
        let file = ppa(capture);
        let ours = names_by_connection(&file);
        let fields = ["tcp.stream", "http.request.method", "http.request.uri"];
        let mut requests: BTreeMap<u64, Vec<(String, String)>> = BTreeMap::new();
        for row in tshark(&file, "http.request", &fields, true) {
            let stream = row[0].parse().unwrap();
            requests
                .entry(stream)
                .or_default()
                .push((row[1].clone(), row[2].clone()));
        }
        let mut codes: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for row in tshark(
            &file,
            // A segment sent again is the same response.
            "http.response && !tcp.analysis.retransmission \
             && !tcp.analysis.fast_retransmission && !tcp.analysis.spurious_retransmission",
            &["tcp.stream", "http.response.code"],
            false,
        ) {
            codes
                .entry(row[0].parse().unwrap())
                .or_default()
                .push(row[1].clone());
        }
        for (stream, asked) in &requests {
            let named = ours.get(stream).cloned().unwrap_or_default();
            let ours_requests: Vec<&str> = named
                .iter()
                .map(|name| name.split(" → ").next().unwrap())
                .collect();
            assert_eq!(
                ours_requests.len(),
                asked.len(),
                "{capture} stream {stream}: {named:?} vs {asked:?}"
            );
            for (name, (method, uri)) in ours_requests.iter().zip(asked) {
                assert!(
                    same_request(name, method, uri),
                    "{capture} stream {stream}: {name} vs {method} {uri}"
                );
                compared += 1;
            }
            let our_codes: Vec<&str> = named
                .iter()
                .filter_map(|name| name.split(" → ").nth(1))
                .collect();
            let their_codes = codes.get(stream).cloned().unwrap_or_default();
            assert_eq!(our_codes, their_codes, "{capture} stream {stream}");
        }
    }
    assert!(compared > 60, "only {compared} requests compared");
}

#[test]
fn a_tls_handshake_is_named_with_its_server_name_then_application_data() {
    let file = ppa("mail_receiver_server_3.pcapng");
    let hellos = tshark(
        &file,
        "tls.handshake.type == 1",
        &["tcp.stream", "tls.handshake.extensions_server_name"],
        true,
    );
    let [hello] = &hellos[..] else {
        panic!("one ClientHello expected: {hellos:?}")
    };
    let names = &names_by_connection(&file)[&hello[0].parse().unwrap()];
    // The client asked for TLS in the clear first (frame 21: `1 STARTTLS`).
    let (starttls, names) = names.split_first().unwrap();
    assert_eq!(starttls, "IMAP STARTTLS");
    assert!(
        names[0].starts_with(&format!("TLS ClientHello {} → ServerHello", hello[1])),
        "{names:?}"
    );
    assert!(
        names[1].ends_with("Finished → NewSessionTicket, ChangeCipherSpec, Finished"),
        "{names:?}"
    );
    assert!(
        names[2..].iter().all(|name| name == "TLS application data"),
        "{names:?}"
    );
}
