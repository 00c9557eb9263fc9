//! On the committed sample of the application classes (tests/sweep-apps,
//! copied out of a run of `lab/sweep.py --classes apps`: nginx, curl,
//! PostgreSQL, Redis, memcached, iperf3 and OpenSSH in the lab's
//! namespaces), tcpwhy's top finding names the planted cause, and healthy
//! real traffic gets no loud finding, at least as often as when the floors
//! below were last measured. The floors only ever rise;
//! docs/accuracy-apps.md gives the full run's figures.
//!
//! The scoring rule is the one `lab/accuracy.py` applies to a sweep;
//! lab/README.md states it once for both.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use crate::common::scoring::{self, Scored};

/// Planted scenarios of the sample whose top finding named the cause, as
/// last measured (15 of 16: loss that cost an upload little is rated
/// info): a drop below is a regression.
const TOP_1_FLOOR: f64 = 15.0 / 16.0;
/// Healthy scenarios of the sample with no loud finding, as last measured
/// (6 of 6; a paced iperf3 transfer at a full link once drew a send buffer).
const QUIET_HEALTHY_FLOOR: f64 = 1.0;

/// Every sample scenario, diagnosed once for all the tests.
fn scored() -> &'static [Scored] {
    static SCORED: OnceLock<Vec<Scored>> = OnceLock::new();
    SCORED.get_or_init(|| {
        scoring::diagnosed(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sweep-apps"))
    })
}

fn variant(scored: &Scored) -> &str {
    scored.manifest["params"]["variant"].as_str().unwrap_or("")
}

#[test]
fn the_sample_covers_every_application_class_and_healthy_variant() {
    let all = scored();
    let classes: BTreeSet<&str> = all.iter().map(Scored::cause).collect();
    assert_eq!(classes.len(), 9, "{classes:?}");
    let planted: Vec<&Scored> = all.iter().filter(|s| s.is_planted()).collect();
    for point in ["client", "server"] {
        let at_point = planted
            .iter()
            .filter(|s| s.manifest["capture_point"] == point)
            .count();
        assert!(
            at_point >= 4,
            "{at_point} planted scenarios captured at the {point}"
        );
    }
    let variants: BTreeSet<&str> = all
        .iter()
        .filter(|s| !s.is_planted())
        .map(variant)
        .collect();
    assert_eq!(variants.len(), 6, "healthy variants {variants:?}");
}

#[test]
fn the_top_finding_names_the_planted_cause() {
    let planted: Vec<&Scored> = scored().iter().filter(|s| s.is_planted()).collect();
    let right = planted.iter().filter(|s| s.is_right()).count();
    let top_1 = right as f64 / planted.len() as f64;
    println!(
        "confusion (planted class: top finding's class count):\n{}",
        scoring::confusion_matrix(&planted)
    );
    println!(
        "misses, with their top three findings:\n{}",
        scoring::misses(&planted)
    );
    assert!(
        top_1 >= TOP_1_FLOOR - 1e-9,
        "top-1 accuracy {right}/{} = {:.0}%, under the {:.0}% measured before",
        planted.len(),
        top_1 * 100.0,
        TOP_1_FLOOR * 100.0
    );
}

#[test]
fn healthy_real_traffic_gets_no_loud_finding() {
    let healthy: Vec<&Scored> = scored().iter().filter(|s| !s.is_planted()).collect();
    let quiet = healthy.iter().filter(|s| s.is_right()).count();
    println!(
        "loud findings on healthy scenarios:\n{}",
        scoring::false_loud(scored()).join("\n")
    );
    assert!(
        quiet as f64 / healthy.len() as f64 >= QUIET_HEALTHY_FLOOR - 1e-9,
        "{quiet} of {} healthy scenarios without a loud finding, under the floor of {:.0}%",
        healthy.len(),
        QUIET_HEALTHY_FLOOR * 100.0
    );
}
