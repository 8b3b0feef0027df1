//! Congestion controllers as pure state machines.
//!
//! Every controller is *connection-level*: it owns the window state of all the paths
//! (subflows) of one connection, so coupled multipath algorithms can read every path without
//! reaching into other objects. A single-path TCP flow is simply a connection with one path.
//!
//! * [`MultipathController`] is the interface transports call: `on_ack`,
//!   `on_congestion_event`, `on_recovery_ack`, `window`.
//! * [`Windows`] implements it once: slow start with appropriate byte counting (RFC 3465),
//!   the fast-recovery window arithmetic of NewReno (RFC 6582), the timeout rule
//!   (RFC 5681 §3.1) and the window floor. It is generic over a [`Coupling`].
//! * A [`Coupling`] supplies only what distinguishes one algorithm from another: the
//!   congestion-avoidance increase, the slow-start test and the decrease: [`Reno`]
//!   (NewReno, and "Uncoupled" with several paths), [`Ewtcp`], [`Coupled`], [`Lia`] (RFC 6356),
//!   [`Olia`], [`Balia`], [`Nmcc`], Tse's multipath Hacker scheme ([`Hacker`],
//!   `cc = "hacker"`, options `tcp.hacker`) and the delay-based [`Wvegas`] (which reads the RTT samples
//!   through [`Coupling::on_rtt_sample`]). Coupling applies within a group of paths
//!   ([`MultipathController::set_group`]); paths in different groups are independent.
//! * Tse's window-based schemes (issue 20): [`Hacker`] (`cc = "hacker"`), Bilevel TCP
//!   ([`BilevelTcp`], `cc = "bilevel-tcp"`, thesis eq. 2.2: a master window split among the
//!   subflows in the ratio of their child windows) and [`TcpLp`] (`cc = "tcp-lp"`, options
//!   `tcp.tcp_lp`; reads [`AckSample::one_way_delay`] through
//!   [`Coupling::on_one_way_delay`], which the simulator's ACKs carry through their
//!   channel, D244) are `cc` names.
//! * Multi-Priority TCP ([`MultiPriority`], `cc = "multi-priority"`, options
//!   `tcp.multi_priority`): NewReno on one subflow, TCP-LP on the others, with Tse's packet
//!   borrowing and returning through the send gate ([`MultipathController::may_send`]) and
//!   the sent-packet notice ([`MultipathController::on_sent`]).
//! * [`AnyController`] puts the concrete controllers in an enum so the per-ACK path has no
//!   virtual call; [`CcKind`] names them for scenario files (`"newreno"`).
//!
//! Nothing here reads a clock or does I/O: time arrives as arguments.

pub mod any;
pub mod balia;
pub mod bilevel_tcp;
pub mod coupled;
pub mod cubic;
pub mod event;
pub mod ewtcp;
pub mod hacker;
pub mod lia;
pub mod mpccp;
pub mod multi_priority;
pub mod nmcc;
pub mod olia;
pub mod path;
pub mod reno;
pub mod tcp_lp;
#[cfg(test)]
mod testing;
pub mod tfrc;
pub mod windows;
pub mod wvegas;

pub use any::{AnyController, CcKind, CcOptions};
pub use balia::Balia;
pub use bilevel_tcp::{BilevelTcp, BilevelTcpConfig, BilevelWindows};
pub use coupled::Coupled;
pub use cubic::Cubic;
pub use event::{AckSample, CongestionEvent, RecoveryAck, SendView};
pub use ewtcp::Ewtcp;
pub use hacker::{Hacker, HackerConfig};
pub use lia::{AlphaUpdate, Lia, LiaConfig};
pub use mpccp::{Mpccp, MpccpConfig, MpccpPath, MpccpPhase, RttScale};
pub use multi_priority::{Accounting, BorrowUnit, MultiPriority, MultiPriorityConfig};
pub use nmcc::{LossEstimator, Nmcc, NmccConfig, NmccInitialM, ShadowUpdate};
pub use olia::Olia;
pub use path::{group_members, CcMetrics, PathState};
pub use reno::Reno;
pub use tcp_lp::{IttRtt, LpPathState, TcpLp, TcpLpConfig};
pub use tfrc::bilevel::{
    allocate, combined_loss_event_rate, fractional_rate_bytes_per_s, master_rtt, BilevelConfig,
    BilevelMaster, LossCombination, MasterRtt, NominalCap, RecvCap, SubflowState,
};
pub use tfrc::equation::{
    loss_event_rate_for_rate, simple_bound_bytes_per_s, tfrc_rate_bytes_per_s,
};
pub use tfrc::history::{ArrivalHistory, HistoryMode};
pub use tfrc::loss_intervals::{BadIntervalCount, LossIntervals};
pub use tfrc::packets::{DataHeader, Feedback};
pub use tfrc::receiver::{TfrcReceiver, TfrcReceiverConfig};
pub use tfrc::sender::{TfrcSender, TfrcSenderConfig};
pub use windows::{CaIncrease, Coupling, RecoveryExit, WindowConfig, WindowUnit, Windows};
pub use wvegas::{Wvegas, WvegasConfig};

use pathpool_core::{PathId, Time};

/// A connection-level congestion controller: the window of every path of one connection.
///
/// Callers (the transport's loss-detection logic) report what happened on a path; the
/// controller answers with the window the path may have in flight.
pub trait MultipathController {
    /// Adds a path with maximum segment size `mss_bytes` and returns its id.
    fn add_path(&mut self, mss_bytes: u64) -> PathId;
    /// Stops counting a path in coupled computations (it keeps its id).
    fn remove_path(&mut self, path: PathId);
    /// New data was cumulatively acknowledged on `path` outside loss recovery.
    fn on_ack(&mut self, path: PathId, ack: &AckSample);
    /// A loss was detected on `path`.
    fn on_congestion_event(&mut self, path: PathId, event: CongestionEvent);
    /// An acknowledgement arrived on `path` while it is in fast recovery.
    fn on_recovery_ack(&mut self, path: PathId, ack: RecoveryAck);
    /// Puts `path` in coupling group `group` (paths in different groups are not coupled).
    fn set_group(&mut self, path: PathId, group: u32);
    /// Bytes `path` may have in flight now (including fast-recovery inflation).
    fn window(&self, path: PathId) -> u64;
    /// Caps `path`'s congestion window at `max_bytes` (at least one segment): a sender
    /// limited by the receive window calls it after each ACK, so that cwnd does not grow past
    /// what it can use (RFC 7661's concern; Linux grows cwnd only while cwnd-limited) and a
    /// loss never sets ssthresh from a window that was never in flight.
    fn limit_window(&mut self, path: PathId, max_bytes: u64);
    /// Penalises `path` for holding up a multipath connection's receive window (Raiciu et
    /// al., NSDI 2012, §4.2, "penalizing slow subflows"): halves its congestion window (to at
    /// least one segment) and sets ssthresh to the halved window, as for a loss but without
    /// asking the coupling. A path in fast recovery is left alone (its loss has already
    /// reduced it; Linux likewise penalises only a subflow in the `Open` state).
    fn penalise(&mut self, path: PathId);
    /// A snapshot of the path's controller state, for traces.
    fn metrics(&self, path: PathId) -> CcMetrics;
    /// The send gate: whether `path` may send a packet at `now`, beyond what its window
    /// allows; `view` tells what any path has in flight and whether it has data to send.
    /// Multi-Priority TCP holds a background probe (or the base, while a probe is due) back
    /// here (Tse §4.2 probe rate limit and borrowing); every other controller lets
    /// everything through.
    #[inline(always)]
    fn may_send(&self, _path: PathId, _now: Time, _view: impl Fn(PathId) -> SendView) -> bool {
        true
    }
    /// The sent-packet notice: `path` sent a packet at `now` (Multi-Priority TCP borrows for
    /// a probe here). Only a controller whose [`gates_sending`](Self::gates_sending) is true
    /// needs it: a transport may leave it out otherwise (the MPTCP sender's one-subflow
    /// transmission path does, to stay small enough for its callers).
    #[inline(always)]
    fn on_sent(&mut self, _path: PathId, _now: Time) {}
    /// Whether the send gate couples the paths, so that an event on one path may let
    /// another send (a transport then looks at every path after each event).
    #[inline(always)]
    fn gates_sending(&self) -> bool {
        false
    }
}
