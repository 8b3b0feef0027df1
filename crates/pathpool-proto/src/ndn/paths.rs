//! The PTP consumer's paths (spec 004 §3.5; issue 22): every tag its probes bring back is a
//! path; at most N are in use. Every T one in-use path may be swapped for an unused one, as
//! the [`Selection`] says (the paper's evaluation: the one with the least goodput over that
//! T for a random unused one); a NACK takes its path out of use at once and a random unused
//! one replaces it; the in-use set changes at most once per T.

use pathpool_core::{Dur, Rng, Time};

/// Which in-use path a review swaps for which unused one (the paper's §4.C and appendix).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// The in-use path with the least goodput over the last T, for a random unused one (the
    /// paper's evaluation; default).
    #[default]
    Bandwidth,
    /// A random in-use path for a random unused one.
    Random,
    /// The in-use path of most hops for the unused one of fewest, if it has fewer.
    Hops,
    /// The in-use path of greatest mean RTT for the unused one of least, if it is less.
    Latency,
    /// Towards the N paths whose mean RTTs, sorted, vary least (the appendix's eq. 5 with
    /// the window's own mean, /W): an in-use path outside that window for one inside it.
    LatencyVariance,
}

/// The path set's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathSetConfig {
    /// N, the most paths in use (10 in the paper).
    pub max_paths: usize,
    /// T, the review period and the least time between two changes (10 s in the paper).
    pub period: Dur,
    /// How a review chooses its swap.
    pub selection: Selection,
}

impl Default for PathSetConfig {
    fn default() -> Self {
        PathSetConfig {
            max_paths: 10,
            period: Dur::from_secs(10),
            selection: Selection::Bandwidth,
        }
    }
}

/// One path: its tag and how it is doing.
#[derive(Clone, Debug, PartialEq)]
pub struct PathInfo {
    /// The tag (a stack of face ids, the first hop's on top: the last element).
    pub tag: Vec<u32>,
    /// In use now.
    pub in_use: bool,
    /// A NACK named it: never used again.
    pub broken: bool,
    /// Payload bytes received on it since the last review.
    pub period_bytes: u64,
    /// Σ of its RTT samples (probes' and its own producer Data's), seconds.
    pub rtt_sum_s: f64,
    /// RTT samples taken.
    pub rtt_samples: u64,
}

impl PathInfo {
    /// Its mean RTT, seconds, if sampled.
    #[must_use]
    pub fn mean_rtt_s(&self) -> Option<f64> {
        (self.rtt_samples > 0).then(|| self.rtt_sum_s / self.rtt_samples as f64)
    }
}

/// A change of the in-use set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathChange {
    /// Path `.0` went into use.
    Started(usize),
    /// Path `.0` went out of use.
    Stopped(usize),
}

/// The paths of one consumer.
#[derive(Clone, Debug)]
pub struct PathSet {
    config: PathSetConfig,
    paths: Vec<PathInfo>,
    /// When the in-use set last changed (a swap or a replacement).
    last_change: Option<Time>,
    /// The next review.
    next_review: Time,
    /// In-use places a NACK freed and no change could fill yet.
    owed: usize,
}

impl PathSet {
    /// No path yet; the first review is one period after `now`.
    #[must_use]
    pub fn new(config: PathSetConfig, now: Time) -> Self {
        PathSet {
            config,
            paths: Vec::new(),
            last_change: None,
            next_review: now + config.period,
            owed: 0,
        }
    }

    /// The paths, by index.
    #[must_use]
    pub fn paths(&self) -> &[PathInfo] {
        &self.paths
    }

    /// The paths in use.
    pub fn in_use(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.paths.len()).filter(|&i| self.paths[i].in_use)
    }

    fn in_use_count(&self) -> usize {
        self.in_use().count()
    }

    fn may_change(&self, now: Time) -> bool {
        self.last_change
            .is_none_or(|t| now >= t + self.config.period)
    }

    /// A probe's Data brought `tag`: a new path if the tag is new (its index), in use if
    /// fewer than N are (which is not a change; it fills a place a NACK freed).
    pub fn on_probe_tag(&mut self, tag: &[u32]) -> Option<usize> {
        if self.paths.iter().any(|p| p.tag == tag) {
            return None;
        }
        let in_use = self.in_use_count() < self.config.max_paths;
        if in_use {
            self.owed = self.owed.saturating_sub(1);
        }
        self.paths.push(PathInfo {
            tag: tag.to_vec(),
            in_use,
            broken: false,
            period_bytes: 0,
            rtt_sum_s: 0.0,
            rtt_samples: 0,
        });
        Some(self.paths.len() - 1)
    }

    /// The path whose tag is `tag`.
    #[must_use]
    pub fn find(&self, tag: &[u32]) -> Option<usize> {
        self.paths.iter().position(|p| p.tag == tag)
    }

    /// An RTT sample of path `p` (a probe's on its tag, or a producer Data's on it).
    pub fn on_rtt(&mut self, p: usize, rtt: Dur) {
        self.paths[p].rtt_sum_s += rtt.as_secs_f64();
        self.paths[p].rtt_samples += 1;
    }

    /// `bytes` of payload arrived on path `p`.
    pub fn on_data(&mut self, p: usize, bytes: u64) {
        self.paths[p].period_bytes += bytes;
    }

    /// A NACK came back on path `p` at `now`: it stops at once and never returns; a random
    /// unused path replaces it now if the in-use set may change, else at the next review.
    pub fn on_nack(&mut self, now: Time, p: usize, rng: &mut Rng) -> Vec<PathChange> {
        let path = &mut self.paths[p];
        if path.broken {
            return Vec::new();
        }
        path.broken = true;
        let mut changes = Vec::new();
        if path.in_use {
            path.in_use = false;
            changes.push(PathChange::Stopped(p));
            self.owed += 1;
        }
        if self.owed > 0 && self.may_change(now) {
            if let Some(q) = self.random_unused(rng) {
                self.start(now, q, &mut changes);
            }
        }
        changes
    }

    /// The review's swap, (in-use path out, unused path in), as the selection says.
    fn choose_swap(&self, rng: &mut Rng) -> Option<(usize, usize)> {
        let in_use: Vec<usize> = self.in_use().collect();
        let unused: Vec<usize> = (0..self.paths.len())
            .filter(|&i| !self.paths[i].in_use && !self.paths[i].broken)
            .collect();
        if in_use.is_empty() || unused.is_empty() {
            return None;
        }
        let p = &self.paths;
        let pick = |v: &[usize], rng: &mut Rng| v[rng.below(v.len() as u64) as usize];
        let rtt = |i: usize| p[i].mean_rtt_s().unwrap_or(f64::INFINITY);
        match self.config.selection {
            Selection::Bandwidth => {
                let w = *in_use.iter().min_by_key(|&&i| (p[i].period_bytes, i))?;
                Some((w, pick(&unused, rng)))
            }
            Selection::Random => Some((pick(&in_use, rng), pick(&unused, rng))),
            Selection::Hops => {
                let w = *in_use
                    .iter()
                    .max_by_key(|&&i| (p[i].tag.len(), usize::MAX - i))?;
                let b = *unused.iter().min_by_key(|&&i| (p[i].tag.len(), i))?;
                (p[b].tag.len() < p[w].tag.len()).then_some((w, b))
            }
            Selection::Latency => {
                let w = *in_use
                    .iter()
                    .max_by(|&&a, &&b| rtt(a).total_cmp(&rtt(b)).then(b.cmp(&a)))?;
                let b = *unused
                    .iter()
                    .min_by(|&&a, &&b| rtt(a).total_cmp(&rtt(b)).then(a.cmp(&b)))?;
                (rtt(b) < rtt(w)).then_some((w, b))
            }
            Selection::LatencyVariance => {
                let target = self.least_variance_window();
                let w = *in_use.iter().find(|i| !target.contains(i))?;
                let b = *target.iter().find(|&&i| unused.contains(&i))?;
                Some((w, b))
            }
        }
    }

    /// Eq. (5) of the paper's appendix, with the window's own mean (its "/10" read as /W):
    /// the paths with an RTT, sorted by mean RTT, cut in windows of W = N consecutive ones;
    /// the window of least Σ (rtt − mean)².
    fn least_variance_window(&self) -> Vec<usize> {
        let mut sampled: Vec<(f64, usize)> = (0..self.paths.len())
            .filter(|&i| !self.paths[i].broken)
            .filter_map(|i| Some((self.paths[i].mean_rtt_s()?, i)))
            .collect();
        sampled.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let w = self.config.max_paths.min(sampled.len());
        if w == 0 {
            return Vec::new();
        }
        let spread = |win: &[(f64, usize)]| {
            let mean = win.iter().map(|x| x.0).sum::<f64>() / win.len() as f64;
            win.iter().map(|x| (x.0 - mean).powi(2)).sum::<f64>()
        };
        let best = (0..=sampled.len() - w)
            .min_by(|&a, &b| {
                spread(&sampled[a..a + w])
                    .total_cmp(&spread(&sampled[b..b + w]))
                    .then(a.cmp(&b))
            })
            .unwrap_or(0);
        sampled[best..best + w].iter().map(|x| x.1).collect()
    }

    fn random_unused(&self, rng: &mut Rng) -> Option<usize> {
        let unused: Vec<usize> = (0..self.paths.len())
            .filter(|&i| !self.paths[i].in_use && !self.paths[i].broken)
            .collect();
        (!unused.is_empty()).then(|| unused[rng.below(unused.len() as u64) as usize])
    }

    fn start(&mut self, now: Time, q: usize, changes: &mut Vec<PathChange>) {
        self.paths[q].in_use = true;
        self.owed = self.owed.saturating_sub(1);
        self.last_change = Some(now);
        changes.push(PathChange::Started(q));
    }

    /// When the next review is due.
    #[must_use]
    pub fn poll_timeout(&self) -> Time {
        self.next_review
    }

    /// The review at `now` (every T): a place a NACK freed is filled if it could not be
    /// then; otherwise, if the in-use set may change and an unused path exists, the in-use
    /// path with the least goodput over the period (the first such) is swapped for a random
    /// unused one. The goodputs start again from 0.
    pub fn handle_timeout(&mut self, now: Time, rng: &mut Rng) -> Vec<PathChange> {
        if now < self.next_review {
            return Vec::new();
        }
        self.next_review = now + self.config.period;
        let mut changes = Vec::new();
        if self.may_change(now) {
            if self.owed > 0 {
                if let Some(q) = self.random_unused(rng) {
                    self.start(now, q, &mut changes);
                }
            } else if let Some((w, q)) = self.choose_swap(rng) {
                self.paths[w].in_use = false;
                changes.push(PathChange::Stopped(w));
                self.owed += 1;
                self.start(now, q, &mut changes);
            }
        }
        for p in &mut self.paths {
            p.period_bytes = 0;
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{prop_assert, proptest};

    fn set(n: usize) -> PathSet {
        PathSet::new(
            PathSetConfig {
                max_paths: n,
                period: Dur::from_secs(10),
                selection: Selection::Bandwidth,
            },
            Time::ZERO,
        )
    }

    #[test]
    fn new_tags_fill_n_places_and_the_rest_wait() {
        let mut s = set(2);
        assert_eq!(s.on_probe_tag(&[1, 2]), Some(0));
        assert_eq!(s.on_probe_tag(&[1, 2]), None);
        assert_eq!(s.on_probe_tag(&[3, 1]), Some(1));
        assert_eq!(s.on_probe_tag(&[2, 1]), Some(2));
        assert_eq!(s.in_use().collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn the_slowest_in_use_path_is_swapped_each_period() {
        let mut s = set(2);
        let mut rng = Rng::seed_from_u64(1);
        for t in [[1], [2], [3]] {
            s.on_probe_tag(&t);
        }
        s.on_data(0, 5000);
        s.on_data(1, 1000);
        assert!(s.handle_timeout(Time::from_secs(9), &mut rng).is_empty());
        let c = s.handle_timeout(Time::from_secs(10), &mut rng);
        assert_eq!(c, [PathChange::Stopped(1), PathChange::Started(2)]);
        assert_eq!(s.in_use().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(s.poll_timeout(), Time::from_secs(20));
    }

    #[test]
    fn a_nack_stops_its_path_at_once_and_a_change_waits_for_its_period() {
        let mut s = set(2);
        let mut rng = Rng::seed_from_u64(1);
        for t in [[1], [2], [3], [4]] {
            s.on_probe_tag(&t);
        }
        let c = s.on_nack(Time::from_secs(1), 0, &mut rng);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0], PathChange::Stopped(0));
        let PathChange::Started(first) = c[1] else {
            panic!("{c:?}")
        };
        // A second NACK within T: its path stops, the replacement waits.
        let c = s.on_nack(Time::from_secs(2), 1, &mut rng);
        assert_eq!(c, [PathChange::Stopped(1)]);
        assert_eq!(s.in_use().collect::<Vec<_>>(), [first]);
        // The review at 10 s is less than T after the change at 1 s: still waiting.
        assert!(s.handle_timeout(Time::from_secs(10), &mut rng).is_empty());
        let c = s.handle_timeout(Time::from_secs(20), &mut rng);
        assert_eq!(c.len(), 1);
        assert_eq!(s.in_use().count(), 2);
        assert!(s.in_use().all(|i| !s.paths()[i].broken));
        // A new tag goes into use at once while fewer than N are.
        let first = s.in_use().next().unwrap();
        s.on_nack(Time::from_secs(21), first, &mut rng);
        assert_eq!(s.in_use().count(), 1);
        let fresh = s.on_probe_tag(&[9]).unwrap();
        assert!(s.paths()[fresh].in_use);
        assert!(s.handle_timeout(Time::from_secs(40), &mut rng).len() <= 2);
        assert!(s.in_use().count() <= 2);
    }

    /// A set of `tags` (with `rtts_ms` samples each) under `selection`, N = 2, the first two
    /// in use; the swap the first review makes.
    fn swap(selection: Selection, tags: &[&[u32]], rtts_ms: &[&[u64]]) -> Vec<PathChange> {
        let mut s = PathSet::new(
            PathSetConfig {
                max_paths: 2,
                period: Dur::from_secs(10),
                selection,
            },
            Time::ZERO,
        );
        for (t, rtts) in tags.iter().zip(rtts_ms) {
            let p = s.on_probe_tag(t).unwrap();
            for &ms in *rtts {
                s.on_rtt(p, Dur::from_ms(ms));
            }
        }
        s.handle_timeout(Time::from_secs(10), &mut Rng::seed_from_u64(1))
    }

    #[test]
    fn the_appendix_selections_swap_towards_their_aim() {
        use PathChange::{Started, Stopped};
        let tags: [&[u32]; 4] = [&[1, 1, 1], &[2, 2], &[3], &[4, 4, 4, 4]];
        let rtts: [&[u64]; 4] = [&[50], &[30, 34], &[80], &[20]];
        // Hops: path 0 (3 hops) out, path 2 (1 hop) in.
        assert_eq!(
            swap(Selection::Hops, &tags, &rtts),
            [Stopped(0), Started(2)]
        );
        // Latency: path 0 (50 ms) out, path 3 (20 ms) in.
        assert_eq!(
            swap(Selection::Latency, &tags, &rtts),
            [Stopped(0), Started(3)]
        );
        // Variance: sorted 20, 32, 50, 80: windows of 2 spread 72, 162, 450: paths 3 and 1.
        assert_eq!(
            swap(Selection::LatencyVariance, &tags, &rtts),
            [Stopped(0), Started(3)]
        );
        // Nothing better outside: no swap.
        let few: [&[u64]; 4] = [&[10], &[10], &[80], &[90]];
        assert!(swap(Selection::Latency, &tags, &few).is_empty());
        assert!(swap(Selection::LatencyVariance, &tags, &few).is_empty());
        let short: [&[u32]; 3] = [&[1], &[2], &[3, 3]];
        assert!(swap(Selection::Hops, &short, &rtts[..3]).is_empty());
        // Random: some in-use path for some unused one.
        let c = swap(Selection::Random, &tags, &rtts);
        assert!(
            matches!(c[..], [Stopped(a), Started(b)] if a < 2 && b >= 2),
            "{c:?}"
        );
    }

    proptest! {
        /// Issue 22, acceptance 2: at most N paths in use, at most one change (a path
        /// started in place of another) per T, and no broken path in use.
        #[test]
        fn at_most_n_in_use_and_one_change_per_period(
            n in 1usize..4,
            events in proptest::collection::vec((0u8..3, 0u32..8, 0u64..3000), 0..120),
        ) {
            let mut s = set(n);
            let mut rng = Rng::seed_from_u64(7);
            let mut now = Time::ZERO;
            let mut starts: Vec<Time> = Vec::new();
            for (kind, x, dt_ms) in events {
                now += Dur::from_ms(dt_ms);
                let changes = match kind {
                    0 => {
                        s.on_probe_tag(&[x, x / 2]);
                        Vec::new()
                    }
                    1 if !s.paths().is_empty() => {
                        let p = x as usize % s.paths().len();
                        s.on_nack(now, p, &mut rng)
                    }
                    _ => {
                        let first = s.in_use().next();
                        if let Some(p) = first {
                            s.on_data(p, u64::from(x) * 100);
                        }
                        s.handle_timeout(now, &mut rng)
                    }
                };
                for c in changes {
                    if let PathChange::Started(_) = c {
                        starts.push(now);
                    }
                }
                prop_assert!(s.in_use().count() <= n);
                prop_assert!(s.in_use().all(|i| !s.paths()[i].broken));
            }
            for w in starts.windows(2) {
                prop_assert!(w[1] >= w[0] + Dur::from_secs(10));
            }
        }
    }
}
