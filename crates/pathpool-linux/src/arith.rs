//! The kernel's coupled arithmetic, run on the host.
//!
//! `bpf/host.c` compiles `bpf/pp_coupled.h`, the header the BPF programs include, into this
//! crate; the tests below feed it the windows, RTTs and loss histories of pathpool-cc's own
//! controller tests and check that it gives the same increases, alphas, m² and m_t, and
//! ssthresh values (issue 23, acceptance 1). The kernel works in segments and microseconds,
//! the simulator in bytes and seconds; every formula is homogeneous of degree 0 in both.

// The one use of `unsafe` in the crate: calls into the C header compiled for the host.
#![allow(unsafe_code)]

/// `struct pp_view`: one subflow as the arithmetic sees it (an array of eight has the layout
/// of `struct pp_group`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Smoothed RTT, microseconds; 0 before a sample.
    pub rtt_us: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// 1 when in the served subflow's group and taking part.
    pub member: u32,
    /// Inter-loss interval, segments.
    pub interval: u64,
}

/// The slots of a connection (`PP_MAX_SUBFLOWS`).
pub type Views = [View; crate::maps::MAX_SUBFLOWS];

extern "C" {
    fn pp_host_fp_value(a: u64) -> f64;
    fn pp_host_lia_increase(v: *const View, i: i32, alpha: *mut f64) -> f64;
    fn pp_host_olia_increase(v: *const View, i: i32, epsilon: *mut f64) -> f64;
    fn pp_host_balia_increase(v: *const View, i: i32, alpha: *mut f64) -> f64;
    fn pp_host_balia_ssthresh(v: *const View, i: i32) -> u64;
    fn pp_host_nmcc_m2(v: *const View, prev: f64, flags: u32) -> f64;
    fn pp_host_nmcc_mt(v: *const View, m2: f64, flags: u32) -> f64;
    fn pp_host_nmcc_ca_increase(v: *const View, i: i32, m2: f64) -> f64;
    fn pp_host_nmcc_ssthresh(
        v: *const View,
        i: i32,
        m2: f64,
        losses: u64,
        flags: u32,
        floor: u32,
    ) -> u64;
    fn pp_host_fp_roundtrip(a: u64, b: u64, op: i32) -> f64;
}

fn index(i: usize) -> i32 {
    assert!(i < crate::maps::MAX_SUBFLOWS, "slot {i} out of range");
    i as i32
}

/// LIA's increase per acknowledged segment of subflow `i`, and alpha (0 when undefined).
#[must_use]
pub fn lia_increase(v: &Views, i: usize) -> (f64, f64) {
    let mut alpha = 0.0;
    // SAFETY: `v` is a valid array of PP_MAX_SUBFLOWS views; `alpha` a valid out pointer.
    let inc = unsafe { pp_host_lia_increase(v.as_ptr(), index(i), &mut alpha) };
    (inc, alpha)
}

/// OLIA's (signed) increase per acknowledged segment, and epsilon.
#[must_use]
pub fn olia_increase(v: &Views, i: usize) -> (f64, f64) {
    let mut eps = 0.0;
    // SAFETY: as above.
    let inc = unsafe { pp_host_olia_increase(v.as_ptr(), index(i), &mut eps) };
    (inc, eps)
}

/// BALIA's increase per acknowledged segment, and alpha = max rate / own rate.
#[must_use]
pub fn balia_increase(v: &Views, i: usize) -> (f64, f64) {
    let mut alpha = 0.0;
    // SAFETY: as above.
    let inc = unsafe { pp_host_balia_increase(v.as_ptr(), index(i), &mut alpha) };
    (inc, alpha)
}

/// BALIA's ssthresh after a loss, segments.
#[must_use]
pub fn balia_ssthresh(v: &Views, i: usize) -> u64 {
    // SAFETY: as above.
    unsafe { pp_host_balia_ssthresh(v.as_ptr(), index(i)) }
}

/// NMCC's m² from the members, the phase test using `prev` (`flags`: [`NmccOptions::flags`]).
///
/// [`NmccOptions::flags`]: crate::loader::NmccOptions::flags
#[must_use]
pub fn nmcc_m2(v: &Views, prev: f64, flags: u32) -> f64 {
    // SAFETY: as above.
    unsafe { pp_host_nmcc_m2(v.as_ptr(), prev, flags) }
}

/// NMCC's loss-time factor m_t.
#[must_use]
pub fn nmcc_mt(v: &Views, m2: f64, flags: u32) -> f64 {
    // SAFETY: as above.
    unsafe { pp_host_nmcc_mt(v.as_ptr(), m2, flags) }
}

/// NMCC's congestion-avoidance increase per acknowledged segment.
#[must_use]
pub fn nmcc_ca_increase(v: &Views, i: usize, m2: f64) -> f64 {
    // SAFETY: as above.
    unsafe { pp_host_nmcc_ca_increase(v.as_ptr(), index(i), m2) }
}

/// NMCC's ssthresh after a loss, segments, given the group's congestion events so far.
#[must_use]
pub fn nmcc_ssthresh(
    v: &Views,
    i: usize,
    m2: f64,
    group_losses: u64,
    (flags, floor): (u32, u32),
) -> u64 {
    // SAFETY: as above.
    unsafe { pp_host_nmcc_ssthresh(v.as_ptr(), index(i), m2, group_losses, flags, floor) }
}

/// One software-float operation on two integers (0 add, 1 sub, 2 mul, 3 div).
#[must_use]
pub fn fp_op(a: u64, b: u64, op: i32) -> f64 {
    // SAFETY: plain values.
    unsafe { pp_host_fp_roundtrip(a, b, op) }
}

/// The value of the software float m·2^e (`m` below 2^32; tests of the representation).
#[must_use]
pub fn fp_value(m: u32, e: i32) -> f64 {
    let packed = (u64::from(e as u32) << 32) | u64::from(m);
    // SAFETY: a plain value.
    unsafe { pp_host_fp_value(packed) }
}

#[cfg(test)]
#[path = "arith_tests.rs"]
mod tests;
