//! The state machine of an INRPP router's output interface (spec 001 §3.4, the document's
//! Table 2 and Fig. 4).
//!
//! States: Push (P), Store and Detour (S&D), Backpressure (B), Disable Backpressure (DB).
//! The machine reads three occupancies, all in bytes: the interface's drop-tail queue L_i,
//! what the router's shared cache holds for the interface S_i, and the cache's total S_n.

use pathpool_core::{Dur, Time};

/// The state of an output interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InterfaceState {
    /// Push: forward without the cache or detours.
    Push,
    /// Store and Detour: cache the interface's traffic and drain it to the interface and its
    /// detours.
    StoreAndDetour,
    /// Backpressure: as S&D, and SLOW-DOWN goes upstream on the ACKs arriving here.
    Backpressure,
    /// Disable Backpressure: as S&D, and CANCEL goes upstream, for a fixed time.
    DisableBackpressure,
}

impl InterfaceState {
    /// The document's abbreviation (`P`, `S&D`, `B`, `DB`).
    #[must_use]
    pub fn short_name(self) -> &'static str {
        match self {
            InterfaceState::Push => "P",
            InterfaceState::StoreAndDetour => "S&D",
            InterfaceState::Backpressure => "B",
            InterfaceState::DisableBackpressure => "DB",
        }
    }

    /// The state's position in P, S&D, B, DB order.
    #[must_use]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the interface's traffic goes into the cache (every state but P).
    #[must_use]
    pub fn caches(self) -> bool {
        self != InterfaceState::Push
    }
}

/// The watermarks one interface is judged against, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermarks {
    /// L_high: above it the queue leaves P.
    pub queue_high_bytes: u64,
    /// L_low: below it (with nothing cached for the interface) S&D returns to P.
    pub queue_low_bytes: u64,
    /// S_high: above it interfaces with cached traffic go to B.
    pub cache_high_bytes: u64,
    /// S_low: below it B goes to DB.
    pub cache_low_bytes: u64,
}

/// What the machine reads when it is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// L_i: bytes in the interface's drop-tail queue.
    pub queue_bytes: u64,
    /// S_i: bytes the cache holds whose primary next hop is this interface.
    pub interface_cached_bytes: u64,
    /// S_n: bytes the cache holds in all.
    pub node_cached_bytes: u64,
}

/// One interface's state machine.
#[derive(Clone, Debug)]
pub struct InterfaceMachine {
    state: InterfaceState,
    marks: Watermarks,
    db_duration: Dur,
    /// When DB ends, while in DB.
    db_until: Option<Time>,
    /// When the machine first entered each state (by [`InterfaceState::index`]), for
    /// results: the document reports when its node 0 first reached B (Fig. 10).
    first_entered: [Option<Time>; 4],
}

impl InterfaceMachine {
    /// A machine in P. `db_duration`: how long DB lasts ("approximately a second", §3.4).
    #[must_use]
    pub fn new(marks: Watermarks, db_duration: Dur) -> Self {
        InterfaceMachine {
            state: InterfaceState::Push,
            marks,
            db_duration,
            db_until: None,
            first_entered: [None; 4],
        }
    }

    /// When the machine first entered `state` (P: never entered, it starts there).
    #[must_use]
    pub fn first_entered(&self, state: InterfaceState) -> Option<Time> {
        self.first_entered[state.index()]
    }

    /// The current state.
    #[must_use]
    pub fn state(&self) -> InterfaceState {
        self.state
    }

    /// The watermarks.
    #[must_use]
    pub fn watermarks(&self) -> Watermarks {
        self.marks
    }

    /// Applies every transition `o` allows at `now` until none does (at most P → S&D → B in
    /// one call) and returns the states passed through, the last being the current one;
    /// empty when nothing changed.
    ///
    /// Transitions (§3.4): P → S&D when L_i > L_high; S&D → P when S_i = 0 and L_i < L_low;
    /// S&D → B when S_n > S_high and S_i > 0; B → DB when S_n < S_low; DB → B when S_n >
    /// S_high. DB → S&D happens only in [`InterfaceMachine::handle_timeout`].
    pub fn evaluate(&mut self, now: Time, o: Occupancy) -> Vec<InterfaceState> {
        let mut passed = Vec::new();
        while let Some(next) = self.next_state(o) {
            self.enter(now, next);
            passed.push(next);
        }
        passed
    }

    fn next_state(&self, o: Occupancy) -> Option<InterfaceState> {
        let m = &self.marks;
        match self.state {
            InterfaceState::Push => {
                (o.queue_bytes > m.queue_high_bytes).then_some(InterfaceState::StoreAndDetour)
            }
            InterfaceState::StoreAndDetour => {
                if o.node_cached_bytes > m.cache_high_bytes && o.interface_cached_bytes > 0 {
                    Some(InterfaceState::Backpressure)
                } else if o.interface_cached_bytes == 0 && o.queue_bytes < m.queue_low_bytes {
                    Some(InterfaceState::Push)
                } else {
                    None
                }
            }
            InterfaceState::Backpressure => (o.node_cached_bytes < m.cache_low_bytes)
                .then_some(InterfaceState::DisableBackpressure),
            InterfaceState::DisableBackpressure => {
                (o.node_cached_bytes > m.cache_high_bytes).then_some(InterfaceState::Backpressure)
            }
        }
    }

    fn enter(&mut self, now: Time, next: InterfaceState) {
        self.state = next;
        self.first_entered[next.index()].get_or_insert(now);
        self.db_until =
            (next == InterfaceState::DisableBackpressure).then(|| now + self.db_duration);
    }

    /// When the DB timer expires, while in DB.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.db_until
    }

    /// At or after the DB timer's expiry, DB → S&D, and then whatever `o` allows from there
    /// (as [`InterfaceMachine::evaluate`]); before it, nothing.
    pub fn handle_timeout(&mut self, now: Time, o: Occupancy) -> Vec<InterfaceState> {
        match self.db_until {
            Some(t) if now >= t => {
                self.enter(now, InterfaceState::StoreAndDetour);
                let mut passed = vec![InterfaceState::StoreAndDetour];
                passed.extend(self.evaluate(now, o));
                passed
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InterfaceState::{Backpressure as B, DisableBackpressure as DB};
    use super::InterfaceState::{Push as P, StoreAndDetour as SD};
    use super::*;

    /// The dumbbell's interface at 10 Mb/s (acceptance 1): queue 50 ms = 62,500 B, L_high
    /// 40 ms = 50,000 B, L_low 20 ms = 25,000 B, S_high 1 MB, S_low 500 KB (MB = 10^6 B).
    const MARKS: Watermarks = Watermarks {
        queue_high_bytes: 50_000,
        queue_low_bytes: 25_000,
        cache_high_bytes: 1_000_000,
        cache_low_bytes: 500_000,
    };

    fn occ(queue: u64, iface: u64, node: u64) -> Occupancy {
        Occupancy {
            queue_bytes: queue,
            interface_cached_bytes: iface,
            node_cached_bytes: node,
        }
    }

    fn machine() -> InterfaceMachine {
        InterfaceMachine::new(MARKS, Dur::from_secs(1))
    }

    fn at(ms: u64) -> Time {
        Time::from_ms(ms)
    }

    #[test]
    fn push_leaves_only_when_the_queue_exceeds_l_high() {
        let mut m = machine();
        assert!(m.evaluate(at(0), occ(50_000, 0, 0)).is_empty());
        // A full cache alone does not move P (only S&D goes to B).
        assert!(m.evaluate(at(0), occ(0, 0, 1_000_001)).is_empty());
        assert_eq!(m.evaluate(at(0), occ(50_001, 0, 0)), [SD]);
        assert_eq!(m.state(), SD);
    }

    #[test]
    fn the_first_entry_into_each_state_is_kept() {
        let mut m = machine();
        assert_eq!(m.first_entered(B), None);
        m.evaluate(at(5), occ(62_500, 1_500, 1_000_001));
        assert_eq!(
            (m.first_entered(SD), m.first_entered(B)),
            (Some(at(5)), Some(at(5)))
        );
        m.evaluate(at(7), occ(0, 0, 0));
        m.handle_timeout(at(1_007), occ(0, 1_500, 1_000_001));
        // Back in B at 1.007 s: the first entry stays 5 ms.
        assert_eq!(m.state(), B);
        assert_eq!(
            (m.first_entered(DB), m.first_entered(B)),
            (Some(at(7)), Some(at(5)))
        );
        assert_eq!(m.first_entered(P), None);
    }

    #[test]
    fn store_and_detour_returns_to_push_only_when_empty_and_below_l_low() {
        let mut m = machine();
        m.evaluate(at(0), occ(62_500, 0, 0));
        assert!(m.evaluate(at(1), occ(25_000, 0, 0)).is_empty());
        assert!(m.evaluate(at(1), occ(0, 1, 1)).is_empty());
        assert!(m.evaluate(at(1), occ(24_999, 1_500, 1_500)).is_empty());
        assert_eq!(m.evaluate(at(1), occ(24_999, 0, 700_000)), [P]);
    }

    #[test]
    fn store_and_detour_goes_to_backpressure_above_s_high_with_traffic_cached() {
        let mut m = machine();
        m.evaluate(at(0), occ(62_500, 0, 0));
        assert!(m
            .evaluate(at(1), occ(62_500, 400_000, 1_000_000))
            .is_empty());
        // Another interface's traffic fills the cache: this one, with nothing cached, stays.
        assert!(m.evaluate(at(1), occ(62_500, 0, 1_000_001)).is_empty());
        assert_eq!(m.evaluate(at(1), occ(62_500, 1, 1_000_001)), [B]);
    }

    #[test]
    fn push_can_pass_through_store_and_detour_to_backpressure_at_once() {
        let mut m = machine();
        assert_eq!(m.evaluate(at(0), occ(50_001, 1_500, 1_000_001)), [SD, B]);
    }

    #[test]
    fn backpressure_disables_below_s_low_and_returns_above_s_high() {
        let mut m = machine();
        m.evaluate(at(0), occ(50_001, 1_500, 1_000_001));
        assert!(m.evaluate(at(10), occ(0, 0, 500_000)).is_empty());
        assert_eq!(m.state(), B);
        assert_eq!(m.evaluate(at(10), occ(0, 0, 499_999)), [DB]);
        assert_eq!(m.poll_timeout(), Some(at(1_010)));
        // Hysteresis: between the watermarks DB stays.
        assert!(m.evaluate(at(20), occ(0, 0, 1_000_000)).is_empty());
        assert_eq!(m.evaluate(at(30), occ(0, 10, 1_000_001)), [B]);
        assert_eq!(m.poll_timeout(), None);
    }

    #[test]
    fn disable_backpressure_ends_when_its_timer_expires() {
        let mut m = machine();
        m.evaluate(at(0), occ(50_001, 1_500, 1_000_001));
        m.evaluate(at(500), occ(0, 1_500, 400_000));
        assert_eq!(m.state(), DB);
        assert!(m.handle_timeout(at(1_499), occ(0, 0, 0)).is_empty());
        assert_eq!(m.state(), DB);
        // At the expiry, S&D; with the interface's cache empty and its queue low, then P.
        assert_eq!(m.handle_timeout(at(1_500), occ(0, 0, 0)), [SD, P]);
        let mut m = machine();
        m.evaluate(at(0), occ(50_001, 1_500, 1_000_001));
        m.evaluate(at(500), occ(0, 1_500, 400_000));
        assert_eq!(m.handle_timeout(at(1_500), occ(0, 1_500, 400_000)), [SD]);
        assert_eq!(m.poll_timeout(), None);
    }

    #[test]
    fn names() {
        let names: Vec<&str> = [P, SD, B, DB].iter().map(|s| s.short_name()).collect();
        assert_eq!(names, ["P", "S&D", "B", "DB"]);
        assert!(!P.caches() && SD.caches() && B.caches() && DB.caches());
    }
}
