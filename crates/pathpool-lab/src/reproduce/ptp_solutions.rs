//! The four solutions the PTP paper compares (spec 004 §5), as overrides of a scenario whose
//! consumers run PTP: Sol.1 PTP; Sol.2 OMCC-RF (RFA forwarding, RAAQM consumers); Sol.3 RFA
//! with CHoPCoP (RIC consumers over REM queues of 1000 packets, FISP shaping: CHoPCoP
//! "configured to queue sufficient packets", D326); Sol.4 PAF with RAAQM.

/// One solution.
pub(super) struct Solution {
    /// Its name in the metrics.
    pub(super) name: &'static str,
    /// The consumers' transport.
    transport: &'static str,
    /// The routers' strategy (PTP's tagged Interests do not use it).
    strategy: &'static str,
    /// CHoPCoP's router side: REM queues and FISP.
    chopcop: bool,
}

/// Sol.1 to Sol.4.
pub(super) const SOLUTIONS: [Solution; 4] = [
    Solution {
        name: "PTP",
        transport: "ptp",
        strategy: "best-route",
        chopcop: false,
    },
    Solution {
        name: "OMCC-RF",
        transport: "raaqm",
        strategy: "rfa",
        chopcop: false,
    },
    Solution {
        name: "RFA+CHoPCoP",
        transport: "ric",
        strategy: "rfa",
        chopcop: true,
    },
    Solution {
        name: "PAF+RAAQM",
        transport: "raaqm",
        strategy: "paf",
        chopcop: false,
    },
];

/// CHoPCoP's queues: REM with room to queue what RFA's pending-Interest balance needs.
const CHOPCOP_QUEUE: &str =
    "{ type = \"rem\", size = \"1000pkts\", min_th = \"100pkts\", max_th = \"300pkts\" }";

impl Solution {
    /// The overrides that make a scenario whose consumers are `flows` (ids) and whose links
    /// are `links` (ids) run this solution.
    pub(super) fn overrides(&self, flows: &[&str], links: &[&str]) -> Vec<(String, String)> {
        let mut o: Vec<(String, String)> = flows
            .iter()
            .map(|f| {
                (
                    format!("flows.{f}.transport"),
                    format!("\"{}\"", self.transport),
                )
            })
            .collect();
        o.push(("ndn.strategy".into(), format!("\"{}\"", self.strategy)));
        if self.chopcop {
            o.push(("ndn.fisp".into(), "true".into()));
            o.extend(
                links
                    .iter()
                    .map(|l| (format!("links.{l}.queue"), CHOPCOP_QUEUE.to_string())),
            );
        }
        o
    }
}
