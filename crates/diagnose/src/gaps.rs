//! The gaps between event times (ns) as events come and go, with the
//! median and the extremes a steady period is judged by: each change in
//! O(log n), so a pattern test can try every set of events in one sweep.

use std::collections::BTreeMap;

/// A multiset of gaps split at their median: every gap in `lower` is at
/// most every gap in `upper`, which holds the upper half and the median.
#[derive(Default)]
pub struct Gaps {
    lower: Counted,
    upper: Counted,
}

impl Gaps {
    pub fn insert(&mut self, gap: i64) {
        if self.upper.first().is_some_and(|least| gap >= least) {
            self.upper.insert(gap);
        } else {
            self.lower.insert(gap);
        }
        self.balance();
    }

    /// Takes out one gap of this length; it must be there.
    pub fn remove(&mut self, gap: i64) {
        if !self.upper.remove(gap) {
            let removed = self.lower.remove(gap);
            debug_assert!(removed, "a gap removed that was never inserted");
        }
        self.balance();
    }

    pub fn len(&self) -> usize {
        self.lower.len + self.upper.len
    }

    /// The gap at index len / 2 in sorted order, as [`crate::median`] takes it.
    pub fn median(&self) -> Option<i64> {
        self.upper.first()
    }

    pub fn least(&self) -> Option<i64> {
        self.lower.first().or(self.upper.first())
    }

    pub fn most(&self) -> Option<i64> {
        self.upper.last()
    }

    /// Keeps `upper` at half the gaps, rounded up.
    fn balance(&mut self) {
        while self.upper.len > self.lower.len + 1 {
            let least = self.upper.first().expect("upper holds gaps");
            self.upper.remove(least);
            self.lower.insert(least);
        }
        while self.lower.len > self.upper.len {
            let most = self.lower.last().expect("lower holds gaps");
            self.lower.remove(most);
            self.upper.insert(most);
        }
    }
}

/// Gaps with their counts.
#[derive(Default)]
struct Counted {
    counts: BTreeMap<i64, usize>,
    len: usize,
}

impl Counted {
    fn insert(&mut self, gap: i64) {
        *self.counts.entry(gap).or_default() += 1;
        self.len += 1;
    }

    /// False when no gap of this length is here.
    fn remove(&mut self, gap: i64) -> bool {
        let Some(count) = self.counts.get_mut(&gap) else {
            return false;
        };
        *count -= 1;
        if *count == 0 {
            self.counts.remove(&gap);
        }
        self.len -= 1;
        true
    }

    fn first(&self) -> Option<i64> {
        self.counts.keys().next().copied()
    }

    fn last(&self) -> Option<i64> {
        self.counts.keys().next_back().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::Gaps;

    /// What the sweep must agree with: the gaps sorted afresh.
    fn sorted_afresh(gaps: &[i64]) -> (i64, i64, i64) {
        let mut sorted = gaps.to_vec();
        sorted.sort_unstable();
        (
            sorted[sorted.len() / 2],
            sorted[0],
            sorted[sorted.len() - 1],
        )
    }

    #[test]
    fn median_and_extremes_follow_every_insert_and_removal() {
        // A fixed pseudo-random walk of inserts and removals, with repeats.
        let mut state = 12345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as i64
        };
        let (mut gaps, mut held) = (Gaps::default(), Vec::new());
        for _ in 0..2000 {
            if held.len() > 3 && next() % 3 == 0 {
                let gap = held.swap_remove(next() as usize % held.len());
                gaps.remove(gap);
            } else {
                let gap = next() % 50;
                gaps.insert(gap);
                held.push(gap);
            }
            assert_eq!(gaps.len(), held.len());
            let (median, least, most) = sorted_afresh(&held);
            assert_eq!(gaps.median(), Some(median));
            assert_eq!((gaps.least(), gaps.most()), (Some(least), Some(most)));
        }
    }

    #[test]
    fn no_gaps_have_no_median() {
        let mut gaps = Gaps::default();
        assert_eq!(gaps.median(), None);
        gaps.insert(7);
        gaps.remove(7);
        assert_eq!(
            (gaps.median(), gaps.least(), gaps.most()),
            (None, None, None)
        );
    }
}
