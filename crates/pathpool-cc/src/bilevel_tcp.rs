//! Bilevel TCP's window arithmetic (Tse 2006, thesis eq. 2.2; 003-tse-fairness.md §3): a
//! master window cwnd_M over the connection and one child window cwnd_i per subflow, all
//! fractional, in segments. Subflow i may have
//! `actualcwnd_i = cwnd_M · cwnd_i / Σ_j cwnd_j` in flight; a loss on i halves both cwnd_i
//! and cwnd_M; an ACK on i adds 1/cwnd_i to cwnd_i and 1/cwnd_M to cwnd_M (each grows as a
//! TCP window would).
//!
//! This is the rule alone, without slow start, recovery or timeouts; it is not yet a
//! scenario `cc` (see the report of issue 20's window-based controllers).

/// The master and child windows of one Bilevel TCP connection, in segments.
#[derive(Clone, Debug, PartialEq)]
pub struct BilevelTcp {
    master_segments: f64,
    child_segments: Vec<f64>,
    /// Smallest window any of them may fall to (one segment, as TCP's floor).
    floor_segments: f64,
}

impl BilevelTcp {
    /// A connection with master window `master_segments` and the given child windows; each
    /// is raised to one segment at least.
    #[must_use]
    pub fn new(master_segments: f64, child_segments: &[f64]) -> Self {
        let floor_segments = 1.0;
        BilevelTcp {
            master_segments: master_segments.max(floor_segments),
            child_segments: child_segments
                .iter()
                .map(|c| c.max(floor_segments))
                .collect(),
            floor_segments,
        }
    }

    /// cwnd_M.
    #[must_use]
    pub fn master_segments(&self) -> f64 {
        self.master_segments
    }

    /// cwnd_i of subflow `i`.
    #[must_use]
    pub fn child_segments(&self, i: usize) -> f64 {
        self.child_segments[i]
    }

    /// What subflow `i` may have in flight: `cwnd_M · cwnd_i / Σ_j cwnd_j` (eq. 2.2).
    #[must_use]
    pub fn actual_segments(&self, i: usize) -> f64 {
        let total: f64 = self.child_segments.iter().sum();
        self.master_segments * self.child_segments[i] / total
    }

    /// An ACK on subflow `i`: cwnd_i += 1/cwnd_i and cwnd_M += 1/cwnd_M.
    pub fn on_ack(&mut self, i: usize) {
        let c = &mut self.child_segments[i];
        *c += 1.0 / *c;
        self.master_segments += 1.0 / self.master_segments;
    }

    /// A loss on subflow `i`: cwnd_i and cwnd_M are halved (at least one segment each).
    pub fn on_loss(&mut self, i: usize) {
        let c = &mut self.child_segments[i];
        *c = (*c / 2.0).max(self.floor_segments);
        self.master_segments = (self.master_segments / 2.0).max(self.floor_segments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3
    }

    #[test]
    fn master_twelve_over_children_six_two_two() {
        // Spec §3 worked example: 12·6/10, 12·2/10, 12·2/10.
        let mut b = BilevelTcp::new(12.0, &[6.0, 2.0, 2.0]);
        assert!(close(b.actual_segments(0), 7.2));
        assert!(close(b.actual_segments(1), 2.4));
        assert!(close(b.actual_segments(2), 2.4));
        // A loss on the first: cwnd_1 = 3, cwnd_M = 6, so 6·3/7, 6·2/7, 6·2/7.
        b.on_loss(0);
        assert!(
            close(b.actual_segments(0), 2.571),
            "{}",
            b.actual_segments(0)
        );
        assert!(close(b.actual_segments(1), 1.714));
        assert!(close(b.actual_segments(2), 1.714));
        assert_eq!(b.master_segments(), 6.0);
        assert_eq!(b.child_segments(0), 3.0);
    }

    #[test]
    fn an_ack_adds_one_over_each_window() {
        let mut b = BilevelTcp::new(4.0, &[2.0, 5.0]);
        b.on_ack(0);
        assert_eq!(b.child_segments(0), 2.5);
        assert_eq!(b.child_segments(1), 5.0);
        assert_eq!(b.master_segments(), 4.25);
    }

    #[test]
    fn the_actual_windows_sum_to_the_master() {
        let mut b = BilevelTcp::new(9.0, &[1.0, 3.0, 7.0, 2.5]);
        for k in 0..40 {
            if k % 7 == 3 {
                b.on_loss(k % 4);
            } else {
                b.on_ack(k % 4);
            }
            let sum: f64 = (0..4).map(|i| b.actual_segments(i)).sum();
            assert!(close(sum, b.master_segments()));
            assert!(b.master_segments() >= 1.0);
        }
    }
}
