//! Sequence-number arithmetic modulo 2^32 (RFC 1982 style).

use std::cmp::Ordering;
use std::ops::{Add, Sub};

/// A sequence number, compared with wrap-around: of two numbers less than
/// 2^31 apart, the one reached by counting forward from the other comes after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNumber(pub u32);

impl SeqNumber {
    /// The number `bytes` further on.
    pub fn advanced(self, bytes: u32) -> SeqNumber {
        SeqNumber(self.0.wrapping_add(bytes))
    }

    /// Bytes from `self` forward to `later`; negative when `later` comes before.
    pub fn bytes_to(self, later: SeqNumber) -> i64 {
        i64::from(later.0.wrapping_sub(self.0) as i32)
    }
}

impl PartialOrd for SeqNumber {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(other.bytes_to(*self).cmp(&0))
    }
}

/// The number `bytes` further on.
impl Add<u32> for SeqNumber {
    type Output = SeqNumber;

    fn add(self, bytes: u32) -> SeqNumber {
        self.advanced(bytes)
    }
}

/// How far `self` lies past `earlier`, counting forward across the wrap:
/// negative when it lies before. Two points' numberings of one sender
/// differ by such a distance when something between them rewrites them.
impl Sub for SeqNumber {
    type Output = i32;

    fn sub(self, earlier: SeqNumber) -> i32 {
        self.0.wrapping_sub(earlier.0) as i32
    }
}

/// The number `distance` before (after, when negative): undoes an offset
/// taken with `-`.
impl Sub<i32> for SeqNumber {
    type Output = SeqNumber;

    fn sub(self, distance: i32) -> SeqNumber {
        SeqNumber(self.0.wrapping_sub(distance as u32))
    }
}

/// `a` comes after `b` in sequence space.
pub fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// `a` comes before `b` in sequence space.
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `a` is at or before `b`.
pub fn at_or_before(a: u32, b: u32) -> bool {
    !after(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_count_and_compare_across_the_wrap() {
        let near_end = SeqNumber(u32::MAX - 5);
        let wrapped = near_end.advanced(11);
        assert_eq!(wrapped, SeqNumber(5));
        assert_eq!(near_end.bytes_to(wrapped), 11);
        assert_eq!(wrapped.bytes_to(near_end), -11);
        assert!(wrapped > near_end);
    }

    #[test]
    fn distances_and_offsets_wrap_both_ways() {
        let near_end = SeqNumber(u32::MAX - 5);
        let wrapped = near_end + 11;
        assert_eq!(wrapped - near_end, 11);
        assert_eq!(near_end - wrapped, -11);
        // A rewriter that adds 11 is undone by taking its offset off again.
        let offset = wrapped - near_end;
        assert_eq!(wrapped - offset, near_end);
        assert_eq!(near_end - (-offset), wrapped);
        assert!(near_end < wrapped);
    }

    #[test]
    fn comparisons_hold_across_the_wrap() {
        assert!(after(5, u32::MAX - 5));
        assert!(before(u32::MAX - 5, 5));
        assert!(at_or_before(7, 7));
    }
}
