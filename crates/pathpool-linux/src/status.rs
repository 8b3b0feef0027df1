//! `pathpool linux status`: each coupled connection's subflows, read from the pinned map.

use libbpf_rs::{MapCore, MapFlags};
use serde::Serialize;

use crate::loader::pinned_map;
use crate::maps::{decode_connection, Slot, CONN_BYTES};
use crate::LinuxError;

/// One MPTCP connection as its subflows last published it.
#[derive(Clone, Debug, Serialize)]
pub struct Connection {
    /// The connection's local MPTCP token.
    pub token: u32,
    /// Its subflows, in slot order.
    pub subflows: Vec<Slot>,
}

/// Every connection whose subflows run one of pathpool's algorithms, by token.
///
/// # Errors
/// When nothing is loaded or the map cannot be read.
pub fn connections() -> Result<Vec<Connection>, LinuxError> {
    let map = pinned_map("pp_conns")?;
    let mut out = Vec::new();
    for key in map.keys() {
        let token = u32::from_ne_bytes(key[..4].try_into().expect("a u32 key"));
        // A connection can close between listing its key and reading it.
        let Some(value) = map
            .lookup(&key, MapFlags::ANY)
            .map_err(|e| LinuxError::Failed(format!("cannot read pp_conns: {e}")))?
        else {
            continue;
        };
        if value.len() != CONN_BYTES {
            return Err(LinuxError::Failed(format!(
                "pp_conns holds {}-byte values, this pathpool-linux expects {CONN_BYTES}: the \
                 loaded programs come from another build; unload and load again",
                value.len()
            )));
        }
        let subflows = decode_connection(&value);
        if !subflows.is_empty() {
            out.push(Connection { token, subflows });
        }
    }
    out.sort_by_key(|c| c.token);
    Ok(out)
}

/// The table `status` prints.
#[must_use]
pub fn render(conns: &[Connection]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>10}  {:>3}  {:<8}  {:>5}  {:<44}  {:>6}  {:>8}  {:>8}  {:>10}  {:>6}  {:>14}",
        "token",
        "id",
        "algo",
        "group",
        "subflow",
        "cwnd",
        "ssthresh",
        "srtt_ms",
        "acked",
        "losses",
        "coupling"
    );
    for c in conns {
        for f in &c.subflows {
            let path = format!(
                "{}:{} -> {}:{}",
                f.source.0, f.source.1, f.destination.0, f.destination.1
            );
            let ssthresh = if f.ssthresh >= 0x7fff_ffff {
                "inf".to_owned()
            } else {
                f.ssthresh.to_string()
            };
            let mut state = format!("{} {:.4}", f.coupling_name, f.coupling_value);
            if f.flags & crate::maps::SLOT_INACTIVE != 0 {
                state.push_str(" inactive");
            }
            if f.flags & crate::maps::SLOT_SLOW_START != 0 {
                state.push_str(" ss");
            }
            let _ = writeln!(
                s,
                "{:>10}  {:>3}  {:<8}  {:>5}  {:<44}  {:>6}  {:>8}  {:>8.2}  {:>10}  {:>6}  {:>14}",
                format!("{:08x}", c.token),
                f.subflow_id,
                f.algorithm,
                f.group,
                path,
                f.cwnd,
                ssthresh,
                f64::from(f.srtt_us) / 1000.0,
                f.acked,
                f.losses,
                state
            );
        }
    }
    s
}
