//! SACK options of the ACKs in flight, kept beside the packets.
//!
//! A simulated packet is 24 bytes and has no room for three SACK blocks (48 bytes), so a
//! flow with SACK keeps each ACK it sends in a queue at its sink, and the packet carries the
//! ACK's number in that queue in place of the acknowledgement number. The source takes the
//! ACK back by that number when the packet arrives. One flow's ACKs cross one route of FIFO
//! links, so they arrive in the order they were sent, less those dropped: the source skips
//! the entries of ACKs that never arrived. The outcome is what the SACK option on the wire
//! gives (as the DSS mappings of a multipath connection travel, D31), and a flow
//! without SACK does not use it. The queue holds the ACKs in flight and reuses its memory,
//! so a run in steady state allocates nothing for it.
//!
//! A multipath connection with a finite receive buffer sends its subflow ACKs through the
//! same channel, each with the connection-level DATA_ACK and window it carries (RFC 8684's
//! DSS option, `docs/decisions.md` D176); without SACK their SACK option is empty.
//!
//! A flow (or multipath connection) whose controller reads the one-way delay (TCP-LP,
//! Multi-Priority TCP) sends its ACKs through a channel too, SACK or not: the kept
//! [`AckSegment`] carries the receiver's timestamp (RFC 7323 TSval), which the packet has no
//! room for (D244). Other flows do not touch it.

use std::collections::VecDeque;

use pathpool_proto::mptcp::DataAck;
use pathpool_proto::tcp::{AckSegment, SackBlocks};

/// The ACKs one flow (or one subflow) has sent and its source has not yet received.
#[derive(Clone, Debug, Default)]
pub(crate) struct SackChannel {
    next_id: u64,
    in_flight: VecDeque<(u64, AckSegment, SackBlocks, DataAck)>,
}

impl SackChannel {
    /// Keeps `ack` and its SACK option and returns the number its packet carries.
    pub(crate) fn send(&mut self, ack: AckSegment, sack: &SackBlocks) -> u64 {
        self.send_with_data_ack(ack, sack, DataAck::default())
    }

    /// [`send`](Self::send) for a multipath connection's subflow: also keeps the
    /// data-level acknowledgement.
    pub(crate) fn send_with_data_ack(
        &mut self,
        ack: AckSegment,
        sack: &SackBlocks,
        data_ack: DataAck,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.in_flight.push_back((id, ack, *sack, data_ack));
        id
    }

    /// The ACK numbered `id`, which has just arrived; forgets it and every earlier one (they
    /// were dropped on the way).
    pub(crate) fn receive(&mut self, id: u64) -> (AckSegment, SackBlocks) {
        let (ack, sack, _) = self.receive_with_data_ack(id);
        (ack, sack)
    }

    /// [`receive`](Self::receive), with the data-level acknowledgement kept by
    /// [`send_with_data_ack`](Self::send_with_data_ack).
    pub(crate) fn receive_with_data_ack(&mut self, id: u64) -> (AckSegment, SackBlocks, DataAck) {
        while let Some((first, ack, sack, data_ack)) = self.in_flight.pop_front() {
            if first == id {
                return (ack, sack, data_ack);
            }
        }
        unreachable!("ACK {id} was sent through this channel and arrives once, in order")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathpool_core::Time;

    #[test]
    fn dropped_acks_are_skipped() {
        let mut ch = SackChannel::default();
        let ids: Vec<u64> = (0..4)
            .map(|k| {
                let blocks = SackBlocks::from_blocks(&[(k * 1000 + 500, k * 1000 + 600)]);
                ch.send(AckSegment::new(k * 1000, Time::ZERO), &blocks)
            })
            .collect();
        assert_eq!(ch.receive(ids[0]).0.ack, 0);
        // ACKs 1 and 2 were dropped.
        let (ack, sack) = ch.receive(ids[3]);
        assert_eq!((ack.ack, sack.as_slice()), (3000, &[(3500, 3600)][..]));
        assert!(ch.in_flight.is_empty());
    }

    #[test]
    fn data_acks_travel_with_their_acks() {
        let mut ch = SackChannel::default();
        let d = |k: u64| DataAck {
            data_ack: k * 10,
            window: 100 - k,
        };
        let ids: Vec<u64> = (0..3)
            .map(|k| {
                ch.send_with_data_ack(AckSegment::new(k, Time::ZERO), &SackBlocks::EMPTY, d(k))
            })
            .collect();
        assert_eq!(ch.receive_with_data_ack(ids[1]).2, d(1));
        assert_eq!(ch.receive_with_data_ack(ids[2]).2, d(2));
    }
}
