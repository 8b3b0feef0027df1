//! Helpers for the controllers' tests.

use pathpool_core::Dur;

use crate::path::PathState;

/// Paths of 1000-byte segments in congestion avoidance with the given (window in segments,
/// smoothed RTT in seconds), all in group 0.
pub(crate) fn paths(spec: &[(u64, f64)]) -> Vec<PathState> {
    spec.iter()
        .map(|&(w, rtt)| {
            let mut p = PathState::new(1000, w * 1000);
            p.ssthresh = 1;
            p.srtt = Dur::from_secs_f64(rtt);
            p
        })
        .collect()
}
