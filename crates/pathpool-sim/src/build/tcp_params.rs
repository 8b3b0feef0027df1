//! TCP parameters: the scenario's `[tcp]` table with an element's overrides, resolved to the
//! configurations of the sender, receiver and congestion controller, and checked.

use pathpool_cc::{CcKind, CcOptions, TcpLpConfig, WindowConfig};
use pathpool_core::{Dur, RttConfig};
use pathpool_proto::tcp::{TcpReceiverConfig, TcpSenderConfig};

use super::{at, child, k, MAX_PACKET_BYTES};
use crate::error::{format_path, PathSeg, SpecError};
use crate::spec::{Scenario, TcpSpec, WindowLimit};

/// The scenario's `[tcp]` with an element's `tcp` table and `cc` shortcut applied.
pub(super) fn element_tcp_spec(
    sc: &Scenario,
    tcp: Option<&TcpSpec>,
    cc: Option<CcKind>,
) -> TcpSpec {
    let mut spec = sc.tcp.merged(tcp.unwrap_or(&TcpSpec::default()));
    if cc.is_some() {
        spec.cc = cc;
    }
    spec
}

/// TCP parameters after merging defaults, the scenario's `[tcp]` and a flow's overrides.
#[derive(Clone, Debug)]
pub(super) struct TcpParams {
    pub(super) cc: CcKind,
    /// `tcp.send_overhead` (zero: off).
    pub(super) send_overhead: Dur,
    pub(super) options: CcOptions,
    pub(super) header: u64,
    pub(super) window: WindowConfig,
    pub(super) sender: TcpSenderConfig,
    pub(super) receiver: TcpReceiverConfig,
}

impl TcpParams {
    /// Payload bytes per byte on the wire of a full segment.
    pub(super) fn payload_fraction(&self) -> f64 {
        self.sender.mss as f64 / (self.sender.mss + self.header) as f64
    }
}

/// `spec` resolved and checked; problems are reported inside the table at `path`.
pub(super) fn resolve_tcp(spec: &TcpSpec, path: &[PathSeg]) -> Result<TcpParams, SpecError> {
    let field = |f: &str| child(path, f);
    let mss = spec.mss.map_or(1460, |b| b.bytes());
    let header = spec.header.map_or(40, |b| b.bytes());
    if mss == 0 {
        return Err(SpecError::at(field("mss"), "must be at least 1B"));
    }
    if mss + header > MAX_PACKET_BYTES {
        return Err(SpecError::at(
            field("mss"),
            "mss + header must be below 1MiB (at most 1048575B)",
        ));
    }
    let defaults = WindowConfig::default();
    let window = WindowConfig {
        initial_window: spec.initial_window.unwrap_or(defaults.initial_window),
        initial_ssthresh: spec.initial_ssthresh.or(defaults.initial_ssthresh),
        abc_limit: spec.abc_limit.unwrap_or(defaults.abc_limit),
        loss_window: defaults.loss_window,
        recovery_exit: spec.recovery_exit.unwrap_or(defaults.recovery_exit),
        ca_increase: spec.ca_increase.unwrap_or(defaults.ca_increase),
        window_unit: spec.window_unit.unwrap_or(defaults.window_unit),
    };
    if window.initial_window == 0 {
        return Err(SpecError::at(
            field("initial_window"),
            "must be at least 1 segment",
        ));
    }
    if window.initial_ssthresh == Some(0) {
        return Err(SpecError::at(
            field("initial_ssthresh"),
            "must be at least 1 segment (leave it out for an infinite threshold)",
        ));
    }
    if window.abc_limit == 0 {
        return Err(SpecError::at(
            field("abc_limit"),
            "must be at least 1 segment",
        ));
    }
    let rtt_defaults = RttConfig::default();
    let rtt = RttConfig {
        initial_rto: spec.initial_rto.unwrap_or(rtt_defaults.initial_rto),
        min_rto: spec.min_rto.unwrap_or(rtt_defaults.min_rto),
        max_rto: spec.max_rto.unwrap_or(rtt_defaults.max_rto),
        granularity: rtt_defaults.granularity,
        backoff_limit: None,
    };
    if rtt.initial_rto == Dur::ZERO {
        return Err(SpecError::at(field("initial_rto"), "must be positive"));
    }
    if rtt.min_rto > rtt.max_rto {
        return Err(SpecError::at(
            field("min_rto"),
            format!(
                "min_rto {} is larger than max_rto {}",
                rtt.min_rto, rtt.max_rto
            ),
        ));
    }
    let dupack_threshold = spec.dupack_threshold.unwrap_or(3);
    if dupack_threshold == 0 {
        return Err(SpecError::at(
            field("dupack_threshold"),
            "must be at least 1",
        ));
    }
    let rwnd_bytes = match spec.rwnd {
        None | Some(WindowLimit::Unlimited) => u64::MAX,
        Some(WindowLimit::Bytes(b)) if b.bytes() < mss => {
            return Err(SpecError::at(
                field("rwnd"),
                "must hold at least one segment (mss)",
            ));
        }
        Some(WindowLimit::Bytes(b)) => b.bytes(),
    };
    let receiver_defaults = TcpReceiverConfig::default();
    let sack = spec.sack.unwrap_or(false);
    let receiver = TcpReceiverConfig {
        delayed_ack: spec.delayed_ack.unwrap_or(receiver_defaults.delayed_ack),
        delack_timeout: spec
            .delack_timeout
            .unwrap_or(receiver_defaults.delack_timeout),
        sack,
    };
    if receiver.delayed_ack && receiver.delack_timeout == Dur::ZERO {
        return Err(SpecError::at(field("delack_timeout"), "must be positive"));
    }
    if spec.nmcc.is_some_and(|n| n.window_floor == 0) {
        return Err(SpecError::at(
            child(&field("nmcc"), "window_floor"),
            "must be at least 1 segment",
        ));
    }
    if spec.hacker.is_some_and(|h| h.divisor == Some(0)) {
        return Err(SpecError::at(
            child(&field("hacker"), "divisor"),
            "must be at least 1 (or left out: the number of subflows)",
        ));
    }
    if spec
        .bilevel_tcp
        .is_some_and(|b| b.child_floor_millisegments == 0)
    {
        return Err(SpecError::at(
            child(&field("bilevel_tcp"), "child_floor_millisegments"),
            "must be at least 1 (a thousandth of a segment): a child window of zero would never grow back",
        ));
    }
    if let Some(lp) = spec.tcp_lp {
        check_tcp_lp(&lp, &field("tcp_lp"))?;
    }
    Ok(TcpParams {
        cc: spec.cc.unwrap_or_default(),
        send_overhead: spec.send_overhead.unwrap_or(Dur::ZERO),
        options: CcOptions {
            nmcc: spec.nmcc.unwrap_or_default(),
            lia: spec.lia.unwrap_or_default(),
            wvegas: spec.wvegas.unwrap_or_default(),
            hacker: spec.hacker.unwrap_or_default(),
            bilevel_tcp: spec.bilevel_tcp.unwrap_or_default(),
            tcp_lp: spec.tcp_lp.unwrap_or_default(),
            multi_priority: spec.multi_priority.unwrap_or_default(),
        },
        header,
        window,
        sender: TcpSenderConfig {
            mss,
            rtt,
            dupack_threshold,
            rwnd_bytes,
            data_bytes: None,
            limited_transmit: spec.limited_transmit.unwrap_or(false),
            partial_ack_timer: spec.partial_ack_timer.unwrap_or_default(),
            flight_estimate: spec.flight_estimate.unwrap_or_default(),
            timer_granularity: spec.timer_granularity.unwrap_or(Dur::ZERO),
            sack,
        },
        receiver,
    })
}

/// A multipath connection of `subflows` whose controller names a base subflow
/// (`multi-priority`, `hacker`) must have that subflow; the error names where the option was
/// set (the element's `tcp` table or the scenario's).
pub(super) fn check_base_subflow(
    params: &TcpParams,
    tcp: Option<&TcpSpec>,
    subflows: usize,
    here: &[PathSeg],
) -> Result<(), SpecError> {
    let (table, base) = match params.cc {
        CcKind::MultiPriority => ("multi_priority", params.options.multi_priority.base),
        CcKind::Hacker => ("hacker", params.options.hacker.base),
        _ => return Ok(()),
    };
    if usize::try_from(base).is_ok_and(|b| b < subflows) {
        return Ok(());
    }
    let own = tcp.is_some_and(|t| match params.cc {
        CcKind::MultiPriority => t.multi_priority.is_some(),
        _ => t.hacker.is_some(),
    });
    let place = if own {
        child(&child(&child(here, "tcp"), table), "base")
    } else {
        at(&[k("tcp"), k(table), k("base")])
    };
    Err(SpecError::at(
        place,
        format!(
            "subflow {base} does not exist: {} has {subflows} subflow(s), numbered from 0",
            format_path(here)
        ),
    ))
}

/// TCP-LP's parameters checked at their fields inside the table at `here` (D245).
fn check_tcp_lp(lp: &TcpLpConfig, here: &[PathSeg]) -> Result<(), SpecError> {
    if !(1..=99).contains(&lp.delta_percent) {
        return Err(SpecError::at(
            child(here, "delta_percent"),
            format!(
                "{} is outside 1..=99: δ must lie strictly between 0 and 1 (the paper's 15 %)",
                lp.delta_percent
            ),
        ));
    }
    if lp.gamma_inverse == 0 {
        return Err(SpecError::at(
            child(here, "gamma_inverse"),
            "must be at least 1 (1/γ; the paper's γ = 1/8 is 8)",
        ));
    }
    if lp.itt_srtts == 0 {
        return Err(SpecError::at(
            child(here, "itt_srtts"),
            "must be at least 1 smoothed RTT (the paper's itt is 3)",
        ));
    }
    Ok(())
}

/// A single-path TCP flow runs NewReno: a multipath controller there (LIA, NMCC, ...) would
/// run with one subflow, where most reduce to Reno, and was most likely meant for a multipath
/// connection. The error names where the controller was set (issue 16: no silent downgrade).
/// `cc_field` and `tcp` are the element's own `cc` and `tcp` table.
pub(super) fn single_path_cc(
    cc_field: Option<CcKind>,
    tcp: Option<&TcpSpec>,
    cc: CcKind,
    here: &[PathSeg],
) -> Result<(), SpecError> {
    if matches!(cc, CcKind::NewReno | CcKind::Cubic | CcKind::TcpLp) {
        return Ok(());
    }
    let (place, whence) = if cc_field.is_some() {
        (child(here, "cc"), "")
    } else if tcp.is_some_and(|t| t.cc.is_some()) {
        (child(&child(here, "tcp"), "cc"), "")
    } else {
        (
            at(&[k("tcp"), k("cc")]),
            " (the scenario's tcp.cc, which every TCP flow inherits: set cc on the \
             multipath flows instead)",
        )
    };
    let remedy = if here.first() == Some(&k("traffic")) {
        "a generator's flows have one path each unless it lists them (paths = [[...], \
         [...]]): list them, or use cc = \"newreno\""
    } else {
        "make it a multipath connection (paths = [[...], [...]], subflows, or \
         tm = { k = 2 }; one subflow is allowed: paths = [[...]]), or use cc = \"newreno\""
    };
    Err(SpecError::at(
        place,
        format!(
            "\"{}\" is a multipath controller, and {} has a single path{whence}; {remedy}",
            cc.name(),
            format_path(here),
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{compile, error, line};
    use super::*;

    fn spec(text: &str) -> TcpSpec {
        toml::from_str(text).expect("a [tcp] table")
    }

    fn resolve(text: &str) -> Result<TcpParams, String> {
        resolve_tcp(&spec(text), &[k("tcp")])
            .map_err(|e| format!("{}: {}", format_path(&e.path), e.message))
    }

    #[test]
    fn defaults_are_newreno_with_1460_byte_segments_and_an_unlimited_window() {
        let p = resolve("").unwrap();
        assert_eq!(p.cc, CcKind::NewReno);
        assert_eq!((p.sender.mss, p.header), (1460, 40));
        assert_eq!(p.sender.rwnd_bytes, u64::MAX);
        assert_eq!(p.sender.dupack_threshold, 3);
        assert_eq!(
            p.window.initial_window,
            WindowConfig::default().initial_window
        );
        assert_eq!(p.send_overhead, Dur::ZERO);
        assert!(!p.receiver.sack && !p.sender.sack);
        let p = resolve("mss = \"1000B\"\nrwnd = \"64KB\"\nsack = true\ncc = \"cubic\"").unwrap();
        assert_eq!((p.sender.mss, p.sender.rwnd_bytes), (1000, 64_000));
        assert!(p.receiver.sack && p.sender.sack);
        assert_eq!(p.cc, CcKind::Cubic);
    }

    #[test]
    fn the_hacker_schemes_options_reach_the_controller() {
        let p = resolve("cc = \"hacker\"\n[hacker]\nbase = 1\ndivisor = 3").unwrap();
        assert_eq!(p.cc, CcKind::Hacker);
        assert_eq!(p.options.hacker.base, 1);
        assert_eq!(p.options.hacker.divisor, Some(3));
        assert_eq!(
            resolve("cc = \"hacker\"").unwrap().options.hacker.divisor,
            None
        );
        let e = resolve("[hacker]\ndivisor = 0").unwrap_err();
        assert!(
            e.starts_with("tcp.hacker.divisor: must be at least 1"),
            "{e}"
        );
    }

    #[test]
    fn bilevel_tcps_options_reach_the_controller() {
        let p = resolve("cc = \"bilevel-tcp\"\n[bilevel_tcp]\nchild_floor_millisegments = 250")
            .unwrap();
        assert_eq!(p.cc, CcKind::BilevelTcp);
        assert_eq!(p.options.bilevel_tcp.child_floor_millisegments, 250);
        let e = resolve("[bilevel_tcp]\nchild_floor_millisegments = 0").unwrap_err();
        assert!(
            e.starts_with("tcp.bilevel_tcp.child_floor_millisegments: must be at least 1"),
            "{e}"
        );
    }

    #[test]
    fn tcp_lp_options_reach_the_controller_and_are_checked_at_their_field() {
        let p =
            resolve("cc = \"tcp-lp\"\n[tcp_lp]\ndelta_percent = 20\nreset_extremes_on_ci = true")
                .unwrap();
        assert_eq!(p.cc, CcKind::TcpLp);
        assert_eq!(p.options.tcp_lp.delta_percent, 20);
        assert!(p.options.tcp_lp.reset_extremes_on_ci);
        assert_eq!(p.options.tcp_lp.itt_srtts, 3, "the paper's default");
        assert!(p.options.tcp_lp.ci_lowers_ssthresh, "D242's default");
        let p = resolve(
            "cc = \"tcp-lp\"\n[tcp_lp]\nci_lowers_ssthresh = false\nitt_rtt = \"latest\"\n\
             forget_largest_owd = true",
        )
        .unwrap();
        assert!(!p.options.tcp_lp.ci_lowers_ssthresh);
        assert_eq!(p.options.tcp_lp.itt_rtt, pathpool_cc::IttRtt::Latest);
        assert!(p.options.tcp_lp.forget_largest_owd);
        assert!(toml::from_str::<TcpSpec>("[tcp_lp]\nitt_rtt = \"min\"").is_err());
        for (text, field) in [
            (
                "tcp_lp = { delta_percent = 0 }",
                "tcp.tcp_lp.delta_percent: 0 is outside 1..=99",
            ),
            (
                "tcp_lp = { delta_percent = 100 }",
                "tcp.tcp_lp.delta_percent: 100 is outside",
            ),
            (
                "tcp_lp = { gamma_inverse = 0 }",
                "tcp.tcp_lp.gamma_inverse: must be at least 1",
            ),
            (
                "tcp_lp = { itt_srtts = 0 }",
                "tcp.tcp_lp.itt_srtts: must be at least 1",
            ),
        ] {
            let e = resolve(text).unwrap_err();
            assert!(e.starts_with(field), "{text}: {e}");
        }
        // TCP-LP runs on a single path too.
        compile(&line(
            "[[flows]]\nfrom = \"a\"\nto = \"b\"\ncc = \"tcp-lp\"",
        ));
    }

    #[test]
    fn impossible_values_are_refused_at_their_field() {
        let cases = [
            ("mss = \"0B\"", "tcp.mss: must be at least 1B"),
            (
                "mss = \"1MiB\"",
                "tcp.mss: mss + header must be below 1MiB (at most 1048575B)",
            ),
            (
                "initial_window = 0",
                "tcp.initial_window: must be at least 1 segment",
            ),
            ("abc_limit = 0", "tcp.abc_limit: must be at least 1 segment"),
            ("initial_rto = \"0s\"", "tcp.initial_rto: must be positive"),
            (
                "min_rto = \"2s\"\nmax_rto = \"1s\"",
                "tcp.min_rto: min_rto 2s is larger than max_rto 1s",
            ),
            (
                "dupack_threshold = 0",
                "tcp.dupack_threshold: must be at least 1",
            ),
            (
                "rwnd = \"1000B\"",
                "tcp.rwnd: must hold at least one segment (mss)",
            ),
            (
                "delayed_ack = true\ndelack_timeout = \"0s\"",
                "tcp.delack_timeout: must be positive",
            ),
            (
                "nmcc = { window_floor = 0 }",
                "tcp.nmcc.window_floor: must be at least 1 segment",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(resolve(text).err().as_deref(), Some(want), "{text}");
        }
        let e = resolve("initial_ssthresh = 0").unwrap_err();
        assert!(
            e.starts_with("tcp.initial_ssthresh: must be at least 1 segment"),
            "{e}"
        );
    }

    #[test]
    fn an_elements_table_and_cc_override_the_scenarios() {
        let sc: Scenario = toml::from_str(&line("[tcp]\nmss = \"1000B\"\ncc = \"cubic\"")).unwrap();
        let over = spec("min_rto = \"1s\"");
        let merged = element_tcp_spec(&sc, Some(&over), Some(CcKind::Lia));
        assert_eq!(merged.cc, Some(CcKind::Lia), "the cc shortcut wins");
        assert_eq!(merged.mss, sc.tcp.mss);
        assert_eq!(merged.min_rto, Some(Dur::from_secs(1)));
        assert_eq!(element_tcp_spec(&sc, None, None), sc.tcp);
    }

    #[test]
    fn a_multipath_controller_on_one_path_names_where_it_was_set() {
        let flow = |extra: &str| line(&format!("[[flows]]\nfrom = \"a\"\nto = \"b\"\n{extra}"));
        let e = error(&flow("cc = \"lia\""));
        assert!(
            e.starts_with("flows[0].cc: \"lia\" is a multipath controller, and flows[0] has a single path; make it a multipath connection"),
            "{e}"
        );
        let e = error(&flow("tcp = { cc = \"nmcc\" }"));
        assert!(
            e.starts_with("flows[0].tcp.cc: \"nmcc\" is a multipath"),
            "{e}"
        );
        let e = error(&flow("").replace(
            "duration = \"10s\"",
            "duration = \"10s\"\n[tcp]\ncc = \"olia\"",
        ));
        assert!(
            e.starts_with("tcp.cc: \"olia\" is a multipath controller, and flows[0] has a single path (the scenario's tcp.cc"),
            "{e}"
        );
        // One subflow is a multipath connection, and single-path Cubic is fine.
        compile(&flow("cc = \"lia\"\npaths = [[\"a\", \"r\", \"b\"]]"));
        compile(&flow("cc = \"cubic\""));
    }
}
