//! Every Wireshark filter tcpwhy prints for the book's captures and the demo
//! is one tshark takes, and it selects the frames its finding cites. The
//! terminal and the HTML report print the same filters as the JSON.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn tshark(file: &Path, args: &[&str]) -> std::process::Output {
    Command::new("tshark")
        .args(["-n", "-r"])
        .arg(file)
        .args(args)
        .output()
        .expect("tshark must be installed (apt-get install tshark)")
}

/// The frames `filter` selects, or tshark's complaint. A capture cut inside
/// a record makes tshark exit 2 after printing what it read.
fn selected_by(file: &Path, filter: &str) -> Result<BTreeSet<u64>, String> {
    let output = tshark(file, &["-Y", filter, "-T", "fields", "-e", "frame.number"]);
    let complaint = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() && !complaint.contains("cut short in the middle of a packet") {
        return Err(complaint.trim().to_string());
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect())
}

/// For each segment of a message that spans several, the frame Wireshark
/// shows the whole message in (and filters on its fields there).
fn reassembled_in(file: &Path) -> BTreeMap<u64, u64> {
    let output = tshark(
        file,
        &[
            "-2",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "tcp.reassembled_in",
        ],
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let (frame, shown_in) = line.split_once('\t')?;
            Some((frame.parse().ok()?, shown_in.trim().parse().ok()?))
        })
        .collect()
}

/// The filters the terminal prints, one per finding that has one.
fn terminal_filters(file: &Path) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["diagnose", "--quiet"])
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("Wireshark: "))
        .map(str::to_string)
        .collect()
}

/// The filters the HTML report carries, one per finding that has one.
fn report_filters(file: &Path) -> Vec<String> {
    let html = std::env::temp_dir().join(format!("filters-{}.html", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["report", "--quiet", "-o"])
        .arg(&html)
        .arg(file)
        .output()
        .unwrap();
    assert!(matches!(output.status.code(), Some(0 | 3)), "{output:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    std::fs::remove_file(&html).unwrap();
    let start = text.find("id=\"report-data\">").unwrap() + "id=\"report-data\">".len();
    let end = start + text[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&text[start..end]).unwrap();
    filters_of(data["findings"].as_array().unwrap())
}

fn filters_of(findings: &[Value]) -> Vec<String> {
    findings
        .iter()
        .filter_map(|f| f["wireshark_filter"].as_str())
        .filter(|filter| !filter.is_empty())
        .map(str::to_string)
        .collect()
}

/// What is wrong with one finding's filter, if anything.
fn check(file: &Path, finding: &Value, shown_in: &BTreeMap<u64, u64>) -> Option<String> {
    let filter = finding["wireshark_filter"].as_str().unwrap();
    let selected = match selected_by(file, filter) {
        Ok(selected) => selected,
        Err(complaint) => return Some(format!("tshark rejects {filter:?}: {complaint}")),
    };
    if selected.is_empty() {
        return Some(format!("{filter:?} selects no frame"));
    }
    let missed: Vec<u64> = common::frames_of(finding)
        .into_iter()
        .filter(|frame| {
            let whole_message = shown_in.get(frame).unwrap_or(frame);
            !selected.contains(frame) && !selected.contains(whole_message)
        })
        .collect();
    (!missed.is_empty()).then(|| format!("{filter:?} leaves out the frames cited {missed:?}"))
}

#[test]
fn every_printed_filter_parses_in_tshark_and_selects_the_frames_cited() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in common::book_captures_and_demo() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let findings = common::usable_objects("diagnose", &file, "finding");
        let filters = filters_of(&findings);
        if filters.is_empty() {
            continue;
        }
        assert_eq!(terminal_filters(&file), filters, "{name}: the terminal");
        assert_eq!(report_filters(&file), filters, "{name}: the report");
        let shown_in = reassembled_in(&file);
        for finding in findings.iter().filter(|f| f["wireshark_filter"] != "") {
            checked += 1;
            if let Some(problem) = check(&file, finding, &shown_in) {
                wrong.push(format!("{name}, {}: {problem}", finding["kind"]));
            }
        }
    }
    assert!(checked > 100, "only {checked} filters checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
