//! One connection with more requests than the memory budget lists: a spread
//! of them over the whole capture is listed, and every one is counted in its
//! connection's ledger, the timeline and the notes.

use pipeline::{Analysis, Note, Stages};
use synth::{Conversation, Side, Trace};

/// `turns` requests on one connection, each answered and acknowledged.
fn requests_on_one_connection(turns: u32) -> Trace {
    let mut trace = Trace::ethernet();
    let mut conn = Conversation::new("10.0.0.1:40000", "10.0.0.2:80");
    conn.handshake(&mut trace, 0.0, 1.0);
    for turn in 0..turns {
        let at = 2.0 + f64::from(turn) * 2.0;
        conn.send(&mut trace, Side::Client, at, 100);
        conn.send(&mut trace, Side::Server, at + 0.5, 500);
        conn.ack(&mut trace, Side::Client, at + 1.0);
    }
    trace
}

fn analysed(trace: &Trace, memory_bytes: Option<u64>) -> Analysis {
    let stages = Stages {
        transactions: true,
        timeline: Some(None),
        diagnose: true,
        memory_bytes,
        ..Stages::default()
    };
    pipeline::analyze_frames(trace.captured_frames(), stages)
}

fn started(analysis: &Analysis) -> u64 {
    analysis
        .ticks
        .iter()
        .map(|tick| tick.transactions_started)
        .sum()
}

#[test]
fn past_the_budget_a_spread_of_the_requests_is_listed_and_every_one_counted() {
    let trace = requests_on_one_connection(2000);
    let whole = analysed(&trace, None);
    let trimmed = analysed(&trace, Some(200_000));
    assert_eq!(whole.transactions.len(), 2000);
    assert_eq!(whole.trimmed.transactions_not_listed, 0);

    let listed = trimmed.transactions.len();
    assert!(listed < 200, "{listed} listed");
    assert_eq!(
        trimmed.trimmed.transactions_not_listed,
        2000 - listed as u64
    );
    let indices: Vec<u32> = trimmed.transactions.iter().map(|t| t.index).collect();
    assert_eq!(indices.first(), Some(&1));
    assert!(indices.last() > Some(&1900), "the spread reaches the end");

    assert_eq!(trimmed.ledgers[0].transactions, 2000);
    let total = |a: &Analysis| a.ledgers[0].ledger.total_ms();
    assert!((total(&trimmed) - total(&whole)).abs() < 1e-6);
    assert_eq!(started(&trimmed), 2000);
    assert_eq!(started(&whole), 2000);
    assert!(trimmed
        .notes()
        .iter()
        .any(|note| matches!(note, Note::MemoryBudget { .. })));

    // The findings' times count each request listed for those it stands
    // for: off by no more than a couple of the requests listed stand for.
    for (found, all) in trimmed.findings.iter().zip(&whole.findings) {
        assert_eq!(found.kind, all.kind);
        let off = (found.cost_ms - all.cost_ms).abs() / all.cost_ms.max(1.0);
        assert!(
            off < 2.0 / listed as f64,
            "{:?}: {} against {}",
            found.kind,
            found.cost_ms,
            all.cost_ms
        );
    }
    assert!(!trimmed.findings.is_empty());
}
