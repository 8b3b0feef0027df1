//! Physical units and the parsers for the forms people write them in.
//!
//! | quantity | type | examples |
//! |---|---|---|
//! | data rate | [`Rate`] (bits/s) | `10Mbps`, `1.5 Gb/s`, `100kbit/s`, `inf` |
//! | time span | [`Dur`] (ps) | `5ms`, `1.5s`, `100us`, `2min` |
//! | amount of data | [`ByteSize`] (bytes) | `1500B`, `1.5MB`, `64KiB` |
//! | buffer size | [`BufferSize`] | `100pkts`, `64KB` |
//!
//! Decimal prefixes are powers of 10 (`MB` = 10^6 bytes, `Mbps` = 10^6 bit/s); binary prefixes
//! (`KiB`, `MiB`, `GiB`) are powers of 1024. Numbers are parsed exactly as decimals (no binary
//! floating point), then rounded to the nearest integer of the base unit, so `0.1ms` is exactly
//! 100 000 000 ps. A bare number without a unit is rejected: it is the most common source of
//! silent factor-of-1000 errors in scenario files.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::time::{Dur, PS_PER_S};

/// Why a quantity could not be parsed: the input, what was wrong and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseUnitError {
    /// The text that was given.
    pub input: String,
    /// What is wrong with it.
    pub problem: String,
    /// What would have been accepted, with examples.
    pub allowed: &'static str,
    /// The input as it was most likely meant (`"10Mbps"` for `"10mbps"`), when a unit is
    /// misspelt in a way that has one reading.
    pub suggestion: Option<String>,
}

impl fmt::Display for ParseUnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.input, self.problem)?;
        if let Some(s) = &self.suggestion {
            write!(f, " (did you mean {s:?}?)")?;
        }
        write!(f, "; {}", self.allowed)
    }
}

impl std::error::Error for ParseUnitError {}

const RATE_ALLOWED: &str = "expected a non-negative data rate with a unit: bps, kbps, Mbps, Gbps, \
                            Tbps (or bit/s, b/s forms), e.g. \"10Mbps\", \"1.5 Gb/s\", or \"inf\"";
const DUR_ALLOWED: &str = "expected a non-negative time with a unit: ps, ns, us, ms, s, min, h, \
                           e.g. \"5ms\", \"1.5s\"";
const BYTES_ALLOWED: &str = "expected a non-negative amount of data with a unit: B, KB, MB, GB, \
                             TB (powers of 1000) or KiB, MiB, GiB (powers of 1024), e.g. \"1500B\", \
                             \"1.5MB\"";
const BUFFER_ALLOWED: &str =
    "expected a buffer size in packets (\"100pkts\") or in bytes (\"64KB\", \
                              \"1.5MB\")";

/// An exact non-negative decimal number: `mantissa × 10^-scale`.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

impl Decimal {
    /// Multiplies by `factor` and rounds half-up to an integer; `None` on overflow.
    fn times(self, factor: u128) -> Option<u128> {
        let num = self.mantissa.checked_mul(factor)?;
        let den = 10u128.checked_pow(self.scale)?;
        Some((num + den / 2) / den)
    }
}

/// Splits `s` into a leading decimal number and the trimmed unit that follows it.
fn split_number(s: &str) -> Result<(Decimal, &str), String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err("negative values are not allowed".into());
    }
    let s = s.strip_prefix('+').unwrap_or(s);
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut mantissa: u128 = 0;
    let mut scale: i64 = 0;
    let mut digits = 0;
    let mut seen_point = false;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() {
            mantissa = mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(u128::from(c - b'0')))
                .ok_or("number has too many digits")?;
            digits += 1;
            if seen_point {
                scale += 1;
            }
        } else if c == b'_' && digits > 0 {
            // Allow digit grouping such as 1_000_000.
        } else if c == b'.' && !seen_point {
            seen_point = true;
        } else {
            break;
        }
        i += 1;
    }
    if digits == 0 {
        return Err("no number found".into());
    }
    // Optional exponent: e.g. 1e9bps, 2.5E-3s.
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        let mut neg = false;
        if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
            neg = bytes[j] == b'-';
            j += 1;
        }
        let start = j;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            let exp: i64 = s[start..j].parse().map_err(|_| "bad exponent")?;
            scale += if neg { exp } else { -exp };
            i = j;
        }
    }
    while scale < 0 {
        mantissa = mantissa.checked_mul(10).ok_or("number too large")?;
        scale += 1;
    }
    let scale = u32::try_from(scale).map_err(|_| "exponent too large")?;
    if scale > 30 {
        return Err("too many decimal places".into());
    }
    Ok((Decimal { mantissa, scale }, s[i..].trim()))
}

fn err(input: &str, problem: impl Into<String>, allowed: &'static str) -> ParseUnitError {
    ParseUnitError {
        input: input.to_string(),
        problem: problem.into(),
        allowed,
        suggestion: None,
    }
}

/// Units written another way that have exactly one reading: (as written, meant).
const UNIT_ALIASES: &[(&str, &str)] = &[
    // Durations.
    ("msec", "ms"),
    ("msecs", "ms"),
    ("millisecond", "ms"),
    ("milliseconds", "ms"),
    ("usec", "us"),
    ("usecs", "us"),
    ("microsecond", "us"),
    ("microseconds", "us"),
    ("nsec", "ns"),
    ("nanosecond", "ns"),
    ("nanoseconds", "ns"),
    ("secs", "s"),
    ("second", "s"),
    ("seconds", "s"),
    ("mins", "min"),
    ("minute", "min"),
    ("minutes", "min"),
    ("hr", "h"),
    ("hrs", "h"),
    ("hour", "h"),
    ("hours", "h"),
    // Rates written as an amount of bits.
    ("kbit", "kbps"),
    ("Mbit", "Mbps"),
    ("mbit", "Mbps"),
    ("Gbit", "Gbps"),
    ("gbit", "Gbps"),
    ("Mb", "Mbps"),
    ("mb", "Mbps"),
    ("Gb", "Gbps"),
    ("gb", "Gbps"),
    ("kb", "kbps"),
    ("Kb", "kbps"),
    // Packets.
    ("pck", "pkts"),
    ("pcks", "pkts"),
    ("pkg", "pkts"),
    ("pkgs", "pkts"),
];

/// `text` with its unit replaced by the one it most likely meant among `units`: the same
/// letters in another case (`mbps` → `Mbps`), or a known alias (`msec` → `ms`). A capital B
/// reads as bytes, so it is never turned into a unit of bits (`MBPS` is not `Mbps`).
fn suggest_unit(text: &str, unit: &str, units: &[&str]) -> Option<String> {
    let bytes_to_bits = |meant: &str| unit.contains('B') && !meant.contains('B');
    let meant = units
        .iter()
        .find(|u| u.eq_ignore_ascii_case(unit) && !bytes_to_bits(u))
        .copied()
        .or_else(|| {
            UNIT_ALIASES
                .iter()
                .find(|(alias, m)| {
                    alias.eq_ignore_ascii_case(unit) && !bytes_to_bits(m) && units.contains(m)
                })
                .map(|&(_, m)| m)
        })?;
    with_unit(text, unit, meant)
}

/// `text` (a number and then `unit`) with `meant` for its unit.
fn with_unit(text: &str, unit: &str, meant: &str) -> Option<String> {
    let number = text.trim().strip_suffix(unit)?.trim();
    Some(format!("{number}{meant}"))
}

/// Parses `text` as a number followed by one of `units` (name, factor to the base unit).
fn parse_with_units(
    text: &str,
    units: &[(&str, u128)],
    allowed: &'static str,
) -> Result<u128, ParseUnitError> {
    let (num, unit) = split_number(text).map_err(|p| err(text, p, allowed))?;
    if unit.is_empty() {
        return Err(err(text, "missing unit", allowed));
    }
    let factor = units
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|&(_, f)| f)
        .ok_or_else(|| {
            let names: Vec<&str> = units.iter().map(|&(n, _)| n).collect();
            ParseUnitError {
                suggestion: suggest_unit(text, unit, &names),
                ..err(text, format!("unknown unit {unit:?}"), allowed)
            }
        })?;
    num.times(factor)
        .ok_or_else(|| err(text, "value too large", allowed))
}

// ---------------------------------------------------------------------------------------------
// Rate

/// A data rate in bits per second. [`Rate::INFINITE`] stands for a link with no serialisation
/// delay (a pure propagation delay, or a wire).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    /// No serialisation delay at all.
    pub const INFINITE: Rate = Rate(u64::MAX);

    /// `bps` bits per second.
    #[must_use]
    pub const fn from_bps(bps: u64) -> Rate {
        Rate(bps)
    }
    /// `mbps` megabits (10^6 bits) per second.
    #[must_use]
    pub const fn from_mbps(mbps: u64) -> Rate {
        Rate(mbps * 1_000_000)
    }
    /// `gbps` gigabits (10^9 bits) per second.
    #[must_use]
    pub const fn from_gbps(gbps: u64) -> Rate {
        Rate(gbps * 1_000_000_000)
    }
    /// Bits per second.
    #[must_use]
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Whether this is [`Rate::INFINITE`].
    #[must_use]
    pub const fn is_infinite(self) -> bool {
        self.0 == u64::MAX
    }
    /// Time to serialise `bytes` at this rate, rounded to the nearest picosecond. Zero for an
    /// infinite rate; [`Dur::MAX`] for a zero rate.
    #[must_use]
    pub fn tx_time(self, bytes: u64) -> Dur {
        if self.is_infinite() {
            return Dur::ZERO;
        }
        if self.0 == 0 {
            return Dur::MAX;
        }
        let num = u128::from(bytes) * 8 * u128::from(PS_PER_S);
        let rate = u128::from(self.0);
        let ps = (num + rate / 2) / rate;
        Dur(u64::try_from(ps).unwrap_or(u64::MAX))
    }
    /// Bytes this rate carries in `d` (the bandwidth-delay product for a round trip `d`).
    #[must_use]
    pub fn bytes_in(self, d: Dur) -> u64 {
        let bits = u128::from(self.0) * u128::from(d.as_ps()) / u128::from(PS_PER_S);
        u64::try_from(bits / 8).unwrap_or(u64::MAX)
    }
}

const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("b/s", 1),
    ("bit/s", 1),
    ("kbps", 1_000),
    ("Kbps", 1_000),
    ("kb/s", 1_000),
    ("Kb/s", 1_000),
    ("kbit/s", 1_000),
    ("Kbit/s", 1_000),
    ("Mbps", 1_000_000),
    ("Mb/s", 1_000_000),
    ("Mbit/s", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("Gb/s", 1_000_000_000),
    ("Gbit/s", 1_000_000_000),
    ("Tbps", 1_000_000_000_000),
    ("Tb/s", 1_000_000_000_000),
    ("Tbit/s", 1_000_000_000_000),
];

impl FromStr for Rate {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Rate, ParseUnitError> {
        let t = s.trim();
        if matches!(t, "inf" | "infinite" | "unlimited") {
            return Ok(Rate::INFINITE);
        }
        if let Ok((_, unit)) = split_number(t) {
            if matches!(
                unit,
                "Bps" | "KBps" | "kBps" | "MBps" | "GBps" | "B/s" | "MB/s" | "GB/s"
            ) {
                return Err(err(
                    s,
                    "bytes per second are not accepted (write bits: 1MB/s = 8Mbps)",
                    RATE_ALLOWED,
                ));
            }
        }
        let bps = parse_with_units(t, RATE_UNITS, RATE_ALLOWED)?;
        let bps = u64::try_from(bps)
            .ok()
            .filter(|&b| b != u64::MAX)
            .ok_or_else(|| err(s, "value too large", RATE_ALLOWED))?;
        Ok(Rate(bps))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_infinite() {
            return f.write_str("inf");
        }
        let v = self.0;
        for (div, unit) in [
            (1_000_000_000_000, "Tbps"),
            (1_000_000_000, "Gbps"),
            (1_000_000, "Mbps"),
            (1_000, "kbps"),
        ] {
            if v >= div && v % (div / 1000) == 0 {
                return if v % div == 0 {
                    write!(f, "{}{unit}", v / div)
                } else {
                    let s = format!("{:.3}", v as f64 / div as f64);
                    write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'))
                };
            }
        }
        write!(f, "{v}bps")
    }
}
impl fmt::Debug for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

// ---------------------------------------------------------------------------------------------
// Duration

const DUR_UNITS: &[(&str, u128)] = &[
    ("ps", 1),
    ("ns", 1_000),
    ("us", 1_000_000),
    ("µs", 1_000_000),
    ("ms", 1_000_000_000),
    ("s", 1_000_000_000_000),
    ("sec", 1_000_000_000_000),
    ("min", 60_000_000_000_000),
    ("h", 3_600_000_000_000_000),
];

impl FromStr for Dur {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Dur, ParseUnitError> {
        let ps = parse_with_units(s, DUR_UNITS, DUR_ALLOWED)?;
        u64::try_from(ps)
            .map(Dur)
            .map_err(|_| err(s, "value too large", DUR_ALLOWED))
    }
}

// ---------------------------------------------------------------------------------------------
// Bytes

/// An amount of data in bytes, as written in scenario files (`1.5MB`).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

const BYTE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("bytes", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

impl ByteSize {
    /// The number of bytes.
    #[must_use]
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl FromStr for ByteSize {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<ByteSize, ParseUnitError> {
        if let Ok((_, unit)) = split_number(s) {
            if matches!(unit, "b" | "kb" | "Kb" | "Mb" | "Gb" | "bit" | "bits") {
                let bytes = match unit {
                    "b" | "bit" | "bits" => "B",
                    u => &u.to_ascii_uppercase(),
                };
                return Err(ParseUnitError {
                    suggestion: suggest_unit(s, unit, &[bytes]).filter(|_| unit != "bits"),
                    ..err(
                        s,
                        "that is a number of bits; sizes are in bytes (B)",
                        BYTES_ALLOWED,
                    )
                });
            }
        }
        let b = parse_with_units(s, BYTE_UNITS, BYTES_ALLOWED)?;
        u64::try_from(b)
            .map(ByteSize)
            .map_err(|_| err(s, "value too large", BYTES_ALLOWED))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        for (div, unit) in [(1_000_000_000u64, "GB"), (1_000_000, "MB"), (1_000, "KB")] {
            if v >= div && v % (div / 1000) == 0 {
                let s = format!("{:.3}", v as f64 / div as f64);
                return write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'));
            }
        }
        write!(f, "{v}B")
    }
}
impl fmt::Debug for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A queue capacity: a number of packets or a number of bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferSize {
    /// At most this many packets, whatever their size.
    Packets(u64),
    /// At most this many bytes.
    Bytes(u64),
}

impl FromStr for BufferSize {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<BufferSize, ParseUnitError> {
        let (num, unit) = split_number(s).map_err(|p| err(s, p, BUFFER_ALLOWED))?;
        const PACKETS: [&str; 5] = ["pkt", "pkts", "packet", "packets", "p"];
        if PACKETS.contains(&unit) {
            if num.scale != 0 {
                // A fractional packet count such as "1.5pkts" makes no sense.
                return Err(err(
                    s,
                    "a packet count must be a whole number",
                    BUFFER_ALLOWED,
                ));
            }
            let n = u64::try_from(num.mantissa)
                .map_err(|_| err(s, "value too large", BUFFER_ALLOWED))?;
            return Ok(BufferSize::Packets(n));
        }
        match ByteSize::from_str(s) {
            Ok(b) => Ok(BufferSize::Bytes(b.0)),
            Err(e) => {
                // A misspelt packet unit (`100packts`, `100pck`) before a byte unit's.
                let packets = crate::text::closest(unit, PACKETS)
                    .filter(|_| unit.len() > 2)
                    .and_then(|p| with_unit(s, unit, p))
                    .or_else(|| suggest_unit(s, unit, &["pkts"]));
                Err(ParseUnitError {
                    suggestion: packets.or(e.suggestion),
                    ..err(s, e.problem, BUFFER_ALLOWED)
                })
            }
        }
    }
}

impl fmt::Display for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferSize::Packets(n) => write!(f, "{n}pkts"),
            BufferSize::Bytes(b) => write!(f, "{}", ByteSize(*b)),
        }
    }
}
impl fmt::Debug for BufferSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

// ---------------------------------------------------------------------------------------------
// serde: every quantity is a string with a unit in scenario files.

macro_rules! serde_via_str {
    ($ty:ty, $what:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str(concat!("a string holding ", $what))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        v.parse().map_err(|e: ParseUnitError| E::custom(e))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "the number {v} has no unit; write it as a string with a unit, e.g. {}",
                            $what
                        )))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "the number {v} has no unit; write it as a string with a unit, e.g. {}",
                            $what
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

serde_via_str!(Rate, "\"10Mbps\"");
serde_via_str!(Dur, "\"5ms\"");
serde_via_str!(ByteSize, "\"1.5MB\"");
serde_via_str!(BufferSize, "\"100pkts\" or \"64KB\"");

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn misspelt_units_get_the_reading_they_have() {
        let meant = |e: Result<(), ParseUnitError>| e.unwrap_err().suggestion;
        let rate = |s: &str| meant(s.parse::<Rate>().map(|_| ()));
        let dur = |s: &str| meant(s.parse::<Dur>().map(|_| ()));
        let size = |s: &str| meant(s.parse::<ByteSize>().map(|_| ()));
        let buf = |s: &str| meant(s.parse::<BufferSize>().map(|_| ()));
        assert_eq!(rate("10mbps").as_deref(), Some("10Mbps"));
        assert_eq!(rate("1.5 gbit/s").as_deref(), Some("1.5Gbit/s"));
        assert_eq!(rate("10Mbit").as_deref(), Some("10Mbps"));
        assert_eq!(rate("10MBPS"), None, "bytes are not turned into bits");
        assert_eq!(rate("10MB"), None);
        assert_eq!(rate("10 furlongs"), None);
        assert_eq!(dur("5 msec").as_deref(), Some("5ms"));
        assert_eq!(dur("2 Seconds").as_deref(), Some("2s"));
        assert_eq!(dur("5MS").as_deref(), Some("5ms"));
        assert_eq!(size("10mb").as_deref(), Some("10MB"));
        assert_eq!(
            size("64kb").as_deref(),
            Some("64KB"),
            "bits read as the bytes meant"
        );
        assert_eq!(size("1kib").as_deref(), Some("1KiB"));
        assert_eq!(buf("100packts").as_deref(), Some("100packets"));
        assert_eq!(buf("100pck").as_deref(), Some("100pkts"));
        assert_eq!(buf("100Kb").as_deref(), Some("100KB"));
        let e = "10mbps".parse::<Rate>().unwrap_err().to_string();
        assert!(
            e.starts_with("\"10mbps\": unknown unit \"mbps\" (did you mean \"10Mbps\"?); expected"),
            "{e}"
        );
    }

    #[test]
    fn rates() {
        assert_eq!("10Mbps".parse::<Rate>().unwrap(), Rate::from_mbps(10));
        assert_eq!("1.5 Gb/s".parse::<Rate>().unwrap(), Rate(1_500_000_000));
        assert_eq!("100kbit/s".parse::<Rate>().unwrap(), Rate(100_000));
        assert_eq!("1e9bps".parse::<Rate>().unwrap(), Rate::from_gbps(1));
        assert_eq!("inf".parse::<Rate>().unwrap(), Rate::INFINITE);
        assert_eq!(Rate::from_mbps(10).to_string(), "10Mbps");
        assert_eq!(Rate(1_500_000_000).to_string(), "1.5Gbps");
    }

    #[test]
    fn rate_errors_name_the_problem() {
        let e = "-10Mbps".parse::<Rate>().unwrap_err();
        assert!(e.problem.contains("negative"), "{e}");
        let e = "10".parse::<Rate>().unwrap_err();
        assert!(e.problem.contains("missing unit"), "{e}");
        let e = "10MBps".parse::<Rate>().unwrap_err();
        assert!(e.problem.contains("bytes per second"), "{e}");
        let e = "10 furlongs".parse::<Rate>().unwrap_err();
        assert!(e.problem.contains("furlongs"), "{e}");
        assert!(
            e.to_string().contains("Mbps"),
            "error lists the allowed units: {e}"
        );
    }

    #[test]
    fn durations_are_exact() {
        assert_eq!("5ms".parse::<Dur>().unwrap(), Dur::from_ms(5));
        assert_eq!("0.1ms".parse::<Dur>().unwrap(), Dur(100_000_000));
        assert_eq!("1.5s".parse::<Dur>().unwrap(), Dur::from_ms(1500));
        assert_eq!("2min".parse::<Dur>().unwrap(), Dur::from_secs(120));
        assert_eq!("250 us".parse::<Dur>().unwrap(), Dur::from_us(250));
        assert!("5".parse::<Dur>().is_err());
        assert!("-5ms".parse::<Dur>().is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!("1.5MB".parse::<ByteSize>().unwrap(), ByteSize(1_500_000));
        assert_eq!("64KiB".parse::<ByteSize>().unwrap(), ByteSize(65_536));
        assert_eq!("1500B".parse::<ByteSize>().unwrap(), ByteSize(1500));
        assert!("10Mb"
            .parse::<ByteSize>()
            .unwrap_err()
            .problem
            .contains("bits"));
        assert_eq!(
            "100pkts".parse::<BufferSize>().unwrap(),
            BufferSize::Packets(100)
        );
        assert_eq!(
            "64KB".parse::<BufferSize>().unwrap(),
            BufferSize::Bytes(64_000)
        );
        assert!("1.5pkts".parse::<BufferSize>().is_err());
    }

    #[test]
    fn tx_time_and_bdp() {
        // 1500 B at 1 Gb/s is exactly 12 us.
        assert_eq!(Rate::from_gbps(1).tx_time(1500), Dur::from_us(12));
        assert_eq!(Rate::INFINITE.tx_time(1500), Dur::ZERO);
        // 100 Mb/s x 50 ms = 625 000 bytes.
        assert_eq!(Rate::from_mbps(100).bytes_in(Dur::from_ms(50)), 625_000);
    }

    proptest! {
        #[test]
        fn display_round_trips(bps in 1u64..10_000_000_000_000) {
            let r = Rate(bps);
            let back: Rate = r.to_string().parse().unwrap();
            // Display keeps three decimals of the chosen prefix, so the value survives exactly
            // whenever it was printed without rounding.
            if r.to_string().ends_with("bps") && !r.to_string().contains('.') {
                prop_assert_eq!(back, r);
            }
        }

        #[test]
        fn duration_round_trips(ps in 0u64..u64::MAX / 4) {
            let d = Dur(ps);
            let back: Dur = d.to_string().parse().unwrap();
            let tol = d.0 / 1_000_000 + 1;
            prop_assert!(back.0.abs_diff(d.0) <= tol, "{} -> {}", d, back);
        }

        #[test]
        fn parser_never_panics(s in "\\PC{0,20}") {
            let _ = s.parse::<Rate>();
            let _ = s.parse::<Dur>();
            let _ = s.parse::<ByteSize>();
            let _ = s.parse::<BufferSize>();
        }
    }
}
