//! `pathpool emu`: emulate a link (rate, delay, random loss, drop-tail queue, per direction)
//! between two interfaces, for kernel traffic on a machine without `tc netem` (docs/emu.md).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pathpool_core::{BufferSize, Dur, QueueSize, Rate};
use pathpool_net::emu::{self, DirectionStats, EmuConfig, EmuError};
use pathpool_net::emulation::LinkEmulation;

use crate::CliError;

/// The queue when none is given: Linux's default transmit queue length (`txqueuelen`), the
/// queue a veth or Ethernet interface has without a qdisc limit (D334).
const DEFAULT_QUEUE: &str = "1000pkts";

/// Options of `pathpool emu`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example, a 20 Mb/s link with 25 ms each way between two veth ends \
                        of a namespace:\n  ip netns exec wire pathpool emu a b --rate 20Mbps \
                        --delay 25ms --queue 50ms\nSenders must have segmentation offload off \
                        (ethtool -K DEV tso off gso off): frames longer than one MTU are \
                        dropped and counted. See docs/emu.md."
)]
pub struct EmuArgs {
    /// The first interface; frames received on it are sent on the second.
    pub a: String,
    /// The second interface; frames received on it are sent on the first.
    pub b: String,
    /// Rate of each direction (e.g. 100Mbps; `inf` for none).
    #[arg(long, default_value = "inf")]
    pub rate: Rate,
    /// One-way propagation delay of each direction (e.g. 20ms).
    #[arg(long, default_value = "0s")]
    pub delay: Dur,
    /// Probability that a frame is lost at random, each direction, independently.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Drop-tail queue of each direction: packets (`100pkts`), bytes (`64KB`) or a time at
    /// the direction's rate (`50ms`).
    #[arg(long, default_value = DEFAULT_QUEUE)]
    pub queue: QueueSize,
    /// The first-to-second direction's own parameters, overriding the ones above, e.g.
    /// `rate=8Mbps,delay=50ms,loss=0.001,queue=100pkts`.
    #[arg(long = "a-to-b", value_name = "KEY=VALUE,...")]
    pub a_to_b: Option<String>,
    /// The second-to-first direction's own parameters (as --a-to-b).
    #[arg(long = "b-to-a", value_name = "KEY=VALUE,...")]
    pub b_to_a: Option<String>,
    /// Seed of the random losses.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop after this long (e.g. 60s); by default run until Ctrl-C or SIGTERM.
    #[arg(long)]
    pub duration: Option<Dur>,
    /// Print each direction's counters this often (e.g. 1s).
    #[arg(long)]
    pub every: Option<Dur>,
    /// Run at normal priority (by default the forwarders ask for a real-time one, so that
    /// they send on time while the traffic's processes keep the CPUs busy).
    #[arg(long)]
    pub no_realtime: bool,
    /// Print the final counters as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

/// One direction's parameters as given: the shared options, then the direction's own.
#[derive(Debug, Clone, Copy)]
struct Given {
    rate: Rate,
    delay: Dur,
    loss: f64,
    queue: QueueSize,
}

const KEYS: [&str; 4] = ["rate", "delay", "loss", "queue"];

fn bad(option: &str, message: String) -> CliError {
    CliError::BadInput(format!("{option}: {message}"))
}

/// Applies `rate=...,delay=...` overrides of `option` to `given`.
fn apply(mut given: Given, option: &str, spec: &str) -> Result<Given, CliError> {
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((key, value)) = item.split_once('=') else {
            return Err(bad(
                option,
                format!("{item:?} is not KEY=VALUE (keys: {})", KEYS.join(", ")),
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        let field = |e: &dyn std::fmt::Display| bad(&format!("{option} {key}"), e.to_string());
        match key {
            "rate" => given.rate = value.parse().map_err(|e| field(&e))?,
            "delay" => given.delay = value.parse().map_err(|e| field(&e))?,
            "queue" => given.queue = value.parse().map_err(|e| field(&e))?,
            "loss" => {
                given.loss = value
                    .parse()
                    .map_err(|_| field(&format!("{value:?} is not a number")))?;
            }
            _ => {
                let meant = pathpool_core::text::closest(key, KEYS)
                    .map_or(String::new(), |m| format!(" (did you mean {m}?)"));
                return Err(bad(
                    option,
                    format!("unknown key {key:?}{meant}; keys are {}", KEYS.join(", ")),
                ));
            }
        }
    }
    Ok(given)
}

fn emulation(given: Given, option: &str) -> Result<LinkEmulation, CliError> {
    let queue = given
        .queue
        .at_rate(given.rate)
        .map_err(|e| bad(&format!("{option} queue"), e))?;
    let (queue_bytes, queue_packets) = match queue {
        BufferSize::Bytes(n) => (n, u64::MAX),
        BufferSize::Packets(n) => (u64::MAX, n),
    };
    let e = LinkEmulation {
        rate: given.rate,
        delay: given.delay,
        loss: given.loss,
        queue_bytes,
        queue_packets,
    };
    e.validate()
        .map_err(|e| bad(&format!("{option} {}", e.field), e.message))?;
    Ok(e)
}

/// The configuration the options describe.
///
/// # Errors
/// A bad value or key, naming the option and key.
pub fn config(a: &EmuArgs) -> Result<EmuConfig, CliError> {
    let shared = Given {
        rate: a.rate,
        delay: a.delay,
        loss: a.loss,
        queue: a.queue,
    };
    let direction = |option: &str, spec: &Option<String>| {
        let given = match spec {
            Some(s) => apply(shared, option, s)?,
            None => shared,
        };
        emulation(given, option)
    };
    let config = EmuConfig {
        a: a.a.clone(),
        b: a.b.clone(),
        a_to_b: direction("--a-to-b", &a.a_to_b)?,
        b_to_a: direction("--b-to-a", &a.b_to_a)?,
        seed: a.seed,
        realtime: !a.no_realtime,
    };
    emu::validate(&config).map_err(|e| CliError::BadInput(e.to_string()))?;
    Ok(config)
}

fn describe(e: &LinkEmulation) -> String {
    let rate = if e.rate.is_infinite() {
        "no rate limit".to_string()
    } else {
        e.rate.to_string()
    };
    let queue = match (e.queue_bytes, e.queue_packets) {
        (u64::MAX, u64::MAX) => "no queue limit".to_string(),
        (u64::MAX, p) => format!("queue {p} pkts"),
        (b, _) => format!("queue {b} B"),
    };
    format!("{rate}, delay {}, loss {}, {queue}", e.delay, e.loss)
}

/// `pathpool emu`.
///
/// # Errors
/// Bad options (exit 2); an interface that cannot be opened or a socket failing (exit 1).
pub fn emu_command(a: &EmuArgs) -> Result<(), CliError> {
    let config = config(a)?;
    let stop = crate::sweep::signal_flag()?;
    if let Some(d) = a.duration {
        let stop = Arc::clone(&stop);
        let d = Duration::from_secs_f64(d.as_secs_f64());
        std::thread::spawn(move || {
            std::thread::sleep(d);
            stop.store(true, Ordering::Relaxed);
        });
    }
    let every = a.every.map(|d| Duration::from_secs_f64(d.as_secs_f64()));
    eprintln!(
        "pathpool emu: {a} -> {b}: {}\npathpool emu: {b} -> {a}: {}\npathpool emu: running{}",
        describe(&config.a_to_b),
        describe(&config.b_to_a),
        a.duration
            .map_or(" until Ctrl-C".to_string(), |d| format!(" for {d}")),
        a = config.a,
        b = config.b,
    );
    let names = [
        format!("{} -> {}", config.a, config.b),
        format!("{} -> {}", config.b, config.a),
    ];
    let inputs = [config.a.clone(), config.b.clone()];
    let started = Instant::now();
    let mut warned = [false; 2];
    let mut last: Option<(Instant, [DirectionStats; 2])> = None;
    let mut told_priority = false;
    let realtime = config.realtime;
    let report = |s: &[DirectionStats; 2]| {
        if realtime && !told_priority && s.iter().any(|d| d.offered > 0 && !d.realtime) {
            told_priority = true;
            eprintln!(
                "note: no real-time priority for the forwarders (it needs root or \
                 CAP_SYS_NICE): frames may leave late while the CPUs are busy (see the \
                 `late` columns)"
            );
        }
        for (i, d) in s.iter().enumerate() {
            if d.oversize > 0 && !warned[i] {
                warned[i] = true;
                eprintln!(
                    "warning: frames longer than one MTU arrived on {}: dropped and counted \
                     as oversize. Turn segmentation offload off where they are sent \
                     (ethtool -K DEV tso off gso off) and GRO off on {} (ethtool -K {} gro \
                     off).",
                    inputs[i], inputs[i], inputs[i]
                );
            }
        }
        if every.is_some() {
            let now = Instant::now();
            if let Some((then, before)) = last {
                let secs = now.duration_since(then).as_secs_f64().max(1e-9);
                for (i, (d, p)) in s.iter().zip(before.iter()).enumerate() {
                    eprintln!(
                        "{:>8.1} s  {}: {:.2} Mb/s, {} lost, {} queue drops, {} in transit",
                        started.elapsed().as_secs_f64(),
                        names[i],
                        (d.delivered_bytes - p.delivered_bytes) as f64 * 8.0 / secs / 1e6,
                        d.lost - p.lost,
                        d.queue_drops - p.queue_drops,
                        d.in_transit
                    );
                }
            }
            last = Some((now, *s));
        }
    };
    let period = every.unwrap_or(Duration::from_secs(3600));
    let stats = emu::run(&config, &stop, period, report).map_err(|e| match e {
        EmuError::BadInput(m) => CliError::BadInput(m),
        EmuError::Io(e) => CliError::Failed(e.to_string()),
    })?;
    let secs = started.elapsed().as_secs_f64();
    if a.json {
        let out = serde_json::json!({
            "seconds": secs,
            "a_to_b": stats[0],
            "b_to_a": stats[1],
        });
        println!("{out}");
    } else {
        print!("{}", table(&names, &stats, secs));
    }
    Ok(())
}

fn table(names: &[String; 2], stats: &[DirectionStats; 2], secs: f64) -> String {
    let mut out = format!(
        "{:<24} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>8} {:>11} {:>11}\n",
        "direction",
        "offered",
        "lost",
        "q.drops",
        "oversize",
        "k.drops",
        "s.errors",
        "delivered",
        "Mb/s",
        "late mean",
        "late max"
    );
    for (name, s) in names.iter().zip(stats) {
        out += &format!(
            "{:<24} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>8.2} {:>8.1} us {:>8.1} us\n",
            name,
            s.offered,
            s.lost,
            s.queue_drops,
            s.oversize,
            s.kernel_drops,
            s.send_errors,
            s.delivered,
            s.delivered_bytes as f64 * 8.0 / secs.max(1e-9) / 1e6,
            s.late_mean_us(),
            s.late_max_ns as f64 / 1e3
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: EmuArgs,
    }

    fn parse(line: &[&str]) -> Result<EmuConfig, String> {
        let mut all = vec!["emu"];
        all.extend_from_slice(line);
        let w = Wrapper::try_parse_from(all).map_err(|e| e.to_string())?;
        config(&w.args).map_err(|e| match e {
            CliError::BadInput(m) | CliError::Failed(m) | CliError::Interrupted(m) => m,
        })
    }

    #[test]
    fn shared_options_then_a_direction_of_its_own() {
        let c = parse(&[
            "x",
            "y",
            "--rate",
            "8Mbps",
            "--delay",
            "50ms",
            "--queue",
            "100ms",
            "--b-to-a",
            "rate=1Mbps, loss=0.01,queue=20pkts",
        ])
        .unwrap();
        assert_eq!(c.a_to_b.rate, Rate::from_mbps(8));
        assert_eq!(c.a_to_b.delay, Dur::from_ms(50));
        // 100 ms at 8 Mb/s.
        assert_eq!(
            (c.a_to_b.queue_bytes, c.a_to_b.queue_packets),
            (100_000, u64::MAX)
        );
        assert_eq!(c.b_to_a.rate, Rate::from_mbps(1));
        assert_eq!(c.b_to_a.delay, Dur::from_ms(50));
        assert_eq!(c.b_to_a.loss, 0.01);
        assert_eq!(
            (c.b_to_a.queue_bytes, c.b_to_a.queue_packets),
            (u64::MAX, 20)
        );
    }

    #[test]
    fn bad_values_name_the_option_and_key() {
        let e = parse(&["x", "y", "--a-to-b", "delya=5ms"]).unwrap_err();
        assert!(
            e.contains("--a-to-b: unknown key \"delya\" (did you mean delay?)"),
            "{e}"
        );
        let e = parse(&["x", "y", "--b-to-a", "loss=2"]).unwrap_err();
        assert!(
            e.starts_with("--b-to-a loss: 2 is not a probability"),
            "{e}"
        );
        let e = parse(&["x", "y", "--a-to-b", "rate=fast"]).unwrap_err();
        assert!(e.starts_with("--a-to-b rate: "), "{e}");
        let e = parse(&["x", "y", "--queue", "50ms"]).unwrap_err();
        assert!(e.contains("queue") && e.contains("finite rate"), "{e}");
        let e = parse(&["x", "x"]).unwrap_err();
        assert!(e.contains("two different interfaces"), "{e}");
        let e = parse(&["x", "y", "--a-to-b", "rate"]).unwrap_err();
        assert!(e.contains("is not KEY=VALUE"), "{e}");
        let e = parse(&["x", "y", "--delay", "5 parsecs"]).unwrap_err();
        assert!(e.contains("--delay"), "{e}");
    }
}
