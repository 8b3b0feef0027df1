//! Scripted tests of the TFRC sender rules (RFC 3448 §4).

use super::*;
use crate::tfrc::equation::tfrc_rate_bytes_per_s;

fn ms(v: u64) -> Time {
    Time::from_ms(v)
}

fn fb(echo: Time, x_recv: f64, p: f64) -> Feedback {
    Feedback {
        timestamp_echo: echo,
        echo_delay: Dur::ZERO,
        x_recv_bytes_per_s: x_recv,
        loss_event_rate: p,
        losses_last_rtt: 0,
    }
}

fn close(got: f64, want: f64) -> bool {
    ((got - want) / want).abs() < 1e-9
}

#[test]
fn starts_at_one_packet_per_second_with_a_two_second_timer() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    assert_eq!(s.rate_bytes_per_s(), 1000.0);
    assert_eq!(s.next_send_time(), ms(0));
    assert_eq!(s.nofeedback_deadline(), ms(2000));
    let h = s.on_send(ms(0), 1000);
    assert_eq!((h.seq, h.timestamp, h.rtt_estimate), (0, ms(0), None));
    // Paced at s/X = 1 s.
    assert_eq!(s.next_send_time(), ms(1000));
    assert_eq!(s.on_send(ms(1000), 1000).seq, 1);
}

#[test]
fn first_feedback_sets_rtt_and_one_packet_per_rtt() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_send(ms(0), 1000);
    // Echo of the packet sent at 0, held 20 ms at the receiver: R_sample = 120 − 20 = 100 ms.
    let mut f = fb(ms(0), 0.0, 0.0);
    f.echo_delay = Dur::from_ms(20);
    s.on_feedback(ms(120), &f);
    assert_eq!(s.rtt(), Some(Dur::from_ms(100)));
    // p = 0, X_recv = 0: X = max(min(2X, 0), s/R) = 10 000 B/s.
    assert!(close(s.rate_bytes_per_s(), 10_000.0));
    // Next packet s/X = 100 ms after the last one.
    assert_eq!(s.next_send_time(), ms(100));
    // Nofeedback timer max(4R, 2s/X) = max(400, 200) ms.
    assert_eq!(s.nofeedback_deadline(), ms(520));
}

#[test]
fn rtt_is_an_ewma_with_q_09() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(1200), &fb(ms(1000), 0.0, 0.0));
    // 0.9·100 + 0.1·200 = 110 ms.
    assert_eq!(s.rtt(), Some(Dur::from_ms(110)));
}

#[test]
fn slow_start_doubles_at_most_once_per_rtt_and_within_twice_x_recv() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 10_000.0));
    // 50 ms later (< R): unchanged, although 2·X_recv would allow more.
    s.on_feedback(ms(150), &fb(ms(50), 1e6, 0.0));
    assert!(close(s.rate_bytes_per_s(), 10_000.0));
    // One R after the last doubling: 2X = 20 000 < 2·X_recv.
    s.on_feedback(ms(200), &fb(ms(100), 1e6, 0.0));
    assert!(close(s.rate_bytes_per_s(), 20_000.0));
    // 2·X_recv = 30 000 limits the next doubling (40 000).
    s.on_feedback(ms(300), &fb(ms(200), 15_000.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 30_000.0));
    // Never below s/R: X_recv tiny.
    s.on_feedback(ms(400), &fb(ms(300), 1.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 10_000.0));
}

#[test]
fn with_loss_the_rate_follows_the_equation_within_twice_x_recv() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    // R stays 100 ms (every sample 100 ms); X_calc(0.01) = 112 332.2 B/s.
    s.on_feedback(ms(200), &fb(ms(100), 1e6, 0.01));
    assert!(close(
        s.rate_bytes_per_s(),
        tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.01)
    ));
    // 2·X_recv below X_calc: X = 2·X_recv (also within R of the last change: no tld rule).
    s.on_feedback(ms(250), &fb(ms(150), 40_000.0, 0.01));
    assert!(close(s.rate_bytes_per_s(), 80_000.0));
    // Floor s/t_mbi = 1000/64 B/s.
    s.on_feedback(ms(350), &fb(ms(250), 0.0, 0.5));
    assert!(close(s.rate_bytes_per_s(), 1000.0 / 64.0));
}

#[test]
fn without_the_receive_cap_the_nominal_rate_is_free() {
    let cfg = TfrcSenderConfig {
        cap_by_receive_rate: false,
        ..TfrcSenderConfig::default()
    };
    let mut s = TfrcSender::new(cfg, ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    // 2X = 2000 B/s, below s/R.
    assert!(close(s.rate_bytes_per_s(), 10_000.0));
    s.on_feedback(ms(200), &fb(ms(100), 0.0, 0.0));
    assert!(close(s.rate_bytes_per_s(), 20_000.0));
    s.on_feedback(ms(300), &fb(ms(200), 1.0, 0.01));
    assert!(close(
        s.rate_bytes_per_s(),
        tfrc_rate_bytes_per_s(1000, Dur::from_ms(100), 0.01)
    ));
}

#[test]
fn nofeedback_before_any_feedback_halves_the_rate() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_send(ms(0), 1000);
    s.on_nofeedback_timer(ms(1999));
    assert_eq!(s.rate_bytes_per_s(), 1000.0, "not yet due");
    s.on_nofeedback_timer(ms(2000));
    assert_eq!(s.rate_bytes_per_s(), 500.0);
    // No RTT: the timer restarts after 2s/X = 4 s; pacing is now 2 s after the last packet.
    assert_eq!(s.nofeedback_deadline(), ms(6000));
    assert_eq!(s.next_send_time(), ms(2000));
}

#[test]
fn nofeedback_in_slow_start_halves_the_rate() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), 1e6, 0.0));
    assert!(close(s.rate_bytes_per_s(), 20_000.0));
    // max(4R, 2s/X) = 400 ms after the last feedback.
    assert_eq!(s.nofeedback_deadline(), ms(600));
    s.on_nofeedback_timer(ms(600));
    assert!(close(s.rate_bytes_per_s(), 10_000.0));
    assert_eq!(s.nofeedback_deadline(), ms(1000));
}

#[test]
fn nofeedback_with_loss_halves_through_x_recv() {
    let r = Dur::from_ms(100);
    let x_calc = tfrc_rate_bytes_per_s(1000, r, 0.01);
    // Branch X_calc ≤ 2·X_recv: X_recv = X_calc/4, so X = min(X_calc, X_calc/2).
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), 1e6, 0.01));
    assert!(close(s.rate_bytes_per_s(), x_calc));
    let due = s.nofeedback_deadline();
    s.on_nofeedback_timer(due);
    assert!(close(s.x_recv_bytes_per_s(), x_calc / 4.0));
    assert!(close(s.rate_bytes_per_s(), x_calc / 2.0));
    // Branch X_calc > 2·X_recv: X = 2·X_recv before, X_recv halves, so X halves.
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    s.on_feedback(ms(200), &fb(ms(100), 30_000.0, 0.01));
    assert!(close(s.rate_bytes_per_s(), 60_000.0));
    let due = s.nofeedback_deadline();
    s.on_nofeedback_timer(due);
    assert!(close(s.x_recv_bytes_per_s(), 15_000.0));
    assert!(close(s.rate_bytes_per_s(), 30_000.0));
}

#[test]
fn a_paced_rate_override_reschedules_from_the_last_packet() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_send(ms(0), 1000);
    assert_eq!(s.next_send_time(), ms(1000));
    s.set_paced_rate(Some(4000.0));
    assert_eq!(s.paced_rate_bytes_per_s(), 4000.0);
    assert_eq!(s.next_send_time(), ms(250));
    s.set_paced_rate(None);
    assert_eq!(s.next_send_time(), ms(1000));
}

#[test]
fn a_zero_rtt_sample_keeps_the_rate_finite() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_send(ms(5), 1000);
    s.on_feedback(ms(5), &fb(ms(5), 0.0, 0.0));
    assert_eq!(s.rtt(), Some(Dur::ZERO));
    // s/R with R floored at 1 µs: 10⁹ B/s, and the next packet 1 µs after the last.
    assert!(close(s.rate_bytes_per_s(), 1e9));
    assert_eq!(s.next_send_time(), ms(5) + Dur::from_us(1));
}

#[test]
fn a_paced_rate_override_retimes_the_nofeedback_timer() {
    let mut s = TfrcSender::new(TfrcSenderConfig::default(), ms(0));
    s.on_send(ms(0), 1000);
    // First feedback at 100 ms: R = 100 ms, X = s/R = 10 kB/s; timer max(4R, 2s/X) = 400 ms.
    s.on_feedback(ms(100), &fb(ms(0), 0.0, 0.0));
    assert_eq!(s.nofeedback_deadline(), ms(500));
    // Paced at 1 kB/s, two packets take 2 s: the timer runs from the feedback for 2 s.
    s.set_paced_rate(Some(1000.0));
    assert_eq!(s.nofeedback_deadline(), ms(2100));
    s.set_paced_rate(None);
    assert_eq!(s.nofeedback_deadline(), ms(500));
}
