//! The end hosts: how far a flow's sender and receiver depart from an ideal host, by preset and parameters.
//!
//! In a nutshell: the simulator's ideal host starts every flow exactly at its start time, sends each segment
//! the instant TCP allows and ACKs by the receiver's rules alone, so repetitions of a drop-tail run are
//! bit-identical and flows lock into phase (Floyd & Jacobson, "On traffic phase effects in packet-switched
//! gateways", 1992). Real hosts do not start their flows together: an application (or a test harness
//! starting `iperf3` clients over ssh) opens connections milliseconds apart. A `[host]` table names a preset
//! and may override any of its parameters; a `[flows.host]` table is laid over the scenario's key by key
//! (a key the group writes wins, a key it leaves out comes from the scenario's table), then the preset is
//! expanded and the written parameters replace the preset's values.
//!
//! Parameters:
//! - `start_jitter`: each flow of a group starts at `start + U[0, start_jitter)`, drawn once per flow from
//!   its own stream of the run's seed (`StreamId::HostStart`), so a flow's start does not depend on other
//!   components' draws. Default: 0 for `ideal`; one base RTT of the group for the other presets, the spread
//!   of connection set-up that a harness starting clients over a network sees (a handshake is one RTT, and
//!   clients started one after the other are at least that far apart). With `start_jitter = 0` a group's
//!   flows start at the same nanosecond, which no host does: the kernel backend's sender, one thread writing to
//!   its flows in turn, puts each flow's initial window on the wire 100-200 µs after the previous one's, in
//!   flow order, and that order decides which flow's slow-start bursts queue behind the other's (and so where
//!   Cubic's HyStart ends its slow start; `tests/test_hystart_exit.py`).
//!
//! - `noise`, `noise_scale`: a per-packet processing delay at the sender (between TCP handing a segment down
//!   and the segment reaching the wire: qdisc, driver, DMA) and at the receiver (between the wire and TCP:
//!   interrupt moderation, NAPI, softirq). `noise` is its distribution, `"none"`, `"exponential"` (mean
//!   `noise_scale`) or `"uniform"` (on `[0, 2 × noise_scale)`, the same mean); each end draws from its own
//!   stream per flow. A segment never overtakes the one before it (a flow's packets stay in order through
//!   one queue of the host), so a delay shorter than the previous packet's is stretched to it.
//! - `pacing_slack`: the pacing timer fires within `[deadline, deadline + pacing_slack)`, as an hrtimer
//!   started with a slack range does (sch_fq arms its watchdog with `qdisc_watchdog_schedule_range_ns(...,
//!   q->timer_slack)`, `q->timer_slack = 10 * NSEC_PER_USEC` by default in `net/sched/sch_fq.c`).
//! - `delack_granularity`: the delayed-ACK timer is a timer-wheel timer in jiffies (`sk_reset_timer` with
//!   `icsk_ack.timeout`, `net/ipv4/tcp_output.c`), so it fires at the first tick at or after its deadline:
//!   the deadline is rounded up to a multiple of one jiffy (1 ms at HZ=1000, 4 ms at HZ=250). The timer
//!   wheel's first level has 64 buckets of one jiffy (`LVL_BITS = 6` in `kernel/time/timer.c`), which holds
//!   every delayed-ACK timeout (at most 200 ms = 50 jiffies at HZ=250; at HZ=1000 a timeout above 63 ms
//!   falls into level 1, 8 jiffies per bucket, which is not modelled). The ticks are the host's (`hz`,
//!   `tick_phase`); a written `hz` sets this to one of its ticks unless it is written too.
//! - `hz`, `tick_phase`: the host kernel's jiffies clock (`ccfair_core::jiffies`). `hz` is `CONFIG_HZ`;
//!   Cubic reads its curve's time in jiffies (`bictcp_update`: at HZ=250 the curve moves in 4 ms steps and
//!   `cnt` is recomputed at most once per 4 ms), BBR its min-RTT window and PROBE_RTT deadline. With
//!   `tick_phase = "random"` the ticks fall at a phase drawn per run from its seed (`StreamId::HostClock`),
//!   as a machine's jiffies count from its boot, not from the experiment's start; `"zero"` puts a tick at
//!   the run's start, as the simulator always did. Which ACKs of a round land in one tick, and so when Cubic
//!   grows, then differs from run to run by up to one tick: a source of run-to-run variation of every
//!   loss-based run that the ideal host, with its ticks fixed, lacks.
//! - `tso`: the sender's TCP builds skbs of many segments for every flow, as Linux does whenever the device
//!   offloads segmentation (TSO, or GSO in software). Paced flows already send bursts of `tcp_tso_autosize`
//!   segments; with `tso` unpaced flows do too (`tcp_tso_segs` sizes them from `sk_pacing_rate`, which
//!   `tcp_update_pacing_rate` keeps for every flow, paced or not: about 1 ms of it, at least `min_tso_segs`,
//!   at most 64 KB, 45 segments of 1448 B), and a flow whose window only partly allows its next burst defers
//!   it until more ACKs arrive when the next one is due within min(1 ms, srtt/2) (`tcp_tso_should_defer` as
//!   in Linux 6.18, see `tcp/xmit.rs`). Without it (the ideal host) an
//!   unpaced flow sends segment by segment and never defers.
//! - `nic_rate`: the sending host's NIC serializes the segments it is handed back to back at this rate, so
//!   a burst's segments leave `wire_len × 8 / nic_rate` apart (see `ccfair_sim::host::nic`); 0 is an infinitely fast NIC,
//!   a burst's segments reach the bottleneck at one instant. One NIC per group: all flows of a group run on
//!   one sender host, as a testbed runs a traffic generator's flows on one server, so a group's flows queue
//!   behind each other's bursts; two groups are two hosts. The NIC serves segments in the order the host
//!   hands them over, after their processing delay (`noise`), as one transmit queue does.
//! - `gro`, `gro_flush`: the receiving host coalesces consecutive segments of a flow that arrive within
//!   `gro_flush` of the first into one aggregate that TCP receives as one skb (see `ccfair_sim::host::gro`): one ACK decision
//!   per aggregate, and as an aggregate of two or more segments is more than one MSS of unacknowledged data,
//!   an ACK at once (`__tcp_ack_snd_check`): stretch ACKs. `gro_flush` is the span of one NAPI poll under
//!   interrupt moderation (the NIC's `rx-usecs`); the aggregate reaches TCP at its end, or earlier when a
//!   segment arrives that cannot join it. `gro = false` or a zero window: every segment reaches TCP alone.
//!
//! Presets: `ideal` (today's simulator, no draw and no event added), `testbed` (a server in a lab, the
//! traffic generator of a kernel comparison) and `home` (a user's access host):
//!
//! | parameter            | ideal | testbed          | home              |
//! |----------------------|-------|------------------|-------------------|
//! | `start_jitter`       | 0     | one group RTT    | one group RTT     |
//! | `noise`              | none  | exponential      | exponential       |
//! | `noise_scale`        | 0     | 5 µs             | 50 µs             |
//! | `pacing_slack`       | 0     | 10 µs (sch_fq)   | 50 µs             |
//! | `delack_granularity` | 0     | one tick (1 ms)  | one tick (4 ms)   |
//! | `hz`                 | 1000  | 1000             | 250               |
//! | `tick_phase`         | zero  | random           | random            |
//! | `tso`                | false | true             | true              |
//! | `nic_rate`           | 0 (∞) | 10 Gbit/s        | 1 Gbit/s          |
//! | `gro`                | false | true             | true              |
//! | `gro_flush`          | 0     | 16 µs (mlx5)     | 50 µs (20k irq/s) |
//! | `rcv_window`         | false | true             | true              |
//! | `rcv_autotune`       | true  | true             | true              |
//! | `rmem`               | Linux | Linux            | Linux             |
//! | `rcv_scaling_ratio`  | 128   | 160              | 160               |
//! | `rcv_initial_window` | 0     | 0                | 0                 |
//!
//! (Linux's `tcp_rmem`: 4096, 131072, 32 MiB.)
//!
//! Why these values: 50 µs is Linux's default timer slack of a task (`init_task.timer_slack_ns = 50000`,
//! `init/init_task.c`), used as the wake-up spread of a busy home host; a testbed server paces through
//! sch_fq, whose slack is 10 µs. Server kernels are commonly built with HZ=1000, desktop distributions long
//! shipped HZ=250. The testbed's noise is measured on the kernel backend (`ccfair.devtools.host_latency`:
//! packet captures at the sender's and receiver's veths, Linux 6.18, idle machine). An unpaced Cubic
//! sender answers an ACK with new data in 8.5 / 11 / 18 µs (p10 / p50 / p90; 9 flows at 50 Mbit/s) and
//! 19 / 22 / 27 µs (2 flows at 10 Mbit/s: an idler CPU wakes more slowly); the receiver sends the ACK a
//! segment triggers 7 / 14 / 22 µs and 19 / 23 / 29 µs after it. The fixed part (8 to 20 µs at each end)
//! only lengthens the path by tens of µs; the variable part spreads like an exponential of mean 4 to 6.5
//! µs, the 5 µs used here. (A longer path does move phase-locked flows: the validation grid's kernel-like
//! hosts carry the loop their kernel side measured, `python/ccfair/studies/validate/grid.py`.) Measured the same way, the kernel's receiver (GRO off) sends no stretch ACKs
//! outside loss recovery (at most 6 segments, under 1 % of the segments in ACKs of more than two), so
//! host timing does not bunch the ACKs a sender sees. The home host's 50 µs is an assumption of the right
//! order: the gap of a NIC that moderates its interrupts to 20,000 per second.
//! TSO and GRO are on by default in Linux for every NIC that offers them (GSO and GRO in software for the
//! others). A testbed server has a 10 Gbit/s NIC; its receive coalescing window is the default `rx-usecs`
//! of a common server NIC, 16 µs for Mellanox ConnectX (mlx5, `MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC`
//! = 0x10; Intel's i40e defaults to 20,000 interrupts per second, 50 µs, with adaptive moderation on both),
//! an assumption to calibrate against the kernel grid. A home host (Rüth et al.'s setting: a desktop or
//! laptop with a 1 Gbit/s NIC) moderates to about 20,000 interrupts per second (e1000e's default dynamic
//! conservative mode caps there), so its window is 50 µs.
//!
//! The receive window (`rcv_window`, the model in `ccfair_sim::tcp::rwnd`): a real host always has one; the
//! ideal host offers an unlimited window. `rmem` is `net.ipv4.tcp_rmem` (min, default, max, bytes): Linux's
//! defaults 4096, 131072 and, since 6.16 ("tcp: increase tcp_rmem[2] to 32 MB"), 32 MiB (6 MiB before);
//! `rcv_autotune` is `net.ipv4.tcp_moderate_rcvbuf` (on by default). `rcv_scaling_ratio` is the share of
//! the buffer the payload gets, in 1/256: the kernel measures it from each flow's skbs (payload over
//! truesize, `tcp_measure_rcv_mss`), starting from `TCP_DEFAULT_SCALING_RATIO` = 128 (the ideal host's
//! value, unused there). 160 is what the kernel backend's receiver measures here (Linux 6.18.44, veth,
//! 1500-byte MTU): its `rcv_ssthresh` levels off at 160/256 of `sk_rcvbuf` (`ss -tmi`: 18297410 of
//! 29275856 bytes), a 1448-byte payload in a 2304-byte skb (a 2 KiB buffer and the `sk_buff`); a home
//! host's NIC with 2 KiB receive buffers gives the same. Other drivers differ (188 on an mlx5 NIC in the
//! netdev discussion of "tcp: fix too slow tcp_rcvbuf_grow() action").
//! `rcv_initial_window` is a route's `initrwnd` (`ip route ... initrwnd N`): the receiver's first window is
//! at most N segments (`tcp_select_initial_window`'s `init_rcv_wnd`), and its `rcv_ssthresh`, which
//! starts there, grows two segments per segment received; 0 is Linux's default, the whole initial buffer.
//! It decides how long a receiver ACKs every segment of a slow start (`tcp_grow_window`'s quick ACKs):
//! the kernel backend's receiver route sets it to the largest initial window (10), which the validation
//! grid's simulated hosts copy.
//!
//! Deviations: the jitter moves the flow's start, its SYN with a connection opened at the start (or its first
//! segment with one made before the run, see `tcp::sender`). All hosts
//! of a run share one tick phase (the kernel backend's endpoints share one kernel; separate machines would
//! each have their own). The stack's own timers (RTO, TLP, RACK's reordering timer) and the receiver's
//! ACK-timeout estimate count whole milliseconds, HZ=1000's jiffies, whatever `hz` is: at HZ=250 the kernel
//! rounds them up to 4 ms. The noise is
//! independent per packet (no bursts of host stalls). The SACK-compression hrtimer's own slack
//! (`tcp_comp_sack_slack_ns`) and the RTO timer's granularity are not modelled. TCP Small Queues (TSQ)
//! keeps a flow's segments waiting in its host (processing delay, NIC queue) to about 1 ms of its pacing
//! rate or two of its skbs (`tcp/xmit.rs`), counted until a segment reaches the wire rather than until the
//! NIC completes it; retransmissions are not checked against it (Linux allows them twice the limit). A
//! group's NIC as fast as the bottleneck, or slower, is then the group's bottleneck: its flows queue in
//! their host, bounded by TSQ, and see no loss, as a real sender whose NIC limits it. The NIC has one queue (no multi-queue spreading of flows, no qdisc
//! between TCP and the NIC). GSO partial and segmentation of tunnelled traffic do not arise. `tso = false`
//! is the idealized sender (segment by segment), not Linux with TSO switched off, whose GSO still sends
//! multi-segment skbs (every TCP socket has GSO since Linux 4.17): that is `tso = true`. GRO's table of held flows (8 per bucket) and the PSH flag that ends an aggregate at
//! each application write are not modelled, nor LRO apart from GRO (see `ccfair_sim::host::gro`).

use ccfair_core::jiffies::HZ_VALUES;
use ccfair_core::names::quoted;
use ccfair_core::rng::StreamId;
use ccfair_core::{FieldError, Jiffies, Rng};
use serde::{Deserialize, Serialize};

use FieldError as E;

/// The presets, in the order error messages list them.
pub const PRESETS: [&str; 4] = ["kernel-lab", "ideal", "testbed", "home"];
/// The preset of a scenario without a `[host]` table (and of a table without `preset`): the hosts the
/// kernel grid validates (see the module docs).
pub const DEFAULT_PRESET: HostPreset = HostPreset::KernelLab;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostPreset {
    #[serde(rename = "kernel-lab")]
    KernelLab,
    Ideal,
    Testbed,
    Home,
}

impl HostPreset {
    /// The name a document writes.
    pub fn name(self) -> &'static str {
        match self {
            HostPreset::KernelLab => "kernel-lab",
            HostPreset::Ideal => "ideal",
            HostPreset::Testbed => "testbed",
            HostPreset::Home => "home",
        }
    }
}

/// The value of a name-valued key (`preset`, `noise`): one of `names`, read by its serde name.
fn named<T: serde::de::DeserializeOwned>(field: &str, name: &str, names: &[&str]) -> Result<T, FieldError> {
    if names.contains(&name)
        && let Ok(v) = serde_json::from_value(serde_json::Value::String(name.to_owned()))
    {
        return Ok(v);
    }
    let meant = ccfair_core::names::closest(name, names)
        .map(|m| format!("; did you mean '{m}'?"))
        .unwrap_or_default();
    E::err(
        field,
        format!("expected one of {}, got '{name}'{meant}", quoted(names)),
    )
}

/// A `[host]` table as written, quantities in base units (`start_jitter` in ns).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostInput {
    #[serde(default)]
    pub preset: Option<String>,
    #[serde(default)]
    pub start_jitter_ns: Option<i128>,
    #[serde(default)]
    pub start_spacing_ns: Option<i128>,
    #[serde(default)]
    pub noise: Option<String>,
    #[serde(default)]
    pub noise_scale_ns: Option<i128>,
    #[serde(default)]
    pub turnaround_ns: Option<i128>,
    #[serde(default)]
    pub pacing_slack_ns: Option<i128>,
    #[serde(default)]
    pub delack_granularity_ns: Option<i128>,
    #[serde(default)]
    pub hz: Option<i128>,
    #[serde(default)]
    pub tick_phase: Option<String>,
    #[serde(default)]
    pub tso: Option<bool>,
    #[serde(default)]
    pub nic_rate_bps: Option<i128>,
    #[serde(default)]
    pub gro: Option<bool>,
    #[serde(default)]
    pub gro_flush_ns: Option<i128>,
    #[serde(default)]
    pub rcv_window: Option<bool>,
    #[serde(default)]
    pub rcv_autotune: Option<bool>,
    #[serde(default)]
    pub rmem_bytes: Option<Vec<i128>>,
    #[serde(default)]
    pub rcv_scaling_ratio: Option<i128>,
    #[serde(default)]
    pub rcv_initial_window: Option<i128>,
}

/// The distribution of the per-packet processing delay.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Noise {
    None,
    /// Exponential with mean `noise_scale`.
    Exponential,
    /// Uniform on `[0, 2 × noise_scale)`.
    Uniform,
}

/// The noise names, in the order error messages list them.
pub const NOISES: [&str; 3] = ["none", "exponential", "uniform"];

/// Where the hosts' kernel ticks fall on the run's clock.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TickPhase {
    /// A tick at the run's start (the simulator's clock before host models; no draw).
    #[default]
    Zero,
    /// Uniform over one tick, drawn per run from its seed: a machine's jiffies count from its boot.
    Random,
}

/// The tick-phase names, in the order error messages list them.
pub const TICK_PHASES: [&str; 2] = ["zero", "random"];

/// A group's host, resolved: every parameter in base units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub preset: HostPreset,
    /// Each flow starts within `[start, start + start_jitter_ns)`.
    pub start_jitter_ns: u64,
    /// The k-th flow due at one instant (in flow order, over the groups) starts `k × start_spacing_ns`
    /// after it, before its jitter.
    #[serde(default)]
    pub start_spacing_ns: u64,
    pub noise: Noise,
    /// The mean per-packet processing delay at each end.
    pub noise_scale_ns: u64,
    /// The fixed part of each end's turnaround (the receiver's from a segment to its ACK, the sender's from
    /// an ACK to the data it releases): every flow's loop is `2 × turnaround_ns` longer than its base RTT.
    #[serde(default)]
    pub turnaround_ns: u64,
    /// The pacing timer fires within `[deadline, deadline + pacing_slack_ns)`.
    pub pacing_slack_ns: u64,
    /// The delayed-ACK timer fires at the first multiple of this (on the tick grid) at or after its
    /// deadline (0: exactly).
    pub delack_granularity_ns: u64,
    /// The host kernel's `HZ`: the jiffies clock of its congestion control (Cubic, BBR).
    #[serde(default = "default_hz")]
    pub hz: u32,
    /// Where its ticks fall on the run's clock.
    #[serde(default)]
    pub tick_phase: TickPhase,
    /// Unpaced flows send TSO bursts too (paced flows always do).
    #[serde(default)]
    pub tso: bool,
    /// The sending host's NIC serializes its segments at this rate (0: infinitely fast).
    #[serde(default)]
    pub nic_rate_bps: u64,
    /// The receiving host coalesces segments (GRO) arriving within `gro_flush_ns` of an aggregate's first.
    #[serde(default)]
    pub gro: bool,
    #[serde(default)]
    pub gro_flush_ns: u64,
    /// The receiver models its receive window (buffer, autotuning, the window it offers).
    #[serde(default)]
    pub rcv_window: bool,
    /// The receive buffer grows (Linux's `tcp_moderate_rcvbuf`).
    #[serde(default = "default_true")]
    pub rcv_autotune: bool,
    /// Linux's `tcp_rmem`: min, default (initial), max (autotuning cap), bytes.
    #[serde(default = "default_rmem")]
    pub rmem_bytes: [u32; 3],
    /// The payload's share of the receive buffer, in 1/256.
    #[serde(default = "default_scaling_ratio")]
    pub rcv_scaling_ratio: u32,
    /// The route's `initrwnd`: the receiver's first window in segments at most (0: Linux's default).
    #[serde(default)]
    pub rcv_initial_window: u32,
}

/// Linux `TCP_DEFAULT_SCALING_RATIO` (128/256): the payload's share of the receive buffer until the first
/// data skb is measured.
pub const DEFAULT_SCALING_RATIO: u32 = 128;
/// Linux's `tcp_rmem` defaults (6.16 and later).
pub const LINUX_RMEM: [u32; 3] = [4096, 131_072, 32 << 20];
/// The largest `initrwnd` a route takes (`ip route ... initrwnd`, a route metric of 16 bits).
const MAX_INITIAL_WINDOW: i128 = 65_535;
/// The largest `tcp_rmem` value Linux accepts (an int).
const RMEM_LIMIT: i128 = i32::MAX as i128;

fn default_true() -> bool {
    true
}

fn default_hz() -> u32 {
    1000
}

fn default_rmem() -> [u32; 3] {
    LINUX_RMEM
}

fn default_scaling_ratio() -> u32 {
    DEFAULT_SCALING_RATIO
}

impl Default for HostSpec {
    fn default() -> Self {
        HostSpec {
            preset: HostPreset::Ideal,
            start_jitter_ns: 0,
            start_spacing_ns: 0,
            noise: Noise::None,
            noise_scale_ns: 0,
            turnaround_ns: 0,
            pacing_slack_ns: 0,
            delack_granularity_ns: 0,
            hz: default_hz(),
            tick_phase: TickPhase::Zero,
            tso: false,
            nic_rate_bps: 0,
            gro: false,
            gro_flush_ns: 0,
            rcv_window: false,
            rcv_autotune: true,
            rmem_bytes: LINUX_RMEM,
            rcv_scaling_ratio: DEFAULT_SCALING_RATIO,
            rcv_initial_window: 0,
        }
    }
}

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const GBPS: u64 = 1_000_000_000;

// The `kernel-lab` preset: the kernel backend's hosts as the validation grid measured them (Linux 6.18.44,
// 2-vCPU VMs, AMD EPYC and Intel Xeon, 25-28 November 2026; `python/ccfair/studies/validate/truth.json`).
/// The kernel backend starts flows due together from one thread, each its initial window after the one
/// before it: 100 to 200 µs apart, in flow order (captured at the emulator's veth at 100 Mbit/s: 100, 156
/// and 201 µs), hence 150 µs apart plus a uniform spread of 50 µs.
pub const KERNEL_LAB_START_SPACING_NS: u64 = 150 * US;
pub const KERNEL_LAB_START_JITTER_NS: u64 = 50 * US;
/// The hosts' and the emulator's per-packet spread: the median over the grid's 46 cells of the exponential
/// each cell's loop spreads like (6 to 59 µs; `grid.kernel_loop`).
pub const KERNEL_LAB_NOISE_NS: u64 = 13 * US;
/// Half the median over the cells of what the loop's medians add to the configured RTT beyond that noise
/// (37 to 133 µs, median 52 µs): the emulator's hand-off lateness on each crossing and each host's
/// turnaround, timed at the emulator (`crates/ccfair-emu/src/turnaround.rs`).
pub const KERNEL_LAB_TURNAROUND_NS: u64 = 26 * US;
/// The kernel's TCP pacing timer (an hrtimer from the timer softirq, `tcp_pacing_check`) fires 17 µs late
/// on average (traced with `ccfair.devtools.pacing_latency`): a uniform slack of twice that, the same mean.
pub const KERNEL_LAB_PACING_SLACK_NS: u64 = 34 * US;
/// The truth's kernels run `CONFIG_HZ=250` (Debian's and Ubuntu's generic kernels).
pub const KERNEL_LAB_HZ: u32 = 250;
/// The kernel backend's receiver route's `initrwnd`: the largest initial window of the groups, 10.
pub const KERNEL_LAB_INITRWND: u32 = 10;

/// The values of `preset` for a group of base RTT `rtt_ns` (see the table in the module docs).
fn preset_values(preset: HostPreset, rtt_ns: u64) -> HostSpec {
    match preset {
        HostPreset::Ideal => HostSpec::default(),
        HostPreset::KernelLab => HostSpec {
            preset,
            start_jitter_ns: KERNEL_LAB_START_JITTER_NS,
            start_spacing_ns: KERNEL_LAB_START_SPACING_NS,
            noise: Noise::Exponential,
            noise_scale_ns: KERNEL_LAB_NOISE_NS,
            turnaround_ns: KERNEL_LAB_TURNAROUND_NS,
            pacing_slack_ns: KERNEL_LAB_PACING_SLACK_NS,
            delack_granularity_ns: 4 * MS,
            hz: KERNEL_LAB_HZ,
            tick_phase: TickPhase::Random,
            tso: true,
            nic_rate_bps: 10 * GBPS,
            gro: false,
            gro_flush_ns: 0,
            rcv_window: true,
            rcv_scaling_ratio: 160,
            rcv_initial_window: KERNEL_LAB_INITRWND,
            ..HostSpec::default()
        },
        HostPreset::Testbed => HostSpec {
            preset,
            start_jitter_ns: rtt_ns,
            noise: Noise::Exponential,
            noise_scale_ns: 5 * US,
            pacing_slack_ns: 10 * US,
            delack_granularity_ns: MS,
            hz: 1000,
            tick_phase: TickPhase::Random,
            tso: true,
            nic_rate_bps: 10 * GBPS,
            gro: true,
            gro_flush_ns: 16 * US,
            rcv_window: true,
            rcv_scaling_ratio: 160,
            rcv_initial_window: 0,
            ..HostSpec::default()
        },
        HostPreset::Home => HostSpec {
            preset,
            start_jitter_ns: rtt_ns,
            noise: Noise::Exponential,
            noise_scale_ns: 50 * US,
            pacing_slack_ns: 50 * US,
            delack_granularity_ns: 4 * MS,
            hz: 250,
            tick_phase: TickPhase::Random,
            tso: true,
            nic_rate_bps: GBPS,
            gro: true,
            gro_flush_ns: 50 * US,
            rcv_window: true,
            rcv_scaling_ratio: 160,
            rcv_initial_window: 0,
            ..HostSpec::default()
        },
    }
}

/// A preset's name as scenarios write it.
pub fn preset_name(preset: HostPreset) -> &'static str {
    PRESETS
        .into_iter()
        .find(|n| named::<HostPreset>("preset", n, &PRESETS).ok() == Some(preset))
        .expect("every preset is listed")
}

/// Reads one duration (or rate) key of a `[host]` table.
type WrittenDuration = fn(&HostInput) -> Option<&i128>;

/// A written duration or rate in base units: not negative, within 64 bits.
fn duration(field: String, v: i128) -> Result<u64, FieldError> {
    if v < 0 {
        return E::err(field, "must not be negative");
    }
    u64::try_from(v).map_err(|_| E::new(field, "is too large"))
}

/// A written `rmem`: three byte counts, min <= default <= max, each from 1 to 2^31 - 1 (Linux's int).
fn rmem(field: &str, values: &[i128]) -> Result<[u32; 3], FieldError> {
    let allowed = "three byte counts [min, default, max], min <= default <= max, each from 1 to 2147483647";
    let [min, default, max] = values else {
        return E::err(field, format!("expected {allowed}, got {} values", values.len()));
    };
    for v in [min, default, max] {
        if !(1..=RMEM_LIMIT).contains(v) {
            return E::err(field, format!("expected {allowed}, got {v}"));
        }
    }
    if min > default || default > max {
        return E::err(
            field,
            format!("expected {allowed}, got [{min}, {default}, {max}]"),
        );
    }
    Ok([*min as u32, *default as u32, *max as u32])
}

impl HostSpec {
    /// True for the ideal host, which the spec leaves out (so that a scenario without `[host]` keeps its
    /// spec, and with it its run ids).
    pub fn is_ideal(&self) -> bool {
        *self == HostSpec::default()
    }

    /// True if segments wait in the sending host between TCP and the wire (a processing delay, a NIC of
    /// finite rate): each then leaves the host by an event of its own, and TCP Small Queues applies.
    pub fn holds_segments(&self) -> bool {
        (self.noise != Noise::None && self.noise_scale_ns > 0) || self.nic_rate_bps > 0
    }

    /// The hosts' jiffies clock in a run of seed `seed`: this host's `HZ`, its ticks where `tick_phase`
    /// puts them. The phase is one draw per run, shared by every host of the run (as the kernel backend's
    /// endpoints share one kernel).
    pub fn jiffies(&self, seed: u64) -> Jiffies {
        let phase_ns = match self.tick_phase {
            TickPhase::Zero => 0,
            TickPhase::Random => Rng::stream(seed, StreamId::HostClock).next_u64(),
        };
        Jiffies::new(self.hz, phase_ns)
    }

    /// The GRO flush window, zero if the receiving host does not coalesce.
    pub fn gro_window_ns(&self) -> u64 {
        if self.gro { self.gro_flush_ns } else { 0 }
    }

    /// The host of a group of base RTT `rtt_ns`: the group's table (`group`, at field `group_field`) laid
    /// over the scenario's (`scenario`, at field `host`), the preset expanded, written parameters applied.
    pub fn resolve(
        scenario: Option<&HostInput>,
        group: Option<&HostInput>,
        group_field: &str,
        rtt_ns: u64,
    ) -> Result<HostSpec, FieldError> {
        // Each key from the group's table if it writes it, else from the scenario's; with the field it
        // came from, for errors.
        fn pick<'a, T>(
            scenario: Option<&'a HostInput>,
            group: Option<&'a HostInput>,
            group_field: &str,
            key: &str,
            get: impl Fn(&'a HostInput) -> Option<&'a T>,
        ) -> Option<(String, &'a T)> {
            if let Some(v) = group.and_then(&get) {
                return Some((format!("{group_field}.{key}"), v));
            }
            scenario.and_then(get).map(|v| (format!("host.{key}"), v))
        }
        let preset = match pick(scenario, group, group_field, "preset", |h| h.preset.as_ref()) {
            Some((field, name)) => named(&field, name, &PRESETS)?,
            None => DEFAULT_PRESET,
        };
        let mut spec = preset_values(preset, rtt_ns);
        let durations: [(&str, WrittenDuration, &mut u64); 8] = [
            (
                "start_jitter",
                |h| h.start_jitter_ns.as_ref(),
                &mut spec.start_jitter_ns,
            ),
            (
                "start_spacing",
                |h| h.start_spacing_ns.as_ref(),
                &mut spec.start_spacing_ns,
            ),
            (
                "noise_scale",
                |h| h.noise_scale_ns.as_ref(),
                &mut spec.noise_scale_ns,
            ),
            (
                "turnaround",
                |h| h.turnaround_ns.as_ref(),
                &mut spec.turnaround_ns,
            ),
            (
                "pacing_slack",
                |h| h.pacing_slack_ns.as_ref(),
                &mut spec.pacing_slack_ns,
            ),
            (
                "delack_granularity",
                |h| h.delack_granularity_ns.as_ref(),
                &mut spec.delack_granularity_ns,
            ),
            // A rate, but read as a duration is: a whole number of base units, not negative.
            ("nic_rate", |h| h.nic_rate_bps.as_ref(), &mut spec.nic_rate_bps),
            ("gro_flush", |h| h.gro_flush_ns.as_ref(), &mut spec.gro_flush_ns),
        ];
        for (key, get, value) in durations {
            if let Some((field, &v)) = pick(scenario, group, group_field, key, get) {
                *value = duration(field, v)?;
            }
        }
        if let Some((field, &v)) = pick(scenario, group, group_field, "hz", |h| h.hz.as_ref()) {
            if !HZ_VALUES.iter().any(|&hz| hz as i128 == v) {
                return E::err(
                    field,
                    format!("expected one of {HZ_VALUES:?} (Linux's CONFIG_HZ), got {v}"),
                );
            }
            spec.hz = v as u32;
            // A written HZ sets the delayed-ACK timer's tick too, unless that is written (or the host is
            // the ideal one, whose timers fire exactly).
            let delack_written = pick(scenario, group, group_field, "delack_granularity", |h| {
                h.delack_granularity_ns.as_ref()
            })
            .is_some();
            if !delack_written && spec.delack_granularity_ns != 0 {
                spec.delack_granularity_ns = 1_000_000_000 / spec.hz as u64;
            }
        }
        if let Some((field, name)) = pick(scenario, group, group_field, "tick_phase", |h| {
            h.tick_phase.as_ref()
        }) {
            spec.tick_phase = named(&field, name, &TICK_PHASES)?;
        }
        if let Some((field, name)) = pick(scenario, group, group_field, "noise", |h| h.noise.as_ref()) {
            spec.noise = named(&field, name, &NOISES)?;
        }
        if let Some((_, &on)) = pick(scenario, group, group_field, "tso", |h| h.tso.as_ref()) {
            spec.tso = on;
        }
        if let Some((_, &on)) = pick(scenario, group, group_field, "gro", |h| h.gro.as_ref()) {
            spec.gro = on;
        }
        if let Some((_, &on)) = pick(scenario, group, group_field, "rcv_window", |h| {
            h.rcv_window.as_ref()
        }) {
            spec.rcv_window = on;
        }
        if let Some((_, &on)) = pick(scenario, group, group_field, "rcv_autotune", |h| {
            h.rcv_autotune.as_ref()
        }) {
            spec.rcv_autotune = on;
        }
        if let Some((field, values)) = pick(scenario, group, group_field, "rmem", |h| h.rmem_bytes.as_ref()) {
            spec.rmem_bytes = rmem(&field, values)?;
        }
        if let Some((field, &v)) = pick(scenario, group, group_field, "rcv_scaling_ratio", |h| {
            h.rcv_scaling_ratio.as_ref()
        }) {
            if !(1..=255).contains(&v) {
                return E::err(
                    field,
                    format!("must be an integer from 1 to 255 (1/256 units), got {v}"),
                );
            }
            spec.rcv_scaling_ratio = v as u32;
        }
        if let Some((field, &v)) = pick(scenario, group, group_field, "rcv_initial_window", |h| {
            h.rcv_initial_window.as_ref()
        }) {
            if !(0..=MAX_INITIAL_WINDOW).contains(&v) {
                return E::err(
                    field,
                    format!(
                        "must be an integer from 0 (Linux's default) to {MAX_INITIAL_WINDOW} segments, got {v}"
                    ),
                );
            }
            spec.rcv_initial_window = v as u32;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn input(preset: Option<&str>, jitter_ns: Option<i128>) -> HostInput {
        HostInput {
            preset: preset.map(str::to_owned),
            start_jitter_ns: jitter_ns,
            ..Default::default()
        }
    }

    #[test]
    fn no_table_is_the_kernel_lab_host_and_ideal_is_one_word_away() {
        let h = HostSpec::resolve(None, None, "flows[0].host", 50 * MS).unwrap();
        assert_eq!(h, preset_values(HostPreset::KernelLab, 50 * MS));
        assert_eq!((h.hz, h.gro, h.tso), (250, false, true));
        assert_eq!(h.turnaround_ns, KERNEL_LAB_TURNAROUND_NS);
        // A table without a preset is laid over the default too.
        let h = HostSpec::resolve(Some(&input(None, Some(0))), None, "g", 50 * MS).unwrap();
        assert_eq!((h.preset, h.start_jitter_ns), (HostPreset::KernelLab, 0));
        let h = HostSpec::resolve(Some(&input(Some("ideal"), None)), None, "g", 50 * MS).unwrap();
        assert!(h.is_ideal());
        assert_eq!(h.start_jitter_ns, 0);
    }

    #[test]
    fn non_ideal_presets_jitter_starts_by_one_rtt() {
        for name in ["testbed", "home"] {
            let h =
                HostSpec::resolve(Some(&input(Some(name), None)), None, "flows[0].host", 30 * MS).unwrap();
            assert_eq!(h.start_jitter_ns, 30 * MS, "{name}");
            assert!(!h.is_ideal());
        }
    }

    #[test]
    fn the_group_table_overrides_the_scenario_table_key_by_key() {
        let scenario = input(Some("testbed"), Some(7 * MS as i128));
        // The group changes the preset only: the scenario's jitter still applies.
        let h = HostSpec::resolve(Some(&scenario), Some(&input(Some("home"), None)), "g", 30 * MS).unwrap();
        assert_eq!((h.preset, h.start_jitter_ns), (HostPreset::Home, 7 * MS));
        // The group's own jitter wins.
        let h = HostSpec::resolve(Some(&scenario), Some(&input(None, Some(0))), "g", 30 * MS).unwrap();
        assert_eq!((h.preset, h.start_jitter_ns), (HostPreset::Testbed, 0));
        // An explicit ideal group under a testbed scenario without a written jitter is ideal.
        let h = HostSpec::resolve(
            Some(&input(Some("testbed"), None)),
            Some(&input(Some("ideal"), None)),
            "g",
            1,
        )
        .unwrap();
        assert!(h.is_ideal());
    }

    #[test]
    fn hz_sets_the_clock_and_the_delayed_ack_tick() {
        let with = |hz: Option<i128>, delack: Option<i128>, preset: &str| HostInput {
            preset: Some(preset.to_owned()),
            hz,
            delack_granularity_ns: delack,
            ..Default::default()
        };
        let h = HostSpec::resolve(Some(&with(Some(250), None, "testbed")), None, "g", MS).unwrap();
        assert_eq!(
            (h.hz, h.delack_granularity_ns, h.tick_phase),
            (250, 4 * MS, TickPhase::Random)
        );
        // A written granularity wins over the tick.
        let h = HostSpec::resolve(
            Some(&with(Some(250), Some(2 * MS as i128), "testbed")),
            None,
            "g",
            MS,
        )
        .unwrap();
        assert_eq!((h.hz, h.delack_granularity_ns), (250, 2 * MS));
        // The ideal host's delayed-ACK timer stays exact.
        let h = HostSpec::resolve(Some(&with(Some(250), None, "ideal")), None, "g", MS).unwrap();
        assert_eq!((h.hz, h.delack_granularity_ns), (250, 0));
        assert!(!h.is_ideal());
        let e = HostSpec::resolve(Some(&with(Some(200), None, "testbed")), None, "g", MS).unwrap_err();
        assert!(e.says("host.hz", "[100, 250, 300, 1000]"), "{e}");
    }

    #[test]
    fn a_random_tick_phase_is_drawn_per_seed_and_a_zero_one_is_not() {
        let testbed = HostSpec::resolve(Some(&input(Some("home"), None)), None, "g", MS).unwrap();
        let phases: Vec<u64> = (1..=20).map(|seed| testbed.jiffies(seed).phase_ns()).collect();
        assert!(phases.iter().all(|&p| p < 4 * MS));
        assert_eq!(testbed.jiffies(7), testbed.jiffies(7));
        let distinct: std::collections::BTreeSet<u64> = phases.iter().copied().collect();
        assert!(distinct.len() > 15, "{phases:?}");
        let ideal = HostSpec::default();
        assert_eq!(ideal.jiffies(7), Jiffies::HZ1000);
        let phase = TickPhase::Zero;
        let zero = HostSpec {
            tick_phase: phase,
            ..testbed
        };
        assert_eq!(zero.jiffies(7).phase_ns(), 0);
    }

    #[test]
    fn errors_name_the_table_the_value_came_from() {
        let e = HostSpec::resolve(Some(&input(Some("lab"), None)), None, "flows[2].host", MS).unwrap_err();
        assert!(
            e.says("host.preset", "'kernel-lab', 'ideal', 'testbed', 'home'"),
            "{e}"
        );
        let e = HostSpec::resolve(None, Some(&input(None, Some(-1))), "flows[2].host", MS).unwrap_err();
        assert_eq!(e.field, "flows[2].host.start_jitter");
    }
}
