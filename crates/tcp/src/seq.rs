//! Sequence-number arithmetic modulo 2^32 (RFC 1982 style).

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
    fn comparisons_hold_across_the_wrap() {
        assert!(after(5, u32::MAX - 5));
        assert!(before(u32::MAX - 5, 5));
        assert!(at_or_before(7, 7));
    }
}
