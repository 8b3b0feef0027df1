//! Integer virtual time.
//!
//! Time is counted in picoseconds in a `u64` (as in htsim's `simtime_picosec`): 2^64 ps is
//! about 213 days, and at 400 Gb/s one byte takes exactly 20 ps, so serialisation times stay
//! exact. [`Time`] is an instant since the start of a run (or a driver's epoch); [`Dur`] is a
//! span between two instants.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: u64 = 1_000_000_000;
/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant in virtual time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of virtual time, in picoseconds.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);
    /// The largest representable instant; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// The instant `ps` picoseconds after the start.
    #[must_use]
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    /// The instant `ms` milliseconds after the start.
    #[must_use]
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * PS_PER_MS)
    }
    /// The instant `s` seconds after the start.
    #[must_use]
    pub const fn from_secs(s: u64) -> Time {
        Time(s * PS_PER_S)
    }
    /// The instant `s` seconds after the start, rounded to the nearest picosecond.
    #[must_use]
    pub fn from_secs_f64(s: f64) -> Time {
        Time(Dur::from_secs_f64(s).0)
    }
    /// Picoseconds since the start.
    #[must_use]
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Seconds since the start, as a float (for reporting only).
    #[must_use]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// The span since `earlier`, or zero if `earlier` is later than `self`.
    #[must_use]
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at [`Time::MAX`].
    #[must_use]
    pub fn saturating_add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl Dur {
    /// No time at all.
    pub const ZERO: Dur = Dur(0);
    /// The longest representable span.
    pub const MAX: Dur = Dur(u64::MAX);

    /// A span of `ps` picoseconds.
    #[must_use]
    pub const fn from_ps(ps: u64) -> Dur {
        Dur(ps)
    }
    /// A span of `ns` nanoseconds.
    #[must_use]
    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns * PS_PER_NS)
    }
    /// A span of `us` microseconds.
    #[must_use]
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * PS_PER_US)
    }
    /// A span of `ms` milliseconds.
    #[must_use]
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * PS_PER_MS)
    }
    /// A span of `s` seconds.
    #[must_use]
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * PS_PER_S)
    }
    /// A span of `s` seconds, rounded to the nearest picosecond; negative or NaN gives zero and
    /// values beyond the range saturate.
    #[must_use]
    pub fn from_secs_f64(s: f64) -> Dur {
        let ps = libm::round(s * PS_PER_S as f64);
        if ps.is_nan() || ps <= 0.0 {
            Dur::ZERO
        } else if ps >= u64::MAX as f64 {
            Dur::MAX
        } else {
            Dur(ps as u64)
        }
    }
    /// The span in picoseconds.
    #[must_use]
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// The span in seconds, as a float (for reporting and for rate arithmetic in controllers).
    #[must_use]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
    /// `self * k`, saturating at [`Dur::MAX`].
    #[must_use]
    pub fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
    /// The smaller of two spans.
    #[must_use]
    pub fn min(self, other: Dur) -> Dur {
        Dur(self.0.min(other.0))
    }
    /// The larger of two spans.
    #[must_use]
    pub fn max(self, other: Dur) -> Dur {
        Dur(self.0.max(other.0))
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0 + d.0)
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 += d.0;
    }
}
impl Sub<Dur> for Time {
    type Output = Time;
    fn sub(self, d: Dur) -> Time {
        Time(self.0 - d.0)
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, earlier: Time) -> Dur {
        Dur(self.0 - earlier.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0 + o.0)
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, o: Dur) {
        self.0 += o.0;
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, o: Dur) -> Dur {
        Dur(self.0 - o.0)
    }
}
impl SubAssign for Dur {
    fn sub_assign(&mut self, o: Dur) {
        self.0 -= o.0;
    }
}
impl Mul<u64> for Dur {
    type Output = Dur;
    fn mul(self, k: u64) -> Dur {
        Dur(self.0 * k)
    }
}
impl Div<u64> for Dur {
    type Output = Dur;
    fn div(self, k: u64) -> Dur {
        Dur(self.0 / k)
    }
}

/// Writes a span in the largest unit that keeps it readable, e.g. `1.5ms`, `200ms`, `12us`.
fn fmt_ps(ps: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if ps == 0 {
        return f.write_str("0s");
    }
    let (div, unit) = if ps >= PS_PER_S {
        (PS_PER_S, "s")
    } else if ps >= PS_PER_MS {
        (PS_PER_MS, "ms")
    } else if ps >= PS_PER_US {
        (PS_PER_US, "us")
    } else if ps >= PS_PER_NS {
        (PS_PER_NS, "ns")
    } else {
        (1, "ps")
    };
    if ps % div == 0 {
        write!(f, "{}{unit}", ps / div)
    } else {
        let v = ps as f64 / div as f64;
        let s = format!("{v:.6}");
        write!(f, "{}{unit}", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Debug for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_ps(self.0, f)
    }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("t=")?;
        fmt_ps(self.0, f)
    }
}
impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_constructors_agree() {
        assert_eq!(Dur::from_ms(5), Dur::from_us(5_000));
        assert_eq!(Dur::from_secs(1), Dur::from_ns(1_000_000_000));
        assert_eq!(Time::from_ms(1500), Time::from_secs_f64(1.5));
        assert_eq!(Dur::from_secs_f64(-1.0), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(f64::NAN), Dur::ZERO);
        assert_eq!(Dur::from_secs_f64(1e12), Dur::MAX);
    }

    #[test]
    fn arithmetic() {
        let t = Time::from_ms(10) + Dur::from_ms(5);
        assert_eq!(t, Time::from_ms(15));
        assert_eq!(t - Time::from_ms(10), Dur::from_ms(5));
        assert_eq!(
            Time::from_ms(1).saturating_since(Time::from_ms(2)),
            Dur::ZERO
        );
        assert_eq!(Dur::from_ms(3) * 2, Dur::from_ms(6));
        assert_eq!(Dur::from_ms(6) / 4, Dur::from_us(1500));
    }

    #[test]
    fn display_is_readable() {
        assert_eq!(Dur::from_ms(200).to_string(), "200ms");
        assert_eq!(Dur::from_us(1500).to_string(), "1.5ms");
        assert_eq!(Dur::from_ps(12).to_string(), "12ps");
        assert_eq!(Dur::ZERO.to_string(), "0s");
        assert_eq!(Time::from_secs(3).to_string(), "t=3s");
    }
}
