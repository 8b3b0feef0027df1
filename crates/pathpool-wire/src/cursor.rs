//! Bounds-checked big-endian readers and writers over byte slices: every access goes through
//! `split_at_checked` / `get_mut`, so a short input is an error, never a panic.

use pathpool_topo::Fid;

use crate::error::{DecodeError, EncodeError, Field};

/// Reads fields from the front of a borrowed slice.
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    /// The next `n` bytes, borrowed from the input.
    pub(crate) fn take(&mut self, n: usize, field: Field) -> Result<&'a [u8], DecodeError> {
        let (head, tail) = self
            .rest
            .split_at_checked(n)
            .ok_or(DecodeError::Truncated(field))?;
        self.rest = tail;
        Ok(head)
    }

    pub(crate) fn array<const N: usize>(&mut self, field: Field) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, field)?;
        bytes.try_into().map_err(|_| DecodeError::Truncated(field))
    }

    pub(crate) fn u8(&mut self, field: Field) -> Result<u8, DecodeError> {
        Ok(u8::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn u16(&mut self, field: Field) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn u32(&mut self, field: Field) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn u64(&mut self, field: Field) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array(field)?))
    }

    /// A FID in the wire form of decision D48 (words in order, big-endian).
    pub(crate) fn fid<const W: usize>(&mut self) -> Result<Fid<W>, DecodeError> {
        let bytes = self.take(Fid::<W>::BYTES, Field::Fid)?;
        let mut words = [0u64; W];
        for (w, b) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            let b: [u8; 8] = b
                .try_into()
                .map_err(|_| DecodeError::Truncated(Field::Fid))?;
            *w = u64::from_be_bytes(b);
        }
        Ok(Fid::from_words(words))
    }

    /// A length byte then that many bytes, the length at most `max`.
    pub(crate) fn short_bytes(
        &mut self,
        field: Field,
        max: usize,
    ) -> Result<&'a [u8], DecodeError> {
        let len = usize::from(self.u8(field)?);
        if len > max {
            return Err(DecodeError::Oversized { field, len, max });
        }
        self.take(len, field)
    }

    /// A length byte then that many bytes of UTF-8.
    pub(crate) fn short_str(&mut self, field: Field, max: usize) -> Result<&'a str, DecodeError> {
        std::str::from_utf8(self.short_bytes(field, max)?).map_err(|_| DecodeError::BadUtf8(field))
    }

    /// Everything left.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.rest)
    }

    /// Succeeds when the input is used up: trailing bytes make a packet non-canonical.
    pub(crate) fn finish(self, declared: usize) -> Result<(), DecodeError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::BadLength {
                declared,
                actual: declared.saturating_add(self.rest.len()),
            })
        }
    }
}

/// Writes fields into a caller's buffer. The caller checks the total length first
/// ([`EncodeError::BufferTooSmall`]); the writer still checks every write.
pub(crate) struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

impl<'b> Writer<'b> {
    pub(crate) fn new(buf: &'b mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        let available = self.buf.len();
        let end = self.pos.saturating_add(bytes.len());
        let dst = self
            .buf
            .get_mut(self.pos..end)
            .ok_or(EncodeError::BufferTooSmall {
                needed: end,
                available,
            })?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    pub(crate) fn u8(&mut self, v: u8) -> Result<(), EncodeError> {
        self.put(&[v])
    }

    pub(crate) fn u16(&mut self, v: u16) -> Result<(), EncodeError> {
        self.put(&v.to_be_bytes())
    }

    pub(crate) fn u32(&mut self, v: u32) -> Result<(), EncodeError> {
        self.put(&v.to_be_bytes())
    }

    pub(crate) fn u64(&mut self, v: u64) -> Result<(), EncodeError> {
        self.put(&v.to_be_bytes())
    }

    pub(crate) fn fid<const W: usize>(&mut self, fid: &Fid<W>) -> Result<(), EncodeError> {
        for w in fid.words() {
            self.u64(*w)?;
        }
        Ok(())
    }

    /// A length byte then the bytes; the caller has checked the length against its limit.
    pub(crate) fn short_bytes(&mut self, field: Field, bytes: &[u8]) -> Result<(), EncodeError> {
        let len = u8::try_from(bytes.len()).map_err(|_| EncodeError::Oversized {
            field,
            len: bytes.len(),
            max: usize::from(u8::MAX),
        })?;
        self.u8(len)?;
        self.put(bytes)
    }

    /// Bytes written so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }
}
