//! The frames a finding cites as evidence belong to the connection it names:
//! on the book's captures and the demo, each cited frame carries that
//! connection's two endpoints (as tshark reads them) and lies between its
//! first and last frame.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `10.0.0.1:80`, or `[2001:db8::1]:80`, as tcpwhy writes an endpoint.
fn endpoint(ip: &str, port: &str) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}

/// The innermost value of a field tshark lists once per layer (a tunnel, or
/// the packet an ICMP error quotes, adds one).
fn innermost(values: &str) -> &str {
    values.rsplit(',').next().unwrap_or_default()
}

/// Each TCP frame's two endpoints, as tshark reads them.
fn endpoints_by_frame(file: &Path) -> HashMap<u64, [String; 2]> {
    let fields = [
        "frame.number",
        "ip.src",
        "ipv6.src",
        "tcp.srcport",
        "ip.dst",
        "ipv6.dst",
        "tcp.dstport",
    ];
    let mut args = vec!["-n", "-r", file.to_str().unwrap(), "-T", "fields"];
    for field in fields {
        args.extend(["-e", field]);
    }
    let output = Command::new("tshark")
        .args(args)
        .output()
        .expect("tshark must be installed (apt-get install tshark)");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let frame = f.first()?.parse().ok()?;
            let source = innermost(if f[1].is_empty() { f[2] } else { f[1] });
            let destination = innermost(if f[4].is_empty() { f[5] } else { f[4] });
            let (source_port, destination_port) = (innermost(f[3]), innermost(f[6]));
            (!source_port.is_empty()).then(|| {
                let mut ends = [
                    endpoint(source, source_port),
                    endpoint(destination, destination_port),
                ];
                ends.sort();
                (frame, ends)
            })
        })
        .collect()
}

/// The cited frames of `finding` that are not its example connection's.
fn foreign_frames(
    finding: &Value,
    connection: &Value,
    endpoints: &HashMap<u64, [String; 2]>,
) -> Vec<u64> {
    let mut ends = [
        connection["client"].as_str().unwrap().to_string(),
        connection["server"].as_str().unwrap().to_string(),
    ];
    ends.sort();
    let span =
        connection["first_frame"].as_u64().unwrap()..=connection["last_frame"].as_u64().unwrap();
    common::frames_of(finding)
        .into_iter()
        .filter(|frame| !(span.contains(frame) && endpoints.get(frame) == Some(&ends)))
        .collect()
}

#[test]
fn every_cited_frame_belongs_to_the_connection_the_finding_names() {
    let mut wrong = Vec::new();
    let mut checked: BTreeMap<String, usize> = BTreeMap::new();
    for file in common::book_captures_and_demo() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let findings: Vec<Value> = common::usable_objects("diagnose", &file, "finding")
            .into_iter()
            .filter(|f| f["example_connection"].is_u64() && !common::frames_of(f).is_empty())
            .collect();
        if findings.is_empty() {
            continue;
        }
        let connections = common::usable_objects("connections", &file, "connection");
        let endpoints = endpoints_by_frame(&file);
        for finding in &findings {
            let id = finding["example_connection"].as_u64().unwrap();
            let connection = connections.iter().find(|c| c["id"] == id).unwrap();
            let kind = finding["kind"].as_str().unwrap().to_string();
            *checked.entry(kind.clone()).or_default() += 1;
            let foreign = foreign_frames(finding, connection, &endpoints);
            if !foreign.is_empty() {
                wrong.push(format!(
                    "{name}, {kind}: connection {id}, frames {foreign:?}"
                ));
            }
        }
    }
    for kind in [
        "application_failure",
        "connection_setup_failure",
        "packet_loss",
    ] {
        assert!(
            checked.contains_key(kind),
            "no {kind} finding checked: {checked:?}"
        );
    }
    assert!(checked.values().sum::<usize>() > 80, "only {checked:?}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
