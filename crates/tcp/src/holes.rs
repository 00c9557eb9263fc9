//! Stretches of a sender's data the capture point never saw, and what
//! became of each: filled by a resend (the original was lost before the
//! capture point), or acknowledged without ever appearing (the capture
//! itself dropped it, and nothing was lost).

use crate::seq;

/// Holes remembered per direction; past this the oldest is forgotten.
const MAX_HOLES: usize = 16;

#[derive(Debug, Default)]
pub struct Holes {
    /// Relative sequence ranges `[from, to)`, oldest first.
    ranges: Vec<(u32, u32)>,
}

impl Holes {
    /// Gives back what its queues hold beyond their contents.
    pub fn shrink_to_fit(&mut self) {
        self.ranges.shrink_to_fit();
    }

    /// The capture saw nothing of `[from, to)`.
    pub fn open(&mut self, from: u32, to: u32) {
        if !seq::before(from, to) {
            return;
        }
        if self.ranges.len() == MAX_HOLES {
            self.ranges.remove(0);
        }
        self.ranges.push((from, to));
    }

    /// Data `[from, to)` arrived: whether it filled some hole.
    pub fn fill(&mut self, from: u32, to: u32) -> bool {
        let mut filled = false;
        let mut rest = Vec::new();
        for &(start, end) in &self.ranges {
            if !overlap((start, end), (from, to)) {
                rest.push((start, end));
                continue;
            }
            filled = true;
            if seq::before(start, from) {
                rest.push((start, from));
            }
            if seq::before(to, end) {
                rest.push((to, end));
            }
        }
        self.ranges = rest;
        filled
    }

    /// Whether any of `[from, to)` lies in a hole: the capture never saw it.
    pub fn overlaps(&self, from: u32, to: u32) -> bool {
        self.ranges.iter().any(|&hole| overlap(hole, (from, to)))
    }

    /// The receiver acknowledged everything below `ack`: holes below it were
    /// never filled, so the capture dropped them. Returns how many.
    pub fn acknowledged(&mut self, ack: u32) -> u64 {
        let before = self.ranges.len();
        self.ranges.retain(|&(_, end)| seq::after(end, ack));
        (before - self.ranges.len()) as u64
    }
}

fn overlap((start, end): (u32, u32), (from, to): (u32, u32)) -> bool {
    seq::before(from, end) && seq::before(start, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resend_fills_a_hole_and_an_ack_over_one_unfilled_means_the_capture_dropped_it() {
        let mut holes = Holes::default();
        holes.open(100, 200);
        holes.open(300, 400);
        assert!(holes.overlaps(150, 250));
        assert!(!holes.overlaps(200, 300));
        assert!(holes.fill(100, 200));
        assert!(!holes.overlaps(100, 200));
        assert!(!holes.fill(100, 200));
        assert_eq!(holes.acknowledged(500), 1);
        assert!(!holes.fill(300, 400));
    }
}
