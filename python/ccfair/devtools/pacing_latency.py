"""The kernel backend's pacing timer, measured: how late TCP's internal pacing timer fires after the departure
time it was set for. The simulator's host model draws that lateness (`pacing_slack`: the timer fires within
`[deadline, deadline + pacing_slack)`), and half of it comes back as credit to the next gap
(`tcp_update_skb_after_send`), so it moves what a paced flow really sends.

    sudo python -m ccfair.devtools.pacing_latency capture bbr-staggered-4 out/   # a grid cell on the kernel
    python -m ccfair.devtools.pacing_latency analyze out/                        # the lateness again

The kernel backend's senders pace inside TCP (BBR asks for it, and their veth's qdisc is not sch_fq):
`tcp_pacing_check` arms the socket's `pacing_timer` for `tcp_wstamp_ns` with `hrtimer_start(...,
HRTIMER_MODE_ABS_PINNED_SOFT)`, an hrtimer with no slack range that runs its callback, `tcp_pace_kick`, from
the timer softirq (`net/ipv4/tcp_output.c`). Its lateness is therefore the wake-up of the timer interrupt
and the softirq, not a configured slack such as sch_fq's 10 us watchdog range. `capture` runs one cell of
the validation grid on the kernel backend with the kernel's `timer:hrtimer_start` and
`timer:hrtimer_expire_entry` tracepoints on, filtered to that callback, in a tracing instance of its own
(the global trace buffer is left alone), and pairs each expiry with the start that armed it: lateness =
the expiry's `now` minus the start's `expires`, both CLOCK_MONOTONIC. It needs root and tracefs; nothing is
written outside OUT.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from pathlib import Path

from ccfair.devtools.host_latency import (
    capture_parser,
    grid_cell_scenario,
    quantile,
    run_on_kernel,
    write_scenario,
)

TRACEFS = Path("/sys/kernel/tracing")
INSTANCE = "ccfair-pacing"
CALLBACK = "tcp_pace_kick"
EVENTS = ("hrtimer_start", "hrtimer_expire_entry")
TRACE_NAME = "pacing.trace"
_START = re.compile(r"hrtimer_start: hrtimer=(\S+) function=(\S+) expires=(\d+)")
_EXPIRE = re.compile(r"hrtimer_expire_entry: hrtimer=(\S+) function=(\S+) now=(\d+)")


def lateness_ns(lines: Iterable[str], callback: str = CALLBACK) -> list[int]:
    """Each expiry of a ``callback`` timer against the latest start of the same timer: ``now - expires``.
    An expiry whose start the trace does not hold (armed before it began) is left out, and so is a start
    that never expired (cancelled, or re-armed first: the later start replaces it)."""
    armed: dict[str, int] = {}
    out: list[int] = []
    for line in lines:
        if m := _START.search(line):
            if m.group(2) == callback:
                armed[m.group(1)] = int(m.group(3))
        elif (m := _EXPIRE.search(line)) and m.group(2) == callback:
            expires = armed.pop(m.group(1), None)
            if expires is not None:
                out.append(int(m.group(3)) - expires)
    return out


def describe(values: list[int]) -> str:
    """Mean and quantiles in us, and the simulator's `pacing_slack` with the same mean."""
    if not values:
        return "no pacing timer expiries traced (does the cell have a paced flow?)"
    mean_ns = statistics.fmean(values)
    p10, p50, p90, p99 = (quantile(values, q) / 1e3 for q in (0.1, 0.5, 0.9, 0.99))
    return (
        f"pacing timer lateness: n {len(values)}, mean {mean_ns / 1e3:.1f} us, p10 {p10:.1f}, p50 {p50:.1f}, "
        f"p90 {p90:.1f}, p99 {p99:.1f}; a uniform pacing_slack with this mean: {2 * mean_ns / 1e3:.0f} us"
    )


def _address(symbol: str) -> str:
    for line in Path("/proc/kallsyms").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == symbol:
            if int(parts[0], 16) == 0:
                raise SystemExit("/proc/kallsyms hides addresses: run as root")
            return "0x" + parts[0]
    raise SystemExit(f"{symbol}: not in /proc/kallsyms (a kernel without TCP pacing?)")


def capture(cell_name: str, out: Path) -> None:
    cell = grid_cell_scenario(cell_name)
    if not (TRACEFS / "instances").is_dir():
        raise SystemExit(f"{TRACEFS}: no tracefs (mount -t tracefs nodev {TRACEFS})")
    instance = TRACEFS / "instances" / INSTANCE
    if instance.exists():
        raise SystemExit(f"{instance}: exists (another capture running, or left over: rmdir it)")
    filter_text = f"function == {_address(CALLBACK)}"
    scenario = write_scenario(cell, out)
    instance.mkdir()
    try:
        (instance / "buffer_size_kb").write_text("32768")
        for event in EVENTS:
            (instance / "events" / "timer" / event / "filter").write_text(filter_text)
            (instance / "events" / "timer" / event / "enable").write_text("1")
        code = run_on_kernel(scenario, out)
        (instance / "tracing_on").write_text("0")
        (out / TRACE_NAME).write_bytes((instance / "trace").read_bytes())
    finally:
        for event in EVENTS:
            (instance / "events" / "timer" / event / "enable").write_text("0")
        instance.rmdir()
    if code != 0:
        raise SystemExit(f"the kernel run exited {code}")


def analyze(out: Path) -> str:
    with (out / TRACE_NAME).open() as trace:
        return describe(lateness_ns(trace))


def main(argv: list[str] | None = None) -> None:
    parser, _ = capture_parser(
        "python -m ccfair.devtools.pacing_latency",
        __doc__,
        "run a grid cell on the kernel backend with the timer traced (root)",
        "the pacing timer's lateness in a capture",
    )
    args = parser.parse_args(argv)
    if args.command == "capture":
        capture(args.cell, args.out)
    print(analyze(args.out))


if __name__ == "__main__":
    main()
