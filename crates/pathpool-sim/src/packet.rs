//! Simulated packets.
//!
//! A packet is a 24-byte `Copy` value carrying its place on its source route (`hop`), its size
//! on the wire and the parsed transport header. Packets are moved by value between the
//! preallocated rings of links and the endpoints; the rings grow to their peak occupancy and
//! are then reused, so a run in steady state performs no heap allocation per packet (the
//! `no_allocation_in_steady_state` test checks this with a counting allocator). This plays
//! the role of htsim's packet free list without an indirection per access.
//!
//! Only what cannot be derived is carried, since every packet in flight sits in a link's ring:
//! what a packet carries follows from the endpoint its route ends at (TCP sinks receive data
//! segments, TCP sources ACKs, UDP sinks datagrams), and the payload length from its size and
//! that flow's header size.

use pathpool_core::{Dur, Time};

/// Bit of `Packet::wire` that flags a retransmitted data segment.
const RETX: u32 = 1 << 31;
/// Bits of `Packet::wire` holding the size (sizes are below 1 MiB).
const SIZE_BITS: u32 = 20;
const SIZE_MASK: u32 = (1 << SIZE_BITS) - 1;
/// Subflows a multipath connection may have: their index sits in bits 20..31 of `wire`.
pub(crate) const MAX_SUBFLOWS: u32 = 1 << (31 - SIZE_BITS);

/// A packet in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet {
    /// Data: first sequence number; ACK: cumulative acknowledgement.
    pub(crate) seq: u64,
    /// Data: timestamp value; ACK: timestamp echo.
    pub(crate) ts: Time,
    /// Position in the simulation's route table of the next element on the packet's route.
    pub(crate) hop: u32,
    /// Bytes on the wire (headers included) in bits 0..20, the subflow of a multipath
    /// connection in bits 20..31 and the retransmission flag in bit 31.
    wire: u32,
}

impl Packet {
    /// A packet of `size` bytes on the wire; `retx` marks a retransmitted data segment.
    #[inline]
    pub(crate) fn new(seq: u64, ts: Time, hop: u32, size: u32, retx: bool) -> Self {
        Self::with_subflow(seq, ts, hop, size, retx, 0)
    }
    /// A packet of subflow `subflow` of a multipath connection.
    #[inline]
    pub(crate) fn with_subflow(
        seq: u64,
        ts: Time,
        hop: u32,
        size: u32,
        retx: bool,
        subflow: u32,
    ) -> Self {
        debug_assert!(size <= SIZE_MASK, "packet sizes are below 1 MiB");
        debug_assert!(subflow < MAX_SUBFLOWS, "at most {MAX_SUBFLOWS} subflows");
        Packet {
            seq,
            ts,
            hop,
            wire: size | subflow << SIZE_BITS | if retx { RETX } else { 0 },
        }
    }
    /// Bytes on the wire (headers included).
    #[inline]
    pub(crate) fn size(&self) -> u32 {
        self.wire & SIZE_MASK
    }
    /// The subflow of a multipath connection's packet (0 for other packets).
    #[inline]
    pub(crate) fn subflow(&self) -> u32 {
        (self.wire & !RETX) >> SIZE_BITS
    }
    /// Whether a data segment is a retransmission.
    #[inline]
    pub(crate) fn retx(&self) -> bool {
        self.wire & RETX != 0
    }
}

/// An NDN packet's flags in the subflow bits of `wire` (NDN packets are of no multipath
/// connection): ECN-capable (a Data, which a REM queue marks instead of dropping) and CE.
const NDN_ECT: u32 = 1;
const NDN_CE: u32 = 2;

impl Packet {
    /// An NDN packet of `size` bytes on the wire whose contents wait in slab entry `slot`;
    /// `ect`: a REM queue may mark it CE instead of dropping it.
    #[inline]
    pub(crate) fn ndn(slot: u32, size: u32, hop: u32, ect: bool) -> Self {
        let flags = if ect { NDN_ECT } else { 0 };
        Packet::with_subflow(u64::from(slot), Time::ZERO, hop, size, false, flags)
    }
    /// Whether a REM queue may mark the packet instead of dropping it (NDN Data only).
    #[inline]
    pub(crate) fn ecn_capable(&self) -> bool {
        self.subflow() & NDN_ECT != 0
    }
    /// Marks the packet CE.
    #[inline]
    pub(crate) fn set_ce(&mut self) {
        self.wire |= NDN_CE << SIZE_BITS;
    }
    /// Whether a REM queue marked the packet.
    #[inline]
    pub(crate) fn ce(&self) -> bool {
        self.subflow() & NDN_CE != 0
    }
}

/// Bits of an INRPP packet's `seq` that hold the sequence or acknowledgement number; the
/// bits above hold the nonce (D282).
const INRPP_SEQ_BITS: u32 = 40;
const INRPP_SEQ_MASK: u64 = (1 << INRPP_SEQ_BITS) - 1;
/// Largest nonce an INRPP packet carries (24 bits; routers number theirs below it).
pub(crate) const INRPP_MAX_NONCE: u32 = (1 << (64 - INRPP_SEQ_BITS)) - 1;
/// Largest byte count an INRPP flow may send (its sequence numbers take 40 bits).
pub(crate) const INRPP_MAX_BYTES: u64 = INRPP_SEQ_MASK;

/// The INRPP header of a packet of an INRPP flow (issue 21): a single-path flow, so the
/// subflow bits of `wire` are free for the ACK's notification, and its sequence numbers fit
/// in 40 bits, so the nonce takes the top 24 of `seq`. Other flows never call these, and the
/// packet stays 24 bytes (D282).
impl Packet {
    /// A packet of an INRPP flow: `seq` the sequence (data) or acknowledgement (ACK) number,
    /// `nonce` 0 for none, `notification` 0 none, 1 SLOW-DOWN, 2 CANCEL.
    #[inline]
    pub(crate) fn inrpp(
        seq: u64,
        ts: Time,
        hop: u32,
        size: u32,
        retx: bool,
        nonce: u32,
        notification: u32,
    ) -> Self {
        debug_assert!(seq <= INRPP_SEQ_MASK && nonce <= INRPP_MAX_NONCE && notification < 3);
        let mut p = Packet::with_subflow(seq & INRPP_SEQ_MASK, ts, hop, size, retx, notification);
        p.seq |= u64::from(nonce) << INRPP_SEQ_BITS;
        p
    }
    /// An INRPP packet's sequence or acknowledgement number.
    #[inline]
    pub(crate) fn inrpp_seq(&self) -> u64 {
        self.seq & INRPP_SEQ_MASK
    }
    /// An INRPP packet's nonce (0: none).
    #[inline]
    pub(crate) fn inrpp_nonce(&self) -> u32 {
        (self.seq >> INRPP_SEQ_BITS) as u32
    }
    /// An INRPP ACK's notification (0 none, 1 SLOW-DOWN, 2 CANCEL).
    #[inline]
    pub(crate) fn inrpp_notification(&self) -> u32 {
        self.subflow()
    }
    /// Rewrites an INRPP packet's nonce and notification (a router on the way does).
    #[inline]
    pub(crate) fn set_inrpp_signal(&mut self, nonce: u32, notification: u32) {
        *self = Packet::inrpp(
            self.inrpp_seq(),
            self.ts,
            self.hop,
            self.size(),
            self.retx(),
            nonce,
            notification,
        );
    }
}

/// A value's float-like code: its `mantissa_bits` most significant bits and the shift that
/// drops the rest (relative error below 2^−(mantissa_bits − 1)).
fn float_code(x: u64, mantissa_bits: u32) -> u32 {
    let shift = (64 - x.leading_zeros()).saturating_sub(mantissa_bits);
    shift << mantissa_bits | (x >> shift) as u32
}

/// The value a [`float_code`] stands for (rounded down).
fn float_value(code: u32, mantissa_bits: u32) -> u64 {
    u64::from(code & ((1 << mantissa_bits) - 1)) << (code >> mantissa_bits)
}

/// The rate field's code: 24 bits, 18 of mantissa (relative error below 2^−17), and the
/// one code no rate takes, meaning "not set yet".
const RCP_RATE_MANTISSA: u32 = 18;
const RCP_NO_RATE: u64 = (1 << (64 - INRPP_SEQ_BITS)) - 1;
/// The RTT field's code: 16 bits, 11 of mantissa (error below 0.1%), in nanoseconds; it
/// takes the top 16 bits of a data packet's timestamp, which keeps its 48 bits above
/// 2^16 ps (65.5 ns: no RTT estimator resolves that).
const RCP_RTT_MANTISSA: u32 = 11;
const RCP_TS_BITS: u32 = 48;
const RCP_TS_MASK: u64 = (1 << RCP_TS_BITS) - 1;
const RCP_TS_SHIFT: u32 = 64 - RCP_TS_BITS;
/// The longest RTT the field holds (2^42 ns, about 73 minutes).
const RCP_MAX_RTT_NS: u64 = (1 << (RCP_RTT_MANTISSA + 31)) - 1;

/// The RCP header of a packet of an RCP flow (issue 21): sequence numbers in 40 bits as
/// INRPP's, the rate field (bits per second) in the 24 above them; a data packet's RTT in
/// the top 16 bits of its timestamp (D294). The packet stays 24 bytes.
impl Packet {
    /// An RCP data segment: `rate_bps` its rate field (`None`: not set), `rtt` the
    /// sender's RTT estimate (zero: none).
    #[inline]
    pub(crate) fn rcp_data(
        seq: u64,
        ts: Time,
        hop: u32,
        size: u32,
        retx: bool,
        rate_bps: Option<u64>,
        rtt: Dur,
    ) -> Self {
        let rtt_ns = (rtt.as_ps() / 1000).min(RCP_MAX_RTT_NS);
        let stamp = u64::from(float_code(rtt_ns, RCP_RTT_MANTISSA)) << RCP_TS_BITS
            | ts.as_ps() >> RCP_TS_SHIFT;
        let mut p = Packet::new(seq & INRPP_SEQ_MASK, Time::from_ps(stamp), hop, size, retx);
        p.set_rcp_rate(rate_bps);
        p
    }
    /// An RCP ACK echoing `rate_bps` and the timestamp `ts_echo`.
    #[inline]
    pub(crate) fn rcp_ack(
        ack: u64,
        ts_echo: Time,
        hop: u32,
        size: u32,
        rate_bps: Option<u64>,
    ) -> Self {
        let mut p = Packet::new(ack & INRPP_SEQ_MASK, ts_echo, hop, size, false);
        p.set_rcp_rate(rate_bps);
        p
    }
    /// An RCP packet's rate field.
    #[inline]
    pub(crate) fn rcp_rate_bps(&self) -> Option<u64> {
        let code = self.seq >> INRPP_SEQ_BITS;
        (code != RCP_NO_RATE).then(|| float_value(code as u32, RCP_RATE_MANTISSA))
    }
    /// Sets an RCP packet's rate field (a link on the way lowers it).
    #[inline]
    pub(crate) fn set_rcp_rate(&mut self, rate_bps: Option<u64>) {
        let code = rate_bps.map_or(RCP_NO_RATE, |r| u64::from(float_code(r, RCP_RATE_MANTISSA)));
        self.seq = self.seq & INRPP_SEQ_MASK | code << INRPP_SEQ_BITS;
    }
    /// An RCP data segment's RTT field (zero: none).
    #[inline]
    pub(crate) fn rcp_rtt(&self) -> Dur {
        let code = (self.ts.as_ps() >> RCP_TS_BITS) as u32;
        Dur::from_ns(float_value(code, RCP_RTT_MANTISSA))
    }
    /// An RCP data segment's timestamp (to 65.5 ns).
    #[inline]
    pub(crate) fn rcp_ts(&self) -> Time {
        Time::from_ps((self.ts.as_ps() & RCP_TS_MASK) << RCP_TS_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inrpp_header_round_trips_and_stays_24_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 24);
        let mut p = Packet::inrpp(INRPP_MAX_BYTES, Time::from_ms(3), 9, 1500, true, 77, 1);
        assert_eq!(
            (p.inrpp_seq(), p.inrpp_nonce(), p.inrpp_notification()),
            (INRPP_MAX_BYTES, 77, 1)
        );
        assert_eq!(
            (p.size(), p.retx(), p.hop, p.ts),
            (1500, true, 9, Time::from_ms(3))
        );
        p.set_inrpp_signal(INRPP_MAX_NONCE, 2);
        assert_eq!(
            (p.inrpp_seq(), p.inrpp_nonce(), p.inrpp_notification()),
            (INRPP_MAX_BYTES, INRPP_MAX_NONCE, 2)
        );
        p.set_inrpp_signal(0, 0);
        assert_eq!(
            (p.inrpp_nonce(), p.inrpp_notification(), p.size()),
            (0, 0, 1500)
        );
    }

    #[test]
    fn the_rcp_header_round_trips_to_its_precision() {
        let ts = Time::from_ps(123_456_789_012_345);
        let mut p = Packet::rcp_data(
            INRPP_MAX_BYTES,
            ts,
            4,
            1500,
            false,
            None,
            Dur::from_us(41_234),
        );
        assert_eq!(std::mem::size_of::<Packet>(), 24);
        assert_eq!((p.inrpp_seq(), p.size(), p.hop), (INRPP_MAX_BYTES, 1500, 4));
        assert_eq!(p.rcp_rate_bps(), None);
        let back = p.rcp_ts();
        assert!(back <= ts && ts.as_ps() - back.as_ps() < 1 << 16);
        let rtt = p.rcp_rtt().as_secs_f64();
        assert!(rtt <= 0.041_234 && rtt > 0.041_234 * (1.0 - 1e-3), "{rtt}");
        for rate in [128_000u64, 9_999_999, 1_000_000_000, 400_000_000_000] {
            p.set_rcp_rate(Some(rate));
            let r = p.rcp_rate_bps().expect("set");
            assert!(r <= rate && (rate - r) as f64 <= rate as f64 / f64::from(1 << 17));
            assert_eq!(p.inrpp_seq(), INRPP_MAX_BYTES);
        }
        p.set_rcp_rate(Some(0));
        assert_eq!(p.rcp_rate_bps(), Some(0));
        let a = Packet::rcp_ack(7, ts, 2, 40, Some(5_000_000));
        assert_eq!(
            (a.inrpp_seq(), a.ts, a.rcp_rate_bps()),
            (7, ts, Some(5_000_000))
        );
        let none = Packet::rcp_data(0, Time::ZERO, 0, 40, true, Some(1), Dur::ZERO);
        assert_eq!(
            (none.rcp_rtt(), none.retx(), none.rcp_rate_bps()),
            (Dur::ZERO, true, Some(1))
        );
    }
}
