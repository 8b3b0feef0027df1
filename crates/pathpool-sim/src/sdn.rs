//! Topological assistance for MPTCP from an SDN controller: the thesis's design 3 (§5.1.2,
//! spec §9.2), its preferred one.
//!
//! The switches stay MPTCP-stateless and hand every subflow set-up (the first subflow's SYN,
//! each join's MP_JOIN) to the controller. The controller keeps a connection's status (its
//! subflows and the path each was given) from the first subflow on, compares a new subflow's
//! path with the others' by the topology manager's procedure (paths sharing a link are one
//! group, transitively: [`shared_link_groups`], §4.2.1), and writes the result into the
//! set-up's `PATH_OVERLAP` field, from which the host applies greedy friendliness per group.
//! It keeps the status only briefly (`hold`, 1–2 s in the thesis: MPTCP sets its subflows up
//! at once). A join after that finds no status: the host then gets no overlap information
//! and, as the thesis says endpoints do without it, falls back to friendly behaviour, all
//! its subflows one group, for the rest of the connection (D337).
//!
//! What the controller never sees is a subflow moved to another path without a new join
//! (an SDN rule change): its group stays what the old path gave it, stale.
//!
//! Sans-IO: the simulator feeds it each connection's set-ups in time order when it builds the
//! connection ([`regroups`]), which is what the controller would see, since subflows here
//! open at scenario times on scenario paths.

use pathpool_core::{Dur, Time};
use pathpool_topo::{shared_link_groups, EdgeId};

/// What the host learns from a subflow's set-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    /// The group of every subflow the controller knows, the new one included (subflow index,
    /// group).
    Groups(Vec<(u32, u32)>),
    /// The controller had no status for the connection: no `PATH_OVERLAP`.
    Unknown,
}

/// The controller's status of one connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct Controller {
    hold: Dur,
    /// When the status was last written; `None` before the first subflow.
    updated: Option<Time>,
    /// The subflows it knows, with their paths.
    subflows: Vec<(u32, Vec<EdgeId>)>,
}

impl Controller {
    /// A controller that keeps a connection's status for `hold` after its last set-up.
    pub(crate) fn new(hold: Dur) -> Controller {
        Controller {
            hold,
            updated: None,
            subflows: Vec::new(),
        }
    }

    /// Subflow `subflow` is set up at `now` on `path` (the first set-up is the connection's
    /// first subflow, the others joins).
    pub(crate) fn on_setup(&mut self, now: Time, subflow: u32, path: &[EdgeId]) -> Overlap {
        let known = match self.updated {
            None => true,
            Some(t) => now.saturating_since(t) <= self.hold,
        };
        if !known {
            // A join for a connection whose status is gone: the controller cannot compare,
            // and keeps nothing (a later join would only know this one).
            self.subflows.clear();
            return Overlap::Unknown;
        }
        self.updated = Some(now);
        self.subflows.push((subflow, path.to_vec()));
        let paths: Vec<&[EdgeId]> = self.subflows.iter().map(|(_, p)| p.as_slice()).collect();
        let groups = shared_link_groups(&paths);
        Overlap::Groups(
            self.subflows
                .iter()
                .zip(groups)
                .map(|((s, _), g)| (*s, g))
                .collect(),
        )
    }
}

/// For each subflow (by scenario index), the groups the host sets when it opens: (subflow,
/// group) pairs, its own first. `setups` are the subflows' opening times and data paths.
/// Subflows that open at the same time open in index order.
pub(crate) fn regroups(setups: &[(Time, Vec<EdgeId>)], hold: Dur) -> Vec<Vec<(u32, u32)>> {
    let mut order: Vec<usize> = (0..setups.len()).collect();
    order.sort_by_key(|&i| (setups[i].0, i));
    let mut controller = Controller::new(hold);
    let mut out = vec![Vec::new(); setups.len()];
    let mut opened: Vec<u32> = Vec::new();
    // Once the host has had a set-up without information, it stays friendly (module docs).
    let mut friendly = false;
    for &i in &order {
        let (at, path) = &setups[i];
        let me = i as u32;
        opened.push(me);
        let overlap = controller.on_setup(*at, me, path);
        let mut set: Vec<(u32, u32)> = match overlap {
            Overlap::Groups(g) if !friendly => g,
            _ => {
                friendly = true;
                opened.iter().map(|&s| (s, 0)).collect()
            }
        };
        // Its own group first: the host opens the subflow in it, then moves the others.
        if let Some(pos) = set.iter().position(|(s, _)| *s == me) {
            set.swap(0, pos);
        }
        out[i] = set;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(ids: &[u32]) -> Vec<EdgeId> {
        ids.iter().map(|&i| EdgeId(i)).collect()
    }

    #[test]
    fn paths_sharing_a_link_are_one_group_as_the_topology_manager_groups_them() {
        let mut c = Controller::new(Dur::from_secs(2));
        let t = Time::from_secs(1);
        assert_eq!(c.on_setup(t, 0, &e(&[1, 2])), Overlap::Groups(vec![(0, 0)]));
        // Disjoint: its own group.
        assert_eq!(
            c.on_setup(t, 1, &e(&[3, 4])),
            Overlap::Groups(vec![(0, 0), (1, 1)])
        );
        // Shares link 4 with subflow 1: with it.
        assert_eq!(
            c.on_setup(t, 2, &e(&[5, 4])),
            Overlap::Groups(vec![(0, 0), (1, 1), (2, 1)])
        );
        // Shares link 2 with subflow 0 and link 5 with subflow 2: joins the two groups
        // (transitively, §4.2.1).
        assert_eq!(
            c.on_setup(t, 3, &e(&[2, 5])),
            Overlap::Groups(vec![(0, 0), (1, 0), (2, 0), (3, 0)])
        );
    }

    #[test]
    fn the_status_lasts_hold_after_the_last_set_up() {
        let mut c = Controller::new(Dur::from_secs(2));
        c.on_setup(Time::from_secs(10), 0, &e(&[1]));
        // 2 s later: still known (each set-up renews it).
        assert!(matches!(
            c.on_setup(Time::from_secs(12), 1, &e(&[2])),
            Overlap::Groups(_)
        ));
        // 2.5 s after the last set-up: gone.
        let late = Time::from_secs(14) + Dur::from_ms(500);
        assert_eq!(c.on_setup(late, 2, &e(&[1])), Overlap::Unknown);
    }

    #[test]
    fn the_host_falls_back_to_one_group_after_a_join_without_information() {
        let hold = Dur::from_secs(2);
        // Subflows 0 and 1 on disjoint paths at once; subflow 2 joins 5 s later.
        let setups = vec![
            (Time::from_secs(1), e(&[1])),
            (Time::from_secs(1), e(&[2])),
            (Time::from_secs(6), e(&[3])),
            (Time::from_secs(6), e(&[4])),
        ];
        let r = regroups(&setups, hold);
        assert_eq!(r[0], vec![(0, 0)]);
        assert_eq!(r[1], vec![(1, 1), (0, 0)]);
        // No status: every subflow one group, and so it stays.
        assert_eq!(r[2], vec![(2, 0), (1, 0), (0, 0)]);
        assert_eq!(r[3], vec![(3, 0), (1, 0), (2, 0), (0, 0)]);
        // Within the hold, a later join is compared with the others.
        let within = regroups(
            &[(Time::from_secs(1), e(&[1])), (Time::from_secs(2), e(&[2]))],
            hold,
        );
        assert_eq!(within[1], vec![(1, 1), (0, 0)]);
    }

    #[test]
    fn set_ups_are_taken_in_time_order() {
        // Subflow 1 opens first: it is the connection's first subflow (group 0).
        let r = regroups(
            &[(Time::from_secs(2), e(&[1])), (Time::from_secs(1), e(&[2]))],
            Dur::from_secs(2),
        );
        assert_eq!(r[1], vec![(1, 0)]);
        assert_eq!(r[0], vec![(0, 1), (1, 0)]);
    }
}
