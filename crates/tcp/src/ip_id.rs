//! A sender's IPv4 identification counter: most stacks number each
//! connection's packets one by one, so a step of more than one means
//! packets the capture point never saw, lost before it. Stacks that share
//! one counter between connections, or pick numbers at random, show no
//! such pattern and are left alone.

/// Steps of exactly one seen before the counter is trusted.
const TRUSTED_AFTER: u32 = 3;
/// A jump this large is another counter's, not missed packets.
const MAX_MISSED: u16 = 8;

#[derive(Debug, Default)]
pub struct IpIdCounter {
    last: Option<u16>,
    steps_of_one: u32,
    /// Steps that loss did not explain: packets numbered by a counter
    /// shared with other connections, or no counter at all.
    unexplained_steps: u32,
}

impl IpIdCounter {
    /// Notes the identification of the sender's next packet; returns how
    /// many of its packets went unseen just before it, where the counter
    /// is trusted. Zero identifications (handshakes, some stacks) say nothing.
    pub fn next(&mut self, id: Option<u16>) -> u16 {
        let Some(id) = id.filter(|&id| id != 0) else {
            return 0;
        };
        let step = self.last.map(|last| id.wrapping_sub(last));
        self.last = Some(id);
        // A step before the counter has shown that it counts is not held
        // against it: it may be a packet lost before it could be explained.
        let counting = self.steps_of_one >= TRUSTED_AFTER;
        let trusted = counting && self.unexplained_steps * 10 <= self.steps_of_one;
        match step {
            Some(1) => {
                self.steps_of_one += 1;
                0
            }
            Some(step) => {
                self.unexplained_steps += u32::from(counting);
                if trusted && (2..=MAX_MISSED).contains(&step) {
                    step - 1
                } else {
                    0
                }
            }
            None => 0,
        }
    }
}

impl IpIdCounter {
    /// The last step's missing packets were lost: the sender resent them.
    /// Such a step is the counter working, not a sign against it.
    pub fn explained(&mut self) {
        self.unexplained_steps = self.unexplained_steps.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_of_two_in_a_counting_sender_is_one_packet_unseen() {
        let mut counter = IpIdCounter::default();
        for id in [10, 11, 12, 13] {
            assert_eq!(counter.next(Some(id)), 0);
        }
        assert_eq!(counter.next(Some(15)), 1);
    }

    #[test]
    fn a_counter_stays_trusted_through_many_packets_unseen() {
        let mut counter = IpIdCounter::default();
        for id in [10, 11, 12, 13] {
            counter.next(Some(id));
        }
        for id in [15, 17, 19, 21, 23] {
            assert_eq!(counter.next(Some(id)), 1);
            counter.explained();
        }
    }

    #[test]
    fn a_packet_unseen_before_the_counter_is_trusted_does_not_spoil_it() {
        let mut counter = IpIdCounter::default();
        for id in [10, 11, 12] {
            counter.next(Some(id));
        }
        assert_eq!(counter.next(Some(14)), 0, "not trusted yet");
        counter.next(Some(15));
        assert_eq!(counter.next(Some(17)), 1);
    }

    #[test]
    fn a_sender_with_random_numbers_is_never_read_as_missing_packets() {
        let mut counter = IpIdCounter::default();
        for id in [10, 4000, 77, 12, 14, 9000] {
            assert_eq!(counter.next(Some(id)), 0);
        }
    }
}
