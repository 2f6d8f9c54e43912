"""ccfair against ns-3 on the same dumbbell (``make bench-ns3``): wall time of the simulation alone.

The scenario is ``ccfair bench`` case B at two rates: 10 Cubic flows, 10 ms base RTT, a FIFO of 0.5 BDP,
10 simulated seconds, at 100 Mbps and 1 Gbps. ns-3 comes from its PyPI wheel (``ns3``: the ns-3 libraries
and headers, with cppyy bindings), installed without dependencies into its own virtualenv under
``target/ns3-bench/`` (the C++ program needs neither cppyy nor Python); ``bench/ns3/dumbbell.cc`` is
compiled against the wheel's headers and libraries with the system's C++ compiler. Each side runs
``--repetitions`` times (default 3), and the table gives the range of their wall times and the ratio of the
medians. Both report their events, which count different things (ns-3 schedules an event per device
transmission, queue-disc wake-up and socket call; ccfair one per packet arrival, link completion and timer),
and the bytes delivered, which must agree roughly for the comparison to mean anything.

Caveat: the wheel's libraries are ns-3's ``default`` build profile (logging and asserts compiled in, as
its error strings show), not ``optimized``; an optimized build of ns-3 is faster by a constant factor.

Usage: python bench/ns3/compare.py [--repetitions N] [--seconds S]
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import venv
from pathlib import Path

from ccfair.runner import run
from ccfair.scenario import Scenario
from ccfair.tables import Column, fixed, render, text

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "target" / "ns3-bench"
SOURCE = Path(__file__).with_name("dumbbell.cc")
NS3_REQUIREMENT = "ns3>=3.42,<3.50"  # the wheels with headers and shared libraries (3.42 to 3.44 on PyPI)
NS3_MODULES = (
    "core",
    "network",
    "internet",
    "point-to-point",
    "point-to-point-layout",
    "applications",
    "traffic-control",
)
RATES = ("100Mbps", "1Gbps")
FLOWS = 10
RTT = "10ms"
BUFFER = "0.5bdp"


class Unavailable(Exception):
    """ns-3 cannot be installed or built here; the message says why."""


def ns3_prefix() -> Path:
    """The ns3 package directory of the wheel in its own virtualenv, installing it the first time."""
    env = WORK / "venv"
    python = env / "bin" / "python"
    if not python.exists():
        print(f"making the virtualenv {env} for ns-3's wheel", file=sys.stderr)
        venv.create(env, with_pip=True)
    found = glob.glob(str(env / "lib" / "python3*" / "site-packages" / "ns3" / "lib64"))
    if not found:
        print(f"installing {NS3_REQUIREMENT} from PyPI (about 70 MB)", file=sys.stderr)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "--no-deps", NS3_REQUIREMENT],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise Unavailable(f"pip could not install {NS3_REQUIREMENT}: {done.stderr.strip()[-500:]}")
        found = glob.glob(str(env / "lib" / "python3*" / "site-packages" / "ns3" / "lib64"))
        if not found:
            raise Unavailable(f"the installed {NS3_REQUIREMENT} wheel has no lib64 directory")
    return Path(found[0]).parent


def build(prefix: Path) -> Path:
    """The compiled dumbbell program (compiled again when its source or the libraries are newer)."""
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        raise Unavailable("no C++ compiler (set CXX, or install g++)")
    libs = sorted((prefix / "lib64").glob("libns3.*-core.so"))
    if not libs:
        raise Unavailable(f"no libns3.*-core.so in {prefix / 'lib64'}")
    version = libs[0].name.removeprefix("lib").removesuffix("-core.so")  # "ns3.44"
    binary = WORK / f"dumbbell-{version}"
    if binary.exists() and binary.stat().st_mtime > max(SOURCE.stat().st_mtime, libs[0].stat().st_mtime):
        return binary
    print(f"compiling {SOURCE.name} against {version}", file=sys.stderr)
    command = [
        compiler, "-O2", "-std=c++20", f"-I{prefix / 'include'}", str(SOURCE), "-o", str(binary),
        f"-L{prefix / 'lib64'}", *(f"-l{version}-{m}" for m in NS3_MODULES), f"-Wl,-rpath,{prefix / 'lib64'}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise Unavailable(f"compiling {SOURCE} failed: {done.stderr.strip()[-1500:]}")
    return binary


def scenario(rate: str, seconds: float) -> Scenario:
    return Scenario.from_dict(
        {
            "duration": f"{seconds}s",
            "link": {"rate": rate, "buffer": BUFFER, "aqm": "fifo"},
            "flows": [{"cc": "cubic", "rtt": RTT, "count": FLOWS}],
        }
    )


def run_ns3(binary: Path, sc: Scenario, rate: str, seconds: float) -> dict[str, float]:
    packets = sc.buffer_limit()["packets"]
    rtt_ms = sc.base_rtt_ns() / 1e6
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [str(binary), f"--flows={FLOWS}", f"--rate={rate}", f"--rttMs={rtt_ms}", f"--bufferPackets={packets}",
         f"--seconds={seconds}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    fields = {k: float(v) for k, v in (pair.split("=", 1) for pair in done.stdout.split())}
    # The whole process's CPU time (set-up included): on a busy machine, wall time also counts waiting.
    fields["cpu_seconds"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return fields


def run_ccfair(sc: Scenario) -> dict[str, float]:
    cpu_start = time.process_time()
    result = run(sc, seed=1)
    return {
        "cpu_seconds": time.process_time() - cpu_start,  # the result tables included: a few ms
        "wall_seconds": float(result.summary["wall_seconds"]),
        "events": float(result.summary["events"]),
        "received_bytes": float(result.flows["total_delivered_bytes"].sum()),
    }


def compare(repetitions: int, seconds: float) -> str:
    binary = build(ns3_prefix())
    rows = []
    for rate in RATES:
        sc = scenario(rate, seconds)
        ours = [run_ccfair(sc) for _ in range(repetitions)]
        theirs = []
        for i in range(repetitions):  # minutes at 1 Gbps: say how far it is
            print(f"{rate}: ns-3 run {i + 1} of {repetitions}", file=sys.stderr)
            theirs.append(run_ns3(binary, sc, rate, seconds))
        ours_wall = [r["wall_seconds"] for r in ours]
        theirs_wall = [r["wall_seconds"] for r in theirs]
        rows.append(
            {
                "rate": rate,
                "ccfair": f"{min(ours_wall):.3f} to {max(ours_wall):.3f}",
                "ns3": f"{min(theirs_wall):.2f} to {max(theirs_wall):.2f}",
                "ns3_cpu": statistics.median(r["cpu_seconds"] for r in theirs),
                "ratio": statistics.median(theirs_wall) / statistics.median(ours_wall),
                "cpu_ratio": statistics.median(r["cpu_seconds"] for r in theirs)
                / statistics.median(r["cpu_seconds"] for r in ours),
                "ccfair_events": f"{ours[0]['events'] / 1e6:.2f} M",
                "ns3_events": f"{theirs[0]['events'] / 1e6:.2f} M",
                "ccfair_mb": ours[0]["received_bytes"] / 1e6,
                "ns3_mb": theirs[0]["received_bytes"] / 1e6,
            }
        )
    columns = [
        Column("rate", "rate", text, "left"),
        Column("ccfair wall s", "ccfair", text),
        Column("ns-3 wall s", "ns3", text),
        Column("ns-3 CPU s", "ns3_cpu", fixed(2)),
        Column("ns-3 / ccfair wall", "ratio", fixed(0)),
        Column("CPU", "cpu_ratio", fixed(0)),
        Column("ccfair events", "ccfair_events", text),
        Column("ns-3 events", "ns3_events", text),
        Column("ccfair MB", "ccfair_mb", fixed(1)),
        Column("ns-3 MB", "ns3_mb", fixed(1)),
    ]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    head = (
        f"{FLOWS} Cubic flows, {RTT}, {BUFFER} FIFO, {seconds:g} s simulated; {repetitions} runs each, "
        "wall time of the simulation alone (ranges; ns-3's CPU seconds and the ratios of wall and of CPU "
        "time: medians); "
        f"load average {load}\n"
    )
    return head + render(rows, columns) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/ns3/compare.py", description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=3, help="runs of each simulator per rate")
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds (default 10)")
    args = parser.parse_args(argv)
    if args.repetitions < 1 or not args.seconds > 0:
        print("error: --repetitions must be at least 1 and --seconds above 0", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(compare(args.repetitions, args.seconds))
    except Unavailable as e:
        print(f"bench-ns3: ns-3 is not available here: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
