//! Values as bytes and back: numbers little-endian, lengths before what
//! they count, a tag before what may be absent. Bytes that end early or
//! hold what no value writes are refused, not misread.

use std::net::IpAddr;

/// Bytes that are not a value this build wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed(pub &'static str);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed analysis bytes: {}", self.0)
    }
}

impl std::error::Error for Malformed {}

/// A value written to bytes and read back whole.
pub trait Wire: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn take(input: &mut &[u8]) -> Result<Self, Malformed>;
}

/// The next `len` bytes of `input`, which moves past them.
pub fn take_bytes<'a>(input: &mut &'a [u8], len: usize) -> Result<&'a [u8], Malformed> {
    if input.len() < len {
        return Err(Malformed("ends early"));
    }
    let (taken, rest) = input.split_at(len);
    *input = rest;
    Ok(taken)
}

macro_rules! wire_number {
    ($($number:ty),*) => {$(
        impl Wire for $number {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
                let bytes = take_bytes(input, std::mem::size_of::<$number>())?;
                Ok(<$number>::from_le_bytes(bytes.try_into().expect("sized")))
            }
        }
    )*};
}

wire_number!(u8, u16, u32, u64, i64, f64);

impl Wire for usize {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u64).put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        usize::try_from(u64::take(input)?).map_err(|_| Malformed("length too large"))
    }
}

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        u8::from(*self).put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        match u8::take(input)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Malformed("bad flag")),
        }
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.is_some().put(out);
        if let Some(value) = self {
            value.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok(if bool::take(input)? {
            Some(T::take(input)?)
        } else {
            None
        })
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        for value in self {
            value.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let len = usize::take(input)?;
        // Every value takes a byte at least: a length past the input is corrupt.
        if len > input.len() {
            return Err(Malformed("length past the end"));
        }
        (0..len).map(|_| T::take(input)).collect()
    }
}

impl<T: Wire> Wire for Box<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.as_ref().put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok(Box::new(T::take(input)?))
    }
}

impl<T: Wire + Copy + Default, const N: usize> Wire for [T; N] {
    fn put(&self, out: &mut Vec<u8>) {
        for value in self {
            value.put(out);
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let mut values = [T::default(); N];
        for value in &mut values {
            *value = T::take(input)?;
        }
        Ok(values)
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok((A::take(input)?, B::take(input)?))
    }
}

impl<A: Wire, B: Wire, C: Wire> Wire for (A, B, C) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
        self.2.put(out);
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok((A::take(input)?, B::take(input)?, C::take(input)?))
    }
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        self.len().put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        let len = usize::take(input)?;
        let bytes = take_bytes(input, len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Malformed("text not UTF-8"))
    }
}

impl Wire for IpAddr {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            IpAddr::V4(ip) => {
                4u8.put(out);
                out.extend_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                6u8.put(out);
                out.extend_from_slice(&ip.octets());
            }
        }
    }
    fn take(input: &mut &[u8]) -> Result<Self, Malformed> {
        Ok(match u8::take(input)? {
            4 => IpAddr::from(<[u8; 4]>::try_from(take_bytes(input, 4)?).expect("sized")),
            6 => IpAddr::from(<[u8; 16]>::try_from(take_bytes(input, 16)?).expect("sized")),
            _ => return Err(Malformed("bad address family")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Wire;

    #[derive(Debug, Clone, PartialEq, Wire)]
    enum Place {
        Nowhere,
        At(u64, Option<String>),
        Inside { compressed: u64 },
    }

    #[derive(Debug, Clone, PartialEq, Wire)]
    struct Record {
        places: Vec<Place>,
        address: IpAddr,
        pair: (u8, bool),
    }

    fn round_trip(record: &Record) -> Result<Record, Malformed> {
        let mut bytes = Vec::new();
        record.put(&mut bytes);
        let mut input = bytes.as_slice();
        let back = Record::take(&mut input)?;
        assert!(input.is_empty(), "every byte read");
        Ok(back)
    }

    #[test]
    fn a_derived_record_comes_back_as_it_went() {
        let record = Record {
            places: vec![
                Place::Nowhere,
                Place::At(7, Some("seven".into())),
                Place::At(8, None),
                Place::Inside { compressed: 9 },
            ],
            address: "2001:db8::1".parse().unwrap(),
            pair: (3, true),
        };
        assert_eq!(round_trip(&record), Ok(record));
    }

    #[test]
    fn a_variant_no_build_wrote_is_refused() {
        let mut bytes = Vec::new();
        Record {
            places: vec![Place::Nowhere],
            address: "192.0.2.1".parse().unwrap(),
            pair: (0, false),
        }
        .put(&mut bytes);
        bytes[8] = 3; // the first place's tag, after the list's length
        let mut input = bytes.as_slice();
        assert_eq!(Record::take(&mut input), Err(Malformed("unknown Place")));
    }
}
