//! Signatures that stay the same when a transaction repeats with slightly different sizes.

/// A size as a signature shows it: exact below 1000 bytes, otherwise its
/// leading digit and an `x` per remaining digit (3456 → `3xxx`).
pub fn size_bucket(bytes: u64) -> String {
    let mut bucket = String::new();
    push_size_bucket(&mut bucket, bytes);
    bucket
}

fn push_size_bucket(text: &mut String, bytes: u64) {
    // Least significant first; u64::MAX has 20 digits.
    let mut digits = [0u8; 20];
    let mut count = 0;
    let mut rest = bytes;
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let shown = if bytes < 1000 { count } else { 1 };
    let leading = digits[count - shown..count].iter().rev();
    text.extend(leading.map(|&digit| char::from(digit)));
    text.extend(std::iter::repeat_n('x', count - shown));
}

/// `blk[request]-blk[response]`, or `blk[request]-none` when unanswered.
pub fn of(request_bytes: u64, response_bytes: u64) -> String {
    let mut signature = String::with_capacity(32);
    signature.push_str("blk[");
    push_size_bucket(&mut signature, request_bytes);
    signature.push_str("]-");
    if response_bytes == 0 {
        signature.push_str("none");
    } else {
        signature.push_str("blk[");
        push_size_bucket(&mut signature, response_bytes);
        signature.push(']');
    }
    signature
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
        assert_eq!(size_bucket(0), "0");
        assert_eq!(size_bucket(999), "999");
        assert_eq!(size_bucket(1000), "1xxx");
        assert_eq!(size_bucket(u64::MAX), "1xxxxxxxxxxxxxxxxxxx");
    }
}
