//! Issue 5, acceptance 6, on every `cargo test`: no parser panics on random, truncated or
//! mutated datagrams; whatever is accepted is canonical (re-encodes to the same bytes); and
//! every valid message round-trips. The fuzz targets in `fuzz/` check the same properties
//! with coverage guidance, for longer.

use pathpool_core::{Rng, Time};
use pathpool_proto::mmtp::{
    ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, MetadataRequest, Part, PathIndex,
};
use pathpool_psi::{ContentName, Matching};
use pathpool_topo::{Fid, NodeIx};
use pathpool_wire::{
    decrement_hop_limit, header_bytes, peek, ChunkMsg, ChunkRequestMsg, ControlAuth, ControlError,
    DataErrorMsg, DataPrefix, DecodeError, DropCounters, ErrorCode, FidSetMsg, Message,
    MetadataReplyMsg, MetadataRequestMsg, Packet, PathFids, Publish, SignedMetadata, Subscribe,
    Ticket, MAGIC, VERSION,
};
use proptest::prelude::*;

/// What every parser must satisfy on any input: no panic (the test would fail), and an
/// accepted packet encodes back to the same bytes and agrees with the forwarding view.
fn check(datagram: &[u8]) -> Result<(), DecodeError> {
    let header = peek::<4>(datagram);
    let packet = Packet::<4>::decode(datagram)?;
    let h = header.expect("decode accepted what peek refused");
    assert_eq!((h.hop_limit, h.fid), (packet.hop_limit, packet.fid));
    assert_eq!(
        packet.to_vec().expect("re-encode"),
        datagram,
        "not canonical"
    );
    let mut copy = datagram.to_vec();
    let _ = decrement_hop_limit(&mut copy);
    Ok(())
}

/// Every valid message type, from owned fields (chunk payloads are borrowed from `payload`).
#[derive(Clone, Debug)]
struct Gen {
    kind: u8,
    hop_limit: u8,
    fids: [[u64; 4]; 3],
    a: u32,
    b: u32,
    c: u64,
    flag: bool,
    name: ContentName,
    text: String,
    payload: Vec<u8>,
    paths: Vec<(u32, u32, [u64; 4], [u64; 4])>,
}

fn build(g: &Gen) -> Packet<'_> {
    let content = ContentId(g.c);
    let path = PathIndex(g.b);
    let echo = Echo {
        sent_at: Time::from_ps(g.c.rotate_left(17)),
        retransmission: g.flag,
    };
    let fwd = Fid::from_words(g.fids[1]);
    // Trailer and ticket fields from the generated values (any bytes decode).
    let auth = ControlAuth {
        sender: NodeIx(g.b),
        timestamp_us: g.c,
        mac: [g.a as u8; 16],
    };
    let ticket = Ticket {
        publisher: NodeIx(g.a),
        expiry_unix_s: g.b,
        mac: [g.b as u8; 16],
    };
    let message = match g.kind % 10 {
        0 => Message::Publish(Publish {
            publisher: NodeIx(g.a),
            name: g.name.clone(),
            auth,
        }),
        1 => Message::Unpublish(Publish {
            publisher: NodeIx(g.a),
            name: g.name.clone(),
            auth,
        }),
        2 => Message::Subscribe(Subscribe {
            request_id: g.a,
            subscriber: NodeIx(g.b),
            matching: if g.flag {
                Matching::Single
            } else {
                Matching::Multisource {
                    max_sources: (g.c % 65_536) as usize,
                }
            },
            name: g.name.clone(),
            auth,
        }),
        3 => Message::FidSet(FidSetMsg {
            request_id: g.a,
            name: g.name.clone(),
            paths: g
                .paths
                .iter()
                .map(|&(p, gid, f, r)| PathFids {
                    publisher: NodeIx(p),
                    group_id: gid,
                    forward_fid: Fid::from_words(f),
                    reverse_fid: Fid::from_words(r),
                    ticket,
                })
                .collect(),
            auth,
        }),
        4 => Message::ControlError(ControlError {
            auth,
            ..ControlError::new(g.a, ErrorCode(g.b as u16), &g.text)
        }),
        5 => Message::MetadataRequest(MetadataRequestMsg {
            request: MetadataRequest {
                content,
                path,
                echo,
            },
            token: g.c ^ 0x55,
            first_chunk: g.a % 2 == 0,
            ticket,
            forward_fid: fwd,
        }),
        6 => {
            let metadata = SignedMetadata {
                name: g.name.clone(),
                publisher: NodeIx(g.b),
                size_bytes: g.c,
                chunk_bytes: g.a,
                data_chunks: g.b,
                pages: g.a ^ g.b,
                root: [g.a as u8; 32],
                content_hash: [g.b as u8; 32],
                description: g.text.clone(),
                signature: [g.b as u8; 64],
            };
            Message::MetadataReply(MetadataReplyMsg {
                prefix: DataPrefix {
                    content: metadata.content(),
                    version: metadata.version(),
                    token: g.c,
                    path,
                    echo,
                },
                metadata,
                first_chunk: (g.a % 2 == 0).then_some(&g.payload[..]),
            })
        }
        7 => Message::ChunkRequest(ChunkRequestMsg {
            request: ChunkRequest {
                content,
                index: g.a,
                path,
                echo,
            },
            version: g.c.rotate_left(3),
            token: g.c,
            ticket,
            forward_fid: fwd,
        }),
        8 => Message::Chunk(ChunkMsg {
            prefix: DataPrefix {
                content,
                version: g.c.rotate_left(5),
                token: g.c ^ 1,
                path,
                echo,
            },
            index: g.a,
            payload: &g.payload,
        }),
        _ => Message::DataError(DataErrorMsg {
            error: ErrorReply {
                content,
                part: if g.a % 2 == 0 {
                    Part::Metadata
                } else {
                    Part::Chunk(g.a)
                },
                path,
                echo,
                kind: [
                    ErrorKind::UnknownContent,
                    ErrorKind::IndexOutOfRange,
                    ErrorKind::DifferentVersion,
                    ErrorKind::Unavailable,
                ][g.b as usize % 4],
            },
            version: g.c,
            token: g.c.rotate_left(9),
            publisher: NodeIx(g.a),
            mac: [g.b as u8; 16],
        }),
    };
    Packet {
        hop_limit: g.hop_limit,
        fid: Fid::from_words(g.fids[0]),
        message,
    }
}

fn arb_name() -> impl Strategy<Value = ContentName> {
    "(/[a-zA-Z0-9._~-]{1,30}){2,6}"
        .prop_filter_map("reserved or too long", |s| ContentName::new(&s).ok())
}

fn arb_gen() -> impl Strategy<Value = Gen> {
    (
        (any::<u8>(), 1..=255u8, any::<[[u64; 4]; 3]>()),
        (any::<u32>(), any::<u32>(), any::<u64>(), any::<bool>()),
        arb_name(),
        "\\PC{0,60}",
        proptest::collection::vec(any::<u8>(), 0..200),
        proptest::collection::vec(
            (
                any::<u32>(),
                any::<u32>(),
                any::<[u64; 4]>(),
                any::<[u64; 4]>(),
            ),
            0..=8,
        ),
    )
        .prop_map(
            |((kind, hop_limit, fids), (a, b, c, flag), name, text, payload, paths)| Gen {
                kind,
                hop_limit,
                fids,
                a,
                b,
                c,
                flag,
                name,
                text,
                payload,
                paths,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// decode ∘ encode is the identity on values, encode ∘ decode on bytes; every strict
    /// prefix of a packet is refused.
    #[test]
    fn valid_packets_round_trip(g in arb_gen()) {
        let packet = build(&g);
        let bytes = packet.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), packet.encoded_len());
        prop_assert_eq!(&Packet::<4>::decode(&bytes).unwrap(), &packet);
        check(&bytes).unwrap();
        for cut in 0..bytes.len() {
            prop_assert!(check(&bytes[..cut]).is_err(), "prefix of {} bytes accepted", cut);
        }
    }

    /// Flipping bits or overwriting a byte of a valid packet never panics, and what is still
    /// accepted is canonical.
    #[test]
    fn mutated_packets_are_refused_or_canonical(
        g in arb_gen(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = build(&g).to_vec().unwrap();
        for (at, v) in edits {
            let i = at % bytes.len();
            bytes[i] ^= v;
        }
        let _ = check(&bytes);
    }
}

/// A spray of random datagrams: wholly random, and random bodies behind a valid header of
/// every type (so the body parsers are reached), counted by drop reason.
#[test]
fn random_datagrams_are_counted_and_dropped() {
    let mut rng = Rng::seed_from_u64(0x5752_4545); // fixed seed: the figures below are reproducible
    let mut counters = DropCounters::default();
    let mut accepted = 0u64;
    let types = [
        0x01u8, 0x02, 0x03, 0x04, 0x05, 0x10, 0x11, 0x12, 0x13, 0x14, 0x06, 0xff,
    ];
    let rounds = 200_000u64;
    for round in 0..rounds {
        let len = rng.below(1500) as usize;
        let mut d: Vec<u8> = (0..len.div_ceil(8))
            .flat_map(|_| rng.next_u64().to_le_bytes())
            .take(len)
            .collect();
        if round % 2 == 0 && d.len() >= header_bytes::<4>() {
            let body_len = (d.len() - header_bytes::<4>()) as u16;
            d[..2].copy_from_slice(&MAGIC);
            d[2] = VERSION;
            d[3] = types[rng.below(types.len() as u64) as usize];
            d[4] = d[4].max(1);
            d[5] = 4;
            d[6..8].copy_from_slice(&body_len.to_be_bytes());
            if round % 4 == 0 {
                // Small, plausible length bytes and flags, to get past the first checks.
                for b in d.iter_mut().skip(header_bytes::<4>()) {
                    *b &= 0x0f;
                }
            }
        }
        match check(&d) {
            Ok(()) => accepted += 1,
            Err(e) => counters.record(&e),
        }
    }
    assert_eq!(counters.total() + accepted, rounds);
    let figures: Vec<String> = counters.iter().map(|(k, n)| format!("{k} {n}")).collect();
    println!(
        "{rounds} datagrams: {accepted} accepted, dropped: {}",
        figures.join(", ")
    );
    let seen: Vec<&str> = counters
        .iter()
        .filter(|&(_, n)| n > 0)
        .map(|(name, _)| name)
        .collect();
    for kind in [
        "bad_magic",
        "unknown_type",
        "truncated",
        "bad_length",
        "invalid_value",
    ] {
        assert!(seen.contains(&kind), "no {kind} drop in {counters:?}");
    }
}
