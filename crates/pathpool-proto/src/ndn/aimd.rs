//! The single-window NDN consumers PTP is compared with or tested against (issue 22; spec
//! 004 §5): one window W of Interests for the whole content, whatever paths the network
//! takes, grown by 1/W per Data (one per window of Data) and halved, at least to 1, on
//! their own congestion signals:
//!
//! * **ICP** (timer-based, the paper's [23]; cited, not compared): an Interest timeout;
//! * **RAAQM** (Sol. 2 and 4): each Data, with probability p from its route's last 30 RTTs
//!   ([`RouteRtts`]: p = 1e-5 + 0.02·(R − R_min)/(R_max − R_min)), and a timeout; its cuts
//!   multiply the window by its variant's β (1/2, or hicn's 0.8);
//! * **RIC**, CHoPCoP's receiver (Sol. 3): a Data marked CE by a router's REM queue, and a
//!   timeout.
//!
//! Cuts by marks and timeouts come at most once per RTT (the smoothed RTT, or the Interest
//! timeout before any sample), so that one congestion episode halves the window once; RAAQM's
//! probabilistic cuts are its own per-Data draws. A timed-out SEQ is asked for again before
//! any new one.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use pathpool_core::hash::FxHashMap;
use pathpool_core::rtt::{RttConfig, RttEstimator};
use pathpool_core::{Dur, Rng, Time};

use super::raaqm::{RaaqmParams, RaaqmVariant, RouteRtts};

/// Which consumer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AimdLaw {
    /// ICP: timeouts only.
    Icp,
    /// RAAQM: per-route RTT-driven random cuts, and timeouts.
    Raaqm,
    /// RIC: CE marks, and timeouts.
    Ric,
}

/// A single-window consumer's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimdConfig {
    /// The law.
    pub law: AimdLaw,
    /// SEQs to fetch: 0..packets.
    pub packets: u64,
    /// How long an Interest waits for its Data before its SEQ is asked for again (RAAQM's
    /// Interest lifetime, 1 s).
    pub timeout: Dur,
    /// The window's largest value, Interests.
    pub max_window: f64,
    /// RAAQM's constants (for the other laws, unused).
    pub raaqm: RaaqmParams,
}

impl AimdConfig {
    /// `law` fetching `packets` SEQs with a 1 s timeout and no window limit below 10⁶;
    /// RAAQM with the ndnSIM port's constants.
    #[must_use]
    pub fn new(law: AimdLaw, packets: u64) -> Self {
        AimdConfig {
            law,
            packets,
            timeout: Dur::from_secs(1),
            max_window: 1e6,
            raaqm: RaaqmVariant::Ndnsim.params(),
        }
    }

    /// RAAQM fetching `packets` SEQs with `variant`'s constants (and its lifetime as the
    /// timeout).
    #[must_use]
    pub fn raaqm(packets: u64, variant: RaaqmVariant) -> Self {
        let raaqm = variant.params();
        AimdConfig {
            timeout: raaqm.lifetime,
            raaqm,
            ..AimdConfig::new(AimdLaw::Raaqm, packets)
        }
    }
}

/// What the consumer counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AimdStats {
    /// Interests sent (resends included).
    pub interests: u64,
    /// Interests that timed out.
    pub timeouts: u64,
    /// Window cuts.
    pub cuts: u64,
    /// Data that arrived marked CE.
    pub marked: u64,
    /// Data for SEQs not pending (late or repeated).
    pub duplicates: u64,
    /// NACKs received.
    pub nacks: u64,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    sent_at: Time,
    deadline: Time,
    resent: bool,
}

/// One single-window download.
#[derive(Clone, Debug)]
pub struct AimdConsumer {
    config: AimdConfig,
    window: f64,
    next_new: u64,
    received: Vec<bool>,
    received_count: u64,
    asked: Vec<bool>,
    pending: FxHashMap<u64, Pending>,
    deadlines: BinaryHeap<Reverse<(Time, u64)>>,
    resend: VecDeque<u64>,
    rtt: RttEstimator,
    routes: FxHashMap<u64, RouteRtts>,
    last_cut: Option<Time>,
    stats: AimdStats,
}

impl AimdConsumer {
    /// A download of `config.packets` SEQs with a window of 1.
    #[must_use]
    pub fn new(config: AimdConfig) -> Self {
        let n = usize::try_from(config.packets).unwrap_or(usize::MAX);
        AimdConsumer {
            window: 1.0,
            next_new: 0,
            received: vec![false; n],
            received_count: 0,
            asked: vec![false; n],
            pending: FxHashMap::default(),
            deadlines: BinaryHeap::new(),
            resend: VecDeque::new(),
            rtt: RttEstimator::new(RttConfig::default()),
            routes: FxHashMap::default(),
            last_cut: None,
            stats: AimdStats::default(),
            config,
        }
    }

    /// The window, Interests.
    #[must_use]
    pub fn window(&self) -> f64 {
        self.window
    }

    /// Interests in flight.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Whether every SEQ has arrived.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.received_count == self.config.packets
    }

    /// SEQs received.
    #[must_use]
    pub fn received(&self) -> u64 {
        self.received_count
    }

    /// Its counters.
    #[must_use]
    pub fn stats(&self) -> AimdStats {
        self.stats
    }

    /// The next SEQ to ask for at `now`, if the window has room: a timed-out one first.
    pub fn poll_transmit(&mut self, now: Time) -> Option<u64> {
        if (self.pending.len() + 1) as f64 > self.window {
            return None;
        }
        let seq = loop {
            match self.resend.pop_front() {
                Some(s) if self.received[s as usize] || self.pending.contains_key(&s) => {}
                Some(s) => break s,
                None if self.next_new < self.config.packets => {
                    self.next_new += 1;
                    break self.next_new - 1;
                }
                None => return None,
            }
        };
        let resent = std::mem::replace(&mut self.asked[seq as usize], true);
        let deadline = now + self.config.timeout;
        self.pending.insert(
            seq,
            Pending {
                sent_at: now,
                deadline,
                resent,
            },
        );
        self.deadlines.push(Reverse((deadline, seq)));
        self.stats.interests += 1;
        Some(seq)
    }

    /// Halves the window (RAAQM: times β), at least to 1, at most once per RTT unless
    /// `always`.
    fn cut(&mut self, now: Time, always: bool) {
        let rtt = self.rtt.srtt().unwrap_or(self.config.timeout);
        if !always && self.last_cut.is_some_and(|t| now < t + rtt) {
            return;
        }
        self.last_cut = Some(now);
        let beta = match self.config.law {
            AimdLaw::Raaqm => self.config.raaqm.beta,
            AimdLaw::Icp | AimdLaw::Ric => 0.5,
        };
        self.window = (self.window * beta).max(1.0);
        self.stats.cuts += 1;
    }

    /// The Data of `seq` arrived at `now` over the route `route_label`, marked `ce`; `rng`
    /// draws RAAQM's cut.
    pub fn on_data(&mut self, now: Time, seq: u64, route_label: u64, ce: bool, rng: &mut Rng) {
        let Some(p) = self.pending.remove(&seq) else {
            self.stats.duplicates += 1;
            return;
        };
        if !self.received[seq as usize] {
            self.received[seq as usize] = true;
            self.received_count += 1;
        }
        let sample = (!p.resent).then(|| now.saturating_since(p.sent_at));
        if let Some(r) = sample {
            self.rtt.on_sample(r);
        }
        if ce {
            self.stats.marked += 1;
        }
        self.window = (self.window + 1.0 / self.window).min(self.config.max_window);
        match self.config.law {
            AimdLaw::Icp => {}
            AimdLaw::Raaqm => {
                if let Some(r) = sample {
                    let prob = self
                        .routes
                        .entry(route_label)
                        .or_default()
                        .sample(r, &self.config.raaqm);
                    if rng.bernoulli(prob) {
                        self.cut(now, true);
                    }
                }
            }
            AimdLaw::Ric => {
                if ce {
                    self.cut(now, false);
                }
            }
        }
    }

    /// A NACK refused the Interest for `seq` at `now`: it is asked for again, and the
    /// window is cut as for a timeout (at most once per RTT).
    pub fn on_nack(&mut self, now: Time, seq: u64) {
        if self.pending.remove(&seq).is_none() {
            return;
        }
        self.resend.push_back(seq);
        self.stats.nacks += 1;
        self.cut(now, false);
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadlines.peek().map(|Reverse((t, _))| *t)
    }

    /// The Interests expired at `now` are given up and their SEQs asked for again; the
    /// window is cut once.
    pub fn handle_timeout(&mut self, now: Time) {
        let mut any = false;
        while let Some(&Reverse((t, seq))) = self.deadlines.peek() {
            if t > now {
                break;
            }
            self.deadlines.pop();
            if self.pending.get(&seq).is_none_or(|p| p.deadline != t) {
                continue;
            }
            self.pending.remove(&seq);
            self.resend.push_back(seq);
            self.stats.timeouts += 1;
            any = true;
        }
        if any {
            self.cut(now, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert, proptest};

    /// Runs `c` over one route where SEQ s takes `rtt(s)`, `lost(seq, attempt)` loses an
    /// Interest and `ce(seq)` marks a Data; returns the time it completed.
    fn run(
        c: &mut AimdConsumer,
        rtt: impl Fn(u64) -> Dur,
        lost: impl Fn(u64, u32) -> bool,
        ce: impl Fn(u64) -> bool,
    ) -> Time {
        let mut rng = Rng::seed_from_u64(3);
        let mut now = Time::ZERO;
        let mut events: Vec<(Time, u64, u64)> = Vec::new();
        let mut attempts: FxHashMap<u64, u32> = FxHashMap::default();
        let mut n = 0u64;
        loop {
            while let Some(seq) = c.poll_transmit(now) {
                // Sent only with room: what is in flight fits the window.
                assert!(c.in_flight() as f64 <= c.window() + 1e-9);
                let a = attempts.entry(seq).or_insert(0);
                *a += 1;
                n += 1;
                if !lost(seq, *a) {
                    events.push((now + rtt(seq), n, seq));
                }
            }
            if c.is_complete() {
                return now;
            }
            events.sort_by_key(|e| Reverse((e.0, e.1)));
            let next = [events.last().map(|e| e.0), c.poll_timeout()]
                .into_iter()
                .flatten()
                .min()
                .expect("something is pending");
            now = next;
            while events.last().is_some_and(|e| e.0 <= now) {
                let (_, _, seq) = events.pop().unwrap();
                c.on_data(now, seq, 7, ce(seq), &mut rng);
            }
            c.handle_timeout(now);
        }
    }

    #[test]
    fn the_window_grows_by_one_per_window_of_data() {
        let mut c = AimdConsumer::new(AimdConfig::new(AimdLaw::Icp, 1000));
        run(&mut c, |_| Dur::from_ms(10), |_, _| false, |_| false);
        // 1 + Σ 1/W over 1000 Data: W² grows by about 2 per Data.
        let w = c.window();
        assert!((44.0..46.0).contains(&w), "{w}");
        assert_eq!(c.stats().cuts, 0);
    }

    #[test]
    fn icp_halves_once_for_a_burst_of_timeouts_and_resends() {
        let mut c = AimdConsumer::new(AimdConfig::new(AimdLaw::Icp, 400));
        run(
            &mut c,
            |_| Dur::from_ms(10),
            |seq, a| (200..210).contains(&seq) && a == 1,
            |_| false,
        );
        let s = c.stats();
        assert_eq!((s.timeouts, s.cuts), (10, 1), "{s:?}");
        assert_eq!(s.interests, 410);
    }

    #[test]
    fn ric_cuts_once_per_rtt_on_marks() {
        let mut c = AimdConsumer::new(AimdConfig::new(AimdLaw::Ric, 400));
        // Five marked Data in a row (one window's worth at most): one cut.
        run(
            &mut c,
            |_| Dur::from_ms(10),
            |_, _| false,
            |seq| (300..305).contains(&seq),
        );
        let s = c.stats();
        assert_eq!((s.marked, s.cuts), (5, 1), "{s:?}");
    }

    #[test]
    fn raaqm_cuts_more_as_the_rtt_nears_its_largest() {
        // A constant RTT is always its own minimum: p = p_min, and in 3000 Data a cut is
        // unlikely (p = 1e-5).
        let mut c = AimdConsumer::new(AimdConfig::new(AimdLaw::Raaqm, 3000));
        run(&mut c, |_| Dur::from_ms(10), |_, _| false, |_| false);
        assert_eq!(c.stats().cuts, 0);
        assert!(c.window() > 70.0, "{}", c.window());
        // Every other SEQ at 30 ms against 10: half the Data draw p_max = 0.02001, about 30
        // cuts in 3000 Data (binomial, standard deviation 5.5).
        let mut c = AimdConsumer::new(AimdConfig::new(AimdLaw::Raaqm, 3000));
        let rtt = |seq: u64| Dur::from_ms(if seq % 2 == 0 { 10 } else { 30 });
        run(&mut c, rtt, |_, _| false, |_| false);
        let cuts = c.stats().cuts;
        assert!((14..=46).contains(&cuts), "{cuts}");
    }

    proptest! {
        /// The window stays at least 1, nothing is sent beyond it (checked in `run`), and
        /// the download completes whatever is lost once.
        #[test]
        fn the_window_bounds_what_is_in_flight(
            losses in proptest::collection::vec(any::<u8>(), 1..40),
            law in 0u8..3,
        ) {
            let law = [AimdLaw::Icp, AimdLaw::Raaqm, AimdLaw::Ric][law as usize];
            let mut c = AimdConsumer::new(AimdConfig::new(law, 300));
            let lost = move |seq: u64, a: u32| a == 1 && losses.contains(&((seq % 256) as u8));
            run(&mut c, |_| Dur::from_ms(5), lost, |seq| seq % 17 == 0);
            prop_assert!(c.window() >= 1.0);
            prop_assert!(c.is_complete());
            prop_assert!(c.in_flight() == 0);
        }
    }
}
