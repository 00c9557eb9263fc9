//! DNP3 over TCP (IEEE 1815): each link-layer frame opens with `05 64`, a
//! length, control and addresses and a CRC (ten bytes), then its user data
//! in blocks of up to 16 bytes, each followed by a two-byte CRC. The
//! length counts the control, the addresses and the user data. The user
//! data begins with a transport header and, in a message's first frame,
//! the application header, whose function code says whether the
//! outstation answers: a master's confirm of an unsolicited response, and
//! the functions named "no response", ask for nothing.

use super::headed::{Headed, HeaderThenBody};
use super::{Asks, Step};

const START: [u8; 2] = [0x05, 0x64];
const HEADER_LEN: usize = 10;
/// What the length counts besides the user data: control and two addresses.
const LENGTH_BESIDES_DATA: u8 = 5;
const BLOCK: usize = 16;
const CRC_LEN: usize = 2;
/// The transport header's bit marking a message's first frame.
const FIRST_FRAME: u8 = 0x40;
/// Functions the outstation does not answer: CONFIRM, DIRECT_OPERATE_NR,
/// IMMED_FREEZE_NR, FREEZE_CLEAR_NR, FREEZE_AT_TIME_NR.
const UNANSWERED: [u8; 5] = [0x00, 0x06, 0x08, 0x0a, 0x0c];

/// Whether a message starts with a DNP3 link-layer frame.
pub fn starts(first: &[u8]) -> bool {
    first.starts_with(&START)
}

/// One direction's frames.
#[derive(Debug)]
pub struct Frames {
    reader: HeaderThenBody<HEADER_LEN>,
    side: Side,
}

/// Who sends the frames, and what the frame being read asks for, once its
/// function code is read.
#[derive(Debug)]
struct Side {
    client: bool,
    frame_asks: Asks,
}

impl Frames {
    pub fn new(client: bool) -> Self {
        Frames {
            reader: HeaderThenBody::new(),
            side: Side {
                client,
                frame_asks: Asks::Unknown,
            },
        }
    }

    pub fn asks(&self) -> Option<Asks> {
        self.reader.asks()
    }

    pub fn take(&mut self, captured: &[u8], len: usize) -> Step {
        self.reader.take(captured, len, &mut self.side)
    }
}

impl Headed<HEADER_LEN> for Side {
    fn body_len(&mut self, header: &[u8; HEADER_LEN], body: &[u8]) -> Option<u64> {
        let len = body_len(header)?;
        self.frame_asks = self.asks_of(body);
        Some(len as u64)
    }

    fn asks(&self, _header: &[u8; HEADER_LEN]) -> Asks {
        self.frame_asks
    }
}

impl Side {
    /// What a frame whose user data begins with `data` asks of the other
    /// side: only a master's first frame of a message says.
    fn asks_of(&self, data: &[u8]) -> Asks {
        match data {
            _ if !self.client => Asks::Nothing,
            [transport, _control, function, ..] if transport & FIRST_FRAME != 0 => {
                if UNANSWERED.contains(function) {
                    Asks::Nothing
                } else {
                    Asks::Answer
                }
            }
            _ => Asks::Unknown,
        }
    }
}

/// The bytes after a frame's header: its user data and their CRCs. None
/// when the header is not DNP3's.
fn body_len(header: &[u8; HEADER_LEN]) -> Option<usize> {
    if header[..2] != START || header[2] < LENGTH_BESIDES_DATA {
        return None;
    }
    let data = usize::from(header[2] - LENGTH_BESIDES_DATA);
    Some(data + CRC_LEN * data.div_ceil(BLOCK))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::Framing;

    /// A master's confirm of an unsolicited response, as a capture holds it.
    const CONFIRM: [u8; 15] = [
        0x05, 0x64, 0x08, 0xc4, 0x04, 0x00, 0x03, 0x00, 0xb4, 0xb8, 0xc0, 0xd7, 0x00, 0x7a, 0xce,
    ];
    /// A master's write, asking for a response.
    const WRITE: [u8; 25] = [
        0x05, 0x64, 0x12, 0xc4, 0x04, 0x00, 0x03, 0x00, 0x1e, 0x7c, 0xc1, 0xc1, 0x02, 0x32, 0x01,
        0x07, 0x01, 0xeb, 0xe4, 0x5a, 0x87, 0xff, 0x00, 0x28, 0x01,
    ];

    #[test]
    fn a_masters_confirm_asks_for_nothing_and_its_write_for_an_answer() {
        let mut master = Frames::new(true);
        assert_eq!(
            master.take(&CONFIRM, CONFIRM.len()),
            Step::Framed(Framing::Complete)
        );
        assert_eq!(master.asks(), Some(Asks::Nothing));
        assert_eq!(
            master.take(&WRITE, WRITE.len()),
            Step::Framed(Framing::Complete)
        );
        assert_eq!(master.asks(), Some(Asks::Answer));
    }

    #[test]
    fn a_frame_is_unfinished_until_its_blocks_and_their_crcs_have_come() {
        let mut master = Frames::new(true);
        assert_eq!(
            master.take(&WRITE[..20], 20),
            Step::Framed(Framing::Unfinished)
        );
        assert_eq!(
            master.take(&WRITE[20..], 5),
            Step::Framed(Framing::Complete)
        );
    }

    #[test]
    fn bytes_without_the_start_code_are_not_dnp3() {
        let mut master = Frames::new(true);
        let mut broken = WRITE;
        broken[1] = 0x05;
        assert_eq!(master.take(&broken, broken.len()), Step::Lost);
    }
}
