//! Jain's index sampled every `measure.fairness_interval` over the summary window (spec 001
//! §5.1: "Jain's index computed on the instantaneous throughput of the flows, sampled every
//! 10 ms ... then averaged over samples"; decision D290, `docs/metrics.md`).
//!
//! At each sample instant b = t0 + kΔ (k ≥ 1, b ≤ t1) the sampler takes every flow's
//! delivered-byte counter; a flow's throughput over [b − Δ, b] is the difference with the
//! previous instant. A flow counts in the sample if it was active over the whole interval:
//! it started at or before b − Δ, and it neither completed nor stopped before b. The state
//! is one counter per flow; nothing grows with the number of samples, and a sample reads
//! only the flows that have started and not ended (a run of many short flows, such as
//! Poisson arrivals, has few of them at a time).
//!
//! The same samples also give a second reading of "instantaneous throughput": each counted
//! flow's mean throughput since it started (or since the window opened, if later), as a
//! throughput counter read every 10 ms in an ns-3 script gives it. The document does not say
//! which it used; both are reported (D301).

use pathpool_core::{Dur, Time};

use crate::metrics::SampledJain;

/// The online state of the sampled Jain index.
#[derive(Clone, Debug)]
pub(crate) struct FairnessSampler {
    interval: Dur,
    /// The summary window's end: no sample after it.
    until: Time,
    /// The next sample instant.
    pub(crate) next: Option<Time>,
    /// Whether the next instant opens a window that starts after zero (and only takes the
    /// counters).
    baseline_pending: bool,
    /// Flow indices by start time, and how many of them have joined `live`.
    by_start: Vec<(Time, u32)>,
    joined: usize,
    /// The window's opening instant.
    opens: Time,
    /// Flows that have started and not ended, in the order they joined, with what they had
    /// delivered at the previous instant, and the bytes and instant their mean since start
    /// counts from.
    live: Vec<LiveFlow>,
    pub(crate) jain: SampledJain,
    /// The same samples, on each flow's mean throughput since it started.
    pub(crate) jain_since_start: SampledJain,
}

#[derive(Clone, Copy, Debug)]
struct LiveFlow {
    flow: u32,
    last: u64,
    origin_bytes: u64,
    origin: Time,
}

/// The running sums of one sample's Jain index.
#[derive(Default)]
struct Sums {
    n: u64,
    sum: f64,
    sq: f64,
}

impl Sums {
    fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sq += x * x;
    }
}

impl FairnessSampler {
    /// Samples every `interval` over `window`. A window opening with the run starts from
    /// zero counters, as the summary window does.
    pub(crate) fn new(interval: Dur, window: (Time, Time)) -> Self {
        let first = if window.0 == Time::ZERO {
            window.0 + interval
        } else {
            window.0
        };
        FairnessSampler {
            interval,
            until: window.1,
            next: (first <= window.1).then_some(first),
            baseline_pending: window.0 > Time::ZERO,
            by_start: Vec::new(),
            joined: 0,
            opens: window.0,
            live: Vec::new(),
            jain: SampledJain::default(),
            jain_since_start: SampledJain::default(),
        }
    }

    /// Sets the flows' start times (in flow order).
    pub(crate) fn init(&mut self, starts: impl Iterator<Item = Time>) {
        self.by_start = starts.zip(0..).collect();
        self.by_start.sort_unstable();
        if !self.baseline_pending {
            // The window opens with the run: flows starting at zero count from zero bytes.
            self.join(Time::ZERO, |_| (None, 0));
        }
    }

    /// Adds the flows started by `now` that have not ended, with their counts now.
    fn join(&mut self, now: Time, mut read: impl FnMut(u32) -> (Option<Time>, u64)) {
        while let Some(&(start, i)) = self.by_start.get(self.joined) {
            if start > now {
                break;
            }
            self.joined += 1;
            let (ended, delivered) = read(i);
            if ended.is_none() {
                // A flow that started before the window opened counts from the opening.
                let (origin_bytes, origin) = if start < self.opens {
                    (delivered, self.opens)
                } else {
                    (0, start)
                };
                self.live.push(LiveFlow {
                    flow: i,
                    last: delivered,
                    origin_bytes,
                    origin,
                });
            }
        }
    }

    /// Takes the sample due at `now` (`self.next`): the index of the flows active over
    /// [now − interval, now], or, at a window's opening instant, only the counters.
    /// `read(i)` gives flow i's end (completion or stop, whichever came first, if it has
    /// come by now) and its payload bytes delivered in order so far.
    pub(crate) fn sample(&mut self, now: Time, mut read: impl FnMut(u32) -> (Option<Time>, u64)) {
        let next = now + self.interval;
        self.next = (next <= self.until).then_some(next);
        if !std::mem::take(&mut self.baseline_pending) {
            // Every live flow joined at an instant at or before now − interval, so it
            // started by then: it counts unless it ended before now.
            let (mut interval, mut since_start) = (Sums::default(), Sums::default());
            self.live.retain_mut(|f| {
                let (ended, delivered) = read(f.flow);
                let x = delivered.saturating_sub(f.last) as f64;
                f.last = delivered;
                if ended.is_none_or(|e| e >= now) {
                    interval.add(x);
                    // The flow joined at or before now − interval, after its origin.
                    let span = now.saturating_since(f.origin).as_secs_f64();
                    since_start.add(delivered.saturating_sub(f.origin_bytes) as f64 / span);
                }
                // Ended by now: inactive in every later interval.
                ended.is_none()
            });
            self.jain.add(interval.n, interval.sum, interval.sq);
            self.jain_since_start
                .add(since_start.n, since_start.sum, since_start.sq);
        }
        self.join(now, read);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Time {
        Time::ZERO + Dur::from_secs_f64(s)
    }

    /// Runs the sampler over flows given as (start, end, delivered at each whole second).
    fn run(window: (f64, f64), flows: &[(f64, Option<f64>, [u64; 5])]) -> SampledJain {
        run_both(window, flows).0
    }

    /// [`run`], with the since-start reading.
    fn run_both(
        window: (f64, f64),
        flows: &[(f64, Option<f64>, [u64; 5])],
    ) -> (SampledJain, SampledJain) {
        let mut s = FairnessSampler::new(Dur::from_secs(1), (at(window.0), at(window.1)));
        s.init(flows.iter().map(|f| at(f.0)));
        while let Some(now) = s.next {
            let k = now.saturating_since(Time::ZERO).as_secs_f64().round() as usize;
            s.sample(now, |i| {
                let (_, end, d) = flows[i as usize];
                (end.map(at).filter(|&e| e <= now), d[k])
            });
        }
        (s.jain, s.jain_since_start)
    }

    #[test]
    fn flows_count_while_active_over_the_whole_interval() {
        // A runs throughout; B completes at 2.5 s; C starts at 1 s.
        let flows = [
            (0.0, None, [0, 100, 200, 300, 350]),
            (0.0, Some(2.5), [0, 100, 400, 500, 500]),
            (1.0, None, [0, 0, 200, 300, 450]),
        ];
        // [0,1]: A, B at 100, 100 → 1. [1,2]: A, B, C at 100, 300, 200 → 600²/(3·140000)
        // = 6/7. [2,3]: B completed inside it: A, C at 100, 100 → 1. [3,4]: A, C at 50,
        // 150 → 200²/(2·25000) = 0.8.
        let j = run((0.0, 4.0), &flows);
        assert_eq!((j.samples(), j.skipped()), (4, 0));
        let expected = (1.0 + 360_000.0 / 420_000.0 + 1.0 + 0.8) / 4.0;
        assert!((j.mean().unwrap() - expected).abs() < 1e-15, "{j:?}");

        // From 1 s the counters at 1 s are the baseline: samples at 2, 3 and 4 s.
        let j = run((1.0, 4.0), &flows);
        assert_eq!((j.samples(), j.skipped()), (3, 0));
        let expected = (360_000.0 / 420_000.0 + 1.0 + 0.8) / 3.0;
        assert!((j.mean().unwrap() - expected).abs() < 1e-15, "{j:?}");

        // A alone after B completes: the samples with one active flow are skipped.
        let j = run((0.0, 4.0), &flows[..2]);
        assert_eq!((j.samples(), j.skipped()), (2, 2));
        assert_eq!(j.mean(), Some((1.0 + 0.8) / 2.0));
    }

    #[test]
    fn the_since_start_reading_divides_by_each_flows_age() {
        let flows = [
            (0.0, None, [0, 100, 200, 300, 350]),
            (0.0, Some(2.5), [0, 100, 400, 500, 500]),
            (1.0, None, [0, 0, 200, 300, 450]),
        ];
        let jain = |x: &[f64]| {
            let s: f64 = x.iter().sum();
            s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
        };
        // At 1 s: A, B at 100/1, 100/1. At 2 s: A 200/2, B 400/2, C 200/1. At 3 s (B done):
        // A 300/3, C 300/2. At 4 s: A 350/4, C 450/3.
        let expected =
            (1.0 + jain(&[100.0, 200.0, 200.0]) + jain(&[100.0, 150.0]) + jain(&[87.5, 150.0]))
                / 4.0;
        let (_, j) = run_both((0.0, 4.0), &flows);
        assert_eq!(j.samples(), 4);
        assert!((j.mean().unwrap() - expected).abs() < 1e-12, "{j:?}");
        // From 1 s: A and B count from their bytes at 1 s, C (started at 1 s) from zero.
        // At 2 s: A 100, B 300, C 200. At 3 s: A 200/2, C 300/2. At 4 s: A 250/3, C 450/3.
        let expected =
            (jain(&[100.0, 300.0, 200.0]) + jain(&[100.0, 150.0]) + jain(&[250.0 / 3.0, 150.0]))
                / 3.0;
        let (_, j) = run_both((1.0, 4.0), &flows);
        assert!((j.mean().unwrap() - expected).abs() < 1e-12, "{j:?}");
    }
}
