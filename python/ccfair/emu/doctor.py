"""``ccfair doctor``: what this host offers the kernel backend, and the forwarder's clean rate.

Checks: root, iproute2, network namespaces and veth pairs, the emulator binary, AF_PACKET (the probe runs),
and the kernel's congestion controls. Then the forwarder alone is measured (:mod:`ccfair.emu.probe`): at
each rate of a ladder the link's utilization and how late the emulator sent frames are recorded. The clean
rate is the highest rate where the departure lateness p99 stays within :data:`CLEAN_P99_NS`, the link is at
least :data:`CLEAN_UTILIZATION` busy and no frame was lost inside the emulator; the ladder stops at the
first rate that is not clean. (Whether the kernel's TCP endpoints can fill a link of that rate on the same
host is another matter: a run's own utilization and lateness tell.) The result is kept per host (kernel
release, host name, CPU count) in ``$CCFAIR_DOCTOR_FILE`` or ``~/.cache/ccfair/doctor.json`` (a file there
that ccfair did not write is refused, never replaced), and kernel runs faster than the clean rate are
refused before anything is built.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

from ccfair.emu import netns
from ccfair.emu.binary import emulator_binary
from ccfair.emu.host import kernel_ccs
from ccfair.errors import InputError
from ccfair.fsio import cache_file, json_generated_by, replace_file
from ccfair.units import format_rate

ENV_VAR = "CCFAIR_DOCTOR_FILE"
# What the saved measurement names as its writer: the file is replaced only when it is ccfair's own.
GENERATOR = "ccfair doctor"
# The fields a measurement carried before it named its generator: such a file is also ccfair's own.
EARLIER_FIELDS = frozenset({"host_key", "measured_at", "clean_rate_bps", "clean_p99_ns", "probes"})
CLEAN_P99_NS = 100_000
CLEAN_UTILIZATION = 0.99
# A departure this late at a rate the forwarder keeps up with means it was kept from its CPU.
MS_NS = 1_000_000
# The command that runs this ccfair as root: sudo resets PATH, so a virtualenv's ccfair is not found by name.
SUDO_CCFAIR = 'sudo "$(command -v ccfair)"'


def cache_path() -> Path:
    return cache_file("doctor.json", ENV_VAR)


def host_key() -> dict[str, Any]:
    return {"kernel_release": os.uname().release, "host": socket.gethostname(), "cpus": os.cpu_count()}


def load_measurement() -> dict[str, Any] | None:
    """The saved measurement of this host, or None."""
    try:
        data: dict[str, Any] = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return None
    return data if data.get("host_key") == host_key() else None


def _ours(path: Path) -> bool:
    """Whether ``path`` holds a measurement ccfair doctor wrote (this format or the one before it)."""
    if json_generated_by(path, GENERATOR):
        return True
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "host_key" in data and set(data) <= EARLIER_FIELDS


def check_writable() -> Path:
    """The file a measurement will be saved to; raises :class:`InputError` naming :data:`ENV_VAR` (or the
    file) when a file is there that ccfair did not write, before anything is measured: it is never
    replaced."""
    path = cache_path()
    if path.exists() and not _ours(path):
        field = ENV_VAR if os.environ.get(ENV_VAR) else str(path)
        raise InputError(
            field,
            f"{path} is not a measurement ccfair doctor wrote, and it is left as it is: point {ENV_VAR} "
            "at another file (or move that one away)",
        )
    return path


def save_measurement(data: dict[str, Any]) -> Path:
    path = check_writable()
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, (json.dumps(data, indent=2) + "\n").encode(), sync=False)
    return path


def check_rate(rate_bps: int) -> None:
    """Raises :class:`InputError` (field ``link.rate``) if ``rate_bps`` is above the measured clean rate,
    or if this host has not been measured."""
    m = load_measurement()
    if m is None:
        raise InputError(
            "link.rate",
            f"the forwarder's clean rate on this host is not known: run `{SUDO_CCFAIR} doctor` first "
            f"(it measures it in about half a minute and keeps it in {cache_path()})",
        )
    clean = int(m.get("clean_rate_bps") or 0)
    if clean == 0:
        raise InputError(
            "link.rate",
            f"no rate was clean when `ccfair doctor` measured this host on {m.get('measured_at', '?')} "
            f"({no_clean_rate_reason(m)}); {no_clean_rate_advice(m)}",
        )
    if rate_bps > clean:
        what = format_rate(clean)
        raise InputError(
            "link.rate",
            f"{format_rate(rate_bps)} is above what the forwarder handles cleanly on this host ({what}, "
            f"measured by `ccfair doctor` on {m.get('measured_at', '?')}); lower the rate, or measure higher "
            f"with `{SUDO_CCFAIR} doctor --max-rate RATE`",
        )


def _lowest_probe(m: dict[str, Any]) -> dict[str, Any] | None:
    probes = sorted(m.get("probes", []), key=lambda p: p["rate_bps"])
    return probes[0] if probes else None


def kept_from_cpu_ms(m: dict[str, Any]) -> float | None:
    """How long the forwarder was kept from its CPU at the lowest rate of measurement ``m``, in ms, when
    that alone made it unclean: it kept up with the rate (utilization clean, nothing lost) and yet some
    departures were a millisecond or more late. A busy host does that, and so does a VM whose host preempts
    its vCPUs while the guest is idle; a lower rate does not help there. None otherwise."""
    p = _lowest_probe(m)
    if p is None or p.get("utilization", 0) < CLEAN_UTILIZATION or p.get("frames_lost_in_emulator"):
        return None
    late_max = p.get("lateness_max_ns")
    if late_max is None or late_max < MS_NS or (p.get("lateness_p99_ns") or 0) <= CLEAN_P99_NS:
        return None
    return float(late_max) / MS_NS


def no_clean_rate_advice(m: dict[str, Any]) -> str:
    """What to do about measurement ``m`` having no clean rate."""
    if kept_from_cpu_ms(m) is not None:
        return f"measure again when nothing else runs on the host (`{SUDO_CCFAIR} doctor`)"
    return (
        f"measure again on an idle host (`{SUDO_CCFAIR} doctor`), or lower rates "
        f"(`{SUDO_CCFAIR} doctor --rates 10Mbps,20Mbps,50Mbps`)"
    )


def no_clean_rate_reason(m: dict[str, Any]) -> str:
    """Why the lowest probe of measurement ``m`` was not clean, in words."""
    p = _lowest_probe(m)
    if p is None:
        return "no rate was probed"
    why = []
    if p.get("lateness_p99_ns") is None or p["lateness_p99_ns"] > CLEAN_P99_NS:
        late = p.get("lateness_p99_ns")
        why.append(f"lateness p99 {'unknown' if late is None else f'{late / 1e3:.0f} us'} over 100 us")
    if p.get("utilization", 0) < CLEAN_UTILIZATION:
        why.append(f"utilization {p.get('utilization', 0) * 100:.1f} %")
    if p.get("frames_lost_in_emulator"):
        why.append(f"{p['frames_lost_in_emulator']} frames lost in the emulator")
    reason = f"at {format_rate(p['rate_bps'])}: " + (", ".join(why) or "not clean")
    kept_ms = kept_from_cpu_ms(m)
    if kept_ms is not None:
        reason += (
            f"; the forwarder kept up with the rate but was kept from its CPU for up to {kept_ms:.1f} ms "
            "(another load, or a VM whose host preempts it), which a lower rate does not change"
        )
    return reason


def _ok(cmd: list[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return done.returncode == 0, (done.stderr or done.stdout).strip()


def checks() -> list[tuple[str, bool, str]]:
    """(what, ok, detail) for each prerequisite."""

    out: list[tuple[str, bool, str]] = []
    root = os.geteuid() == 0
    out.append(("root", root, "yes" if root else f"no: the kernel backend needs root ({SUDO_CCFAIR} ...)"))
    ccs = kernel_ccs()
    out.append(("congestion controls", bool(ccs), " ".join(ccs) or "cannot read the kernel's list"))
    try:
        binary = emulator_binary()
        out.append(("emulator binary", True, binary))
    except InputError as e:
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


def merge_probes(previous: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The probes to keep after measuring ``new``: every new one, and of the ``previous`` ones those the new
    ones do not contradict, sorted by rate.

    A rate that is clean now says every lower rate is clean too, and one that is not clean says no higher
    rate is (the clean rate is the top of a ladder); so an earlier probe is dropped when it is at the rate
    of a new one, not clean at or below a new clean rate, or clean at or above a new failed one. Earlier
    probes that agree stay, so measuring only high rates does not forget the low ones, and an old failure at
    10 Mbps does not outlive a clean measurement at 100 Mbps."""
    measured = {p["rate_bps"] for p in new}
    top_clean = max((p["rate_bps"] for p in new if p["clean"]), default=None)
    lowest_failed = min((p["rate_bps"] for p in new if not p["clean"]), default=None)

    def agrees(p: dict[str, Any]) -> bool:
        rate = p["rate_bps"]
        if rate in measured:
            return False
        if not p["clean"] and top_clean is not None and rate <= top_clean:
            return False
        return not (p["clean"] and lowest_failed is not None and rate >= lowest_failed)

    return sorted([p for p in previous if agrees(p)] + new, key=lambda p: p["rate_bps"])


def clean_rate(probes: list[dict[str, Any]]) -> int:
    """The highest probed rate at and below which every probe was clean (0 if the lowest was not)."""
    rate = 0
    for p in sorted(probes, key=lambda p: p["rate_bps"]):
        if not p["clean"]:
            break
        rate = p["rate_bps"]
    return rate
