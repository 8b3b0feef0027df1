//! Test vectors of `docs/wire.md` (read from the document itself, so it cannot drift), and
//! errors on hand-made bad packets.

use pathpool_core::Time;
use pathpool_proto::mmtp::{
    ChunkRequest, ContentId, Echo, ErrorKind, ErrorReply, MetadataRequest, Part, PathIndex, Request,
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

const TOKEN: u64 = 0x0a0b_0c0d_0e0f_1011;

/// The ticket of the vectors.
fn ticket() -> Ticket {
    Ticket {
        publisher: NodeIx(7),
        expiry_unix_s: 1_800_000_000,
        mac: [0x5a; 16],
    }
}

/// "hello world" as content `/videos/a.bin` in chunks of 64 bytes (one data chunk, one
/// page), signed by node 7 with the key of seed [7; 32].
fn signed_metadata() -> SignedMetadata {
    let content = b"hello world";
    let leaves = vec![hash_tree::leaf_hash(0, content)];
    let tree = hash_tree::HashTree::from_leaves(leaves, 64).unwrap();
    let mut m = SignedMetadata {
        name: name(),
        publisher: NodeIx(7),
        size_bytes: content.len() as u64,
        chunk_bytes: 64,
        data_chunks: 1,
        pages: 1,
        root: tree.root(),
        content_hash: *blake3::hash(content).as_bytes(),
        description: "greeting".into(),
        signature: [0; 64],
    };
    m.sign(&auth::PublisherKey::from_seed([7; 32])).unwrap();
    m
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
                token: TOKEN,
                first_chunk: true,
                ticket: ticket(),
                forward_fid: fid(0x1111),
            })),
        ),
        (
            "metadata_reply",
            pkt(Message::MetadataReply(MetadataReplyMsg {
                prefix: DataPrefix {
                    content,
                    version: signed_metadata().version(),
                    token: TOKEN,
                    path: PathIndex(1),
                    echo: ECHO,
                },
                metadata: signed_metadata(),
                first_chunk: Some(b"page"),
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
                version: signed_metadata().version(),
                token: TOKEN,
                ticket: ticket(),
                forward_fid: fid(0x1111),
            })),
        ),
        (
            "chunk",
            pkt(Message::Chunk(ChunkMsg {
                prefix: DataPrefix {
                    content,
                    version: signed_metadata().version(),
                    token: TOKEN,
                    path: PathIndex(1),
                    echo: ECHO,
                },
                index: 1,
                payload: b"hello world",
            })),
        ),
        (
            "data_error",
            pkt(Message::DataError(DataErrorMsg {
                error: ErrorReply {
                    content,
                    part: Part::Chunk(1),
                    path: PathIndex(1),
                    echo: ECHO,
                    kind: ErrorKind::Unavailable,
                },
                version: signed_metadata().version(),
                token: TOKEN,
                publisher: NodeIx(7),
                mac: auth::OverlayKey::from_bytes([9; 32]).data_error_mac(b"vector"),
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
        message: Message::from_request(req, TOKEN, 77, ticket(), fid(2)),
    }
    .to_vec()
    .unwrap();
    let Message::ChunkRequest(m) = Packet::<4>::decode(&bytes).unwrap().message else {
        panic!("not a chunk request");
    };
    assert_eq!(Request::Chunk(m.request), req);
    assert_eq!((m.forward_fid, m.token, m.version), (fid(2), TOKEN, 77));
    assert_eq!(m.ticket, ticket());

    let md = MetadataRequestMsg {
        request: MetadataRequest {
            content,
            path: PathIndex(0),
            echo: ECHO,
        },
        token: TOKEN,
        first_chunk: true,
        ticket: Ticket::default(),
        forward_fid: fid(2),
    };
    let parts: Vec<Part> = md.requests().map(|r| r.part()).collect();
    assert_eq!(parts, [Part::Metadata, Part::Chunk(0)]);

    // The subscriber's view of a reply: the pages and the data chunks, one index space.
    let m = signed_metadata();
    let t = m.transfer();
    assert_eq!(
        (t.chunk_count, t.chunk_bytes, t.size_bytes),
        (2, 64, 64 + 11)
    );
    assert_eq!(t.chunk_len(0), Some(64));
    assert_eq!(t.chunk_len(1), Some(11));
    assert_eq!(t.validate(), Ok(()));
    assert!(m.validate().unwrap().is_some());
}

#[test]
fn signatures_and_data_error_macs() {
    let key = auth::PublisherKey::from_seed([7; 32]);
    let other = auth::PublisherKey::from_seed([8; 32]);
    let m = signed_metadata();
    assert!(m.verify(&key.public()));
    assert!(!m.verify(&other.public()));
    // Every signed field is covered.
    let changed = [
        SignedMetadata {
            publisher: NodeIx(8),
            ..m.clone()
        },
        SignedMetadata {
            size_bytes: 12,
            ..m.clone()
        },
        SignedMetadata {
            pages: 0,
            ..m.clone()
        },
        SignedMetadata {
            description: "greetinG".into(),
            ..m.clone()
        },
    ];
    for c in &changed {
        assert!(!c.verify(&key.public()), "{c:?}");
    }
    let mut root = m.clone();
    root.root[31] ^= 1;
    assert!(!root.verify(&key.public()));
    let mut whole = m.clone();
    whole.content_hash[0] ^= 1;
    assert!(!whole.verify(&key.public()));

    let overlay = auth::OverlayKey::from_bytes([9; 32]);
    let (_, p) = vector_values().remove(8);
    let mut bytes = p.to_vec().unwrap();
    assert!(!data_error_authentic(&bytes, &overlay));
    assert!(seal_data_error(&mut bytes, &overlay));
    assert!(data_error_authentic(&bytes, &overlay));
    // The hop limit may change on the way; nothing else may.
    bytes[HOP_LIMIT_OFFSET] = 3;
    assert!(data_error_authentic(&bytes, &overlay));
    bytes[40 + 50] ^= 1;
    assert!(!data_error_authentic(&bytes, &overlay));
    assert!(!data_error_authentic(&bytes[..10], &overlay));
    assert!(!data_error_authentic(
        &bytes,
        &auth::OverlayKey::from_bytes([1; 32])
    ));
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
    let prefix = DataPrefix {
        content: ContentId(1),
        version: 2,
        token: TOKEN,
        path: PathIndex(3),
        echo: ECHO,
    };
    let full = Packet {
        hop_limit: 9,
        fid: fid(4),
        message: Message::Chunk(ChunkMsg {
            prefix,
            index: 2,
            payload: &payload,
        }),
    }
    .to_vec()
    .unwrap();
    let mut buf = vec![0u8; 1200];
    let off = chunk_payload_offset::<4>();
    assert_eq!(off, 81);
    buf[off..off + 100].copy_from_slice(&payload);
    let n = encode_chunk_header(&mut buf, 9, &fid(4), prefix, 2, 100).unwrap();
    assert_eq!(&buf[..n], &full[..]);
    assert!(matches!(
        encode_chunk_header(&mut buf[..100], 9, &fid(4), prefix, 2, 100),
        Err(EncodeError::BufferTooSmall { needed: 181, .. })
    ));
}

#[test]
fn data_messages_are_canonical() {
    // A metadata request names no version; a reply's content id and version are its
    // metadata's.
    let (_, p) = vector_values().remove(4);
    let mut b = p.to_vec().unwrap();
    b[40 + 15] = 1;
    assert_eq!(
        Packet::<4>::decode(&b),
        Err(DecodeError::InvalidValue(Field::Version))
    );
    let (_, p) = vector_values().remove(5);
    let good = p.to_vec().unwrap();
    let mut b = good.clone();
    b[40 + 8] ^= 1;
    assert_eq!(
        Packet::<4>::decode(&b),
        Err(DecodeError::InvalidValue(Field::Version))
    );
    let mut b = good.clone();
    b[40] ^= 1;
    assert_eq!(
        Packet::<4>::decode(&b),
        Err(DecodeError::InvalidValue(Field::Content))
    );
    // Error kind 5 does not exist.
    let (_, p) = vector_values().remove(8);
    let mut b = p.to_vec().unwrap();
    b[40 + 41] = 5;
    assert_eq!(
        Packet::<4>::decode(&b),
        Err(DecodeError::InvalidValue(Field::ErrorCode))
    );
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
    let mut md = signed_metadata();
    md.description = "x".repeat(MAX_DESCRIPTION_BYTES + 1);
    let m = p(Message::MetadataReply(MetadataReplyMsg {
        prefix: DataPrefix {
            content: md.content(),
            version: md.version(),
            token: 0,
            path: PathIndex(0),
            echo: ECHO,
        },
        metadata: md,
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
        prefix: DataPrefix {
            content: ContentId(0),
            version: 0,
            token: 0,
            path: PathIndex(0),
            echo: ECHO,
        },
        index: 0,
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
