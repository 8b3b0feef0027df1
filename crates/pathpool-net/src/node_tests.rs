use super::*;
use pathpool_proto::mmtp::{ContentId, Echo, ErrorKind, ErrorReply, Part, PathIndex};

fn test_key() -> pathpool_wire::auth::OverlayKey {
    crate::keys::new_overlay_key().unwrap()
}

/// Two nodes on loopback: `a` (this test's `NodeIo`) and `b` (a plain socket).
fn pair() -> (NodeIo, UdpSocket) {
    let sa = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sb = UdpSocket::bind("127.0.0.1:0").unwrap();
    let text = format!(
        "rendezvous = \"a\"\nnodes = [ {{ id = \"a\", addr = \"{}\" }}, {{ id = \"b\", addr = \"{}\" }} ]\nlinks = [ {{ between = [\"a\", \"b\"] }} ]\n",
        sa.local_addr().unwrap(),
        sb.local_addr().unwrap()
    );
    let overlay = Overlay::from_toml_with_key(&text, "test", test_key()).unwrap();
    let a = overlay.node("a").unwrap();
    (NodeIo::with_socket(&overlay, a, sa, 1).unwrap(), sb)
}

#[test]
fn batched_sends_arrive_whole_and_in_order() {
    let (mut io, b) = pair();
    let to = b.local_addr().unwrap();
    b.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = vec![0u8; 65_536];
    // Rounds small enough for the receiver's socket buffer: a run past the batch's byte
    // limit (54 of 1200 B), a run past its segment limit (64), size changes, and sizes
    // that change every datagram. Each must arrive as sent, in order (loopback does not
    // reorder).
    let rounds: [&[(usize, usize)]; 3] = [
        &[(60, 1200)],
        &[(100, 100)],
        &[(5, 40), (10, 1200), (1, 40), (20, 0)],
    ];
    for (r, round) in rounds.iter().enumerate() {
        let mut sent: Vec<Vec<u8>> = Vec::new();
        for &(count, len) in *round {
            for k in 0..count {
                // Length 0 stands for "a different length every time".
                let len = if len == 0 { 700 + k % 3 } else { len };
                let d: Vec<u8> = (0..len).map(|x| (sent.len() * 31 + x) as u8).collect();
                io.send_to(to, &d);
                sent.push(d);
            }
        }
        io.send_queued();
        for (i, d) in sent.iter().enumerate() {
            let (n, _) = b
                .recv_from(&mut buf)
                .unwrap_or_else(|e| panic!("round {r}, datagram {i}: {e}"));
            assert_eq!(&buf[..n], &d[..], "round {r}, datagram {i}");
        }
    }
    assert_eq!(io.send_errors(), 0);
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

#[test]
fn a_burst_read_with_gro_is_split_into_its_datagrams() {
    let (mut io, b) = pair();
    let from = b.local_addr().unwrap();
    let to = io.local_addr().unwrap();
    let datagrams: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; 1000]).collect();
    for d in &datagrams {
        b.send_to(d, to).unwrap();
    }
    io.wait_at_most(Duration::from_secs(2)).unwrap();
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    let mut got: Vec<Vec<u8>> = Vec::new();
    while got.len() < datagrams.len() {
        let (n, sender, segment) = io.recv(&mut buf, MsgFlags::empty()).unwrap();
        assert_eq!(sender, from);
        got.extend(buf[..n].chunks(segment).map(<[u8]>::to_vec));
    }
    assert_eq!(got, datagrams);
}
