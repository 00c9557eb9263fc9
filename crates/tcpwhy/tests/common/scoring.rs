//! The sweeps' scoring rule, as `lab/accuracy.py` applies it (lab/README.md
//! states it once for both): a directory of captures with their sweep
//! manifests, each diagnosed and judged against what was planted.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

const LOUD: [&str; 2] = ["warning", "critical"];

/// A scenario: its manifest and tcpwhy's findings on its capture, ranked.
pub struct Scored {
    pub manifest: Value,
    pub findings: Vec<Value>,
}

impl Scored {
    pub fn name(&self) -> &str {
        self.manifest["scenario"].as_str().unwrap()
    }

    pub fn cause(&self) -> &str {
        self.manifest["cause"].as_str().unwrap()
    }

    pub fn is_planted(&self) -> bool {
        !self.manifest["finding"].is_null()
    }

    pub fn loud_findings(&self) -> impl Iterator<Item = &Value> {
        self.findings.iter().filter(|f| is_loud(f))
    }

    /// Planted: the top finding names the cause, carries the figure the
    /// manifest asks for, and is a warning or critical; or, when what was
    /// planted costs no one time (`finding_loud` false), no finding is. A
    /// client's own pace (`client_delay`): the top finding names it and no
    /// finding is loud. Healthy: no finding is a warning or critical.
    pub fn is_right(&self) -> bool {
        let quiet = self.loud_findings().next().is_none();
        if !self.is_planted() {
            return quiet;
        }
        let Some(top) = self.findings.first() else {
            return false;
        };
        if self.cause() == "client_delay" {
            return quiet && OWN_PACE.iter().any(|&kind| top["kind"] == kind);
        }
        let must_be_loud = self.manifest["finding_loud"].as_bool().unwrap_or(true);
        let loud_enough = if must_be_loud { is_loud(top) } else { quiet };
        let figure = self.manifest["finding_figure"].as_str();
        top["kind"] == self.manifest["finding"]
            && loud_enough
            && figure
                .into_iter()
                .all(|key| top["figures"].get(key).is_some())
    }
}

/// The kinds that name the client's own pace: a wait before its first
/// request, pauses between its turns. No one is shown to wait for it.
const OWN_PACE: [&str; 2] = ["client_delay", "client_think"];

fn is_loud(finding: &Value) -> bool {
    LOUD.iter().any(|severity| finding["severity"] == *severity)
}

/// Every scenario of a sweep's directory, diagnosed, in the order of its manifests' names.
pub fn diagnosed(directory: &Path) -> Vec<Scored> {
    let mut manifests: Vec<_> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    manifests.sort();
    manifests
        .iter()
        .map(|path| {
            let manifest: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let capture = directory.join(manifest["capture"].as_str().unwrap());
            let findings = super::objects("diagnose", &capture, "finding");
            Scored { manifest, findings }
        })
        .collect()
}

/// The planted class whose finding kind the top finding has, `other:KIND`
/// for a kind no class is named by, `none` without findings.
fn column(scored: &Scored, class_of_kind: &BTreeMap<String, String>) -> String {
    match scored.findings.first() {
        None => "none".to_string(),
        Some(top) => {
            let kind = top["kind"].as_str().unwrap();
            class_of_kind
                .get(kind)
                .cloned()
                .unwrap_or_else(|| format!("other:{kind}"))
        }
    }
}

/// One line per planted class: the classes its top findings named, and how often.
pub fn confusion_matrix(planted: &[&Scored]) -> String {
    let class_of_kind: BTreeMap<String, String> = planted
        .iter()
        .map(|s| {
            (
                s.manifest["finding"].as_str().unwrap().to_string(),
                s.cause().to_string(),
            )
        })
        .collect();
    let mut rows: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for scored in planted {
        *rows
            .entry(scored.cause())
            .or_default()
            .entry(column(scored, &class_of_kind))
            .or_default() += 1;
    }
    rows.iter()
        .map(|(cause, columns)| {
            let cells: Vec<String> = columns.iter().map(|(c, n)| format!("{c} {n}")).collect();
            format!("  {cause}: {}", cells.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn described(finding: &Value) -> String {
    format!(
        "{} ({}): {}",
        finding["kind"].as_str().unwrap_or("?"),
        finding["severity"].as_str().unwrap_or("?"),
        finding["title"].as_str().unwrap_or("")
    )
}

/// The planted scenarios scored wrong, each with its top three findings.
pub fn misses(planted: &[&Scored]) -> String {
    planted
        .iter()
        .filter(|s| !s.is_right())
        .map(|s| {
            let top: Vec<String> = s.findings.iter().take(3).map(described).collect();
            format!(
                "  {} ({}): {}",
                s.name(),
                s.manifest["capture_point"],
                top.join("; ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every loud finding on a healthy scenario, one a line.
pub fn false_loud(scored: &[Scored]) -> Vec<String> {
    scored
        .iter()
        .filter(|s| !s.is_planted())
        .flat_map(|s| {
            s.loud_findings()
                .map(move |f| format!("  {}: {}", s.name(), described(f)))
        })
        .collect()
}
