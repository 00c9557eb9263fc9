//! A sender's IPv4 identification counter: most stacks number each
//! connection's packets one by one, so a step larger than the packets last
//! seen took means packets the capture point never saw, lost before it.
//! Stacks that share one counter between connections, or pick numbers at
//! random, show no such pattern and are left alone: a counter is the
//! connection's own only while no step shows it is not.

/// Steps as counted seen before the counter is trusted.
const TRUSTED_AFTER: u32 = 3;

#[derive(Debug, Default)]
pub struct IpIdCounter {
    last: Option<u16>,
    /// Numbers the last packet took: a segmentation-offloaded segment
    /// stands for several on the wire, each numbered.
    last_took: u16,
    steps_as_counted: u32,
    /// Steps that loss did not explain: packets numbered by a counter
    /// shared with other connections, or no counter at all.
    unexplained_steps: u32,
    /// A step showed the counter numbers more than this connection's packets.
    shared: bool,
    /// The number of the host's latest packet on another connection.
    host_elsewhere: Option<u16>,
}

/// What the counter is told of the sender's next packet.
#[derive(Debug, Clone, Copy)]
pub struct Numbered {
    pub id: Option<u16>,
    /// Numbers this packet takes: the wire packets it stands for.
    pub takes: u16,
    /// The most packets the sender can have on their way at once (the
    /// peer's window holds no more): a larger jump is another counter's.
    pub most_unseen: u16,
}

impl IpIdCounter {
    /// The sender's host numbered a packet of another connection `id`.
    pub fn host_numbered_elsewhere(&mut self, id: u16) {
        self.host_elsewhere = Some(id);
    }

    /// Notes the identification of the sender's next packet; returns how
    /// many of its packets went unseen just before it, where the counter
    /// is trusted. Zero identifications (handshakes, some stacks) say nothing.
    pub fn next(&mut self, packet: Numbered) -> u16 {
        let Some(id) = packet.id.filter(|&id| id != 0) else {
            return 0;
        };
        let elsewhere = self.host_elsewhere.take();
        let Some(last) = self.last.replace(id) else {
            self.last_took = packet.takes.max(1);
            return 0;
        };
        let expected = std::mem::replace(&mut self.last_took, packet.takes.max(1));
        let step = id.wrapping_sub(last);
        if step == expected {
            self.steps_as_counted += 1;
            return 0;
        }
        let missed = step.wrapping_sub(expected);
        let forward = step > expected && step < 0x8000;
        let beyond_window = forward && missed > packet.most_unseen;
        let others_between = elsewhere.is_some_and(|other| {
            let offset = other.wrapping_sub(last);
            offset > 0 && offset < step
        });
        self.shared |= beyond_window || others_between;
        // A step before the counter has shown that it counts is not held
        // against it: it may be a packet lost before it could be explained.
        let counting = self.steps_as_counted >= TRUSTED_AFTER;
        let trusted =
            counting && !self.shared && self.unexplained_steps * 10 <= self.steps_as_counted;
        self.unexplained_steps += u32::from(counting);
        if trusted && forward {
            missed
        } else {
            0
        }
    }

    /// The last step's missing packets were lost: the sender resent them.
    /// Such a step is the counter working, not a sign against it.
    pub fn explained(&mut self) {
        self.unexplained_steps = self.unexplained_steps.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: u16 = 8;

    fn packet(id: u16) -> Numbered {
        Numbered {
            id: Some(id),
            takes: 1,
            most_unseen: WINDOW,
        }
    }

    fn counting(ids: impl IntoIterator<Item = u16>) -> IpIdCounter {
        let mut counter = IpIdCounter::default();
        for id in ids {
            assert_eq!(counter.next(packet(id)), 0);
        }
        counter
    }

    #[test]
    fn a_step_of_two_in_a_counting_sender_is_one_packet_unseen() {
        let mut counter = counting([10, 11, 12, 13]);
        assert_eq!(counter.next(packet(15)), 1);
    }

    #[test]
    fn a_counter_stays_trusted_through_many_packets_unseen() {
        let mut counter = counting([10, 11, 12, 13]);
        for id in [15, 17, 19, 21, 23] {
            assert_eq!(counter.next(packet(id)), 1);
            counter.explained();
        }
    }

    #[test]
    fn a_packet_unseen_before_the_counter_is_trusted_does_not_spoil_it() {
        let mut counter = counting([10, 11, 12]);
        assert_eq!(counter.next(packet(14)), 0, "not trusted yet");
        counter.next(packet(15));
        assert_eq!(counter.next(packet(17)), 1);
    }

    #[test]
    fn an_offloaded_segment_takes_a_number_per_wire_packet() {
        let mut counter = counting([10, 11, 12, 13]);
        let offloaded = Numbered {
            takes: 3,
            ..packet(14)
        };
        assert_eq!(counter.next(offloaded), 0);
        assert_eq!(counter.next(packet(17)), 0);
        assert_eq!(counter.next(packet(19)), 1);
    }

    #[test]
    fn a_jump_past_what_the_window_holds_shows_a_shared_counter_for_good() {
        let mut counter = counting([10, 11, 12, 13]);
        assert_eq!(counter.next(packet(14 + WINDOW)), WINDOW);
        counter.explained();
        assert_eq!(counter.next(packet(16 + 3 * WINDOW)), 0);
        counter.next(packet(17 + 3 * WINDOW));
        assert_eq!(counter.next(packet(19 + 3 * WINDOW)), 0);
    }

    #[test]
    fn a_jump_over_the_hosts_packets_on_another_connection_is_theirs() {
        let mut counter = counting([10, 11, 12, 13]);
        counter.host_numbered_elsewhere(16);
        assert_eq!(counter.next(packet(20)), 0);
        assert_eq!(counter.next(packet(22)), 0, "shared for good");
    }

    #[test]
    fn another_connections_numbers_outside_the_jump_are_another_counter() {
        let mut counter = counting([10, 11, 12, 13]);
        counter.host_numbered_elsewhere(4000);
        assert_eq!(counter.next(packet(16)), 2);
    }

    #[test]
    fn a_sender_with_random_numbers_is_never_read_as_missing_packets() {
        let mut counter = IpIdCounter::default();
        for id in [10, 4000, 77, 12, 14, 9000] {
            assert_eq!(counter.next(packet(id)), 0);
        }
    }
}
