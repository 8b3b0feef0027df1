//! A unidirectional link: an output queue, a serialiser at a fixed rate, a propagation delay
//! and optional Bernoulli random loss.
//!
//! A FIFO queue served at a constant rate needs no events of its own: when a packet arrives
//! its departure time is already known, `max(now, end of the previous departure) + size/rate`.
//! The link therefore keeps one ring of packets in departure order; the ring's tail is the
//! queue (packets whose serialisation has not finished) and its head is in propagation. The
//! queue length any instant is found by advancing a cursor over the departures up to that
//! instant. The only event a link needs is the arrival of its head packet at the far end, so
//! each link has at most one pending event and a packet costs one event per hop. The results
//! are exactly those of an explicit queue-then-pipe model (htsim's `Queue` + `Pipe`).

use pathpool_core::{Dur, Rate, Rng, Time};

use crate::packet::Packet;
use crate::random_queue::RandomDrop;
use crate::red::Red;

/// How the queue decides to drop an arriving packet.
#[derive(Clone, Debug)]
pub(crate) enum Discipline {
    /// Drop when the packet would exceed `limit` packets.
    DropTailPackets(u64),
    /// Drop when the packet would exceed `limit` bytes.
    DropTailBytes(u64),
    /// RED with a hard limit in packets or bytes (`byte_mode`); with `mark` (REM), an
    /// ECN-capable packet RED would drop early is marked CE instead.
    Red {
        red: Box<Red>,
        limit: u64,
        byte_mode: bool,
        mark: bool,
    },
    /// htsim's `RandomQueue`: drop-tail with a random-drop band at the top.
    Random(RandomDrop),
}

/// One packet in the ring: when its serialisation ends.
#[derive(Clone, Copy, Debug)]
struct Slot {
    depart: Time,
    pkt: Packet,
}

/// The ring of a link: a FIFO of slots in a buffer whose length is a power of two, so that a
/// position wraps with a mask (cheaper than `VecDeque`'s compare-and-subtract, and this is
/// used several times per packet and hop). It doubles when full and never shrinks.
#[derive(Clone, Debug, Default)]
struct Ring {
    buf: Vec<Slot>,
    head: usize,
    len: usize,
}

impl Ring {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }
    /// The `i`-th slot from the front.
    #[inline]
    fn get(&self, i: usize) -> Option<&Slot> {
        (i < self.len).then(|| &self.buf[(self.head + i) & (self.buf.len() - 1)])
    }
    #[inline]
    fn front(&self) -> Option<&Slot> {
        self.get(0)
    }
    #[inline]
    fn push_back(&mut self, slot: Slot) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.buf.len() - 1);
        self.buf[i] = slot;
        self.len += 1;
    }
    #[inline]
    fn pop_front(&mut self) -> Option<Slot> {
        if self.len == 0 {
            return None;
        }
        let slot = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(slot)
    }
    #[cold]
    fn grow(&mut self) {
        let capacity = (2 * self.buf.len()).max(16);
        let mut buf = Vec::with_capacity(capacity);
        buf.extend((0..self.len).map(|i| self.buf[(self.head + i) & (self.buf.len() - 1)]));
        let filler = Slot {
            depart: Time::ZERO,
            pkt: Packet::new(0, Time::ZERO, 0, 0, false),
        };
        buf.resize(capacity, filler);
        self.buf = buf;
        self.head = 0;
    }
}

/// Counters of a link, cumulative since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LinkCounters {
    /// Packets offered to the queue.
    pub(crate) arrivals: u64,
    /// Packets whose serialisation has completed.
    pub(crate) tx_packets: u64,
    /// Bytes whose serialisation has completed.
    pub(crate) tx_bytes: u64,
    /// Packets dropped by the queue (overflow or RED).
    pub(crate) drops: u64,
    /// Bytes dropped by the queue.
    pub(crate) drop_bytes: u64,
    /// Packets lost at random on the wire.
    pub(crate) random_losses: u64,
    /// Packets a REM queue marked CE instead of dropping.
    pub(crate) marks: u64,
    /// Packets lost because the link was down: held at its failure, or offered while down.
    pub(crate) failure_losses: u64,
    /// Time integral of the queue length in bytes, in byte·picoseconds.
    pub(crate) queue_byte_ps: u128,
    /// Largest queue seen, in bytes.
    pub(crate) max_queue_bytes: u64,
}

/// A unidirectional link.
#[derive(Clone, Debug)]
pub(crate) struct Link {
    rate: Rate,
    delay: Dur,
    discipline: Discipline,
    loss: f64,
    rng: Rng,
    ring: Ring,
    /// Ring entries (from the front) whose serialisation has finished.
    departed: usize,
    /// Bytes and packets whose serialisation has not finished (the one in service included).
    queued_bytes: u64,
    queued_packets: u64,
    /// When the serialiser finishes its last accepted packet.
    busy_until: Time,
    /// When the queue-length integral was last brought up to date.
    integral_at: Time,
    /// Cache of the last serialisation time computed.
    tx_cache: (u32, Dur),
    counters: LinkCounters,
    /// Whether the link has failed and not yet been repaired.
    down: bool,
    /// Ring entries (from the front) that the last failure lost: each is dropped when its
    /// arrival comes, so the link's events keep their schedule.
    doomed: usize,
    /// The largest packet the queue accepts when empty (a byte limit, or `u64::MAX`): what a
    /// wire's crossing ([`Link::pass`]) tests, one comparison instead of a match.
    empty_limit: u64,
}

impl Link {
    pub(crate) fn new(rate: Rate, delay: Dur, discipline: Discipline, loss: f64, rng: Rng) -> Self {
        let empty_limit = match discipline {
            Discipline::DropTailBytes(limit) => limit,
            _ => u64::MAX,
        };
        Link {
            rate,
            delay,
            discipline,
            loss,
            rng,
            ring: Ring::default(),
            departed: 0,
            queued_bytes: 0,
            queued_packets: 0,
            busy_until: Time::ZERO,
            integral_at: Time::ZERO,
            tx_cache: (0, rate.tx_time(0)),
            counters: LinkCounters::default(),
            down: false,
            doomed: 0,
            empty_limit,
        }
    }

    /// Fails the link at `now` (`up = false`) or repairs it. A failure loses every packet
    /// the link holds, queued or on the wire, and every packet offered until the repair.
    /// The lost packets keep their places in the serialiser's schedule, so a packet offered
    /// right after a short failure may wait behind them (docs/decisions.md D107).
    pub(crate) fn set_up(&mut self, now: Time, up: bool) {
        self.advance(now);
        if !up && !self.down {
            self.doomed = self.ring.len();
        }
        self.down = !up;
    }

    #[inline]
    fn tx_time(&mut self, size: u32) -> Dur {
        if self.tx_cache.0 != size {
            self.tx_cache = (size, self.rate.tx_time(u64::from(size)));
        }
        self.tx_cache.1
    }

    /// Accounts every departure up to `now`: the queue shrinks, the counters grow.
    #[inline]
    pub(crate) fn advance(&mut self, now: Time) {
        while let Some(slot) = self.ring.get(self.departed) {
            if slot.depart > now {
                break;
            }
            let (depart, size) = (slot.depart, slot.pkt.size());
            self.account_departure(depart, size);
            self.departed += 1;
        }
        self.integrate(now);
    }

    /// The packet of `size` bytes finished serialising at `depart`, the earliest departure not
    /// yet accounted.
    #[inline]
    fn account_departure(&mut self, depart: Time, size: u32) {
        let size = u64::from(size);
        self.integrate(depart);
        self.queued_bytes -= size;
        self.queued_packets -= 1;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += size;
    }

    #[inline]
    fn integrate(&mut self, t: Time) {
        if t > self.integral_at {
            let dt = u128::from((t - self.integral_at).as_ps());
            self.counters.queue_byte_ps += u128::from(self.queued_bytes) * dt;
            self.integral_at = t;
        }
    }

    /// Offers a packet to the queue at `now`. Returns the time of the link's next event if the
    /// link had none (its ring was empty), so the caller can schedule it.
    #[inline]
    pub(crate) fn enqueue(&mut self, now: Time, mut pkt: Packet) -> Option<Time> {
        self.advance(now);
        self.counters.arrivals += 1;
        let size = pkt.size();
        if self.down {
            self.counters.failure_losses += 1;
            return None;
        }
        if self.should_drop(now, &mut pkt) {
            self.counters.drops += 1;
            self.counters.drop_bytes += u64::from(size);
            return None;
        }
        let start = if self.busy_until > now {
            self.busy_until
        } else {
            now
        };
        let depart = start + self.tx_time(size);
        self.busy_until = depart;
        self.queued_bytes += u64::from(size);
        self.queued_packets += 1;
        self.counters.max_queue_bytes = self.counters.max_queue_bytes.max(self.queued_bytes);
        self.ring.push_back(Slot { depart, pkt });
        (self.ring.len() == 1).then_some(depart + self.delay)
    }

    /// Whether the queue drops `pkt` arriving at `now`; a REM queue may mark it instead.
    fn should_drop(&mut self, now: Time, pkt: &mut Packet) -> bool {
        let size = pkt.size();
        match &mut self.discipline {
            Discipline::DropTailPackets(limit) => self.queued_packets + 1 > *limit,
            Discipline::DropTailBytes(limit) => self.queued_bytes + u64::from(size) > *limit,
            Discipline::Red {
                red,
                limit,
                byte_mode,
                mark,
            } => {
                let (queue, forced) = if *byte_mode {
                    (
                        self.queued_bytes as f64,
                        self.queued_bytes + u64::from(size) > *limit,
                    )
                } else {
                    (self.queued_packets as f64, self.queued_packets + 1 > *limit)
                };
                let idle_since = (self.queued_packets == 0).then_some(self.busy_until);
                let early = red.should_drop(now, queue, idle_since, size, &mut self.rng);
                if early && !forced && *mark && pkt.ecn_capable() {
                    pkt.set_ce();
                    self.counters.marks += 1;
                    return false;
                }
                early || forced
            }
            Discipline::Random(q) => {
                q.should_drop(self.queued_packets, self.queued_bytes, size, &mut self.rng)
            }
        }
    }

    /// Whether the link is a wire: infinite rate, no delay, no random loss and a drop-tail
    /// queue. Such a link never holds a packet (each departs the instant it arrives), so the
    /// engine moves packets across it at once, without an event ([`Link::pass`]); see
    /// `docs/decisions.md` D52.
    pub(crate) fn is_wire(&self) -> bool {
        self.rate.is_infinite()
            && self.delay == Dur::ZERO
            && self.loss == 0.0
            && matches!(
                self.discipline,
                Discipline::DropTailPackets(_) | Discipline::DropTailBytes(_)
            )
    }

    /// A packet of `size` bytes crosses this wire ([`Link::is_wire`]) and arrives at the far
    /// end at the same instant; returns `false` if the queue drops it. The queue is empty at
    /// every arrival, so the drop-tail test is the one [`Link::enqueue`] would make: only a
    /// packet larger than a byte limit is dropped.
    #[inline]
    pub(crate) fn pass(&mut self, size: u32) -> bool {
        debug_assert!(self.ring.len() == 0, "a wire never holds a packet");
        // Two tests for the rare cases (down, or a packet above a byte limit), so that what
        // every crossing runs is the four counters.
        if self.down || u64::from(size) > self.empty_limit {
            return self.refuse(size);
        }
        self.counters.arrivals += 1;
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += u64::from(size);
        self.counters.max_queue_bytes = self.counters.max_queue_bytes.max(u64::from(size));
        true
    }

    /// [`Link::pass`] for a wire that is down or a packet above its byte limit.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, size: u32) -> bool {
        self.counters.arrivals += 1;
        if self.down {
            self.counters.failure_losses += 1;
        } else {
            self.counters.drops += 1;
            self.counters.drop_bytes += u64::from(size);
        }
        false
    }

    /// Handles the link's event: the head packet reaches the far end at `now`. Returns the
    /// packet unless it was lost on the wire, and the time of the next event, if any. Always
    /// inlined: it runs on most events, and its result (a packet) would otherwise go through
    /// memory.
    #[inline(always)]
    pub(crate) fn on_event(&mut self, now: Time) -> (Option<Packet>, Option<Time>) {
        let slot = self
            .ring
            .pop_front()
            .expect("a link event with an empty ring");
        debug_assert!(slot.depart + self.delay == now);
        // The head finished serialising before it arrived. Account its departure if no
        // `advance` has yet; later departures wait for the next arrival or sample, which
        // account every departure up to their own time anyway (the queue integral is the same
        // sum, split at other instants).
        if self.departed > 0 {
            self.departed -= 1;
        } else {
            self.account_departure(slot.depart, slot.pkt.size());
        }
        let next = self.ring.front().map(|s| s.depart + self.delay);
        if self.doomed > 0 {
            self.doomed -= 1;
            self.counters.failure_losses += 1;
            return (None, next);
        }
        if self.loss > 0.0 && self.rng.bernoulli(self.loss) {
            self.counters.random_losses += 1;
            return (None, next);
        }
        (Some(slot.pkt), next)
    }

    /// Bytes queued at `now` (the packet in service included).
    pub(crate) fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
    /// Bytes waiting at `now` (call [`advance`](Self::advance) first): the queue less the
    /// packet being serialised, which a router's queue no longer holds (RCP's q).
    pub(crate) fn waiting_bytes(&self, now: Time) -> u64 {
        match self.ring.get(self.departed) {
            Some(slot)
                if slot.depart.saturating_since(now)
                    <= self.rate.tx_time(u64::from(slot.pkt.size())) =>
            {
                self.queued_bytes - u64::from(slot.pkt.size())
            }
            _ => self.queued_bytes,
        }
    }
    /// Packets queued (the packet in service included).
    pub(crate) fn queued_packets(&self) -> u64 {
        self.queued_packets
    }
    /// Counters up to the last `advance`.
    pub(crate) fn counters(&self) -> &LinkCounters {
        &self.counters
    }
    /// The link's rate.
    pub(crate) fn rate(&self) -> Rate {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::red::RedParams;

    fn pkt(size: u32) -> Packet {
        Packet::new(0, Time::ZERO, 0, size, false)
    }

    fn link(limit: Discipline) -> Link {
        // 1500 B at 12 Mb/s = 1 ms; 10 ms propagation.
        Link::new(
            Rate::from_mbps(12),
            Dur::from_ms(10),
            limit,
            0.0,
            Rng::seed_from_u64(1),
        )
    }

    proptest::proptest! {
        /// The ring is a FIFO, also when it grows while wrapped around its buffer.
        #[test]
        fn ring_is_a_fifo(ops in proptest::collection::vec(0u8..3, 1..200)) {
            let mut ring = Ring::default();
            let mut model = std::collections::VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                if op == 0 {
                    proptest::prop_assert_eq!(ring.pop_front().map(|s| s.depart), model.pop_front());
                } else {
                    let t = Time(i as u64);
                    ring.push_back(Slot { depart: t, pkt: pkt(100) });
                    model.push_back(t);
                }
                proptest::prop_assert_eq!(ring.len(), model.len());
                for (j, &t) in model.iter().enumerate() {
                    proptest::prop_assert_eq!(ring.get(j).map(|s| s.depart), Some(t));
                }
                proptest::prop_assert!(ring.get(model.len()).is_none());
            }
        }
    }

    #[test]
    fn serialisation_then_propagation() {
        let mut l = link(Discipline::DropTailPackets(10));
        assert_eq!(l.enqueue(Time::ZERO, pkt(1500)), Some(Time::from_ms(11)));
        assert_eq!(
            l.enqueue(Time::ZERO, pkt(1500)),
            None,
            "already has an event"
        );
        assert_eq!(l.queued_packets(), 2);
        let (p, next) = l.on_event(Time::from_ms(11));
        assert!(p.is_some());
        assert_eq!(
            next,
            Some(Time::from_ms(12)),
            "second packet waited 1 ms for the first"
        );
        let (_, next) = l.on_event(Time::from_ms(12));
        assert_eq!(next, None);
        assert_eq!(l.counters().tx_bytes, 3000);
    }

    #[test]
    fn idle_link_starts_serialising_on_arrival() {
        let mut l = link(Discipline::DropTailPackets(10));
        l.enqueue(Time::ZERO, pkt(1500));
        l.on_event(Time::from_ms(11));
        assert_eq!(
            l.enqueue(Time::from_ms(50), pkt(1500)),
            Some(Time::from_ms(61))
        );
    }

    #[test]
    fn drop_tail_counts_the_packet_in_service() {
        let mut l = link(Discipline::DropTailPackets(2));
        l.enqueue(Time::ZERO, pkt(1500));
        l.enqueue(Time::ZERO, pkt(1500));
        l.enqueue(Time::ZERO, pkt(1500));
        assert_eq!(l.counters().drops, 1);
        // After 1 ms the first has left the queue (it is propagating): room for one more.
        l.enqueue(Time::from_ms(1), pkt(1500));
        assert_eq!(l.counters().drops, 1);
        assert_eq!(l.queued_packets(), 2);
    }

    #[test]
    fn drop_tail_in_bytes() {
        let mut l = link(Discipline::DropTailBytes(2000));
        l.enqueue(Time::ZERO, pkt(1500));
        l.enqueue(Time::ZERO, pkt(1500));
        l.enqueue(Time::ZERO, pkt(500));
        assert_eq!(l.counters().drops, 1);
        assert_eq!(l.queued_bytes(), 2000);
    }

    #[test]
    fn queue_integral_is_exact() {
        let mut l = link(Discipline::DropTailPackets(10));
        l.enqueue(Time::ZERO, pkt(1500));
        l.enqueue(Time::ZERO, pkt(1500));
        l.advance(Time::from_ms(5));
        // 3000 B for 1 ms, 1500 B for 1 ms, then empty.
        let want = 3000u128 * 1_000_000_000 + 1500 * 1_000_000_000;
        assert_eq!(l.counters().queue_byte_ps, want);
        assert_eq!(l.counters().max_queue_bytes, 3000);
    }

    #[test]
    fn a_wire_counts_what_crosses_and_refuses_as_its_queue_would() {
        let wire = |d| Link::new(Rate::INFINITE, Dur::ZERO, d, 0.0, Rng::seed_from_u64(1));
        let mut w = wire(Discipline::DropTailBytes(1000));
        assert!(w.is_wire());
        assert!(w.pass(500));
        assert!(!w.pass(1500), "above the byte limit");
        w.set_up(Time::ZERO, false);
        assert!(!w.pass(500), "down");
        let c = *w.counters();
        assert_eq!((c.arrivals, c.tx_packets, c.tx_bytes), (3, 1, 500));
        assert_eq!((c.drops, c.drop_bytes, c.failure_losses), (1, 1500, 1));
        assert_eq!(c.max_queue_bytes, 500);
        let mut w = wire(Discipline::DropTailPackets(1));
        assert!(
            w.pass(u32::MAX),
            "a packet limit never refuses a packet at an empty queue"
        );
        assert_eq!(w.counters().tx_bytes, u64::from(u32::MAX));
    }

    #[test]
    fn random_loss_drops_about_p() {
        let mut l = Link::new(
            Rate::INFINITE,
            Dur::from_ms(1),
            Discipline::DropTailPackets(u64::MAX),
            0.1,
            Rng::seed_from_u64(3),
        );
        let n = 20_000;
        let mut delivered = 0;
        for i in 0..n {
            let t = Time::from_ms(i);
            l.enqueue(t, pkt(100));
            if l.on_event(t + Dur::from_ms(1)).0.is_some() {
                delivered += 1;
            }
        }
        let lost = f64::from(n as u32 - delivered) / n as f64;
        assert!((lost - 0.1).abs() < 0.01, "loss {lost}");
        assert_eq!(l.counters().random_losses, u64::from(n as u32 - delivered));
    }

    #[test]
    fn red_drops_early_and_respects_the_hard_limit() {
        let params = RedParams {
            byte_mode: false,
            min_th: 2.0,
            max_th: 6.0,
            max_p: 0.5,
            weight: 0.5,
            gentle: false,
            mean_packet_bytes: 1500.0,
            mean_tx_time: Dur::from_ms(1),
        };
        let mut l = link(Discipline::Red {
            mark: false,
            red: Box::new(Red::new(params)),
            limit: 8,
            byte_mode: false,
        });
        for _ in 0..20 {
            l.enqueue(Time::ZERO, pkt(1500));
        }
        assert!(l.queued_packets() <= 8);
        assert!(l.queued_packets() < 8, "RED dropped before the hard limit");
        assert!(l.counters().drops >= 12);
    }
}
