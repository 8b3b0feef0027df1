use super::*;

fn socket() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

/// Datagram `i` of a test: `len` bytes that differ from every other datagram's.
fn datagram(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|x| (i * 31 + x) as u8).collect()
}

/// Reads from `rx` until `count` datagrams have arrived (each read split by its segment
/// size); returns them and the number of reads.
fn read_datagrams(rx: &mut UdpIo, count: usize) -> (Vec<Vec<u8>>, usize) {
    rx.set_wait(Duration::from_secs(2)).unwrap();
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    let (mut got, mut reads) = (Vec::new(), 0);
    while got.len() < count {
        let r = rx
            .recv(&mut buf)
            .unwrap()
            .unwrap_or_else(|| panic!("{} of {count} datagrams arrived", got.len()));
        reads += 1;
        got.extend(buf[..r.bytes].chunks(r.segment_bytes).map(<[u8]>::to_vec));
    }
    (got, reads)
}

/// Runs of datagrams that exercise the batches: a run past a batch's byte limit (54 of
/// 1200 B), a run past its segment limit (64), size changes, and sizes that change every
/// datagram (length 0 below). Each round is small enough for the receiver's socket buffer.
const ROUNDS: [&[(usize, usize)]; 3] = [
    &[(60, 1200)],
    &[(100, 100)],
    &[(5, 40), (10, 1200), (1, 40), (20, 0)],
];

#[test]
fn queued_datagrams_arrive_as_sent_and_in_order_with_or_without_gso() {
    for offload in [Offload::Kernel, Offload::Off] {
        let mut tx = UdpIo::new(socket(), offload);
        let rx = socket();
        let to = rx.local_addr().unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = vec![0u8; RECV_BUFFER_BYTES];
        for (r, round) in ROUNDS.iter().enumerate() {
            let mut sent: Vec<Vec<u8>> = Vec::new();
            for &(count, len) in *round {
                for k in 0..count {
                    let d = datagram(sent.len(), if len == 0 { 700 + k % 3 } else { len });
                    tx.queue(to, &d);
                    sent.push(d);
                }
            }
            tx.send_queued();
            // Loopback does not reorder: each must arrive as sent, in order.
            for (i, d) in sent.iter().enumerate() {
                let (n, _) = rx
                    .recv_from(&mut buf)
                    .unwrap_or_else(|e| panic!("{offload:?}, round {r}, datagram {i}: {e}"));
                assert_eq!(&buf[..n], &d[..], "{offload:?}, round {r}, datagram {i}");
            }
        }
        assert_eq!(tx.send_errors(), 0, "{offload:?}");
        if offload == Offload::Off {
            assert!(!tx.gso());
        }
    }
}

/// A GSO batch to a GRO receiver and every fallback give the same datagrams; without
/// offloads on both ends each read is one datagram, with them on loopback a batch arrives
/// in fewer reads than datagrams (the kernel passes the GSO buffer to a GRO socket whole).
#[test]
fn a_batch_arrives_as_the_same_datagrams_with_every_offload() {
    let sent: Vec<Vec<u8>> = (0..40).map(|i| datagram(i, 1000)).collect();
    for tx_offload in [Offload::Kernel, Offload::Off] {
        for rx_offload in [Offload::Kernel, Offload::Off] {
            let mut tx = UdpIo::new(socket(), tx_offload);
            let mut rx = UdpIo::new(socket(), rx_offload);
            let to = rx.local_addr().unwrap();
            for d in &sent {
                tx.queue(to, d);
            }
            tx.send_queued();
            let (got, reads) = read_datagrams(&mut rx, sent.len());
            let case = format!("sender {tx_offload:?}, receiver {rx_offload:?}");
            assert_eq!(got, sent, "{case}");
            assert_eq!(tx.send_errors(), 0, "{case}");
            if tx_offload == Offload::Off || rx_offload == Offload::Off {
                assert_eq!(reads, sent.len(), "{case}");
            } else if tx.gso() {
                assert!(reads < sent.len(), "{case}: {reads} reads");
            }
        }
    }
}

#[test]
fn a_read_knows_its_sender_and_an_empty_datagram_is_one_segment() {
    let mut rx = UdpIo::new(socket(), Offload::Kernel);
    let tx = socket();
    tx.send_to(&[], rx.local_addr().unwrap()).unwrap();
    rx.set_wait(Duration::from_secs(2)).unwrap();
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    let r = rx.recv(&mut buf).unwrap().unwrap();
    assert_eq!(
        r,
        Received {
            bytes: 0,
            from: tx.local_addr().unwrap(),
            segment_bytes: 1
        }
    );
}

#[test]
fn nothing_to_read_is_none_not_an_error() {
    let mut rx = UdpIo::new(socket(), Offload::Kernel);
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    assert_eq!(rx.try_recv(&mut buf).unwrap(), None);
    rx.set_wait(Duration::from_millis(1)).unwrap();
    assert_eq!(rx.recv(&mut buf).unwrap(), None);
}

/// A received buffer sent on whole leaves after what was queued for the same address, and
/// as the same datagrams; where it cannot be sent whole nothing is sent.
#[test]
fn a_buffer_sent_whole_follows_what_was_queued() {
    let queued: Vec<Vec<u8>> = (0..3).map(|i| datagram(i, 500)).collect();
    let whole: Vec<Vec<u8>> = (3..8).map(|i| datagram(i, 1000)).collect();
    let buffer = whole.concat();
    let mut tx = UdpIo::new(socket(), Offload::Kernel);
    let mut rx = UdpIo::new(socket(), Offload::Off);
    let to = rx.local_addr().unwrap();
    for d in &queued {
        tx.queue(to, d);
    }
    // One datagram, or a buffer over a GSO send's limit, is not sent whole.
    assert!(!tx.send_whole(to, &buffer[..1000], 1000, 1));
    assert!(!tx.send_whole(to, &vec![0; MAX_GSO_BYTES + 1], 1000, 2));
    let mut buf = vec![0u8; RECV_BUFFER_BYTES];
    assert_eq!(rx.try_recv(&mut buf).unwrap(), None);
    // Sent whole even where the kernel refuses GSO: that send falls back to one datagram
    // at a time.
    assert!(tx.send_whole(to, &buffer, 1000, whole.len()));
    let (got, _) = read_datagrams(&mut rx, queued.len() + whole.len());
    assert_eq!(got, [queued, whole].concat());
    assert_eq!(tx.send_errors(), 0);

    let mut off = UdpIo::new(socket(), Offload::Off);
    off.queue(to, &[1]);
    assert!(!off.send_whole(to, &buffer, 1000, 5));
    off.send_queued();
    assert_eq!(read_datagrams(&mut rx, 1).0, vec![vec![1]]);
}

/// Datagrams leave in the order they were queued, whatever their destinations (D269): a run
/// to one address is one batch, and a datagram to another address ends it. Sent in batches
/// per destination instead, one path's burst went ahead of the other path's datagrams queued
/// before it, at every node where two paths of a download split, and won the race for the
/// room left in a shared drop-tail queue (docs/overlay.md, acceptance 4). Two addresses of one
/// receiving socket (127.0.0.1 and 127.0.0.2) show the order of sending.
#[test]
fn datagrams_leave_in_the_order_they_were_queued_whatever_their_destinations() {
    for offload in [Offload::Kernel, Offload::Off] {
        let rx = UdpSocket::bind("0.0.0.0:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let port = rx.local_addr().unwrap().port();
        let a = SocketAddr::from(([127, 0, 0, 1], port));
        let b = SocketAddr::from(([127, 0, 0, 2], port));
        let mut tx = UdpIo::new(socket(), offload);
        let rounds: [&[(SocketAddr, &[u8])]; 2] = [
            &[(a, b"a1"), (a, b"a2"), (b, b"b1"), (a, b"a3")],
            &[(b, b"b2"), (a, b"a4"), (b, b"b3")],
        ];
        for round in rounds {
            for &(to, d) in round {
                tx.queue(to, d);
            }
            tx.send_queued();
        }
        let mut buf = [0u8; 64];
        let got: Vec<Vec<u8>> = (0..7)
            .map(|_| {
                let (n, _) = rx.recv_from(&mut buf).unwrap();
                buf[..n].to_vec()
            })
            .collect();
        let want: [&[u8]; 7] = [b"a1", b"a2", b"b1", b"a3", b"b2", b"a4", b"b3"];
        assert_eq!(got, want, "{offload:?}");
    }
}

/// Datagrams the kernel drops at a full receive buffer are counted (`SO_RXQ_OVFL`), so that
/// every datagram sent is either read or counted: 500 sent into a buffer of a few kilobytes
/// without reading, then one more after the buffer was drained, whose read carries the
/// kernel's count.
#[test]
fn datagrams_dropped_at_a_full_receive_buffer_are_counted() {
    for offload in [Offload::Kernel, Offload::Off] {
        let rx_socket = socket();
        setsockopt(&rx_socket, sockopt::RcvBuf, &4096).unwrap();
        let to = rx_socket.local_addr().unwrap();
        let mut rx = UdpIo::new(rx_socket, offload);
        let tx = socket();
        let sent = 500;
        for i in 0..sent {
            tx.send_to(&datagram(i, 100), to).unwrap();
        }
        let mut buf = vec![0u8; RECV_BUFFER_BYTES];
        let mut read = 0;
        while let Some(r) = rx.try_recv(&mut buf).unwrap() {
            read += r.bytes.div_ceil(r.segment_bytes);
        }
        assert!(read < sent, "{offload:?}: a 4-KB buffer held all {sent}");
        tx.send_to(&datagram(sent, 100), to).unwrap();
        read += read_datagrams(&mut rx, 1).0.len();
        assert_eq!(
            read as u64 + rx.receive_overflows(),
            sent as u64 + 1,
            "{offload:?}: {read} read"
        );
    }
}
