//! An INRPP router as one sans-IO state machine (spec 001 §3): its interfaces' state
//! machines, the shared cache, the nonce list and the detour meters, driven by the caller
//! with the current time and what the router's output queues hold.
//!
//! The driver (the simulator, or a runtime) owns the links. It tells the router what arrives
//! ([`Router::on_data`], [`Router::on_detoured`], [`Router::on_ack`], [`Router::on_advert`]),
//! sends what the router returns, asks [`Router::poll_transmit`] for packets the cache
//! releases, re-evaluates the interfaces after each change with [`Router::evaluate`], and
//! wakes the router at [`Router::poll_timeout`]. Queue occupancies are passed in as
//! `queues[i]`, the bytes in interface `i`'s drop-tail queue now.

use pathpool_core::{Dur, Time};

use super::advert::{advertised_residual_bps, detour_residual_bps, RateMeter};
use super::cache::{CacheStats, FlowCache};
use super::interface::{InterfaceMachine, InterfaceState, Occupancy, Watermarks};
use super::signalling::{AckAction, AckSignal, Nonce, Notification, Signalling};

/// One output interface as the driver describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct InterfaceConfig {
    /// C_i, bits per second.
    pub capacity_bps: f64,
    /// L_high and L_low of its queue, in bytes.
    pub queue_high_bytes: u64,
    /// See `queue_high_bytes`.
    pub queue_low_bytes: u64,
    /// Its nonce (unique per router and interface, not 0).
    pub nonce: Nonce,
    /// The interfaces whose neighbours are also neighbours of this one's (the detour
    /// interface table's row, Table 4); the same list names the neighbours that may detour
    /// through this interface, to whom it advertises.
    pub detours: Vec<usize>,
}

/// The router's own parameters (`[inrpp]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RouterConfig {
    /// The cache's size in bytes.
    pub cache_bytes: u64,
    /// S_high.
    pub cache_high_bytes: u64,
    /// S_low.
    pub cache_low_bytes: u64,
    /// How long DB lasts.
    pub db_duration: Dur,
    /// How long a nonce lives without a SLOW-DOWN refreshing it.
    pub nonce_timeout: Dur,
    /// The weight of the newest period in the traffic meters (D277).
    pub meter_weight: f64,
}

/// Where the router sends a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Out {
    /// To its primary next hop, on interface `0`.
    Primary(usize),
    /// On a detour: out of interface `via` towards the neighbour of interface `primary`.
    Detour {
        /// The packet's primary interface (the detour node sends it to its neighbour).
        primary: usize,
        /// The interface the detour leaves on.
        via: usize,
    },
}

/// What became of a data packet.
#[derive(Debug, PartialEq, Eq)]
pub enum DataOutcome<P> {
    /// Send it now, on its primary interface.
    Forward(P),
    /// The cache holds it.
    Cached,
    /// The cache was full: dropped (and counted).
    Dropped(P),
}

/// One interface's state besides its machine.
#[derive(Clone, Debug)]
struct Interface {
    config: InterfaceConfig,
    machine: InterfaceMachine,
    /// T_i: everything the interface carries.
    traffic: RateMeter,
    traffic_bytes: u64,
    /// Detour traffic other routers send through this interface, by the interface it came
    /// in on (their DetourTrafficFrom).
    detour_in: Vec<(usize, RateMeter, u64)>,
    /// What this router detours out of this interface, for its own residual.
    detour_out: RateMeter,
    detour_out_bytes: u64,
    /// Per detour of this interface's traffic (same order as `config.detours`): the second
    /// hop's advertised residual and when the next detoured packet may leave.
    adverts: Vec<(f64, Time)>,
}

/// An INRPP router.
#[derive(Clone, Debug)]
pub struct Router<P> {
    config: RouterConfig,
    interfaces: Vec<Interface>,
    cache: FlowCache<P>,
    signalling: Signalling,
    /// When the meters last took a period.
    period_start: Time,
}

impl<P> Router<P> {
    /// A router with `interfaces`, all in P, its cache empty.
    #[must_use]
    pub fn new(config: RouterConfig, interfaces: Vec<InterfaceConfig>) -> Self {
        let marks = |c: &InterfaceConfig| Watermarks {
            queue_high_bytes: c.queue_high_bytes,
            queue_low_bytes: c.queue_low_bytes,
            cache_high_bytes: config.cache_high_bytes,
            cache_low_bytes: config.cache_low_bytes,
        };
        let n = interfaces.len();
        Router {
            interfaces: interfaces
                .into_iter()
                .map(|c| Interface {
                    machine: InterfaceMachine::new(marks(&c), config.db_duration),
                    traffic: RateMeter::new(config.meter_weight),
                    traffic_bytes: 0,
                    detour_in: Vec::new(),
                    detour_out: RateMeter::new(config.meter_weight),
                    detour_out_bytes: 0,
                    adverts: vec![(0.0, Time::ZERO); c.detours.len()],
                    config: c,
                })
                .collect(),
            cache: FlowCache::new(n, config.cache_bytes),
            signalling: Signalling::new(config.nonce_timeout),
            period_start: Time::ZERO,
            config,
        }
    }

    /// Interface `i`'s state.
    #[must_use]
    pub fn state(&self, i: usize) -> InterfaceState {
        self.interfaces[i].machine.state()
    }

    /// When interface `i` first entered `state`.
    #[must_use]
    pub fn first_entered(&self, i: usize, state: InterfaceState) -> Option<Time> {
        self.interfaces[i].machine.first_entered(state)
    }

    /// The cache.
    #[must_use]
    pub fn cache(&self) -> &FlowCache<P> {
        &self.cache
    }

    /// The cache's size in bytes.
    #[must_use]
    pub fn cache_capacity_bytes(&self) -> u64 {
        self.config.cache_bytes
    }

    /// The cache's counters.
    #[must_use]
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The nonce list and propagation mode.
    #[must_use]
    pub fn signalling(&self) -> &Signalling {
        &self.signalling
    }

    fn occupancy(&self, i: usize, queues: &[u64]) -> Occupancy {
        Occupancy {
            queue_bytes: queues[i],
            interface_cached_bytes: self.cache.interface_bytes(i),
            node_cached_bytes: self.cache.bytes(),
        }
    }

    /// Re-evaluates every interface's machine (D275) after anything it reads changed.
    pub fn evaluate(&mut self, now: Time, queues: &[u64]) {
        for i in 0..self.interfaces.len() {
            let o = self.occupancy(i, queues);
            self.interfaces[i].machine.evaluate(now, o);
        }
    }

    /// A data packet of `flow` whose primary output interface is `primary`, carrying
    /// `nonce`: cached when the nonce is listed, the interface is not in P, or the flow has
    /// packets cached there already (so that it does not overtake them, §3.7 ii; D281);
    /// else sent on.
    pub fn on_data(
        &mut self,
        primary: usize,
        flow: u64,
        nonce: Nonce,
        pkt: P,
        bytes: u32,
    ) -> DataOutcome<P> {
        let held = self.signalling.is_listed(nonce);
        let behind =
            self.cache.interface_bytes(primary) > 0 && self.cache.flow_bytes(primary, flow) > 0;
        if !held && !behind && !self.interfaces[primary].machine.state().caches() {
            self.count_out(primary, bytes);
            return DataOutcome::Forward(pkt);
        }
        match self.cache.push(primary, flow, nonce, pkt, bytes) {
            Ok(()) => DataOutcome::Cached,
            Err(p) => DataOutcome::Dropped(p),
        }
    }

    /// A packet another router detoured through this one arrived on interface `from`, for
    /// the neighbour of interface `to`: it goes there at once, never detoured again nor
    /// cached (D281), and is metered as `from`'s detour traffic through `to`.
    pub fn on_detoured(&mut self, from: usize, to: usize, bytes: u32) {
        self.count_out(to, bytes);
        let meters = &mut self.interfaces[to].detour_in;
        match meters.iter_mut().find(|(f, ..)| *f == from) {
            Some(m) => m.2 += u64::from(bytes),
            None => meters.push((
                from,
                RateMeter::new(self.config.meter_weight),
                u64::from(bytes),
            )),
        }
    }

    fn count_out(&mut self, i: usize, bytes: u32) {
        self.interfaces[i].traffic_bytes += u64::from(bytes);
    }

    /// An ACK of `flow` arrived on interface `arrival` (the flow's data leaves on it, so
    /// that is the interface the ACK speaks for). Runs Algorithm 1 on what it carries, then,
    /// when `arrival` is in B or DB, writes this interface's SLOW-DOWN or CANCEL and nonce
    /// into it (§3.5; the nearer router's notification replaces a farther one's, D281).
    /// Returns the cached packet of the flow that the ACK releases, if any, to send on
    /// `arrival`.
    pub fn on_ack(
        &mut self,
        now: Time,
        arrival: usize,
        flow: u64,
        ack: &mut AckSignal,
    ) -> Option<(P, u32)> {
        let action = self.signalling.on_ack(
            now,
            self.cache.bytes(),
            self.config.cache_high_bytes,
            self.config.cache_low_bytes,
            ack,
        );
        let released = match action {
            AckAction::ReleaseOne => self.cache.pop_flow(arrival, flow),
            AckAction::Forward => None,
        };
        if let Some((_, bytes)) = &released {
            self.count_out(arrival, *bytes);
        }
        let iface = &self.interfaces[arrival];
        match iface.machine.state() {
            InterfaceState::Backpressure => {
                *ack = AckSignal {
                    notification: Notification::SlowDown,
                    nonce: iface.config.nonce,
                };
            }
            InterfaceState::DisableBackpressure => {
                *ack = AckSignal {
                    notification: Notification::Cancel,
                    nonce: iface.config.nonce,
                };
            }
            InterfaceState::Push | InterfaceState::StoreAndDetour => {}
        }
        released
    }

    /// The neighbour behind interface `via` advertised `residual_bps` for its interface
    /// towards the neighbour of this router's interface `primary` (Algorithm 2's value for
    /// this router): the second hop of the detour `primary` → `via`. Ignored when `via` is
    /// not one of `primary`'s detours.
    pub fn on_advert(&mut self, primary: usize, via: usize, residual_bps: f64) {
        let iface = &mut self.interfaces[primary];
        if let Some(k) = iface.config.detours.iter().position(|&d| d == via) {
            iface.adverts[k].0 = residual_bps;
        }
    }

    /// Closes a metering period at `now` and returns this router's advertisements:
    /// `(interface towards the recipient, interface advertised, value in bits per second)`,
    /// one per interface and neighbour that may detour through it (Algorithm 2; 0 out of P).
    pub fn advertise(&mut self, now: Time) -> Vec<(usize, usize, f64)> {
        let secs = now.saturating_since(self.period_start).as_secs_f64();
        self.period_start = now;
        for iface in &mut self.interfaces {
            iface
                .traffic
                .add_period(std::mem::take(&mut iface.traffic_bytes), secs);
            iface
                .detour_out
                .add_period(std::mem::take(&mut iface.detour_out_bytes), secs);
            for (_, meter, bytes) in &mut iface.detour_in {
                meter.add_period(std::mem::take(bytes), secs);
            }
        }
        let mut out = Vec::new();
        for (i, iface) in self.interfaces.iter().enumerate() {
            let users = &iface.config.detours;
            let total: f64 = iface.detour_in.iter().map(|(_, m, _)| m.rate_bps()).sum();
            for &n in users {
                let from_n = iface
                    .detour_in
                    .iter()
                    .find(|(f, ..)| *f == n)
                    .map_or(0.0, |(_, m, _)| m.rate_bps());
                let value = advertised_residual_bps(
                    iface.config.capacity_bps,
                    iface.traffic.rate_bps(),
                    from_n,
                    total,
                    users.len(),
                    iface.machine.state() == InterfaceState::Push,
                );
                out.push((n, i, value));
            }
        }
        out
    }

    /// The rate at which interface `primary`'s cached traffic may leave on its detour `k`:
    /// the smaller of the first hop's residual, not counting what this router itself
    /// detours on it (D281), and the second hop's advertisement; 0 unless the first hop is in
    /// P.
    fn detour_rate_bps(&self, primary: usize, k: usize) -> f64 {
        let via = self.interfaces[primary].config.detours[k];
        let first = &self.interfaces[via];
        if first.machine.state() != InterfaceState::Push {
            return 0.0;
        }
        let own =
            first.config.capacity_bps - first.traffic.rate_bps() + first.detour_out.rate_bps();
        detour_residual_bps(own, self.interfaces[primary].adverts[k].0)
    }

    /// R_i: the total detour rate of interface `primary` (§3.4).
    #[must_use]
    pub fn detour_capacity_bps(&self, primary: usize) -> f64 {
        (0..self.interfaces[primary].config.detours.len())
            .map(|k| self.detour_rate_bps(primary, k))
            .sum()
    }

    /// The next packet the cache releases at `now`: to its primary interface while that
    /// interface's queue has room under L_high (so the link stays busy at C_i without
    /// overshooting the mark that moved it out of P, D281), else to a detour whose pacing allows it. Packets of
    /// listed nonces stay (they leave only by ACKs). The driver enqueues what it gets and
    /// passes the queues as they are then.
    pub fn poll_transmit(&mut self, now: Time, queues: &[u64]) -> Option<(Out, P, u32)> {
        for (i, &queue) in queues.iter().enumerate().take(self.interfaces.len()) {
            if self.cache.interface_bytes(i) == 0 {
                continue;
            }
            let high = self.interfaces[i].config.queue_high_bytes;
            if queue < high {
                if let Some((p, bytes)) = self.pop(i) {
                    self.count_out(i, bytes);
                    return Some((Out::Primary(i), p, bytes));
                }
                continue;
            }
            for k in 0..self.interfaces[i].config.detours.len() {
                let rate = self.detour_rate_bps(i, k);
                if rate <= 0.0 || now < self.interfaces[i].adverts[k].1 {
                    continue;
                }
                let Some((p, bytes)) = self.pop(i) else {
                    break;
                };
                let via = self.interfaces[i].config.detours[k];
                let gap = Dur::from_secs_f64(f64::from(bytes) * 8.0 / rate);
                self.interfaces[i].adverts[k].1 = now + gap;
                self.count_out(via, bytes);
                self.interfaces[via].detour_out_bytes += u64::from(bytes);
                return Some((Out::Detour { primary: i, via }, p, bytes));
            }
        }
        None
    }

    fn pop(&mut self, i: usize) -> Option<(P, u32)> {
        let signalling = &self.signalling;
        self.cache.pop_next(i, |n| signalling.is_listed(n))
    }

    /// When the router next needs [`Router::handle_timeout`] or [`Router::poll_transmit`]
    /// (call it after `poll_transmit` has sent what it could): a DB timer, a nonce's expiry,
    /// a detour's next pacing time, the time a primary queue, draining at its link's rate,
    /// falls below L_high again while the cache holds its traffic, or below L_low for an
    /// interface in S&D with nothing cached (to return to P). Always later than `now`.
    #[must_use]
    pub fn poll_timeout(&self, now: Time, queues: &[u64]) -> Option<Time> {
        let mut next = self.signalling.poll_timeout();
        let mut earliest = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        // When interface `i`'s queue, draining at its link's rate, falls below `mark`.
        let below = |i: usize, mark: u64| {
            let excess_bits = (queues[i] - mark + 1) as f64 * 8.0;
            now + Dur::from_secs_f64(excess_bits / self.interfaces[i].config.capacity_bps)
        };
        for (i, iface) in self.interfaces.iter().enumerate() {
            if let Some(t) = iface.machine.poll_timeout() {
                earliest(t);
            }
            if self.cache.interface_bytes(i) == 0 {
                // S&D returns to P once its queue is under L_low.
                let low = iface.config.queue_low_bytes;
                if iface.machine.state() == InterfaceState::StoreAndDetour && queues[i] >= low {
                    earliest(below(i, low));
                }
                continue;
            }
            let high = iface.config.queue_high_bytes;
            if queues[i] >= high {
                earliest(below(i, high));
            }
            // A detour due now that sent nothing had nothing it could take.
            for k in 0..iface.config.detours.len() {
                if self.detour_rate_bps(i, k) > 0.0 && iface.adverts[k].1 > now {
                    earliest(iface.adverts[k].1);
                }
            }
        }
        next
    }

    /// Expires nonces and DB timers due at `now` (then re-evaluates those interfaces).
    pub fn handle_timeout(&mut self, now: Time, queues: &[u64]) {
        self.signalling.handle_timeout(now);
        for i in 0..self.interfaces.len() {
            let o = self.occupancy(i, queues);
            self.interfaces[i].machine.handle_timeout(now, o);
        }
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
