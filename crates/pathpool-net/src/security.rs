//! The overlay file's security settings (issue 18, `docs/security.md`, docs/overlay.md):
//! whether wire version 2's checks are on, where the overlay key is, the allowed clock skew,
//! how long publications and FID tickets last, the rendezvous's limits and the forwarding
//! bounds. Defaults and their reasons are decisions D160–D169.

use std::time::{SystemTime, UNIX_EPOCH};

use pathpool_core::Dur;
use pathpool_psi::RvLimits;
use serde::Deserialize;

/// Whether MACs, tickets and signatures are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecurityMode {
    /// Every check of wire version 2 (the default).
    #[default]
    On,
    /// No check: MAC and ticket fields travel as zeros (benchmarks, trusted labs).
    Off,
}

/// Default allowed clock skew between nodes (D161).
pub const DEFAULT_MAX_SKEW: Dur = Dur::from_secs(30);
/// Default lifetime of a publication without refresh: ten of the publishers' 1 s refresh
/// periods (D163).
pub const DEFAULT_PUBLISH_TTL: Dur = Dur::from_secs(10);
/// Default lifetime of a FID ticket (D164).
pub const DEFAULT_TICKET_LIFETIME: Dur = Dur::from_secs(3600);
/// Default most publications per publisher node (D163).
pub const DEFAULT_MAX_PUBLICATIONS_PER_NODE: usize = 1024;
/// Default most publications at the rendezvous (D163).
pub const DEFAULT_MAX_PUBLICATIONS: usize = 16_384;
/// Default fill-factor limit of forwarded FIDs (D160, after LIPSIN).
pub const DEFAULT_MAX_FILL: f64 = 0.5;

/// The settings, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SecuritySettings {
    /// On or off.
    pub mode: SecurityMode,
    /// The overlay key file as written (relative to the overlay file's directory).
    pub overlay_key_file: String,
    /// Largest difference between a control message's timestamp and the receiver's clock,
    /// and the grace a ticket gets past its expiry.
    pub max_skew: Dur,
    /// A publication not refreshed for this long is forgotten.
    pub publish_ttl: Dur,
    /// How long a FID ticket is good for.
    pub ticket_lifetime: Dur,
    /// Most publications one publisher may hold at the rendezvous.
    pub max_publications_per_node: usize,
    /// Most publications at the rendezvous.
    pub max_publications: usize,
}

impl SecuritySettings {
    /// The rendezvous's limits.
    #[must_use]
    pub fn rv_limits(&self) -> RvLimits {
        RvLimits {
            ttl: Some(self.publish_ttl),
            max_per_publisher: self.max_publications_per_node,
            max_total: self.max_publications,
        }
    }

    /// The allowed skew in microseconds, as control timestamps count.
    #[must_use]
    pub fn max_skew_us(&self) -> u64 {
        self.max_skew.as_ps() / 1_000_000
    }

    /// The allowed skew in whole seconds (at least 1), as tickets count.
    #[must_use]
    pub fn max_skew_s(&self) -> u64 {
        (self.max_skew.as_ps() / 1_000_000_000_000).max(1)
    }
}

/// The bounds a forwarding node applies (issue 18, item 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardLimits {
    /// FIDs with a larger fraction of bits set are dropped.
    pub max_fill: f64,
    /// The hop limit of a forwarded datagram is lowered to this.
    pub max_hop_limit: u8,
}

/// The security fields of the overlay file, as written.
#[derive(Debug, Default)]
pub(crate) struct SecurityFields {
    pub(crate) security: Option<SecurityMode>,
    pub(crate) overlay_key: Option<String>,
    pub(crate) max_skew: Option<Dur>,
    pub(crate) publish_ttl: Option<Dur>,
    pub(crate) ticket_lifetime: Option<Dur>,
    pub(crate) max_publications_per_node: Option<usize>,
    pub(crate) max_publications: Option<usize>,
    pub(crate) max_fill: Option<f64>,
    pub(crate) max_hop_limit: Option<u8>,
}

impl SecurityFields {
    /// The validated settings for an overlay of `nodes` nodes, or the field at fault and why.
    pub(crate) fn validate(
        self,
        nodes: usize,
    ) -> Result<(SecuritySettings, ForwardLimits), (&'static str, String)> {
        let positive = |field: &'static str, d: Option<Dur>, default: Dur| match d {
            Some(d) if d.as_ps() == 0 => Err((field, "must be positive, e.g. \"30s\"".into())),
            Some(d) => Ok(d),
            None => Ok(default),
        };
        let max_skew = positive("max_skew", self.max_skew, DEFAULT_MAX_SKEW)?;
        let publish_ttl = positive("publish_ttl", self.publish_ttl, DEFAULT_PUBLISH_TTL)?;
        if publish_ttl <= crate::publisher::ANNOUNCE_INTERVAL {
            return Err((
                "publish_ttl",
                format!(
                    "must be longer than the publishers' refresh period ({}), or every \
                     publication would expire between refreshes",
                    crate::publisher::ANNOUNCE_INTERVAL
                ),
            ));
        }
        let ticket_lifetime = positive(
            "ticket_lifetime",
            self.ticket_lifetime,
            DEFAULT_TICKET_LIFETIME,
        )?;
        if ticket_lifetime < Dur::from_secs(1) || ticket_lifetime > Dur::from_secs(u32::MAX.into())
        {
            return Err((
                "ticket_lifetime",
                "must be between 1 s and 2^32 − 1 s (tickets count whole seconds)".into(),
            ));
        }
        let count = |field: &'static str, v: Option<usize>, default: usize| match v {
            Some(0) => Err((field, "must be at least 1".to_string())),
            Some(v) => Ok(v),
            None => Ok(default),
        };
        let max_publications_per_node = count(
            "max_publications_per_node",
            self.max_publications_per_node,
            DEFAULT_MAX_PUBLICATIONS_PER_NODE,
        )?;
        let max_publications = count(
            "max_publications",
            self.max_publications,
            DEFAULT_MAX_PUBLICATIONS,
        )?;
        let max_fill = self.max_fill.unwrap_or(DEFAULT_MAX_FILL);
        if !(max_fill > 0.0 && max_fill <= 1.0) {
            return Err((
                "max_fill",
                format!("{max_fill} is not a fraction of bits in (0, 1]"),
            ));
        }
        // A loop-free path visits each node once: no datagram needs more hops than there
        // are nodes (D162).
        let default_hops = u8::try_from(nodes.max(1)).unwrap_or(u8::MAX);
        let max_hop_limit = match self.max_hop_limit {
            Some(0) => return Err(("max_hop_limit", "must be at least 1".into())),
            Some(h) => h,
            None => default_hops,
        };
        Ok((
            SecuritySettings {
                mode: self.security.unwrap_or_default(),
                overlay_key_file: self
                    .overlay_key
                    .unwrap_or_else(|| crate::keys::OVERLAY_KEY_FILE.to_string()),
                max_skew,
                publish_ttl,
                ticket_lifetime,
                max_publications_per_node,
                max_publications,
            },
            ForwardLimits {
                max_fill,
                max_hop_limit,
            },
        ))
    }
}

/// The wall clock in unix microseconds (control timestamps), 0 before 1970.
#[must_use]
pub fn unix_now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The wall clock in unix seconds (ticket expiry).
#[must_use]
pub fn unix_now_s() -> u64 {
    unix_now_us() / 1_000_000
}

/// Control timestamps of one sender: the wall clock in microseconds, made strictly
/// increasing (two messages in one microsecond, or a clock stepped back, still get
/// increasing stamps, as receivers require).
#[derive(Debug, Clone, Default)]
pub struct ControlClock {
    last_us: u64,
}

impl ControlClock {
    /// The next timestamp.
    pub fn stamp(&mut self) -> u64 {
        self.last_us = unix_now_us().max(self.last_us.saturating_add(1));
        self.last_us
    }
}

#[cfg(test)]
mod tests {
    use crate::overlay::Overlay;

    const PAIR: &str = "rendezvous = \"a\"\nnodes = [{ id = \"a\" }, { id = \"b\", transit = false }]\nlinks = [{ between = [\"a\", \"b\"] }]\n";

    fn error(extra: &str) -> String {
        Overlay::from_toml(&format!("{extra}\n{PAIR}"), "o.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn defaults_and_errors_name_the_field() {
        let o = Overlay::from_toml(PAIR, "o.toml").unwrap();
        let s = o.security();
        assert_eq!(s.mode, super::SecurityMode::On);
        assert_eq!(s.overlay_key_file, "overlay.key");
        assert_eq!(s.max_skew_us(), 30_000_000);
        assert_eq!(s.publish_ttl, super::DEFAULT_PUBLISH_TTL);
        assert_eq!(o.forward_limits().max_fill, 0.5);
        assert_eq!(o.forward_limits().max_hop_limit, 2, "the node count");
        assert!(o.overlay_key().is_none(), "from_toml reads no key");
        assert_eq!(
            error("max_fill = 1.5"),
            "o.toml:1:12: max_fill: 1.5 is not a fraction of bits in (0, 1]"
        );
        assert_eq!(
            error("publish_ttl = \"1s\""),
            "o.toml:1:15: publish_ttl: must be longer than the publishers' refresh period (1s), \
             or every publication would expire between refreshes"
        );
        assert_eq!(
            error("max_hop_limit = 0"),
            "o.toml:1:17: max_hop_limit: must be at least 1"
        );
        let mode = error("security = \"maybe\"");
        assert!(mode.starts_with("o.toml:1:12: security: "), "{mode}");
        let bad_key = Overlay::from_toml(
            &PAIR.replace(
                "transit = false",
                "transit = false, public_key = \"ed25519:00\"",
            ),
            "o.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            bad_key.starts_with("o.toml:2:")
                && bad_key.contains("nodes[1].public_key: expected 64"),
            "{bad_key}"
        );
    }

    #[test]
    fn a_missing_key_says_how_to_make_one_and_the_key_seeds_the_tags() {
        let dir = std::env::temp_dir().join(format!("pathpool-sec-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("o.toml");
        std::fs::write(&file, PAIR).unwrap();
        let e = Overlay::load(&file).unwrap_err().to_string();
        assert!(
            e.contains("overlay_key: ")
                && e.contains("overlay.key: the overlay key does not exist")
                && e.contains("`pathpool keygen --overlay "),
            "{e}"
        );
        let key = crate::keys::new_overlay_key().unwrap();
        crate::keys::write_key_file(&dir.join("overlay.key"), &key.to_hex()).unwrap();
        let keyed = Overlay::load(&file).unwrap();
        let plain = Overlay::from_toml(PAIR, "o.toml").unwrap();
        let a = plain.node("a").unwrap();
        assert_ne!(
            keyed.node_links(a)[0].tag,
            plain.node_links(a)[0].tag,
            "the tags depend on the key"
        );
        // security = "off" needs no key.
        std::fs::write(&file, format!("security = \"off\"\n{PAIR}")).unwrap();
        std::fs::remove_file(dir.join("overlay.key")).unwrap();
        let off = Overlay::load(&file).unwrap();
        assert!(off.overlay_key().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
