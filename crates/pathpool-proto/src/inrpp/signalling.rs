//! Backpressure signalling on ACKs: the notification an INRPP ACK carries and what a router
//! does with it, the document's Algorithm 1 (spec 001 §3.5–§3.6).

use pathpool_core::{Dur, Time};

/// A nonce: the 32-bit alias of one (router, interface); 0 means none.
pub type Nonce = u32;

/// The notification field of an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Notification {
    /// Nothing to say.
    #[default]
    None,
    /// The interface that wrote the nonce is in Backpressure.
    SlowDown,
    /// The interface that wrote the nonce is in Disable Backpressure.
    Cancel,
}

/// The INRPP fields of an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AckSignal {
    /// What the ACK says.
    pub notification: Notification,
    /// Whose it is (0: none).
    pub nonce: Nonce,
}

/// Whether the node passes SLOW-DOWN further upstream (Algorithm 1 l.2–6): PROPAGATE when its
/// cache is above S_high, CLEAR below S_low, unchanged in between; CLEAR at first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PropagationMode {
    /// SLOW-DOWN is cleared before the ACK goes on (the nonce stays).
    #[default]
    Clear,
    /// SLOW-DOWN goes on upstream.
    Propagate,
}

/// What the router must do besides forwarding the ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckAction {
    /// Nothing.
    Forward,
    /// Release one cached data packet of the ACK's flow, if the cache holds one (Algorithm 1
    /// l.13–14; none when the flow has nothing cached).
    ReleaseOne,
}

/// A router's nonce list and propagation mode.
#[derive(Clone, Debug)]
pub struct Signalling {
    mode: PropagationMode,
    /// Listed nonces and when each expires, in the order first listed.
    nonces: Vec<(Nonce, Time)>,
    nonce_timeout: Dur,
    /// When the mode first went to PROPAGATE.
    first_propagate: Option<Time>,
}

impl Signalling {
    /// An empty list in CLEAR mode; a nonce not refreshed by a SLOW-DOWN ACK for
    /// `nonce_timeout` expires.
    #[must_use]
    pub fn new(nonce_timeout: Dur) -> Self {
        Signalling {
            mode: PropagationMode::Clear,
            nonces: Vec::new(),
            nonce_timeout,
            first_propagate: None,
        }
    }

    /// The current mode.
    #[must_use]
    pub fn mode(&self) -> PropagationMode {
        self.mode
    }

    /// When the mode first went to PROPAGATE, if it has.
    #[must_use]
    pub fn first_propagate(&self) -> Option<Time> {
        self.first_propagate
    }

    /// Whether `nonce` is listed (a data packet carrying it is cached whatever its
    /// interface's state, §3.5 step 4).
    #[must_use]
    pub fn is_listed(&self, nonce: Nonce) -> bool {
        nonce != 0 && self.nonces.iter().any(|&(n, _)| n == nonce)
    }

    /// The listed nonces, in the order first listed.
    pub fn listed(&self) -> impl Iterator<Item = Nonce> + '_ {
        self.nonces.iter().map(|&(n, _)| n)
    }

    /// Algorithm 1 on an ACK at `now`, with the node's cache holding `node_cached_bytes`
    /// against `cache_high_bytes`/`cache_low_bytes`. Updates the mode, the list and `ack`
    /// (SLOW-DOWN cleared in CLEAR mode, the nonce always kept) and says what else to do.
    pub fn on_ack(
        &mut self,
        now: Time,
        node_cached_bytes: u64,
        cache_high_bytes: u64,
        cache_low_bytes: u64,
        ack: &mut AckSignal,
    ) -> AckAction {
        // l.2–6: hysteresis on S_n.
        if node_cached_bytes > cache_high_bytes {
            self.mode = PropagationMode::Propagate;
            self.first_propagate.get_or_insert(now);
        } else if node_cached_bytes < cache_low_bytes {
            self.mode = PropagationMode::Clear;
        }
        match ack.notification {
            Notification::SlowDown if ack.nonce != 0 => {
                // l.8–9: store the nonce, (re)arm its timer.
                let expiry = now + self.nonce_timeout;
                match self.nonces.iter_mut().find(|(n, _)| *n == ack.nonce) {
                    Some(entry) => entry.1 = expiry,
                    None => self.nonces.push((ack.nonce, expiry)),
                }
                // l.10–12.
                if self.mode == PropagationMode::Clear {
                    ack.notification = Notification::None;
                }
                AckAction::ReleaseOne
            }
            // l.15–16.
            Notification::Cancel => {
                self.nonces.retain(|&(n, _)| n != ack.nonce);
                AckAction::Forward
            }
            Notification::SlowDown | Notification::None => AckAction::Forward,
        }
    }

    /// When the next nonce expires.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.nonces.iter().map(|&(_, t)| t).min()
    }

    /// Drops the nonces expired at `now` and returns them.
    pub fn handle_timeout(&mut self, now: Time) -> Vec<Nonce> {
        let expired: Vec<Nonce> = self
            .nonces
            .iter()
            .filter(|&&(_, t)| t <= now)
            .map(|&(n, _)| n)
            .collect();
        self.nonces.retain(|&(_, t)| t > now);
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIGH: u64 = 1_000_000;
    const LOW: u64 = 500_000;

    fn slow_down(nonce: Nonce) -> AckSignal {
        AckSignal {
            notification: Notification::SlowDown,
            nonce,
        }
    }

    fn at(ms: u64) -> Time {
        Time::from_ms(ms)
    }

    #[test]
    fn in_clear_mode_slow_down_is_cleared_the_nonce_kept_and_one_packet_released() {
        let mut s = Signalling::new(Dur::from_secs(2));
        let mut ack = slow_down(7);
        assert_eq!(
            s.on_ack(at(0), 0, HIGH, LOW, &mut ack),
            AckAction::ReleaseOne
        );
        assert_eq!(ack.notification, Notification::None);
        assert_eq!(ack.nonce, 7);
        assert!(s.is_listed(7) && !s.is_listed(8) && !s.is_listed(0));
        assert_eq!(s.mode(), PropagationMode::Clear);
    }

    #[test]
    fn in_propagate_mode_slow_down_goes_on() {
        let mut s = Signalling::new(Dur::from_secs(2));
        let mut ack = slow_down(7);
        assert_eq!(
            s.on_ack(at(0), HIGH + 1, HIGH, LOW, &mut ack),
            AckAction::ReleaseOne
        );
        assert_eq!(ack, slow_down(7));
        assert_eq!(s.mode(), PropagationMode::Propagate);
    }

    #[test]
    fn the_mode_has_hysteresis_between_the_watermarks() {
        let mut s = Signalling::new(Dur::from_secs(2));
        let mut none = AckSignal::default();
        // At S_high exactly: still CLEAR.
        s.on_ack(at(0), HIGH, HIGH, LOW, &mut none);
        assert_eq!(s.mode(), PropagationMode::Clear);
        assert_eq!(s.first_propagate(), None);
        s.on_ack(at(3), HIGH + 1, HIGH, LOW, &mut none);
        assert_eq!(s.mode(), PropagationMode::Propagate);
        assert_eq!(s.first_propagate(), Some(at(3)));
        // Between the watermarks and at S_low: unchanged.
        s.on_ack(at(0), 700_000, HIGH, LOW, &mut none);
        s.on_ack(at(0), LOW, HIGH, LOW, &mut none);
        assert_eq!(s.mode(), PropagationMode::Propagate);
        let mut ack = slow_down(3);
        s.on_ack(at(0), LOW, HIGH, LOW, &mut ack);
        assert_eq!(ack.notification, Notification::SlowDown);
        s.on_ack(at(0), LOW - 1, HIGH, LOW, &mut none);
        assert_eq!(s.mode(), PropagationMode::Clear);
        s.on_ack(at(0), 700_000, HIGH, LOW, &mut none);
        assert_eq!(s.mode(), PropagationMode::Clear);
        // The first PROPAGATE is kept.
        s.on_ack(at(9), HIGH + 1, HIGH, LOW, &mut none);
        assert_eq!(s.first_propagate(), Some(at(3)));
        s.on_ack(at(9), LOW - 1, HIGH, LOW, &mut none);
        // An ACK with no notification releases nothing and changes no nonce.
        assert_eq!(none, AckSignal::default());
    }

    #[test]
    fn cancel_removes_the_nonce_and_is_forwarded_as_it_is() {
        let mut s = Signalling::new(Dur::from_secs(2));
        s.on_ack(at(0), 0, HIGH, LOW, &mut slow_down(7));
        s.on_ack(at(0), 0, HIGH, LOW, &mut slow_down(9));
        let mut cancel = AckSignal {
            notification: Notification::Cancel,
            nonce: 7,
        };
        assert_eq!(
            s.on_ack(at(1), 0, HIGH, LOW, &mut cancel),
            AckAction::Forward
        );
        assert_eq!(cancel.notification, Notification::Cancel);
        assert_eq!(s.listed().collect::<Vec<_>>(), [9]);
        // A CANCEL for a nonce not listed changes nothing.
        cancel.nonce = 5;
        s.on_ack(at(1), 0, HIGH, LOW, &mut cancel);
        assert_eq!(s.listed().collect::<Vec<_>>(), [9]);
    }

    #[test]
    fn a_nonce_expires_unless_slow_down_refreshes_it() {
        let mut s = Signalling::new(Dur::from_secs(2));
        s.on_ack(at(0), 0, HIGH, LOW, &mut slow_down(7));
        s.on_ack(at(500), 0, HIGH, LOW, &mut slow_down(9));
        assert_eq!(s.poll_timeout(), Some(at(2_000)));
        // A refresh of 7 at 1.5 s moves its expiry to 3.5 s.
        s.on_ack(at(1_500), 0, HIGH, LOW, &mut slow_down(7));
        assert_eq!(s.poll_timeout(), Some(at(2_500)));
        assert!(s.handle_timeout(at(2_499)).is_empty());
        assert_eq!(s.handle_timeout(at(2_500)), [9]);
        assert_eq!(s.handle_timeout(at(3_500)), [7]);
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn slow_down_without_a_nonce_lists_nothing() {
        let mut s = Signalling::new(Dur::from_secs(2));
        let mut ack = slow_down(0);
        assert_eq!(s.on_ack(at(0), 0, HIGH, LOW, &mut ack), AckAction::Forward);
        assert_eq!(s.listed().count(), 0);
    }
}
