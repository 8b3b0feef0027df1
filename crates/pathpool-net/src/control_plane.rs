//! A node's side of the authenticated control plane (wire version 2, issue 18): it seals the
//! control messages the node sends (sender, a strictly increasing timestamp, the MAC under
//! the overlay key) and checks those it receives (MAC, clock skew, replay), counting each
//! refusal by reason. With `security = "off"` it seals without a MAC and accepts everything.

use pathpool_topo::NodeIx;
use pathpool_wire::auth::OverlayKey;
use pathpool_wire::{
    open_control, seal_control, ControlAuth, ControlAuthError, EncodeError, FreshnessGuard,
};

use crate::security::{unix_now_us, ControlClock, SecuritySettings};

/// Control messages refused, by [`ControlAuthError`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControlRejects {
    /// Counts by [`ControlAuthError::index`].
    pub by_kind: [u64; ControlAuthError::KINDS],
}

impl ControlRejects {
    /// All refusals.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }

    /// `(name, count)` of the kinds counted at least once.
    #[must_use]
    pub fn nonzero(&self) -> Vec<(&'static str, u64)> {
        [
            ControlAuthError::NotControl,
            ControlAuthError::BadMac,
            ControlAuthError::UnknownSender,
            ControlAuthError::Stale,
            ControlAuthError::Replayed,
        ]
        .into_iter()
        .map(|e| (e.name(), self.by_kind[e.index()]))
        .filter(|&(_, n)| n > 0)
        .collect()
    }
}

/// A node's control-plane keys, clock and memory of senders.
#[derive(Debug, Clone)]
pub struct ControlPlane {
    node: NodeIx,
    key: Option<OverlayKey>,
    settings: SecuritySettings,
    clock: ControlClock,
    guard: FreshnessGuard,
    rejects: ControlRejects,
}

impl ControlPlane {
    /// The control plane of `node` in an overlay of `nodes` nodes; `key` is `None` exactly
    /// when security is off.
    #[must_use]
    pub fn new(
        node: NodeIx,
        nodes: u32,
        key: Option<OverlayKey>,
        settings: SecuritySettings,
    ) -> Self {
        let guard = FreshnessGuard::new(nodes, settings.max_skew_us());
        ControlPlane {
            node,
            key,
            settings,
            clock: ControlClock::default(),
            guard,
            rejects: ControlRejects::default(),
        }
    }

    /// The overlay key (`None` with security off).
    #[must_use]
    pub fn key(&self) -> Option<&OverlayKey> {
        self.key.as_ref()
    }

    /// The security settings.
    #[must_use]
    pub fn settings(&self) -> &SecuritySettings {
        &self.settings
    }

    /// Fills the trailer of an encoded control datagram this node sends.
    ///
    /// # Errors
    /// The datagram is not a control message.
    pub fn seal(&mut self, datagram: &mut [u8]) -> Result<(), EncodeError> {
        let stamp = self.clock.stamp();
        seal_control(datagram, self.node, stamp, self.key.as_ref())
    }

    /// Checks a received control datagram: its MAC, its timestamp against this node's clock
    /// and the sender's last accepted one. Returns the verified trailer (with security off,
    /// nothing is checked and the trailer returned is all zero). Refusals are counted.
    ///
    /// # Errors
    /// Why the datagram is refused.
    pub fn open(&mut self, datagram: &[u8]) -> Result<ControlAuth, ControlAuthError> {
        let result = match &self.key {
            None => return Ok(ControlAuth::default()),
            Some(key) => open_control(datagram, key)
                .and_then(|auth| self.guard.accept(&auth, unix_now_us()).map(|()| auth)),
        };
        result.map_err(|e| self.count(e))
    }

    fn count(&mut self, e: ControlAuthError) -> ControlAuthError {
        if let Some(n) = self.rejects.by_kind.get_mut(e.index()) {
            *n += 1;
        }
        e
    }

    /// The refusals so far.
    #[must_use]
    pub fn rejects(&self) -> ControlRejects {
        self.rejects
    }
}
