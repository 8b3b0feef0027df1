//! The maps' keys and values as user space reads and writes them: byte layouts of
//! `bpf/pp_maps.h`, encoded and decoded field by field (no `unsafe` casts).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::Serialize;

/// Slots per connection (`PP_MAX_SUBFLOWS`): a ninth subflow runs uncoupled Reno.
pub const MAX_SUBFLOWS: usize = 8;
/// `sizeof(struct pp_slot)`.
pub const SLOT_BYTES: usize = 112;
/// `sizeof(struct pp_conn)`.
pub const CONN_BYTES: usize = SLOT_BYTES * MAX_SUBFLOWS;
/// `sizeof(struct pp_addr_key)`.
pub const ADDR_KEY_BYTES: usize = 36;
/// `sizeof(struct pp_sub_key)`.
pub const SUB_KEY_BYTES: usize = 8;

const AF_INET: u16 = 2;
const AF_INET6: u16 = 10;

/// `PP_SLOT_INACTIVE`: NMCC's is-active rule took the subflow out of its group (a timeout).
pub const SLOT_INACTIVE: u32 = 1;
/// `PP_SLOT_SLOW_START`: in (friendly) slow start at its last ACK.
pub const SLOT_SLOW_START: u32 = 2;

/// One subflow as its programs last published it (`struct pp_slot`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slot {
    /// The kernel's MPTCP subflow id (1 for the first subflow).
    pub subflow_id: u32,
    /// Coupling group.
    pub group: u32,
    /// The algorithm's kernel name (`pp_nmcc`, ...).
    pub algorithm: &'static str,
    /// `SLOT_*` bits.
    pub flags: u32,
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// Smoothed RTT, microseconds.
    pub srtt_us: u32,
    /// MSS, bytes.
    pub mss: u32,
    /// Segments acknowledged.
    pub acked: u64,
    /// Congestion events.
    pub losses: u64,
    /// The coupling's state: LIA's or BALIA's alpha, OLIA's epsilon, NMCC's m.
    pub coupling_value: f64,
    /// What `coupling_value` is (`alpha`, `epsilon`, `m`).
    pub coupling_name: &'static str,
    /// Local address and port.
    pub source: (IpAddr, u16),
    /// Remote address and port.
    pub destination: (IpAddr, u16),
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("four bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}

fn address(family: u16, bytes: &[u8]) -> IpAddr {
    if family == AF_INET6 {
        let octets: [u8; 16] = bytes[..16].try_into().expect("sixteen bytes");
        IpAddr::V6(Ipv6Addr::from(octets))
    } else {
        IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]))
    }
}

/// The kernel name of `enum pp_algorithm`'s value.
#[must_use]
pub fn algorithm_name(value: u32) -> &'static str {
    match value {
        1 => "pp_nmcc",
        2 => "pp_lia",
        3 => "pp_olia",
        4 => "pp_balia",
        _ => "unknown",
    }
}

impl Slot {
    /// Decodes one `struct pp_slot`; `None` for a free slot.
    #[must_use]
    pub fn decode(b: &[u8]) -> Option<Slot> {
        assert_eq!(b.len(), SLOT_BYTES, "a pp_slot is {SLOT_BYTES} bytes");
        let subflow_id = u32_at(b, 0);
        if subflow_id == 0 {
            return None;
        }
        let algorithm = algorithm_name(u32_at(b, 8));
        let value = u64_at(b, 64) as i64 as f64 / 4_294_967_296.0;
        let (coupling_name, coupling_value) = match algorithm {
            // NMCC stores m²; m is what the thesis and `pathpool run` report.
            "pp_nmcc" => ("m", value.max(0.0).sqrt()),
            "pp_olia" => ("epsilon", value),
            _ => ("alpha", value),
        };
        let family = u16_at(b, 72);
        Some(Slot {
            subflow_id,
            group: u32_at(b, 4),
            algorithm,
            flags: u32_at(b, 12),
            cwnd: u32_at(b, 16),
            ssthresh: u32_at(b, 20),
            srtt_us: u32_at(b, 24),
            mss: u32_at(b, 28),
            acked: u64_at(b, 32),
            losses: u64_at(b, 56),
            coupling_value,
            coupling_name,
            source: (address(family, &b[80..96]), u16_at(b, 74)),
            destination: (address(family, &b[96..112]), u16_at(b, 76)),
        })
    }
}

/// Decodes a `struct pp_conn`: its subflows in slot order.
#[must_use]
pub fn decode_connection(b: &[u8]) -> Vec<Slot> {
    assert_eq!(b.len(), CONN_BYTES, "a pp_conn is {CONN_BYTES} bytes");
    b.chunks_exact(SLOT_BYTES)
        .filter_map(Slot::decode)
        .collect()
}

/// `struct pp_sub_key`.
#[must_use]
pub fn sub_key(token: u32, subflow_id: u32) -> [u8; SUB_KEY_BYTES] {
    let mut k = [0u8; SUB_KEY_BYTES];
    k[..4].copy_from_slice(&token.to_ne_bytes());
    k[4..].copy_from_slice(&subflow_id.to_ne_bytes());
    k
}

/// Decodes a `struct pp_sub_key`: (token, subflow id).
#[must_use]
pub fn decode_sub_key(b: &[u8]) -> (u32, u32) {
    (u32_at(b, 0), u32_at(b, 4))
}

/// `struct pp_addr_key` for a (source, destination) pair of one family.
///
/// # Errors
/// When the two addresses are of different families.
pub fn addr_key(source: IpAddr, destination: IpAddr) -> Result<[u8; ADDR_KEY_BYTES], String> {
    let mut k = [0u8; ADDR_KEY_BYTES];
    let family = match (source, destination) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            k[4..8].copy_from_slice(&s.octets());
            k[20..24].copy_from_slice(&d.octets());
            AF_INET
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            k[4..20].copy_from_slice(&s.octets());
            k[20..36].copy_from_slice(&d.octets());
            AF_INET6
        }
        _ => {
            return Err(format!(
                "{source} and {destination} are of different address families; a group rule \
                 pairs two IPv4 or two IPv6 addresses"
            ))
        }
    };
    k[..4].copy_from_slice(&u32::from(family).to_ne_bytes());
    Ok(k)
}

/// Decodes a `struct pp_addr_key`: (source, destination).
#[must_use]
pub fn decode_addr_key(b: &[u8]) -> (IpAddr, IpAddr) {
    let family = u32_at(b, 0) as u16;
    (address(family, &b[4..20]), address(family, &b[20..36]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_decodes_at_the_c_layout() {
        let mut b = [0u8; SLOT_BYTES];
        b[0..4].copy_from_slice(&2u32.to_ne_bytes());
        b[4..8].copy_from_slice(&7u32.to_ne_bytes());
        b[8..12].copy_from_slice(&1u32.to_ne_bytes());
        b[16..20].copy_from_slice(&40u32.to_ne_bytes());
        b[24..28].copy_from_slice(&10_000u32.to_ne_bytes());
        b[56..64].copy_from_slice(&3u64.to_ne_bytes());
        // m² = 2.25 in Q32: m = 1.5.
        b[64..72].copy_from_slice(&(9u64 << 30).to_ne_bytes());
        b[72..74].copy_from_slice(&AF_INET.to_ne_bytes());
        b[74..76].copy_from_slice(&40_000u16.to_ne_bytes());
        b[76..78].copy_from_slice(&5201u16.to_ne_bytes());
        b[80..84].copy_from_slice(&[10, 0, 1, 1]);
        b[96..100].copy_from_slice(&[10, 0, 2, 1]);
        let s = Slot::decode(&b).expect("a used slot");
        assert_eq!((s.subflow_id, s.group, s.algorithm), (2, 7, "pp_nmcc"));
        assert_eq!((s.cwnd, s.srtt_us, s.losses), (40, 10_000, 3));
        assert_eq!((s.coupling_name, s.coupling_value), ("m", 1.5));
        assert_eq!(s.source, ("10.0.1.1".parse().unwrap(), 40_000));
        assert_eq!(s.destination, ("10.0.2.1".parse().unwrap(), 5201));
        b[0..4].copy_from_slice(&0u32.to_ne_bytes());
        assert_eq!(Slot::decode(&b), None, "subflow id 0 is a free slot");
    }

    #[test]
    fn address_keys_round_trip_and_refuse_mixed_families() {
        let (s, d): (IpAddr, IpAddr) = ("10.0.1.1".parse().unwrap(), "10.0.9.1".parse().unwrap());
        assert_eq!(decode_addr_key(&addr_key(s, d).unwrap()), (s, d));
        let (s6, d6): (IpAddr, IpAddr) = ("fd00::1".parse().unwrap(), "fd00::9".parse().unwrap());
        assert_eq!(decode_addr_key(&addr_key(s6, d6).unwrap()), (s6, d6));
        assert!(addr_key(s, d6)
            .unwrap_err()
            .contains("different address families"));
        assert_eq!(decode_sub_key(&sub_key(0xdead_beef, 2)), (0xdead_beef, 2));
    }
}
