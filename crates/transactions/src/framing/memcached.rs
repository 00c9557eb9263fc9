//! memcached's text protocol (its doc/protocol.txt): commands and replies
//! are lines; storage commands, and the `VALUE` lines of retrieval replies,
//! state how many bytes of data follow. A retrieval reply ends at `END`, a
//! statistics reply too; every other reply is one line. A command ending in
//! `noreply` asks for nothing. The meta commands (`ms`, and `VA` replies)
//! state their data's length the same way.

use super::{decimal, Asks, Completed, Framing, Line, LineRead, Step};

/// The first byte of a binary-protocol request.
pub const BINARY_REQUEST: u8 = 0x80;
const LONGEST_LINE: usize = 8 * 1024;
const STORAGE: [&[u8]; 6] = [b"set", b"add", b"replace", b"append", b"prepend", b"cas"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Line,
    /// Data bytes and the `\r\n` after them, and what follows them.
    Data(u64, After),
    /// A reply of several lines, which ends at `END`.
    UntilEnd,
}

/// What the end of some data means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    /// It ends a message that asks this.
    Ends(Asks),
    /// More lines follow, up to `END`.
    MoreLines,
}

/// One direction's commands or replies.
#[derive(Debug)]
pub struct MemcachedText {
    client: bool,
    state: State,
    line: Line,
    completed: Completed,
}

impl MemcachedText {
    pub fn new(client: bool) -> Self {
        MemcachedText {
            client,
            state: State::Line,
            line: Line::default(),
            completed: Completed::default(),
        }
    }

    pub fn asks(&self) -> Option<Asks> {
        self.completed.0
    }

    pub fn take(&mut self, captured: &[u8], len: usize) -> Step {
        self.completed = Completed::default();
        let mut at = 0;
        while at < len {
            if let State::Data(left, after) = self.state {
                let skipped = left.min((len - at) as u64);
                at += skipped as usize;
                self.state = match (left - skipped, after) {
                    (0, After::Ends(asks)) => {
                        self.completed.note(asks);
                        State::Line
                    }
                    (0, After::MoreLines) => State::UntilEnd,
                    (left, after) => State::Data(left, after),
                };
                continue;
            }
            let available = captured.get(at..len.min(captured.len())).unwrap_or(&[]);
            if available.is_empty() {
                return Step::Lost;
            }
            match self.line.read(available, LONGEST_LINE) {
                LineRead::Done(line, used) => {
                    at += used;
                    self.read_line(&line);
                }
                LineRead::Partial => at += available.len(),
                LineRead::TooLong => return Step::Lost,
            }
        }
        let between = self.state == State::Line && !self.line.is_started();
        Step::Framed(if between {
            Framing::Complete
        } else {
            Framing::Unfinished
        })
    }

    fn read_line(&mut self, line: &[u8]) {
        let words: Vec<&[u8]> = line
            .split(|&b| b == b' ')
            .filter(|word| !word.is_empty())
            .collect();
        let first = words.first().copied().unwrap_or_default();
        if self.client {
            self.read_command(first, &words);
        } else {
            self.read_reply(first, &words);
        }
    }

    fn read_command(&mut self, command: &[u8], words: &[&[u8]]) {
        let asks = match (command, words.last()) {
            (b"quit", _) | (_, Some(&b"noreply")) => Asks::Nothing,
            _ => Asks::Answer,
        };
        // `set key flags exptime bytes`, `ms key bytes`: the data's length.
        let data_len = match command {
            _ if STORAGE.contains(&command) => words.get(4),
            b"ms" => words.get(2),
            _ => None,
        };
        match data_len.and_then(|text| decimal(text)) {
            Some(bytes) => self.state = State::Data(bytes + 2, After::Ends(asks)),
            None => self.completed.note(asks),
        }
    }

    fn read_reply(&mut self, reply: &[u8], words: &[&[u8]]) {
        match reply {
            // `VALUE key flags bytes [cas]`: data, then more values or END.
            b"VALUE" => self.data_follows(words.get(3), After::MoreLines),
            // A meta reply with a value: `VA bytes flags`.
            b"VA" => self.data_follows(words.get(1), After::Ends(Asks::Nothing)),
            b"STAT" | b"ITEM" | b"CONFIG" => self.state = State::UntilEnd,
            _ => {
                self.state = State::Line;
                self.completed.note(Asks::Nothing);
            }
        }
    }

    /// A reply line stating the length of the data after it.
    fn data_follows(&mut self, length: Option<&&[u8]>, after: After) {
        match length.and_then(|text| decimal(text)) {
            Some(bytes) => self.state = State::Data(bytes + 2, after),
            None => {
                self.state = State::Line;
                self.completed.note(Asks::Nothing);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_go_on_until_end() {
        let mut server = MemcachedText::new(false);
        let stats = b"STAT pid 1\r\nSTAT uptime 2\r\n";
        assert_eq!(
            server.take(stats, stats.len()),
            Step::Framed(Framing::Unfinished)
        );
        assert_eq!(server.take(b"END\r\n", 5), Step::Framed(Framing::Complete));
    }
}
