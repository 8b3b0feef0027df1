//! Loading and unloading the programs.
//!
//! `load` opens the object the build compiled, loads the chosen algorithms' programs (the
//! kernel's verifier checks each), pins the shared maps under [`PIN_DIR`] and registers each
//! algorithm through a struct_ops link pinned beside them, so the registration outlives the
//! command. `unload` removes the pins: the kernel unregisters each algorithm at once, and
//! frees its programs when the last socket that ran them is gone. A failed load removes
//! whatever it had pinned, so nothing stays registered.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use libbpf_rs::query::ProgInfoIter;
use libbpf_rs::{MapCore, MapFlags, ObjectBuilder, PrintLevel};
use serde::Serialize;

use crate::LinuxError;

/// Where the maps and the struct_ops links are pinned (a bpffs directory).
pub const PIN_DIR: &str = "/sys/fs/bpf/pathpool";
/// The maps user space reads and writes, pinned under [`PIN_DIR`].
pub const SHARED_MAPS: [&str; 4] = ["pp_conns", "pp_groups_sub", "pp_groups_addr", "pp_config"];

/// The object `build.rs` compiled (empty when clang was missing at build time).
const OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pp_cc.bpf.o"));

const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
/// Makes `load` fail right after registering the algorithm it names (tests only:
/// `tests/netns.rs` checks that a failed load leaves nothing behind).
const FAIL_AFTER: &str = "PATHPOOL_LINUX_FAIL_AFTER";

/// One coupled algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Algorithm {
    /// NMCC (thesis Alg. 2), friendly slow start and the loss-time factor m_t.
    Nmcc,
    /// LIA (RFC 6356).
    Lia,
    /// OLIA (Khalili et al., 2013).
    Olia,
    /// BALIA (Peng et al., 2016).
    Balia,
}

impl Algorithm {
    /// Every algorithm, in the order `load` registers them.
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Nmcc,
        Algorithm::Lia,
        Algorithm::Olia,
        Algorithm::Balia,
    ];

    /// The name the kernel lists and `TCP_CONGESTION` takes (`pp_nmcc`, ...).
    #[must_use]
    pub fn kernel_name(self) -> &'static str {
        match self {
            Algorithm::Nmcc => "pp_nmcc",
            Algorithm::Lia => "pp_lia",
            Algorithm::Olia => "pp_olia",
            Algorithm::Balia => "pp_balia",
        }
    }
}

impl FromStr for Algorithm {
    type Err = LinuxError;

    fn from_str(s: &str) -> Result<Self, LinuxError> {
        let bare = s.strip_prefix("pp_").unwrap_or(s);
        Algorithm::ALL
            .into_iter()
            .find(|a| a.kernel_name()[3..] == *bare)
            .ok_or_else(|| {
                LinuxError::BadInput(format!(
                    "unknown algorithm `{s}`: the programs are nmcc, lia, olia and balia \
                     (or pp_nmcc, pp_lia, pp_olia, pp_balia)"
                ))
            })
    }
}

/// NMCC's named choices (the simulator's `tcp.nmcc`, D331), fixed at `load`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NmccOptions {
    /// Friendly slow start (Alg. 2's shadow window); false: the kernel's slow start.
    pub friendly_slow_start: bool,
    /// The loss-time factor m_t (thesis eq. 4.17); false: halve like TCP (the paper's runs).
    pub loss_time_factor: bool,
    /// Clamp m_t to [1, group size].
    pub clamp_mt: bool,
    /// m = N before RTT samples (the thesis) instead of m² = N (the paper's footnote 6).
    pub initial_m_is_n: bool,
    /// Smallest ssthresh after an m_t cut, segments.
    pub window_floor: u32,
}

impl Default for NmccOptions {
    fn default() -> Self {
        NmccOptions {
            friendly_slow_start: true,
            loss_time_factor: true,
            clamp_mt: true,
            initial_m_is_n: false,
            window_floor: 2,
        }
    }
}

impl NmccOptions {
    /// Parses `KEY=VALUE,...` with the simulator's `tcp.nmcc` names.
    ///
    /// # Errors
    /// An unknown key, a value of the wrong kind, or a choice the programs do not offer.
    pub fn parse(text: &str) -> Result<NmccOptions, LinuxError> {
        let mut o = NmccOptions::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(LinuxError::BadInput(format!(
                    "--nmcc `{item}`: write options as KEY=VALUE, e.g. loss_time_factor=false"
                )));
            };
            let flag = |v: &str| match v {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(LinuxError::BadInput(format!(
                    "--nmcc {key}: `{v}` is not true or false"
                ))),
            };
            match key {
                "friendly_slow_start" => o.friendly_slow_start = flag(value)?,
                "loss_time_factor" => o.loss_time_factor = flag(value)?,
                "clamp_mt" => o.clamp_mt = flag(value)?,
                "initial_m" => {
                    o.initial_m_is_n = match value {
                        "m-squared-is-n" => false,
                        "m-is-n" => true,
                        _ => {
                            return Err(LinuxError::BadInput(format!(
                                "--nmcc initial_m: `{value}` is not m-squared-is-n or m-is-n"
                            )))
                        }
                    }
                }
                "window_floor" => {
                    o.window_floor = value.parse().ok().filter(|&f| f >= 1).ok_or_else(|| {
                        LinuxError::BadInput(format!(
                            "--nmcc window_floor: `{value}` is not a whole number of segments, 1 \
                             or more"
                        ))
                    })?;
                }
                "shadow_update" | "loss_estimator" => {
                    return Err(LinuxError::BadInput(format!(
                        "--nmcc {key}: not available in the kernel programs, which update the \
                         shadow window per ACK and estimate loss rates from inter-loss intervals \
                         (the simulator's defaults)"
                    )))
                }
                _ => {
                    return Err(LinuxError::BadInput(format!(
                        "unknown NMCC option `{key}`: the options are friendly_slow_start, \
                         loss_time_factor, clamp_mt, initial_m and window_floor"
                    )))
                }
            }
        }
        Ok(o)
    }

    /// The `PP_NMCC_*` flags of `bpf/pp_coupled.h`.
    #[must_use]
    pub fn flags(&self) -> u32 {
        u32::from(!self.friendly_slow_start)
            | u32::from(!self.loss_time_factor) << 1
            | u32::from(!self.clamp_mt) << 2
            | u32::from(self.initial_m_is_n) << 3
    }

    /// `struct pp_config`.
    fn encode(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.flags().to_ne_bytes());
        b[4..].copy_from_slice(&self.window_floor.to_ne_bytes());
        b
    }
}

/// What `load` did.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    /// The algorithms registered, each with its programs' verified instruction counts
    /// (`bpf_prog_info.verified_insns`: the instructions the verifier walked).
    pub algorithms: Vec<(Algorithm, BTreeMap<String, u32>)>,
    /// The pin directory.
    pub pin_dir: PathBuf,
    /// NMCC's choices.
    pub nmcc: NmccOptions,
}

/// What `unload` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UnloadReport {
    /// Algorithms whose registration was removed.
    pub unregistered: Vec<String>,
    /// Programs the kernel still held when `unload` stopped waiting: sockets that ran them
    /// and are not yet freed (TIME_WAIT, unread data); they go when those sockets do.
    pub still_held: Vec<String>,
}

/// The checks every command that touches the kernel makes first, each failing with what to
/// do about it.
///
/// # Errors
/// Not root, no BTF, no bpffs, or a build without the programs.
pub fn preflight() -> Result<(), LinuxError> {
    if cfg!(pathpool_linux_no_bpf) || OBJECT.is_empty() {
        return Err(LinuxError::Unsupported(
            "this pathpool-linux was built without its BPF programs (clang was not found at \
             build time); install clang and rebuild it (`make setup` does both)"
                .into(),
        ));
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(LinuxError::Unsupported(
            "loading congestion control into the kernel needs root (CAP_BPF and CAP_NET_ADMIN); \
             run it with sudo"
                .into(),
        ));
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(LinuxError::Unsupported(
            "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): BPF struct_ops \
             congestion control needs CONFIG_DEBUG_INFO_BTF"
                .into(),
        ));
    }
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    if !mounts.lines().any(|l| l.split(' ').nth(2) == Some("bpf")) {
        mount_bpffs()?;
    }
    Ok(())
}

fn mount_bpffs() -> Result<(), LinuxError> {
    let status = std::process::Command::new("mount")
        .args(["-t", "bpf", "bpf", "/sys/fs/bpf"])
        .status()
        .map_err(|e| LinuxError::Unsupported(format!("cannot run mount for bpffs: {e}")))?;
    if !status.success() {
        return Err(LinuxError::Unsupported(
            "no BPF filesystem is mounted and `mount -t bpf bpf /sys/fs/bpf` failed: this \
             kernel may lack CONFIG_BPF_SYSCALL"
                .into(),
        ));
    }
    Ok(())
}

/// libbpf's messages of the current load, for the error when the verifier refuses.
static LIBBPF_LOG: Mutex<String> = Mutex::new(String::new());

fn capture(level: PrintLevel, msg: String) {
    if level != PrintLevel::Debug {
        LIBBPF_LOG
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_str(&msg);
    }
}

fn pin_path(name: &str) -> PathBuf {
    Path::new(PIN_DIR).join(name)
}

fn link_pin(a: Algorithm) -> PathBuf {
    pin_path(&format!("link_{}", a.kernel_name()))
}

/// The algorithms whose links are pinned (what `load` registered and `unload` removes).
#[must_use]
pub fn loaded() -> Vec<Algorithm> {
    Algorithm::ALL
        .into_iter()
        .filter(|a| link_pin(*a).exists())
        .collect()
}

/// Registers `algorithms` (all four when empty) with NMCC's choices `nmcc`.
///
/// # Errors
/// [`preflight`]'s, an algorithm already registered, the verifier refusing a program (with
/// its log), or a registration refused by the kernel. Nothing stays pinned or registered.
pub fn load(algorithms: &[Algorithm], nmcc: NmccOptions) -> Result<LoadReport, LinuxError> {
    preflight()?;
    let chosen: Vec<Algorithm> = if algorithms.is_empty() {
        Algorithm::ALL.to_vec()
    } else {
        let mut a = algorithms.to_vec();
        a.sort();
        a.dedup();
        a
    };
    if Path::new(PIN_DIR).exists() {
        return Err(LinuxError::BadInput(format!(
            "pathpool's programs are already loaded ({PIN_DIR} exists: {}); run `pathpool linux \
             unload` first",
            describe(&loaded())
        )));
    }
    let available = fs::read_to_string(AVAILABLE).unwrap_or_default();
    if let Some(a) = chosen
        .iter()
        .find(|a| available.split_whitespace().any(|n| n == a.kernel_name()))
    {
        return Err(LinuxError::Failed(format!(
            "the kernel already has a congestion control named {} (from a load whose pins were \
             removed by hand?); it must be unregistered before pathpool can register its own",
            a.kernel_name()
        )));
    }
    let result = load_pinned(&chosen, nmcc);
    if result.is_err() {
        remove_pins();
    }
    result
}

fn load_pinned(chosen: &[Algorithm], nmcc: NmccOptions) -> Result<LoadReport, LinuxError> {
    LIBBPF_LOG
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    let previous = libbpf_rs::set_print(Some((PrintLevel::Info, capture)));
    let loaded = open_and_load(chosen);
    libbpf_rs::set_print(previous);
    let mut object = loaded.map_err(|e| {
        let log = LIBBPF_LOG
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        LinuxError::Failed(format!(
            "the kernel refused the programs: {e}\n{}",
            tail(&log, 60)
        ))
    })?;
    fs::create_dir_all(PIN_DIR)
        .map_err(|e| LinuxError::Failed(format!("cannot create {PIN_DIR}: {e}")))?;
    for mut map in object.maps_mut() {
        let name = map.name().to_string_lossy().into_owned();
        if SHARED_MAPS.contains(&name.as_str()) {
            map.pin(pin_path(&name))
                .map_err(|e| LinuxError::Failed(format!("cannot pin map {name}: {e}")))?;
        }
    }
    // The options before any registration, so that no socket runs without them.
    let config = object
        .maps()
        .find(|m| m.name() == "pp_config")
        .ok_or_else(|| LinuxError::Failed("the object has no pp_config".into()))?;
    config
        .update(&0u32.to_ne_bytes(), &nmcc.encode(), MapFlags::ANY)
        .map_err(|e| LinuxError::Failed(format!("cannot write the NMCC options: {e}")))?;
    for a in chosen {
        let mut map = object
            .maps_mut()
            .find(|m| m.name() == a.kernel_name())
            .ok_or_else(|| LinuxError::Failed(format!("the object has no {}", a.kernel_name())))?;
        let mut link = map.attach_struct_ops().map_err(|e| {
            LinuxError::Failed(format!(
                "the kernel refused to register {}: {e}",
                a.kernel_name()
            ))
        })?;
        link.pin(link_pin(*a)).map_err(|e| {
            LinuxError::Failed(format!("cannot pin {}'s link: {e}", a.kernel_name()))
        })?;
        // A failure after pins and registrations exist cannot be provoked from outside (the
        // checks before refuse what would cause one), so the test that nothing stays after a
        // failed load asks for one here.
        if std::env::var_os(FAIL_AFTER).is_some_and(|v| v == a.kernel_name()) {
            return Err(LinuxError::Failed(format!(
                "{FAIL_AFTER}={}: failing as asked, after registering it",
                a.kernel_name()
            )));
        }
    }
    let insns = verified_instructions(chosen);
    Ok(LoadReport {
        algorithms: chosen
            .iter()
            .map(|a| (*a, insns.get(a).cloned().unwrap_or_default()))
            .collect(),
        pin_dir: PathBuf::from(PIN_DIR),
        nmcc,
    })
}

fn open_and_load(chosen: &[Algorithm]) -> libbpf_rs::Result<libbpf_rs::Object> {
    let mut open = ObjectBuilder::default().open_memory(OBJECT)?;
    for mut map in open.maps_mut() {
        let name = map.name().to_string_lossy().into_owned();
        if let Some(a) = Algorithm::ALL.iter().find(|a| a.kernel_name() == name) {
            map.set_autocreate(chosen.contains(a))?;
        }
    }
    for mut prog in open.progs_mut() {
        let name = prog.name().to_string_lossy().into_owned();
        let keep = chosen
            .iter()
            .any(|a| name.starts_with(&format!("{}_", a.kernel_name())));
        prog.set_autoload(keep);
    }
    open.load()
}

/// Per algorithm, its programs' verified instruction counts, read back from the kernel (the
/// newest program of each name: an earlier load's may linger).
fn verified_instructions(chosen: &[Algorithm]) -> BTreeMap<Algorithm, BTreeMap<String, u32>> {
    let mut out: BTreeMap<Algorithm, BTreeMap<String, (u32, u32)>> = BTreeMap::new();
    for info in ProgInfoIter::default() {
        let name = info.name.to_string_lossy().into_owned();
        for a in chosen {
            if name.starts_with(&format!("{}_", a.kernel_name())) {
                let e = out
                    .entry(*a)
                    .or_default()
                    .entry(name.clone())
                    .or_insert((0, 0));
                if info.id > e.0 {
                    *e = (info.id, info.verified_insns);
                }
            }
        }
    }
    out.into_iter()
        .map(|(a, m)| (a, m.into_iter().map(|(n, (_, i))| (n, i)).collect()))
        .collect()
}

fn tail(log: &str, lines: usize) -> String {
    let all: Vec<&str> = log.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn describe(a: &[Algorithm]) -> String {
    if a.is_empty() {
        "no algorithm registered".into()
    } else {
        a.iter()
            .map(|a| a.kernel_name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Removes every pin, links first (which unregisters the algorithms), then the maps.
fn remove_pins() -> Vec<String> {
    let mut unregistered = Vec::new();
    for a in Algorithm::ALL {
        if fs::remove_file(link_pin(a)).is_ok() {
            unregistered.push(a.kernel_name().to_owned());
        }
    }
    for m in SHARED_MAPS {
        let _ = fs::remove_file(pin_path(m));
    }
    let _ = fs::remove_dir(PIN_DIR);
    unregistered
}

/// Unregisters every algorithm `load` registered and waits up to `wait` for the kernel to
/// free their programs.
///
/// # Errors
/// Not root, or pins that cannot be removed.
pub fn unload(wait: Duration) -> Result<UnloadReport, LinuxError> {
    if !nix::unistd::geteuid().is_root() {
        return Err(LinuxError::Unsupported(
            "unloading congestion control needs root; run it with sudo".into(),
        ));
    }
    let unregistered = remove_pins();
    if Path::new(PIN_DIR).exists() {
        return Err(LinuxError::Failed(format!(
            "{PIN_DIR} could not be removed: it holds files pathpool did not create"
        )));
    }
    let deadline = Instant::now() + wait;
    loop {
        let held = held_programs();
        if held.is_empty() || Instant::now() >= deadline {
            return Ok(UnloadReport {
                unregistered,
                still_held: held,
            });
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// pathpool's programs the kernel still holds.
#[must_use]
pub fn held_programs() -> Vec<String> {
    ProgInfoIter::default()
        .map(|i| i.name.to_string_lossy().into_owned())
        .filter(|n| {
            Algorithm::ALL
                .iter()
                .any(|a| n.starts_with(&format!("{}_", a.kernel_name())))
        })
        .collect()
}

/// Opens a pinned shared map.
///
/// # Errors
/// When nothing is loaded.
pub fn pinned_map(name: &str) -> Result<libbpf_rs::MapHandle, LinuxError> {
    let path = pin_path(name);
    libbpf_rs::MapHandle::from_pinned_path(&path).map_err(|e| {
        if path.exists() {
            LinuxError::Failed(format!("cannot open {}: {e}", path.display()))
        } else {
            LinuxError::BadInput(format!(
                "pathpool's programs are not loaded ({} is missing); run `pathpool linux load`",
                path.display()
            ))
        }
    })
}
