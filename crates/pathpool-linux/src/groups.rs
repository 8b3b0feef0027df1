//! `pathpool linux groups`: the coupling groups the network tells the host (thesis §9: the
//! SDN controller's or MPLS ingress's path-overlap information).
//!
//! Two kinds of entry, looked up in this order by each subflow on every ACK:
//! - one subflow of one connection (token, subflow id), for a controller that knows each
//!   connection;
//! - an address pair (source, destination): every subflow between them, the way a
//!   path-overlap rule names paths.
//!
//! Without an entry a subflow is in group 0, so all of a connection's subflows are one
//! group: fully friendly, the thesis's default.

use std::net::IpAddr;

use libbpf_rs::{MapCore, MapFlags};
use serde::Serialize;

use crate::loader::pinned_map;
use crate::maps::{addr_key, decode_addr_key, decode_sub_key, sub_key};
use crate::status::connections;
use crate::LinuxError;

/// Which subflows an entry covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Target {
    /// One subflow of one connection.
    Subflow {
        /// The connection's token, as `status` prints it.
        token: u32,
        /// The kernel's subflow id.
        subflow_id: u32,
    },
    /// Every subflow from `source` to `destination`.
    Addresses {
        /// Local address.
        source: IpAddr,
        /// Remote address.
        destination: IpAddr,
    },
}

fn write_error(e: &libbpf_rs::Error) -> LinuxError {
    LinuxError::Failed(format!("cannot write the group map: {e}"))
}

/// Puts `target` in `group`.
///
/// # Errors
/// A subflow entry for a connection or subflow that does not exist, mixed address
/// families, or nothing loaded.
pub fn set(target: &Target, group: u32) -> Result<(), LinuxError> {
    match *target {
        Target::Subflow { token, subflow_id } => {
            let conns = connections()?;
            let Some(conn) = conns.iter().find(|c| c.token == token) else {
                return Err(LinuxError::BadInput(format!(
                    "no connection with token {token:08x} runs pathpool's congestion control \
                     (`pathpool linux status` lists them); an address-pair entry (--from/--to) \
                     covers connections not yet open"
                )));
            };
            if !conn.subflows.iter().any(|f| f.subflow_id == subflow_id) {
                let ids: Vec<String> = conn
                    .subflows
                    .iter()
                    .map(|f| f.subflow_id.to_string())
                    .collect();
                return Err(LinuxError::BadInput(format!(
                    "connection {token:08x} has no subflow {subflow_id}; its subflows are {}",
                    ids.join(", ")
                )));
            }
            pinned_map("pp_groups_sub")?
                .update(
                    &sub_key(token, subflow_id),
                    &group.to_ne_bytes(),
                    MapFlags::ANY,
                )
                .map_err(|e| write_error(&e))
        }
        Target::Addresses {
            source,
            destination,
        } => {
            let key = addr_key(source, destination).map_err(LinuxError::BadInput)?;
            pinned_map("pp_groups_addr")?
                .update(&key, &group.to_ne_bytes(), MapFlags::ANY)
                .map_err(|e| write_error(&e))
        }
    }
}

/// Removes `target`'s entry, or every entry when `None`; returns how many went.
///
/// # Errors
/// An entry that does not exist, or nothing loaded.
pub fn clear(target: Option<&Target>) -> Result<usize, LinuxError> {
    let Some(target) = target else {
        let mut removed = 0;
        for name in ["pp_groups_sub", "pp_groups_addr"] {
            let map = pinned_map(name)?;
            let keys: Vec<Vec<u8>> = map.keys().collect();
            for k in keys {
                if map.delete(&k).is_ok() {
                    removed += 1;
                }
            }
        }
        return Ok(removed);
    };
    let (name, key) = match *target {
        Target::Subflow { token, subflow_id } => {
            ("pp_groups_sub", sub_key(token, subflow_id).to_vec())
        }
        Target::Addresses {
            source,
            destination,
        } => (
            "pp_groups_addr",
            addr_key(source, destination)
                .map_err(LinuxError::BadInput)?
                .to_vec(),
        ),
    };
    pinned_map(name)?.delete(&key).map_err(|_| {
        LinuxError::BadInput(format!(
            "there is no group entry for {}; `pathpool linux groups list` shows them",
            describe(target)
        ))
    })?;
    Ok(1)
}

/// Every entry with its group.
///
/// # Errors
/// Nothing loaded.
pub fn list() -> Result<Vec<(Target, u32)>, LinuxError> {
    let mut out = Vec::new();
    let read = |map: &libbpf_rs::MapHandle, key: &[u8]| -> Option<u32> {
        let v = map.lookup(key, MapFlags::ANY).ok()??;
        Some(u32::from_ne_bytes(v[..4].try_into().ok()?))
    };
    let subs = pinned_map("pp_groups_sub")?;
    for k in subs.keys() {
        let (token, subflow_id) = decode_sub_key(&k);
        if let Some(g) = read(&subs, &k) {
            out.push((Target::Subflow { token, subflow_id }, g));
        }
    }
    let addrs = pinned_map("pp_groups_addr")?;
    for k in addrs.keys() {
        let (source, destination) = decode_addr_key(&k);
        if let Some(g) = read(&addrs, &k) {
            out.push((
                Target::Addresses {
                    source,
                    destination,
                },
                g,
            ));
        }
    }
    Ok(out)
}

/// The entry as the commands print it.
#[must_use]
pub fn describe(t: &Target) -> String {
    match t {
        Target::Subflow { token, subflow_id } => format!("token {token:08x} subflow {subflow_id}"),
        Target::Addresses {
            source,
            destination,
        } => format!("{source} -> {destination}"),
    }
}
