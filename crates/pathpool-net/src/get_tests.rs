use super::*;
use crate::overlay::Overlay;
use pathpool_proto::mmtp::{Echo, PathIndex};
use pathpool_wire::auth::PublisherKey;
use pathpool_wire::hash_tree::{leaf_hash, HashTree};
use pathpool_wire::{ChunkMsg, DataPrefix, FidSetMsg};
use std::fs;
use std::net::UdpSocket;

const PAIR: &str = r#"
rendezvous = "p"
nodes = [{ id = "p", transit = false }, { id = "s", transit = false }]
links = [{ between = ["p", "s"] }]
"#;

const CB: u32 = 64;

fn encode(message: Message<'_>) -> Vec<u8> {
    Packet::<4> {
        hop_limit: HOP_LIMIT,
        fid: Fid::default(),
        message,
    }
    .to_vec()
    .unwrap()
}

/// A subscriber `s` of `/t/x` from publisher `p`, past its FID set: its metadata request is
/// outstanding on path 0.
struct Setup {
    ep: GetEndpoint,
    io: NodeIo,
    from: SocketAddr,
    p: NodeIx,
    dir: PathBuf,
    _peer: UdpSocket,
}

fn setup(tag: &str, key: &PublisherKey) -> Setup {
    setup_with_ticket(tag, key, |_| pathpool_wire::Ticket::default())
}

/// The overlay key the tests' rendezvous seals its answers with.
fn overlay_key() -> pathpool_wire::auth::OverlayKey {
    pathpool_wire::auth::OverlayKey::from_bytes([9; 32])
}

/// [`setup`] with the FID set's path carrying `ticket(p)`.
fn setup_with_ticket(
    tag: &str,
    key: &PublisherKey,
    ticket: impl FnOnce(NodeIx) -> pathpool_wire::Ticket,
) -> Setup {
    // Security on: the FID set below is sealed by the rendezvous (p) under this overlay key.
    let overlay_key = overlay_key();
    let mut overlay = Overlay::from_toml_with_key(PAIR, "pair", overlay_key.clone()).unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let s = overlay.node("s").unwrap();
    let p = overlay.node("p").unwrap();
    overlay.set_addr(s, sock.local_addr().unwrap());
    overlay.set_addr(p, peer.local_addr().unwrap());
    overlay.set_public_key(p, key.public());
    let mut io = NodeIo::with_socket(&overlay, s, sock, 1).unwrap();
    let dir = std::env::temp_dir().join(format!("pathpool-get-{tag}-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let name = ContentName::new("/t/x").unwrap();
    let mut config = GetConfig::new(name.clone(), dir.join("out.bin"));
    config.trust = Trust::from_overlay(&overlay);
    let from = peer.local_addr().unwrap();
    let mut ep = GetEndpoint::new(config, s, from);
    let now = Time::from_ms(1);
    ep.handle_timeout(&mut io, now);
    let set = FidSetMsg {
        request_id: ep.request_id,
        name,
        paths: vec![PathFids {
            publisher: p,
            group_id: 0,
            forward_fid: Fid::default(),
            reverse_fid: Fid::default(),
            ticket: ticket(p),
        }],
        auth: pathpool_wire::ControlAuth::default(),
    };
    let mut set = encode(Message::FidSet(set));
    pathpool_wire::seal_control(
        &mut set,
        p,
        crate::security::unix_now_us(),
        Some(&overlay_key),
    )
    .unwrap();
    ep.handle_datagram(&mut io, now, from, MsgType::FidSet, &set);
    assert_eq!(ep.state(), &GetState::Downloading);
    Setup {
        ep,
        io,
        from,
        p,
        dir,
        _peer: peer,
    }
}

fn content() -> (Vec<u8>, HashTree) {
    let data: Vec<u8> = (0..2500u32).map(|i| (i * 7) as u8).collect();
    let leaves = data
        .chunks(CB as usize)
        .enumerate()
        .map(|(i, c)| leaf_hash(i as u64, c))
        .collect();
    (data, HashTree::from_leaves(leaves, CB).unwrap())
}

fn metadata(tree: &HashTree, key: &PublisherKey, p: NodeIx) -> SignedMetadata {
    let mut m = SignedMetadata {
        name: ContentName::new("/t/x").unwrap(),
        publisher: p,
        size_bytes: 2500,
        chunk_bytes: CB,
        data_chunks: 40,
        pages: tree.shape().pages(),
        root: tree.root(),
        content_hash: *blake3::hash(&content().0).as_bytes(),
        description: String::new(),
        signature: [0; 64],
    };
    m.sign(key).unwrap();
    m
}

const ECHO: Echo = Echo {
    sent_at: Time::from_ms(1),
    retransmission: false,
};

fn prefix(m: &SignedMetadata, token: u64) -> DataPrefix {
    DataPrefix {
        content: m.content(),
        version: m.version(),
        token,
        path: PathIndex(0),
        echo: ECHO,
    }
}

impl Setup {
    fn send(&mut self, datagram: &[u8]) {
        let now = Time::from_ms(2);
        self.ep
            .handle_datagram(&mut self.io, now, self.from, MsgType::Chunk, datagram);
    }

    fn chunk(&mut self, m: &SignedMetadata, index: u32, payload: &[u8]) {
        let d = encode(Message::Chunk(ChunkMsg {
            prefix: prefix(m, self.ep.token()),
            index,
            payload,
        }));
        self.send(&d);
    }
}

/// Replies with another token and metadata signed by a key the overlay does not give are
/// dropped; the signed metadata is adopted; a data chunk that overtakes its page is held
/// and written once the page verifies; the file is the content.
#[test]
fn only_signed_metadata_and_verified_chunks_make_the_file() {
    let key = PublisherKey::from_seed([1; 32]);
    let mut t = setup("ok", &key);
    let (data, tree) = content();
    let m = metadata(&tree, &key, t.p);
    let forged = metadata(&tree, &PublisherKey::from_seed([2; 32]), t.p);
    let reply = |m: &SignedMetadata, token| {
        encode(Message::MetadataReply(MetadataReplyMsg {
            prefix: prefix(m, token),
            metadata: m.clone(),
            first_chunk: None,
        }))
    };
    let token = t.ep.token();
    t.send(&reply(&m, token ^ 1));
    assert_eq!(t.ep.stats().wrong_token, 1);
    t.send(&reply(&forged, token));
    assert_eq!(t.ep.stats().rejected_metadata, 1);
    assert!(t.ep.metadata().is_none());
    t.send(&reply(&m, token));
    assert_eq!(t.ep.metadata(), Some(&m));
    let pages = tree.shape().pages();
    // The first data chunk before any page: held, not counted.
    t.chunk(&m, pages, &data[..64]);
    assert_eq!(t.ep.progress(Time::from_ms(2)).bytes, 0);
    for i in 0..pages {
        t.chunk(&m, i, tree.page(i).unwrap());
    }
    assert_eq!(t.ep.progress(Time::from_ms(2)).bytes, 64);
    for (i, c) in data.chunks(64).enumerate().skip(1) {
        t.chunk(&m, pages + i as u32, c);
    }
    assert_eq!(t.ep.state(), &GetState::Done, "{:?}", t.ep);
    assert_eq!(fs::read(t.dir.join("out.bin")).unwrap(), data);
    let _ = fs::remove_dir_all(&t.dir);
}

/// A chunk that fails verification excludes its source, by name; with no other source the
/// download fails and leaves no file.
#[test]
fn a_bad_chunk_excludes_its_source() {
    let key = PublisherKey::from_seed([1; 32]);
    let mut t = setup("bad", &key);
    let (_, tree) = content();
    let m = metadata(&tree, &key, t.p);
    let d = encode(Message::MetadataReply(MetadataReplyMsg {
        prefix: prefix(&m, t.ep.token()),
        metadata: m.clone(),
        first_chunk: None,
    }));
    t.send(&d);
    t.chunk(&m, 0, tree.page(0).unwrap());
    let mut bad = tree.page(1).unwrap().to_vec();
    bad[5] ^= 1;
    t.chunk(&m, 1, &bad);
    assert_eq!(t.ep.stats().invalid_chunks, 1);
    let GetState::Failed(GetError::AllSourcesExcluded(why)) = t.ep.state() else {
        panic!("{:?}", t.ep.state());
    };
    assert!(
        why.contains("p sent chunk 1 that failed verification (path 0)"),
        "{why}"
    );
    assert!(!t.dir.join("out.bin").exists());
    let _ = fs::remove_dir_all(&t.dir);
}

/// A FID set from the rendezvous `p` answering `request_id` with one path of `ticket`.
fn sealed_fid_set(request_id: u32, p: NodeIx, ticket: pathpool_wire::Ticket) -> Vec<u8> {
    let set = FidSetMsg {
        request_id,
        name: ContentName::new("/t/x").unwrap(),
        paths: vec![PathFids {
            publisher: p,
            group_id: 0,
            forward_fid: Fid::default(),
            reverse_fid: Fid::default(),
            ticket,
        }],
        auth: pathpool_wire::ControlAuth::default(),
    };
    let mut set = encode(Message::FidSet(set));
    pathpool_wire::seal_control(
        &mut set,
        p,
        crate::security::unix_now_us(),
        Some(&overlay_key()),
    )
    .unwrap();
    set
}

#[test]
fn tickets_are_renewed_at_four_fifths_of_their_lifetime() {
    let key = PublisherKey::from_seed([5; 32]);
    let start_s = crate::security::unix_now_s();
    let ticket = |p, lifetime_s: u64| {
        pathpool_wire::Ticket::issue(
            &overlay_key(),
            p,
            &Fid::<4>::default(),
            u32::try_from(start_s + lifetime_s).unwrap(),
        )
    };
    let mut t = setup_with_ticket("renew", &key, |p| ticket(p, 10));
    let first = t.ep.paths[0].ticket;
    // The FID set came at 1 ms with 8-10 s of lifetime left (10 s from `start_s`, whole
    // seconds, less the set-up's time): renewal at 6.4-8 s, before the 10 s stall timeout.
    let due = t.ep.renewal.unwrap().due;
    assert!(
        due >= Time::from_ms(6_400) && due <= Time::from_ms(8_001),
        "{due:?}"
    );
    t._peer
        .set_read_timeout(Some(std::time::Duration::from_millis(200)))
        .unwrap();
    // The request id of the next SUBSCRIBE the rendezvous receives, passing over the
    // metadata requests the metadata phase repeats meanwhile.
    let next_subscribe = |peer: &UdpSocket| {
        let mut buf = [0u8; 2048];
        while let Ok(n) = peer.recv(&mut buf) {
            if let Message::Subscribe(s) = Packet::<4>::decode(&buf[..n]).unwrap().message {
                return Some(s.request_id);
            }
        }
        None
    };
    // The first SUBSCRIBE, still queued from the set-up.
    t.io.send_queued();
    assert_eq!(next_subscribe(&t._peer), Some(t.ep.request_id));
    t.ep.handle_timeout(&mut t.io, due - Dur::from_ms(1));
    t.io.send_queued();
    assert_eq!(next_subscribe(&t._peer), None, "not before it is due");
    t.ep.handle_timeout(&mut t.io, due);
    t.io.send_queued();
    let renewal_id = next_subscribe(&t._peer).expect("a SUBSCRIBE at the renewal");
    assert_ne!(
        renewal_id, t.ep.request_id,
        "a new, unpredictable request id"
    );
    // Unanswered, it is repeated with the same id after the retry interval, not before.
    t.ep.handle_timeout(&mut t.io, due + Dur::from_ms(100));
    t.io.send_queued();
    assert_eq!(next_subscribe(&t._peer), None, "no repeat before 500 ms");
    t.ep.handle_timeout(&mut t.io, due + SUBSCRIBE_RETRY);
    t.io.send_queued();
    assert_eq!(
        next_subscribe(&t._peer),
        Some(renewal_id),
        "the SUBSCRIBE repeated"
    );
    // A FID set for another request changes nothing; the answer swaps the path's ticket.
    let later = due + Dur::from_ms(600);
    let renewed = ticket(t.p, 20);
    let stray = sealed_fid_set(renewal_id ^ 1, t.p, renewed);
    t.ep.handle_datagram(&mut t.io, later, t.from, MsgType::FidSet, &stray);
    assert_eq!(t.ep.paths[0].ticket, first);
    let answer = sealed_fid_set(renewal_id, t.p, renewed);
    t.ep.handle_datagram(&mut t.io, later, t.from, MsgType::FidSet, &answer);
    assert_eq!(t.ep.paths[0].ticket, renewed);
    assert_eq!(t.ep.stats().renewed_tickets, 1);
    assert_eq!(t.ep.stats().paths_not_renewed, 0);
    assert_eq!(t.ep.state(), &GetState::Downloading);
    // The next renewal is four fifths of what the new ticket has left when the answer is
    // sealed: 20 s from `start_s` (whole seconds), less the test's time so far (under 2 s).
    let next = t.ep.renewal.unwrap().due;
    assert!(
        next >= later + Dur::from_ms(14_400) && next <= later + Dur::from_ms(16_001),
        "{next:?}"
    );
    let _ = fs::remove_dir_all(&t.dir);
}

#[test]
fn zero_tickets_are_not_renewed() {
    // security = "off": the rendezvous issues zero tickets, which never expire.
    let t = setup("no-renew", &PublisherKey::from_seed([5; 32]));
    assert_eq!(t.ep.renewal, None);
    let _ = fs::remove_dir_all(&t.dir);
}

/// A subflow whose timer expires twice without a reply stalls and probes its source with
/// metadata requests (D57); the answer to a probe, the adopted metadata signed by the path's
/// source, ends the stall and the subflow requests chunks again. Metadata of another root
/// does not.
#[test]
fn a_probe_answered_after_adoption_ends_the_stall() {
    let key = PublisherKey::from_seed([1; 32]);
    let mut t = setup("probe", &key);
    let (_, tree) = content();
    let m = metadata(&tree, &key, t.p);
    let reply = |m: &SignedMetadata, token, sent_at| {
        encode(Message::MetadataReply(MetadataReplyMsg {
            prefix: DataPrefix {
                echo: Echo {
                    sent_at,
                    retransmission: false,
                },
                ..prefix(m, token)
            },
            metadata: m.clone(),
            first_chunk: None,
        }))
    };
    let token = t.ep.token();
    t.send(&reply(&m, token, ECHO.sent_at));
    assert_eq!(t.ep.metadata(), Some(&m));
    assert!(t.ep.subscriber().subflows()[0].chunks_in_flight() > 0);
    let mut now = Time::from_ms(2);
    while !t.ep.subscriber().subflows()[0].is_stalled()
        || t.ep.subscriber().subflows()[0].chunks_in_flight() > 0
    {
        now = t.ep.poll_timeout().expect("a timer runs while downloading");
        t.ep.handle_timeout(&mut t.io, now);
        assert_eq!(t.ep.state(), &GetState::Downloading);
    }
    let mut other = m.clone();
    other.root[0] ^= 1;
    other.sign(&key).unwrap();
    t.ep.handle_datagram(
        &mut t.io,
        now,
        t.from,
        MsgType::MetadataReply,
        &reply(&other, token, now),
    );
    assert_eq!(t.ep.stats().stale_replies, 1);
    assert!(t.ep.subscriber().subflows()[0].is_stalled());
    t.ep.handle_datagram(
        &mut t.io,
        now,
        t.from,
        MsgType::MetadataReply,
        &reply(&m, token, now),
    );
    let sf = &t.ep.subscriber().subflows()[0];
    assert!(!sf.is_stalled(), "{sf:?}");
    assert!(sf.chunks_in_flight() > 0, "{sf:?}");
    let _ = fs::remove_dir_all(&t.dir);
}
