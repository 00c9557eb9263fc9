//! What the reader should know to trust the results, as typed values: the
//! command line puts them into words.

use tcp::Trimmed;

use crate::{Analysis, Clock, OtherTraffic, SkipCounts};

#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The memory budget kept connections out of the lists (they are still
    /// counted in the totals, the timeline and the findings on setup).
    MemoryBudget { budget_bytes: u64, trimmed: Trimmed },
    /// The clock stepped back 1 ms or more; durations that would run
    /// backwards across a step were left out (null), of so many
    /// transactions and handshakes.
    ClockSteppedBack {
        steps: u64,
        largest_ms: f64,
        transactions_left_out: u64,
        handshakes_left_out: u64,
    },
    /// The clock jumped ahead by a day or more.
    ClockJumped { jumps: u64, largest_s: f64 },
    /// Frames stamped before 1896 or after 2116, counted at that bound.
    OutOfRange { frames: u64 },
    /// Connections several files hold whose packets could not be matched
    /// across the files: copies among them were analysed as packets.
    Unmatched { connections: u64 },
    /// Frames captured at more than one point, analysed once; the
    /// connections whose sequence numbers were shifted between the points.
    FilesOverlap {
        copies: u64,
        renumbered_connections: u64,
    },
    /// Frames one file holds twice (a mirror port), analysed once.
    RecordedTwice { frames: u64 },
    /// Packets a router forwarded back onto the tapped link, their TTL
    /// lower by `least` to `most`, analysed once.
    ForwardedAgain { frames: u64, least: u8, most: u8 },
    /// Stretches of data their receiver acknowledged that the capture never
    /// saw: the network delivered them.
    CaptureMissed { stretches: u64 },
    /// No frame held a TCP segment tcpwhy can read.
    NoTcp {
        frames: u64,
        skipped: SkipCounts,
        other_traffic: OtherTraffic,
    },
}

impl Analysis {
    /// What the reader should know to trust the results, in the order to
    /// tell it; none when all is well.
    pub fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if !self.trimmed.is_empty() {
            notes.push(Note::MemoryBudget {
                budget_bytes: self.memory_budget_bytes,
                trimmed: self.trimmed.clone(),
            });
        }
        notes.extend(self.clock_notes(&self.counts.clock));
        notes.extend(self.copy_notes());
        let missed = self.capture_missed();
        if missed > 0 {
            notes.push(Note::CaptureMissed { stretches: missed });
        }
        let counts = &self.counts;
        if counts.tcp_segments == 0 && counts.frames > 0 {
            notes.push(Note::NoTcp {
                frames: counts.frames,
                skipped: counts.skipped.clone(),
                other_traffic: counts.other_traffic.clone(),
            });
        }
        notes
    }

    fn clock_notes(&self, clock: &Clock) -> Vec<Note> {
        let mut notes = Vec::new();
        if clock.steps_back > 0 {
            notes.push(Note::ClockSteppedBack {
                steps: clock.steps_back,
                largest_ms: clock.largest_step_back_ms,
                transactions_left_out: self.transactions_left_out(),
                handshakes_left_out: self.handshakes_left_out(),
            });
        }
        if clock.jumps > 0 {
            notes.push(Note::ClockJumped {
                jumps: clock.jumps,
                largest_s: clock.largest_jump_s,
            });
        }
        if clock.out_of_range > 0 {
            notes.push(Note::OutOfRange {
                frames: clock.out_of_range,
            });
        }
        notes
    }

    /// Frames that several files, or one file twice, hold.
    fn copy_notes(&self) -> Vec<Note> {
        let (matched, repeats) = (&self.counts.matched, &self.counts.repeats);
        let mut notes = Vec::new();
        if matched.unmatched_connections > 0 {
            notes.push(Note::Unmatched {
                connections: matched.unmatched_connections,
            });
        }
        if matched.copies > 0 {
            notes.push(Note::FilesOverlap {
                copies: matched.copies,
                renumbered_connections: matched.renumbered_connections,
            });
        }
        if repeats.recorded_twice > 0 {
            notes.push(Note::RecordedTwice {
                frames: repeats.recorded_twice,
            });
        }
        if let (frames @ 1.., Some((least, most))) = (repeats.forwarded_again, repeats.ttl_steps) {
            notes.push(Note::ForwardedAgain {
                frames,
                least,
                most,
            });
        }
        notes
    }

    /// The stretches of data the capture missed that their receiver acknowledged.
    fn capture_missed(&self) -> u64 {
        self.connections
            .iter()
            .map(|c| c.client_to_server.capture_drops + c.server_to_client.capture_drops)
            .sum()
    }

    /// Transactions with a duration left out (null): it would have run
    /// backwards across a step of the clock.
    fn transactions_left_out(&self) -> u64 {
        self.transactions
            .iter()
            .filter(|t| {
                let answered = t.response_start_ns.is_some();
                t.duration_ms.is_none()
                    || t.request_transfer_ms.is_none()
                    || (answered
                        && (t.server_think_ms.is_none() || t.response_transfer_ms.is_none()))
            })
            .count() as u64
    }

    /// Handshakes with a round trip left out for the same reason.
    fn handshakes_left_out(&self) -> u64 {
        self.connections
            .iter()
            .filter(|c| {
                let h = &c.handshake;
                (h.syn_ns.is_some() && h.syn_ack_ns.is_some() && h.rtt_to_server_ms.is_none())
                    || (h.syn_ack_ns.is_some()
                        && h.ack_ns.is_some()
                        && h.rtt_to_client_ms.is_none())
            })
            .count() as u64
    }
}
