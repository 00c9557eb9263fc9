//! tcpwhy as a network engineer uses it, on real captures: a selection keeps
//! the capture's connection ids, one connection reads in the terminal as the
//! events do, a capture cut off inside its last record still gives its
//! results, failed requests are named, flags go anywhere on the line, and
//! the text is laid out for people.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn tcpwhy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .output()
        .unwrap()
}

fn ppa(name: &str) -> PathBuf {
    synth::shared_captures("ppa").join(name)
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// The JSON lines of a run that may end in any exit code.
fn lines_of(output: &Output) -> Vec<Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["type"] == kind).collect()
}

/// tshark's values of one field over the packets a display filter matches.
/// Without reassembly tshark names a message at its first segment, as tcpwhy does.
fn tshark(file: &Path, filter: &str, field: &str, decode_as: &[&str]) -> Vec<String> {
    let mut command = Command::new("tshark");
    command
        .args(["-n", "-o", "tcp.desegment_tcp_streams:FALSE", "-r"])
        .arg(file)
        .args(["-Y", filter]);
    for rule in decode_as {
        command.args(["-d", rule]);
    }
    let output = command
        .args(["-T", "fields", "-e", field])
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn selecting_by_host_port_network_or_id_keeps_the_captures_connection_ids() {
    let capture = ppa("http_espn.pcapng");
    let all = common::objects("connections", &capture, "connection");
    let server_ip = |c: &Value| {
        let server = c["server"].as_str().unwrap();
        server[..server.rfind(':').unwrap()].to_string()
    };
    let host = server_ip(&all[5]);
    let by_host = common::json_lines("connections", &["--host", &host], &capture);
    let by_host: Vec<&Value> = of_type(&by_host, "connection");
    let expected: Vec<&Value> = all.iter().filter(|c| server_ip(c) == host).collect();
    assert!(expected.len() > 1 && expected.len() < all.len());
    assert_eq!(by_host, expected, "the same connections, ids and figures");

    let by_id = common::json_lines("connections", &["--connection", "5,7"], &capture);
    assert_eq!(of_type(&by_id, "connection"), [&all[5], &all[7]]);

    let network = format!("{host}/32");
    let by_net = common::json_lines(
        "connections",
        &["--net", &network, "--port", "80"],
        &capture,
    );
    assert_eq!(of_type(&by_net, "connection"), expected);
    let nothing = common::json_lines("connections", &["--host", &host, "--port", "443"], &capture);
    assert!(of_type(&nothing, "connection").is_empty());
}

#[test]
fn a_time_window_keeps_the_events_and_connections_inside_it() {
    let capture = common::lab_file("loss_bursts_downstream.pcap");
    let all = common::objects("events", &capture, "event");
    let start = common::objects("connections", &capture, "connection")
        .iter()
        .map(|c| c["first_ns"].as_i64().unwrap())
        .min()
        .unwrap();
    let at = |event: &Value| event["timestamp_ns"].as_i64().unwrap();
    let (from, to) = (at(&all[all.len() / 4]), at(&all[all.len() * 3 / 4]));
    let window = [format!("+{}ns", from - start), format!("+{}ns", to - start)];
    let args = ["--between", &window[0], &window[1]];
    let lines = common::json_lines("events", &args, &capture);
    let expected: Vec<&Value> = all
        .iter()
        .filter(|e| (from..=to).contains(&at(e)))
        .collect();
    assert!(expected.len() > 1 && expected.len() < all.len());
    assert_eq!(of_type(&lines, "event"), expected);
    let end = of_type(&lines, "end")[0];
    assert!(end["selected_segments"].as_u64() < end["tcp_segments"].as_u64());
}

#[test]
fn one_connection_without_a_handshake_reads_seq_and_ack_as_the_events_do() {
    let capture = ppa("tcp_dupack.pcapng");
    let events = common::objects("events", &capture, "event");
    let lines = common::json_lines("connection", &["0"], &capture);
    let packets = of_type(&lines, "packet");
    assert_eq!(packets.len(), 9);
    for event in &events {
        let packet = packets
            .iter()
            .find(|p| p["frame"] == event["frame"])
            .unwrap();
        for field in ["seq", "ack", "len", "window", "direction"] {
            assert_eq!(packet[field], event[field], "frame {}", event["frame"]);
        }
        assert!(packet["analysis"]
            .as_array()
            .unwrap()
            .contains(&event["kind"]));
    }
    let frame_8 = packets.iter().find(|p| p["frame"] == 8).unwrap();
    assert_eq!(
        (frame_8["seq"].as_u64(), frame_8["len"].as_u64()),
        (Some(1), Some(1368))
    );
    assert_eq!(of_type(&lines, "event").len(), events.len());

    let table = stdout(&tcpwhy(&["connection", "0", path(&capture)]));
    assert!(table.contains("not captured: the capture starts mid-connection"));
    let ladder_line = table
        .lines()
        .skip_while(|line| !line.starts_with("Packets"))
        .find(|line| line.trim_start().starts_with("8 "))
        .unwrap();
    assert!(ladder_line.contains("fast_retransmission"), "{ladder_line}");
    assert!(
        ladder_line.contains("<─"),
        "the server's packet points left: {ladder_line}"
    );
}

#[test]
fn one_connection_with_a_handshake_shows_it_and_unknown_ids_are_refused() {
    let capture = ppa("http_ip4and6.pcapng");
    let table = stdout(&tcpwhy(&["connection", "1", path(&capture), "--quiet"]));
    assert!(table.starts_with("Connection 1: [2001:db8:1:2::1002]:35023 → [2001:db8:1:2::1000]:80"));
    for step in [
        "SYN",
        "SYN-ACK",
        "ACK",
        "client offers MSS",
        "Where the time went (1 transaction)",
    ] {
        assert!(table.contains(step), "{step} in\n{table}");
    }
    let first = table
        .lines()
        .skip_while(|line| !line.starts_with("Packets"))
        .nth(2)
        .unwrap();
    assert!(first.contains("SYN ─"), "the client's SYN first: {first}");
    let missing = tcpwhy(&["connection", "9", path(&capture)]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("connection 9 is not in"));
}

#[test]
fn a_capture_cut_off_inside_its_last_record_gives_its_results_and_exit_3() {
    // tshark: 25 whole frames, then 11 bytes of a record header.
    let capture = ppa("ppa1e_http-fault-post.pcap");
    let output = tcpwhy(&["transactions", "--format", "json", path(&capture)]);
    assert_eq!(output.status.code(), Some(3));
    let lines = lines_of(&output);
    assert_eq!(of_type(&lines, "transaction").len(), 2);
    let end = of_type(&lines, "end")[0];
    assert_eq!(
        (end["frames"].as_u64(), end["partial"].as_bool()),
        (Some(25), Some(true))
    );
    assert_eq!(end["cut_short"], true);
    let warning = stderr(&output);
    assert_eq!(warning.lines().count(), 1, "{warning}");
    assert!(warning.starts_with("tcpwhy: warning: ") && warning.contains("at byte 8877"));

    let dir = std::env::temp_dir().join(format!("tcpwhy-usage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(&capture).unwrap();
    let mut damaged = bytes.clone();
    // The first record's captured length, far beyond any snaplen: bad data, not a cut.
    damaged[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
    let bad = dir.join("bad.pcap");
    std::fs::write(&bad, damaged).unwrap();
    let output = tcpwhy(&["connections", path(&bad)]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("implausible record length"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_http_error_status_is_a_failure_named_with_its_request_and_frames() {
    let capture = ppa("ppa1e_http-fault-post.pcap");
    let output = tcpwhy(&["diagnose", "--format", "json", path(&capture)]);
    let lines = lines_of(&output);
    let findings = of_type(&lines, "finding");
    let failure = findings[0];
    assert_eq!(failure["kind"], "application_failure");
    let title = failure["title"].as_str().unwrap();
    for phrase in [
        "2 of 2 requests failed",
        "HTTP 403 ×2",
        "POST /flashmail.asp",
    ] {
        assert!(title.contains(phrase), "{title}");
    }
    let frames: Vec<String> = failure["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    // The two 403s came on two connections: the evidence is the one named.
    let named = failure["example_connection"].as_u64().unwrap();
    let filter = format!("http.response.code >= 400 && tcp.stream == {named}");
    assert_eq!(frames, tshark(&capture, &filter, "frame.number", &[]));
    assert_eq!(frames.len(), 1);
    let transactions = common::objects_read_so_far("transactions", &capture, "transaction");
    for t in transactions {
        assert_eq!(t["failure"]["kind"], "http_status");
        assert_eq!(t["failure"]["code"], 403);
    }
}

#[test]
fn tls_alerts_and_resets_are_failures_named_as_tshark_names_them() {
    let capture = common::lab_file("app_failures.pcap");
    let expect = &common::manifest("app_failures")["expect"];
    let finding = common::objects("diagnose", &capture, "finding")
        .into_iter()
        .find(|f| f["kind"] == "application_failure")
        .unwrap();
    let figures = &finding["figures"];
    let http_errors = expect["http_errors"].as_array().unwrap().len();
    let alerts = expect["tls_alerts"].as_array().unwrap();
    assert_eq!(figures["http_errors"], http_errors as f64);
    assert_eq!(figures["tls_alerts"], alerts.len() as f64);
    assert_eq!(
        figures["server_resets"],
        expect["server_resets"].as_f64().unwrap()
    );
    let title = finding["title"].as_str().unwrap();
    for alert in alerts {
        assert!(title.contains(alert.as_str().unwrap()), "{title}");
    }
    let decode_as = ["tcp.port==8081,tls", "tcp.port==8082,tls"];
    let named = finding["example_connection"].as_u64().unwrap();
    let mut frames = tshark(
        &capture,
        &format!("(http.response.code >= 400 || tls.alert_message) && tcp.stream == {named}"),
        "frame.number",
        &decode_as,
    );
    frames.extend(tshark(
        &capture,
        &format!("tcp.flags.reset == 1 && tcp.srcport == 8080 && tcp.stream == {named}"),
        "frame.number",
        &[],
    ));
    frames.sort_by_key(|frame| frame.parse::<u64>().unwrap());
    let found: Vec<String> = finding["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(found, frames);
}

#[test]
fn flags_go_anywhere_a_mistyped_command_is_named_and_durations_need_units() {
    let capture = common::lab_file("server_think_time.pcap");
    let first = tcpwhy(&["-q", "diagnose", path(&capture)]);
    let last = tcpwhy(&["diagnose", path(&capture), "-q"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(stdout(&first), stdout(&last));
    let json_first = tcpwhy(&["--format", "json", "-q", "connections", path(&capture)]);
    assert!(stdout(&json_first).starts_with("{\"type\":\"connection\""));

    let typo = tcpwhy(&["conections", path(&capture)]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        stderr(&typo).contains("did you mean 'connections'"),
        "{}",
        stderr(&typo)
    );

    let bare = tcpwhy(&["timeline", "--tick", "7", path(&capture)]);
    assert_eq!(bare.status.code(), Some(2));
    assert!(stderr(&bare).contains("needs a unit"), "{}", stderr(&bare));
    let report = tcpwhy(&["report", path(&capture), "-o", "x.html", "--format", "json"]);
    assert_eq!(report.status.code(), Some(2));
}

#[test]
fn a_capture_without_tcp_says_what_it_holds() {
    for name in ["dns.pcap", "nowebaccess1.pcapng"] {
        let capture = ppa(name);
        let count = |filter: &str| tshark(&capture, filter, "frame.number", &[]).len() as u64;
        let output = tcpwhy(&["diagnose", "--format", "json", path(&capture)]);
        let end = of_type(&lines_of(&output), "end")[0].clone();
        assert_eq!(end["tcp_segments"], 0);
        assert_eq!(end["other_traffic"]["udp"].as_u64(), Some(count("udp")));
        assert_eq!(end["other_traffic"]["arp"].as_u64(), Some(count("arp")));
        let table = stdout(&tcpwhy(&["diagnose", path(&capture)]));
        assert!(table.contains("No finding."), "{table}");
        let udp = format!("they hold {} UDP", count("udp"));
        assert!(table.contains(&udp), "{table}");
        // Said once, in the table and on stderr alike.
        let no_tcp = "held a TCP segment";
        assert_eq!(table.matches(no_tcp).count(), 1, "{table}");
        let csv = tcpwhy(&["diagnose", "--format", "csv", path(&capture)]);
        assert_eq!(stderr(&csv).matches(no_tcp).count(), 1, "{}", stderr(&csv));
    }
}

#[test]
fn errors_of_the_system_name_no_offset_and_an_empty_file_is_called_empty() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-words-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let directory = tcpwhy(&["diagnose", path(&dir)]);
    assert_eq!(directory.status.code(), Some(2));
    assert!(
        stderr(&directory).contains("Is a directory"),
        "{}",
        stderr(&directory)
    );
    assert!(
        !stderr(&directory).contains("at byte"),
        "{}",
        stderr(&directory)
    );
    let empty = dir.join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    let output = tcpwhy(&["diagnose", path(&empty)]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!("tcpwhy: {}: empty file\n", path(&empty))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn report_and_export_say_in_one_line_what_they_wrote() {
    let dir = std::env::temp_dir().join(format!("tcpwhy-wrote-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
    let report = dir.join("report.html");
    let output = tcpwhy(&["report", path(&demo), "-o", path(&report), "--quiet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let size = std::fs::metadata(&report).unwrap().len() as f64 / 1e3;
    assert_eq!(
        stderr(&output),
        format!("tcpwhy: wrote {} ({size:.1} kB)\n", path(&report))
    );
    let tables = dir.join("tables");
    let output = tcpwhy(&["export", path(&demo), "-o", path(&tables), "--quiet"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with(&format!("tcpwhy: wrote {} (", path(&tables)))
            && said.ends_with(" in 6 files)\n"),
        "{said}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where `word` starts in each line of `lines` that holds it.
fn columns_of(lines: &str, word: &str) -> Vec<usize> {
    lines
        .lines()
        .filter_map(|line| line.find(word).map(|at| line[..at].chars().count()))
        .collect()
}

#[test]
fn tables_align_whatever_the_address_and_read_time_one_way() {
    let capture = ppa("http_ip4and6.pcapng");
    let table = stdout(&tcpwhy(&["connections", path(&capture)]));
    let state = columns_of(&table, "SF");
    assert_eq!(state.len(), 2);
    assert_eq!(state[0], state[1], "IPv4 and IPv6 rows align:\n{table}");
    assert_eq!(columns_of(&table, "state")[0], state[0]);

    let time_of_day = |text: &str| {
        text.split_whitespace().any(|word| {
            let bytes = word.as_bytes();
            word.len() == 15 && bytes[2] == b':' && bytes[5] == b':' && bytes[8] == b'.'
        })
    };
    let offset = |text: &str| text.split_whitespace().any(|word| word.starts_with('+'));
    for command in ["connections", "events", "timeline"] {
        let capture = common::lab_file("loss_bursts_downstream.pcap");
        let table = stdout(&tcpwhy(&[command, path(&capture)]));
        let row = table.lines().nth(1).unwrap();
        assert!(time_of_day(row) && offset(row), "{command}: {row}");
        let epoch = stdout(&tcpwhy(&[command, "--epoch", path(&capture)]));
        let row = epoch.lines().nth(1).unwrap();
        assert!(
            !time_of_day(row) && row.contains("1795") && offset(row),
            "{command}: {row}"
        );
    }
}

/// Whether `line` says `1 NOUN` of a plural noun (and not `11 NOUN`).
fn counts_one_as_many(line: &str, noun: &str) -> bool {
    let wrong = format!("1 {noun}");
    line.match_indices(&wrong)
        .any(|(at, _)| !line[..at].ends_with(|c: char| c.is_ascii_digit() || c == '.'))
}

#[test]
fn findings_never_read_negative_zero_empty_fields_or_wrong_plurals() {
    let mut captures: Vec<PathBuf> = std::fs::read_dir(synth::shared_captures("ppa"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    captures.extend(
        std::fs::read_dir(common::lab_file(""))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "pcap")),
    );
    let mut bad = Vec::new();
    for capture in &captures {
        let text = stdout(&tcpwhy(&["diagnose", path(capture)]));
        for line in text.lines() {
            let singular_plural = ["connections", "transactions", "requests", "frames"]
                .iter()
                .any(|noun| counts_one_as_many(line, noun));
            let empty_field = line.trim_end().ends_with(':');
            if line.contains("-0.0") || singular_plural || empty_field {
                bad.push(format!("{}: {line}", capture.display()));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn paragraphs_wrap_to_the_terminal_and_stay_whole_when_piped() {
    let capture = common::lab_file("zero_window.pcap");
    let command = format!(
        "stty rows 40 cols 72; NO_COLOR=1 {} diagnose {}",
        env!("CARGO_BIN_EXE_tcpwhy"),
        path(&capture)
    );
    let on_terminal = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs a command on a terminal");
    let text = stdout(&on_terminal);
    let prose: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("Wireshark:"))
        .collect();
    assert!(prose.len() > 10, "{text}");
    for line in &prose {
        assert!(line.trim_end().chars().count() <= 72, "{line}");
    }
    let piped = stdout(&tcpwhy(&["diagnose", path(&capture)]));
    let why = piped
        .lines()
        .find(|line| line.starts_with("   why: "))
        .unwrap();
    assert!(why.chars().count() > 72, "one line when piped: {why}");
}

/// The commands `tcpwhy --help` lists.
fn commands() -> Vec<String> {
    let help = stdout(&tcpwhy(&["--help"]));
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|&command| command != "help")
        .map(String::from)
        .collect()
}

#[test]
fn completions_for_each_shell_name_every_command_and_bash_parses_its_own() {
    let commands = commands();
    assert!(commands.len() >= 12, "{commands:?}");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = tcpwhy(&["completions", shell]);
        assert!(output.status.success(), "{shell}: {}", stderr(&output));
        let script = stdout(&output);
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell} lacks {command}");
        }
    }
    let bash = Command::new("bash")
        .args(["-n", "-c"])
        .arg(stdout(&tcpwhy(&["completions", "bash"])))
        .output()
        .unwrap();
    assert!(
        bash.status.success(),
        "{}",
        String::from_utf8_lossy(&bash.stderr)
    );
}

#[test]
fn the_manual_has_a_page_for_tcpwhy_and_one_for_each_command() {
    let page = stdout(&tcpwhy(&["man"]));
    assert!(page.contains(".TH tcpwhy 1"), "{page}");
    for command in commands() {
        assert!(
            page.contains(&format!("tcpwhy\\-{command}(1)")),
            "{command}"
        );
        let own = stdout(&tcpwhy(&["man", &command]));
        assert!(own.contains(&format!(".TH tcpwhy-{command} 1")), "{own}");
    }
    let diagnose = stdout(&tcpwhy(&["man", "diagnose"]));
    assert!(diagnose.contains("\\-\\-fail\\-on"), "{diagnose}");
    let unknown = tcpwhy(&["man", "nosuch"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("\"nosuch\""),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn color_is_written_when_asked_whatever_the_output_and_never_when_refused() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
    let escapes = |args: &[&str], no_color: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tcpwhy"));
        command.args(args).arg(&demo);
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        stdout(&command.output().unwrap())
            .matches("\u{1b}[")
            .count()
    };
    for table in ["diagnose", "connections"] {
        assert_eq!(escapes(&[table], false), 0, "{table}, piped");
        assert_eq!(escapes(&[table, "--color", "never"], false), 0, "{table}");
        assert!(escapes(&[table, "--color", "always"], false) > 0, "{table}");
        assert!(escapes(&[table, "--color", "always"], true) > 0, "{table}");
    }
}

/// The CSV of `command` on the demo capture, with `words`: its header and rows.
fn csv_of(command: &str, words: &[&str]) -> Vec<Vec<String>> {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
    let mut args = vec![command, path(&demo), "--format", "csv"];
    args.extend(words);
    let output = tcpwhy(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    stdout(&output)
        .lines()
        .map(|line| line.split(',').map(String::from).collect())
        .collect()
}

#[test]
fn fields_keep_the_columns_named_in_their_order_and_groups_by_their_path() {
    let whole = csv_of("connections", &[]);
    let chosen = csv_of(
        "connections",
        &[
            "--fields",
            "state,id",
            "--fields",
            "client_to_server.retransmissions",
        ],
    );
    let header = &chosen[0];
    assert_eq!(header[..2], ["state", "id"]);
    let group: Vec<&String> = whole[0]
        .iter()
        .filter(|name| name.starts_with("client_to_server.retransmissions."))
        .collect();
    assert!(group.len() > 1, "{group:?}");
    assert_eq!(header[2..].iter().collect::<Vec<_>>(), group);
    assert_eq!(chosen.len(), whole.len());
    let at = |name: &str| whole[0].iter().position(|n| n == name).unwrap();
    for (row, full) in chosen.iter().zip(&whole).skip(1) {
        for (cell, name) in row.iter().zip(header) {
            assert_eq!(cell, &full[at(name)], "{name}");
        }
    }
}

#[test]
fn fields_in_json_are_the_chosen_ones_by_their_dotted_names() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
    let output = tcpwhy(&[
        "transactions",
        path(&demo),
        "--format",
        "json",
        "--fields",
        "connection,ledger.transfer",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let lines = lines_of(&output);
    let transactions = of_type(&lines, "transaction");
    assert!(!transactions.is_empty());
    for t in &transactions {
        let mut keys: Vec<&String> = t.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["connection", "ledger.transfer", "type"], "{t}");
    }
    assert_eq!(
        lines.len(),
        transactions.len() + 1,
        "the rows, then the end"
    );
    assert_eq!(of_type(&lines, "end").len(), 1);
}

#[test]
fn a_field_no_table_has_or_fields_of_a_text_table_are_refused() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo.pcap");
    let unknown = tcpwhy(&[
        "events",
        path(&demo),
        "--format",
        "csv",
        "--fields",
        "nosuch",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("\"nosuch\""),
        "{}",
        stderr(&unknown)
    );
    assert!(
        stderr(&unknown).contains("timestamp_ns"),
        "{}",
        stderr(&unknown)
    );
    let text = tcpwhy(&["diagnose", path(&demo), "--fields", "kind"]);
    assert_eq!(text.status.code(), Some(2));
    assert!(stderr(&text).contains("--format"), "{}", stderr(&text));
}
