//! What a sender without SACK counts as in the network.
//!
//! RFC 5681's FlightSize is `snd_nxt − snd_una`: every byte sent and not cumulatively
//! acknowledged. Above a hole that includes every segment the receiver already holds, and in
//! a long NewReno recovery window inflation keeps sending new data above the hole, so the
//! FlightSize grows by about a window per round trip while the network holds no more than
//! before. Halving it at the next loss then sets ssthresh to megabytes (issue 17).
//!
//! Linux's Reno path counts each duplicate ACK as one segment that has left the network
//! (`tcp_add_reno_sack`, capped so the hole itself stays counted) and takes the segments a
//! partial ACK covers off that count, less the retransmitted hole (`tcp_remove_reno_sacks`);
//! its `tcp_packets_in_flight` is the rest, and Reno's ssthresh is half the congestion window
//! (`tcp_reno_ssthresh`), never half of what was sent. [`DupAckedSegments`] is that count.

use serde::{Deserialize, Serialize};

/// What the sender halves at a loss, and what it reports as in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlightEstimate {
    /// The pipe, as Linux's Reno path counts it: segments reported by duplicate ACKs are not
    /// in flight, and the flight a loss halves is at most the window in use when it was
    /// detected (`min(FlightSize, window)`), so ssthresh never exceeds that window.
    #[default]
    Pipe,
    /// RFC 5681 §2 literally: `snd_nxt − snd_una`, whatever the receiver already holds.
    FlightSize,
}

/// Segments the receiver reported with duplicate ACKs since `snd_una` last moved, less those
/// later covered by partial ACKs (Linux's `sacked_out` on a connection without SACK).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DupAckedSegments {
    segments: u64,
}

impl DupAckedSegments {
    /// A duplicate ACK with `flight_bytes` outstanding in segments of `mss` bytes: one more
    /// segment above the hole reached the receiver. The count stays below the segments
    /// outstanding, `⌈flight / mss⌉`, so the hole is always in flight (Linux
    /// `tcp_limit_reno_sacked`).
    #[inline]
    pub(crate) fn on_duplicate(&mut self, flight_bytes: u64, mss: u64) {
        let mss = mss.max(1);
        let next = self.segments + 1;
        // `⌈flight / mss⌉ ≥ next + 1` exactly when `flight > next · mss`: the usual case needs
        // no division (duplicate ACKs are a third of a congested dumbbell's ACKs).
        self.segments = if flight_bytes > next * mss {
            next
        } else {
            next.min(flight_bytes.div_ceil(mss).saturating_sub(1))
        };
    }

    /// A partial ACK covering `acked_segments`: one of them was the retransmitted hole, the
    /// others had each raised a duplicate ACK (Linux `tcp_remove_reno_sacks`).
    pub(crate) fn on_partial_ack(&mut self, acked_segments: u64) {
        self.segments -= acked_segments.saturating_sub(1).min(self.segments);
    }

    /// Everything acknowledged cumulatively, or a timeout: nothing is counted any more.
    pub(crate) fn reset(&mut self) {
        self.segments = 0;
    }

    /// The count in bytes for segments of `mss` bytes.
    pub(crate) fn bytes(self, mss: u64) -> u64 {
        self.segments * mss
    }

    /// The count in segments.
    #[cfg(test)]
    pub(crate) fn segments(self) -> u64 {
        self.segments
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_count_up_to_all_but_the_hole() {
        let mut d = DupAckedSegments::default();
        for _ in 0..12 {
            d.on_duplicate(10_000, 1000);
        }
        assert_eq!(d.segments(), 9, "the hole stays in flight");
        assert_eq!(d.bytes(1000), 9000);
    }

    #[test]
    fn the_cap_without_division_is_the_cap_with_it() {
        for mss in [1u64, 7, 1000, 1460] {
            for start in 0..6u64 {
                for flight in 0..12 * mss + 3 {
                    let mut d = DupAckedSegments { segments: start };
                    d.on_duplicate(flight, mss);
                    let expected = (start + 1).min(flight.div_ceil(mss).saturating_sub(1));
                    assert_eq!(
                        d.segments(),
                        expected,
                        "mss {mss}, from {start}, flight {flight}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_partial_ack_removes_what_it_covers_less_the_hole() {
        let mut d = DupAckedSegments::default();
        for _ in 0..6 {
            d.on_duplicate(20_000, 1000);
        }
        // The retransmitted hole and three segments the duplicates had reported.
        d.on_partial_ack(4);
        assert_eq!(d.segments(), 3);
        d.on_partial_ack(10);
        assert_eq!(d.segments(), 0, "never below zero");
        d.on_duplicate(20_000, 1000);
        d.reset();
        assert_eq!(d.segments(), 0);
    }
}
