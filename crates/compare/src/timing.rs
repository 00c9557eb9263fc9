//! Time between the two points: the clock offset between the captures and
//! the one-way delay each way.
//!
//! A packet matched at both points gives `t_B - t_A`: the offset of B's
//! clock plus the packet's delay from A to B (or minus its delay from B to
//! A). The offset alone cannot be told from the delays, so it is estimated
//! as the point where the fastest packet each way took as long as the
//! fastest the other way; when both captures share a clock (as two
//! interfaces of one host do), the delays stand as measured.

use serde::Serialize;

/// One-way delays between the points, one way, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Delay {
    pub packets: usize,
    pub min_ms: f64,
    pub p10_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    /// p90 minus p10: how much queueing between the points varies the delay.
    pub variation_ms: f64,
}

impl Delay {
    /// The statistics of `samples_ns`, None when there are none.
    pub fn of(mut samples_ns: Vec<i64>) -> Option<Delay> {
        samples_ns.sort_unstable();
        let quantile = |q: f64| {
            let position = ((samples_ns.len() - 1) as f64 * q).round() as usize;
            samples_ns[position] as f64 / 1e6
        };
        let (first, last) = (*samples_ns.first()?, *samples_ns.last()?);
        Some(Delay {
            packets: samples_ns.len(),
            min_ms: first as f64 / 1e6,
            p10_ms: quantile(0.1),
            p50_ms: quantile(0.5),
            p90_ms: quantile(0.9),
            max_ms: last as f64 / 1e6,
            variation_ms: quantile(0.9) - quantile(0.1),
        })
    }
}

/// Time from one point to the other, by each point's clock, of packets
/// matched at both, sorted by which way they went.
#[derive(Default)]
pub struct Transits {
    /// `t_B - t_A` of packets that passed A first.
    pub a_to_b: Vec<i64>,
    /// `t_A - t_B` of packets that passed B first.
    pub b_to_a: Vec<i64>,
}

impl Transits {
    /// B's clock minus A's: the offset at which the fastest packet each way
    /// took equally long; 0 when only one way has packets.
    pub fn clock_offset_ns(&self) -> i64 {
        match (self.a_to_b.iter().min(), self.b_to_a.iter().min()) {
            (Some(&forth), Some(&back)) => forth.saturating_sub(back) / 2,
            _ => 0,
        }
    }

    /// One-way delays from A to B, and from B to A, once the clock offset is taken out.
    pub fn delays(&self) -> (Option<Delay>, Option<Delay>) {
        let offset = self.clock_offset_ns();
        let forth = self.a_to_b.iter().map(|t| t - offset).collect();
        let back = self.b_to_a.iter().map(|t| t + offset).collect();
        (Delay::of(forth), Delay::of(back))
    }
}
