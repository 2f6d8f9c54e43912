//! `ccfair-emu prepare [--sysctl KEY=VALUE]... [--offloads IFACE=LIST]... [--gro-flush IFACE=NS]...
//! [--rps IFACE=HEXMASK]...`: run
//! inside a namespace (through `ip netns exec`), sets that namespace's sysctls, sets the offloads of the
//! given interfaces, and steers their receive processing to the CPUs of the mask (RPS), then reads
//! everything back and prints it as JSON.
//!
//! `LIST` names the offloads to leave on, comma-separated (`tso`, `gro`; `none` for none), and every other
//! offload ccfair knows (TSO, GSO, GRO, scatter-gather, TX and RX checksum) is turned off:
//! - `tso` is what a host with segmentation offload has: TSO and GSO with what TSO needs, scatter-gather and
//!   TX checksumming (the kernel drops TSO without them, `netdev_fix_features`). The stack then hands the
//!   veth whole bursts with partial checksums, which the emulator segments and completes (`gso.rs`); it is
//!   set on the senders' veth only.
//! - `gro` is receive coalescing: on a veth, asking for GRO before the device comes up also gives it a NAPI
//!   poll loop, in which the GRO engine merges consecutive segments (`veth_open`, `veth_gro_requested`,
//!   `drivers/net/veth.c`); it is set on the receiver's veth only.
//! - `--gro-flush IFACE=NS` is interrupt moderation for that poll loop: `gro_flush_timeout` = NS and
//!   `napi_defer_hard_irqs` = 1 (0 and 0 for NS = 0). After a poll that found packets, the next poll is not
//!   started by the next packet but by a timer NS later (`napi_complete_done`, `net/core/dev.c`), so the
//!   packets that arrived meanwhile reach GRO together and merge, as behind a NIC that raises one interrupt
//!   per NS. Without it, a veth fed one packet at a time polls once per packet and GRO has nothing to merge.
//!
//! With everything off (the default of a run), the emulator sees plain wire-size frames with complete
//! checksums.

use std::collections::{BTreeMap, BTreeSet};

use crate::sys;

/// (name, set command, get command) of every offload ccfair sets, in the order they are turned off (TSO
/// before what it depends on).
const OFFLOADS: [(&str, u32, u32); 6] = [
    ("tso", sys::ETHTOOL_STSO, sys::ETHTOOL_GTSO),
    ("gso", sys::ETHTOOL_SGSO, sys::ETHTOOL_GGSO),
    ("gro", sys::ETHTOOL_SGRO, sys::ETHTOOL_GGRO),
    ("tx-checksum", sys::ETHTOOL_STXCSUM, sys::ETHTOOL_GTXCSUM),
    ("rx-checksum", sys::ETHTOOL_SRXCSUM, sys::ETHTOOL_GRXCSUM),
    ("scatter-gather", sys::ETHTOOL_SSG, sys::ETHTOOL_GSG),
];

/// The offloads a `LIST` of `--offloads` leaves on.
fn wanted(list: &str) -> Result<BTreeSet<&'static str>, String> {
    let mut on = BTreeSet::new();
    for name in list.split(',') {
        match name {
            "none" => {}
            "tso" => on.extend(["tx-checksum", "scatter-gather", "gso", "tso"]),
            "gro" => on.extend(["gro"]),
            other => {
                return Err(format!(
                    "--offloads: unknown offload {other:?} (tso, gro or none)"
                ));
            }
        }
    }
    Ok(on)
}

/// Sets `dev`'s offloads to exactly `on` and reads them back: name to "on" or "off".
fn set_offloads(dev: &str, on: &BTreeSet<&str>) -> Result<BTreeMap<&'static str, &'static str>, String> {
    // Off first, in the table's order, then on in the reverse order: what TSO depends on before TSO.
    for (name, set, _) in OFFLOADS.iter().filter(|(n, ..)| !on.contains(n)) {
        sys::ethtool(dev, *set, 0).map_err(|e| format!("{dev}: turning {name} off: {e}"))?;
    }
    for (name, set, _) in OFFLOADS.iter().rev().filter(|(n, ..)| on.contains(n)) {
        sys::ethtool(dev, *set, 1).map_err(|e| format!("{dev}: turning {name} on: {e}"))?;
    }
    let mut state = BTreeMap::new();
    for (name, _, get) in OFFLOADS {
        let now = sys::ethtool(dev, get, 0).map_err(|e| format!("{dev}: reading {name}: {e}"))? != 0;
        if now != on.contains(name) {
            let want = if on.contains(name) { "on" } else { "off" };
            return Err(format!("{dev}: {name} should be {want} but is not"));
        }
        state.insert(name, if now { "on" } else { "off" });
    }
    Ok(state)
}

fn sysctl_path(key: &str) -> Result<String, String> {
    if key.is_empty() || key.contains("..") || key.contains('/') {
        return Err(format!("bad sysctl name {key:?}"));
    }
    Ok(format!("/proc/sys/{}", key.replace('.', "/")))
}

/// Writes `/sys/class/net/DEV/KEY` and returns what it reads back.
fn write_device_value(dev: &str, key: &str, value: u64) -> Result<u64, String> {
    if dev.contains('/') || dev.contains("..") {
        return Err(format!("bad interface name {dev:?}"));
    }
    let path = format!("/sys/class/net/{dev}/{key}");
    std::fs::write(&path, value.to_string()).map_err(|e| format!("{path}: {e}"))?;
    let back = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let back: u64 = back
        .trim()
        .parse()
        .map_err(|_| format!("{path} reads {back:?}"))?;
    if back != value {
        return Err(format!("{path}: set {value} but reads {back}"));
    }
    Ok(back)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut sysctls = BTreeMap::new();
    let mut offloads = BTreeMap::new();
    let mut rps = BTreeMap::new();
    let mut gro_flush = BTreeMap::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--sysctl" => {
                let (k, v) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--sysctl {value}: expected KEY=VALUE"))?;
                let path = sysctl_path(k)?;
                std::fs::write(&path, v).map_err(|e| format!("sysctl {k}: {e}"))?;
                let back = std::fs::read_to_string(&path).map_err(|e| format!("sysctl {k}: {e}"))?;
                let back = back.split_whitespace().collect::<Vec<_>>().join(" ");
                let want = v.split_whitespace().collect::<Vec<_>>().join(" ");
                if back != want {
                    return Err(format!("sysctl {k}: set {want:?} but reads {back:?}"));
                }
                sysctls.insert(k.to_string(), back);
            }
            "--offloads" => {
                let (dev, list) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--offloads {value}: expected IFACE=LIST"))?;
                offloads.insert(dev.to_string(), set_offloads(dev, &wanted(list)?)?);
            }
            "--gro-flush" => {
                let (dev, ns) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--gro-flush {value}: expected IFACE=NS"))?;
                let ns: u64 = ns
                    .parse()
                    .map_err(|_| format!("--gro-flush {value}: NS must be an integer"))?;
                let defer = u64::from(ns > 0);
                let mut state = BTreeMap::new();
                for (key, v) in [("gro_flush_timeout", ns), ("napi_defer_hard_irqs", defer)] {
                    state.insert(key, write_device_value(dev, key, v)?);
                }
                gro_flush.insert(dev.to_string(), state);
            }
            "--rps" => {
                let (dev, mask) = value
                    .split_once('=')
                    .ok_or_else(|| format!("--rps {value}: expected IFACE=HEXMASK"))?;
                if dev.contains('/') || dev.contains("..") {
                    return Err(format!("bad interface name {dev:?}"));
                }
                let path = format!("/sys/class/net/{dev}/queues/rx-0/rps_cpus");
                std::fs::write(&path, mask).map_err(|e| format!("{path}: {e}"))?;
                rps.insert(dev.to_string(), mask.to_string());
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    println!(
        "{}",
        serde_json::json!({"sysctls": sysctls, "offloads": offloads, "gro_flush": gro_flush, "rps": rps})
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tso_brings_what_it_needs_and_unknown_names_are_refused() {
        let all: BTreeSet<_> = OFFLOADS.iter().map(|(n, ..)| *n).collect();
        let tso = wanted("tso").unwrap();
        assert!(tso.is_subset(&all));
        assert_eq!(
            tso,
            BTreeSet::from(["tso", "gso", "scatter-gather", "tx-checksum"])
        );
        assert_eq!(wanted("gro").unwrap(), BTreeSet::from(["gro"]));
        assert!(wanted("none").unwrap().is_empty());
        assert_eq!(wanted("tso,gro").unwrap().len(), 5);
        assert!(wanted("lro").unwrap_err().contains("unknown offload"));
    }
}
