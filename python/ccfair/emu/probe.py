"""The forwarder probe of ``ccfair doctor``: how cleanly the emulator forwards at a rate, alone.

``ccfair-emu blast`` offers full-size frames at 105 % of the link rate (so the queue never empties) to an
emulated link of rising rates for a few seconds each; at each rate the link's utilization and how late the
emulator sent frames (p50/p99/max against their ideal departure times) are recorded. The frames go to no
one's MAC address, so no TCP endpoint work competes. The ladder stops at the first rate that is not clean;
what clean means, and the file the measurement is kept in, are :mod:`ccfair.emu.doctor`'s. This module runs
the emulator as a kernel run does (:mod:`ccfair.emu.run`), which itself only reads the kept measurement.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccfair.emu import doctor, netns
from ccfair.emu.binary import emulator_binary
from ccfair.emu.run import (
    PORT_BASE,
    cpu_plan,
    forward_config,
    rt_unthrottled,
    send_go,
    sigterm_as_interrupt,
    start_program,
    stop_programs,
    wait_ready,
    wait_run,
)
from ccfair.scenario import kernel_scenario
from ccfair.units import format_rate

# Frames to this MAC reach the receiver's namespace and are dropped there at once (not addressed to it).
NOBODY_MAC = "02:cc:fa:00:00:99"
DEFAULT_RATES_BPS = (100_000_000, 200_000_000, 500_000_000, 1_000_000_000, 2_000_000_000)
PROBE_SECONDS = 4


def probe_spec(rate_bps: int, seconds: int = PROBE_SECONDS) -> dict[str, Any]:
    """The probe's link, resolved for the kernel backend as a scenario is: ``rate_bps``, a 100-packet FIFO,
    one flow whose path has no delay to speak of (a base RTT of 1 ns), measured after its first second."""
    doc = {
        "duration": f"{seconds}s",
        "measure": {"start": "1s"},
        "link": {"rate": format_rate(rate_bps), "buffer": "100pkt"},
        "flows": [{"cc": "reno", "rtt": "1ns"}],
    }
    return kernel_scenario(doc).resolve()


def probe(rate_bps: int, seconds: int, binary: str) -> dict[str, Any]:
    """Offers full-size frames at 105 % of ``rate_bps`` to an emulated link of that rate (the queue never
    empties) and reports how busy the link was and how late the emulator sent."""
    spec = probe_spec(rate_bps, seconds)
    netns.sweep_stale()
    emu_cpus, endpoint_cpus = cpu_plan()
    programs = []
    with (
        sigterm_as_interrupt(),
        netns.host_lock(),
        rt_unthrottled(),
        tempfile.TemporaryDirectory(prefix="ccfair-doctor-") as tmp,
        netns.Topology() as topo,
    ):
        work = Path(tmp)
        try:
            router = {"net.ipv4.ip_forward": "0"}
            topo.build(1500, [(10, False)], {"rtr": router}, binary, endpoint_cpus)
            fwd = forward_config(spec, 1, emu_cpus, work / "rtr.json")
            blast = {
                **{k: spec[k] for k in ("duration_ns", "interval_ns", "measure_start_ns", "measure_end_ns")},
                "iface": netns.SENDER_IF,
                "src_mac": _mac(netns.SENDER_MAC),
                "dst_mac": _mac(NOBODY_MAC),
                "src_ip": netns.SENDER_IP,
                "dst_ip": netns.receiver_ip(0),
                "port_base": PORT_BASE,
                "rate_bps": rate_bps * 105 // 100,
                "ip_len": 1500,
                "cpus": endpoint_cpus,
                "out": str(work / "snd.json"),
            }
            for role, cfg in (("rtr", fwd), ("snd", blast)):
                (work / f"{role}.config.json").write_text(json.dumps(cfg))
            for role, command in (("rtr", "forward"), ("snd", "blast")):
                p = start_program(topo, role, binary, [command, str(work / f"{role}.config.json")], work)
                programs.append(p)
                wait_ready(p)
            epoch = time.monotonic_ns() + 200_000_000
            send_go(programs, epoch)
            wait_run(programs, epoch, spec["duration_ns"], None)
            emu = json.loads((work / "rtr.json").read_text())
        finally:
            stop_programs(programs)
    window_s = (spec["measure_end_ns"] - spec["measure_start_ns"]) / 1e9
    late, health = emu["lateness_window"], emu["health"]
    lost = sum(health[k] for k in ("rx_kernel_drops", "pool_exhausted", "oversize_frames", "tx_errors"))
    utilization = emu["totals"]["window_link_tx_bytes"] * 8 / (rate_bps * window_s)
    p99 = late["p99_ns"]
    on_time = p99 is not None and p99 <= doctor.CLEAN_P99_NS
    clean = on_time and utilization >= doctor.CLEAN_UTILIZATION and lost == 0
    return {
        "rate_bps": rate_bps,
        "utilization": utilization,
        "lateness_p50_ns": late["p50_ns"],
        "lateness_p99_ns": p99,
        "lateness_max_ns": late["max_ns"],
        "frames_lost_in_emulator": lost,
        "clean": clean,
    }


def _mac(text: str) -> list[int]:
    return [int(x, 16) for x in text.split(":")]


def measure(
    rates_bps: list[int], seconds: int = PROBE_SECONDS, report: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """Runs the probe ladder; returns the measurement (also what :func:`ccfair.emu.doctor.save_measurement`
    keeps)."""

    binary = emulator_binary()
    probes = []
    for rate in sorted(rates_bps):
        result = probe(rate, seconds, binary)
        probes.append(result)
        if report is not None:
            report(result)
        if not result["clean"]:
            break
    merged = doctor.merge_probes((doctor.load_measurement() or {}).get("probes", []), probes)
    return {
        "generator": doctor.GENERATOR,
        "host_key": doctor.host_key(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "clean_rate_bps": doctor.clean_rate(merged),
        "clean_p99_ns": doctor.CLEAN_P99_NS,
        "probes": merged,
    }
