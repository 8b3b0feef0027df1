//! The sending end of a multipath connection: subflows, the data sequence space, the
//! scheduler and reinjection.

use std::collections::VecDeque;

use pathpool_cc::{MultipathController, SendView};
use pathpool_core::{PathId, Time};

use super::mappings::{Mapping, MappingQueue, SegmentIndex};
use super::scheduler::{Candidate, Scheduler};
use super::window::{DataAck, ReceiveWindowConfig, ReceiveWindowStats, SendWindow};
use super::Deadlines;
use crate::tcp::{AckSegment, DataSegment, SackBlocks, TcpSender, TcpSenderConfig};

/// Whether a subflow still carries data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubflowState {
    /// Scheduled, acknowledged and timed.
    Active,
    /// Closed: nothing more is sent on it and what arrives for it is ignored.
    Closed,
}

/// One subflow of the sending end.
#[derive(Clone, Debug)]
pub struct Subflow {
    sender: TcpSender,
    state: SubflowState,
    group: u32,
    /// Mappings of the data given to this subflow and not yet acknowledged on it.
    mappings: MappingQueue,
}

impl Subflow {
    /// The subflow's TCP sender (its sequence space, RTT, recovery and counters).
    #[must_use]
    pub fn sender(&self) -> &TcpSender {
        &self.sender
    }
    /// Whether it is active or closed.
    #[must_use]
    pub fn state(&self) -> SubflowState {
        self.state
    }
    /// Its coupling group in the controller.
    #[must_use]
    pub fn group(&self) -> u32 {
        self.group
    }
    /// Its path in the connection's controller.
    #[must_use]
    pub fn path(&self) -> PathId {
        self.sender.path()
    }
}

/// A segment to send and the subflow it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpSegment {
    /// Index of the subflow.
    pub subflow: usize,
    /// The subflow-level segment.
    pub seg: DataSegment,
}

/// The sending end of a multipath connection.
///
/// Driver call order as for [`TcpSender`]: `handle_ack` / `handle_timeout`, then
/// `poll_transmit` until `None`, then `poll_timeout`.
#[derive(Clone, Debug)]
pub struct MpSender {
    /// Template for the subflows' senders (their `data_bytes` is replaced by 0).
    subflow_config: TcpSenderConfig,
    subflows: Vec<Subflow>,
    scheduler: Scheduler,
    last_scheduled: Option<usize>,
    /// One past the last data byte the application sends (`u64::MAX`: unlimited).
    data_end: u64,
    /// First data byte never given to a subflow.
    next_data_seq: u64,
    /// Data ranges to give to a subflow again (they were in flight on a closed subflow).
    reinject: VecDeque<(u64, u64)>,
    /// Data bytes in the active subflows' mapping queues: given to a subflow and not yet
    /// acknowledged on it.
    ///
    /// Without a receive window, every data byte below `next_data_seq` that has not been
    /// acknowledged is in exactly one place: the mapping queue of one active subflow, or the
    /// reinjection queue. New data goes to one subflow; a subflow's mappings leave its queue
    /// when it acknowledges them (and the data then counts as acknowledged at the data level)
    /// or when it closes, and then what they carry moves to the reinjection queue, whence it
    /// goes to one other subflow. A closed subflow's ACKs are ignored, so nothing is
    /// acknowledged twice, and nothing in the reinjection queue has been acknowledged. The
    /// data-level acknowledgement is therefore what is in neither queue, and needs no record
    /// of its own (`docs/decisions.md` D113). With a finite receive window, opportunistic
    /// retransmission puts data in a second subflow's queue, and the receiver's explicit
    /// DATA_ACK says what has arrived (D176).
    mapped_bytes: u64,
    /// The first data byte beyond the receiver's window (`u64::MAX`: no receive window).
    right_edge: u64,
    /// One past the last data byte that may be given out now: `data_end`, or less when the
    /// receive window stops a whole segment at `next_data_seq + k·mss` from fitting. New data
    /// is taken below it, so the window costs the per-segment path nothing; `next_data_seq`
    /// moves by whole segments (all but a transfer's last), so it stays exact between updates.
    send_end: u64,
    /// The receive window and its mitigations, when the receive buffer is finite.
    window: Option<Box<SendWindow>>,
    /// Which subflows may have something to send since `poll_transmit` last returned `None`.
    pending: Pending,
    /// Each subflow's retransmission deadline (none when closed), refreshed whenever its
    /// sender is touched, so that `poll_timeout_before`, asked after every ACK, reads one
    /// small array instead of every subflow's sender.
    deadlines: Deadlines,
    /// Where in a mapping queue a segment's mapping is, for `for_each_mapping`.
    segment_index: SegmentIndex,
}

/// What a send gate reads of controller path `path`: the bytes in flight on its active
/// subflow and whether that subflow has something to send (a retransmission or queued data,
/// or, having sent all it was given, new data when `more` says the connection has some).
fn view_of(subflows: &[Subflow], path: PathId, more: bool) -> SendView {
    subflows
        .iter()
        .find(|sf| sf.path() == path && sf.state == SubflowState::Active)
        .map_or(SendView::default(), |sf| SendView {
            flight_bytes: sf.sender.flight_bytes(),
            has_data: sf.sender.has_queued() || (more && sf.sender.all_sent()),
        })
}

/// Which subflows `poll_transmit` must look at.
///
/// When `poll_transmit` returns `None`, no active subflow has a segment queued or a window
/// with room for the next data. Until then, a window or queue changes only through an event
/// on that subflow (the controller changes a path's window only on that path's ACKs and
/// losses), so after an ACK on subflow i only i can send: looking at the others would find
/// nothing. Timeouts, new subflows and closed ones make every subflow worth a look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    None,
    One(usize),
    All,
}

impl Pending {
    fn add(self, i: usize) -> Pending {
        match self {
            Pending::None => Pending::One(i),
            Pending::One(j) if j == i => self,
            _ => Pending::All,
        }
    }
}

impl MpSender {
    /// A connection with no subflow yet. `config.data_bytes` is the size of the transfer
    /// (`None`: unlimited); the other fields configure every subflow.
    #[must_use]
    pub fn new(config: TcpSenderConfig, scheduler: Scheduler) -> Self {
        MpSender {
            subflow_config: TcpSenderConfig {
                data_bytes: Some(0),
                ..config
            },
            subflows: Vec::new(),
            scheduler,
            last_scheduled: None,
            data_end: config.data_bytes.unwrap_or(u64::MAX),
            next_data_seq: 0,
            reinject: VecDeque::new(),
            mapped_bytes: 0,
            right_edge: u64::MAX,
            send_end: config.data_bytes.unwrap_or(u64::MAX),
            window: None,
            pending: Pending::All,
            deadlines: Deadlines::default(),
            segment_index: SegmentIndex::new(config.mss),
        }
    }

    /// The connection with a finite connection-level receive buffer (`docs/decisions.md`
    /// D175): new data may go only below DATA_ACK + window, as [`handle_data_ack`] reports
    /// them; before any report the window is the whole buffer.
    ///
    /// [`handle_data_ack`]: Self::handle_data_ack
    #[must_use]
    pub fn with_receive_window(mut self, config: ReceiveWindowConfig) -> Self {
        let w = SendWindow::new(config);
        self.right_edge = w.right_edge;
        self.window = Some(Box::new(w));
        self.update_send_end();
        self
    }

    /// Recomputes `send_end` after `right_edge` or `data_end` changed.
    fn update_send_end(&mut self) {
        let (next, mss) = (self.next_data_seq, self.subflow_config.mss);
        self.send_end = if self.right_edge >= self.data_end {
            self.data_end
        } else {
            // Only whole segments fit: a shorter last one ends at `data_end`, beyond the edge.
            next + self.right_edge.saturating_sub(next) / mss * mss
        };
    }

    /// Processes the data-level acknowledgement and receive window that came with a subflow
    /// acknowledgement (call it before `handle_ack` for that acknowledgement). Without a
    /// receive window it does nothing.
    pub fn handle_data_ack(&mut self, d: DataAck) {
        if let Some(w) = self.window.as_deref_mut() {
            if w.update(d) {
                self.right_edge = w.right_edge;
                self.update_send_end();
                // Any subflow stopped by the window may send now, not only the one whose
                // acknowledgement opened it.
                self.pending = Pending::All;
            }
        }
    }

    /// Opens a subflow on a new path of `cc` in coupling group `group`; returns its index.
    pub fn add_subflow<C: MultipathController>(&mut self, cc: &mut C, group: u32) -> usize {
        let path = cc.add_path(self.subflow_config.mss);
        cc.set_group(path, group);
        self.subflows.push(Subflow {
            sender: TcpSender::new(self.subflow_config, path),
            state: SubflowState::Active,
            group,
            mappings: MappingQueue::default(),
        });
        self.deadlines.push();
        self.pending = Pending::All;
        self.subflows.len() - 1
    }

    /// Moves subflow `i` to coupling group `group` (the network's path-overlap information
    /// changed); a closed subflow stays as it is.
    pub fn set_group<C: MultipathController>(&mut self, i: usize, cc: &mut C, group: u32) {
        let sf = &mut self.subflows[i];
        if sf.state == SubflowState::Closed {
            return;
        }
        sf.group = group;
        cc.set_group(sf.sender.path(), group);
    }

    /// Closes subflow `i`: its path leaves the controller and the data it had in flight
    /// unacknowledged is queued to go out again on the other subflows.
    pub fn close_subflow<C: MultipathController>(&mut self, i: usize, cc: &mut C) {
        let sf = &mut self.subflows[i];
        if sf.state == SubflowState::Closed {
            return;
        }
        sf.state = SubflowState::Closed;
        self.deadlines.set(i, None);
        self.pending = Pending::All;
        cc.remove_path(sf.sender.path());
        // Every mapping in the queue is unacknowledged (`handle_ack` trims the queue to the
        // subflow's `snd_una`), and its data is nowhere else (see `mapped_bytes`).
        // With a receive window, what the DATA_ACK covers has arrived (by another subflow, for
        // an opportunistic retransmission) and is not sent again.
        let acked = self.window.as_deref().map_or(0, |w| w.data_ack);
        for m in sf.mappings.take_all() {
            self.mapped_bytes -= m.len;
            let start = m.data_seq.max(acked);
            if start < m.data_seq + m.len {
                self.reinject.push_back((start, m.data_seq + m.len));
            }
        }
    }

    /// Processes an acknowledgement that arrived on subflow `i`.
    #[inline]
    pub fn handle_ack<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        ack: &AckSegment,
        cc: &mut C,
    ) {
        self.handle_ack_with_sack(now, i, ack, &SackBlocks::EMPTY, cc);
    }

    /// Processes an acknowledgement and its SACK option that arrived on subflow `i`. Always
    /// inlined: a simulator calls it for every ACK, and as a call it costs more than it does.
    #[inline(always)]
    pub fn handle_ack_with_sack<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        ack: &AckSegment,
        sack: &SackBlocks,
        cc: &mut C,
    ) {
        let Some(sf) = self.subflows.get_mut(i) else {
            return;
        };
        if sf.state == SubflowState::Closed {
            return;
        }
        // With a send gate coupling the paths (Multi-Priority TCP), an ACK on one subflow may
        // free a probe on another: every subflow is worth a look.
        self.pending = if cc.gates_sending() {
            Pending::All
        } else {
            self.pending.add(i)
        };
        let before = sf.sender.snd_una();
        sf.sender.handle_ack_with_sack(now, ack, sack, cc);
        self.deadlines.set(i, sf.sender.poll_timeout());
        let una = sf.sender.snd_una();
        if una == before {
            return;
        }
        // The data these subflow bytes carried has arrived: drop the mappings the subflow no
        // longer needs, which makes that data acknowledged (see `mapped_bytes`).
        self.mapped_bytes -= sf.mappings.acknowledge(una);
    }

    /// Processes the retransmission timers of every subflow (those not expired do nothing).
    pub fn handle_timeout<C: MultipathController>(&mut self, now: Time, cc: &mut C) {
        for (i, sf) in self.subflows.iter_mut().enumerate() {
            if sf.state == SubflowState::Active
                && sf.sender.poll_timeout().is_some_and(|d| d <= now)
            {
                sf.sender.handle_timeout(now, cc);
                self.deadlines.set(i, sf.sender.poll_timeout());
                self.pending = self.pending.add(i);
            }
        }
        if cc.gates_sending() {
            self.pending = Pending::All;
        }
        // The driver asks for the exact deadline after this call, and then compares the
        // deadlines after each ACK with it (`poll_timeout_before`).
        self.deadlines.refresh();
    }

    /// When [`handle_timeout`](Self::handle_timeout) must be called next, if ever.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadlines.earliest()
    }

    /// [`poll_timeout`](Self::poll_timeout) if it is before `t`: what a driver that will wake
    /// up at `t` anyway needs after each ACK. Usually known without looking at every subflow.
    #[must_use]
    #[inline]
    pub fn poll_timeout_before(&self, t: Time) -> Option<Time> {
        self.deadlines.earliest_before(t)
    }

    /// Whether [`poll_transmit`](Self::poll_transmit) may return a segment: `false` means it
    /// would return `None` (nothing happened since it last did that could let one go).
    #[must_use]
    #[inline]
    pub fn may_transmit(&self) -> bool {
        !matches!(self.pending, Pending::None)
    }

    /// The next segment to send now on any subflow, if one may go.
    ///
    /// Retransmissions (and data already given to a subflow) go first; then, while there is
    /// data to send, the scheduler gives one segment to a subflow with window space.
    #[inline]
    pub fn poll_transmit<C: MultipathController>(
        &mut self,
        now: Time,
        cc: &mut C,
    ) -> Option<MpSegment> {
        match self.pending {
            Pending::None => None,
            Pending::One(i) => self.transmit_on(now, cc, i),
            Pending::All => self.transmit_any(now, cc),
        }
    }

    /// `poll_transmit` when only subflow `i` may have something to send (after an ACK or a
    /// timeout on it): every policy gives a sole candidate the segment, so the scheduler is
    /// not asked.
    #[inline]
    fn transmit_on<C: MultipathController>(
        &mut self,
        now: Time,
        cc: &mut C,
        i: usize,
    ) -> Option<MpSegment> {
        // A controller with a send gate always makes `pending` `All` (`handle_ack`,
        // `handle_timeout`), so the gate is asked in `transmit_any` and not on this path; nor
        // is the sent-packet notice given here, which a controller without a gate ignores
        // (`MultipathController::on_sent`).
        debug_assert!(!cc.gates_sending());
        let sf = &mut self.subflows[i];
        if sf.state == SubflowState::Active && sf.sender.has_queued() {
            if let Some(seg) = sf.sender.poll_transmit(now, cc) {
                self.deadlines.set(i, sf.sender.poll_timeout());
                return Some(MpSegment { subflow: i, seg });
            }
        }
        let given = self.next_data().and_then(|(data_seq, len)| {
            let sf = &self.subflows[i];
            if sf.state != SubflowState::Active || !sf.sender.all_sent() {
                return None;
            }
            let room = sf.sender.send_room(cc);
            (room >= len).then_some((data_seq, len, room))
        });
        let Some((data_seq, len, room)) = given else {
            if self.window.is_some() {
                return self.blocked_on(now, i, cc);
            }
            self.pending = Pending::None;
            return None;
        };
        let seg = self.give(now, i, data_seq, len);
        if self.reinject.is_empty() {
            // What the next call would find is known now: the other subflows had nothing to
            // do before this ACK, this one has sent all it had and its window shrank by
            // exactly `len`; if that cannot take the next segment, nothing can go until the
            // next event, so the next call returns at once (it would otherwise be made after
            // every ACK only to find this out).
            let next = self
                .subflow_config
                .mss
                .min(self.data_end.saturating_sub(self.next_data_seq));
            if next == 0 || room - len < next {
                self.pending = Pending::None;
            }
        }
        Some(seg)
    }

    /// `poll_transmit` when any subflow may have something to send (rare: after subflows
    /// open or close and after a timeout on several).
    #[inline(never)]
    fn transmit_any<C: MultipathController>(&mut self, now: Time, cc: &mut C) -> Option<MpSegment> {
        let more = self.next_data().is_some();
        for i in 0..self.subflows.len() {
            let sf = &self.subflows[i];
            if sf.state == SubflowState::Active
                && sf.sender.has_queued()
                && cc.may_send(sf.path(), now, |p| view_of(&self.subflows, p, more))
            {
                let sf = &mut self.subflows[i];
                if let Some(seg) = sf.sender.poll_transmit(now, cc) {
                    cc.on_sent(sf.path(), now);
                    self.deadlines.set(i, sf.sender.poll_timeout());
                    return Some(MpSegment { subflow: i, seg });
                }
            }
        }
        let given = self
            .next_data()
            .and_then(|(data_seq, len)| Some((data_seq, len, self.schedule(cc, len, now)?)));
        let Some((data_seq, len, i)) = given else {
            // A subflow with room for the next new segment, which only the receive window
            // stops, is the one the scheduler would have given it to.
            let blocked = self
                .window_stopped_len()
                .and_then(|len| self.schedule(cc, len, now));
            if let Some(i) = blocked {
                return self.window_blocked(now, i, cc);
            }
            self.pending = Pending::None;
            return None;
        };
        let seg = self.give(now, i, data_seq, len);
        cc.on_sent(self.subflows[i].path(), now);
        Some(seg)
    }

    /// With a receive window: the length of the next new segment if only the window stops it
    /// (there is data left and nothing to reinject).
    fn window_stopped_len(&self) -> Option<u64> {
        let stopped = self.window.is_some()
            && self.reinject.is_empty()
            && self.next_data_seq < self.data_end
            && self.next_data_seq >= self.send_end;
        stopped.then(|| {
            self.subflow_config
                .mss
                .min(self.data_end - self.next_data_seq)
        })
    }

    /// `transmit_on` found nothing to give subflow `i` and the connection has a receive
    /// window: if the window alone stops `i` from taking the next new segment, see
    /// `window_blocked`.
    #[cold]
    #[inline(never)]
    fn blocked_on<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        cc: &mut C,
    ) -> Option<MpSegment> {
        let sf = &self.subflows[i];
        let has_room = |len| {
            sf.state == SubflowState::Active
                && sf.sender.all_sent()
                && sf.sender.send_room(cc) >= len
                && cc.may_send(sf.path(), now, |p| view_of(&self.subflows, p, true))
        };
        if self.window_stopped_len().is_some_and(has_room) {
            return self.window_blocked(now, i, cc);
        }
        self.pending = Pending::None;
        None
    }

    /// Subflow `i` has congestion window for the next new segment, but the receive window
    /// does not allow it (new data is never beyond the right edge otherwise, so this is only
    /// reached with a receive window). The subflow holding the window's left edge, if another,
    /// may be penalised and its data sent again on `i` (Raiciu et al. NSDI 2012 §4.2; Linux's
    /// `mptcp_rcv_buf_optimization` is called at the same point, D177, D178).
    #[cold]
    #[inline(never)]
    fn window_blocked<C: MultipathController>(
        &mut self,
        now: Time,
        i: usize,
        cc: &mut C,
    ) -> Option<MpSegment> {
        let pending = std::mem::replace(&mut self.pending, Pending::None);
        let w = self.window.as_deref_mut()?;
        w.stats.blocked += 1;
        let head = w.data_ack;
        // Which other subflow carries the first data byte not yet acknowledged at the data
        // level (by its explicit DATA_ACK), and in which mapping.
        let held = self
            .subflows
            .iter()
            .enumerate()
            .filter(|&(j, sf)| j != i && sf.state == SubflowState::Active)
            .find_map(|(j, sf)| {
                sf.mappings
                    .iter()
                    .find(|m| m.data_seq <= head && head < m.data_seq + m.len)
                    .map(|m| (j, *m))
            });
        let (h, m) = held?;
        let holder = &self.subflows[h].sender;
        if w.config.penalisation {
            // Only a slower holder, and only outside its loss recovery (as Linux).
            let slower = match (self.subflows[i].sender.rtt().srtt(), holder.rtt().srtt()) {
                (Some(mine), Some(its)) => mine < its && w.may_penalise(h, now, its),
                _ => false,
            };
            if slower && !holder.in_recovery() {
                cc.penalise(holder.path());
                w.penalised(h, now);
            }
        }
        if !w.config.opportunistic_retransmission || head < w.retransmitted_up_to {
            return None;
        }
        let len = (m.data_seq + m.len - head).min(self.subflow_config.mss);
        let sf = &mut self.subflows[i];
        if sf.sender.send_room(cc) < len {
            return None;
        }
        w.retransmitted_up_to = head + len;
        w.stats.opportunistic_retransmissions += 1;
        self.mapped_bytes += len;
        sf.mappings.push(Mapping {
            subflow_seq: sf.sender.data_end(),
            data_seq: head,
            len,
        });
        let seg = sf.sender.push_and_transmit(now, len);
        cc.on_sent(sf.path(), now);
        self.deadlines.set(i, sf.sender.poll_timeout());
        self.pending = pending;
        Some(MpSegment { subflow: i, seg })
    }

    /// Gives `[data_seq, data_seq + len)`, as returned by `next_data`, to subflow `i`, which
    /// has sent everything it was given and has room for it, and sends it there. The caller
    /// gives the controller its sent-packet notice, if it needs one.
    #[inline(always)]
    fn give(&mut self, now: Time, i: usize, data_seq: u64, len: u64) -> MpSegment {
        self.take_data(data_seq, len);
        self.mapped_bytes += len;
        let sf = &mut self.subflows[i];
        sf.mappings.push(Mapping {
            subflow_seq: sf.sender.data_end(),
            data_seq,
            len,
        });
        self.last_scheduled = Some(i);
        let timer_was_running = sf.sender.timer_running();
        let seg = sf.sender.push_and_transmit(now, len);
        if !timer_was_running {
            // A transmission starts a stopped timer and leaves a running one alone (RFC 6298
            // §5.1), so only then has the deadline changed.
            self.deadlines.set(i, sf.sender.poll_timeout());
        }
        MpSegment { subflow: i, seg }
    }

    /// The next data to give a subflow: the head of the reinjection queue (none of which has
    /// been acknowledged, see `mapped_bytes`), or new data.
    fn next_data(&self) -> Option<(u64, u64)> {
        let mss = self.subflow_config.mss;
        if let Some(&(start, end)) = self.reinject.front() {
            return Some((start, (end - start).min(mss)));
        }
        let len = mss.min(self.send_end.saturating_sub(self.next_data_seq));
        (len > 0).then_some((self.next_data_seq, len))
    }

    /// Marks `[data_seq, data_seq + len)`, as returned by `next_data`, as given out.
    fn take_data(&mut self, data_seq: u64, len: u64) {
        match self.reinject.front_mut() {
            Some(r) if r.0 == data_seq => {
                r.0 += len;
                if r.0 >= r.1 {
                    self.reinject.pop_front();
                }
            }
            _ => self.next_data_seq += len,
        }
    }

    /// The subflow that gets a segment of `len` bytes, if any has room for it and the
    /// controller's send gate lets it.
    fn schedule<C: MultipathController>(&self, cc: &C, len: u64, now: Time) -> Option<usize> {
        let candidates = self
            .subflows
            .iter()
            .enumerate()
            .filter(|(_, sf)| {
                sf.state == SubflowState::Active
                    && sf.sender.all_sent()
                    && sf.sender.send_room(cc) >= len
                    && cc.may_send(sf.path(), now, |p| view_of(&self.subflows, p, true))
            })
            .map(|(i, sf)| Candidate {
                subflow: i,
                srtt: sf.sender.rtt().srtt(),
            });
        self.scheduler.pick(candidates, self.last_scheduled)
    }

    /// Stops the application: no data beyond what was given to subflows; what was given is
    /// still delivered reliably.
    pub fn stop(&mut self) {
        self.data_end = self.data_end.min(self.next_data_seq);
        self.send_end = self.send_end.min(self.data_end);
        self.pending = Pending::All;
    }

    /// Calls `f(start, end)` for each range of data carried by the `len` bytes at subflow
    /// sequence number `seq` of subflow `i` — the DSS mappings a receiver reads from the
    /// segment. Bytes the subflow has already seen acknowledged map to nothing (their data
    /// arrived before).
    pub fn for_each_mapping(&self, i: usize, seq: u64, len: u64, f: impl FnMut(u64, u64)) {
        if let Some(sf) = self.subflows.get(i) {
            sf.mappings.for_each_in(seq, len, self.segment_index, f);
        }
    }

    /// Whether every data byte of a finite (or stopped) transfer has been acknowledged: all
    /// were given out (`next_data_seq` never passes `data_end`) and none waits in a queue.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.next_data_seq >= self.data_end
            && ((self.mapped_bytes == 0 && self.reinject.is_empty())
                || self
                    .window
                    .as_deref()
                    .is_some_and(|w| w.data_ack >= self.data_end))
    }
    /// Data bytes acknowledged in order: up to the first byte still in a mapping or
    /// reinjection queue, or to the first byte never given out; with a receive window, at
    /// least the receiver's DATA_ACK.
    #[must_use]
    pub fn data_acked(&self) -> u64 {
        let mapped = self.subflows.iter().flat_map(|sf| sf.mappings.iter());
        let inferred = mapped
            .map(|m| m.data_seq)
            .chain(self.reinject.iter().map(|r| r.0))
            .fold(self.next_data_seq, u64::min);
        inferred.max(self.window.as_deref().map_or(0, |w| w.data_ack))
    }
    /// The receive window's options, if the receive buffer is finite.
    #[must_use]
    pub fn receive_window(&self) -> Option<ReceiveWindowConfig> {
        self.window.as_deref().map(|w| w.config)
    }
    /// The counters of the receive window's handling, if the receive buffer is finite.
    #[must_use]
    pub fn receive_window_stats(&self) -> Option<ReceiveWindowStats> {
        self.window.as_deref().map(|w| w.stats)
    }
    /// The first data byte beyond what the receiver's window allows (`u64::MAX` without a
    /// receive window).
    #[must_use]
    pub fn right_edge(&self) -> u64 {
        self.right_edge
    }
    /// The subflows, in the order they were added.
    #[must_use]
    pub fn subflows(&self) -> &[Subflow] {
        &self.subflows
    }
    /// The scheduling policy.
    #[must_use]
    pub fn scheduler(&self) -> Scheduler {
        self.scheduler
    }
    /// Data ranges waiting to be sent again.
    #[must_use]
    pub fn reinjection_queue(&self) -> &VecDeque<(u64, u64)> {
        &self.reinject
    }
}
