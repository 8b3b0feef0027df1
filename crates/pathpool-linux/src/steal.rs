//! CPU steal over a window: the share of this machine's CPU time that the hypervisor gave to
//! other guests (`/proc/stat`, the `cpu` line's eighth figure). The kernel beds measure
//! real-time throughput through `tbf` and software emulators; when a virtual machine loses
//! its CPUs for a while, queues drain late and timers fire late, and a figure measured then
//! says more about the host than about the protocol. A test that asserts such a figure reads
//! the steal of its window and repeats a run the host disturbed (D341).

use std::fs;

/// The `cpu` line's counters at one moment (USER_HZ ticks summed over every CPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTicks {
    /// Every state but the guest ones (already inside user and nice).
    pub total: u64,
    /// Time the hypervisor ran something else while this guest wanted to run.
    pub steal: u64,
}

impl CpuTicks {
    /// Parses the first line of `/proc/stat` (`cpu  user nice system idle iowait irq softirq
    /// steal guest guest_nice`); `None` when it is not such a line.
    #[must_use]
    pub fn parse(line: &str) -> Option<CpuTicks> {
        let mut fields = line.split_whitespace();
        if fields.next()? != "cpu" {
            return None;
        }
        let values: Vec<u64> = fields.map(str::parse).collect::<Result<_, _>>().ok()?;
        // Kernels since 2.6.11 give steal; guest and guest_nice are counted in user and nice.
        let states = values.get(..8)?;
        Some(CpuTicks {
            total: states.iter().sum(),
            steal: states[7],
        })
    }

    /// The counters now; `None` where `/proc/stat` is unreadable.
    #[must_use]
    pub fn now() -> Option<CpuTicks> {
        let stat = fs::read_to_string("/proc/stat").ok()?;
        CpuTicks::parse(stat.lines().next()?)
    }

    /// Steal since `earlier` as a fraction of all CPU time since then (0 when no time passed).
    #[must_use]
    pub fn steal_since(&self, earlier: &CpuTicks) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        if total == 0 {
            return 0.0;
        }
        self.steal.saturating_sub(earlier.steal) as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_gives_total_and_steal() {
        let t =
            CpuTicks::parse("cpu  97655 0 11094 299336 1326 0 8373 19807 0 0").expect("a cpu line");
        assert_eq!(t.steal, 19807);
        assert_eq!(t.total, 97655 + 11094 + 299336 + 1326 + 8373 + 19807);
    }

    #[test]
    fn other_lines_and_short_lines_are_refused() {
        assert_eq!(CpuTicks::parse("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(CpuTicks::parse("cpu  1 2 3 4 5 6 7"), None);
        assert_eq!(CpuTicks::parse("cpu  1 2 x 4 5 6 7 8"), None);
    }

    #[test]
    fn steal_is_a_share_of_the_window() {
        let a = CpuTicks {
            total: 1000,
            steal: 10,
        };
        let b = CpuTicks {
            total: 3000,
            steal: 110,
        };
        assert!((b.steal_since(&a) - 0.05).abs() < 1e-12);
        assert_eq!(a.steal_since(&a), 0.0);
    }

    #[test]
    fn this_machine_reports_its_counters() {
        let now = CpuTicks::now().expect("/proc/stat");
        assert!(now.total > 0 && now.steal <= now.total);
    }
}
