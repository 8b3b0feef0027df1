//! htsim's `RandomQueue` (Broadcom/csg-htsim `sim/randomqueue.cpp`): a drop-tail queue whose
//! top `band` is a random-drop zone. An arrival that would leave the queue above
//! `limit − band` is dropped with probability `p` (htsim: 0.1), and one that would exceed
//! `limit` always is. htsim's TCP and multipath experiments use it with a band of three
//! packets (`RANDOM_BUFFER` in `sim/tests/main.cpp` and the data-centre topologies) so that
//! an overflow does not take a burst of consecutive packets of one flow: the flows' losses are
//! spread, as a real router's small timing jitter spreads them, rather than synchronised by the
//! simulator's exact arithmetic (D120).

use pathpool_core::Rng;

/// The parameters of one random-drop queue, in packets or bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RandomDrop {
    /// Sizes count bytes (`true`) or packets (`false`).
    pub(crate) byte_mode: bool,
    /// Hard capacity: an arrival beyond it is always dropped.
    pub(crate) limit: u64,
    /// An arrival that would leave the queue above this (`limit − band`) is dropped with
    /// probability `p`.
    pub(crate) threshold: u64,
    /// Drop probability in the band.
    pub(crate) p: f64,
}

impl RandomDrop {
    /// Whether to drop an arrival of `size` bytes when `queued_packets` packets and
    /// `queued_bytes` bytes are queued (the packet in service included, as htsim counts).
    /// Draws from `rng` only in the band, so the queue's random stream advances only there.
    pub(crate) fn should_drop(
        &self,
        queued_packets: u64,
        queued_bytes: u64,
        size: u32,
        rng: &mut Rng,
    ) -> bool {
        let after = if self.byte_mode {
            queued_bytes + u64::from(size)
        } else {
            queued_packets + 1
        };
        if after > self.limit {
            return true;
        }
        after > self.threshold && rng.uniform() < self.p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packets(limit: u64, band: u64, p: f64) -> RandomDrop {
        RandomDrop {
            byte_mode: false,
            limit,
            threshold: limit - band,
            p,
        }
    }

    #[test]
    fn below_the_band_nothing_is_dropped_and_no_number_is_drawn() {
        let q = packets(10, 3, 1.0);
        let mut rng = Rng::seed_from_u64(1);
        let before = rng.clone();
        for queued in 0..7 {
            assert!(!q.should_drop(queued, queued * 1500, 1500, &mut rng));
        }
        assert_eq!(
            rng.next_u64(),
            before.clone().next_u64(),
            "no draw below the band"
        );
    }

    #[test]
    fn beyond_the_limit_everything_is_dropped() {
        let q = packets(10, 3, 0.0);
        let mut rng = Rng::seed_from_u64(1);
        assert!(q.should_drop(10, 15_000, 1500, &mut rng));
        assert!(
            !q.should_drop(9, 13_500, 1500, &mut rng),
            "p = 0 in the band"
        );
    }

    #[test]
    fn in_the_band_the_drop_rate_is_p() {
        // Arrivals leaving 8, 9 or 10 packets queued are in the band of a 10-packet queue.
        let q = packets(10, 3, 0.1);
        let mut rng = Rng::seed_from_u64(42);
        let n: u32 = 200_000;
        let drops = (0..n)
            .filter(|i| q.should_drop(7 + u64::from(i % 3), 0, 1500, &mut rng))
            .count();
        let rate = drops as f64 / f64::from(n);
        assert!((rate - 0.1).abs() < 0.003, "{rate}");
    }

    #[test]
    fn byte_mode_counts_the_arriving_packet_s_bytes() {
        // htsim: crt = queue size + packet size, random zone above maxsize − drop.
        let q = RandomDrop {
            byte_mode: true,
            limit: 15_000,
            threshold: 10_500,
            p: 1.0,
        };
        let mut rng = Rng::seed_from_u64(1);
        assert!(
            !q.should_drop(6, 9_000, 1500, &mut rng),
            "10 500 is not above"
        );
        assert!(q.should_drop(6, 9_000, 1501, &mut rng), "10 501 is");
        assert!(q.should_drop(0, 14_000, 1001, &mut rng), "beyond the limit");
    }
}
