//! The publisher: a stateless responder (thesis §4.1 design choice 2, §4.2: "sources keep
//! no transport state").
//!
//! A request is self-contained, so the answer is a pure function of the request and the
//! content store: there is no per-subscriber state and no timer. The same function serves an
//! on-path cache that holds the content.

use std::collections::HashMap;
use std::io;

use super::message::{
    Chunk, ChunkRequest, ContentId, ErrorKind, ErrorReply, Metadata, MetadataReply,
    MetadataRequest, Part, Reply, Request,
};

/// Where a publisher finds what it serves.
pub trait ContentStore {
    /// The metadata of `content` (size, chunk size, hash, description), or `None` if the
    /// store does not hold it.
    fn metadata(&self, content: ContentId) -> Option<&Metadata>;

    /// Appends the payload of chunk `index` of `content` to `out`. Called only for a content
    /// the store holds and an index below its chunk count.
    ///
    /// # Errors
    /// Whatever reading the store fails with.
    fn read_chunk(&self, content: ContentId, index: u32, out: &mut Vec<u8>) -> io::Result<()>;
}

/// Answers requests from a [`ContentStore`].
#[derive(Clone, Debug, Default)]
pub struct Publisher<S> {
    store: S,
}

impl<S: ContentStore> Publisher<S> {
    /// A publisher serving `store`.
    #[must_use]
    pub fn new(store: S) -> Self {
        Publisher { store }
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The reply to `request`: the metadata, a chunk (its length only; see
    /// [`respond_with_payload`](Self::respond_with_payload)), or an error reply for a content
    /// the store does not hold or a chunk index out of range.
    #[must_use]
    pub fn respond(&self, request: &Request) -> Reply {
        match request {
            Request::Metadata(r) => self.metadata_reply(r),
            Request::Chunk(r) => self.chunk_reply(r),
        }
    }

    /// As [`respond`](Self::respond), and for a chunk reply also appends its payload to
    /// `payload` (which is left unchanged for other replies).
    ///
    /// # Errors
    /// Whatever reading the store fails with.
    pub fn respond_with_payload(
        &self,
        request: &Request,
        payload: &mut Vec<u8>,
    ) -> io::Result<Reply> {
        let reply = self.respond(request);
        if let Reply::Chunk(c) = &reply {
            let before = payload.len();
            self.store.read_chunk(c.content, c.index, payload)?;
            if payload.len() - before != c.payload_bytes as usize {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "store returned {} bytes for chunk {} of {}, its metadata says {}",
                        payload.len() - before,
                        c.index,
                        c.content,
                        c.payload_bytes
                    ),
                ));
            }
        }
        Ok(reply)
    }

    fn metadata_reply(&self, r: &MetadataRequest) -> Reply {
        match self.store.metadata(r.content) {
            Some(m) => Reply::Metadata(MetadataReply {
                content: r.content,
                path: r.path,
                echo: r.echo,
                metadata: m.clone(),
            }),
            None => Reply::Error(ErrorReply {
                content: r.content,
                part: Part::Metadata,
                path: r.path,
                echo: r.echo,
                kind: ErrorKind::UnknownContent,
            }),
        }
    }

    fn chunk_reply(&self, r: &ChunkRequest) -> Reply {
        let error = |kind| {
            Reply::Error(ErrorReply {
                content: r.content,
                part: Part::Chunk(r.index),
                path: r.path,
                echo: r.echo,
                kind,
            })
        };
        let Some(m) = self.store.metadata(r.content) else {
            return error(ErrorKind::UnknownContent);
        };
        match m.chunk_len(r.index) {
            Some(len) => Reply::Chunk(Chunk {
                content: r.content,
                index: r.index,
                path: r.path,
                echo: r.echo,
                payload_bytes: len,
            }),
            None => error(ErrorKind::IndexOutOfRange),
        }
    }
}

/// A [`ContentStore`] holding contents in memory.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    contents: HashMap<ContentId, (Metadata, Vec<u8>)>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `bytes` as the content named `name`, cut into chunks of `chunk_bytes`; returns
    /// its id.
    ///
    /// # Panics
    /// If `chunk_bytes` is 0.
    pub fn insert(
        &mut self,
        name: &str,
        bytes: Vec<u8>,
        chunk_bytes: u32,
        description: &str,
    ) -> ContentId {
        let id = ContentId::from_name(name);
        let metadata = Metadata::for_content(&bytes, chunk_bytes, description);
        self.insert_with_metadata(id, metadata, bytes);
        id
    }

    /// Stores `bytes` under `id` with the given metadata as it is, even if it does not match
    /// the bytes (to test what subscribers do with a corrupt source).
    pub fn insert_with_metadata(&mut self, id: ContentId, metadata: Metadata, bytes: Vec<u8>) {
        self.contents.insert(id, (metadata, bytes));
    }

    /// The bytes of a stored content.
    #[must_use]
    pub fn bytes(&self, id: ContentId) -> Option<&[u8]> {
        self.contents.get(&id).map(|(_, b)| b.as_slice())
    }
}

impl ContentStore for MemoryStore {
    fn metadata(&self, content: ContentId) -> Option<&Metadata> {
        self.contents.get(&content).map(|(m, _)| m)
    }

    fn read_chunk(&self, content: ContentId, index: u32, out: &mut Vec<u8>) -> io::Result<()> {
        let (m, bytes) = self
            .contents
            .get(&content)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "unknown content"))?;
        let start = m.chunk_offset(index) as usize;
        let len = m.chunk_len(index).unwrap_or(0) as usize;
        let chunk = bytes.get(start..start + len).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "content shorter than its metadata",
            )
        })?;
        out.extend_from_slice(chunk);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mmtp::message::{Echo, PathIndex};
    use pathpool_core::Time;

    fn echo() -> Echo {
        Echo {
            sent_at: Time::from_ms(42),
            retransmission: true,
        }
    }

    fn publisher() -> (Publisher<MemoryStore>, ContentId) {
        let mut store = MemoryStore::new();
        let bytes: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let id = store.insert("/s/a", bytes, 1000, "numbers");
        (Publisher::new(store), id)
    }

    fn chunk(content: ContentId, index: u32) -> Request {
        Request::Chunk(ChunkRequest {
            content,
            index,
            path: PathIndex(3),
            echo: echo(),
        })
    }

    #[test]
    fn metadata_reply_echoes_path_and_echo() {
        let (p, id) = publisher();
        let req = Request::Metadata(MetadataRequest {
            content: id,
            path: PathIndex(3),
            echo: echo(),
        });
        let Reply::Metadata(r) = p.respond(&req) else {
            panic!("expected metadata");
        };
        assert_eq!((r.path, r.echo), (PathIndex(3), echo()));
        assert_eq!(r.metadata.size_bytes, 2500);
        assert_eq!(r.metadata.chunk_count, 3);
        assert_eq!(r.metadata.description, "numbers");
    }

    #[test]
    fn chunks_carry_their_length_and_payload() {
        let (p, id) = publisher();
        let mut payload = Vec::new();
        let reply = p.respond_with_payload(&chunk(id, 2), &mut payload).unwrap();
        let Reply::Chunk(c) = reply else {
            panic!("expected a chunk");
        };
        assert_eq!((c.index, c.payload_bytes), (2, 500));
        assert_eq!(payload.len(), 500);
        assert_eq!(payload[0], (2000u32 % 256) as u8);
        assert_eq!(p.respond(&chunk(id, 0)).part(), Part::Chunk(0));
    }

    #[test]
    fn unknown_content_and_out_of_range_are_error_replies() {
        let (p, id) = publisher();
        let mut payload = Vec::new();
        let r = p
            .respond_with_payload(&chunk(ContentId(1), 0), &mut payload)
            .unwrap();
        assert!(
            matches!(r, Reply::Error(e) if e.kind == ErrorKind::UnknownContent && e.path == PathIndex(3))
        );
        let r = p.respond(&chunk(id, 3));
        assert!(
            matches!(r, Reply::Error(e) if e.kind == ErrorKind::IndexOutOfRange && e.part == Part::Chunk(3))
        );
        let meta = Request::Metadata(MetadataRequest {
            content: ContentId(1),
            path: PathIndex(0),
            echo: echo(),
        });
        assert!(matches!(p.respond(&meta), Reply::Error(e) if e.part == Part::Metadata));
        assert!(payload.is_empty());
    }

    #[test]
    fn a_store_shorter_than_its_metadata_is_an_io_error() {
        let mut store = MemoryStore::new();
        let id = ContentId(5);
        store.insert_with_metadata(id, Metadata::new(3000, 1000, [0; 32], ""), vec![0; 2500]);
        let p = Publisher::new(store);
        let mut payload = Vec::new();
        assert!(p.respond_with_payload(&chunk(id, 1), &mut payload).is_ok());
        let e = p
            .respond_with_payload(&chunk(id, 2), &mut payload)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
