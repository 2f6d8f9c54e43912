//! `ccfair-emu prepare [--sysctl KEY=VALUE]... [--offloads-off IFACE]... [--rps IFACE=HEXMASK]...`: run
//! inside a namespace (through `ip netns exec`), sets that namespace's sysctls, turns off TSO, GSO, GRO,
//! scatter-gather and TX/RX checksum offload on the given interfaces, and steers their receive processing to
//! the CPUs of the mask (RPS), then reads everything back and prints it as JSON. Offloads
//! must be off on every veth end: with checksum offload, forwarded frames carry unfinished checksums and
//! handshakes never complete; with TSO/GSO/GRO the emulator would see merged, oversized frames instead of
//! wire-size packets.

use std::collections::BTreeMap;

use crate::sys;

/// (name, set command, get command) of each offload turned off.
const OFFLOADS: [(&str, u32, u32); 6] = [
    ("tso", sys::ETHTOOL_STSO, sys::ETHTOOL_GTSO),
    ("gso", sys::ETHTOOL_SGSO, sys::ETHTOOL_GGSO),
    ("gro", sys::ETHTOOL_SGRO, sys::ETHTOOL_GGRO),
    ("tx-checksum", sys::ETHTOOL_STXCSUM, sys::ETHTOOL_GTXCSUM),
    ("rx-checksum", sys::ETHTOOL_SRXCSUM, sys::ETHTOOL_GRXCSUM),
    ("scatter-gather", sys::ETHTOOL_SSG, sys::ETHTOOL_GSG),
];

fn sysctl_path(key: &str) -> Result<String, String> {
    if key.is_empty() || key.contains("..") || key.contains('/') {
        return Err(format!("bad sysctl name {key:?}"));
    }
    Ok(format!("/proc/sys/{}", key.replace('.', "/")))
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut sysctls = BTreeMap::new();
    let mut offloads = BTreeMap::new();
    let mut rps = BTreeMap::new();
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
            "--offloads-off" => {
                let mut state = BTreeMap::new();
                for (name, set, get) in OFFLOADS {
                    sys::ethtool(value, set, 0).map_err(|e| format!("{value}: turning {name} off: {e}"))?;
                    let now =
                        sys::ethtool(value, get, 0).map_err(|e| format!("{value}: reading {name}: {e}"))?;
                    if now != 0 {
                        return Err(format!("{value}: {name} is still on"));
                    }
                    state.insert(name, "off");
                }
                offloads.insert(value.clone(), state);
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
        serde_json::json!({"sysctls": sysctls, "offloads": offloads, "rps": rps})
    );
    Ok(())
}
