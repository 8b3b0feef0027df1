//! Inter-arrival times at the receiving application (`measure.interarrival`, issue 21; the
//! INRPP document's Fig. 12, a CDF of packet inter-arrival times "at the receiver
//! application"): for each flow, a histogram of the time between consecutive data packets
//! that deliver new bytes in order, in logarithmic bins (D306). A packet that arrives above a
//! hole delivers nothing and is not counted; the retransmission that fills the hole ends a
//! gap as long as the hole lasted. The state is one time and one histogram per flow,
//! whatever the run's length.

use pathpool_core::Time;

use crate::sim::FlowMeta;
use crate::table::{Column, Table};

/// Bins per decade, and the decades covered: from 1 µs to 100 s (a gap outside goes in the
/// first or last bin).
const PER_DECADE: usize = 10;
const FIRST_DECADE: i32 = -6;
const DECADES: usize = 8;
const BINS: usize = PER_DECADE * DECADES;

/// The histograms.
#[derive(Clone, Debug)]
pub(crate) struct Interarrival {
    /// The flow each element receives data for (`u32::MAX`: none).
    flow_of: Vec<u32>,
    last: Vec<Option<Time>>,
    counts: Vec<[u64; BINS]>,
}

/// A bin's lower edge in seconds.
fn edge(k: usize) -> f64 {
    10f64.powf(f64::from(FIRST_DECADE) + k as f64 / PER_DECADE as f64)
}

impl Interarrival {
    /// Histograms for `flows`, whose receiving ends are elements below `elements`.
    pub(crate) fn new(flows: &[FlowMeta], elements: usize) -> Self {
        let mut flow_of = vec![u32::MAX; elements];
        for (i, f) in flows.iter().enumerate() {
            flow_of[f.sink as usize] = i as u32;
        }
        Interarrival {
            flow_of,
            last: vec![None; flows.len()],
            counts: vec![[0; BINS]; flows.len()],
        }
    }

    /// A data packet delivered new bytes in order at element `elem` at `now`.
    #[inline]
    pub(crate) fn record(&mut self, elem: u32, now: Time) {
        let Some(&f) = self.flow_of.get(elem as usize).filter(|&&f| f != u32::MAX) else {
            return;
        };
        let f = f as usize;
        if let Some(prev) = self.last[f] {
            let gap = now.saturating_since(prev).as_secs_f64();
            let k = if gap > 0.0 {
                let x = (gap.log10() - f64::from(FIRST_DECADE)) * PER_DECADE as f64;
                (x.floor().max(0.0) as usize).min(BINS - 1)
            } else {
                0
            };
            self.counts[f][k] += 1;
        }
        self.last[f] = Some(now);
    }

    /// The `interarrival` table: one row per flow and non-empty bin (`lo_s` inclusive, `hi_s`
    /// exclusive; the first bin also holds shorter gaps, the last longer ones).
    pub(crate) fn table(&self, flows: &[FlowMeta]) -> Table {
        let (mut flow, mut lo, mut hi, mut count) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (i, c) in self.counts.iter().enumerate() {
            for (k, &n) in c.iter().enumerate().filter(|(_, &n)| n > 0) {
                flow.push(flows[i].id.clone());
                lo.push(edge(k));
                hi.push(edge(k + 1));
                count.push(n);
            }
        }
        let mut t = Table::new("interarrival");
        t.push("flow", Column::Str(flow));
        t.push("lo_s", Column::F64(lo));
        t.push("hi_s", Column::F64(hi));
        t.push("count", Column::U64(count));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fall_in_their_logarithmic_bins() {
        assert!((edge(0) - 1e-6).abs() < 1e-18);
        assert!((edge(30) - 1e-3).abs() < 1e-15);
        let mut ia = Interarrival {
            flow_of: vec![u32::MAX, 0],
            last: vec![None],
            counts: vec![[0; BINS]],
        };
        // Gaps of 1.5 ms, 1.5 ms, 70 ms; a packet to another element counts nowhere.
        for ms in [0, 1500, 3000, 73_000] {
            ia.record(1, Time::ZERO + pathpool_core::Dur::from_us(ms));
        }
        ia.record(0, Time::from_secs(1));
        // 1.5 ms: log10 = −2.82, bin (−2.82 + 6)·10 = 31; 70 ms: (−1.15 + 6)·10 = 48.
        assert_eq!(ia.counts[0][31], 2);
        assert_eq!(ia.counts[0][48], 1);
        assert_eq!(ia.counts[0].iter().sum::<u64>(), 3);
    }
}
