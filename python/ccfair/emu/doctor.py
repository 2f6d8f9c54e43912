"""``ccfair doctor``: what this host offers the kernel backend, and the forwarder's clean rate.

Checks: root, iproute2, network namespaces and veth pairs, the emulator binary, AF_PACKET (the probe
runs), and the kernel's congestion controls. Then the forwarder is measured: two Cubic flows fill an
emulated link (2 ms RTT, 2 BDP FIFO) at rising rates for a few seconds each, and at each rate the link's
utilization and how late the emulator sent frames (p50/p99/max against their ideal departure times) are
recorded. The clean rate is the highest rate where the departure lateness p99 stays within
:data:`CLEAN_P99_NS`, the link is at least :data:`CLEAN_UTILIZATION` busy and no frame was lost inside the
emulator; the ladder stops at the first rate that is not clean. The result is kept per host (kernel
release, host name, CPU count) in ``$CCFAIR_DOCTOR_FILE`` or ``~/.cache/ccfair/doctor.json``, and kernel
runs faster than the clean rate are refused before anything is built.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccfair.errors import ScenarioError
from ccfair.units import format_rate

ENV_VAR = "CCFAIR_DOCTOR_FILE"
CLEAN_P99_NS = 100_000
CLEAN_UTILIZATION = 0.90
DEFAULT_RATES_BPS = (100_000_000, 200_000_000, 500_000_000, 1_000_000_000, 2_000_000_000)
PROBE_SECONDS = 4


def cache_path() -> Path:
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ccfair" / "doctor.json"


def host_key() -> dict[str, Any]:
    return {"kernel_release": os.uname().release, "host": socket.gethostname(), "cpus": os.cpu_count()}


def load_measurement() -> dict[str, Any] | None:
    """The saved measurement of this host, or None."""
    try:
        data: dict[str, Any] = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("host_key") == host_key() else None


def save_measurement(data: dict[str, Any]) -> Path:
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def check_rate(rate_bps: int) -> None:
    """Raises :class:`ScenarioError` (field ``link.rate``) if ``rate_bps`` is above the measured clean rate,
    or if this host has not been measured."""
    m = load_measurement()
    if m is None:
        raise ScenarioError(
            "link.rate",
            "the forwarder's clean rate on this host is not known: run `ccfair doctor` first "
            f"(it measures it in about half a minute and keeps it in {cache_path()})",
        )
    clean = int(m.get("clean_rate_bps") or 0)
    if rate_bps > clean:
        what = format_rate(clean) if clean else "none of the rates tried"
        raise ScenarioError(
            "link.rate",
            f"{format_rate(rate_bps)} is above what the forwarder handles cleanly on this host ({what}, "
            f"measured by `ccfair doctor` on {m.get('measured_at', '?')}); lower the rate, or measure higher "
            "with `ccfair doctor --max-rate RATE`",
        )


def _ok(cmd: list[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return done.returncode == 0, (done.stderr or done.stdout).strip()


def checks() -> list[tuple[str, bool, str]]:
    """(what, ok, detail) for each prerequisite."""
    from ccfair.emu import netns
    from ccfair.emu.binary import emulator_binary
    from ccfair.emu.scenario import kernel_ccs

    out: list[tuple[str, bool, str]] = []
    root = os.geteuid() == 0
    out.append(("root", root, "yes" if root else "no: the kernel backend needs root (sudo)"))
    ccs = kernel_ccs()
    out.append(("congestion controls", bool(ccs), " ".join(ccs) or "cannot read the kernel's list"))
    try:
        binary = emulator_binary()
        out.append(("emulator binary", True, binary))
    except ScenarioError as e:
        out.append(("emulator binary", False, e.message))
    ip_ok, detail = _ok(["ip", "-V"])
    out.append(("iproute2", ip_ok, detail))
    if root and ip_ok:
        name = f"{netns.PREFIX}{netns.new_run_id()}-rtr"
        ok, detail = _ok(["ip", "netns", "add", name])
        out.append(("network namespaces", ok, "work" if ok else detail))
        if ok:
            ok, detail = _ok(
                ["ip", "-n", name, "link", "add", "name", "dr0", "type", "veth", "peer", "name", "dr1"]
            )
            out.append(("veth pairs", ok, "work" if ok else detail))
            netns.remove_namespace(name)
    return out


def probe_spec(rate_bps: int, cc: str, seconds: int = PROBE_SECONDS) -> dict[str, Any]:
    from ccfair.emu.scenario import kernel_scenario

    sc = kernel_scenario(
        {
            "duration": f"{seconds}s",
            "measure": {"start": "1s", "end": f"{seconds}s"},
            "link": {"rate": format_rate(rate_bps), "buffer": "2bdp", "base_rtt": "2ms"},
            "flows": [{"cc": cc, "count": 2, "rtt": "2ms"}],
        }
    )
    return sc.resolve()


def measure(
    rates_bps: list[int], seconds: int = PROBE_SECONDS, report: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """Runs the probe ladder; returns the measurement (also what :func:`save_measurement` keeps)."""
    from ccfair.emu.binary import emulator_binary
    from ccfair.emu.run import execute
    from ccfair.emu.scenario import kernel_ccs

    binary = emulator_binary()
    cc = "cubic" if "cubic" in kernel_ccs() else "reno"
    probes = []
    clean_rate = 0
    for rate in sorted(rates_bps):
        spec = probe_spec(rate, cc, seconds)
        output, prov = execute(spec, 1, binary)
        t = output["totals"]
        window_s = (spec["measure_end_ns"] - spec["measure_start_ns"]) / 1e9
        utilization = t["window_link_tx_bytes"] * 8 / (rate * window_s)
        p99 = prov["emulator_lateness_p99_ns"]
        clean = (
            p99 is not None
            and p99 <= CLEAN_P99_NS
            and utilization >= CLEAN_UTILIZATION
            and not _lost_frames(prov["emulator_note"])
        )
        probe = {
            "rate_bps": rate,
            "utilization": utilization,
            "lateness_p50_ns": prov["emulator_lateness_p50_ns"],
            "lateness_p99_ns": p99,
            "lateness_max_ns": prov["emulator_lateness_max_ns"],
            "rx_drops": prov["emulator_rx_drops"],
            "note": prov["emulator_note"],
            "clean": clean,
        }
        probes.append(probe)
        if report is not None:
            report(probe)
        if not clean:
            break
        clean_rate = rate
    return {
        "host_key": host_key(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "clean_rate_bps": clean_rate,
        "clean_p99_ns": CLEAN_P99_NS,
        "probes": probes,
    }


def _lost_frames(note: str) -> bool:
    return any(word in note for word in ("dropped", "oversize", "refused"))
