//! Replicates that are not: a scenario in which nothing draws from the seed gives the same
//! result for every seed, and a sweep's `--reps` then measures nothing (a standard deviation
//! of 0). After a sweep, the replicates of each grid point are compared (their per-flow and
//! per-link tables, which hold no seed), and identical ones are reported with the remedies.

use std::fs;

use super::plan::Plan;

/// The result files that decide whether two runs differ: everything a run measured except
/// `summary.json` and `provenance.json` (which hold the seed and the wall time).
const COMPARED: [&str; 2] = ["flows.parquet", "links.parquet"];

/// What the remedies are, for the warning (docs/scenario-reference.md, "What draws from the
/// seed").
const REMEDIES: &str = "nothing in the scenario draws from the seed. Randomness comes from \
     tcp.send_overhead (ns-2's per-segment send delay; e.g. --set tcp.send_overhead=1.2ms, one \
     bottleneck packet time), start_spread on flows, random loss, RED or random-drop queues, \
     Poisson traffic and on-off UDP flows (docs/scenario-reference.md, \"What draws from the \
     seed\")";

/// Grid points whose replicates all gave byte-identical results, of the points with at least
/// two replicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identical {
    /// Points whose replicates are all identical.
    pub points: usize,
    /// Points with at least two replicates.
    pub of: usize,
    /// Replicates per point.
    pub reps: u64,
}

impl Identical {
    /// The warning, without the `warning: ` prefix.
    #[must_use]
    pub fn message(&self) -> String {
        let which = if self.points == self.of {
            if self.of == 1 {
                format!("the {} replicates are identical", self.reps)
            } else {
                format!(
                    "at every grid point the {} replicates are identical",
                    self.reps
                )
            }
        } else {
            format!(
                "at {} of {} grid points the {} replicates are identical",
                self.points, self.of, self.reps
            )
        };
        format!("{which} (every seed gave the same result): {REMEDIES}")
    }
}

/// Compares the replicates of every grid point of a finished sweep; `None` when every point
/// with two or more replicates has some that differ (or no point has two).
///
/// # Errors
/// Unreadable result files.
pub fn identical_replicates(plan: &Plan) -> Result<Option<Identical>, String> {
    if plan.def.reps < 2 {
        return Ok(None);
    }
    let mut identical = 0;
    let mut compared = 0;
    let mut first: Option<(usize, Vec<Vec<u8>>)> = None;
    let mut all_same = true;
    for i in 0..=plan.runs.len() {
        let point = plan.runs.get(i).map(|r| r.point);
        if let Some((p, _)) = &first {
            if Some(*p) != point {
                compared += 1;
                identical += usize::from(all_same);
                first = None;
            }
        }
        let Some(point) = point else { break };
        let dir = plan.run_dir(i);
        let files = COMPARED
            .iter()
            .map(|f| fs::read(dir.join(f)).map_err(|e| format!("{}: {e}", dir.join(f).display())))
            .collect::<Result<Vec<_>, _>>()?;
        match &first {
            None => {
                first = Some((point, files));
                all_same = true;
            }
            Some((_, reference)) => all_same &= *reference == files,
        }
    }
    Ok((identical > 0).then_some(Identical {
        points: identical,
        of: compared,
        reps: plan.def.reps,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_says_how_many_points_and_what_to_do() {
        let all = Identical {
            points: 3,
            of: 3,
            reps: 5,
        };
        assert!(all
            .message()
            .starts_with("at every grid point the 5 replicates are identical"));
        let some = Identical {
            points: 1,
            of: 3,
            reps: 2,
        };
        assert!(some
            .message()
            .starts_with("at 1 of 3 grid points the 2 replicates are identical"));
        let one = Identical {
            points: 1,
            of: 1,
            reps: 4,
        };
        assert!(one.message().starts_with("the 4 replicates are identical"));
        assert!(one.message().contains("tcp.send_overhead"));
    }
}
