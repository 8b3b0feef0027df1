//! Test vectors of `docs/wire.md` (read from the document itself, so it cannot drift), and
//! errors on hand-made bad packets.

use pathpool_core::Time;
use pathpool_proto::mmtp::{
    Chunk, ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, Metadata, MetadataReply,
    MetadataRequest, Part, PathIndex, Reply, Request,
};
use pathpool_psi::{ContentName, Matching};
use pathpool_topo::{Fid, NodeIx, DEFAULT_TTL};

use crate::auth;
use crate::*;

fn name() -> ContentName {
    ContentName::new("/videos/a.bin").unwrap()
}

fn fid(seed: u64) -> Fid {
    Fid::from_words([
        seed,
        seed.rotate_left(16),
        seed.rotate_left(32),
        seed.rotate_left(48),
    ])
}

const ECHO: Echo = Echo {
    sent_at: Time::from_ms(1500),
    retransmission: false,
};

/// The overlay key of the vectors: bytes 0, 1, …, 31.
fn vector_key() -> auth::OverlayKey {
    let mut k = [0u8; 32];
    for (i, b) in k.iter_mut().enumerate() {
        *b = i as u8;
    }
    auth::OverlayKey::from_bytes(k)
}

/// Sender and timestamp of the control vectors: node 3 at 1 700 000 000 s (unix).
const VECTOR_SENDER: NodeIx = NodeIx(3);
const VECTOR_TIME_US: u64 = 1_700_000_000_000_000;

/// A control packet as the vectors have it: sealed by [`VECTOR_SENDER`] under [`vector_key`].
fn sealed(p: Packet<'static>) -> Packet<'static> {
    let mut bytes = p.to_vec().unwrap();
    seal_control(
        &mut bytes,
        VECTOR_SENDER,
        VECTOR_TIME_US,
        Some(&vector_key()),
    )
    .unwrap();
    let message = match Packet::<4>::decode(&bytes).unwrap().message {
        Message::Publish(m) => Message::Publish(m),
        Message::Subscribe(m) => Message::Subscribe(m),
        Message::FidSet(m) => Message::FidSet(m),
        Message::ControlError(m) => Message::ControlError(m),
        other => panic!("not a control message: {other:?}"),
    };
    Packet { message, ..p }
}

/// The ticket of the vectors: for `fid` towards `publisher`, until 1 700 003 600 s.
fn vector_ticket(publisher: NodeIx, fid: &Fid) -> Ticket {
    Ticket::issue(&vector_key(), publisher, fid, 1_700_003_600)
}

/// The values of the vectors in `docs/wire.md`, by the name given there.
fn vector_values() -> Vec<(&'static str, Packet<'static>)> {
    let content = ContentId::from_name("/videos/a.bin");
    let pkt = |message| Packet {
        hop_limit: DEFAULT_TTL,
        fid: fid(0x0102_0304_0506_0708),
        message,
    };
    vec![
        (
            "publish",
            sealed(pkt(Message::Publish(Publish {
                publisher: NodeIx(7),
                name: name(),
                auth: ControlAuth::default(),
            }))),
        ),
        (
            "subscribe",
            sealed(pkt(Message::Subscribe(Subscribe {
                request_id: 42,
                subscriber: NodeIx(3),
                matching: Matching::Multisource { max_sources: 4 },
                name: name(),
                auth: ControlAuth::default(),
            }))),
        ),
        (
            "fid_set",
            sealed(pkt(Message::FidSet(FidSetMsg {
                request_id: 42,
                name: name(),
                paths: vec![
                    PathFids {
                        publisher: NodeIx(7),
                        group_id: 0,
                        forward_fid: fid(0x1111),
                        reverse_fid: fid(0x2222),
                        ticket: vector_ticket(NodeIx(7), &fid(0x1111)),
                    },
                    PathFids {
                        publisher: NodeIx(9),
                        group_id: 1,
                        forward_fid: fid(0x3333),
                        reverse_fid: fid(0x4444),
                        ticket: vector_ticket(NodeIx(9), &fid(0x3333)),
                    },
                ],
                auth: ControlAuth::default(),
            }))),
        ),
        (
            "control_error",
            sealed(pkt(Message::ControlError(ControlError::new(
                42,
                ErrorCode::UNKNOWN_NAME,
                "no publisher",
            )))),
        ),
        (
            "metadata_request",
            pkt(Message::MetadataRequest(MetadataRequestMsg {
                request: MetadataRequest {
                    content,
                    path: PathIndex(1),
                    echo: ECHO,
                },
                first_chunk: true,
                ticket: vector_ticket(NodeIx(7), &fid(0x1111)),
                forward_fid: fid(0x1111),
            })),
        ),
        (
            "metadata_reply",
            pkt(Message::MetadataReply(MetadataReplyMsg {
                reply: MetadataReply {
                    content,
                    path: PathIndex(1),
                    echo: ECHO,
                    metadata: Metadata::for_content(b"hello world", 4, "greeting"),
                },
                first_chunk: Some(b"hell"),
            })),
        ),
        (
            "chunk_request",
            pkt(Message::ChunkRequest(ChunkRequestMsg {
                request: ChunkRequest {
                    content,
                    index: 2,
                    path: PathIndex(1),
                    echo: Echo {
                        retransmission: true,
                        ..ECHO
                    },
                },
                ticket: vector_ticket(NodeIx(7), &fid(0x1111)),
                forward_fid: fid(0x1111),
            })),
        ),
        (
            "chunk",
            pkt(Message::Chunk(ChunkMsg {
                content,
                index: 2,
                path: PathIndex(1),
                echo: ECHO,
                payload: b"rld",
            })),
        ),
        (
            "data_error",
            pkt(Message::DataError(ErrorReply {
                content,
                part: Part::Chunk(3),
                path: PathIndex(1),
                echo: ECHO,
                kind: ErrorKind::IndexOutOfRange,
            })),
        ),
    ]
}

/// The hex blocks of `docs/wire.md` that start with `# vector NAME`.
fn doc_vectors() -> Vec<(String, Vec<u8>)> {
    let doc = include_str!("../../../docs/wire.md");
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("# vector ") else {
            continue;
        };
        let mut bytes = Vec::new();
        for l in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            let hex = l.split('|').next().unwrap_or("");
            for b in hex.split_whitespace() {
                bytes.push(u8::from_str_radix(b, 16).unwrap());
            }
        }
        out.push((name.trim().to_owned(), bytes));
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x} ")).collect()
}

#[test]
fn document_vectors_encode_and_decode() {
    let docs = doc_vectors();
    let values = vector_values();
    for (name, value) in &values {
        let encoded = value.to_vec().unwrap();
        let Some((_, doc)) = docs.iter().find(|(n, _)| n == name) else {
            panic!(
                "docs/wire.md has no vector {name}; it is\n{}",
                hex(&encoded)
            );
        };
        assert_eq!(&encoded, doc, "{name}: encoded\n{}", hex(&encoded));
        assert_eq!(&Packet::decode(doc).unwrap(), value, "{name}");
    }
    assert_eq!(
        docs.len(),
        values.len(),
        "a vector in the document is not tested"
    );
}

#[test]
fn conversions_to_and_from_the_state_machines_messages() {
    let content = ContentId(5);
    let req = Request::Chunk(ChunkRequest {
        content,
        index: 9,
        path: PathIndex(2),
        echo: ECHO,
    });
    let bytes = Packet {
        hop_limit: 3,
        fid: fid(1),
        message: Message::from_request(req, fid(2), Ticket::default()),
    }
    .to_vec()
    .unwrap();
    let Message::ChunkRequest(m) = Packet::<4>::decode(&bytes).unwrap().message else {
        panic!("not a chunk request");
    };
    assert_eq!(Request::Chunk(m.request), req);
    assert_eq!(m.forward_fid, fid(2));

    let md = MetadataRequestMsg {
        request: MetadataRequest {
            content,
            path: PathIndex(0),
            echo: ECHO,
        },
        first_chunk: true,
        ticket: Ticket::default(),
        forward_fid: fid(2),
    };
    let parts: Vec<Part> = md.requests().map(|r| r.part()).collect();
    assert_eq!(parts, [Part::Metadata, Part::Chunk(0)]);

    let chunk = Chunk {
        content,
        index: 4,
        path: PathIndex(2),
        echo: ECHO,
        payload_bytes: 3,
    };
    let reply = Reply::Chunk(chunk);
    let Message::Chunk(c) = Message::<4>::from_reply(&reply, b"abc").unwrap() else {
        panic!("not a chunk");
    };
    assert_eq!(c.to_chunk(), chunk);
    assert_eq!(
        Message::<4>::from_reply(&reply, b"ab"),
        Err(EncodeError::InvalidValue(Field::Payload))
    );

    let mr = MetadataReplyMsg {
        reply: MetadataReply {
            content,
            path: PathIndex(0),
            echo: ECHO,
            metadata: Metadata::new(10, 5, [0; 32], ""),
        },
        first_chunk: Some(b"01234"),
    };
    let replies: Vec<Reply> = mr.replies().collect();
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[1].part(), Part::Chunk(0));
}

#[test]
fn fid_sets_come_from_the_topology_manager() {
    use pathpool_psi::{FidSet, PathInfo};
    let set = FidSet {
        paths: vec![PathInfo {
            publisher: NodeIx(1),
            forward: vec![],
            reverse: vec![],
            forward_fid: fid(7),
            reverse_fid: fid(8),
            group_id: 3,
        }],
        without_reverse: 0,
    };
    let key = vector_key();
    let m = FidSetMsg::from_fid_set(1, name(), &set, Some(&key), 99).unwrap();
    let ticket = Ticket::issue(&key, NodeIx(1), &fid(7), 99);
    assert_eq!(
        m.paths,
        [PathFids {
            publisher: NodeIx(1),
            group_id: 3,
            forward_fid: fid(7),
            reverse_fid: fid(8),
            ticket,
        }]
    );
    assert_eq!(ticket.verify(&key, NodeIx(1), &fid(7), 99, 0), Ok(()));
    let open = FidSetMsg::from_fid_set(1, name(), &set, None, 99).unwrap();
    assert_eq!(open.paths[0].ticket, Ticket::default(), "no key, no ticket");
    let many = FidSet {
        paths: vec![set.paths[0].clone(); MAX_PATHS + 1],
        without_reverse: 0,
    };
    assert!(matches!(
        FidSetMsg::from_fid_set(1, name(), &many, None, 0),
        Err(EncodeError::Oversized {
            field: Field::PathCount,
            ..
        })
    ));
    let e = ControlError::new(1, ErrorCode::INTERNAL, &"é".repeat(200));
    assert_eq!(e.text.len(), 254, "cut at a character boundary");
}

#[test]
fn chunk_header_in_place_matches_encode() {
    let payload = [0xabu8; 100];
    let chunk = Chunk {
        content: ContentId(1),
        index: 2,
        path: PathIndex(3),
        echo: ECHO,
        payload_bytes: 100,
    };
    let full = Packet {
        hop_limit: 9,
        fid: fid(4),
        message: Message::Chunk(ChunkMsg::new(&chunk, &payload).unwrap()),
    }
    .to_vec()
    .unwrap();
    let mut buf = vec![0u8; 1200];
    let off = chunk_payload_offset::<4>();
    assert_eq!(off, 65);
    buf[off..off + 100].copy_from_slice(&payload);
    let n = encode_chunk_header(&mut buf, 9, &fid(4), &chunk).unwrap();
    assert_eq!(&buf[..n], &full[..]);
    assert!(matches!(
        encode_chunk_header(&mut buf[..100], 9, &fid(4), &chunk),
        Err(EncodeError::BufferTooSmall { needed: 165, .. })
    ));
}

#[test]
fn forwarding_reads_the_header_and_decrements_in_place() {
    let (_, p) = &vector_values()[7];
    let mut bytes = p.to_vec().unwrap();
    let h = peek::<4>(&bytes).unwrap();
    assert_eq!(h.msg_type, MsgType::Chunk);
    assert_eq!(h.hop_limit, 64);
    assert_eq!(h.fid, p.fid);
    assert_eq!(decrement_hop_limit(&mut bytes), Some(63));
    bytes[HOP_LIMIT_OFFSET] = 1;
    assert_eq!(decrement_hop_limit(&mut bytes), None, "last hop: drop");
    assert_eq!(decrement_hop_limit(&mut []), None);
    assert_eq!(
        peek::<2>(&p.to_vec().unwrap()),
        Err(DecodeError::FidWidth {
            expected: 2,
            got: 4
        })
    );
}

#[test]
fn bad_packets_give_typed_errors() {
    let (_, p) = &vector_values()[1]; // subscribe
    let good = p.to_vec().unwrap();
    let with = |i: usize, v: u8| {
        let mut b = good.clone();
        b[i] = v;
        Packet::<4>::decode(&b).map(|_| ())
    };
    assert_eq!(with(0, b'x'), Err(DecodeError::BadMagic));
    assert_eq!(with(2, 1), Err(DecodeError::BadVersion(1)));
    assert_eq!(with(3, 0x7f), Err(DecodeError::UnknownType(0x7f)));
    assert_eq!(with(4, 0), Err(DecodeError::InvalidValue(Field::HopLimit)));
    assert_eq!(
        Packet::<4>::decode(&good[..good.len() - 1]),
        Err(DecodeError::Truncated(Field::Body))
    );
    assert_eq!(
        Packet::<4>::decode(&good[..5]),
        Err(DecodeError::Truncated(Field::FidWidth))
    );
    let mut long = good.clone();
    long.push(0);
    assert_eq!(
        Packet::<4>::decode(&long),
        Err(DecodeError::BadLength {
            declared: good.len() - 40,
            actual: good.len() - 39
        })
    );
    // Matching mode 2 (body offset 8) does not exist; single with max_sources 4 is invalid.
    assert_eq!(with(48, 2), Err(DecodeError::InvalidValue(Field::Matching)));
    assert_eq!(
        with(48, 0),
        Err(DecodeError::InvalidValue(Field::MaxSources))
    );
    // The name's length byte (body offset 11) beyond the body; an invalid name.
    assert_eq!(with(51, 200), Err(DecodeError::Truncated(Field::Name)));
    assert_eq!(with(52, b'x'), Err(DecodeError::BadName));
    assert_eq!(with(53, 0xff), Err(DecodeError::BadUtf8(Field::Name)));

    // A FID set announcing 65 paths (body offset 4 + 1 + 13 = 18), a datagram over the
    // largest UDP payload.
    let (_, fid_set) = &vector_values()[2];
    let mut b = fid_set.to_vec().unwrap();
    b[40 + 18] = 65;
    assert_eq!(
        Packet::<4>::decode(&b),
        Err(DecodeError::Oversized {
            field: Field::PathCount,
            len: 65,
            max: MAX_PATHS
        })
    );
    let mut huge = good.clone();
    huge.resize(MAX_PACKET_BYTES + 1, 0);
    assert!(matches!(
        Packet::<4>::decode(&huge),
        Err(DecodeError::Oversized {
            field: Field::Packet,
            ..
        })
    ));

    let mut counters = DropCounters::default();
    counters.record(&DecodeError::BadMagic);
    counters.record(&DecodeError::Truncated(Field::Body));
    counters.record(&DecodeError::Truncated(Field::Fid));
    assert_eq!(counters.total(), 3);
    assert_eq!(
        counters.iter().find(|(n, _)| *n == "truncated"),
        Some(("truncated", 2))
    );
}

#[test]
fn oversized_fields_are_refused_on_encode() {
    let p = |message| Packet::<4> {
        hop_limit: 1,
        fid: Fid::EMPTY,
        message,
    };
    let mut md = Metadata::new(1, 1, [0; 32], "");
    md.description = "x".repeat(MAX_DESCRIPTION_BYTES + 1);
    let m = p(Message::MetadataReply(MetadataReplyMsg {
        reply: MetadataReply {
            content: ContentId(0),
            path: PathIndex(0),
            echo: ECHO,
            metadata: md,
        },
        first_chunk: None,
    }));
    assert!(matches!(
        m.to_vec(),
        Err(EncodeError::Oversized {
            field: Field::Description,
            ..
        })
    ));
    let text = p(Message::ControlError(ControlError {
        request_id: 0,
        code: ErrorCode::INTERNAL,
        text: "x".repeat(256),
        auth: ControlAuth::default(),
    }));
    assert!(matches!(
        text.to_vec(),
        Err(EncodeError::Oversized {
            field: Field::ErrorText,
            ..
        })
    ));
    let big = vec![0u8; MAX_PACKET_BYTES];
    let chunk = p(Message::Chunk(ChunkMsg {
        content: ContentId(0),
        index: 0,
        path: PathIndex(0),
        echo: ECHO,
        payload: &big,
    }));
    assert!(matches!(
        chunk.to_vec(),
        Err(EncodeError::Oversized {
            field: Field::Packet,
            ..
        })
    ));
    let sub = p(Message::Subscribe(Subscribe {
        request_id: 0,
        subscriber: NodeIx(0),
        matching: Matching::Multisource {
            max_sources: 70_000,
        },
        name: name(),
        auth: ControlAuth::default(),
    }));
    assert!(matches!(
        sub.to_vec(),
        Err(EncodeError::Oversized {
            field: Field::MaxSources,
            ..
        })
    ));
    let zero_hop = Packet::<4> {
        hop_limit: 0,
        ..vector_values().remove(0).1
    };
    assert_eq!(
        zero_hop.to_vec(),
        Err(EncodeError::InvalidValue(Field::HopLimit))
    );
}
