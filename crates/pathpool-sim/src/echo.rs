//! The example element kind of `docs/architecture.md`: the source sends a probe at a constant
//! rate, the sink sends each one straight back (as ping's echo), and the source counts the
//! echoes and their round-trip time. It exists in the tests only, where a scenario built in
//! Rust runs it, and shows what a new kind takes: this file and one line in the list of
//! kinds (`kinds.rs`).

use pathpool_core::{Dur, Time};

use crate::element::{Element, End, Net};
use crate::packet::Packet;

/// Probes from a source to a sink and their echoes back.
#[derive(Clone, Debug)]
pub(crate) struct EchoFlow {
    /// First hop of the probes' route (it ends at the sink).
    probe_route: u32,
    /// First hop of the echoes' route (it ends at the source).
    echo_route: u32,
    size_bytes: u32,
    interval: Dur,
    next_probe: Time,
    stop: Time,
    pub(crate) probes: u64,
    pub(crate) echoes: u64,
    /// Round-trip time of every echo so far.
    pub(crate) rtt_sum: Dur,
}

impl EchoFlow {
    pub(crate) fn new(
        probe_route: u32,
        echo_route: u32,
        size_bytes: u32,
        interval: Dur,
        start: Time,
        stop: Time,
    ) -> Self {
        EchoFlow {
            probe_route,
            echo_route,
            size_bytes,
            interval,
            next_probe: start,
            stop,
            probes: 0,
            echoes: 0,
            rtt_sum: Dur::ZERO,
        }
    }
}

impl Element for EchoFlow {
    fn receives_data(&self, _: End) -> bool {
        false
    }

    fn on_packet(&mut self, end: End, pkt: &Packet, net: &mut impl Net) {
        match end {
            // The probe goes back as it came (its number and send time), on the echo route.
            End::Sink => net.send(Packet::new(
                pkt.seq,
                pkt.ts,
                self.echo_route,
                pkt.size(),
                false,
            )),
            End::Source => {
                self.echoes += 1;
                self.rtt_sum += net.now() - pkt.ts;
            }
        }
    }

    fn on_timer(&mut self, end: End, net: &mut impl Net) {
        let now = net.now();
        if end == End::Source && now >= self.next_probe {
            net.send(Packet::new(
                self.probes,
                now,
                self.probe_route,
                self.size_bytes,
                false,
            ));
            self.probes += 1;
            self.next_probe = now + self.interval;
        }
    }

    fn deadline(&self, end: End) -> Option<Time> {
        (end == End::Source && self.next_probe < self.stop).then_some(self.next_probe)
    }
}

#[cfg(test)]
mod tests {
    use pathpool_core::{Rate, Rng};

    use super::*;
    use crate::link::{Discipline, Link};
    use crate::sampler::Sampler;
    use crate::sim::Simulation;

    /// Two nodes joined by a duplex link, 8 Mb/s and 5 ms each way, and one echo flow sending
    /// a 100-byte probe every 10 ms for a second: built in Rust, without a scenario file.
    #[test]
    fn every_probe_comes_back_after_one_round_trip() {
        let end = Time::from_secs(2);
        let sampler = Sampler::new(Dur::from_secs(1), end, (Time::ZERO, end), false, false);
        let mut sim = Simulation::new(end, 1, sampler);
        let mut link = || {
            let queue = Discipline::DropTailPackets(100);
            let link = Link::new(
                Rate::from_mbps(8),
                Dur::from_ms(5),
                queue,
                0.0,
                Rng::seed_from_u64(1),
            );
            sim.elements.add_link(link)
        };
        let (there, back) = (link(), link());
        let source = sim.elements.len() as u32;
        let sink = source + 1;
        let probe_route = sim.routes.add(&[there, sink]);
        let echo_route = sim.routes.add(&[back, source]);
        let flow = EchoFlow::new(
            probe_route,
            echo_route,
            100,
            Dur::from_ms(10),
            Time::ZERO,
            Time::from_secs(1),
        );
        assert_eq!(sim.elements.add(flow), source);
        sim.sampler_elem = sim.elements.add_sampler();
        sim.sampler.init(&[], 2);
        sim.prime();
        sim.run();

        let flow = &sim.elements.echoes[0];
        assert_eq!((flow.probes, flow.echoes), (100, 100));
        // Each way: 100 bytes at 8 Mb/s (100 µs) and 5 ms of propagation; no queueing, since a
        // probe leaves long before the next one.
        let rtt = Dur::from_us(2 * (100 + 5_000));
        assert_eq!(flow.rtt_sum, Dur::from_ps(rtt.as_ps() * 100));
        // Every probe and every echo reached an endpoint; none is TCP data.
        let stats = sim.stats();
        assert_eq!(
            (stats.packets_delivered, stats.data_packets_delivered),
            (200, 0)
        );
        assert_eq!(sim.link(there).counters().tx_packets, 100);
    }
}
