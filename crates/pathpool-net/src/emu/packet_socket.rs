//! A raw `AF_PACKET` socket bound to one interface, the frame I/O of `pathpool emu`
//! (packet(7)).
//!
//! The socket carries a `virtio_net_hdr` before each frame (`PACKET_VNET_HDR`): a frame a
//! host sent with its checksum left to the device (`CHECKSUM_PARTIAL`, as every veth sends)
//! keeps that state when it is sent again on the other interface, so the receiving host
//! trusts it instead of finding an unfinished checksum. The header also says whether a frame
//! is a GSO super-frame, which the emulator refuses (it forwards frames of one MTU).

// The one use of `unsafe` in this crate: the socket calls, which nix does not wrap for
// AF_PACKET (bind to a sockaddr_ll, the SOL_PACKET options, ppoll with a nanosecond timeout).
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// Bytes of the `virtio_net_hdr` before each frame.
pub const VNET_HDR_BYTES: usize = 10;

/// `virtio_net_hdr.gso_type` of a frame that is not a GSO super-frame.
const VIRTIO_NET_HDR_GSO_NONE: u8 = 0;

/// A raw packet socket bound to one interface, in promiscuous mode, that does not see the
/// frames it sends itself.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    interface: String,
    mtu_bytes: usize,
}

fn last_error(what: &str, interface: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{interface}: {what}: {e}"))
}

fn set_option<T>(fd: &OwnedFd, level: i32, name: i32, value: &T) -> io::Result<()> {
    let len = u32::try_from(std::mem::size_of::<T>()).expect("option size fits u32");
    // SAFETY: `value` points to a live `T` of `len` bytes for the duration of the call.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            std::ptr::from_ref(value).cast(),
            len,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl PacketSocket {
    /// Opens a socket on `interface`: bound to it for every protocol, promiscuous (the
    /// membership ends with the socket), ignoring its own output, with a receive buffer of
    /// `receive_buffer_bytes` (forced past `rmem_max`, which needs `CAP_NET_ADMIN`, else as
    /// large as allowed).
    ///
    /// # Errors
    /// An unknown interface, or a missing right (`CAP_NET_RAW`), with the interface named.
    pub fn open(interface: &str, receive_buffer_bytes: usize) -> io::Result<PacketSocket> {
        let name = CString::new(interface).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "an interface name without NUL")
        })?;
        // SAFETY: `name` is a NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{interface}: no such interface in this network namespace"),
            ));
        }
        let ifindex = i32::try_from(ifindex).expect("interface index fits i32");
        // Protocol 0 receives nothing until bind: no frame of another interface slips in
        // between socket() and bind().
        // SAFETY: plain system call.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                0,
            )
        };
        if raw < 0 {
            let e = io::Error::last_os_error();
            let hint = if e.kind() == io::ErrorKind::PermissionDenied {
                " (raw packet sockets need root or CAP_NET_RAW)"
            } else {
                ""
            };
            return Err(io::Error::new(
                e.kind(),
                format!("{interface}: opening a packet socket: {e}{hint}"),
            ));
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let on: libc::c_int = 1;
        set_option(&fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &on)
            .map_err(|e| io::Error::new(e.kind(), format!("{interface}: ignore outgoing: {e}")))?;
        set_option(&fd, libc::SOL_PACKET, libc::PACKET_VNET_HDR, &on)
            .map_err(|e| io::Error::new(e.kind(), format!("{interface}: vnet header: {e}")))?;
        let size = libc::c_int::try_from(receive_buffer_bytes).unwrap_or(libc::c_int::MAX);
        if set_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size).is_err() {
            set_option(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &size)
                .map_err(|e| io::Error::new(e.kind(), format!("{interface}: SO_RCVBUF: {e}")))?;
        }
        let all = (libc::ETH_P_ALL as u16).to_be();
        let address = libc::sockaddr_ll {
            sll_family: libc::AF_PACKET as u16,
            sll_protocol: all,
            sll_ifindex: ifindex,
            sll_hatype: 0,
            sll_pkttype: 0,
            sll_halen: 0,
            sll_addr: [0; 8],
        };
        let len = u32::try_from(std::mem::size_of::<libc::sockaddr_ll>()).expect("fits");
        // SAFETY: `address` is a valid sockaddr_ll of `len` bytes.
        let r = unsafe { libc::bind(fd.as_raw_fd(), std::ptr::from_ref(&address).cast(), len) };
        if r != 0 {
            return Err(last_error("binding the packet socket", interface));
        }
        let membership = libc::packet_mreq {
            mr_ifindex: ifindex,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        set_option(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &membership,
        )
        .map_err(|e| io::Error::new(e.kind(), format!("{interface}: promiscuous mode: {e}")))?;
        let mtu_bytes = read_mtu(&fd, interface)?;
        // Frames queued before the options took effect are discarded by reading them.
        let socket = PacketSocket {
            fd,
            interface: interface.to_string(),
            mtu_bytes,
        };
        let mut scratch = vec![0; socket.buffer_bytes()];
        while let Ok(Some(_)) = socket.receive(&mut scratch) {}
        socket.take_kernel_drops()?;
        Ok(socket)
    }

    /// The interface's name.
    #[must_use]
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// The interface's MTU (bytes of an IP packet).
    #[must_use]
    pub fn mtu_bytes(&self) -> usize {
        self.mtu_bytes
    }

    /// A receive buffer that holds any frame of one MTU with its headers: the vnet header,
    /// an Ethernet header with a VLAN tag, and one byte more, so a longer frame is seen as
    /// longer.
    #[must_use]
    pub fn buffer_bytes(&self) -> usize {
        VNET_HDR_BYTES + 18 + self.mtu_bytes + 1
    }

    /// Receives one frame (vnet header first) into `buffer`; `None` when none is waiting.
    /// The length returned is the whole frame's even if the buffer was shorter (`MSG_TRUNC`).
    ///
    /// # Errors
    /// A failed `recv`.
    pub fn receive(&self, buffer: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: `buffer` is writable for its length.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                libc::MSG_TRUNC,
            )
        };
        if n >= 0 {
            return Ok(Some(usize::try_from(n).expect("non-negative")));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(io::Error::new(
                e.kind(),
                format!("{}: receiving: {e}", self.interface),
            )),
        }
    }

    /// Sends one frame, vnet header first, as [`receive`](Self::receive) gave it.
    ///
    /// # Errors
    /// A failed `send` (a full device queue is `WouldBlock`).
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: `frame` is readable for its length.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Waits until a frame can be received or `timeout` has passed; true if one can.
    ///
    /// # Errors
    /// A failed `ppoll` other than an interruption.
    pub fn wait_readable(&self, timeout: Duration) -> io::Result<bool> {
        let mut poll = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let spec = libc::timespec {
            tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_nsec: libc::c_long::from(timeout.subsec_nanos()),
        };
        // SAFETY: one valid pollfd, a valid timespec and no signal mask.
        let r = unsafe { libc::ppoll(&mut poll, 1, &spec, std::ptr::null()) };
        if r >= 0 {
            return Ok(r > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        }
    }

    /// Frames the kernel dropped because the socket's receive buffer was full since the last
    /// call (`PACKET_STATISTICS` resets on reading).
    ///
    /// # Errors
    /// A failed `getsockopt`.
    pub fn take_kernel_drops(&self) -> io::Result<u64> {
        let mut stats = libc::tpacket_stats {
            tp_packets: 0,
            tp_drops: 0,
        };
        let mut len = u32::try_from(std::mem::size_of::<libc::tpacket_stats>()).expect("fits");
        // SAFETY: `stats` is writable for `len` bytes and `len` is its size.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                std::ptr::from_mut(&mut stats).cast(),
                &mut len,
            )
        };
        if r == 0 {
            Ok(u64::from(stats.tp_drops))
        } else {
            Err(last_error("reading packet statistics", &self.interface))
        }
    }
}

/// Whether a received frame (vnet header first) is a GSO super-frame.
#[must_use]
pub fn is_gso(frame: &[u8]) -> bool {
    frame.get(1).is_some_and(|&t| t != VIRTIO_NET_HDR_GSO_NONE)
}

/// Lowers the calling thread's timer slack to one nanosecond, so a wait for a frame's release
/// time ends when asked rather than up to 50 µs later (prctl(2), `PR_SET_TIMERSLACK`).
pub fn tighten_timer_slack() {
    // SAFETY: plain system call on the calling thread; failure leaves the default slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_u64, 0_u64, 0_u64, 0_u64);
    }
}

/// Gives the calling thread a real-time priority (`SCHED_FIFO`, priority 10), so a
/// forwarder due to send a frame runs before the traffic's own processes on a busy machine;
/// false when not permitted (sched(7)). The kernel's real-time throttling still leaves
/// 5% of each second to other tasks.
#[must_use]
pub fn raise_priority() -> bool {
    let param = libc::sched_param { sched_priority: 10 };
    // SAFETY: plain system call on the calling thread with a valid sched_param.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

fn read_mtu(fd: &OwnedFd, interface: &str) -> io::Result<usize> {
    // SAFETY: an all-zero ifreq is a valid value (a C struct of integers and arrays).
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, &byte) in request.ifr_name.iter_mut().zip(interface.as_bytes()) {
        *slot = libc::c_char::from_ne_bytes([byte]);
    }
    // SAFETY: `request` is a valid ifreq naming the interface, which SIOCGIFMTU fills.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFMTU, &mut request) };
    if r != 0 {
        return Err(last_error("reading the MTU", interface));
    }
    // SAFETY: SIOCGIFMTU wrote the union's MTU member.
    let mtu = unsafe { request.ifr_ifru.ifru_mtu };
    usize::try_from(mtu).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{interface}: MTU {mtu} is negative"),
        )
    })
}
