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

/// The control trailer's parser: opening any bytes under a fixed key never panics, and what
/// opens is a control packet that decodes, whose trailer is the decoded one, and that seals
/// back to the same bytes.
pub fn control_open(data: &[u8]) {
    let key = pathpool_wire::auth::OverlayKey::from_bytes([7; 32]);
    if let Ok(auth) = pathpool_wire::open_control(data, &key) {
        let mut copy = data.to_vec();
        pathpool_wire::seal_control(&mut copy, auth.sender, auth.timestamp_us, Some(&key))
            .expect("reseal");
        assert_eq!(copy, data, "sealing changed an accepted datagram");
    }
    // A datagram sealed under the key always opens, whatever its trailer said before.
    if Packet::<4>::decode(data).is_ok() {
        let mut copy = data.to_vec();
        if pathpool_wire::seal_control(&mut copy, pathpool_topo::NodeIx(1), 2, Some(&key)).is_ok()
        {
            assert!(pathpool_wire::open_control(&copy, &key).is_ok());
        }
    }
}
