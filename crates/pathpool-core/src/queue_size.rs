//! A queue's size as a scenario file writes it: packets, bytes, or a time at the link's rate
//! (`"50ms"`: what the link sends in 50 ms, as the INRPP document sizes its queues; issue
//! 21).

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::units::{BufferSize, ParseUnitError, Rate};
use crate::Dur;

const QUEUE_ALLOWED: &str = "expected a queue size in packets (\"100pkts\"), in bytes (\"64KB\", \
                             \"1.5MB\") or in time at the link's rate (\"50ms\")";

/// A queue size: a [`BufferSize`], or a time that the link's rate turns into bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum QueueSize {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes.
    Bytes(u64),
    /// What the link sends in this time, in bytes (rate × time, rounded down).
    Time(Dur),
}

impl QueueSize {
    /// The size in packets or bytes on a link of `rate`; a time becomes bytes.
    ///
    /// # Errors
    /// A time on a link of infinite rate, which has no size in bytes.
    pub fn at_rate(self, rate: Rate) -> Result<BufferSize, String> {
        match self {
            QueueSize::Packets(n) => Ok(BufferSize::Packets(n)),
            QueueSize::Bytes(n) => Ok(BufferSize::Bytes(n)),
            QueueSize::Time(d) if rate.is_infinite() => Err(format!(
                "{d} is a time: it needs a link of finite rate (give the size in packets or bytes)"
            )),
            QueueSize::Time(d) => Ok(BufferSize::Bytes(rate.bytes_in(d))),
        }
    }
}

impl From<BufferSize> for QueueSize {
    fn from(b: BufferSize) -> QueueSize {
        match b {
            BufferSize::Packets(n) => QueueSize::Packets(n),
            BufferSize::Bytes(n) => QueueSize::Bytes(n),
        }
    }
}

impl FromStr for QueueSize {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<QueueSize, ParseUnitError> {
        match s.parse::<BufferSize>() {
            Ok(b) => Ok(b.into()),
            // Packets and bytes first: their message (with its suggestion for a misspelt
            // unit) is the one to show when neither reading works.
            Err(e) => s
                .parse::<Dur>()
                .map(QueueSize::Time)
                .map_err(|_| ParseUnitError {
                    allowed: QUEUE_ALLOWED,
                    ..e
                }),
        }
    }
}

impl fmt::Display for QueueSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueSize::Packets(n) => fmt::Display::fmt(&BufferSize::Packets(*n), f),
            QueueSize::Bytes(n) => fmt::Display::fmt(&BufferSize::Bytes(*n), f),
            QueueSize::Time(d) => fmt::Display::fmt(d, f),
        }
    }
}

impl fmt::Debug for QueueSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Serialize for QueueSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for QueueSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = QueueSize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string holding \"100pkts\", \"64KB\" or \"50ms\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<QueueSize, E> {
                v.parse().map_err(|e: ParseUnitError| E::custom(e))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_bytes_and_time_parse_and_a_time_becomes_bytes_at_the_rate() {
        let q = |s: &str| s.parse::<QueueSize>().unwrap();
        assert_eq!(q("100pkts"), QueueSize::Packets(100));
        assert_eq!(q("64KB"), QueueSize::Bytes(64_000));
        assert_eq!(q("50ms"), QueueSize::Time(Dur::from_ms(50)));
        let rate: Rate = "10Mbps".parse().unwrap();
        // 10 Mb/s × 50 ms = 500 000 bits = 62 500 bytes.
        assert_eq!(q("50ms").at_rate(rate), Ok(BufferSize::Bytes(62_500)));
        assert_eq!(q("100pkts").at_rate(rate), Ok(BufferSize::Packets(100)));
        let e = q("50ms").at_rate(Rate::INFINITE).unwrap_err();
        assert!(e.contains("finite rate"), "{e}");
        for s in ["100pkts", "64KB", "50ms"] {
            assert_eq!(q(s).to_string().parse::<QueueSize>().unwrap(), q(s), "{s}");
        }
    }

    #[test]
    fn a_bad_size_names_every_allowed_form_and_keeps_the_suggestion() {
        let e = "100packts".parse::<QueueSize>().unwrap_err();
        assert_eq!(e.allowed, QUEUE_ALLOWED);
        assert_eq!(e.suggestion.as_deref(), Some("100packets"));
        let e = "fast".parse::<QueueSize>().unwrap_err();
        assert!(e.allowed.contains("50ms"), "{e}");
    }
}
