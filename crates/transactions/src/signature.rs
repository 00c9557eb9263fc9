//! Signatures that stay the same when a transaction repeats with slightly different sizes.

/// A size as a signature shows it: exact below 1000 bytes, otherwise its
/// leading digit and an `x` per remaining digit (3456 → `3xxx`).
pub fn size_bucket(bytes: u64) -> String {
    if bytes < 1000 {
        return bytes.to_string();
    }
    let digits = bytes.to_string();
    let mut bucket = digits[..1].to_string();
    bucket.extend(std::iter::repeat_n('x', digits.len() - 1));
    bucket
}

/// `blk[request]-blk[response]`, or `blk[request]-none` when unanswered.
pub fn of(request_bytes: u64, response_bytes: u64) -> String {
    let response = match response_bytes {
        0 => "none".to_string(),
        bytes => format!("blk[{}]", size_bucket(bytes)),
    };
    format!("blk[{}]-{response}", size_bucket(request_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_exact_below_a_thousand_then_bucketed_by_magnitude() {
        assert_eq!(size_bucket(127), "127");
        assert_eq!(size_bucket(3456), "3xxx");
        assert_eq!(size_bucket(1_048_576), "1xxxxxx");
        assert_eq!(of(127, 3999), "blk[127]-blk[3xxx]");
        assert_eq!(of(40, 0), "blk[40]-none");
    }
}
