//! `pathpool-linux`: what `pathpool linux` runs (docs/linux.md).

use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use pathpool_linux::bed::SharedLink;
use pathpool_linux::groups::{self, Target};
use pathpool_linux::{
    bench, e8, emu_bench, loader, share, status, transfer, Algorithm, LinuxError,
};

/// Coupled congestion control (NMCC, LIA, OLIA, BALIA) for Linux's own MPTCP.
#[derive(Parser, Debug)]
#[command(name = "pathpool linux", bin_name = "pathpool linux", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load the programs and register pp_nmcc, pp_lia, pp_olia, pp_balia (root).
    Load {
        /// Only these algorithms (comma-separated: nmcc, lia, olia, balia); default all.
        #[arg(long, value_delimiter = ',')]
        algorithms: Vec<String>,
        /// NMCC's named choices, as the simulator's tcp.nmcc: friendly_slow_start,
        /// loss_time_factor, clamp_mt (true/false), initial_m (m-squared-is-n/m-is-n),
        /// window_floor (segments); e.g. loss_time_factor=false.
        #[arg(long, default_value = "")]
        nmcc: String,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Unregister them and wait for the kernel to free the programs (root).
    Unload {
        /// Seconds to wait for sockets that ran the programs to let go of them.
        #[arg(long, default_value_t = 5.0)]
        wait: f64,
    },
    /// Each coupled connection: subflows, windows, RTTs and the coupling (alpha, epsilon, m).
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The coupling groups: the network's path-overlap information.
    Groups {
        #[command(subcommand)]
        command: GroupsCommand,
    },
    /// Send bulk data for a while over MPTCP (or TCP) with a chosen congestion control.
    Send {
        /// Where to (address:port).
        #[arg(long)]
        to: SocketAddr,
        /// How long, seconds.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
        /// The congestion control (`pp_lia`, `cubic`, ...; `default`: the namespace's
        /// net.ipv4.tcp_congestion_control).
        #[arg(long, default_value = "pp_nmcc")]
        cc: String,
        /// Plain TCP instead of MPTCP.
        #[arg(long)]
        tcp: bool,
    },
    /// CPU time per GB of a two-subflow MPTCP transfer over veth, per algorithm (root).
    Bench {
        /// The algorithms to compare (each loaded or built into the kernel).
        #[arg(long, value_delimiter = ',', default_value = "pp_nmcc,reno")]
        cc: Vec<String>,
        /// Seconds per transfer.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
    },
    /// Issue 23's acceptance 2: one two-subflow MPTCP connection beside one TCP Reno flow on
    /// one shared `tbf` bottleneck, per algorithm; prints the connection's share (root;
    /// docs/linux.md). Both subflows are in group 0 unless `groups set` says otherwise.
    Share {
        /// The multipath algorithms (each loaded or built into the kernel; `reno` is
        /// uncoupled kernel MPTCP).
        #[arg(long, value_delimiter = ',', default_value = "pp_nmcc,pp_lia,reno")]
        cc: Vec<String>,
        /// Seconds per run.
        #[arg(long, default_value_t = 60.0)]
        seconds: f64,
        /// Runs per algorithm, the algorithms alternating.
        #[arg(long, default_value_t = 1)]
        runs: usize,
        /// The bottleneck's rate, Mb/s.
        #[arg(long, default_value_t = 50.0)]
        rate_mbps: f64,
        /// Its drop-tail queue, KiB (1024 bytes, as tc counts them).
        #[arg(long, default_value_t = 100)]
        queue_kib: u32,
        /// The server acknowledges every segment at once (its route carries `quickack 1`),
        /// removing the kernel MPTCP receiver's delayed-ACK effect (D347).
        #[arg(long)]
        server_quickack: bool,
        /// One JSON object per run on standard output instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// How faithful and fast `pathpool emu` is: ping round trips at several delays, and TCP
    /// at 100 Mb/s through the emulator next to `tbf` alone (root; docs/emu.md).
    BenchEmu {
        /// Seconds of each transfer.
        #[arg(long, default_value_t = 10.0)]
        seconds: f64,
    },
    /// Internal: one run of the thesis's experiment E8 in fresh namespaces, for `pathpool
    /// reproduce convergence-linux`; prints the bytes per second as JSON.
    #[command(hide = true)]
    E8 {
        /// The run, as JSON (`pathpool_linux::e8::E8Config`).
        #[arg(long)]
        config: String,
        /// Keeps the namespaces of concurrent runs apart.
        #[arg(long, default_value = "e8")]
        tag: String,
        /// Print each second's shares on standard error.
        #[arg(long)]
        progress: bool,
    },
    /// Receive and count: one JSON line per connection as it ends.
    Sink {
        /// Address and port to listen on.
        #[arg(long)]
        listen: SocketAddr,
        /// How many connections to take before exiting.
        #[arg(long, default_value_t = 1)]
        connections: usize,
        /// A plain TCP listener instead of MPTCP (an MPTCP one also takes TCP).
        #[arg(long)]
        tcp: bool,
    },
}

#[derive(Subcommand, Debug)]
enum GroupsCommand {
    /// Put one subflow (--token, --subflow) or an address pair (--from, --to) in a group.
    Set {
        #[command(flatten)]
        target: TargetArgs,
        /// The group (subflows without an entry are in group 0).
        #[arg(long)]
        group: u32,
    },
    /// Remove one entry, or every entry with --all.
    Clear {
        #[command(flatten)]
        target: TargetArgs,
        /// Remove every entry.
        #[arg(long, conflicts_with_all = ["token", "subflow", "from", "to"])]
        all: bool,
    },
    /// List the entries.
    List,
}

#[derive(Args, Debug)]
struct TargetArgs {
    /// A connection's token, in hex as `status` prints it.
    #[arg(long, value_parser = parse_token, requires = "subflow", conflicts_with_all = ["from", "to"])]
    token: Option<u32>,
    /// The subflow id within the connection.
    #[arg(long, requires = "token")]
    subflow: Option<u32>,
    /// Local address of an address-pair entry.
    #[arg(long, requires = "to")]
    from: Option<IpAddr>,
    /// Remote address of an address-pair entry.
    #[arg(long, requires = "from")]
    to: Option<IpAddr>,
}

fn parse_token(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| {
        format!("`{s}` is not a token: tokens are 32-bit hex numbers, as `status` prints them")
    })
}

impl TargetArgs {
    fn target(&self) -> Option<Target> {
        match (self.token, self.subflow, self.from, self.to) {
            (Some(token), Some(subflow_id), _, _) => Some(Target::Subflow { token, subflow_id }),
            (_, _, Some(source), Some(destination)) => Some(Target::Addresses {
                source,
                destination,
            }),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pathpool linux: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn json<T: serde::Serialize>(v: &T) -> Result<(), LinuxError> {
    let s = serde_json::to_string_pretty(v).map_err(|e| LinuxError::Failed(e.to_string()))?;
    transfer::print_line(&s)
}

fn run(command: Command) -> Result<(), LinuxError> {
    match command {
        Command::Load {
            algorithms,
            nmcc,
            json: as_json,
        } => {
            let chosen = algorithms
                .iter()
                .map(|a| a.parse::<Algorithm>())
                .collect::<Result<Vec<_>, _>>()?;
            let options = loader::NmccOptions::parse(&nmcc)?;
            let report = loader::load(&chosen, options)?;
            if as_json {
                return json(&report);
            }
            for (a, progs) in &report.algorithms {
                let total: u32 = progs.values().sum();
                println!(
                    "registered {} ({total} instructions verified)",
                    a.kernel_name()
                );
                for (name, insns) in progs {
                    println!("  {name:<16} {insns:>6}");
                }
            }
            let o = report.nmcc;
            println!(
                "NMCC: friendly_slow_start={} loss_time_factor={} clamp_mt={} initial_m={} \
                 window_floor={}",
                o.friendly_slow_start,
                o.loss_time_factor,
                o.clamp_mt,
                if o.initial_m_is_n {
                    "m-is-n"
                } else {
                    "m-squared-is-n"
                },
                o.window_floor
            );
            println!(
                "pinned under {}; select one per socket with TCP_CONGESTION",
                report.pin_dir.display()
            );
            Ok(())
        }
        Command::Unload { wait } => {
            if !(wait.is_finite() && wait >= 0.0) {
                return Err(LinuxError::BadInput(format!(
                    "--wait {wait}: give a number of seconds, 0 or more"
                )));
            }
            let report = loader::unload(Duration::from_secs_f64(wait))?;
            if report.unregistered.is_empty() {
                println!("nothing was registered");
            } else {
                println!("unregistered {}", report.unregistered.join(", "));
            }
            if !report.still_held.is_empty() {
                println!(
                    "the kernel still holds {} program(s) for sockets that ran them ({}); they \
                     are freed when those sockets close",
                    report.still_held.len(),
                    report.still_held.join(", ")
                );
            }
            Ok(())
        }
        Command::Status { json: as_json } => {
            let conns = status::connections()?;
            if as_json {
                return json(&conns);
            }
            if conns.is_empty() {
                println!(
                    "loaded ({}); no MPTCP connection uses them now",
                    loader::loaded()
                        .iter()
                        .map(|a| a.kernel_name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            } else {
                print!("{}", status::render(&conns));
            }
            Ok(())
        }
        Command::Send {
            to,
            seconds,
            cc,
            tcp,
        } => {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(LinuxError::BadInput(format!(
                    "--seconds {seconds}: give a positive number of seconds"
                )));
            }
            let t = transfer::send(to, Duration::from_secs_f64(seconds), !tcp, &cc)?;
            json(&t)
        }
        Command::Bench { cc, seconds } => {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(LinuxError::BadInput(format!(
                    "--seconds {seconds}: give a positive number of seconds"
                )));
            }
            let me = std::env::current_exe()
                .map_err(|e| LinuxError::Failed(format!("cannot find this program: {e}")))?;
            let lines = bench::bench(&me.to_string_lossy(), &cc, seconds)?;
            for l in &lines {
                println!(
                    "{:<10} 2 MPTCP subflows over veth: {:>6.2} Gb/s, {:>6.3} CPU-s per GB",
                    l.cc, l.gbps, l.cpu_s_per_gb
                );
            }
            Ok(())
        }
        Command::Share {
            cc,
            seconds,
            runs,
            rate_mbps,
            queue_kib,
            server_quickack,
            json: as_json,
        } => {
            let link = SharedLink {
                rate_mbps,
                queue_kib,
                server_quickack,
            };
            let me = std::env::current_exe()
                .map_err(|e| LinuxError::Failed(format!("cannot find this program: {e}")))?;
            if !as_json {
                println!(
                    "one 2-subflow MPTCP connection and one TCP Reno flow, {rate_mbps} Mb/s \
                     bottleneck, {queue_kib} KiB queue, {seconds} s per run, server {}",
                    if server_quickack {
                        "acknowledging every segment (quickack)"
                    } else {
                        "with delayed ACKs"
                    }
                );
                println!(
                    "{:<10} {:>4} {:>7} {:>11} {:>9} {:>7} {:>10}",
                    "cc", "run", "share", "MPTCP Mb/s", "TCP Mb/s", "steal", "stall"
                );
            }
            let all = share::share(&me.to_string_lossy(), &cc, &link, (seconds, runs), |r| {
                let line = if as_json {
                    serde_json::to_string(r).map_err(|e| LinuxError::Failed(e.to_string()))?
                } else {
                    let stalls = r.stalls();
                    let mut line = format!(
                        "{:<10} {:>4} {:>7.3} {:>11.2} {:>9.2} {:>6.1}% {:>8.1} s",
                        r.cc,
                        r.run,
                        r.share,
                        r.mptcp_mbps,
                        r.tcp_mbps,
                        r.steal_percent,
                        r.mptcp_stall_s.max(r.tcp_stall_s)
                    );
                    if !stalls.is_empty() {
                        line.push_str(&format!(
                            "\n  warning: {}; this share measures the kernel's stall, not the \
                             algorithm",
                            stalls.join(", ")
                        ));
                    }
                    line
                };
                transfer::print_line(&line)
            })?;
            if !as_json && runs > 1 {
                for s in share::summary(&all) {
                    let stalled = match s.stalled_runs {
                        0 => String::new(),
                        k => format!(", {k} stalled"),
                    };
                    println!(
                        "{:<10} mean share {:.3} (sd {:.3}, {} runs{stalled})",
                        s.cc, s.mean_share, s.sd_share, s.runs
                    );
                }
            }
            Ok(())
        }
        Command::BenchEmu { seconds } => {
            if !(seconds.is_finite() && seconds > 0.0) {
                return Err(LinuxError::BadInput(format!(
                    "--seconds {seconds}: give a positive number of seconds"
                )));
            }
            let me = std::env::current_exe()
                .map_err(|e| LinuxError::Failed(format!("cannot find this program: {e}")))?;
            println!("ping through pathpool emu (50 pings, 50 ms apart, idle link):");
            println!(
                "{:>16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                "one-way delay", "expected", "min", "avg", "max", "mdev", "answered"
            );
            for l in emu_bench::delays(&[1, 10, 50, 100])? {
                println!(
                    "{:>13.0} ms {:>6.1} ms {:>6.3} ms {:>6.3} ms {:>6.3} ms {:>6.3} ms {:>9}",
                    l.delay_ms,
                    2.0 * l.delay_ms,
                    l.min_ms,
                    l.avg_ms,
                    l.max_ms,
                    l.mdev_ms,
                    l.received
                );
            }
            println!("\nTCP (CUBIC), {seconds} s, left to right:");
            println!(
                "{:<32} {:>8} {:>11} {:>11} {:>9} {:>9} {:>12}",
                "link", "Mb/s", "late mean", "late max", "late>1ms", "q.drops", "emu CPU/s"
            );
            for l in emu_bench::transfers(&me.to_string_lossy(), seconds)? {
                println!(
                    "{:<32} {:>8.2} {:>8.1} us {:>8.1} us {:>9} {:>9} {:>11.1}%",
                    l.setup,
                    l.mbps,
                    l.data.late_mean_us(),
                    l.data.late_max_ns as f64 / 1e3,
                    l.data.late_over_1ms,
                    l.data.queue_drops,
                    100.0 * l.emu_cpu_per_s
                );
            }
            Ok(())
        }
        Command::E8 {
            config,
            tag,
            progress,
        } => {
            let config: e8::E8Config = serde_json::from_str(&config)
                .map_err(|e| LinuxError::BadInput(format!("--config: {e}")))?;
            let me = std::env::current_exe()
                .map_err(|e| LinuxError::Failed(format!("cannot find this program: {e}")))?;
            // Ctrl-C or SIGTERM ends the run cleanly: without the handler the process would
            // die with its seven namespaces still there.
            let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                signal_hook::flag::register(signal, std::sync::Arc::clone(&interrupt))
                    .map_err(|e| LinuxError::Failed(format!("cannot handle signals: {e}")))?;
            }
            let run = e8::run(
                &me.to_string_lossy(),
                &config,
                (&tag, &interrupt),
                |k, mp, sp| {
                    if progress {
                        let all = (mp + sp).max(1) as f64;
                        eprintln!(
                            "{k:>5} s  mp {:>6.2} Mb/s  sp {:>6.2} Mb/s  share {:>5.1}%",
                            mp as f64 * 8e-6,
                            sp as f64 * 8e-6,
                            100.0 * mp as f64 / all
                        );
                    }
                },
            )?;
            json(&run)
        }
        Command::Sink {
            listen,
            connections,
            tcp,
        } => transfer::sink(listen, connections, !tcp).map(|_| ()),
        Command::Groups { command } => match command {
            GroupsCommand::Set { target, group } => {
                let t = target.target().ok_or_else(|| {
                    LinuxError::BadInput(
                        "say which subflows: --token T --subflow S, or --from ADDR --to ADDR"
                            .into(),
                    )
                })?;
                groups::set(&t, group)?;
                println!("{} -> group {group}", groups::describe(&t));
                Ok(())
            }
            GroupsCommand::Clear { target, all } => {
                let t = target.target();
                if t.is_none() && !all {
                    return Err(LinuxError::BadInput(
                        "say which entry: --token T --subflow S, --from ADDR --to ADDR, or --all"
                            .into(),
                    ));
                }
                let n = groups::clear(t.as_ref())?;
                println!("removed {n} entr{}", if n == 1 { "y" } else { "ies" });
                Ok(())
            }
            GroupsCommand::List => {
                for (t, g) in groups::list()? {
                    println!("{:<48} group {g}", groups::describe(&t));
                }
                Ok(())
            }
        },
    }
}
