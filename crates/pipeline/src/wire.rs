//! Parts and file surveys as bytes, to move between the machines of a
//! cluster: every field as it is, so the analysis that joins them is the
//! analysis one process makes. Each record's bytes are derived from its
//! declaration (`record::Wire`), so a field added to one travels too.

pub use record::Malformed;
use record::Wire;

use crate::{FileSurvey, Part};

/// Written first: bytes from another layout are refused, not misread.
const PART_MAGIC: &[u8; 8] = b"twpart03";
const SURVEY_MAGIC: &[u8; 8] = b"twfile03";

impl Part {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = PART_MAGIC.to_vec();
        self.put(&mut out);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Part, Malformed> {
        read_all(bytes, PART_MAGIC)
    }
}

impl FileSurvey {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = SURVEY_MAGIC.to_vec();
        self.put(&mut out);
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<FileSurvey, Malformed> {
        read_all(bytes, SURVEY_MAGIC)
    }
}

fn read_all<T: Wire>(bytes: &[u8], magic: &[u8; 8]) -> Result<T, Malformed> {
    let mut input = bytes
        .strip_prefix(magic.as_slice())
        .ok_or(Malformed("unknown layout"))?;
    let value = T::take(&mut input)?;
    if !input.is_empty() {
        return Err(Malformed("trailing bytes"));
    }
    Ok(value)
}
