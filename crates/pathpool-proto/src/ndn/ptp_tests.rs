use super::*;

/// A network of fixed paths for the consumer: each tag has an RTT; `drop(seq, attempt)` loses
/// a tagged Interest; a NACKed tag answers NACK; probes go round the tags in turn.
struct Model {
    tags: Vec<(Vec<u32>, Dur)>,
    nacked: Option<Vec<u32>>,
    drop: fn(u64, u32) -> bool,
    /// (arrival, order sent, SEQ, tag index or `None` for a NACK, probe).
    events: Vec<(Time, u64, u64, Option<usize>, bool)>,
    sent: u64,
    attempts: FxHashMap<u64, u32>,
    probes: usize,
}

impl Model {
    fn new(tags: &[(&[u32], u64)], drop: fn(u64, u32) -> bool) -> Model {
        Model {
            tags: tags
                .iter()
                .map(|(t, ms)| (t.to_vec(), Dur::from_ms(*ms)))
                .collect(),
            nacked: None,
            drop,
            events: Vec::new(),
            attempts: FxHashMap::default(),
            probes: 0,
            sent: 0,
        }
    }

    fn send(&mut self, now: Time, r: PtpRequest) {
        self.sent += 1;
        let n = self.sent;
        match r {
            PtpRequest::Probe { seq } => {
                let k = self.probes % self.tags.len();
                self.probes += 1;
                self.events
                    .push((now + self.tags[k].1, n, seq, Some(k), true));
            }
            PtpRequest::Tagged { seq, tag, .. } => {
                let a = self.attempts.entry(seq).or_insert(0);
                *a += 1;
                let k = self
                    .tags
                    .iter()
                    .position(|t| t.0 == tag)
                    .expect("a known tag");
                if self.nacked.as_ref() == Some(&tag) {
                    self.events
                        .push((now + self.tags[k].1 / 2, n, seq, None, false));
                } else if !(self.drop)(seq, *a) {
                    self.events
                        .push((now + self.tags[k].1, n, seq, Some(k), false));
                }
            }
        }
    }

    /// Runs `c` until it completes or `until`; returns the time it completed.
    fn run(&mut self, c: &mut PtpConsumer, until: Time) -> Option<Time> {
        let mut rng = Rng::seed_from_u64(1);
        let mut now = Time::ZERO;
        loop {
            while let Some(r) = c.poll_transmit(now) {
                self.send(now, r);
            }
            if c.is_complete() {
                return Some(now);
            }
            // Popped from the end: the earliest arrival, and among equal ones the first sent,
            // so that a path delivers in the order it was asked.
            self.events.sort_by_key(|e| Reverse((e.0, e.1)));
            let next_event = self.events.last().map(|e| e.0);
            let next = [next_event, c.poll_timeout()].into_iter().flatten().min()?;
            if next > until {
                return None;
            }
            now = next;
            while self.events.last().is_some_and(|e| e.0 <= now) {
                let (_, _, seq, k, probe) = self.events.pop().unwrap();
                match k {
                    Some(k) => {
                        let tag = self.tags[k].0.clone();
                        c.on_data(now, seq, 1024, false, probe.then_some(&tag[..]));
                    }
                    None => c.on_nack(now, seq, &mut rng),
                }
            }
            c.handle_timeout(now, &mut rng);
        }
    }
}

fn consumer(packets: u64) -> PtpConsumer {
    PtpConsumer::new(
        PtpConfig {
            packets,
            ..PtpConfig::default()
        },
        Time::ZERO,
    )
}

#[test]
fn two_clean_paths_fetch_everything_once() {
    let mut m = Model::new(&[(&[1, 2], 20), (&[1, 3], 40)], |_, _| false);
    let mut c = consumer(2000);
    let done = m.run(&mut c, Time::from_secs(60)).expect("completes");
    let s = c.stats();
    assert_eq!(
        (s.losses, s.timeouts, s.resends, s.duplicates),
        (0, 0, 0, 0)
    );
    assert_eq!(c.paths().paths().len(), 2);
    assert!(s.interests > 1500 && s.probes >= 2, "{s:?}");
    assert!(c.mpccp().path(0).cwnd > 2.0 && c.mpccp().path(1).cwnd > 2.0);
    assert!(done < Time::from_secs(10), "{done:?}");
}

#[test]
fn a_lost_interest_is_found_by_order_and_resent_on_its_path() {
    // SEQ 100's first Interest is lost.
    let mut m = Model::new(&[(&[1, 2], 20)], |seq, a| seq == 100 && a == 1);
    let mut c = consumer(400);
    m.run(&mut c, Time::from_secs(60)).expect("completes");
    let s = c.stats();
    assert_eq!((s.losses, s.resends, s.timeouts), (1, 1, 0), "{s:?}");
    assert_eq!(m.attempts[&100], 2);
}

#[test]
fn a_nack_moves_the_download_to_the_other_path() {
    let mut m = Model::new(&[(&[1, 2], 20), (&[1, 3], 20)], |_, _| false);
    m.nacked = Some(vec![1, 3]);
    let mut c = consumer(500);
    m.run(&mut c, Time::from_secs(60)).expect("completes");
    let s = c.stats();
    assert!(s.nacks >= 1, "{s:?}");
    let broken: Vec<bool> = c.paths().paths().iter().map(|p| p.broken).collect();
    assert_eq!(broken, [false, true]);
    assert_eq!(c.paths().in_use().collect::<Vec<_>>(), [0]);
}

#[test]
fn a_silent_tail_times_out_to_a_window_of_one_and_completes() {
    // The first Interest for each of the last 30 SEQs is lost: no later Data shows those
    // losses by order, so the timer must; the window falls to 1 and the download ends.
    let mut m = Model::new(&[(&[1, 2], 20)], |seq, a| seq >= 120 && a == 1);
    let mut c = consumer(150);
    m.run(&mut c, Time::from_secs(60)).expect("completes");
    let s = c.stats();
    assert_eq!(s.resends, 30, "{s:?}");
    // One cut to 1 for the whole tail (once per RTO), then slow start: +1 for each of the
    // 30 resent SEQs' producer Data.
    let p = c.mpccp().path(0);
    assert_eq!(
        (p.cwnd, p.phase),
        (31.0, pathpool_cc::MpccpPhase::SlowStart),
        "{p:?}"
    );
    assert_eq!(s.timeouts, 30, "{s:?}");
    // The 30 expiries are one episode: the RTO (200 ms, the floor) backed off once, not
    // thirty times to the 60-s ceiling (D329).
    assert_eq!(c.rto(0), Dur::from_ms(400));
}
