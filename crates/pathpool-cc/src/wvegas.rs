//! wVegas, weighted Vegas: delay-based coupled congestion control for multipath TCP (Cao, Xu,
//! Fu, "Delay-based congestion control for multipath TCP", ICNP 2012; the Linux
//! multipath-tcp.org module `net/mptcp/mptcp_wvegas.c`).
//!
//! Every path r keeps a base RTT (the smallest RTT sample it has seen) and, once per round trip,
//! compares the window with the number of its packets sitting in queues:
//!
//! * diff_r = (cwnd_r/baseRTT_r − cwnd_r/rtt_r)·baseRTT_r packets, with rtt_r the *average* RTT
//!   sample of the round (Cao et al. 2012 Alg. 1; the average is Linux's choice);
//! * congestion avoidance: diff_r < α_r → cwnd_r += 1 MSS, diff_r > α_r → cwnd_r −= 1 MSS
//!   (Cao et al. 2012 Alg. 1), both compared in whole packets as Linux does, which leaves the
//!   window alone while α_r ≤ diff_r < α_r + 1;
//! * α_r = total_alpha · rate_r / Σ_group rate_s with rate_r = cwnd_r/rtt_r (Cao et al. 2012
//!   Alg. 1), truncated to whole packets and at least two (Linux);
//! * slow start as Vegas: Reno's exponential growth until diff_r > γ, then the window is cut to
//!   the rate actually achieved and the path moves to congestion avoidance (Linux);
//! * queue draining: when the queueing delay rtt_r − baseRTT_r reaches twice the smallest one
//!   since the last drain, cwnd_r ×= baseRTT_r/(2·rtt_r) (Linux);
//! * losses: the framework's NewReno response (Linux uses `tcp_reno_ssthresh` too); the round
//!   and the path's weight restart after it.
//!
//! Sums run over the active paths of the path's coupling group; paths in other groups are not
//! coupled. Every choice the paper leaves open is documented in docs/decisions.md (D39–D43).

use pathpool_core::Dur;

use crate::path::{group_members, PathState};
use crate::reno::Reno;
use crate::windows::Coupling;

/// A round needs more RTT samples than this to give a delay estimate (Linux
/// mptcp_wvegas.c: `cnt_rtt <= 2` falls back to Reno).
const MIN_SAMPLES_PER_ROUND: u64 = 3;

/// wVegas parameters, named and defaulted as the Linux module's (scenario files:
/// `tcp.wvegas`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WvegasConfig {
    /// Σ α_r over a coupling group, in packets (Linux `total_alpha`, default 10).
    pub total_alpha_pkts: u64,
    /// α_r before the path's first weight computation and after a loss, in packets (Linux
    /// `initial_alpha`, default 2).
    pub initial_alpha_pkts: u64,
    /// Smallest α_r in packets (Linux: `max(2U, …)`, default 2).
    pub min_alpha_pkts: u64,
    /// Slow start ends when diff exceeds γ packets (Linux `gamma`, default 1).
    pub gamma_pkts: u64,
    /// Drain the queue when its delay doubles (Linux's "try to drain link queue"; default on).
    pub queue_drain: bool,
}

impl Default for WvegasConfig {
    fn default() -> Self {
        WvegasConfig {
            total_alpha_pkts: 10,
            initial_alpha_pkts: 2,
            min_alpha_pkts: 2,
            gamma_pkts: 1,
            queue_drain: true,
        }
    }
}

/// wVegas's state of one path.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PathWvegas {
    /// Smallest RTT sample ever seen (Linux `base_rtt`; never expires).
    base_rtt: Option<Dur>,
    /// Sum of the round's RTT samples in picoseconds, and their number (Linux `sampled_rtt`,
    /// `cnt_rtt`).
    rtt_sum_ps: u128,
    rtt_count: u64,
    /// Bytes acknowledged since the round began, and the window when it began: the round ends
    /// when the window that was outstanding then is acknowledged.
    round_acked_bytes: u64,
    round_len_bytes: u64,
    /// Restart the round at the next ACK outside recovery (a new path, or after a loss).
    restart: bool,
    /// cwnd/rtt at the last round with a delay estimate, bytes per second (0: none yet).
    rate_bytes_per_s: f64,
    /// The α_r of the last decision, in packets.
    alpha_pkts: u64,
    /// Smallest queueing delay since the last drain (Linux `queue_delay`; zero: none yet).
    min_queue_delay: Dur,
}

impl PathWvegas {
    fn new(initial_alpha_pkts: u64) -> Self {
        PathWvegas {
            base_rtt: None,
            rtt_sum_ps: 0,
            rtt_count: 0,
            round_acked_bytes: 0,
            round_len_bytes: 0,
            restart: true,
            rate_bytes_per_s: 0.0,
            alpha_pkts: initial_alpha_pkts,
            min_queue_delay: Dur::ZERO,
        }
    }

    fn start_round(&mut self, cwnd_bytes: u64) {
        self.round_acked_bytes = 0;
        self.round_len_bytes = cwnd_bytes;
        self.rtt_sum_ps = 0;
        self.rtt_count = 0;
    }
}

/// How an ACK left the path's round.
enum Round {
    /// The round goes on.
    Running,
    /// The round ended with too few RTT samples for a delay estimate.
    NoEstimate,
    /// The round ended: its average RTT and the base RTT.
    Estimate { rtt: Dur, base_rtt: Dur },
}

/// Packets of a window of `cwnd_bytes` queued in the network when the round's RTT is `rtt`
/// and the base RTT `base_rtt`: (cwnd/baseRTT − cwnd/rtt)·baseRTT = cwnd·(rtt − baseRTT)/rtt
/// (Cao et al. 2012 Alg. 1; Linux mptcp_wvegas.c `diff`), in fractional packets.
#[must_use]
pub fn queued_packets(cwnd_bytes: u64, mss_bytes: u64, base_rtt: Dur, rtt: Dur) -> f64 {
    let rtt_ps = rtt.as_ps() as f64;
    let queue_ps = rtt.as_ps().saturating_sub(base_rtt.as_ps()) as f64;
    cwnd_bytes as f64 / mss_bytes as f64 * queue_ps / rtt_ps
}

/// wVegas.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Wvegas {
    config: WvegasConfig,
    per_path: Vec<PathWvegas>,
}

impl Wvegas {
    /// wVegas with the given parameters.
    #[must_use]
    pub fn new(config: WvegasConfig) -> Self {
        Wvegas {
            config,
            per_path: Vec::new(),
        }
    }

    /// The parameters.
    #[must_use]
    pub fn config(&self) -> &WvegasConfig {
        &self.config
    }

    /// Path `i`'s base RTT (its smallest RTT sample), if it has one.
    #[must_use]
    pub fn base_rtt(&self, i: usize) -> Option<Dur> {
        self.per_path[i].base_rtt
    }

    /// Path `i`'s α_r in packets, as used by its last per-round decision.
    #[must_use]
    pub fn alpha_pkts(&self, i: usize) -> u64 {
        self.per_path[i].alpha_pkts
    }

    /// α_r = total_alpha · rate_r / Σ rate_s over the active paths of `i`'s group that have a
    /// rate (Cao et al. 2012 Alg. 1), in whole packets and at least `min_alpha_pkts` (Linux
    /// mptcp_wvegas.c). Without a rate for path `i` its α is unchanged (Linux keeps its weight).
    #[must_use]
    pub fn weighted_alpha_pkts(&self, paths: &[PathState], i: usize) -> u64 {
        let own = self.per_path[i].rate_bytes_per_s;
        let total: f64 = group_members(paths, i)
            .map(|j| self.per_path[j].rate_bytes_per_s)
            .sum();
        if own <= 0.0 || total <= 0.0 {
            return self.per_path[i].alpha_pkts;
        }
        let alpha = libm::floor(self.config.total_alpha_pkts as f64 * own / total) as u64;
        alpha.max(self.config.min_alpha_pkts)
    }

    /// Counts `acked` bytes into path `i`'s round and ends the round when the window that was
    /// outstanding at its start has been acknowledged (Linux: `after(ack, beg_snd_nxt)`; we
    /// count bytes, docs/decisions.md D39).
    fn advance_round(&mut self, p: &PathState, i: usize, acked: u64) -> Round {
        let s = &mut self.per_path[i];
        if s.restart {
            // Linux `wvegas_enable` on entering TCP_CA_Open: a new round, the weight and α
            // from scratch, no queueing-delay history. The base RTT is kept.
            s.restart = false;
            s.start_round(p.cwnd);
            s.rate_bytes_per_s = 0.0;
            s.alpha_pkts = self.config.initial_alpha_pkts;
            s.min_queue_delay = Dur::ZERO;
            return Round::Running;
        }
        s.round_acked_bytes += acked;
        if s.round_acked_bytes < s.round_len_bytes {
            return Round::Running;
        }
        let round = match s.base_rtt {
            // The round's RTT is the average of its samples (Linux `sampled_rtt / cnt_rtt`,
            // docs/decisions.md D39).
            Some(base_rtt) if s.rtt_count >= MIN_SAMPLES_PER_ROUND => Round::Estimate {
                rtt: Dur::from_ps((s.rtt_sum_ps / u128::from(s.rtt_count)) as u64),
                base_rtt,
            },
            _ => Round::NoEstimate,
        };
        s.start_round(p.cwnd);
        round
    }

    /// Records path `i`'s rate cwnd/rtt for the round and recomputes its α (Cao et al. 2012
    /// Alg. 1), at every round end with an estimate (docs/decisions.md D41).
    fn update_weight(&mut self, paths: &[PathState], i: usize, rtt: Dur) {
        self.per_path[i].rate_bytes_per_s = paths[i].cwnd as f64 / rtt.as_secs_f64();
        self.per_path[i].alpha_pkts = self.weighted_alpha_pkts(paths, i);
    }

    /// Linux mptcp_wvegas.c ends every per-round update with `snd_ssthresh =
    /// tcp_current_ssthresh()`, i.e. max(ssthresh, ¾·cwnd): a window later cut by a queue
    /// drain slow-starts back towards ¾ of the window it had.
    fn remember_window(p: &mut PathState) {
        p.ssthresh = p.ssthresh.max(p.cwnd / 2 + p.cwnd / 4);
    }
}

impl Coupling for Wvegas {
    fn on_paths_changed(&mut self, paths: &[PathState]) {
        let initial = PathWvegas::new(self.config.initial_alpha_pkts);
        self.per_path.resize(paths.len(), initial);
    }

    fn on_rtt_sample(&mut self, _paths: &[PathState], i: usize, rtt: Dur) {
        // A zero RTT is no measurement (Linux adds 1 µs to every sample to avoid it).
        if rtt == Dur::ZERO {
            return;
        }
        // Linux mptcp_wvegas_pkts_acked: base RTT = smallest sample; the round's samples are
        // summed and counted, in recovery too.
        let s = &mut self.per_path[i];
        s.base_rtt = Some(s.base_rtt.map_or(rtt, |b| b.min(rtt)));
        s.rtt_sum_ps += u128::from(rtt.as_ps());
        s.rtt_count += 1;
    }

    fn on_loss(&mut self, _paths: &[PathState], i: usize, _timeout: bool) {
        // Linux leaves wVegas while not in TCP_CA_Open and restarts it (round, weight, α)
        // on return; a timeout also zeroes the rate (CA_EVENT_LOSS).
        self.per_path[i].restart = true;
        self.per_path[i].rate_bytes_per_s = 0.0;
    }

    fn slow_start(&mut self, paths: &mut [PathState], i: usize, acked: u64, abc_limit: u64) {
        if let Round::Estimate { rtt, base_rtt } = self.advance_round(&paths[i], i, acked) {
            self.update_weight(paths, i, rtt);
            let p = &mut paths[i];
            let diff = queued_packets(p.cwnd, p.mss, base_rtt, rtt);
            // Vegas slow start (Linux mptcp_wvegas.c, as tcp_vegas.c): more than γ packets
            // queued ends slow start; cwnd is cut to the rate achieved, cwnd·baseRTT/rtt, plus
            // one segment, and ssthresh set so the path is in congestion avoidance (Linux
            // `min(ssthresh, cwnd − 1)` with its `cwnd <= ssthresh` test; ours is `<`).
            if libm::floor(diff) as u64 > self.config.gamma_pkts {
                let target = (u128::from(p.cwnd) * u128::from(base_rtt.as_ps())
                    / u128::from(rtt.as_ps())) as u64;
                p.cwnd = p.cwnd.min(target + p.mss).max(p.mss);
                p.ssthresh = p.ssthresh.min(p.cwnd);
                Self::remember_window(p);
                return;
            }
        }
        // Otherwise Reno's slow start with byte counting (Linux `tcp_slow_start`).
        Reno::default().slow_start(paths, i, acked, abc_limit);
    }

    fn congestion_avoidance(&mut self, paths: &mut [PathState], i: usize, acked: u64) {
        let (rtt, base_rtt) = match self.advance_round(&paths[i], i, acked) {
            // Between round ends the window does not move (Cao et al. 2012 Alg. 1: once per
            // RTT).
            Round::Running => return,
            // No delay estimate: Reno's increase for the round, one segment (Linux calls
            // `tcp_reno_cong_avoid`; docs/decisions.md D39).
            Round::NoEstimate => {
                paths[i].cwnd += paths[i].mss;
                return;
            }
            Round::Estimate { rtt, base_rtt } => (rtt, base_rtt),
        };
        self.update_weight(paths, i, rtt);
        let alpha = self.per_path[i].alpha_pkts;
        let p = &mut paths[i];
        // Cao et al. 2012 Alg. 1, compared in whole packets (Linux truncates diff and α).
        let diff = libm::floor(queued_packets(p.cwnd, p.mss, base_rtt, rtt)) as u64;
        if diff > alpha {
            // Decrease by one segment, never below the framework's floor of one segment
            // (Linux: two), and keep the path out of slow start (Linux
            // `mptcp_wvegas_ssthresh`).
            p.cwnd = p.cwnd.saturating_sub(p.mss).max(p.mss);
            p.ssthresh = p.ssthresh.min(p.cwnd);
        } else if diff < alpha {
            p.cwnd += p.mss;
        }
        if self.config.queue_drain {
            // Linux mptcp_wvegas.c "try to drain link queue": track the smallest queueing
            // delay since the last drain; when the current one is at least twice that, scale
            // the window by baseRTT/(2·rtt). A zero queueing delay has nothing to drain
            // (docs/decisions.md D42).
            let queue = Dur::from_ps(rtt.as_ps().saturating_sub(base_rtt.as_ps()));
            let s = &mut self.per_path[i];
            if s.min_queue_delay == Dur::ZERO || s.min_queue_delay > queue {
                s.min_queue_delay = queue;
            }
            if queue > Dur::ZERO && queue >= s.min_queue_delay.saturating_mul(2) {
                let drained = u128::from(p.cwnd) * u128::from(base_rtt.as_ps())
                    / (2 * u128::from(rtt.as_ps()));
                p.cwnd = (drained as u64).max(p.mss);
                s.min_queue_delay = Dur::ZERO;
            }
        }
        Self::remember_window(p);
    }

    fn alg_state(&self, _paths: &[PathState], i: usize) -> Option<(&'static str, f64)> {
        Some(("alpha", self.per_path[i].alpha_pkts as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{AckSample, CongestionEvent};
    use crate::windows::{WindowConfig, Windows};
    use crate::{CcKind, MultipathController};
    use pathpool_core::{PathId, Time};

    const MSS: u64 = 1000;

    /// `n` paths of 1000-byte segments.
    fn controller(n: usize) -> Windows<Wvegas> {
        let mut w = Windows::new(Wvegas::default(), WindowConfig::default());
        for _ in 0..n {
            w.add_path(MSS);
        }
        w
    }

    /// Puts path `p` in congestion avoidance with a window of `cwnd_pkts` segments and an
    /// ssthresh of at most 10 segments.
    fn in_ca(w: &mut Windows<Wvegas>, p: usize, cwnd_pkts: u64) {
        let s = w.path_mut(PathId(p as u32));
        s.cwnd = cwnd_pkts * MSS;
        s.ssthresh = cwnd_pkts.min(10) * MSS;
    }

    fn ack(w: &mut Windows<Wvegas>, p: usize, bytes: u64, rtt_ms: Option<u64>) {
        let ack = AckSample {
            now: Time::ZERO,
            acked_bytes: bytes,
            rtt_sample: rtt_ms.map(Dur::from_ms),
            one_way_delay: None,
            srtt: Dur::from_ms(100),
            flight_bytes: 0,
        };
        w.on_ack(PathId(p as u32), &ack);
    }

    /// The ACK that starts path `p`'s first round (its sample sets the base RTT only), then
    /// one ACK of one segment per RTT sample.
    fn first_round(w: &mut Windows<Wvegas>, p: usize, base_ms: u64, samples_ms: &[u64]) {
        ack(w, p, MSS, Some(base_ms));
        round(w, p, samples_ms);
    }

    fn round(w: &mut Windows<Wvegas>, p: usize, samples_ms: &[u64]) {
        for &r in samples_ms {
            ack(w, p, MSS, Some(r));
        }
    }

    fn cwnd(w: &Windows<Wvegas>, p: usize) -> u64 {
        w.paths()[p].cwnd
    }

    #[test]
    fn queued_packets_is_cwnd_times_queueing_delay_over_rtt() {
        // 20 packets, baseRTT 100 ms, RTT 105 ms: (20/0.1 − 20/0.105)·0.1 = 20·5/105.
        let d = queued_packets(20 * MSS, MSS, Dur::from_ms(100), Dur::from_ms(105));
        assert!((d - 20.0 * 5.0 / 105.0).abs() < 1e-12);
        assert_eq!(
            queued_packets(7 * MSS, MSS, Dur::from_ms(50), Dur::from_ms(50)),
            0.0
        );
    }

    #[test]
    fn increase_when_fewer_than_alpha_packets_are_queued() {
        // One path: α = 10 · rate/rate = 10. Samples 100 and 110 ms average 105 ms: diff =
        // 20·5/105 = 0.95 → 0 < 10 → +1 segment. The round is the 20 segments outstanding.
        let mut w = controller(1);
        in_ca(&mut w, 0, 20);
        ack(&mut w, 0, MSS, Some(100));
        let samples: Vec<u64> = (0..20)
            .map(|k| if k % 2 == 0 { 100 } else { 110 })
            .collect();
        round(&mut w, 0, &samples[..19]);
        assert_eq!(cwnd(&w, 0), 20 * MSS, "no change inside the round");
        round(&mut w, 0, &samples[19..]);
        assert_eq!(cwnd(&w, 0), 21 * MSS);
        assert_eq!(w.coupling().alpha_pkts(0), 10);
        // ssthresh = max(10, ¾·21) segments (Linux tcp_current_ssthresh).
        assert_eq!(w.paths()[0].ssthresh, 15_750);
    }

    #[test]
    fn decrease_when_more_than_alpha_packets_are_queued() {
        // 40 packets, base 100 ms, RTT 150 ms: diff = 40·50/150 = 13.3 → 13 > 10 → −1.
        let mut w = controller(1);
        in_ca(&mut w, 0, 40);
        first_round(&mut w, 0, 100, &[150; 40]);
        assert_eq!(cwnd(&w, 0), 39 * MSS);
        // min(ssthresh, cwnd) = 10 segments, then max with ¾·39 segments.
        assert_eq!(w.paths()[0].ssthresh, 29_250);
        assert!(!w.coupling().in_slow_start(w.paths(), 0));
    }

    #[test]
    fn hold_while_diff_is_between_alpha_and_alpha_plus_one() {
        // 21 packets, base 100 ms, RTT 200 ms: diff = 21·100/200 = 10.5 → 10 = α: hold.
        let mut w = controller(1);
        in_ca(&mut w, 0, 21);
        first_round(&mut w, 0, 100, &[200; 21]);
        assert_eq!(cwnd(&w, 0), 21 * MSS);
        // Next round, same queue: still 10.5 packets, still held.
        round(&mut w, 0, &[200; 21]);
        assert_eq!(cwnd(&w, 0), 21 * MSS);
    }

    #[test]
    fn the_round_rtt_is_the_average_of_its_samples() {
        // Samples 100, 100, 100, 300: minimum 100 ms (diff 0), average 150 ms: diff =
        // 4·50/150 = 1.3 → 1; with α = total_alpha_pkts = 1 and min_alpha_pkts = 1 the
        // average holds where the minimum would have increased.
        let config = WvegasConfig {
            total_alpha_pkts: 1,
            min_alpha_pkts: 1,
            ..WvegasConfig::default()
        };
        let mut w = Windows::new(Wvegas::new(config), WindowConfig::default());
        w.add_path(MSS);
        in_ca(&mut w, 0, 4);
        first_round(&mut w, 0, 100, &[100, 100, 100, 300]);
        assert_eq!(cwnd(&w, 0), 4 * MSS);
    }

    #[test]
    fn a_round_with_too_few_samples_grows_as_reno() {
        // 10 segments acknowledged by two stretch ACKs: two samples, no estimate. The 4.9 s
        // sample would mean 9.8 packets queued, yet the round adds Reno's one segment.
        let mut w = controller(1);
        in_ca(&mut w, 0, 10);
        ack(&mut w, 0, MSS, Some(100));
        ack(&mut w, 0, 5 * MSS, Some(4900));
        ack(&mut w, 0, 5 * MSS, Some(100));
        assert_eq!(cwnd(&w, 0), 11 * MSS, "Reno's one segment for the round");
        assert_eq!(w.paths()[0].ssthresh, 10 * MSS, "no per-round update");
        assert_eq!(w.coupling().alpha_pkts(0), 2, "no weight either");
    }

    #[test]
    fn slow_start_ends_when_more_than_gamma_packets_are_queued() {
        let mut w = controller(1);
        // Initial window 10; the first ACK (base 100 ms) starts a round of those 10 segments
        // and, in slow start, adds a segment like every ACK. The round at the base RTT: diff 0,
        // slow start goes on.
        first_round(&mut w, 0, 100, &[100; 10]);
        assert_eq!(cwnd(&w, 0), 21 * MSS);
        assert_eq!(w.paths()[0].ssthresh, u64::MAX);
        // The second round is the 20 segments outstanding when the first ended, at 125 ms.
        // After 19 ACKs the window is 40 segments; the 20th ends the round: diff = 40·25/125
        // = 8 > γ = 1, so cwnd = min(40, 40·100/125 + 1) = 33 segments and the path leaves
        // slow start.
        round(&mut w, 0, &[125; 20]);
        assert_eq!(cwnd(&w, 0), 33 * MSS);
        assert_eq!(w.paths()[0].ssthresh, 33 * MSS);
        assert!(!w.coupling().in_slow_start(w.paths(), 0));
    }

    #[test]
    fn queue_drain_when_the_queueing_delay_doubles() {
        let mut w = controller(1);
        in_ca(&mut w, 0, 20);
        // Round 1: 5 ms of queue (the smallest so far), diff 0.95: +1 → 21 segments.
        first_round(&mut w, 0, 100, &[105; 20]);
        assert_eq!(cwnd(&w, 0), 21 * MSS);
        // Round 2 (20 segments long): 10 ms of queue ≥ 2·5 ms. diff = 21·10/110 = 1.9: +1 →
        // 22 segments, then the drain: 22·100/(2·110) = 10 segments, below ssthresh (¾·21
        // segments): slow start resumes.
        round(&mut w, 0, &[110; 20]);
        assert_eq!(cwnd(&w, 0), 10 * MSS);
        assert_eq!(w.paths()[0].ssthresh, 15_750);
        assert!(w.coupling().in_slow_start(w.paths(), 0));
    }

    #[test]
    fn no_drain_without_a_queue_or_when_disabled() {
        // At the base RTT every round increases and nothing is drained.
        let mut w = controller(1);
        in_ca(&mut w, 0, 20);
        first_round(&mut w, 0, 100, &[100; 20]);
        round(&mut w, 0, &[100; 20]);
        round(&mut w, 0, &[100; 21]);
        assert_eq!(cwnd(&w, 0), 23 * MSS);
        // The doubling queue of the drain test, with draining off: +1 twice.
        let config = WvegasConfig {
            queue_drain: false,
            ..WvegasConfig::default()
        };
        let mut w = Windows::new(Wvegas::new(config), WindowConfig::default());
        w.add_path(MSS);
        in_ca(&mut w, 0, 20);
        first_round(&mut w, 0, 100, &[105; 20]);
        round(&mut w, 0, &[110; 20]);
        assert_eq!(cwnd(&w, 0), 22 * MSS);
    }

    #[test]
    fn a_drain_stops_at_one_segment() {
        // 2 segments, base 100 ms; rounds of three ACKs of 667 bytes. Round 1 at 101 ms:
        // diff = 2·1/101 → 0: +1 → 3 segments; smallest queue 1 ms. Round 2 at 1 s: diff =
        // 3·900/1000 = 2.7 → 2 < 10: +1 → 4 segments, then 900 ms ≥ 2·1 ms drains to
        // 4000·100/2000 = 200 bytes, held at the framework's floor of one segment.
        let mut w = controller(1);
        in_ca(&mut w, 0, 2);
        ack(&mut w, 0, MSS, Some(100));
        for (rtt_ms, after) in [(101, 3 * MSS), (1000, MSS)] {
            for _ in 0..3 {
                ack(&mut w, 0, 667, Some(rtt_ms));
            }
            assert_eq!(cwnd(&w, 0), after);
        }
    }

    #[test]
    fn alpha_is_total_alpha_split_by_rate_within_a_group() {
        // Rates 600, 300 and 100 (any unit) in group 0: α = 10·0.6, 10·0.3, max(2, 10·0.1).
        let mut w = controller(4);
        w.set_group(PathId(3), 1);
        let mut v = w.coupling().clone();
        for (j, rate) in [600.0, 300.0, 100.0, 500.0].into_iter().enumerate() {
            v.per_path[j].rate_bytes_per_s = rate;
        }
        let alphas: Vec<u64> = (0..4)
            .map(|j| v.weighted_alpha_pkts(w.paths(), j))
            .collect();
        assert_eq!(alphas, [6, 3, 2, 10], "path 3 is alone in group 1");
        // Two paths of equal rate share total_alpha equally.
        v.per_path[1].rate_bytes_per_s = 600.0;
        v.per_path[2].rate_bytes_per_s = 0.0;
        assert_eq!(v.weighted_alpha_pkts(w.paths(), 0), 5);
        // A path without a rate keeps its α.
        assert_eq!(v.weighted_alpha_pkts(w.paths(), 2), 2);
    }

    #[test]
    fn weights_couple_paths_of_one_group_only() {
        // Paths 0 and 1 in group 0 (30 and 10 segments), path 2 alone in group 1 (50
        // segments); all at their base RTT of 100 ms, so every round increases.
        let mut w = controller(3);
        w.set_group(PathId(2), 1);
        in_ca(&mut w, 0, 30);
        in_ca(&mut w, 1, 10);
        in_ca(&mut w, 2, 50);
        assert_eq!(w.coupling().alpha_pkts(0), 2, "initial α");
        first_round(&mut w, 2, 100, &[100; 50]);
        assert_eq!(w.coupling().alpha_pkts(2), 10, "alone in its group");
        // Path 0 first: its rate is the only one in group 0.
        first_round(&mut w, 0, 100, &[100; 30]);
        assert_eq!(w.coupling().alpha_pkts(0), 10);
        // Path 1: 10/(30 + 10) of 10 = 2.5 → 2.
        first_round(&mut w, 1, 100, &[100; 10]);
        assert_eq!(w.coupling().alpha_pkts(1), 2);
        // Path 0 again, now at 31 segments: 10·310/(310 + 100) = 7.56 → 7. Had group 1's
        // 500 counted it would be 3.
        round(&mut w, 0, &[100; 30]);
        assert_eq!(w.coupling().alpha_pkts(0), 7);
        assert_eq!(
            w.metrics(PathId(0)).alg_state,
            Some(("alpha", 7.0)),
            "traces show α"
        );
        assert_eq!(w.coupling().alpha_pkts(2), 10);
    }

    #[test]
    fn base_rtt_is_the_smallest_sample_ever_seen() {
        let mut w = controller(2);
        assert_eq!(w.coupling().base_rtt(0), None);
        for r in [120, 100, 130] {
            ack(&mut w, 0, MSS, Some(r));
        }
        assert_eq!(w.coupling().base_rtt(0), Some(Dur::from_ms(100)));
        ack(&mut w, 0, MSS, None);
        ack(&mut w, 0, MSS, Some(0));
        assert_eq!(
            w.coupling().base_rtt(0),
            Some(Dur::from_ms(100)),
            "no sample, or a zero one, changes nothing"
        );
        ack(&mut w, 0, MSS, Some(90));
        assert_eq!(w.coupling().base_rtt(0), Some(Dur::from_ms(90)));
        assert_eq!(w.coupling().base_rtt(1), None, "per path");
        // A loss keeps the base RTT.
        w.on_congestion_event(
            PathId(0),
            CongestionEvent::FastRetransmit {
                flight_bytes: 20 * MSS,
            },
        );
        assert_eq!(w.coupling().base_rtt(0), Some(Dur::from_ms(90)));
    }

    #[test]
    fn a_loss_halves_and_restarts_the_round_and_the_weight() {
        let mut w = controller(1);
        in_ca(&mut w, 0, 20);
        first_round(&mut w, 0, 100, &[100; 20]);
        assert_eq!(w.coupling().alpha_pkts(0), 10);
        w.on_congestion_event(
            PathId(0),
            CongestionEvent::Timeout {
                flight_bytes: 21 * MSS,
                repeated: false,
            },
        );
        // The framework's response: ssthresh = flight/2, cwnd = 1 segment.
        assert_eq!(w.paths()[0].ssthresh, 10_500);
        assert_eq!(cwnd(&w, 0), MSS);
        // The next ACK restarts the round with the initial α and grows the window as slow
        // start does.
        ack(&mut w, 0, MSS, Some(100));
        assert_eq!(w.coupling().alpha_pkts(0), 2);
        assert_eq!(cwnd(&w, 0), 2 * MSS);
    }

    #[test]
    fn registered_as_wvegas() {
        assert_eq!("wVegas".parse::<CcKind>().unwrap(), CcKind::Wvegas);
        assert_eq!(CcKind::Wvegas.to_string(), "wvegas");
        assert!(CcKind::ALL.contains(&CcKind::Wvegas));
        let mut c = CcKind::Wvegas.build(WindowConfig::default());
        let p = c.add_path(MSS);
        assert_eq!(c.window(p), 10 * MSS);
        assert_eq!(c.metrics(p).alg_state, Some(("alpha", 2.0)));
    }
}
