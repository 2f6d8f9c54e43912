//! The kernel backend's rules: the same document as the simulator's, resolved for real Linux TCP senders
//! through ccfair's userspace bottleneck (`ccfair-emu`).
//!
//! - `flows[].cc` names a congestion control of the running kernel (the host's
//!   `tcp_available_congestion_control`, read by the front end and given here as [`KernelHost`]; nothing is
//!   loaded). An algorithm the simulator models keeps its plain name (`cubic`; an alias such as `newreno`
//!   maps to the module it models); one it does not model is written `kernel:NAME` (`kernel:vegas`), so a
//!   scenario says in its text that it runs on the kernel only: the simulator refuses such a name, a plain
//!   unknown name is refused here with the spelling to use, and `kernel:` before a name the simulator
//!   models is refused too (one experiment, one name).
//! - `flows[].profile` is laid under the group's keys as on the simulator ([`crate::profile`]): the senders
//!   apply its `cc` (the module, `TCP_CONGESTION`), `initial_window` (the sender route's `initcwnd`; the
//!   receiver route's `initrwnd` is the largest initial window, so the first flight is not cut by the
//!   receiver's first window) and `pacing` (TCP's internal pacing, `SO_MAX_PACING_RATE`; BBR asks for it
//!   itself). A profile whose module this kernel lacks is refused, naming the profile.
//! - `flows[].cc_params` must be empty: a kernel algorithm's parameters are host-wide module parameters,
//!   not per-socket settings, and ccfair changes nothing host-wide.
//! - `flows[].delay` (kernel backend only) places the base RTT: `"split"` (the default, as the simulator:
//!   half on the data direction after the bottleneck, half on the ACK direction), `"data"` (all of it after
//!   the bottleneck) or `"ack"` (all of it on the ACK path).
//! - `flows[].ecn` is `off` or `classic` (RFC 3168 through a per-group route feature); `l4s` is refused.
//! - At most [`MAX_KERNEL_FLOWS`] flows and [`MAX_KERNEL_GROUPS`] groups (ports and addresses).
//! - `[host]` and `[flows.host]`: the kernel's hosts are this machine's, so it honours what it can set on
//!   them, [`HONOURED_HOST_KEYS`]: `preset`, `start_jitter` (the flows' starts are drawn as the simulator
//!   draws them), `tso` (segmentation offload on the senders' veth), `gro` and `gro_flush` (receive
//!   coalescing and its interrupt moderation on the receiver's veth), and the receive buffer (`rmem`,
//!   `rcv_autotune` as the receiver namespace's `tcp_rmem` and `tcp_moderate_rcvbuf`). A kernel always has a
//!   receive window, so `rcv_window = false` (and the ideal preset) cannot switch it off: the receivers get
//!   the largest buffer the run could use instead. Every group's flows share one sender and one receiver
//!   veth (and namespace), so these must come out the same for every group. Any other written key would set
//!   this machine's timers, noise, NIC rate or kernel build, which the backend cannot do: it is refused,
//!   naming the field. A preset's own values for them are this machine's real ones instead. The default
//!   preset, `kernel-lab`, is the kernel backend's own hosts as the validation grid measured them, so here it
//!   is this machine as it comes: its values set nothing (veth offloads off, the receivers' largest buffer,
//!   no start jitter or spacing beyond the sender's own), and only the keys a table writes apply, laid over
//!   the ideal preset's values ([`machine_as_it_comes`]); the spec keeps the preset's name.
//!
//! Everything else is the simulator's resolution with a stand-in algorithm ([`STAND_IN_CC`]): the spec the
//! kernel backend runs is that spec with each group's kernel module (`cc = {"name": MODULE}`) and `delay`,
//! and the hosts' `offloads` and `receive_buffer`; the stand-in spec itself gives the run's estimate and the
//! flows' starts and sizes.

use ccfair_core::FieldError;
use serde::{Deserialize, Serialize};

use crate::host::{DEFAULT_PRESET, HostInput, HostPreset, preset_name};
use crate::spec::{Algorithm, KERNEL_CC_PREFIX, ScenarioInput, ScenarioSpec, UncheckedSpec};
use crate::units::format_duration_ns;
use crate::value::py_str_repr;

use FieldError as E;

/// The default placement of the base RTT.
pub const SPLIT: &str = "split";
/// Where a group's base RTT may sit.
pub const DELAY_PLACEMENTS: [&str; 3] = ["split", "data", "ack"];
pub const MAX_KERNEL_FLOWS: u64 = 1000;
pub const MAX_KERNEL_GROUPS: usize = 250;
/// Linux's `TCP_CA_NAME_MAX` is 16 bytes with the terminating NUL.
pub const KERNEL_MODULE_NAME_MAX: usize = 15;
/// The simulator algorithm that stands in while the rest of the scenario is resolved.
pub const STAND_IN_CC: &str = "reno";
/// The host keys the kernel backend sets on its real hosts.
pub const HONOURED_HOST_KEYS: [&str; 8] = [
    "preset",
    "start_jitter",
    "tso",
    "gro",
    "gro_flush",
    "rcv_window",
    "rcv_autotune",
    "rmem",
];
/// Where the host's congestion controls are listed (named in messages).
pub const AVAILABLE_CC_FILE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// What the kernel backend needs to know of the machine it runs on, read by the front end.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelHost {
    /// The congestion controls this kernel offers.
    pub available_ccs: Vec<String>,
}

/// The senders' veth offloads (one sender and one receiver veth for every group).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Offloads {
    pub tso: bool,
    pub gro: bool,
    pub gro_flush_ns: u64,
}

/// The receivers' buffer sysctls, for hosts that model a receive window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiveBuffer {
    pub rcv_window: bool,
    pub rcv_autotune: bool,
    pub rmem_bytes: [u32; 3],
}

/// A congestion control of the running kernel, by its module name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelModule {
    pub name: String,
}

impl Algorithm for KernelModule {
    /// A module's parameters are the host's, not the scenario's: nothing to check.
    fn check(&self) -> Result<(), FieldError> {
        Ok(())
    }
    /// The kernel decides what the module asks of its stack.
    fn flags(&self) -> ccfair_cc::CcFlags {
        ccfair_cc::CcFlags::default()
    }
}

/// The spec the kernel backend runs.
pub type KernelSpec = ScenarioSpec<KernelModule>;

/// A scenario resolved for the kernel backend: the stand-in's spec (estimate, flow plans) and the spec the
/// backend runs (see the module docs).
pub struct KernelResolution {
    pub stand_in: ScenarioSpec,
    pub spec: KernelSpec,
}

fn aliases() -> Vec<(&'static str, &'static str)> {
    ccfair_cc::algorithms()
        .iter()
        .flat_map(|a| std::iter::once((a.name, a.name)).chain(a.aliases.iter().map(move |&x| (x, a.name))))
        .collect()
}

/// The kernel module for `name` (see the module docs); the error names `field`.
pub fn kernel_cc_name(name: &str, field: &str, available: &[String]) -> Result<String, FieldError> {
    let listed = if available.is_empty() {
        format!("none (cannot read {AVAILABLE_CC_FILE})")
    } else {
        available.join(" ")
    };
    let offered = |m: &str| available.iter().any(|a| a == m);
    let aliases = aliases();
    let modelled = |m: &str| aliases.iter().find(|(a, _)| *a == m).map(|&(_, c)| c);
    if let Some(module) = name.strip_prefix(KERNEL_CC_PREFIX) {
        let valid = (1..=KERNEL_MODULE_NAME_MAX).contains(&module.len())
            && module
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return E::err(
                field,
                format!(
                    "{}: after {} comes a kernel module's name (letters, digits, '_' or '-', at most \
                     {KERNEL_MODULE_NAME_MAX} characters, as in {AVAILABLE_CC_FILE})",
                    py_str_repr(name),
                    py_str_repr(KERNEL_CC_PREFIX)
                ),
            );
        }
        if let Some(canonical) = modelled(module) {
            return E::err(
                field,
                format!(
                    "the simulator models {m}: write cc = {m} (the kernel backend runs the kernel's {c} under \
                     that name); {p} is for algorithms it does not model",
                    m = py_str_repr(module),
                    c = py_str_repr(canonical),
                    p = py_str_repr(KERNEL_CC_PREFIX)
                ),
            );
        }
        if !offered(module) {
            return E::err(
                field,
                format!(
                    "{} is not available in this kernel; available: {listed}",
                    py_str_repr(module)
                ),
            );
        }
        return Ok(module.into());
    }
    if let Some(canonical) = modelled(name) {
        if offered(name) {
            return Ok(name.into());
        }
        if offered(canonical) {
            return Ok(canonical.into());
        }
        return E::err(
            field,
            format!(
                "{} is not available in this kernel; available: {listed}",
                py_str_repr(name)
            ),
        );
    }
    E::err(
        field,
        format!(
            "the simulator does not model {}: a congestion control of the kernel only is written {} (available \
             in this kernel: {listed})",
            py_str_repr(name),
            py_str_repr(&format!("{KERNEL_CC_PREFIX}{name}"))
        ),
    )
}

/// Refuses a written host key the kernel backend cannot honour.
fn check_host(host: Option<&HostInput>, field: &str) -> Result<(), FieldError> {
    let Some(h) = host else { return Ok(()) };
    let written = [
        ("preset", h.preset.is_some()),
        ("start_jitter", h.start_jitter_ns.is_some()),
        ("start_spacing", h.start_spacing_ns.is_some()),
        ("noise", h.noise.is_some()),
        ("noise_scale", h.noise_scale_ns.is_some()),
        ("turnaround", h.turnaround_ns.is_some()),
        ("pacing_slack", h.pacing_slack_ns.is_some()),
        ("delack_granularity", h.delack_granularity_ns.is_some()),
        ("hz", h.hz.is_some()),
        ("tick_phase", h.tick_phase.is_some()),
        ("tso", h.tso.is_some()),
        ("nic_rate", h.nic_rate_bps.is_some()),
        ("gro", h.gro.is_some()),
        ("gro_flush", h.gro_flush_ns.is_some()),
        ("rcv_window", h.rcv_window.is_some()),
        ("rcv_autotune", h.rcv_autotune.is_some()),
        ("rmem", h.rmem_bytes.is_some()),
        ("rcv_scaling_ratio", h.rcv_scaling_ratio.is_some()),
        ("rcv_initial_window", h.rcv_initial_window.is_some()),
    ];
    for (key, is_written) in written {
        if is_written && !HONOURED_HOST_KEYS.contains(&key) {
            return E::err(
                format!("{field}.{key}"),
                format!(
                    "the kernel backend runs this machine's own hosts and cannot set their {key}; it honours {} \
                     (a preset's other values are the machine's real ones); remove the key",
                    HONOURED_HOST_KEYS.join(", ")
                ),
            );
        }
    }
    Ok(())
}

/// An error about a group's `cc` that its profile set, saying so (the user did not write the name).
fn from_profile(e: FieldError, g: &crate::spec::FlowInput, i: usize) -> FieldError {
    let Some(name) = &g.profile else { return e };
    match crate::profile::profile(name, "") {
        Ok(p) if p.cc.value == g.cc => FieldError::new(
            e.field,
            format!(
                "{} (flows[{i}].profile = {} sets cc = {}; write cc to run the group with another module)",
                e.message,
                py_str_repr(name),
                py_str_repr(p.cc.value)
            ),
        ),
        _ => e,
    }
}

/// `input` resolved for the kernel backend on `host`.
pub fn resolve(input: &ScenarioInput, host: &KernelHost) -> Result<KernelResolution, FieldError> {
    check_host(input.host.as_ref(), "host")?;
    let mut modules = Vec::with_capacity(input.flows.len());
    for (i, g) in input.flows.iter().enumerate() {
        let f = |key: &str| format!("flows[{i}].{key}");
        modules
            .push(kernel_cc_name(&g.cc, &f("cc"), &host.available_ccs).map_err(|e| from_profile(e, g, i))?);
        check_host(g.host.as_ref(), &format!("flows[{i}].host"))?;
        if !g.cc_params.is_empty() {
            return E::err(
                f("cc_params"),
                "the kernel backend cannot set algorithm parameters per flow (they are host-wide module \
                 parameters); remove cc_params",
            );
        }
        if g.ecn != "off" && g.ecn != "classic" {
            return E::err(
                f("ecn"),
                format!(
                    "{} needs an L4S congestion control and Accurate ECN in the kernel; the kernel backend runs \
                     off and classic (RFC 3168)",
                    py_str_repr(&g.ecn)
                ),
            );
        }
        let delay = g.delay.as_deref().unwrap_or(SPLIT);
        if !DELAY_PLACEMENTS.contains(&delay) {
            return E::err(
                f("delay"),
                format!(
                    "must be one of {}, got {}",
                    DELAY_PLACEMENTS.join(", "),
                    py_str_repr(delay)
                ),
            );
        }
    }
    if input.flows.len() > MAX_KERNEL_GROUPS {
        return E::err(
            "flows",
            format!("the kernel backend runs at most {MAX_KERNEL_GROUPS} flow groups"),
        );
    }
    let flows: i128 = input.flows.iter().map(|g| g.count.max(0)).sum();
    if flows > MAX_KERNEL_FLOWS as i128 {
        return E::err(
            "flows",
            format!("the kernel backend runs at most {MAX_KERNEL_FLOWS} flows, got {flows}"),
        );
    }
    let mut stand_in_input = input.clone();
    let machine = machine_as_it_comes(&mut stand_in_input);
    for g in &mut stand_in_input.flows {
        g.cc = STAND_IN_CC.into();
        g.cc_params.clear();
        g.delay = None;
    }
    let stand_in = stand_in_input.resolve()?;
    let offloads = offloads(&stand_in)?;
    let receive_buffer = receive_buffer(&stand_in)?;
    let s = stand_in.clone().into_unchecked();
    let groups = s
        .groups
        .into_iter()
        .zip(modules)
        .zip(&input.flows)
        .zip(machine)
        .map(|(((group, name), g), is_machine)| {
            let mut group = group.with_cc(KernelModule { name });
            group.delay = Some(g.delay.clone().unwrap_or_else(|| SPLIT.into()));
            if is_machine {
                group.host.preset = HostPreset::KernelLab;
            }
            group
        })
        .collect();
    let spec = UncheckedSpec {
        duration_ns: s.duration_ns,
        interval_ns: s.interval_ns,
        measure_start_ns: s.measure_start_ns,
        measure_end_ns: s.measure_end_ns,
        link: s.link,
        groups,
        offloads: Some(offloads),
        receive_buffer: Some(receive_buffer),
    }
    .check()?;
    Ok(KernelResolution { stand_in, spec })
}

/// Lays the written keys of every host table whose preset is the machine's own (`kernel-lab`, named or the
/// default) over the ideal preset instead, whose values set nothing on the real hosts; returns, per group,
/// whether its host is the machine's own.
fn machine_as_it_comes(input: &mut ScenarioInput) -> Vec<bool> {
    let machine = preset_name(HostPreset::KernelLab);
    let ideal = preset_name(HostPreset::Ideal);
    let scenario_preset = input
        .host
        .as_ref()
        .and_then(|h| h.preset.clone())
        .unwrap_or_else(|| preset_name(DEFAULT_PRESET).into());
    if scenario_preset == machine {
        input.host.get_or_insert_with(HostInput::default).preset = Some(ideal.into());
    }
    input
        .flows
        .iter_mut()
        .map(|g| {
            let group_preset = g.host.as_ref().and_then(|h| h.preset.clone());
            let is_machine = group_preset.as_deref().unwrap_or(&scenario_preset) == machine;
            if group_preset.as_deref() == Some(machine) {
                g.host.as_mut().expect("a written preset").preset = Some(ideal.into());
            }
            is_machine
        })
        .collect()
}

fn show_bool(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// The run's offloads, one for every group (they share the veths); an error where groups differ.
fn offloads(spec: &ScenarioSpec) -> Result<Offloads, FieldError> {
    let mut chosen: Option<Offloads> = None;
    for (i, g) in spec.groups.iter().enumerate() {
        let mine = Offloads {
            tso: g.host.tso,
            gro: g.host.gro,
            gro_flush_ns: g.host.gro_flush_ns,
        };
        let first = *chosen.get_or_insert(mine);
        let differs = [
            (
                "tso",
                first.tso != mine.tso,
                show_bool(first.tso).to_string(),
                show_bool(mine.tso).to_string(),
            ),
            (
                "gro",
                first.gro != mine.gro,
                show_bool(first.gro).into(),
                show_bool(mine.gro).into(),
            ),
            (
                "gro_flush",
                first.gro_flush_ns != mine.gro_flush_ns,
                format_duration_ns(first.gro_flush_ns),
                format_duration_ns(mine.gro_flush_ns),
            ),
        ];
        for (key, differ, theirs, ours) in differs {
            if differ {
                return E::err(
                    format!("flows[{i}].host.{key}"),
                    format!(
                        "every flow group runs on the same sender and receiver veth in the kernel backend, so \
                         {key} must be the same for all: group 0 has {theirs}, this group {ours}"
                    ),
                );
            }
        }
    }
    Ok(chosen.unwrap_or_default())
}

/// The receivers' buffer (their namespace's sysctls), None where the hosts model no receive window; an
/// error where groups differ.
fn receive_buffer(spec: &ScenarioSpec) -> Result<Option<ReceiveBuffer>, FieldError> {
    let py_bool = |b: bool| if b { "True" } else { "False" }.to_string();
    let py_list = |v: [u32; 3]| format!("[{}, {}, {}]", v[0], v[1], v[2]);
    let mut chosen: Option<ReceiveBuffer> = None;
    for (i, g) in spec.groups.iter().enumerate() {
        let mine = ReceiveBuffer {
            rcv_window: g.host.rcv_window,
            rcv_autotune: g.host.rcv_autotune,
            rmem_bytes: g.host.rmem_bytes,
        };
        let first = chosen.get_or_insert_with(|| mine.clone()).clone();
        let differs = [
            (
                "rcv_window",
                first.rcv_window != mine.rcv_window,
                py_bool(first.rcv_window),
                py_bool(mine.rcv_window),
            ),
            (
                "rcv_autotune",
                first.rcv_autotune != mine.rcv_autotune,
                py_bool(first.rcv_autotune),
                py_bool(mine.rcv_autotune),
            ),
            (
                "rmem",
                first.rmem_bytes != mine.rmem_bytes,
                py_list(first.rmem_bytes),
                py_list(mine.rmem_bytes),
            ),
        ];
        for (key, differ, theirs, ours) in differs {
            if differ {
                return E::err(
                    format!("flows[{i}].host.{key}"),
                    format!(
                        "every flow group's receiver runs in the same namespace in the kernel backend, so {key} \
                         must be the same for all: group 0 has {theirs}, this group {ours}"
                    ),
                );
            }
        }
    }
    Ok(chosen.filter(|b| b.rcv_window))
}
