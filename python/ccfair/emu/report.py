"""The kernel run's extra section for the command line: provenance and the testbed's health (the
emulator's lateness, the endpoint programs' wait for a CPU)."""

from __future__ import annotations

import math
from typing import Any

from ccfair.tables import MISSING, render_pairs


def kernel_report(result: Any) -> str:
    s = result.summary

    def us(key: str) -> str:
        v = s.get(key)
        return MISSING if v is None or math.isnan(v) else f"{v / 1e3:.1f} us"

    def share(key: str) -> str:
        v = s.get(key)
        return MISSING if v is None or math.isnan(v) else f"{v * 100:.0f} % of the window"

    limited = s.get("emulator_limited")
    pairs = [
        ("backend", str(s.get("backend", MISSING))),
        ("kernel", str(s.get("kernel_release", MISSING))),
        ("congestion controls", str(s.get("congestion_controls", MISSING))),
        ("departure lateness p50", us("emulator_lateness_p50_ns")),
        ("departure lateness p99", us("emulator_lateness_p99_ns")),
        ("departure lateness max", us("emulator_lateness_max_ns")),
        ("data read after arrival p50", us("emulator_read_latency_p50_ns")),
        ("data read after arrival p99", us("emulator_read_latency_p99_ns")),
        ("ACKs read after arrival p50", us("emulator_ack_read_latency_p50_ns")),
        ("receiver turnaround p50", us("host_receiver_turnaround_p50_ns")),
        ("sender turnaround p50 (unpaced)", us("host_sender_turnaround_p50_ns")),
        ("sender waited for a CPU", share("sender_cpu_wait_share")),
        ("receiver waited for a CPU", share("receiver_cpu_wait_share")),
        ("testbed limited", f"YES: {s.get('emulator_note')}" if limited else "no"),
    ]
    sysctls = str(s.get("sysctls", ""))
    lines = ["", "Kernel run", render_pairs(pairs), "  sysctls set (per namespace):"]
    lines += [f"    {item}" for item in sysctls.split("; ") if item]
    return "\n".join(lines) + "\n"
