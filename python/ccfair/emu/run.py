"""Running a scenario on the kernel: check, build, start, go, wait, collect, tear down.

1. Checks before anything is built: the scenario (kernel rules, ``crates/ccfair-scenario/src/kernel.rs``),
   root, the emulator binary, and the link rate against the forwarder's clean rate that ``ccfair doctor``
   measured on this host (:mod:`ccfair.emu.doctor`).
2. A stale-resource sweep (namespaces of runs whose owner died), the host's kernel-run lock (one run at a
   time on this host, whichever process asks: :func:`ccfair.emu.netns.host_lock`), the real-time bandwidth
   limit lifted for the emulator (:func:`rt_unthrottled`), then the topology (:mod:`ccfair.emu.netns`).
3. ``ccfair-emu recv`` (receiver namespace), ``forward`` (router), ``send`` (senders: every connection is
   made through the emulated path before the run), each started with ``ip netns exec`` and waited for until
   it prints ``ready``; then one epoch (CLOCK_MONOTONIC, shared by all namespaces) is sent to all of them.
4. Progress while the run lasts; a program that fails ends the run with its error.
5. Their JSON outputs become the simulator's result format (:mod:`ccfair.emu.collect`); the summary gets
   the provenance (backend, kernel release, the sysctls set, each veth's offloads as read back, the host
   preset) and the testbed's health (the emulator's lateness and stalls, losses, the bursts it segmented, ACKs
   per data segment; how long the sending and receiving programs waited for a CPU).

Teardown runs on every exit: normal end, error, Ctrl-C, SIGTERM (turned into KeyboardInterrupt here).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import select
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ccfair import _native
from ccfair.emu import collect, doctor, netns
from ccfair.emu.arrival import STAMP, arrival_mode
from ccfair.emu.binary import emulator_binary
from ccfair.errors import InputError
from ccfair.result import RunResult
from ccfair.scenario import KernelScenario, Scenario, check_seed, kernel_scenario

PORT_BASE = 20000
# The preset that is this machine as it comes on the kernel backend.
MACHINE_PRESET = "kernel-lab"
READY_TIMEOUT_S = 30.0
# The epoch is this far after the last program reported ready, so every one of them has read it in time.
EPOCH_LEAD_NS = 200_000_000
EXIT_GRACE_S = 20.0
# The emulator runs under SCHED_FIFO so that a busy host (builds, the TCP stacks themselves) does not delay
# its departures, and busy-waits the last few microseconds before each deadline (measured:
# docs/notes/kernel-measurements.md). Linux's real-time bandwidth limit (kernel.sched_rt_runtime_us, 95 % of
# each second) stops it, even at a few per cent of a CPU, for 10-35 ms about once a second (its CPU idle
# meanwhile; at 200 Mbit/s in every run), so the limit is lifted while a run lasts (:func:`rt_unthrottled`):
# the emulator's spin budget already keeps it asleep at least 30 % of every 100 ms, so it cannot take its CPU
# from the kernel's own threads.
REALTIME = os.environ.get("CCFAIR_EMU_REALTIME", "1") != "0"
RT_RUNTIME_SYSCTL = Path("/proc/sys/kernel/sched_rt_runtime_us")
# The value a run replaced, kept until it is put back, so the next run restores it after a killed one.
RT_RUNTIME_SAVED = Path("/run/ccfair-sched-rt-runtime-us")
RT_LIMIT_NOT_LIFTED = "the real-time limit stayed in force"
SPIN_NS = int(os.environ.get("CCFAIR_EMU_SPIN_NS", "20000"))
# Emulator health: a run is flagged when frames left later than this share of the smallest base RTT
# (p99), with a floor for very short RTTs, or when any frame was lost inside the emulator or its sockets.
LATENESS_RTT_FRACTION = 0.02
LATENESS_FLOOR_NS = 100_000
# ... or when the emulator was kept from its sockets (a stall: its departures and arrivals then bunch up)
# longer than this share of the smallest base RTT, and at least a millisecond. Strict on purpose: the once
# a second stalls of 10-35 ms under the real-time limit changed the results; the idle VM's own hiccups of
# 1-9 ms flag runs too, though runs flagged for them did not differ in share from their cells' healthy runs
# (docs/notes/validation-mechanisms.md, "The emulator's stalls").
STALL_RTT_FRACTION = 0.1
STALL_FLOOR_NS = 1_000_000


def stall_limit_ns(min_rtt_ns: int) -> float:
    """The longest emulator stall a healthy run may have (see :data:`STALL_RTT_FRACTION`)."""
    return max(STALL_FLOOR_NS, STALL_RTT_FRACTION * min_rtt_ns)


# Endpoint health: a run is flagged when the sending or receiving program waited, runnable, for a CPU more
# than this share of the measurement window. Such a host delays the endpoints' reads and ACK processing by
# whole scheduler slices; the senders then release their windows in bursts that overflow the bottleneck
# while its queue is mostly short. Measured on 2 CPUs (Cubic vs Cubic, 10-200 Mbit/s, 10 ms, 1 BDP): below
# 15 % wait the link was 0.998-1.000 used, at 20-26 % 0.89-1.00, at 26-30 % 0.81-0.96; every run below 0.95
# had waited over 23 % (docs/explanation/emulator.md, "Timing").
ENDPOINT_WAIT_SHARE = 0.2


class EmulationError(RuntimeError):
    """A kernel run failed while running (not bad input)."""


def sysctls_for(spec: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Per-namespace sysctls. The send buffer's maximum is raised to at least 4x (BDP + buffer) of the
    largest RTT (64 MiB minimum) so that it never limits a sender. The receivers' buffer is the hosts' (the
    spec's ``receive_buffer``: ``rmem`` as ``tcp_rmem``, ``rcv_autotune`` as ``tcp_moderate_rcvbuf``); hosts
    without a receive-window model (the ideal preset, ``rcv_window = false``) get the same large maximum,
    as close as a kernel comes to the simulator's unlimited window: autotuning, not a cap, decides it."""
    rate = spec["link"]["rate_bps"]
    max_rtt = max(g["rtt_ns"] for g in spec["groups"])
    limit = spec["link"]["aqm"]["limit"]
    buffer_bytes = limit.get("bytes", limit.get("packets", 0) * spec["link"]["mtu_bytes"])
    bdp = rate * max_rtt // 8 // 10**9
    top = min(max(64 << 20, 4 * (bdp + buffer_bytes)), (1 << 31) - 1)
    ipv6 = Path("/proc/sys/net/ipv6").exists()
    common = {
        "net.ipv4.tcp_no_metrics_save": "1",  # no cached ssthresh/RTT from earlier connections
        "net.ipv4.tcp_ecn": "2",  # answer ECN when asked; per-group routes ask
        "net.ipv4.tcp_wmem": f"4096 16384 {top}",
        "net.ipv4.tcp_rmem": f"4096 131072 {top}",
    }
    if ipv6:
        common["net.ipv6.conf.all.disable_ipv6"] = "1"
        common["net.ipv6.conf.default.disable_ipv6"] = "1"
    router = {"net.ipv4.ip_forward": "0"}  # the emulator forwards, never the router's kernel
    if ipv6:
        router["net.ipv6.conf.all.disable_ipv6"] = "1"
        router["net.ipv6.conf.default.disable_ipv6"] = "1"
    rcv = dict(common)
    receive_buffer = spec.get("receive_buffer")
    if receive_buffer is not None:
        rmem = " ".join(str(v) for v in receive_buffer["rmem_bytes"])
        rcv["net.ipv4.tcp_rmem"] = rmem
        rcv["net.ipv4.tcp_moderate_rcvbuf"] = "1" if receive_buffer["rcv_autotune"] else "0"
    return {"snd": dict(common), "rcv": rcv, "rtr": router}


def program_config(spec: Mapping[str, Any], seed: int, cpus: list[int], out: Path) -> dict[str, Any]:
    """What ``ccfair-emu forward``, ``send`` and ``recv`` read (``RunConfig`` in
    ``crates/ccfair-emu/src/config.rs``): the resolved spec, the seed and this machine's side of the run.
    Each program derives its schedule and flows from the spec itself (``ccfair-emu check ROLE CONFIG``
    shows what it derives)."""
    return {
        "spec": spec,
        "seed": seed,
        "port_base": PORT_BASE,
        "receiver_ips": [netns.receiver_ip(g) for g in range(len(spec["groups"]))],
        "cpus": cpus,
        "out": str(out),
    }


def forward_config(spec: Mapping[str, Any], seed: int, cpus: list[int], out: Path) -> dict[str, Any]:
    """The emulator's configuration: the run's, with the router's side."""
    return {
        **program_config(spec, seed, cpus, out),
        "router": {
            "sender_if": netns.ROUTER_SENDER_IF,
            "receiver_if": netns.ROUTER_RECEIVER_IF,
            "realtime": REALTIME,
            "spin_ns": SPIN_NS,
            # When a frame's time at the bottleneck starts (CCFAIR_EMU_ARRIVAL, see ccfair.emu.arrival).
            "arrival_at_stamp": arrival_mode() == STAMP,
        },
    }


@contextlib.contextmanager
def rt_unthrottled() -> Iterator[str]:
    """Lifts the real-time bandwidth limit (``kernel.sched_rt_runtime_us = -1``) while the block runs, and
    puts the host's value back after it (or, if a run was killed before it could, at the next run). Where
    the host does not let it be changed (a container), the run goes on under the limit, and the stall rule
    of the run's health says whether it mattered. Yields the setting the run had, for its provenance
    (empty when the emulator does not run under SCHED_FIFO)."""
    if not REALTIME or not RT_RUNTIME_SYSCTL.exists():
        yield ""
        return
    try:
        original = RT_RUNTIME_SYSCTL.read_text()
        # A killed run's saved value, if the file holds one (a number; anything else is not ours to write).
        saved = RT_RUNTIME_SAVED.read_text() if RT_RUNTIME_SAVED.exists() else ""
        if saved.strip().lstrip("-").isdigit():
            original = saved
        RT_RUNTIME_SAVED.write_text(original)
        RT_RUNTIME_SYSCTL.write_text("-1\n")
    except OSError as e:
        with contextlib.suppress(OSError):
            RT_RUNTIME_SAVED.unlink(missing_ok=True)
        yield f"{RT_LIMIT_NOT_LIFTED} (kernel.sched_rt_runtime_us: {e.strerror or e})"
        return
    try:
        yield f"kernel.sched_rt_runtime_us=-1 (the host's {original.strip()} put back after the run)"
    finally:
        RT_RUNTIME_SYSCTL.write_text(original)
        RT_RUNTIME_SAVED.unlink(missing_ok=True)


def cpu_plan() -> tuple[list[int], list[int]]:
    """(emulator CPUs, everyone else's): with two or more CPUs the emulator gets the last one to itself
    (the TCP endpoints' programs and their kernel receive processing go to the others), so the kernel work
    of the senders and receiver does not run inside the emulator's sends and delay its departures."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or os.environ.get("CCFAIR_EMU_PIN", "1") == "0":
        return [], []
    return cpus[-1:], cpus[:-1]


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt (so teardown runs) while the block runs in the main thread."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt("terminated")

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@dataclass
class Program:
    role: str
    popen: subprocess.Popen[str]
    stderr: IO[str]

    def error_text(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read().strip()[-2000:]


def start_program(topo: netns.Topology, role: str, binary: str, args: list[str], workdir: Path) -> Program:
    err = open(workdir / f"{role}.stderr", "w+")  # closed by stop_programs
    popen = subprocess.Popen(
        ["ip", "netns", "exec", topo.ns(role), binary, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        start_new_session=True,  # Ctrl-C reaches this process only; it tears the run down in order
    )
    return Program(role, popen, err)


def wait_ready(p: Program, timeout_s: float = READY_TIMEOUT_S) -> None:
    assert p.popen.stdout is not None
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise EmulationError(f"{p.role}: not ready after {timeout_s:.0f} s")
        readable, _, _ = select.select([p.popen.stdout], [], [], min(left, 0.5))
        if readable:
            line = p.popen.stdout.readline()
            if line.strip() == "ready":
                return
            if line == "":
                p.popen.wait(timeout=5)
                raise EmulationError(f"{p.role} failed to start: {p.error_text() or p.popen.returncode}")


def send_go(programs: list[Program], epoch_ns: int) -> None:
    for p in programs:
        assert p.popen.stdin is not None
        p.popen.stdin.write(f"go {epoch_ns}\n")
        p.popen.stdin.flush()


def wait_run(
    programs: list[Program], epoch_ns: int, duration_ns: int, progress: Callable[[float], None] | None
) -> None:
    """Waits for every program to finish (they stop at epoch + duration), reporting progress."""
    deadline = epoch_ns + duration_ns + int(EXIT_GRACE_S * 1e9)
    last = 0.0
    while True:
        now = time.monotonic_ns()
        for p in programs:
            code = p.popen.poll()
            if code not in (None, 0):
                raise EmulationError(f"{p.role} failed (exit {code}): {p.error_text()}")
        if all(p.popen.poll() == 0 for p in programs):
            break
        if now > deadline:
            late = [p.role for p in programs if p.popen.poll() is None]
            raise EmulationError(f"{', '.join(late)} did not finish in time")
        fraction = min(1.0, max(0.0, (now - epoch_ns) / duration_ns))
        if progress is not None and fraction - last >= 0.01:
            progress(fraction)
            last = fraction
        time.sleep(0.05)
    if progress is not None:
        progress(1.0)


def stop_programs(programs: list[Program]) -> None:
    for p in programs:
        if p.popen.poll() is None:
            p.popen.kill()
        with contextlib.suppress(Exception):
            p.popen.wait(timeout=5)
        for stream in (p.popen.stdin, p.popen.stdout):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()
        p.stderr.close()


def paces(cc: str, group: Mapping[str, Any]) -> bool:
    """Whether a flow's kernel paces its sending: BBR asks for TCP's internal pacing, and a group with
    ``pacing`` switches it on (SO_MAX_PACING_RATE)."""
    return "bbr" in cc or bool(group.get("pacing"))


def _ns(value: Any) -> float:
    """A duration from the emulator's JSON, where a NaN is written as null."""
    return math.nan if value is None else float(value)


TURNAROUND_QUANTILES = ("p10", "p50", "p90")


def host_turnaround(emu: Mapping[str, Any], paced: Sequence[bool]) -> dict[str, float]:
    """The hosts' turnaround timed at the emulator over the window (``crates/ccfair-emu/src/turnaround.rs``):
    the receiver's p10, p50 and p90, and for the sender the median over the unpaced flows of each (a paced
    flow's data waits for its pacing timer, not for the host); NaN where there is no sample (an emulator
    from before the timing, or only paced flows)."""
    receiver = emu.get("turnaround_receiver") or {}
    flows = [
        s
        for s, p in zip(emu.get("turnaround_sender") or [], paced, strict=False)
        if not p and s.get("count", 0) > 0
    ]
    out = {}
    for q in TURNAROUND_QUANTILES:
        out[f"host_receiver_turnaround_{q}_ns"] = _ns(receiver.get(f"{q}_ns"))
        senders = [x for s in flows if not math.isnan(x := _ns(s.get(f"{q}_ns")))]
        out[f"host_sender_turnaround_{q}_ns"] = statistics.median(senders) if senders else math.nan
    return out


def health_summary(
    emu: Mapping[str, Any],
    spec: Mapping[str, Any],
    sender: Mapping[str, Any] | None = None,
    receiver: Mapping[str, Any] | None = None,
    paced: Sequence[bool] = (),
) -> dict[str, Any]:
    """The emulator's lateness and losses, the endpoint programs' wait for a CPU (from the ``sender`` and
    ``receiver`` outputs, when given), and whether the testbed (rather than the bottleneck) may have limited
    the run."""
    late = emu["lateness_window"]
    h = emu["health"]
    min_rtt = min(g["rtt_ns"] for g in spec["groups"])
    limit_ns = max(LATENESS_FLOOR_NS, LATENESS_RTT_FRACTION * min_rtt)
    reasons = []
    p99 = late["p99_ns"]
    if p99 is not None and p99 > limit_ns:
        reasons.append(f"departure lateness p99 {p99 / 1e3:.0f} us > {limit_ns / 1e3:.0f} us")
    stall_ns = int(h.get("stall_max_ns", 0))
    if stall_ns > stall_limit_ns(min_rtt):
        reasons.append(
            f"the emulator stalled {stall_ns / 1e6:.1f} ms (> {stall_limit_ns(min_rtt) / 1e6:.1f} ms; "
            f"{int(h.get('stalls', 0))} stalls over {int(h.get('stall_count_ns', 0)) / 1e6:.0f} ms)"
        )
    for key, what in (
        ("rx_kernel_drops", "frames dropped before the emulator read them"),
        ("pool_exhausted", "frames dropped for want of a buffer"),
        ("oversize_frames", "frames it could not handle (too long, not a TCP/IPv4 burst)"),
        ("tx_errors", "sends refused by the kernel"),
    ):
        if h[key]:
            reasons.append(f"{h[key]} {what}")
    window_ns = spec["measure_end_ns"] - spec["measure_start_ns"]
    waits = {"sending": cpu_wait_share(sender, window_ns), "receiving": cpu_wait_share(receiver, window_ns)}
    for who, share in waits.items():
        if share > ENDPOINT_WAIT_SHARE:  # False for NaN (not measured)
            reasons.append(
                f"the {who} program waited for a CPU {share * 100:.0f} % of the window (> "
                f"{ENDPOINT_WAIT_SHARE * 100:.0f} %): a busy host, not the network, set the endpoints' timing"
            )
    data_read, ack_read = emu.get("read_latency_senders", {}), emu.get("read_latency_receiver", {})
    return {
        "emulator_lateness_p50_ns": late["p50_ns"],
        "emulator_lateness_p99_ns": p99,
        "emulator_lateness_max_ns": late["max_ns"],
        "emulator_read_latency_p50_ns": data_read.get("p50_ns", math.nan),
        "emulator_read_latency_p99_ns": data_read.get("p99_ns", math.nan),
        "emulator_ack_read_latency_p50_ns": ack_read.get("p50_ns", math.nan),
        "emulator_ack_read_latency_p99_ns": ack_read.get("p99_ns", math.nan),
        **host_turnaround(emu, paced),
        "emulator_rx_drops": int(h["rx_kernel_drops"]),
        "emulator_stall_max_ns": stall_ns,
        "emulator_stalls": int(h.get("stalls", 0)),
        "emulator_stall_total_ns": int(h.get("stall_total_ns", 0)),
        "emulator_oversize_frames": int(h["oversize_frames"]),
        "emulator_gso_frames": int(h["gso_frames"]),
        "emulator_gso_segments": int(h["gso_segments"]),
        "emulator_acks_per_segment": acks_per_segment(emu),
        "sender_cpu_wait_share": waits["sending"],
        "receiver_cpu_wait_share": waits["receiving"],
        "emulator_limited": int(bool(reasons)),
        "emulator_note": "; ".join(reasons),
    }


def cpu_wait_share(program: Mapping[str, Any] | None, window_ns: int) -> float:
    """The share of the measurement window a sender or receiver program spent runnable but waiting for a CPU
    (its ``window_cpu`` from ``/proc/thread-self/schedstat``); NaN where not measured."""
    cpu = (program or {}).get("window_cpu")
    if not cpu or window_ns <= 0:
        return math.nan
    return float(cpu["wait_ns"]) / window_ns


def acks_per_segment(emu: Mapping[str, Any]) -> float:
    """ACK frames the receiver sent per data segment that reached the emulator, over the run and every
    flow (about 0.5 with delayed ACKs; less when the receiver coalesces segments with GRO); NaN without
    data."""
    segments = sum(f["total"]["sent_segments"] for f in emu["flows"])
    acks = sum(f["ack_frames"] for f in emu["flows"])
    return acks / segments if segments else math.nan


def offload_provenance(readback: Mapping[str, Any]) -> str:
    """Each veth's offloads as ``ccfair-emu prepare`` read them back, the ones on named, and the receive
    moderation where set (``s0: gso scatter-gather tso tx-checksum; r0: gro gro_flush_timeout=200000``)."""
    parts = []
    for values in readback.values():
        if not isinstance(values, dict):
            continue
        for dev, state in values.get("offloads", {}).items():
            on = [name for name, value in state.items() if value == "on"]
            on += [f"{k}={v}" for k, v in values.get("gro_flush", {}).get(dev, {}).items()]
            parts.append(f"{dev}: {' '.join(on) or 'none'}")
    return "; ".join(parts)


def cpu_model() -> str:
    """This machine's CPU model (``/proc/cpuinfo``'s first ``model name``), or "unknown": a kernel run's
    result depends on the machine it ran on, not only on its kernel."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def kernel_hz(release: str | None = None) -> int | None:
    """This kernel's ``CONFIG_HZ`` (its jiffies rate, which Cubic's clock and the timer wheel run at), from
    ``/boot/config-<release>`` or ``/proc/config.gz``; None if neither says."""
    release = release or os.uname().release
    texts: list[str] = []
    with contextlib.suppress(OSError):
        texts.append(Path(f"/boot/config-{release}").read_text(errors="replace"))
    if not texts:
        with contextlib.suppress(OSError, EOFError, gzip.BadGzipFile):
            texts.append(gzip.decompress(Path("/proc/config.gz").read_bytes()).decode(errors="replace"))
    for text in texts:
        for line in text.splitlines():
            if line.startswith("CONFIG_HZ="):
                value = line.removeprefix("CONFIG_HZ=").strip()
                return int(value) if value.isdigit() else None
    return None


def host_provenance(spec: Mapping[str, Any]) -> str:
    """The hosts' preset and what of it the run applied: the offloads and the start jitter; the preset's
    timers and noise are this machine's own."""
    presets = sorted({(g.get("host") or {}).get("preset", "ideal") for g in spec["groups"]})
    offloads = spec.get("offloads", {})
    on = [key for key in ("tso", "gro") if offloads.get(key)]
    if offloads.get("gro") and offloads.get("gro_flush_ns"):
        on.append(f"gro_flush={offloads['gro_flush_ns']}ns")
    text = f"preset {', '.join(presets)}; offloads {' '.join(on) or 'off'}"
    # The default preset is the machine itself here (``crates/ccfair-scenario/src/kernel.rs``).
    if MACHINE_PRESET in presets:
        text += f" ({MACHINE_PRESET}: this machine as it comes)"
    if set(presets) - {"ideal", MACHINE_PRESET}:
        text += "; start jitter as drawn, timers and noise this machine's own"
    return text


def preflight(spec: Mapping[str, Any]) -> str:
    """Everything that can be checked before building: root, the binary, the rate. Returns the binary."""
    netns.require_root()
    binary = emulator_binary()
    doctor.check_rate(spec["link"]["rate_bps"])
    return binary


def run_kernel(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> Any:
    """Runs ``scenario`` on the kernel and returns a :class:`~ccfair.result.RunResult` (the simulator's
    shape; provenance and emulator health in ``summary``). Bad input raises :class:`InputError` before
    anything is built; a failure while running raises :class:`EmulationError`."""

    sc: KernelScenario = kernel_scenario(scenario)
    spec = sc.resolve()
    effective = check_seed(sc.effective_seed(seed))
    binary = preflight(spec)
    output, provenance = execute(spec, effective, binary, progress)
    result = RunResult.from_native(output, sc, effective)
    result.summary.update(provenance)
    return result


def execute(
    spec: Mapping[str, Any],
    seed: int,
    binary: str,
    progress: Callable[[float], None] | None = None,
    *,
    during: Callable[[netns.Topology], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Builds, runs and tears down one kernel run of a resolved kernel ``spec``; returns the native-shaped
    output and the provenance. ``during(topology)`` is called once the run has started (tests use it). The
    flows' starts and sizes are those the simulator draws for ``seed``, as the programs draw them from the
    spec."""
    arrival_mode()  # a bad CCFAIR_EMU_ARRIVAL is refused before anything is built
    netns.sweep_stale()
    plans: list[dict[str, int]] = json.loads(_native.flow_plans(json.dumps(spec), seed))
    infos = collect.flow_infos(spec, plans)
    sysctls = sysctls_for(spec)
    groups = [(g["initial_window"], g["ecn"] == "classic") for g in spec["groups"]]
    t0 = time.monotonic()
    programs: list[Program] = []
    run_id = netns.new_run_id()
    with (
        sigterm_as_interrupt(),
        netns.host_lock(None if progress is None else lambda: progress(0.0)),
        rt_unthrottled() as rt_limit,
        tempfile.TemporaryDirectory(prefix=netns.workdir_prefix(run_id)) as tmp,
        netns.Topology(run_id) as topo,
    ):
        work = Path(tmp)
        try:
            emu_cpus, endpoint_cpus = cpu_plan()
            offloads = netns.HostOffloads(**spec.get("offloads", {}))
            readback = topo.build(spec["link"]["mtu_bytes"], groups, sysctls, binary, endpoint_cpus, offloads)
            recv_cfg = program_config(spec, seed, endpoint_cpus, work / "rcv.json")
            fwd_cfg = forward_config(spec, seed, emu_cpus, work / "rtr.json")
            send_cfg = program_config(spec, seed, endpoint_cpus, work / "snd.json")
            for role, cfg in (("rcv", recv_cfg), ("rtr", fwd_cfg), ("snd", send_cfg)):
                (work / f"{role}.config.json").write_text(json.dumps(cfg))
            command = {"rcv": "recv", "rtr": "forward", "snd": "send"}
            for role in ("rcv", "rtr", "snd"):
                p = start_program(
                    topo, role, binary, [command[role], str(work / f"{role}.config.json")], work
                )
                programs.append(p)
                wait_ready(p)
            epoch = time.monotonic_ns() + EPOCH_LEAD_NS
            send_go(programs, epoch)
            if during is not None:
                during(topo)
            wait_run(programs, epoch, spec["duration_ns"], progress)
            outputs = {
                role: json.loads((work / f"{role}.json").read_text()) for role in ("rcv", "rtr", "snd")
            }
        finally:
            stop_programs(programs)
    wall = time.monotonic() - t0
    output = collect.to_native(spec, infos, outputs["rtr"], outputs["snd"], outputs["rcv"], wall)
    provenance: dict[str, Any] = {
        "backend": "kernel",
        "kernel_release": os.uname().release,
        "kernel_hz": kernel_hz(),
        "emulator_arrival": arrival_mode(),
        "cpu_model": cpu_model(),
        "sysctls": "; ".join(
            f"{role}: {k}={v}"
            for role, values in readback.items()
            for k, v in (values.get("sysctls", {}) if isinstance(values, dict) else {}).items()
        )
        + (f"; emulator: {rt_limit}" if rt_limit else ""),
        "congestion_controls": " ".join(s["cc"] for s in outputs["snd"]["flows"]),
        "host": host_provenance(spec),
        "offloads": offload_provenance(readback),
        **health_summary(
            outputs["rtr"],
            spec,
            outputs["snd"],
            outputs["rcv"],
            [paces(cc, spec["groups"][g]) for _, g, cc, *_ in infos],
        ),
    }
    if provenance["emulator_limited"] and rt_limit.startswith(RT_LIMIT_NOT_LIFTED):
        provenance["emulator_note"] += f"; {rt_limit}"
    return output, provenance


def ping(spec: Mapping[str, Any], flow: int, count: int, binary: str) -> list[int]:
    """RTTs (ns) of ICMP echoes along ``flow``'s path through an otherwise idle emulated link."""
    rtts: list[int] = []

    def during(topo: netns.Topology) -> None:
        dst = netns.receiver_ip(_group_of(spec, flow))
        done = subprocess.run(
            ["ip", "netns", "exec", topo.ns("snd"), binary, "ping", dst, str(flow), str(count), "20"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise EmulationError(f"ping: {done.stderr.strip()}")
        rtts.extend(json.loads(done.stdout)["rtt_ns"])

    # An idle run long enough for the echoes: the flows connect but never write.
    max_rtt = max(g["rtt_ns"] for g in spec["groups"])
    duration = 2_000_000_000 + count * (20_000_000 + 2 * max_rtt)
    idle = {
        **spec,
        "duration_ns": duration,
        "interval_ns": 100_000_000,
        "measure_start_ns": 0,
        "measure_end_ns": duration,
        "groups": [_idle(g, duration) for g in spec["groups"]],
    }
    execute(idle, 1, binary, during=during)
    return rtts


def _idle(group: Mapping[str, Any], duration_ns: int) -> dict[str, Any]:
    """A group of an idle run: its flows start at the last nanosecond (no arrivals, no start jitter)."""
    idle = {k: v for k, v in group.items() if k != "arrivals"}
    idle.update(start_ns=duration_ns - 1, stop_ns=None)
    if "host" in idle:
        idle["host"] = {**idle["host"], "start_jitter_ns": 0}
    return idle


def _group_of(spec: Mapping[str, Any], flow: int) -> int:
    n = 0
    for g, group in enumerate(spec["groups"]):
        n += group["count"]
        if flow < n:
            return g
    raise InputError("flow", f"no flow {flow}")
