//! Cost of the data-path codec against the overlay's goal of 2.5 Gb/s of goodput in
//! 1200-byte datagrams (issue 5): about 275 000 chunks of 1135 payload bytes per second, so
//! 3.6 µs per chunk for everything a node does. Prints nanoseconds per operation.
//!
//! Run with `cargo bench -p pathpool-wire --bench codec`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pathpool_core::Time;
use pathpool_proto::mmtp::{Chunk, ChunkRequest, ContentId, Echo, PathIndex};
use pathpool_topo::{Fid, DEFAULT_TTL};
use pathpool_wire::{
    chunk_payload_offset, decrement_hop_limit, encode_chunk_header, peek, ChunkMsg,
    ChunkRequestMsg, Message, Packet, HOP_LIMIT_OFFSET,
};

/// Each timed round lasts at least this long; the best of `ROUNDS` rounds is reported.
const ROUND: Duration = Duration::from_millis(50);
const ROUNDS: usize = 5;
/// The datagram size of the overlay's goal.
const DATAGRAM_BYTES: usize = 1200;

/// Nanoseconds per call of `f`: the best of `ROUNDS` rounds.
fn time_ns(mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut calls = 0u64;
        while start.elapsed() < ROUND {
            for _ in 0..1000 {
                f();
            }
            calls += 1000;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    best
}

fn main() {
    let fid = Fid::from_words([0x0102_0304_0506_0708; 4]);
    let echo = Echo {
        sent_at: Time::from_ms(1500),
        retransmission: false,
    };
    let payload_bytes = DATAGRAM_BYTES - chunk_payload_offset::<4>();
    let chunk = Chunk {
        content: ContentId(7),
        index: 123_456,
        path: PathIndex(1),
        echo,
        payload_bytes: payload_bytes as u32,
    };
    let payload = vec![0x5au8; payload_bytes];
    let datagram = Packet {
        hop_limit: DEFAULT_TTL,
        fid,
        message: Message::<4>::Chunk(ChunkMsg::new(&chunk, &payload).unwrap()),
    }
    .to_vec()
    .unwrap();
    let request_bytes = Packet {
        hop_limit: DEFAULT_TTL,
        fid,
        message: Message::<4>::ChunkRequest(ChunkRequestMsg {
            request: ChunkRequest {
                content: ContentId(7),
                index: 123_456,
                path: PathIndex(1),
                echo,
            },
            ticket: pathpool_wire::Ticket::default(),
            forward_fid: fid,
        }),
    }
    .to_vec()
    .unwrap();
    let mut buf = vec![0u8; 2048];
    let mut fwd = datagram.clone();

    let mut rows: Vec<(&str, f64)> = Vec::new();
    rows.push((
        "peek (forwarding node: header and FID)",
        time_ns(|| {
            black_box(peek::<4>(black_box(&datagram)).unwrap());
        }),
    ));
    rows.push((
        "peek + decrement hop limit in place",
        time_ns(|| {
            black_box(peek::<4>(black_box(&fwd)).unwrap());
            fwd[HOP_LIMIT_OFFSET] = DEFAULT_TTL;
            black_box(decrement_hop_limit(&mut fwd));
        }),
    ));
    rows.push((
        "decode chunk (payload borrowed)",
        time_ns(|| {
            black_box(Packet::<4>::decode(black_box(&datagram)).unwrap());
        }),
    ));
    rows.push((
        "encode_chunk_header (payload already in place)",
        time_ns(|| {
            black_box(encode_chunk_header(&mut buf, DEFAULT_TTL, &fid, black_box(&chunk)).unwrap());
        }),
    ));
    rows.push((
        "Packet::encode chunk (copies the payload)",
        time_ns(|| {
            let message = Message::<4>::Chunk(ChunkMsg::new(&chunk, black_box(&payload)).unwrap());
            let p = Packet {
                hop_limit: DEFAULT_TTL,
                fid,
                message,
            };
            black_box(p.encode(&mut buf).unwrap());
        }),
    ));
    rows.push((
        "decode + encode chunk request",
        time_ns(|| {
            let p = Packet::<4>::decode(black_box(&request_bytes)).unwrap();
            black_box(p.encode(&mut buf).unwrap());
        }),
    ));
    println!("operation (1200-byte chunk datagrams, 256-bit FIDs)   ns/op");
    for (name, ns) in rows {
        println!("{name:<52} {ns:>6.1}");
    }
}
