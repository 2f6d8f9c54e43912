"""Simulator and kernel side by side: the same scenario N times on each backend, and per metric the mean and
standard deviation over the repetitions of each, and the difference (kernel minus simulator).

Whether the simulator's repetitions came out identical (the same delivered bytes per flow: a deterministic
scenario, whose ±0 is no agreement) is said beside the table.

Metrics: the share of each class (flows with the same congestion control and RTT, named ``cc rtt``), Jain's
index, utilization, total goodput and the queue's sojourn p50/p99. Simulator repetitions use seeds
``seed, seed + 1, ...``; kernel repetitions are independent runs (the kernel is not deterministic).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

from ccfair.scenario import KernelScenario
from ccfair.tables import Column, fixed, render, text

Metric = tuple[str, Callable[[Any], float]]


def class_names(sc: KernelScenario) -> list[str]:
    """One name per flow group: ``cc rtt`` (groups with equal names form one class)."""
    return [f"{g.cc} {g.rtt_ns / 1e6:g}ms" for g in sc.flows]


def metrics_of(result: Any, names: list[str]) -> dict[str, float]:
    """The compared metrics of one run (a RunResult of either backend)."""
    flows = result.flows
    active = flows[flows["in_window"]]
    total = float(active["goodput_bps"].sum())
    out: dict[str, float] = {}
    for name in dict.fromkeys(names):
        groups = [g for g, n in enumerate(names) if n == name]
        share = (
            float(active[active["group"].isin(groups)]["goodput_bps"].sum()) / total if total else math.nan
        )
        out[f"share {name}"] = share
    s = result.summary

    def num(key: str, scale: float = 1.0) -> float:
        v = s.get(key)
        return math.nan if v is None else float(v) * scale

    out["jain index"] = num("jain_index")
    out["utilization"] = num("utilization")
    out["total goodput Mbps"] = num("total_goodput_bps", 1e-6)
    out["queue sojourn p50 ms"] = num("queue_sojourn_p50_ns", 1e-6)
    out["queue sojourn p99 ms"] = num("queue_sojourn_p99_ns", 1e-6)
    return out


def outcome_of(result: Any) -> tuple[int, ...]:
    """A run's exact outcome: each flow's delivered bytes, in flow order. Repetitions with equal outcomes
    are identical (:func:`ccfair.analysis.stats.identical`)."""
    flows = result.flows.sort_values("flow_id")
    return tuple(int(b) for b in flows["total_delivered_bytes"])


def identical_line(runs: int, identical: bool) -> str:
    """Whether the simulator's ``runs`` repetitions came out identical, and what that means."""
    if runs < 2:
        return "simulator: one run (--repetitions 2 or more shows its spread)"
    if not identical:
        return f"simulator: the {runs} repetitions differ (the sd is their spread)"
    return (
        f"simulator: the {runs} repetitions are identical (the same delivered bytes per flow), so its ±0 is "
        "no agreement: the scenario is deterministic in the simulator (ideal hosts, no random loss, BBR or "
        'random AQM draw); with the default hosts (no preset = "ideal") the simulator\'s repetitions vary '
        "as a testbed's do"
    )


def kernel_loop_ns(summary: Any) -> float:
    """How much longer a kernel run's loop was than its configured RTT, at the medians: the emulator's
    departure lateness on the data and on the ACK crossing, and the receiver's and the sender's turnaround
    timed at the emulator (the receiver's stands in for a sender whose flows all pace). NaN for a run from
    before the emulator timed the hosts."""

    def num(key: str) -> float:
        v = summary.get(key)
        return math.nan if v is None else float(v)

    receiver = num("host_receiver_turnaround_p50_ns")
    sender = num("host_sender_turnaround_p50_ns")
    if math.isnan(sender):
        sender = receiver
    return 2 * num("emulator_lateness_p50_ns") + receiver + sender


def loop_line(loops_ns: list[float]) -> str | None:
    """What the kernel side's loop added to the configured paths, and why it can matter; None when no run
    measured it."""
    xs = [x for x in loops_ns if not math.isnan(x)]
    if not xs:
        return None
    return (
        f"kernel: its loop was {statistics.fmean(xs) / 1e3:.0f} us longer than the configured RTT (the "
        "emulator's lateness on both crossings and the hosts' turnaround, medians); the simulator's paths "
        "are the configured ones, its testbed hosts add about 7 us. Where flows share one drop-tail "
        "bottleneck at equal RTTs the answer can move within one packet time of loop delay (docs/notes/"
        "validation-loop.md, 'The kernel loop')"
    )


def _mean_sd(values: list[float]) -> tuple[float, float]:
    xs = [v for v in values if not math.isnan(v)]
    if not xs:
        return math.nan, math.nan
    return statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0


def compare_table(sim: list[dict[str, float]], kernel: list[dict[str, float]]) -> list[dict[str, Any]]:
    """Rows: metric, sim_mean, sim_sd, kernel_mean, kernel_sd, difference (kernel - sim)."""
    rows = []
    for key in sim[0]:
        sm, ss = _mean_sd([r[key] for r in sim])
        km, ks = _mean_sd([r[key] for r in kernel])
        rows.append(
            {
                "metric": key,
                "sim_mean": sm,
                "sim_sd": ss,
                "kernel_mean": km,
                "kernel_sd": ks,
                "difference": km - sm,
            }
        )
    return rows


def render_table(rows: list[dict[str, Any]]) -> str:
    def pm(mean_key: str, sd_key: str) -> Callable[[Any], str]:
        return lambda row: (
            f"{row[mean_key]:.3f} ± {row[sd_key]:.3f}" if not math.isnan(row[mean_key]) else "-"
        )

    shown = [
        {**r, "sim": pm("sim_mean", "sim_sd")(r), "kernel": pm("kernel_mean", "kernel_sd")(r)} for r in rows
    ]
    columns = [
        Column("metric", "metric", text, "left"),
        Column("simulator (mean ± sd)", "sim", text),
        Column("kernel (mean ± sd)", "kernel", text),
        Column("kernel - simulator", "difference", fixed(3)),
    ]
    return render(shown, columns)
