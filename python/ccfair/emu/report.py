"""The kernel run's extra section for the command line: provenance and the emulator's health."""

from __future__ import annotations

from typing import Any

from ccfair.tables import MISSING, render_pairs


def kernel_report(result: Any) -> str:
    s = result.summary

    def us(key: str) -> str:
        v = s.get(key)
        return MISSING if v is None else f"{v / 1e3:.1f} us"

    limited = s.get("emulator_limited")
    pairs = [
        ("backend", str(s.get("backend", MISSING))),
        ("kernel", str(s.get("kernel_release", MISSING))),
        ("congestion controls", str(s.get("congestion_controls", MISSING))),
        ("departure lateness p50", us("emulator_lateness_p50_ns")),
        ("departure lateness p99", us("emulator_lateness_p99_ns")),
        ("departure lateness max", us("emulator_lateness_max_ns")),
        ("emulator limited", f"YES: {s.get('emulator_note')}" if limited else "no"),
    ]
    sysctls = str(s.get("sysctls", ""))
    lines = ["", "Kernel run", render_pairs(pairs), "  sysctls set (per namespace):"]
    lines += [f"    {item}" for item in sysctls.split("; ") if item]
    return "\n".join(lines) + "\n"
