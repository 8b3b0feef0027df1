//! Multipath transfers of either kind (MPTCP-like connections, mmTP downloads) as results
//! and traces see them.

use crate::mmtp_flow::MmtpConn;
use crate::mp_flow::MpConn;
use crate::mptfrc_flow::MpTfrcFlow;

/// A multipath transfer of either kind, as results and traces see it.
#[derive(Clone, Copy)]
pub(crate) enum Multi<'a> {
    Mp(&'a MpConn),
    Mmtp(&'a MmtpConn),
    MpTfrc(&'a MpTfrcFlow),
}

/// A subflow's counters, whichever protocol runs it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SubflowCounters {
    /// MPTCP: bytes cumulatively acknowledged on the subflow; mmTP: chunk payload that
    /// arrived first on it; multipath TFRC: the bytes of the packets that arrived on it.
    pub(crate) delivered_bytes: u64,
    /// MPTCP: payload bytes sent; mmTP: payload bytes requested; multipath TFRC: packet
    /// bytes sent.
    pub(crate) sent_bytes: u64,
    pub(crate) retransmissions: u64,
    pub(crate) timeouts: u64,
    pub(crate) fast_recoveries: u64,
}

impl Multi<'_> {
    /// Counters of subflow `j` in scenario order (`None` before it opens).
    pub(crate) fn subflow(&self, j: usize) -> Option<SubflowCounters> {
        match self {
            Multi::Mp(c) => c.subflow_sender(j).map(|tx| {
                let st = tx.stats();
                SubflowCounters {
                    delivered_bytes: tx.snd_una(),
                    sent_bytes: st.bytes_sent,
                    retransmissions: st.retransmissions,
                    timeouts: st.timeouts,
                    fast_recoveries: st.fast_recoveries,
                }
            }),
            Multi::Mmtp(c) => c.subflow_stats(j).map(|st| SubflowCounters {
                delivered_bytes: st.bytes_delivered,
                sent_bytes: st.requests * u64::from(c.chunk_bytes()),
                retransmissions: st.retransmissions,
                timeouts: st.timeouts,
                fast_recoveries: 0,
            }),
            Multi::MpTfrc(c) => c.subflow_counters(j),
        }
    }
    /// The controller's state and smoothed RTT of subflow `j`, for traces.
    pub(crate) fn trace(&self, j: usize) -> Option<(pathpool_cc::CcMetrics, f64)> {
        match self {
            Multi::Mp(c) => c.trace(j),
            Multi::Mmtp(c) => c.trace(j),
            // TFRC has no window to trace.
            Multi::MpTfrc(_) => None,
        }
    }
    /// Packets sent, retransmissions, timeouts and fast recoveries over every subflow (for
    /// mmTP: requests).
    pub(crate) fn totals(&self) -> (u64, u64, u64, u64) {
        match self {
            Multi::Mp(c) => {
                let st = c.stats();
                (
                    st.segments_sent,
                    st.retransmissions,
                    st.timeouts,
                    st.fast_recoveries,
                )
            }
            Multi::Mmtp(c) => {
                (0..c.paths.len())
                    .filter_map(|j| c.subflow_stats(j))
                    .fold((0, 0, 0, 0), |t, st| {
                        (
                            t.0 + st.requests,
                            t.1 + st.retransmissions,
                            t.2 + st.timeouts,
                            0,
                        )
                    })
            }
            Multi::MpTfrc(c) => {
                let (sent, resent) = c.totals();
                (sent, resent, 0, 0)
            }
        }
    }
}
