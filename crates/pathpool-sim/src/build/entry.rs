//! What every `[[flows]]` entry has, whatever its kind: its place in the file, its end hosts
//! and times, and its `count` copies with their ids and start times.

use std::collections::HashSet;

use pathpool_core::{Dur, Rng, Time};
use pathpool_topo::NodeIx;

use super::net::{end_hosts, Net};
use super::{at, child, ix, k, MAX_FLOWS, STREAM_START};
use crate::error::{PathSeg, SpecError};
use crate::sim::Simulation;
use crate::spec::{FlowCommon, Scenario};

/// A `[[flows]]` entry being compiled: the scenario, the network, the entry's index and the
/// run's seed.
pub(super) struct Entry<'a> {
    pub(super) sc: &'a Scenario,
    pub(super) net: &'a Net,
    pub(super) j: usize,
    pub(super) seed: u64,
}

/// One copy of an entry.
pub(super) struct FlowCopy {
    /// `<id>.<copy>` (or the entry's id when it has one copy), unique among the flows.
    pub(super) id: String,
    /// The entry's start, spread when it asks so, and at most the end of the run.
    pub(super) start: Time,
}

impl Entry<'_> {
    /// The entry's path: `flows[j]`.
    pub(super) fn here(&self) -> Vec<PathSeg> {
        at(&[k("flows"), ix(self.j)])
    }

    /// The path of the entry's field `name`.
    pub(super) fn field(&self, name: &str) -> Vec<PathSeg> {
        child(&self.here(), name)
    }

    /// The sending and receiving hosts of a TCP or UDP entry, checked with its times: the
    /// scenario may hold all its copies, it starts before the end of the run and stops after
    /// it starts.
    pub(super) fn hosts_and_times(
        &self,
        sim: &Simulation,
        f: &FlowCommon,
        stop: Option<Dur>,
    ) -> Result<(NodeIx, NodeIx), SpecError> {
        if f.from.is_empty() {
            return Err(SpecError::at(
                self.field("from"),
                "missing: the sending host",
            ));
        }
        let ends = end_hosts(self.net, &f.from, &f.to, &self.here())?;
        if sim.flows.len() as u64 + u64::from(f.count) > MAX_FLOWS {
            return Err(SpecError::at(
                self.field("count"),
                format!("the scenario would have more than {MAX_FLOWS} flows"),
            ));
        }
        self.starts_in_time(f)?;
        if stop.is_some_and(|s| s <= f.start) {
            return Err(SpecError::at(self.field("stop"), "must be after start"));
        }
        Ok(ends)
    }

    /// The entry starts before the end of the run.
    pub(super) fn starts_in_time(&self, f: &FlowCommon) -> Result<(), SpecError> {
        if f.start >= self.sc.duration {
            return Err(SpecError::at(
                self.field("start"),
                format!(
                    "{} is not before the end of the run ({})",
                    f.start, self.sc.duration
                ),
            ));
        }
        Ok(())
    }

    /// Adds the entry's copies in order: `add` gets each copy's id and start and adds one
    /// flow. A copy's spread start is drawn from its own random stream, numbered by the flows
    /// added before it, so that adding an entry never moves another's starts.
    pub(super) fn each_copy(
        &self,
        sim: &mut Simulation,
        f: &FlowCommon,
        ids: &mut HashSet<String>,
        mut add: impl FnMut(&mut Simulation, FlowCopy) -> Result<(), SpecError>,
    ) -> Result<(), SpecError> {
        let base_id = f.id.clone().unwrap_or_else(|| format!("flow{}", self.j));
        for copy in 0..f.count {
            let id = if f.count > 1 {
                format!("{base_id}.{copy}")
            } else {
                base_id.clone()
            };
            let id = unique_id(ids, id, self.field("id"))?;
            let mut start = f.start;
            if f.start_spread > Dur::ZERO {
                let mut rng = Rng::stream(self.seed, STREAM_START, sim.flows.len() as u64);
                start += Dur::from_ps(rng.below(f.start_spread.as_ps() + 1));
            }
            let start = Time::ZERO + start.min(self.sc.duration);
            add(sim, FlowCopy { id, start })?;
        }
        Ok(())
    }
}

/// `id`, once it is known to be new among the flows.
pub(super) fn unique_id(
    ids: &mut HashSet<String>,
    id: String,
    path: Vec<PathSeg>,
) -> Result<String, SpecError> {
    if !ids.insert(id.clone()) {
        return Err(SpecError::at(path, format!("flow id {id:?} is used twice")));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, compile_seed, error, ids, line};
    use pathpool_core::Time;

    fn flows(entry: &str) -> String {
        line(&format!("[[flows]]\nfrom = \"a\"\nto = \"b\"\n{entry}"))
    }

    #[test]
    fn copies_are_named_by_index_and_a_single_one_by_the_entry() {
        let sim = compile(&flows("id = \"bulk\"\ncount = 3"));
        assert_eq!(ids(&sim), ["bulk.0", "bulk.1", "bulk.2"]);
        let sim = compile(&flows("count = 1"));
        assert_eq!(ids(&sim), ["flow0"]);
        let sim = compile(&flows("count = 0"));
        assert!(ids(&sim).is_empty(), "count = 0 disables the entry");
        let e = error(&flows(
            "id = \"x\"\n[[flows]]\nid = \"x\"\nfrom = \"b\"\nto = \"a\"",
        ));
        assert_eq!(e, "flows[1].id: flow id \"x\" is used twice");
    }

    #[test]
    fn spread_starts_fall_in_the_window_differ_by_copy_and_repeat_by_seed() {
        let text = flows("count = 20\nstart = \"1s\"\nstart_spread = \"2s\"");
        let starts = |seed| -> Vec<Time> {
            compile_seed(&text, seed)
                .flows
                .iter()
                .map(|f| f.start)
                .collect()
        };
        let one = starts(1);
        assert!(one
            .iter()
            .all(|&s| s >= Time::from_secs_f64(1.0) && s <= Time::from_secs_f64(3.0)));
        let mut distinct = one.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 20, "{one:?}");
        assert_eq!(one, starts(1));
        assert_ne!(one, starts(2));
        // Without a spread every copy starts at `start`.
        let sim = compile(&flows("count = 2\nstart = \"1s\""));
        assert!(sim
            .flows
            .iter()
            .all(|f| f.start == Time::from_secs_f64(1.0)));
    }

    #[test]
    fn hosts_and_times_are_checked() {
        let e = error(&line("[[flows]]\nto = \"b\""));
        assert_eq!(e, "flows[0].from: missing: the sending host");
        let e = error(&flows("start = \"10s\""));
        assert_eq!(
            e,
            "flows[0].start: 10s is not before the end of the run (10s)"
        );
        let e = error(&flows("start = \"2s\"\nstop = \"1s\""));
        assert_eq!(e, "flows[0].stop: must be after start");
        let e = error(&line("[[flows]]\nfrom = \"a\"\nto = \"a\""));
        assert_eq!(e, "flows[0].to: a flow needs two different hosts");
        let e = error(&line("[[flows]]\nfrom = \"a\"\nto = \"r\""));
        assert!(e.starts_with("flows[0].to: \"r\" is a router"), "{e}");
        let e = error(&flows("count = 5000001"));
        assert!(
            e.starts_with("flows[0].count: the scenario would have more than"),
            "{e}"
        );
    }
}
