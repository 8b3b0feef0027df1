//! The properties every fuzz target checks (issue 5, acceptance 6): a parser returns
//! `Ok` or a typed error on any input and never panics, and whatever it accepts is canonical
//! (encoding the value gives back the input).

use pathpool_topo::Fid;
use pathpool_wire::{decrement_hop_limit, header_bytes, peek, Message, MsgType, Packet};

/// The forwarding node's parser: `peek`, then the in-place hop-limit decrement.
pub fn header(data: &[u8]) {
    if let Ok(h) = peek::<4>(data) {
        assert!(h.hop_limit >= 1);
        assert_eq!(h.body.len() + header_bytes::<4>(), data.len());
        let mut copy = data.to_vec();
        match decrement_hop_limit(&mut copy) {
            Some(hop) => assert_eq!(hop + 1, h.hop_limit),
            None => assert_eq!(h.hop_limit, 1),
        }
    }
}

/// The endpoint's parser: a whole packet, which must agree with `peek` and re-encode to the
/// same bytes.
pub fn packet(data: &[u8]) {
    if let Ok(p) = Packet::<4>::decode(data) {
        let h = peek::<4>(data).expect("decode accepted what peek refused");
        assert_eq!((h.hop_limit, h.fid), (p.hop_limit, p.fid));
        assert_eq!(
            p.to_vec().expect("re-encode"),
            data,
            "accepted a non-canonical packet"
        );
    }
}

/// One body parser: the body of a message of type `t`, which must re-encode to the same bytes.
pub fn body(t: MsgType, data: &[u8]) {
    if let Ok(message) = Message::<4>::decode_body(t, data) {
        assert_eq!(message.msg_type(), t);
        let p = Packet {
            hop_limit: 1,
            fid: Fid::EMPTY,
            message,
        };
        let bytes = p.to_vec().expect("re-encode");
        assert_eq!(
            &bytes[header_bytes::<4>()..],
            data,
            "accepted a non-canonical body"
        );
    }
}
