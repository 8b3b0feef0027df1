//! A UDP socket that sends and receives datagrams in batches, since the socket layer, not the
//! state machines, is what a datagram costs (docs/overlay.md, "Speed").
//!
//! Sends are queued and leave together ([`UdpIo::send_queued`]): a run of up to
//! [`MAX_SEGMENTS`] equal-size datagrams for one address in one `sendmsg` with UDP GSO
//! (`UDP_SEGMENT`, Linux 4.18). Datagrams leave in the order they were queued, whatever their
//! destinations (decision D269). Reads use UDP GRO (`UDP_GRO`, Linux 5.0): a burst from one
//! sender may arrive as one buffer of equal-size segments, which [`Received`] describes. A
//! received buffer can also be sent on as it is ([`UdpIo::send_whole`]), without splitting
//! it in user space.
//!
//! Where the kernel lacks an offload the socket does without it: a kernel that refuses the
//! `UDP_GRO` option returns one datagram per read, and the first GSO send it refuses turns
//! GSO off for good, after which every datagram is its own `send_to` (and that refused batch
//! is sent so). [`Offload::Off`] starts in that fallback. `nix`'s safe wrappers
//! (`ControlMessage::UdpGsoSegments`, `ControlMessageOwned::UdpGroSegments`) keep this free
//! of `unsafe`.
//!
//! Datagrams that arrive while the socket's receive buffer is full are dropped by the kernel
//! before any read sees them. With `SO_RXQ_OVFL` (Linux 2.6.33) each read carries the
//! kernel's count of them, so that [`UdpIo::receive_overflows`] can say how many a node
//! never saw, rather than letting them look like datagrams nobody sent.

use std::io;
use std::io::{IoSlice, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, sockopt, ControlMessage, ControlMessageOwned, MsgFlags,
    SockaddrStorage,
};

/// Largest datagram, and largest GRO buffer, a read returns: a receive buffer this big holds
/// any read.
pub const RECV_BUFFER_BYTES: usize = 65_536;

/// Most datagrams in one GSO send (the kernel's limit, `UDP_MAX_SEGMENTS`).
pub const MAX_SEGMENTS: usize = 64;

/// Most bytes in one GSO send (a UDP payload's limit, less headroom).
pub const MAX_GSO_BYTES: usize = 65_000;

/// Which kernel offloads a [`UdpIo`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offload {
    /// GSO sends and GRO reads, each as long as the kernel has it (what a node uses).
    Kernel,
    /// Neither: one system call per datagram, as on a kernel without them.
    Off,
}

/// One read: `bytes` bytes from `from`, one datagram or, with GRO, several of
/// `segment_bytes` bytes each laid end to end (the last may be shorter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes read into the buffer.
    pub bytes: usize,
    /// The sender.
    pub from: SocketAddr,
    /// Size of each datagram in the buffer but the last (at least 1, so that an empty
    /// datagram is one segment too).
    pub segment_bytes: usize,
}

/// Datagrams queued one after another for one destination: equal-size segments, sent
/// together.
#[derive(Debug)]
struct OutBatch {
    addr: SocketAddr,
    data: Vec<u8>,
    segment_bytes: usize,
    count: usize,
}

/// A UDP socket with send batches and GSO/GRO where the kernel has them.
#[derive(Debug)]
pub struct UdpIo {
    socket: UdpSocket,
    /// Whether sends may use GSO: cleared for good by the first refused GSO send.
    gso: bool,
    /// The read timeout last set on the socket (set again only when it changes).
    read_timeout: Option<Duration>,
    /// Room for the GRO segment size and the overflow count of a read.
    cmsg_buf: Vec<u8>,
    /// The kernel's count of datagrams dropped at a full receive buffer, as the last read
    /// carried it (`SO_RXQ_OVFL`; a 32-bit counter that wraps).
    overflow_counter: u32,
    /// Datagrams dropped at a full receive buffer, summed over the counter's wraps.
    receive_overflows: u64,
    /// The datagrams queued since the last send, all for one address (empty: `count` 0).
    out: OutBatch,
    send_errors: u64,
}

impl UdpIo {
    /// Batched I/O on `socket`, with the kernel's offloads or without.
    #[must_use]
    pub fn new(socket: UdpSocket, offload: Offload) -> UdpIo {
        // A kernel without GRO refuses the option; reads then return single datagrams.
        let _ = setsockopt(
            &socket,
            sockopt::UdpGroSegment,
            &(offload == Offload::Kernel),
        );
        // A kernel without the option leaves the count at zero; nothing else changes.
        let _ = setsockopt(&socket, sockopt::RxqOvfl, &1);
        UdpIo {
            socket,
            gso: offload == Offload::Kernel,
            read_timeout: None,
            cmsg_buf: nix::cmsg_space!(i32, u32),
            overflow_counter: 0,
            receive_overflows: 0,
            out: OutBatch {
                addr: SocketAddr::from(([0, 0, 0, 0], 0)),
                data: Vec::with_capacity(MAX_GSO_BYTES),
                segment_bytes: 0,
                count: 0,
            },
            send_errors: 0,
        }
    }

    /// The socket's address.
    ///
    /// # Errors
    /// As [`UdpSocket::local_addr`].
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Whether sends still use GSO (false with [`Offload::Off`] or once the kernel has
    /// refused it).
    #[must_use]
    pub fn gso(&self) -> bool {
        self.gso
    }

    /// Datagrams the socket refused to send.
    #[must_use]
    pub fn send_errors(&self) -> u64 {
        self.send_errors
    }

    /// Datagrams the kernel dropped because the socket's receive buffer was full, as of the
    /// last read (the kernel reports its count with each read, so drops after the last read
    /// are counted at the next one). Zero on a kernel without `SO_RXQ_OVFL`.
    #[must_use]
    pub fn receive_overflows(&self) -> u64 {
        self.receive_overflows
    }

    /// Queues `datagram` for `addr`: it joins the queued batch if that batch is for `addr`,
    /// has the batch's size and has room; otherwise the batch leaves first. So datagrams
    /// leave in the order they were queued, whatever their destinations: a run of datagrams to
    /// one address is one GSO send, and a node that alternates between destinations sends
    /// more, smaller batches. Ordering by destination instead made one path's burst reach a
    /// shared drop-tail queue ahead of another path's datagrams queued earlier, and that path
    /// was starved (docs/overlay.md, acceptance 4; D256, D269). Nothing leaves before
    /// [`send_queued`](Self::send_queued) but a batch that this datagram cannot join.
    pub fn queue(&mut self, addr: SocketAddr, datagram: &[u8]) {
        let b = &self.out;
        let fits = b.count == 0
            || (b.addr == addr
                && self.gso
                && b.segment_bytes == datagram.len()
                && b.count < MAX_SEGMENTS
                && b.data.len() + datagram.len() <= MAX_GSO_BYTES);
        if !fits {
            self.send_queued();
        }
        let b = &mut self.out;
        b.addr = addr;
        b.segment_bytes = datagram.len();
        b.data.extend_from_slice(datagram);
        b.count += 1;
    }

    /// Sends what is queued.
    pub fn send_queued(&mut self) {
        let b = &mut self.out;
        if b.count == 0 {
            return;
        }
        self.send_errors += send_segments(
            &self.socket,
            &mut self.gso,
            b.addr,
            &b.data,
            b.segment_bytes,
            b.count,
        );
        b.data.clear();
        b.count = 0;
    }

    /// Sends `count` datagrams of `segment_bytes` bytes (the last may be shorter) laid end to
    /// end in `buffer` (a [`Received`] buffer, say) to `addr` now, as they are, in one GSO
    /// send; what is queued leaves first, so that datagrams leave in order. Returns false, having sent nothing, when GSO is off, for fewer than two
    /// datagrams (one gains nothing) or when the buffer is over a GSO send's limits.
    pub fn send_whole(
        &mut self,
        addr: SocketAddr,
        buffer: &[u8],
        segment_bytes: usize,
        count: usize,
    ) -> bool {
        if !self.gso || !(2..=MAX_SEGMENTS).contains(&count) || buffer.len() > MAX_GSO_BYTES {
            return false;
        }
        self.send_queued();
        self.send_errors += send_segments(
            &self.socket,
            &mut self.gso,
            addr,
            buffer,
            segment_bytes,
            count,
        );
        true
    }

    /// Makes [`recv`](Self::recv) wait at most `wait` (at least a microsecond: a zero
    /// timeout means "block forever" to the socket).
    ///
    /// # Errors
    /// As [`UdpSocket::set_read_timeout`].
    pub fn set_wait(&mut self, wait: Duration) -> io::Result<()> {
        let wait = Some(wait.max(Duration::from_micros(1)));
        if self.read_timeout != wait {
            self.socket.set_read_timeout(wait)?;
            self.read_timeout = wait;
        }
        Ok(())
    }

    /// Reads one buffer into `buf`, waiting as long as [`set_wait`](Self::set_wait) said
    /// (forever before the first call to it); `None` when nothing came.
    ///
    /// # Errors
    /// The socket fails, other than by a timeout, an interruption or an ICMP error (a
    /// neighbour not listening yet answers with "port unreachable", which is `None` too).
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        self.read(buf, MsgFlags::empty())
    }

    /// As [`recv`](Self::recv), but takes only what has already arrived.
    ///
    /// # Errors
    /// As [`recv`](Self::recv).
    pub fn try_recv(&mut self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        self.read(buf, MsgFlags::MSG_DONTWAIT)
    }

    fn read(&mut self, buf: &mut [u8], flags: MsgFlags) -> io::Result<Option<Received>> {
        match self.recvmsg(buf, flags) {
            Ok(r) => Ok(Some(r)),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                        | io::ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn recvmsg(&mut self, buf: &mut [u8], flags: MsgFlags) -> io::Result<Received> {
        let mut iov = [IoSliceMut::new(buf)];
        let msg = recvmsg::<SockaddrStorage>(
            self.socket.as_raw_fd(),
            &mut iov,
            Some(&mut self.cmsg_buf),
            flags,
        )
        .map_err(io::Error::from)?;
        let mut segment_bytes = msg.bytes;
        for c in msg.cmsgs().into_iter().flatten() {
            match c {
                ControlMessageOwned::UdpGroSegments(size) => {
                    segment_bytes = usize::try_from(size).unwrap_or(msg.bytes);
                }
                // The kernel's running count (`sk_drops`): only the growth since the last
                // read is new.
                ControlMessageOwned::RxqOvfl(count) => {
                    let new = count.wrapping_sub(self.overflow_counter);
                    self.receive_overflows += u64::from(new);
                    self.overflow_counter = count;
                }
                _ => {}
            }
        }
        let from = msg
            .address
            .as_ref()
            .and_then(|a| {
                a.as_sockaddr_in()
                    .map(|v4| SocketAddr::V4((*v4).into()))
                    .or_else(|| a.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into())))
            })
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no sender address"))?;
        Ok(Received {
            bytes: msg.bytes,
            from,
            segment_bytes: segment_bytes.max(1),
        })
    }
}

/// Sends `count` datagrams of `segment_bytes` bytes (the last may be shorter) laid end to end
/// in `data` to `addr`: one `sendmsg` with GSO for several, `send_to` for one, or one
/// `send_to` each once the kernel has refused GSO (then `gso` is cleared for good). Returns
/// the number of datagrams that could not be sent.
fn send_segments(
    socket: &UdpSocket,
    gso: &mut bool,
    addr: SocketAddr,
    data: &[u8],
    segment_bytes: usize,
    count: usize,
) -> u64 {
    let one_by_one = |errors: &mut u64| {
        for d in data.chunks(segment_bytes.max(1)) {
            if socket.send_to(d, addr).is_err() {
                *errors += 1;
            }
        }
    };
    let mut errors = 0;
    if count == 1 || !*gso {
        one_by_one(&mut errors);
        return errors;
    }
    let size = u16::try_from(segment_bytes).unwrap_or(u16::MAX);
    let result = sendmsg(
        socket.as_raw_fd(),
        &[IoSlice::new(data)],
        &[ControlMessage::UdpGsoSegments(&size)],
        MsgFlags::empty(),
        Some(&SockaddrStorage::from(addr)),
    );
    match result {
        Ok(_) => {}
        // No GSO here (an old kernel, or a device without checksum offload): from now on,
        // datagram by datagram.
        Err(
            nix::errno::Errno::EIO | nix::errno::Errno::EINVAL | nix::errno::Errno::ENOPROTOOPT,
        ) => {
            *gso = false;
            one_by_one(&mut errors);
        }
        Err(_) => errors += count as u64,
    }
    errors
}

#[cfg(test)]
#[path = "udp_io_tests.rs"]
mod tests;
