//! `measure.trace_sequences` (issue 21; the INRPP document's Fig. 10): a flow's sequence
//! numbers at its sender, at the INRPP routers on its way and at its receiver (D308).

use crate::common::{error, flow_s_to_d, run};
use pathpool_sim::table::Table;
use pathpool_sim::Results;

/// Host s to host d through router a, 10 Mb/s and 5 ms a link, and `extra`.
fn line(extra: &str) -> String {
    format!(
        "duration = \"5s\"\n[nodes]\nhosts = [\"s\", \"d\"]\nrouters = [\"a\"]\n\
         [[links]]\nbetween = [\"s\", \"a\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n\
         [[links]]\nbetween = [\"a\", \"d\"]\nrate = \"10Mbps\"\ndelay = \"5ms\"\n{extra}"
    )
}

/// One traced row: time, flow, point, event, seq, nonce.
type Row = (f64, String, String, String, u64, u64);

fn rows(t: &Table) -> Vec<Row> {
    let (Some(time), Some(flow), Some(point), Some(event), Some(seq), Some(nonce)) = (
        t.f64s("time_s"),
        t.strs("flow"),
        t.strs("point"),
        t.strs("event"),
        t.u64s("seq"),
        t.u64s("nonce"),
    ) else {
        panic!("sequence_trace columns");
    };
    (0..time.len())
        .map(|i| {
            (
                time[i],
                flow[i].clone(),
                point[i].clone(),
                event[i].clone(),
                seq[i],
                nonce[i],
            )
        })
        .collect()
}

fn trace(r: &Results) -> Vec<Row> {
    rows(r.sequence_trace.as_ref().expect("a sequence_trace table"))
}

/// The `(time, seq)` of the rows at `point` with `event`.
fn at(rows: &[Row], point: &str, event: &str) -> Vec<(f64, u64)> {
    rows.iter()
        .filter(|r| r.2 == point && r.3 == event)
        .map(|r| (r.0, r.4))
        .collect()
}

/// A finite TCP flow of 100 segments traced: its sender sends each segment once, in order,
/// each reaches the receiver once after crossing both links, and the ACKs come back; the
/// rows agree with the flow's own counters. The untraced flow beside it has no rows.
#[test]
fn a_tcp_flows_segments_are_traced_from_sender_to_receiver() {
    let r = run(&line(&format!(
        "[measure]\ntrace_sequences = [\"t\"]\n{}{}",
        flow_s_to_d("t", "newreno", "size = \"146000B\"\n"),
        flow_s_to_d("u", "newreno", "size = \"146000B\"\nstart = \"3s\"\n"),
    )));
    let rows = trace(&r);
    assert!(rows.iter().all(|x| x.1 == "t"));
    let f = r.flow("t").unwrap();
    let sent = at(&rows, "sender", "sent");
    assert_eq!(sent.len() as u64 + f.retransmissions, f.packets_sent);
    assert_eq!(
        at(&rows, "sender", "retransmitted").len() as u64,
        f.retransmissions
    );
    let seqs: Vec<u64> = sent.iter().map(|x| x.1).collect();
    assert_eq!(seqs, (0..100).map(|k| k * 1460).collect::<Vec<_>>());
    let delivered = at(&rows, "receiver", "delivered");
    assert_eq!(delivered.len(), 100);
    for (&(t_sent, s), &(t_got, g)) in sent.iter().zip(&delivered) {
        assert_eq!(s, g);
        // Two 5 ms links and two serialisations of 1500 B at 10 Mb/s, at least.
        assert!(t_got - t_sent >= 0.0124 - 1e-9, "{s}: {t_sent} → {t_got}");
    }
    let acks = at(&rows, "sender", "ack");
    assert!(!acks.is_empty());
    assert_eq!(acks.iter().map(|x| x.1).max(), Some(146_000));
    assert!(
        rows.windows(2).all(|w| w[0].0 <= w[1].0),
        "rows in time order"
    );
}

/// An RCP flow's sends are traced where its route starts at the controller of its own link,
/// with its sequence numbers below the rate field.
#[test]
fn an_rcp_flows_sequence_numbers_leave_out_the_rate_field() {
    let r = run(&line(&format!(
        "[measure]\ntrace_sequences = [\"r\"]\n{}",
        flow_s_to_d("r", "rcp", "size = \"146000B\"\n"),
    )));
    let rows = trace(&r);
    let seqs: Vec<u64> = at(&rows, "sender", "sent").iter().map(|x| x.1).collect();
    assert_eq!(seqs, (0..100).map(|k| k * 1460).collect::<Vec<_>>());
    assert_eq!(at(&rows, "receiver", "delivered").len(), 100);
    assert!(rows.iter().all(|x| x.5 == 0), "RCP packets carry no nonce");
}

/// Flows that are not one sequence space, and unknown ids, are refused by field.
#[test]
fn bad_trace_sequences_name_the_field() {
    let e = error(&line(&format!(
        "[measure]\ntrace_sequences = [\"t\", \"x\"]\n{}",
        flow_s_to_d("t", "newreno", "")
    )));
    assert!(
        e.contains("measure.trace_sequences[1]")
            && e.contains("no flow has the id `x`; flows that can be traced: t"),
        "{e}"
    );
    let e = error(&line(
        "[measure]\ntrace_sequences = [\"u\"]\n[[flows]]\nid = \"u\"\nkind = \"udp-cbr\"\n\
         from = \"s\"\nto = \"d\"\nrate = \"1Mbps\"\n",
    ));
    assert!(
        e.contains("measure.trace_sequences[0]") && e.contains("flow `u` cannot be traced"),
        "{e}"
    );
}
