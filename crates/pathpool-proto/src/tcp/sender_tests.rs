//! Unit tests of the TCP sender: scripted ACK sequences with exact windows and timers.
use super::*;
use crate::tcp::FlightEstimate;
use pathpool_cc::{CcKind, Reno, WindowConfig, Windows};

const MSS: u64 = 1000;

struct Harness {
    tx: TcpSender,
    cc: Windows<Reno>,
    now: Time,
}

impl Harness {
    fn new(iw: u64) -> Self {
        let mut cc = Windows::new(
            Reno::default(),
            WindowConfig {
                initial_window: iw,
                ..Default::default()
            },
        );
        let path = cc.add_path(MSS);
        let config = TcpSenderConfig {
            mss: MSS,
            ..TcpSenderConfig::default()
        };
        Harness {
            tx: TcpSender::new(config, path),
            cc,
            now: Time::ZERO,
        }
    }
    /// Sends everything the window allows and returns the sequence numbers.
    fn send_all(&mut self) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(s) = self.tx.poll_transmit(self.now, &self.cc) {
            out.push(s.seq);
        }
        out
    }
    /// An ACK echoing timestamp zero, so the RTT sample equals `now`.
    fn ack(&mut self, ack: u64) {
        self.tx
            .handle_ack(self.now, &AckSegment::new(ack, Time::ZERO), &mut self.cc);
    }
    fn cwnd(&self) -> u64 {
        self.cc.metrics(self.tx.path()).cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.cc.metrics(self.tx.path()).ssthresh
    }
    fn window(&self) -> u64 {
        self.cc.window(self.tx.path())
    }
}

#[test]
fn sends_initial_window_then_waits() {
    let mut h = Harness::new(4);
    assert_eq!(h.send_all(), vec![0, 1000, 2000, 3000]);
    assert_eq!(
        h.tx.poll_timeout(),
        Some(Time::ZERO + Dur::from_secs(1)),
        "initial RTO 1 s"
    );
    assert!(h.send_all().is_empty());
}

#[test]
fn slow_start_sends_two_segments_per_ack() {
    let mut h = Harness::new(2);
    h.send_all();
    h.now = Time::from_ms(100);
    h.ack(1000);
    assert_eq!(h.cwnd(), 3000);
    assert_eq!(
        h.send_all(),
        vec![2000, 3000],
        "one ACKed segment frees one, growth one more"
    );
    assert_eq!(h.tx.rtt().srtt(), Some(Dur::from_ms(100)));
    assert_eq!(
        h.tx.poll_timeout(),
        Some(h.now + Dur::from_ms(300)),
        "RTO restarted"
    );
}

#[test]
fn congestion_avoidance_grows_one_mss_per_window() {
    let mut h = Harness::new(4);
    h.send_all();
    // Put the path in congestion avoidance.
    h.cc.path_mut(PathId(0)).ssthresh = 4000;
    h.now = Time::from_ms(100);
    for k in 1..=4 {
        h.ack(k * 1000);
        h.send_all();
    }
    assert_eq!(
        h.cwnd(),
        5000,
        "four ACKs of 1000 B complete one window of 4000 B"
    );
    assert_eq!(h.tx.snd_max(), 9000, "flight is 5 segments");
}

/// Drives the classic NewReno episode: one loss in a window of 10 segments.
/// Enters recovery for a window of 10 segments whose first ones are lost, then sends
/// two partial ACKs 100 ms apart; returns the timer deadline after each.
fn partial_ack_deadlines(variant: PartialAckTimer) -> (Option<Time>, Option<Time>) {
    let mut h = Harness::new(10);
    h.tx.config.partial_ack_timer = variant;
    h.send_all();
    h.now = Time::from_ms(50);
    for _ in 0..3 {
        h.ack(0);
    }
    assert!(h.tx.in_recovery());
    h.now = Time::from_ms(150);
    h.ack(1000);
    let first = h.tx.poll_timeout();
    h.now = Time::from_ms(250);
    h.ack(2000);
    (first, h.tx.poll_timeout())
}

#[test]
fn impatient_restarts_the_timer_on_the_first_partial_ack_only() {
    let (first, second) = partial_ack_deadlines(PartialAckTimer::Impatient);
    assert!(first.is_some());
    assert_eq!(second, first, "RFC 6582 §4 Impatient: not restarted again");
    let (first, second) = partial_ack_deadlines(PartialAckTimer::SlowButSteady);
    assert!(
        second > first,
        "Slow-but-Steady restarts it on every partial ACK: {first:?} -> {second:?}"
    );
}

#[test]
fn three_dupacks_trigger_fast_retransmit_and_newreno_recovery() {
    let mut h = Harness::new(10);
    assert_eq!(h.send_all().len(), 10);
    h.now = Time::from_ms(50);
    // Segment 2000..3000 is lost; 1000 and 2000 acked, then dupacks for 3000..9999.
    h.ack(1000);
    h.ack(2000);
    let sent = h.send_all();
    assert_eq!(
        sent,
        vec![10_000, 11_000, 12_000, 13_000],
        "slow start 10 -> 12 MSS"
    );
    h.ack(2000);
    h.ack(2000);
    assert!(!h.tx.in_recovery());
    assert!(h.send_all().is_empty(), "no limited transmit");
    h.ack(2000);
    assert!(h.tx.in_recovery());
    assert_eq!(h.tx.recover(), Some(14_000));
    // FlightSize = 14000 - 2000 = 12000 -> ssthresh 6000, window 6000 + 3·1000.
    assert_eq!(h.ssthresh(), 6000);
    assert_eq!(h.window(), 9000);
    assert_eq!(
        h.send_all(),
        vec![2000],
        "fast retransmit of the first unacked segment"
    );
    assert_eq!(h.tx.stats().retransmissions, 1);
    // Each further dupack inflates by one MSS; new data goes once window > flight (12000).
    for _ in 0..3 {
        h.ack(2000);
        assert!(h.send_all().is_empty());
    }
    assert_eq!(h.window(), 12_000);
    h.ack(2000);
    assert_eq!(h.send_all(), vec![14_000]);
    // A partial ACK (5000 < recover): retransmit 5000 at once and deflate.
    h.ack(5000);
    assert!(h.tx.in_recovery());
    assert_eq!(h.window(), 13_000 - 3000 + 1000);
    assert_eq!(h.send_all()[0], 5000);
    // The full ACK ends recovery with cwnd = ssthresh.
    h.ack(15_000);
    assert!(!h.tx.in_recovery());
    assert_eq!(h.cwnd(), 6000);
    assert_eq!(h.window(), 6000);
    assert_eq!(h.tx.stats().fast_recoveries, 1);
}

/// A recovery long enough for window inflation to send far beyond the holes, then a
/// loss above `recover`: returns ssthresh after that second loss and the pipe before it.
fn ssthresh_after_a_long_recovery(estimate: FlightEstimate) -> (u64, u64, u64) {
    let mut h = Harness::new(10);
    h.tx.config.flight_estimate = estimate;
    h.tx.config.partial_ack_timer = PartialAckTimer::SlowButSteady;
    h.send_all();
    h.now = Time::from_ms(50);
    // Segment 0 is lost; 1..9 arrive and raise duplicate ACKs.
    for _ in 0..3 {
        h.ack(0);
    }
    assert_eq!(h.ssthresh(), 5000);
    h.send_all();
    // Forty more duplicate ACKs: the receiver holds every new segment inflation sends.
    for _ in 0..40 {
        h.ack(0);
        h.send_all();
    }
    let pipe = h.tx.pipe_bytes();
    // The full ACK: everything up to recover (10 000) and one segment beyond arrived;
    // the next segment is lost too, and those behind it raise duplicate ACKs.
    h.ack(11_000);
    assert!(!h.tx.in_recovery());
    let flight = h.tx.flight_bytes();
    for _ in 0..3 {
        h.ack(11_000);
    }
    assert!(h.tx.in_recovery());
    (h.ssthresh(), pipe, flight)
}

#[test]
fn a_loss_after_a_long_recovery_halves_the_window_not_what_inflation_sent() {
    let (ssthresh, pipe, flight) = ssthresh_after_a_long_recovery(FlightEstimate::Pipe);
    assert_eq!(flight, 37_000, "inflation sent 38 segments above recover");
    assert!(
        pipe <= 5000 + 3000,
        "in recovery the pipe stays at ssthresh plus the three segments of the entry: {pipe}"
    );
    // cwnd was ssthresh (5000) when the second loss was found.
    assert_eq!(ssthresh, 2500);
    let (literal, _, _) = ssthresh_after_a_long_recovery(FlightEstimate::FlightSize);
    assert_eq!(
        literal, 18_500,
        "RFC 5681's FlightSize halves the 37 segments the receiver mostly holds"
    );
}

#[test]
fn duplicate_acks_leave_the_pipe_and_a_partial_ack_takes_back_what_it_covers() {
    let mut h = Harness::new(10);
    h.send_all();
    h.now = Time::from_ms(50);
    for _ in 0..5 {
        h.ack(0);
    }
    assert_eq!(h.tx.flight_bytes(), 10_000);
    assert_eq!(h.tx.pipe_bytes(), 5000, "five segments reported received");
    // A partial ACK covering the hole and two of the reported segments.
    h.ack(3000);
    assert_eq!(h.tx.pipe_bytes(), 7000 - 3000);
    h.ack(10_000);
    assert_eq!(h.tx.pipe_bytes(), h.tx.flight_bytes());
}

#[test]
fn dupacks_not_covering_recover_do_not_retrigger() {
    let mut h = Harness::new(10);
    h.send_all();
    h.now = Time::from_secs(2);
    h.tx.handle_timeout(h.now, &mut h.cc);
    assert_eq!(h.tx.recover(), Some(10_000));
    assert_eq!(
        h.send_all(),
        vec![0],
        "go-back-N with a loss window of one segment"
    );
    // Duplicate ACKs at snd_una = 0 <= recover must not start fast retransmit.
    for _ in 0..5 {
        h.ack(0);
    }
    assert!(!h.tx.in_recovery());
    assert_eq!(h.tx.stats().fast_recoveries, 0);
}

#[test]
fn rto_backs_off_and_holds_ssthresh_on_repeat() {
    let mut h = Harness::new(10);
    h.send_all();
    h.now = Time::from_ms(100);
    h.ack(1000);
    h.send_all();
    // srtt 100 ms, rttvar 50 ms -> RTO 300 ms from now.
    let deadline = h.tx.poll_timeout().unwrap();
    assert_eq!(deadline, Time::from_ms(400));
    h.tx.handle_timeout(Time::from_ms(399), &mut h.cc);
    assert_eq!(h.tx.stats().timeouts, 0, "not yet expired");
    h.now = deadline;
    h.tx.handle_timeout(h.now, &mut h.cc);
    assert_eq!(h.tx.stats().timeouts, 1);
    // cwnd grew to 11 segments, so 2 more were sent: FlightSize = 12000 - 1000 = 11000.
    assert_eq!(h.ssthresh(), 5500);
    assert_eq!(h.cwnd(), 1000);
    assert_eq!(
        h.tx.poll_timeout(),
        Some(h.now + Dur::from_ms(600)),
        "RTO doubled"
    );
    assert_eq!(h.send_all(), vec![1000]);
    h.now += Dur::from_ms(600);
    h.tx.handle_timeout(h.now, &mut h.cc);
    assert_eq!(
        h.ssthresh(),
        5500,
        "second timeout of the same segment holds ssthresh"
    );
    assert_eq!(h.tx.poll_timeout(), Some(h.now + Dur::from_ms(1200)));
    // An ACK with a fresh RTT sample clears the backoff.
    h.now += Dur::from_ms(100);
    h.tx.handle_ack(
        h.now,
        &AckSegment::new(2000, h.now - Dur::from_ms(100)),
        &mut h.cc,
    );
    assert_eq!(h.tx.rtt().backoff(), 0);
}

#[test]
fn a_timeout_during_go_back_n_counts_only_what_was_resent() {
    let mut h = Harness::new(10);
    h.send_all();
    h.now = Time::from_ms(100);
    h.ack(1000);
    h.send_all();
    h.now = h.tx.poll_timeout().unwrap();
    h.tx.handle_timeout(h.now, &mut h.cc);
    assert_eq!(h.ssthresh(), 5500, "FlightSize 11 000 halved");
    // Go-back-N resends 1000..2000; its ACK opens the window (slow start, cwnd 2000),
    // and 2000..4000 go out again. snd_max is still 12 000.
    assert_eq!(h.send_all(), vec![1000]);
    h.now += Dur::from_ms(100);
    h.ack(2000);
    assert_eq!(h.send_all(), vec![2000, 3000]);
    assert_eq!(h.tx.snd_max(), 12_000);
    assert_eq!(h.tx.flight_bytes(), 2000);
    // A timeout of the new snd_una is a new loss: ssthresh from the 2000 bytes really in
    // flight (RFC 5681 eq. 4 floor: 2·SMSS), not from the 10 000 once outstanding.
    h.now = h.tx.poll_timeout().unwrap();
    h.tx.handle_timeout(h.now, &mut h.cc);
    assert_eq!(h.tx.stats().timeouts, 2);
    assert_eq!(h.ssthresh(), 2000);
}

#[test]
fn finite_transfer_ends_with_short_segment_and_timer_off() {
    let mut cc = CcKind::NewReno.build(WindowConfig::default());
    let path = cc.add_path(MSS);
    let cfg = TcpSenderConfig {
        mss: MSS,
        data_bytes: Some(2500),
        ..Default::default()
    };
    let mut tx = TcpSender::new(cfg, path);
    let segs: Vec<_> = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO, &cc)).collect();
    assert_eq!(
        segs.iter().map(|s| (s.seq, s.len)).collect::<Vec<_>>(),
        [(0, 1000), (1000, 1000), (2000, 500)]
    );
    assert!(!tx.is_finished());
    tx.handle_ack(
        Time::from_ms(10),
        &AckSegment::new(2500, Time::ZERO),
        &mut cc,
    );
    assert!(tx.is_finished());
    assert_eq!(tx.poll_timeout(), None);
}

#[test]
fn receive_window_limits_flight() {
    let mut cc = CcKind::NewReno.build(WindowConfig::default());
    let path = cc.add_path(MSS);
    let cfg = TcpSenderConfig {
        mss: MSS,
        rwnd_bytes: 3000,
        ..Default::default()
    };
    let mut tx = TcpSender::new(cfg, path);
    let n = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO, &cc)).count();
    assert_eq!(n, 3);
}

#[test]
fn ack_beyond_snd_max_is_ignored() {
    let mut h = Harness::new(2);
    h.send_all();
    h.ack(5000);
    assert_eq!(h.tx.snd_una(), 0);
}

#[test]
fn stop_ends_new_data_but_finishes_outstanding() {
    let mut h = Harness::new(2);
    h.send_all();
    h.tx.stop();
    h.ack(1000);
    assert!(h.send_all().is_empty());
    assert!(!h.tx.is_finished());
    h.ack(2000);
    assert!(h.tx.is_finished());
}

#[test]
fn a_coarse_timer_fires_on_its_next_tick() {
    let mut h = Harness::new(2);
    h.tx.config.timer_granularity = Dur::from_ms(10);
    h.send_all();
    h.now = Time::from_ms(100);
    h.ack(1000);
    // srtt 100 ms, rttvar 50 ms: RTO 300 ms from 100 ms, i.e. 400 ms, on the 10 ms grid.
    assert_eq!(h.tx.poll_timeout(), Some(Time::from_ms(400)));
    h.now = Time::from_ms(103);
    h.ack(2000);
    h.send_all();
    // The new sample moved the estimate: the deadline is 103 ms + RTO, and the timer fires
    // on the first 10 ms tick at or after it.
    let exact = h.now + h.tx.rtt().rto();
    let d = h.tx.poll_timeout().unwrap();
    assert_eq!(d.as_ps() % Dur::from_ms(10).as_ps(), 0, "{d:?} on the grid");
    assert!(
        d >= exact && d < exact + Dur::from_ms(10),
        "{d:?} for {exact:?}"
    );
    h.tx.handle_timeout(d - Dur::from_ps(1), &mut h.cc);
    assert_eq!(h.tx.stats().timeouts, 0, "not before the tick");
    h.tx.handle_timeout(d, &mut h.cc);
    assert_eq!(h.tx.stats().timeouts, 1);
}

#[test]
fn the_receivers_timestamp_reaches_the_controller_as_a_one_way_delay() {
    use pathpool_cc::{TcpLp, TcpLpConfig};
    let mut cc = Windows::new(
        TcpLp::new(TcpLpConfig::default(), Reno::default()),
        WindowConfig::default(),
    );
    let path = cc.add_path(MSS);
    let config = TcpSenderConfig {
        mss: MSS,
        ..TcpSenderConfig::default()
    };
    let mut tx = TcpSender::new(config, path);
    let sent = Time::from_ms(10);
    assert!(tx.poll_transmit(sent, &cc).is_some());
    // Sent at 10 ms, ACKed by the receiver at 35 ms, ACK in at 50 ms: 25 ms one way.
    let ack = AckSegment::new(MSS, sent).with_ts_val(Time::from_ms(35));
    tx.handle_ack(Time::from_ms(50), &ack, &mut cc);
    assert_eq!(
        cc.coupling().path(path.index()).sowd(),
        Some(Dur::from_ms(25))
    );
    // An ACK without the receiver's timestamp gives no sample.
    let mut tx2 = TcpSender::new(config, path);
    let mut cc2 = Windows::new(
        TcpLp::new(TcpLpConfig::default(), Reno::default()),
        WindowConfig::default(),
    );
    cc2.add_path(MSS);
    assert!(tx2.poll_transmit(sent, &cc2).is_some());
    tx2.handle_ack(Time::from_ms(50), &AckSegment::new(MSS, sent), &mut cc2);
    assert_eq!(cc2.coupling().path(0).sowd(), None);
}
