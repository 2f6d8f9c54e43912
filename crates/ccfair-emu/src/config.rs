//! What each program reads. A run's programs (`forward`, `send`, `recv`) read one [`RunConfig`]: the
//! resolved kernel spec (`ccfair_scenario`'s, checked again here with the resolver's rules), the run's seed,
//! and this machine's side of the run (ports, addresses, CPUs, the output file); each derives what it needs
//! from the spec itself: the schedule, each flow's path (its delays by the group's placement of the base
//! RTT, its loss), each sender's algorithm, start, stop and size (the flows' starts and sizes drawn as the
//! simulator draws them, `ccfair_scenario::traffic::flow_plans`). `blast` (the forwarder's probe, no
//! scenario) reads its own [`crate::blast::BlastConfig`]. Every time is in nanoseconds relative to the run
//! epoch, which the orchestrator sends on standard input (`go <CLOCK_MONOTONIC ns>`) once every program is
//! ready.

use ccfair_aqm::AqmConfig;
use ccfair_scenario::kernel::{KernelModule, KernelSpec, SPLIT};
use ccfair_scenario::{GroupSpec, UncheckedSpec};
use serde::{Deserialize, Serialize};

/// When the interval rows and the measurement window's edges fall, relative to the epoch.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub measure_start_ns: u64,
    pub measure_end_ns: u64,
}

/// A point of the schedule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// The end of interval k (1-based): append a row.
    Sample,
    WindowStart,
    WindowEnd,
}

impl Schedule {
    /// A run's schedule, from its spec.
    pub fn of(spec: &KernelSpec) -> Schedule {
        Schedule {
            duration_ns: spec.duration_ns,
            interval_ns: spec.interval_ns,
            measure_start_ns: spec.measure_start_ns,
            measure_end_ns: spec.measure_end_ns,
        }
    }

    /// Refuses a schedule the resolver would refuse (a probe's, which comes from no scenario).
    pub fn check(&self) -> Result<(), String> {
        ccfair_scenario::spec::check_window(
            self.duration_ns,
            self.interval_ns,
            self.measure_start_ns,
            self.measure_end_ns,
        )
        .map_err(|e| e.to_string())
    }

    /// Every mark in time order (ns after the epoch); at equal times a row comes before a window edge.
    pub fn marks(&self) -> Vec<(u64, Mark)> {
        let n = self.duration_ns / self.interval_ns;
        let mut v: Vec<(u64, Mark)> = (1..=n).map(|k| (k * self.interval_ns, Mark::Sample)).collect();
        v.push((self.measure_start_ns, Mark::WindowStart));
        v.push((self.measure_end_ns, Mark::WindowEnd));
        v.sort();
        v
    }
}

/// One flow's path through the emulator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowPath {
    pub data_delay_ns: u64,
    pub ack_delay_ns: u64,
    #[serde(default)]
    pub loss: f64,
    /// The scenario's flow group (the edge marker's weights are per group).
    #[serde(default)]
    pub group: u32,
}

/// `ccfair-emu forward`, as [`RunConfig::forward`] derives it.
#[derive(Clone, Debug)]
pub struct ForwardConfig {
    /// The router's interface towards the senders.
    pub sender_if: String,
    /// The router's interface towards the receiver.
    pub receiver_if: String,
    pub rate_bps: u64,
    pub mtu_bytes: u32,
    pub aqm: AqmConfig,
    /// Flow i's receiver listens on `port_base + i`.
    pub port_base: u16,
    pub flows: Vec<FlowPath>,
    pub schedule: Schedule,
    pub seed: u64,
    /// Run under SCHED_FIFO (root): fewer late wakeups when the host is busy.
    pub realtime: bool,
    /// Busy-wait this long before a deadline instead of sleeping through it (0: always sleep).
    pub spin_ns: u64,
    /// A frame's time at the emulator starts at the kernel's arrival stamp (never before the last instant
    /// the loop has run the link to), not when the loop reads it: the read's wait is then not on the path.
    pub arrival_at_stamp: bool,
    /// CPUs to run on (empty: any).
    pub cpus: Vec<usize>,
    pub out: String,
}

/// One flow of `ccfair-emu send`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendFlow {
    pub dst: std::net::Ipv4Addr,
    pub port: u16,
    pub cc: String,
    pub start_ns: u64,
    /// When the application stops writing; None = the end of the run.
    pub stop_ns: Option<u64>,
    #[serde(default)]
    pub pacing: bool,
    /// Bytes to write, then shut down the sending side; None = write until the stop.
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Open the connection at `start_ns` (its SYN through the emulator then); false: before the epoch.
    #[serde(default)]
    pub connect_at_start: bool,
}

/// `ccfair-emu send`, as [`RunConfig::send`] derives it.
#[derive(Clone, Debug)]
pub struct SendConfig {
    pub flows: Vec<SendFlow>,
    /// CPUs to run on (empty: any).
    pub cpus: Vec<usize>,
    pub schedule: Schedule,
    pub out: String,
}

/// `ccfair-emu recv`, as [`RunConfig::recv`] derives it.
#[derive(Clone, Debug)]
pub struct RecvConfig {
    /// Flow i is whatever connects to `ports[i]`.
    pub ports: Vec<u16>,
    /// Flow i's size in bytes, whose last byte read is its completion (0: a bulk flow).
    pub sizes: Vec<u64>,
    /// CPUs to run on (empty: any).
    pub cpus: Vec<usize>,
    pub schedule: Schedule,
    pub out: String,
}

/// The router's side of a run (`forward` only).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSide {
    /// The router's interface towards the senders.
    pub sender_if: String,
    /// The router's interface towards the receiver.
    pub receiver_if: String,
    #[serde(default)]
    pub realtime: bool,
    #[serde(default)]
    pub spin_ns: u64,
    #[serde(default)]
    pub arrival_at_stamp: bool,
}

/// What `forward`, `send` and `recv` read (see the module docs).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The resolved kernel spec (`ccfair.scenario.KernelScenario.resolve()`).
    pub spec: UncheckedSpec<KernelModule>,
    pub seed: u64,
    /// Flow i's receiver listens on `port_base + i`.
    pub port_base: u16,
    /// Group g's receiver address, which its senders connect to.
    #[serde(default)]
    pub receiver_ips: Vec<std::net::Ipv4Addr>,
    /// CPUs to run on (empty: any).
    #[serde(default)]
    pub cpus: Vec<usize>,
    pub out: String,
    /// The router's side, for `forward`.
    #[serde(default)]
    pub router: Option<RouterSide>,
}

/// (data, ACK) delay of a group's flows: the simulator's split is rtt / 2 on data (rounded down), the rest on
/// ACKs; `data` puts all of it after the bottleneck, `ack` all of it on the ACK path.
pub fn delays(group: &GroupSpec<KernelModule>) -> (u64, u64) {
    let rtt = group.rtt_ns;
    match group.delay.as_deref().unwrap_or(SPLIT) {
        "data" => (rtt, 0),
        "ack" => (0, rtt),
        _ => (rtt / 2, rtt - rtt / 2),
    }
}

impl RunConfig {
    /// The spec, held to the resolver's rules.
    fn checked(&self) -> Result<KernelSpec, String> {
        self.spec.clone().check().map_err(|e| format!("spec: {e}"))
    }

    /// Each flow's group, in flow order.
    fn groups(spec: &KernelSpec) -> impl Iterator<Item = (u32, &GroupSpec<KernelModule>)> {
        spec.groups
            .iter()
            .enumerate()
            .flat_map(|(g, group)| std::iter::repeat_n((g as u32, group), group.count as usize))
    }

    pub fn forward(&self) -> Result<ForwardConfig, String> {
        let spec = self.checked()?;
        let router = self
            .router
            .clone()
            .ok_or("forward needs the router's side (router)")?;
        let flows = Self::groups(&spec)
            .map(|(group, g)| {
                let (data_delay_ns, ack_delay_ns) = delays(g);
                FlowPath {
                    data_delay_ns,
                    ack_delay_ns,
                    loss: g.loss,
                    group,
                }
            })
            .collect();
        Ok(ForwardConfig {
            sender_if: router.sender_if,
            receiver_if: router.receiver_if,
            rate_bps: spec.link.rate_bps,
            mtu_bytes: spec.link.mtu_bytes,
            aqm: spec.link.aqm.clone(),
            port_base: self.port_base,
            flows,
            schedule: Schedule::of(&spec),
            seed: self.seed,
            realtime: router.realtime,
            spin_ns: router.spin_ns,
            arrival_at_stamp: router.arrival_at_stamp,
            cpus: self.cpus.clone(),
            out: self.out.clone(),
        })
    }

    pub fn send(&self) -> Result<SendConfig, String> {
        let spec = self.checked()?;
        let plans = ccfair_scenario::traffic::flow_plans(&spec, self.seed);
        let flows = Self::groups(&spec)
            .zip(plans)
            .enumerate()
            .map(|(id, ((group, g), plan))| {
                let dst = *self
                    .receiver_ips
                    .get(group as usize)
                    .ok_or(format!("no receiver address for flow group {group}"))?;
                Ok(SendFlow {
                    dst,
                    port: self.port(id)?,
                    cc: g.cc.name.clone(),
                    start_ns: plan.start_ns,
                    stop_ns: g.stop_ns,
                    pacing: g.pacing,
                    size_bytes: (plan.size_bytes > 0).then_some(plan.size_bytes),
                    connect_at_start: g.connect == ccfair_scenario::ConnectMode::AtStart,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(SendConfig {
            flows,
            cpus: self.cpus.clone(),
            schedule: Schedule::of(&spec),
            out: self.out.clone(),
        })
    }

    pub fn recv(&self) -> Result<RecvConfig, String> {
        let spec = self.checked()?;
        let plans = ccfair_scenario::traffic::flow_plans(&spec, self.seed);
        Ok(RecvConfig {
            ports: (0..plans.len()).map(|i| self.port(i)).collect::<Result<_, _>>()?,
            sizes: plans.iter().map(|p| p.size_bytes).collect(),
            cpus: self.cpus.clone(),
            schedule: Schedule::of(&spec),
            out: self.out.clone(),
        })
    }

    fn port(&self, flow: usize) -> Result<u16, String> {
        u16::try_from(self.port_base as usize + flow).map_err(|_| format!("no port for flow {flow}"))
    }
}

/// What a program derives from a run's configuration, as JSON (`ccfair-emu check ROLE CONFIG`: the
/// orchestrator's tests read it without starting anything).
pub fn derived(role: &str, cfg: &RunConfig) -> Result<serde_json::Value, String> {
    let schedule = |s: &Schedule| {
        serde_json::json!({
            "duration_ns": s.duration_ns, "interval_ns": s.interval_ns,
            "measure_start_ns": s.measure_start_ns, "measure_end_ns": s.measure_end_ns,
        })
    };
    Ok(match role {
        "forward" => {
            let f = cfg.forward()?;
            serde_json::json!({"schedule": schedule(&f.schedule), "flows": f.flows, "rate_bps": f.rate_bps,
                "mtu_bytes": f.mtu_bytes, "aqm": f.aqm, "seed": f.seed})
        }
        "send" => {
            let s = cfg.send()?;
            serde_json::json!({"schedule": schedule(&s.schedule), "flows": s.flows})
        }
        "recv" => {
            let r = cfg.recv()?;
            serde_json::json!({"schedule": schedule(&r.schedule), "ports": r.ports, "sizes": r.sizes})
        }
        other => return Err(format!("no program {other:?}: forward, send or recv")),
    })
}

/// Pins this process to `cpus` (no-op when empty); a failure is a warning, the run goes on.
pub fn pin(cpus: &[usize], who: &str) {
    if !cpus.is_empty()
        && let Err(e) = crate::sys::set_affinity(cpus)
    {
        eprintln!("ccfair-emu {who}: warning: cannot pin to CPUs {cpus:?}: {e}");
    }
}

/// Reads and parses a configuration file.
pub fn load<T: for<'de> Deserialize<'de>>(path: &str) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccfair_scenario::value::Value;
    use ccfair_scenario::{Backend, Source, kernel::KernelHost};

    /// A run's configuration for a kernel scenario resolved from `doc`.
    fn run_config(doc: serde_json::Value) -> RunConfig {
        let value = Value::from_json(&doc);
        let host = KernelHost {
            available_ccs: vec!["reno".into(), "cubic".into(), "vegas".into()],
        };
        let r = ccfair_scenario::resolve(Source::Document(&value), &Backend::Kernel(host)).unwrap();
        serde_json::from_value(serde_json::json!({
            "spec": r.spec, "seed": 3, "port_base": 20000,
            "receiver_ips": ["10.9.1.2", "10.9.2.2"], "out": "/dev/null",
            "router": {"sender_if": "a", "receiver_if": "b"},
        }))
        .unwrap()
    }

    #[test]
    fn every_program_derives_its_flows_from_the_spec() {
        let cfg = run_config(serde_json::json!({
            "duration": "10s", "link": {"rate": "10Mbps", "buffer": "100pkt"},
            "flows": [
                {"cc": "kernel:vegas", "rtt": "51ns", "count": 2, "delay": "ack", "loss": 0.01},
                {"cc": "newreno", "rtt": "21ns", "start": "1s", "size": "1MB",
                 "arrivals": {"process": "poisson", "mean_interval": "1s"}},
            ],
        }));
        let f = cfg.forward().unwrap();
        let paths: Vec<(u64, u64, u32)> = f
            .flows
            .iter()
            .map(|p| (p.data_delay_ns, p.ack_delay_ns, p.group))
            .collect();
        assert_eq!(paths, vec![(0, 51, 0), (0, 51, 0), (10, 11, 1)]);
        assert_eq!(f.flows[0].loss, 0.01);
        assert_eq!(
            (f.schedule.measure_start_ns, f.schedule.measure_end_ns),
            (2_000_000_000, 10_000_000_000)
        );
        let s = cfg.send().unwrap();
        let ccs: Vec<&str> = s.flows.iter().map(|x| x.cc.as_str()).collect();
        assert_eq!(ccs, vec!["vegas", "vegas", "reno"]);
        assert_eq!(
            s.flows.iter().map(|x| x.port).collect::<Vec<_>>(),
            vec![20000, 20001, 20002]
        );
        assert_eq!(s.flows[2].dst, std::net::Ipv4Addr::new(10, 9, 2, 2));
        // Starts and sizes as the simulator draws them for the seed.
        let plans = ccfair_scenario::traffic::flow_plans(&cfg.spec, 3);
        assert!(plans[2].start_ns > 1_000_000_000);
        assert_eq!(s.flows[2].start_ns, plans[2].start_ns);
        assert_eq!(
            (s.flows[0].size_bytes, s.flows[2].size_bytes),
            (None, Some(1_000_000))
        );
        let r = cfg.recv().unwrap();
        assert_eq!(
            (r.ports, r.sizes),
            (vec![20000, 20001, 20002], vec![0, 0, 1_000_000])
        );
    }

    #[test]
    fn a_spec_is_held_to_the_resolvers_rules() {
        let mut cfg = run_config(serde_json::json!({
            "duration": "10s", "link": {"rate": "10Mbps", "buffer": "100pkt"},
            "flows": [{"cc": "cubic", "rtt": "20ms"}],
        }));
        cfg.spec.measure_end_ns = 11_000_000_000;
        let e = cfg.send().unwrap_err();
        assert!(
            e.contains("measure.end") && e.contains("at most the duration"),
            "{e}"
        );
        cfg.spec.measure_end_ns = 10_000_000_000;
        cfg.spec.groups[0].delay = Some("middle".into());
        assert!(cfg.forward().unwrap_err().contains("flows[0].delay"));
        cfg.spec.groups[0].delay = None;
        cfg.router = None;
        assert!(cfg.forward().unwrap_err().contains("router"));
        assert!(cfg.recv().is_ok());
    }

    #[test]
    fn marks_are_ordered_with_rows_before_edges() {
        let s = Schedule {
            duration_ns: 300,
            interval_ns: 100,
            measure_start_ns: 100,
            measure_end_ns: 300,
        };
        assert_eq!(
            s.marks(),
            vec![
                (100, Mark::Sample),
                (100, Mark::WindowStart),
                (200, Mark::Sample),
                (300, Mark::Sample),
                (300, Mark::WindowEnd)
            ]
        );
        assert!(s.check().is_ok());
        assert!(
            Schedule {
                interval_ns: 0,
                ..s.clone()
            }
            .check()
            .is_err()
        );
        assert!(
            Schedule {
                measure_end_ns: 400,
                ..s
            }
            .check()
            .is_err()
        );
    }
}
