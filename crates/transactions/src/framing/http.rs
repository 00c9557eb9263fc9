//! HTTP/1.x messages (RFC 9112 §6): a head ending in an empty line, then a
//! body whose length `Content-Length` states, or chunks each stating their
//! own, or (a response only) the bytes up to the close. Responses to HEAD
//! and statuses 1xx, 204 and 304 have none; a CONNECT's success or a 101
//! hands the connection to another protocol.

use std::collections::VecDeque;

use super::{line_end, Asks, Completed, Framing, Line, LineRead, Step};

/// The longest head read; a longer one is not HTTP as this reads it.
const LONGEST_HEAD: usize = 64 * 1024;
const LONGEST_CHUNK_LINE: usize = 4096;
const METHODS: [&[u8]; 9] = [
    b"GET ",
    b"POST ",
    b"PUT ",
    b"HEAD ",
    b"DELETE ",
    b"OPTIONS ",
    b"PATCH ",
    b"CONNECT ",
    b"TRACE ",
];

/// Whether a message starts with an HTTP/1 request line or status line.
pub fn starts(first: &[u8]) -> bool {
    let line = &first[..line_end(first).unwrap_or(first.len())];
    is_status_line(line) || is_request_line(line)
}

/// `HTTP/1.1 200 OK`, or as much of it as there is.
fn is_status_line(line: &[u8]) -> bool {
    let prefix = b"HTTP/1.";
    line[..line.len().min(prefix.len())] == prefix[..line.len().min(prefix.len())]
}

/// `GET /path HTTP/1.1`: a method, a target, and the version, where the
/// line is whole.
fn is_request_line(line: &[u8]) -> bool {
    METHODS.iter().any(|method| line.starts_with(method))
        && line
            .windows(b" HTTP/1.".len())
            .any(|window| window == b" HTTP/1.")
}

/// What a request asks of its response's framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// A HEAD: the response has a head only.
    Head,
    /// A CONNECT: a successful response turns the connection into a tunnel.
    Connect,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Body(u64),
    ChunkSize,
    /// A chunk's data and the `\r\n` after it.
    ChunkData(u64),
    Trailers,
    /// A response body that ends where the server closes.
    UntilClose,
}

/// One direction's messages.
#[derive(Debug)]
pub struct Http {
    client: bool,
    state: State,
    head: Vec<u8>,
    line: Line,
    completed: Completed,
    /// The client's requests read and not yet handed to the server's side.
    requests: Vec<Request>,
    /// On the server's side: the requests whose answers are still to come.
    awaiting: VecDeque<Request>,
}

impl Http {
    pub fn new(client: bool) -> Self {
        Http {
            client,
            state: State::Head,
            head: Vec::new(),
            line: Line::default(),
            completed: Completed::default(),
            requests: Vec::new(),
            awaiting: VecDeque::new(),
        }
    }

    pub fn asks(&self) -> Option<Asks> {
        self.completed.0
    }

    /// The requests the client's side read since last asked.
    pub fn take_requests(&mut self) -> Vec<Request> {
        std::mem::take(&mut self.requests)
    }

    /// Tells the server's side of requests whose answers will come.
    pub fn expect_answers(&mut self, requests: Vec<Request>) {
        self.awaiting.extend(requests);
    }

    pub fn take(&mut self, captured: &[u8], len: usize) -> Step {
        self.completed = Completed::default();
        let mut at = 0;
        while at < len {
            let left = (len - at) as u64;
            let used = match self.state {
                State::Body(body_left) | State::ChunkData(body_left) => {
                    let skipped = body_left.min(left);
                    self.after_skip(body_left - skipped);
                    skipped as usize
                }
                State::UntilClose => left as usize,
                State::Head | State::ChunkSize | State::Trailers => {
                    let available = captured.get(at..len.min(captured.len())).unwrap_or(&[]);
                    if available.is_empty() {
                        return Step::Lost;
                    }
                    match self.read_text(available) {
                        Ok(used) => used,
                        Err(step) => return step,
                    }
                }
            };
            at += used;
        }
        Step::Framed(if self.state == State::Head && self.head.is_empty() {
            Framing::Complete
        } else {
            Framing::Unfinished
        })
    }

    /// After skipping body bytes, `left` of them remain.
    fn after_skip(&mut self, left: u64) {
        self.state = match (self.state, left) {
            (State::Body(_), 0) => {
                self.end_message();
                State::Head
            }
            (State::Body(_), left) => State::Body(left),
            (State::ChunkData(_), 0) => State::ChunkSize,
            (_, left) => State::ChunkData(left),
        };
    }

    /// Reads a head, a chunk's size line or a trailer line from captured
    /// bytes; returns how many it used.
    fn read_text(&mut self, bytes: &[u8]) -> Result<usize, Step> {
        match self.state {
            State::Head => self.read_head(bytes),
            _ => match self.line.read(bytes, LONGEST_CHUNK_LINE) {
                LineRead::Done(line, used) => {
                    self.read_chunk_line(&line)?;
                    Ok(used)
                }
                LineRead::Partial => Ok(bytes.len()),
                LineRead::TooLong => Err(Step::Lost),
            },
        }
    }

    fn read_head(&mut self, bytes: &[u8]) -> Result<usize, Step> {
        // Empty lines between messages are allowed before a request line.
        if self.head.is_empty() && bytes.starts_with(b"\r\n") {
            return Ok(2);
        }
        if self.head.is_empty() && !self.opens_a_head(bytes) {
            return Err(Step::Lost);
        }
        let before = self.head.len();
        let search_from = before.saturating_sub(3);
        self.head.extend_from_slice(bytes);
        let Some(end) = self.head[search_from..]
            .windows(4)
            .position(|four| four == b"\r\n\r\n")
            .map(|at| search_from + at + 4)
        else {
            return if self.head.len() > LONGEST_HEAD {
                Err(Step::Lost)
            } else {
                Ok(bytes.len())
            };
        };
        let head = std::mem::take(&mut self.head);
        self.state = self.body_after(&head[..end])?;
        if self.state == State::Head {
            self.end_message();
        }
        Ok(end - before)
    }

    /// Whether `bytes`, where a head is due, begin one: a request's method
    /// from the client, the protocol's name from the server.
    fn opens_a_head(&self, bytes: &[u8]) -> bool {
        if self.client {
            METHODS.iter().any(|method| {
                let shared = bytes.len().min(method.len());
                bytes[..shared] == method[..shared]
            })
        } else {
            is_status_line(bytes)
        }
    }

    /// How the body after `head` is framed.
    fn body_after(&mut self, head: &[u8]) -> Result<State, Step> {
        let first_line = &head[..line_end(head).unwrap_or(head.len())];
        if self.client {
            let request = match first_line {
                _ if first_line.starts_with(b"HEAD ") => Request::Head,
                _ if first_line.starts_with(b"CONNECT ") => Request::Connect,
                _ => Request::Other,
            };
            self.requests.push(request);
            return Ok(body_length(head).unwrap_or(State::Head));
        }
        let status = status_code(first_line).ok_or(Step::Lost)?;
        if status == 101 {
            return Err(Step::HandedOver);
        }
        if status < 200 {
            // Informational: the final answer follows.
            return Ok(State::Head);
        }
        let request = self.awaiting.pop_front().unwrap_or(Request::Other);
        if request == Request::Connect && status < 300 {
            return Err(Step::HandedOver);
        }
        if request == Request::Head || status == 204 || status == 304 {
            return Ok(State::Head);
        }
        Ok(body_length(head).unwrap_or(State::UntilClose))
    }

    fn read_chunk_line(&mut self, line: &[u8]) -> Result<(), Step> {
        if self.state == State::Trailers {
            if line.is_empty() {
                self.state = State::Head;
                self.end_message();
            }
            return Ok(());
        }
        let size_text = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size_text)
            .ok()
            .and_then(|text| u64::from_str_radix(text.trim(), 16).ok())
            .ok_or(Step::Lost)?;
        self.state = match size {
            0 => State::Trailers,
            size => State::ChunkData(size + 2),
        };
        Ok(())
    }

    fn end_message(&mut self) {
        let asks = if self.client {
            Asks::Answer
        } else {
            Asks::Nothing
        };
        self.completed.note(asks);
    }
}

/// The body's framing a head's fields state: chunked, or a length; None
/// when they state neither.
fn body_length(head: &[u8]) -> Option<State> {
    let mut length = None;
    for line in head.split(|&b| b == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"transfer-encoding")
            && value.to_ascii_lowercase().ends_with(b"chunked")
        {
            return Some(State::ChunkSize);
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            length = super::decimal(value);
        }
    }
    length.map(|length| match length {
        0 => State::Head,
        length => State::Body(length),
    })
}

/// The status code of a status line: `HTTP/1.1 404 Not Found` → 404.
fn status_code(line: &[u8]) -> Option<u16> {
    let rest = line.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    std::str::from_utf8(code).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_to_head_has_no_body_whatever_its_length_says() {
        let mut client = Http::new(true);
        let mut server = Http::new(false);
        let request = b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(
            client.take(request, request.len()),
            Step::Framed(Framing::Complete)
        );
        server.expect_answers(client.take_requests());
        let response = b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n";
        assert_eq!(
            server.take(response, response.len()),
            Step::Framed(Framing::Complete)
        );
    }

    #[test]
    fn a_head_split_across_segments_is_read_whole() {
        let mut server = Http::new(false);
        assert_eq!(
            server.take(b"HTTP/1.1 200 OK\r\nContent-", 25),
            Step::Framed(Framing::Unfinished)
        );
        assert_eq!(
            server.take(b"Length: 2\r\n\r", 12),
            Step::Framed(Framing::Unfinished)
        );
        assert_eq!(server.take(b"\nok", 3), Step::Framed(Framing::Complete));
    }

    #[test]
    fn an_answer_that_does_not_open_as_http_loses_the_framing_at_once() {
        let mut server = Http::new(false);
        assert_eq!(server.take(b"xxxxxxxx", 8), Step::Lost);
    }

    #[test]
    fn a_body_without_a_length_lasts_until_the_close() {
        let mut server = Http::new(false);
        let response = b"HTTP/1.0 200 OK\r\n\r\nsome";
        assert_eq!(
            server.take(response, response.len()),
            Step::Framed(Framing::Unfinished)
        );
    }

    #[test]
    fn switching_protocols_hands_the_connection_over() {
        let mut server = Http::new(false);
        let response = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
        assert_eq!(server.take(response, response.len()), Step::HandedOver);
    }
}
