//! An INRPP router's cache (spec 001 §3.7): one store shared by all output interfaces,
//! indexed by (primary output interface, flow), FIFO within a flow and round-robin across an
//! interface's flows, so that no flow blocks another and each gets an equal share of the
//! drain (the document's Figs 8 and 11).
//!
//! A cached packet may carry a nonce. While the router lists that nonce the packet is held:
//! the interface's drain passes over its flow, and only an ACK of the flow releases it
//! ([`FlowCache::pop_flow`], Algorithm 1 l.13). Once the nonce is cancelled or expires the
//! drain takes it like any other (D278).

use std::collections::VecDeque;

use super::signalling::Nonce;

/// One flow's packets at one interface.
#[derive(Clone, Debug)]
struct FlowQueue<P> {
    flow: u64,
    /// `(packet, size in bytes, nonce it carries)`, oldest first.
    packets: VecDeque<(P, u32, Nonce)>,
    bytes: u64,
}

/// The flows cached for one output interface.
#[derive(Clone, Debug)]
struct InterfaceQueues<P> {
    flows: Vec<FlowQueue<P>>,
    /// The flow the round-robin serves next.
    next: usize,
    bytes: u64,
}

/// Counters of what the cache did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Packets that arrived to a full cache and were dropped.
    pub dropped_packets: u64,
    /// Their bytes.
    pub dropped_bytes: u64,
    /// The largest occupancy seen, in bytes.
    pub peak_bytes: u64,
}

/// The shared cache of one router.
#[derive(Clone, Debug)]
pub struct FlowCache<P> {
    capacity_bytes: u64,
    bytes: u64,
    interfaces: Vec<InterfaceQueues<P>>,
    stats: CacheStats,
}

impl<P> FlowCache<P> {
    /// An empty cache of `capacity_bytes` for `interfaces` output interfaces.
    #[must_use]
    pub fn new(interfaces: usize, capacity_bytes: u64) -> Self {
        FlowCache {
            capacity_bytes,
            bytes: 0,
            interfaces: (0..interfaces)
                .map(|_| InterfaceQueues {
                    flows: Vec::new(),
                    next: 0,
                    bytes: 0,
                })
                .collect(),
            stats: CacheStats::default(),
        }
    }

    /// S_n: bytes held in all.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// S_i: bytes held for `interface`.
    #[must_use]
    pub fn interface_bytes(&self, interface: usize) -> u64 {
        self.interfaces[interface].bytes
    }

    /// Bytes held of `flow` at `interface`.
    #[must_use]
    pub fn flow_bytes(&self, interface: usize, flow: u64) -> u64 {
        self.interfaces[interface]
            .flows
            .iter()
            .find(|f| f.flow == flow)
            .map_or(0, |f| f.bytes)
    }

    /// Every flow the cache holds packets of: (interface, flow, bytes), interface by
    /// interface, flows in the order they were first cached there.
    pub fn flows(&self) -> impl Iterator<Item = (usize, u64, u64)> + '_ {
        self.interfaces.iter().enumerate().flat_map(|(i, q)| {
            q.flows
                .iter()
                .filter(|f| f.bytes > 0)
                .map(move |f| (i, f.flow, f.bytes))
        })
    }

    /// What the cache counted.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Stores `packet` (`bytes` long, carrying `nonce`, 0 for none) at the tail of `flow`'s
    /// queue for `interface`; gives it back, counted as dropped, when it does not fit.
    ///
    /// # Errors
    /// The packet itself, when the cache is full.
    pub fn push(
        &mut self,
        interface: usize,
        flow: u64,
        nonce: Nonce,
        packet: P,
        bytes: u32,
    ) -> Result<(), P> {
        if self.bytes + u64::from(bytes) > self.capacity_bytes {
            self.stats.dropped_packets += 1;
            self.stats.dropped_bytes += u64::from(bytes);
            return Err(packet);
        }
        let q = &mut self.interfaces[interface];
        let i = match q.flows.iter().position(|f| f.flow == flow) {
            Some(i) => i,
            None => {
                q.flows.push(FlowQueue {
                    flow,
                    packets: VecDeque::new(),
                    bytes: 0,
                });
                q.flows.len() - 1
            }
        };
        let f = &mut q.flows[i];
        f.packets.push_back((packet, bytes, nonce));
        f.bytes += u64::from(bytes);
        q.bytes += u64::from(bytes);
        self.bytes += u64::from(bytes);
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.bytes);
        Ok(())
    }

    /// The next packet `interface` drains: the head of the next flow in round-robin order
    /// whose head is not held (`held(nonce)` true), with its size.
    pub fn pop_next(&mut self, interface: usize, held: impl Fn(Nonce) -> bool) -> Option<(P, u32)> {
        let q = &self.interfaces[interface];
        let n = q.flows.len();
        let i = (0..n)
            .map(|k| (q.next + k) % n)
            .find(|&i| q.flows[i].packets.front().is_some_and(|p| !held(p.2)))?;
        let out = self.take_head(interface, i);
        let q = &mut self.interfaces[interface];
        // The flow after the one served is next; `take_head` removed an emptied flow, so
        // the one after it now has its index.
        let still_there = q.flows.get(i).is_some_and(|f| f.flow == out.2);
        q.next = if q.flows.is_empty() {
            0
        } else {
            (i + usize::from(still_there)) % q.flows.len()
        };
        Some((out.0, out.1))
    }

    /// The oldest packet of `flow` at `interface`, held or not (an ACK-paced release), with
    /// its size; `None` when the flow has nothing cached.
    pub fn pop_flow(&mut self, interface: usize, flow: u64) -> Option<(P, u32)> {
        let q = &self.interfaces[interface];
        let i = q.flows.iter().position(|f| f.flow == flow)?;
        let out = self.take_head(interface, i);
        let q = &mut self.interfaces[interface];
        if q.next > i && q.flows.get(i).is_none_or(|f| f.flow != flow) {
            q.next -= 1;
        }
        if q.next >= q.flows.len() {
            q.next = 0;
        }
        Some((out.0, out.1))
    }

    /// Removes the head of flow queue `i` of `interface` (dropping the queue when emptied);
    /// returns the packet, its size and the flow.
    fn take_head(&mut self, interface: usize, i: usize) -> (P, u32, u64) {
        let q = &mut self.interfaces[interface];
        let f = &mut q.flows[i];
        let (p, bytes, _) = f.packets.pop_front().expect("a flow queue is never empty");
        let flow = f.flow;
        f.bytes -= u64::from(bytes);
        if f.packets.is_empty() {
            q.flows.remove(i);
        }
        q.bytes -= u64::from(bytes);
        self.bytes -= u64::from(bytes);
        (p, bytes, flow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: Nonce) -> bool {
        false
    }

    #[test]
    fn flows_are_served_round_robin_and_fifo_within() {
        let mut c: FlowCache<&str> = FlowCache::new(2, 1_000_000);
        for (flow, p) in [
            (1, "a1"),
            (1, "a2"),
            (1, "a3"),
            (2, "b1"),
            (3, "c1"),
            (3, "c2"),
        ] {
            c.push(0, flow, 0, p, 1500).unwrap();
        }
        c.push(1, 1, 0, "other", 1500).unwrap();
        assert_eq!((c.bytes(), c.interface_bytes(0)), (7 * 1500, 6 * 1500));
        let order: Vec<&str> = std::iter::from_fn(|| c.pop_next(0, none).map(|p| p.0)).collect();
        assert_eq!(order, ["a1", "b1", "c1", "a2", "c2", "a3"]);
        assert_eq!((c.bytes(), c.interface_bytes(0)), (1500, 0));
        assert_eq!(c.pop_next(1, none), Some(("other", 1500)));
    }

    #[test]
    fn a_full_cache_drops_the_arrival_and_counts_it() {
        let mut c: FlowCache<u32> = FlowCache::new(1, 3000);
        c.push(0, 1, 0, 1, 1500).unwrap();
        c.push(0, 2, 0, 2, 1500).unwrap();
        assert_eq!(c.push(0, 1, 0, 3, 1), Err(3));
        assert_eq!(
            c.stats(),
            CacheStats {
                dropped_packets: 1,
                dropped_bytes: 1,
                peak_bytes: 3000
            }
        );
        assert_eq!(c.flow_bytes(0, 1), 1500);
    }

    #[test]
    fn held_packets_wait_for_their_flows_acks() {
        let mut c: FlowCache<&str> = FlowCache::new(1, 1_000_000);
        c.push(0, 1, 7, "held1", 1500).unwrap();
        c.push(0, 1, 7, "held2", 1500).unwrap();
        c.push(0, 2, 0, "free", 1500).unwrap();
        let listed = |n: Nonce| n == 7;
        assert_eq!(c.pop_next(0, listed), Some(("free", 1500)));
        assert_eq!(c.pop_next(0, listed), None);
        // A SLOW-DOWN ACK of flow 1 releases its oldest packet; an ACK of a flow with nothing
        // cached releases nothing.
        assert_eq!(c.pop_flow(0, 1), Some(("held1", 1500)));
        assert_eq!(c.pop_flow(0, 2), None);
        // Once 7 is no longer listed the drain takes the rest.
        assert_eq!(c.pop_next(0, none), Some(("held2", 1500)));
        assert_eq!(c.bytes(), 0);
    }

    #[test]
    fn releases_by_ack_keep_the_round_robin_in_turn() {
        let mut c: FlowCache<&str> = FlowCache::new(1, 1_000_000);
        for (flow, p) in [(1, "a1"), (2, "b1"), (2, "b2"), (3, "c1"), (3, "c2")] {
            c.push(0, flow, 0, p, 100).unwrap();
        }
        assert_eq!(c.pop_next(0, none).unwrap().0, "a1");
        // Flow 1 is gone; b is next. An ACK empties nothing before it.
        assert_eq!(c.pop_flow(0, 3).unwrap().0, "c1");
        assert_eq!(c.pop_next(0, none).unwrap().0, "b1");
        assert_eq!(c.pop_next(0, none).unwrap().0, "c2");
        assert_eq!(c.pop_next(0, none).unwrap().0, "b2");
        assert_eq!(c.pop_next(0, none), None);
    }
}
