"""The validation grid: a designed list of small scenarios (cells), each run on the kernel backend and in
the simulator with each host preset, so the simulator's numbers can be checked against real Linux TCP.

The cells span what the literature's headline fairness findings rest on, one question per cell rather than
a full factorial (which would take days of kernel wall time):

- pairs of Reno, Cubic and BBRv1 at 10 Mbps, 50 ms, 1 BDP (Rüth et al. 2019's setting, the common testbed
  baseline), the two known disagreements among them (Reno against Cubic at 20 ms; Cubic against Cubic with
  the second flow 5 s later);
- BBR against Cubic over buffers from 0.25 to 32 BDP (Hock et al. 2017, Ware et al. 2019: BBR's share falls
  as the buffer grows) and in both start orders;
- RTT unfairness: two flows at 10 and 100 ms per algorithm (loss-based favours the short RTT, BBR the long);
- mixes: 1 BBR against 8 and 16 Cubic (Philip et al. 2021: a single BBR flow takes about 40 %), equal
  numbers of Reno and Cubic, three algorithms together, 10 and 50 Cubic flows (Jain's index with many flows);
- staggered starts of 4 flows (convergence);
- every queue discipline the emulator runs (fifo, codel, fq_codel, pie, red) with BBR against Cubic;
- link rates from 10 to 200 Mbps, what ``ccfair doctor`` measured clean on the loaded 2-core machine where
  the truth was taken (500 Mbps and up were not: see docs/explanation/validation.md);
- random path loss from 1 to 20 % for one Cubic or BBR flow at 100 Mbps, 100 ms, 1 BDP (Cardwell et al.
  2016: BBR keeps its rate up to about 15 % loss, where Cubic's collapses).

Durations are just long enough to converge (the measurement window starts after slow start and, with a
later flow, after it joined): kernel time is wall time, and the whole kernel grid at 3 repetitions takes
about 35 minutes.

A cell whose kernel runs spread more than a target it is judged by runs ``repetition_factor`` times the
grid's repetitions on both sides: with Jain's index spreading by more than the 0.05 target from run to run
(a standard deviation of 0.051 to 0.108 over the first 10 kernel runs of ``bbr-bbr-late``,
``bbr-staggered-4``, ``10bbr``, ``cubic-rtt-10-100`` and ``cubic-cubic-100M``), a model with the kernel's
true mean would miss the target often at 10 runs a side (the mean |gap| from the repetitions alone,
sqrt(2/pi) x sd x sqrt(2/10), is 0.03 to 0.04), and at 30 about half as often.

A cell may carry a host variant (``offloads``): ``"off"`` is the kernel backend with every offload off on
the veths, ``"on"`` adds ``[host] tso = true, gro = true`` on both sides. Offloads off on a veth do not make
Linux TCP send segment by segment: TCP always builds multi-segment skbs (``sk_setup_caps`` gives every TCP
socket software GSO since "tcp: switch to GSO being always on", Linux 4.17), sized by ``tcp_tso_autosize`` and
deferred by ``tcp_tso_should_defer`` as with TSO; only where they are cut into wire packets moves (in
``dev_queue_xmit`` instead of after the veth). The simulator's counterpart is ``tso = true`` (bursts of
autosized segments leaving back to back, at the testbed NIC's 10 Gbit/s), with ``gro = false``: with GRO off
the receiving kernel sees, and ACKs, every segment on its own. The ``"on"`` cells add receive coalescing.

The simulator has three sides. ``ideal`` hosts. ``kernel-lab``, the default hosts as a user gets them:
the kernel backend's hosts as this grid measured them (``crates/ccfair-scenario/src/host.rs`` gives each
value's provenance). ``kernel-lab-loop``, the like-for-like check: the same hosts going round the loop the
cell's own kernel runs measured. What ``kernel-lab`` carries of the kernel side: its start, as the kernel
backend starts a cell's flows at one epoch from one sender thread that writes to its flows in turn, and Linux
sends a flow's initial window inside its first write, so flows due at the same time reach the bottleneck in
flow order, each 100 to 200 us after the one before (captured at the emulator's veth at 100 Mbit/s: 100, 156
and 201 us): ``start_spacing`` 150 us and a start jitter of 50 us. That order decides whose slow-start
bursts queue behind whose, and so where Cubic's HyStart ends a slow start (``tests/test_hystart_exit.py``).
The kernel's clock: the truth's kernels run ``CONFIG_HZ=250`` (recorded in the truth's provenance), so
Cubic reads time in 4 ms jiffies and the delayed-ACK timer fires on 4 ms ticks, at a phase that differs from
run to run. GSO bursts without receive coalescing, as the grid's veths have their offloads off (the
``"on"`` cells add it). The pacing timer: the kernel backend's senders pace inside TCP, with an hrtimer
armed without a slack range that fires from the timer softirq (``tcp_pacing_check``,
``net/ipv4/tcp_output.c``), late by a mean of 17 us (traced with ``ccfair.devtools.pacing_latency``); the
preset's timer fires within a uniform slack of twice that, the same mean (the kernel's lateness has a floor
of about 11 us and a tail; half of it comes back as credit to the next gap in both,
``tcp_update_skb_after_send``, so its mean is what moves a paced flow's rate). And the loop: the kernel
side's flows go round a longer loop than their configured RTT. The emulator hands each frame on late by a
measured median (its departure lateness, 11 to 41 us by rate, in every truth run's health), once on the data
path and once on the ACK path, and the hosts take time to turn a segment into an ACK and an ACK into new
data (the veths, softirq, TCP and the transmit path: tens of microseconds, timed at the emulator,
``crates/ccfair-emu/src/turnaround.rs``). With every flow on one bottleneck, which flow finds the room a
departure makes is decided by where the ACK clock falls between departures, and a cell can swing by a
quarter of the link within one packet time of loop delay (docs/explanation/validation.md); the loop's
spread smears that phase where a packet time is short. The preset carries the medians over the cells of
what each cell's loop measured (``kernel_loop``): a per-packet noise that spreads like the loop's, and a
fixed ``turnaround`` at each end for what the loop's medians exceed that noise's by; the loop side carries
its own cell's, over the same buffer (``base_rtt`` stays the configured one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ccfair.catalog import catalog
from ccfair.errors import InputError
from ccfair.sweep.identity import SIMULATOR
from ccfair.sweep.plan import Plan, plan_from_dict

PLAN_PREFIX = "validate-"
# The simulator's sides of the comparison: the ideal hosts, the default preset's hosts as a user gets them,
# and the same hosts going round the loop each cell's kernel runs measured (module docs).
SIDES = ("ideal", "kernel-lab", "kernel-lab-loop")
SIDE_PRESETS = {"ideal": "ideal", "kernel-lab": "kernel-lab", "kernel-lab-loop": "kernel-lab"}
LOOP_SIDES = frozenset({"kernel-lab-loop"})
OFFLOADS = ("off", "on")
# Ten, not three: the spread target compares standard deviations, and one from three runs is uncertain by a
# factor of two, so with three runs a side even a model whose runs spread as the kernel's misses the 2x band
# in 40 % of the cells; with ten, in 5 % (see compare.spread_agreement_chance).
DEFAULT_REPETITIONS = 10
# The repetition factor of the cells whose kernel Jain's index spreads more than its target (module docs).
WIDE = 3
PLAN_SEED = 20261124
# The host table of the "on" variant, on both backends (the keys the offload models add), and the receive
# coalescing window the simulated hosts then use (the testbed preset's, mlx5's default rx-usecs).
OFFLOAD_HOST = {"tso": True, "gro": True}
SIM_GRO_FLUSH = {"gro_flush": "16us"}


def preset_values(name: str) -> dict[str, Any]:
    """A host preset's resolved values (``crates/ccfair-scenario/src/host.rs``), from the catalog."""
    values: dict[str, Any] = next(p["values"] for p in catalog()["host_presets"] if p["name"] == name)
    return values


@dataclass(frozen=True)
class KernelLoop:
    """What the kernel side's loop adds to its configured RTT, as the loop side models it (module docs):
    the hosts' fixed turnaround lengthens every flow's loop by ``excess_ns`` in all, and each host's
    per-packet noise is an exponential of mean ``noise_mean_ns``. ``NO_LOOP`` (zeros): not measured, the
    preset's own values."""

    excess_ns: int = 0
    noise_mean_ns: int = 0


NO_LOOP = KernelLoop()


def _exponential_mean(low_ns: float, high_ns: float, q_low: float, q_high: float) -> float:
    """The mean of the exponential whose quantiles ``q_low`` and ``q_high`` lie ``high - low`` apart."""
    return (high_ns - low_ns) / math.log((1 - q_low) / (1 - q_high))


def kernel_loop(
    lateness_p50_ns: float,
    lateness_p99_ns: float,
    receiver_ns: tuple[float, float, float],
    sender_ns: tuple[float, float, float],
) -> KernelLoop:
    """The kernel loop of a cell from what its runs measured (NaN: not measured): the emulator's departure
    lateness (p50, p99; once on the data and once on the ACK crossing) and each host's turnaround (p10, p50,
    p90). Each simulated end stands for one host and one crossing of the emulator: its noise is the
    exponential that spreads like both together (the variances of the host's, from its p10..p90, and the
    emulator's, from its p50..p99, added), and the paths are lengthened by what the loop's medians exceed the
    two ends' noise medians by (never shortened). A sender whose flows all pace has no turnaround of its own
    to time (its data waits for the pacing timer); the receiver's, the same kernel on the same CPUs, stands
    in for it. Without turnaround the preset's host noise stands for the hosts'."""
    if any(math.isnan(x) for x in sender_ns):
        sender_ns = receiver_ns
    lateness_p50_ns = 0.0 if math.isnan(lateness_p50_ns) else lateness_p50_ns
    emulator = (
        0.0 if math.isnan(lateness_p99_ns) else _exponential_mean(lateness_p50_ns, lateness_p99_ns, 0.5, 0.99)
    )
    hosts_measured = not any(math.isnan(x) for x in receiver_ns)
    if hosts_measured:
        host_sq = sum(_exponential_mean(e[0], e[2], 0.1, 0.9) ** 2 for e in (receiver_ns, sender_ns)) / 2
    else:
        host_sq = float(preset_values(SIDE_PRESETS["kernel-lab-loop"])["noise_scale_ns"]) ** 2
    noise_mean = math.sqrt(host_sq + emulator**2)
    loop = 2 * lateness_p50_ns + (receiver_ns[1] + sender_ns[1] if hosts_measured else 0.0)
    return KernelLoop(max(0, round(loop - 2 * math.log(2) * noise_mean)), round(noise_mean))


@dataclass(frozen=True)
class Cell:
    """One scenario of the grid. ``flows`` are flow groups as in a scenario (each with a ``label``, which
    names its class in the comparison: groups with one label form one class)."""

    name: str
    what: str  # the question the cell asks, for tables
    rate: str
    buffer: str
    flows: tuple[dict[str, Any], ...]
    duration: str
    measure_start: str
    aqm: str | dict[str, Any] = "fifo"
    offloads: str = "off"
    base_rtt: str | None = None
    headline: str = field(default="share")  # the metric whose repetition spread is compared
    repetition_factor: int = 1  # runs per side: this many times the grid's repetitions (module docs)
    # When the cell's connections open (every group's ``connect``): the cells measured before the kernel
    # backend opened connections at their flows' starts keep "before_run", as their truth was taken.
    connect: str = "before_run"
    # At most this many runs a side (the long cells: five-minute kernel runs), None: no cap.
    max_runs: int | None = None

    def runs(self, repetitions: int) -> int:
        """How many runs the cell takes on each side when the grid runs ``repetitions``."""
        runs = repetitions * self.repetition_factor
        return runs if self.max_runs is None else min(runs, self.max_runs)

    def classes(self) -> list[str]:
        return list(dict.fromkeys(g["label"] for g in self.flows))

    def scenario(self, preset: str | None, loop: KernelLoop = NO_LOOP) -> dict[str, Any]:
        """The cell's scenario document; ``preset`` is the simulator's host preset (None: the kernel's, whose
        default preset is the machine as it comes). A kernel-like preset's hosts go round the kernel side's
        ``loop`` when it was measured: their per-packet noise is the loop's, and their fixed turnaround
        lengthens the flows' loops by what it measured (the buffer and the base RTT stay the configured
        ones)."""
        link: dict[str, Any] = {"rate": self.rate, "buffer": self.buffer, "aqm": self.aqm}
        if self.base_rtt is not None:
            link["base_rtt"] = self.base_rtt
        doc: dict[str, Any] = {
            "duration": self.duration,
            "measure": {"start": self.measure_start},
            "link": link,
            "flows": [{**g, "connect": self.connect} for g in self.flows],
        }
        host: dict[str, Any] = {}
        if preset is not None:
            host["preset"] = preset
        if preset is not None and preset != "ideal" and loop != NO_LOOP:
            host["noise_scale"] = f"{loop.noise_mean_ns}ns"
            host["turnaround"] = f"{loop.excess_ns // 2}ns"
        if self.offloads == "on":
            host.update(OFFLOAD_HOST)
            if preset is not None and preset != "ideal":
                host.update(SIM_GRO_FLUSH)
        if host:
            doc["host"] = host
        return doc


def flow(cc: str, label: str | None = None, *, rtt: str = "50ms", **more: Any) -> dict[str, Any]:
    """A flow group; its label defaults to the algorithm (and RTT when given a label such as 'cubic 10ms')."""
    return {"cc": cc, "rtt": rtt, "label": label or cc, **more}


def _pair(name: str, what: str, a: str, b: str, *, buffer: str = "1bdp", **kw: Any) -> Cell:
    """Two flows of algorithms ``a`` and ``b`` (labels ``a`` and ``b``, suffixed when equal)."""
    la, lb = (a, b) if a != b else (f"{a} 1", f"{b} 2")
    start_b = kw.pop("start_b", "0s")
    rtt = kw.pop("rtt", "50ms")
    kw.setdefault("rate", "10Mbps")
    kw.setdefault("duration", "15s")
    kw.setdefault("measure_start", "5s")
    return Cell(
        name,
        what,
        buffer=buffer,
        flows=(flow(a, la, rtt=rtt), flow(b, lb, rtt=rtt, start=start_b)),
        **kw,
    )


def _mix(
    name: str,
    what: str,
    rate: str,
    groups: list[tuple[str, int]],
    *,
    buffer: str = "1bdp",
    headline: str = "share",
    repetition_factor: int = 1,
) -> Cell:
    """Groups of (algorithm, flow count) at 20 ms, started together, measured from 5 s of 15 s."""
    flows = tuple({**flow(cc, rtt="20ms"), **({"count": n} if n > 1 else {})} for cc, n in groups)
    return Cell(
        name,
        what,
        rate=rate,
        buffer=buffer,
        flows=flows,
        duration="15s",
        measure_start="5s",
        headline=headline,
        repetition_factor=repetition_factor,
    )


def _loss(cc: str, percent: int) -> Cell:
    return Cell(
        f"loss-{cc}-{percent}pct",
        f"one {cc} flow, {percent} % random loss",
        rate="100Mbps",
        buffer="1bdp",
        flows=(flow(cc, rtt="100ms", loss=percent / 100),),
        duration="15s",
        measure_start="5s",
        headline="utilization",
    )


CELLS: tuple[Cell, ...] = (
    # Pairs at the common baseline, 10 Mbps, 50 ms, 1 BDP.
    _pair("reno-cubic-20ms", "Reno vs Cubic, 20 ms", "reno", "cubic", rtt="20ms"),
    _pair("reno-cubic", "Reno vs Cubic", "reno", "cubic"),
    _pair("reno-reno", "Reno vs Reno", "reno", "reno"),
    _pair("cubic-cubic", "Cubic vs Cubic", "cubic", "cubic"),
    _pair(
        "cubic-cubic-late",
        "Cubic vs Cubic, second 5 s later",
        "cubic",
        "cubic",
        start_b="5s",
        duration="30s",
        measure_start="10s",
    ),
    _pair("bbr-bbr", "BBR vs BBR", "bbr", "bbr"),
    # The newcomer against an established BBR flow (the first-flow lead of the staggered cells, in two flows).
    _pair(
        "bbr-bbr-late",
        "BBR vs BBR, second 3 s later, 20 Mbps 20 ms",
        "bbr",
        "bbr",
        rate="20Mbps",
        rtt="20ms",
        start_b="3s",
        duration="13s",
        measure_start="5s",
        repetition_factor=WIDE,
    ),
    # BBR against Cubic over the buffer size, and in both start orders.
    _pair("bbr-cubic-0.25bdp", "BBR vs Cubic, 0.25 BDP", "bbr", "cubic", buffer="0.25bdp"),
    _pair("bbr-cubic-0.5bdp", "BBR vs Cubic, 0.5 BDP", "bbr", "cubic", buffer="0.5bdp"),
    _pair("bbr-cubic-2bdp", "BBR vs Cubic, 2 BDP", "bbr", "cubic", buffer="2bdp"),
    _pair("bbr-cubic-8bdp", "BBR vs Cubic, 8 BDP", "bbr", "cubic", buffer="8bdp", duration="20s"),
    _pair(
        "bbr-cubic-32bdp",
        "BBR vs Cubic, 32 BDP, 20 Mbps 10 ms",
        "bbr",
        "cubic",
        buffer="32bdp",
        rate="20Mbps",
        rtt="10ms",
        duration="20s",
        measure_start="6s",
    ),
    _pair(
        "cubic-then-bbr-2bdp",
        "Cubic first, BBR 5 s later, 2 BDP",
        "cubic",
        "bbr",
        buffer="2bdp",
        start_b="5s",
        duration="22s",
        measure_start="10s",
    ),
    _pair(
        "bbr-then-cubic-2bdp",
        "BBR first, Cubic 5 s later, 2 BDP",
        "bbr",
        "cubic",
        buffer="2bdp",
        start_b="5s",
        duration="22s",
        measure_start="10s",
    ),
    # RTT unfairness: 10 ms against 100 ms, 20 Mbps, 1 BDP of the long RTT.
    *(
        Cell(
            f"{cc}-rtt-10-100",
            f"{cc.capitalize() if cc != 'bbr' else 'BBR'} 10 ms vs 100 ms",
            rate="20Mbps",
            buffer="1bdp",
            base_rtt="100ms",
            flows=(flow(cc, f"{cc} 10ms", rtt="10ms"), flow(cc, f"{cc} 100ms", rtt="100ms")),
            duration="20s",
            measure_start="6s",
            repetition_factor=WIDE if cc == "cubic" else 1,
        )
        for cc in ("reno", "cubic", "bbr")
    ),
    # Mixes and many flows.
    _mix("bbr-vs-8cubic", "1 BBR vs 8 Cubic", "50Mbps", [("bbr", 1), ("cubic", 8)]),
    _mix("bbr-vs-16cubic", "1 BBR vs 16 Cubic", "100Mbps", [("bbr", 1), ("cubic", 16)]),
    _mix("5reno-5cubic", "5 Reno vs 5 Cubic", "50Mbps", [("reno", 5), ("cubic", 5)]),
    _mix(
        "reno-cubic-bbr-2each",
        "2 Reno, 2 Cubic, 2 BBR, 2 BDP",
        "20Mbps",
        [("reno", 2), ("cubic", 2), ("bbr", 2)],
        buffer="2bdp",
    ),
    _mix("10cubic", "10 Cubic", "50Mbps", [("cubic", 10)], headline="jain"),
    _mix("50cubic", "50 Cubic", "100Mbps", [("cubic", 50)], headline="jain"),
    _mix("10bbr", "10 BBR", "50Mbps", [("bbr", 10)], headline="jain", repetition_factor=WIDE),
    # Staggered starts: four flows 3 s apart; the window opens after the last joined.
    *(
        Cell(
            f"{cc}-staggered-4",
            f"4 {cc.capitalize() if cc != 'bbr' else 'BBR'} started 3 s apart",
            rate="20Mbps",
            buffer="1bdp",
            flows=tuple(flow(cc, f"{cc} {i + 1}", rtt="20ms", start=f"{3 * i}s") for i in range(4)),
            duration="21s",
            measure_start="11s",
            repetition_factor=WIDE if cc == "bbr" else 1,
        )
        for cc in ("cubic", "bbr")
    ),
    # Queue disciplines through the emulator: BBR against Cubic, 20 Mbps, 20 ms, 4 BDP of buffer.
    *(
        _pair(
            f"bbr-cubic-{aqm}",
            f"BBR vs Cubic, {aqm}",
            "bbr",
            "cubic",
            buffer="4bdp",
            rate="20Mbps",
            rtt="20ms",
            aqm=aqm,
        )
        for aqm in ("fifo", "codel", "fq_codel", "pie", "red")
    ),
    _pair("reno-cubic-codel", "Reno vs Cubic, codel", "reno", "cubic", buffer="4bdp", aqm="codel"),
    # Link rates.
    _pair(
        "cubic-cubic-100M",
        "Cubic vs Cubic, 100 Mbps 20 ms",
        "cubic",
        "cubic",
        rate="100Mbps",
        rtt="20ms",
        repetition_factor=WIDE,
    ),
    _pair(
        "reno-cubic-100M", "Reno vs Cubic, 100 Mbps 50 ms", "reno", "cubic", rate="100Mbps", duration="20s"
    ),
    _pair("bbr-cubic-100M", "BBR vs Cubic, 100 Mbps 20 ms", "bbr", "cubic", rate="100Mbps", rtt="20ms"),
    _pair(
        "cubic-cubic-200M",
        "Cubic vs Cubic, 200 Mbps 10 ms",
        "cubic",
        "cubic",
        rate="200Mbps",
        rtt="10ms",
        duration="12s",
        measure_start="4s",
    ),
    # Random loss, one flow, 100 Mbps, 100 ms, 1 BDP.
    *(_loss("cubic", p) for p in (1, 5)),
    *(_loss("bbr", p) for p in (1, 5, 10, 15, 20)),
    # What the studies rest on, with connections opened at their flows' starts as the papers' testbeds did:
    # a later flow's handshake crosses the queue the earlier one keeps standing.
    Cell(
        "bbr-after-cubic-8bdp",
        "Cubic, then BBR 5 s later through its 8-BDP queue (connections at start)",
        rate="10Mbps",
        buffer="333pkt",
        flows=(flow("cubic", start="50ms"), flow("bbr", start="5050ms")),
        duration="45s",
        measure_start="10s",
        connect="at_start",
    ),
    *(
        _pair(
            f"{cc}-{cc}-late-{buffer}-at-start",
            f"{'BBR' if cc == 'bbr' else 'Cubic'} vs {'BBR' if cc == 'bbr' else 'Cubic'}, second 5 s later, "
            f"{buffer.removesuffix('bdp')} BDP (connections at start)",
            cc,
            cc,
            buffer=buffer,
            start_b="5s",
            duration="30s",
            measure_start="10s",
            connect="at_start",
        )
        for cc in ("cubic", "bbr")
        for buffer in ("0.5bdp", "2bdp")
    ),
    # Rueth et al.'s pairs: the second flow 5 s later, 50 Mbps 100 ms 2 BDP; the Cubic pair over 60 s, as
    # convergence at this BDP (417 packets of 1500 bytes) takes tens of seconds.
    *(
        _pair(
            f"rueth-cubic-then-{cc}-50M-100ms",
            f"Cubic, then {'BBR' if cc == 'bbr' else 'Cubic'} 5 s later, 50 Mbps 100 ms 2 BDP"
            f"{', 60 s' if duration == '60s' else ''} (Rueth et al.; connections at start)",
            "cubic",
            cc,
            buffer="2bdp",
            rate="50Mbps",
            rtt="100ms",
            start_b="5s",
            duration=duration,
            measure_start="10s",
            connect="at_start",
        )
        for cc, duration in (("bbr", "30s"), ("cubic", "60s"))
    ),
    # Long runs, for what only they show: one BBR flow against 16 Cubic in a deep buffer, and many BBR flows
    # on one short path (reported unfair in the literature), five minutes each.
    Cell(
        "bbr-vs-16cubic-32bdp-long",
        "1 BBR vs 16 Cubic, 32 BDP, 50 Mbps 20 ms, 300 s (connections at start)",
        rate="50Mbps",
        buffer="32bdp",
        flows=(flow("bbr", rtt="20ms"), {**flow("cubic", rtt="20ms"), "count": 16}),
        duration="300s",
        measure_start="60s",
        connect="at_start",
        max_runs=5,
    ),
    Cell(
        "25bbr-20ms-long",
        "25 BBR, 50 Mbps 20 ms, 1 BDP, 300 s (connections at start)",
        rate="50Mbps",
        buffer="1bdp",
        flows=({**flow("bbr", rtt="20ms"), "count": 25},),
        duration="300s",
        measure_start="60s",
        headline="jain",
        connect="at_start",
        max_runs=5,
    ),
)
# Offloads on (TSO at the senders, GRO at the receiver), three of the cells above again: pending until both
# backends take the keys.
CELLS += tuple(
    replace(cell, name=f"{cell.name}-offloads", what=f"{cell.what}, offloads on", offloads="on")
    for cell in CELLS
    if cell.name in ("reno-cubic", "bbr-cubic-100M", "cubic-cubic-200M")
)


def cell_names() -> list[str]:
    return [c.name for c in CELLS]


def select(names: Sequence[str] | None) -> list[Cell]:
    """The cells named (all when None), in grid order; an unknown name is an error naming the option."""
    if not names:
        return list(CELLS)
    known = {c.name: c for c in CELLS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise InputError(
            "--cells", f"unknown cell {unknown[0]!r}; the cells: {', '.join(known)} (ccfair validate --list)"
        )
    wanted = set(names)
    return [c for c in CELLS if c.name in wanted]


def side_name(backend: str, side: str | None) -> str:
    """How a side of the comparison is named: ``kernel``, or one of ``SIDES``."""
    return side if backend == SIMULATOR and side is not None else backend


def plan_name(cell: Cell, side: str) -> str:
    return f"{PLAN_PREFIX}{side}-{cell.name}"


def cell_plan(
    cell: Cell,
    backend: str,
    side: str | None,
    repetitions: int,
    round_: int = 0,
    loop: KernelLoop = NO_LOOP,
) -> Plan:
    """The plan of one cell on one side: the cell's scenario, ``repetitions`` runs. Seeds come from the
    plan seed and the repetition only, so a larger count reuses the runs a store already has. A later
    ``round_`` of a kernel cell (a top-up of a stored truth) has its own plan seed, so its runs and seeds
    differ from those of the rounds before it; the simulator runs a kernel round's seeds as a plan of its
    own, named after the round. ``side``: one of ``SIDES`` (None on the kernel). ``loop``: the kernel side's
    loop as measured, which the loop side's hosts go round (:meth:`Cell.scenario`)."""
    name = plan_name(cell, side_name(backend, side)) + (
        f"-round-{round_}" if round_ and backend == SIMULATOR else ""
    )
    preset = None if side is None else SIDE_PRESETS[side]
    document = {
        "name": name,
        "backend": backend,
        "seed": PLAN_SEED + round_,
        "repetitions": repetitions,
        "scenario": cell.scenario(preset, loop if side in LOOP_SIDES else NO_LOOP),
    }
    return plan_from_dict(document, default_name=name)
