use super::*;
use pathpool_proto::mmtp::{ContentId, Echo, ErrorKind, ErrorReply, Part, PathIndex};

fn test_key() -> pathpool_wire::auth::OverlayKey {
    crate::keys::new_overlay_key().unwrap()
}

/// A forwarding node passes a GSO burst on whole (D110): every datagram arrives, in
/// order, with its hop limit decremented and capped, and an emulated link gets the same
/// datagrams.
#[test]
fn a_forwarding_node_passes_a_burst_on_in_order() {
    for emulated in [false, true] {
        let (sa, sf, sb) = (
            UdpSocket::bind("127.0.0.1:0").unwrap(),
            UdpSocket::bind("127.0.0.1:0").unwrap(),
            UdpSocket::bind("127.0.0.1:0").unwrap(),
        );
        let delay = if emulated { ", delay = \"1ms\"" } else { "" };
        let text = format!(
            "rendezvous = \"a\"\nnodes = [ {{ id = \"a\", addr = \"{}\" }}, {{ id = \"f\", addr = \"{}\" }}, {{ id = \"b\", addr = \"{}\" }} ]\nlinks = [ {{ between = [\"a\", \"f\"] }}, {{ between = [\"f\", \"b\"]{delay} }} ]\n",
            sa.local_addr().unwrap(),
            sf.local_addr().unwrap(),
            sb.local_addr().unwrap(),
        );
        let overlay = Overlay::from_toml_with_key(&text, "test", test_key()).unwrap();
        let (a, f, b) = (
            overlay.node("a").unwrap(),
            overlay.node("f").unwrap(),
            overlay.node("b").unwrap(),
        );
        let to_b = overlay
            .node_links(f)
            .into_iter()
            .find(|l| l.peer == b)
            .unwrap()
            .tag;
        let mut io_a = NodeIo::with_socket(&overlay, a, sa, 1).unwrap();
        let mut io_f = NodeIo::with_socket(&overlay, f, sf, 1).unwrap();
        let f_addr = io_f.local_addr().unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let relay = {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                run(&mut io_f, &mut Relay::default(), &stop).unwrap();
                io_f
            })
        };
        let datagrams: Vec<Vec<u8>> = (0..40u32)
            .map(|i| {
                // Equal sizes, so that the burst leaves as one GSO send.
                Packet::<4> {
                    hop_limit: 64,
                    fid: to_b,
                    message: pathpool_wire::Message::DataError(pathpool_wire::DataErrorMsg {
                        error: ErrorReply {
                            content: ContentId(7),
                            part: Part::Chunk(i),
                            path: PathIndex(0),
                            echo: Echo {
                                sent_at: Time::ZERO,
                                retransmission: false,
                            },
                            kind: ErrorKind::UnknownContent,
                        },
                        version: 0,
                        token: 0,
                        publisher: pathpool_topo::NodeIx(0),
                        mac: [0; 16],
                    }),
                }
                .to_vec()
                .unwrap()
            })
            .collect();
        for d in &datagrams {
            io_a.send_to(f_addr, d);
        }
        io_a.send_queued();
        sb.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = vec![0u8; 2048];
        for (i, d) in datagrams.iter().enumerate() {
            let n = sb
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("datagram {i}: {e}"));
            let mut expected = d.clone();
            pathpool_wire::decrement_hop_limit(&mut expected).unwrap();
            // ... and capped at the node's maximum (the node count by default, D162).
            let cap = overlay.forward_limits().max_hop_limit;
            let hop = &mut expected[pathpool_wire::HOP_LIMIT_OFFSET];
            *hop = (*hop).min(cap);
            assert_eq!(
                &buf[..n],
                &expected[..],
                "datagram {i}, emulated {emulated}"
            );
        }
        stop.store(true, Ordering::Relaxed);
        let io_f = relay.join().unwrap();
        assert_eq!(io_f.forwarder().stats().copies, 40);
        // An emulated link holds the datagrams and releases them itself; a transparent
        // one passes the burst on as it came.
        assert_eq!(io_f.forwarded_whole() > 0, !emulated);
        assert_eq!(io_f.send_errors(), 0);
    }
}
