//! RESP, Redis's serialization protocol (versions 2 and 3): each value
//! starts with a type byte; simple values end at `\r\n`, bulk strings state
//! their length, aggregates the number of values they hold. A client's
//! command is an array of bulk strings, or an inline line of text.

use super::{decimal, Asks, Completed, Framing, Line, LineRead, Step};

/// The longest line read (a simple string, or a length).
const LONGEST_LINE: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a line: a value's type byte and what follows it.
    Line,
    /// A bulk string's bytes and the `\r\n` after them.
    Bulk(u64),
}

/// One direction's values.
#[derive(Debug)]
pub struct Resp {
    client: bool,
    state: State,
    line: Line,
    /// For each aggregate being read, the values it still holds.
    open: Vec<u64>,
    completed: Completed,
}

impl Resp {
    pub fn new(client: bool) -> Self {
        Resp {
            client,
            state: State::Line,
            line: Line::default(),
            open: Vec::new(),
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
            match self.state {
                State::Bulk(left) => {
                    let skipped = left.min((len - at) as u64);
                    at += skipped as usize;
                    self.state = match left - skipped {
                        0 => {
                            self.end_value();
                            State::Line
                        }
                        left => State::Bulk(left),
                    };
                }
                State::Line => {
                    let available = captured.get(at..len.min(captured.len())).unwrap_or(&[]);
                    if available.is_empty() {
                        return Step::Lost;
                    }
                    match self.line.read(available, LONGEST_LINE) {
                        LineRead::Done(line, used) => {
                            at += used;
                            if !self.read_line(&line) {
                                return Step::Lost;
                            }
                        }
                        LineRead::Partial => at += available.len(),
                        LineRead::TooLong => return Step::Lost,
                    }
                }
            }
        }
        let between = self.open.is_empty() && self.state == State::Line && !self.line.is_started();
        Step::Framed(if between {
            Framing::Complete
        } else {
            Framing::Unfinished
        })
    }

    /// A value's first line: its type byte and what follows it.
    fn read_line(&mut self, line: &[u8]) -> bool {
        let Some((&kind, rest)) = line.split_first() else {
            // An empty inline command.
            self.end_value();
            return true;
        };
        match kind {
            b'+' | b'-' | b':' | b',' | b'#' | b'_' | b'(' => self.end_value(),
            b'$' | b'!' | b'=' => match rest {
                b"-1" => self.end_value(),
                _ => match decimal(rest) {
                    Some(length) => self.state = State::Bulk(length + 2),
                    None => return false,
                },
            },
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let count = match rest {
                    b"-1" => 0,
                    _ => match decimal(rest) {
                        Some(count) if matches!(kind, b'%' | b'|') => count * 2,
                        Some(count) => count,
                        None => return false,
                    },
                };
                match count {
                    0 => self.end_value(),
                    count => self.open.push(count),
                }
            }
            // A client's inline command is a line of text.
            _ if self.client && kind.is_ascii_alphabetic() && self.open.is_empty() => {
                self.end_value()
            }
            _ => return false,
        }
        true
    }

    /// A value ended: it fills a place in the aggregate that holds it, and
    /// the aggregate ends with its last.
    fn end_value(&mut self) {
        while let Some(left) = self.open.last_mut() {
            *left -= 1;
            if *left > 0 {
                return;
            }
            self.open.pop();
        }
        let asks = if self.client {
            Asks::Answer
        } else {
            Asks::Nothing
        };
        self.completed.note(asks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_array_and_an_inline_command_each_end_a_request() {
        let mut client = Resp::new(true);
        let set = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
        assert_eq!(client.take(set, set.len()), Step::Framed(Framing::Complete));
        assert_eq!(client.take(b"PING\r\n", 6), Step::Framed(Framing::Complete));
        assert_eq!(client.asks(), Some(Asks::Answer));
    }

    #[test]
    fn a_nested_answer_ends_with_its_innermost_last_value() {
        let mut server = Resp::new(false);
        let nested = b"*2\r\n*1\r\n:1\r\n";
        assert_eq!(
            server.take(nested, nested.len()),
            Step::Framed(Framing::Unfinished)
        );
        assert_eq!(server.take(b"+OK\r\n", 5), Step::Framed(Framing::Complete));
    }
}
