//! UDP cross traffic: constant-rate and on-off sources, and a counting sink.

use pathpool_core::{Dur, Rng, Time};

use crate::element::{Element, End, Net};
use crate::packet::Packet;

/// Bytes of IP + UDP header in every datagram; the rest is payload.
pub(crate) const UDP_HEADER_BYTES: u32 = 28;

/// Distribution of on and off periods.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Periods {
    /// Always on: a constant-bit-rate source.
    AlwaysOn,
    /// Alternating periods with these means, exponential or constant.
    OnOff {
        on: Dur,
        off: Dur,
        exponential: bool,
    },
}

/// A UDP source sending fixed-size datagrams at a fixed rate while on.
#[derive(Clone, Debug)]
pub(crate) struct UdpSource {
    /// Route of the datagrams, as the position of its first hop.
    route: u32,
    size: u32,
    /// Time between datagrams while on.
    interval: Dur,
    periods: Periods,
    rng: Rng,
    stop: Time,
    next_send: Time,
    on_until: Time,
    /// Datagrams sent so far.
    pub(crate) sent: u64,
}

impl UdpSource {
    pub(crate) fn new(
        route: u32,
        size: u32,
        interval: Dur,
        periods: Periods,
        rng: Rng,
        start: Time,
        stop: Time,
    ) -> Self {
        let mut s = UdpSource {
            route,
            size,
            interval,
            periods,
            rng,
            stop,
            next_send: start,
            on_until: Time::MAX,
            sent: 0,
        };
        if let Periods::OnOff { on, .. } = periods {
            s.on_until = start.saturating_add(s.draw(on));
        }
        s
    }

    fn draw(&mut self, mean: Dur) -> Dur {
        match self.periods {
            Periods::OnOff {
                exponential: true, ..
            } => Dur::from_secs_f64(self.rng.exponential(mean.as_secs_f64())),
            _ => mean,
        }
    }

    /// Returns the datagram due at `now`, if any, and plans the next one.
    fn due(&mut self, now: Time) -> Option<Packet> {
        if now < self.next_send || now >= self.stop {
            return None;
        }
        self.sent += 1;
        let pkt = Packet::new(0, now, self.route, self.size, false);
        self.next_send = now + self.interval;
        if let Periods::OnOff { on, off, .. } = self.periods {
            while self.next_send >= self.on_until {
                // The on period is over: stay silent for an off period, then start a new one.
                let resume = self.on_until.saturating_add(self.draw(off));
                self.next_send = resume;
                self.on_until = resume.saturating_add(self.draw(on));
            }
        }
        Some(pkt)
    }
}

impl Element for UdpSource {
    fn receives_data(&self, _: End) -> bool {
        false
    }
    fn on_packet(&mut self, _: End, _: &Packet, _: &mut impl Net) {
        unreachable!("no route ends at a UDP source")
    }
    fn on_timer(&mut self, _: End, net: &mut impl Net) {
        if let Some(p) = self.due(net.now()) {
            net.send(p);
        }
    }
    /// When the next datagram is due, if any.
    fn deadline(&self, _: End) -> Option<Time> {
        (self.next_send < self.stop).then_some(self.next_send)
    }
}

/// Counts what a UDP flow delivers.
#[derive(Clone, Debug, Default)]
pub(crate) struct UdpSink {
    pub(crate) packets: u64,
    pub(crate) payload_bytes: u64,
}

impl Element for UdpSink {
    fn receives_data(&self, _: End) -> bool {
        false
    }
    #[inline]
    fn on_packet(&mut self, _: End, pkt: &Packet, _: &mut impl Net) {
        self.packets += 1;
        self.payload_bytes += u64::from(pkt.size().saturating_sub(UDP_HEADER_BYTES));
    }
    fn on_timer(&mut self, _: End, _: &mut impl Net) {}
    fn deadline(&self, _: End) -> Option<Time> {
        None
    }
    fn delivered(&self, _: End) -> u64 {
        self.payload_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::testing::Collect;

    fn run(src: &mut UdpSource, until: Time) -> Vec<Time> {
        let mut sent = Vec::new();
        let mut net = Collect::default();
        while let Some(t) = src.deadline(End::Source) {
            if t > until {
                break;
            }
            net.now = t;
            src.on_timer(End::Source, &mut net);
            assert_eq!(net.sent.len(), sent.len() + 1, "one datagram at {t:?}");
            sent.push(t);
        }
        sent
    }

    #[test]
    fn constant_rate_is_evenly_spaced_and_stops() {
        let mut s = UdpSource::new(
            0,
            1000,
            Dur::from_ms(1),
            Periods::AlwaysOn,
            Rng::seed_from_u64(1),
            Time::from_ms(5),
            Time::from_ms(10),
        );
        let sent = run(&mut s, Time::from_secs(1));
        assert_eq!(sent, (5..10).map(Time::from_ms).collect::<Vec<_>>());
    }

    #[test]
    fn constant_on_off_alternates() {
        let periods = Periods::OnOff {
            on: Dur::from_ms(3),
            off: Dur::from_ms(7),
            exponential: false,
        };
        let mut s = UdpSource::new(
            0,
            1000,
            Dur::from_ms(1),
            periods,
            Rng::seed_from_u64(1),
            Time::ZERO,
            Time::from_ms(25),
        );
        let sent = run(&mut s, Time::from_secs(1));
        let want: Vec<Time> = [0, 1, 2, 10, 11, 12, 20, 21, 22]
            .into_iter()
            .map(Time::from_ms)
            .collect();
        assert_eq!(sent, want);
    }

    #[test]
    fn exponential_on_off_has_the_right_duty_cycle() {
        let periods = Periods::OnOff {
            on: Dur::from_ms(100),
            off: Dur::from_ms(300),
            exponential: true,
        };
        let mut s = UdpSource::new(
            0,
            1000,
            Dur::from_ms(1),
            periods,
            Rng::seed_from_u64(9),
            Time::ZERO,
            Time::from_secs(400),
        );
        let sent = run(&mut s, Time::from_secs(400)).len() as f64;
        let duty = sent / 400_000.0;
        assert!((duty - 0.25).abs() < 0.02, "duty cycle {duty}");
    }
}
