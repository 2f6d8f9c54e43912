"""The kernel backend's end hosts, measured: how long a sender takes from an ACK reaching its veth to the new
data that ACK releases leaving it, how long the receiver takes from a data segment reaching its veth to the
ACK for it leaving, and whether the receiver stretches its ACKs outside loss recovery. These are the
quantities the simulator's host model draws (`noise`, `noise_scale`: a per-packet delay at the sender and at
the receiver; `gro`: stretch ACKs), so the numbers here are what its presets are checked against.

    sudo python -m ccfair.devtools.host_latency capture bbr-vs-8cubic out/   # a grid cell on the kernel
    python -m ccfair.devtools.host_latency analyze out/ --skip 5s           # the latencies and ACK sizes

`capture` runs one cell of the validation grid (`ccfair validate --list`) on the kernel backend with
tcpdump on the sender's veth (`s0`) and the receiver's (`r0`) inside their namespaces: packet-socket
timestamps, taken where the kernel's receive path first sees a frame and where its transmit path hands one
to the device. It needs root and tcpdump; nothing is written outside OUT.

What `analyze` reports, per direction:
- receiver: for each ACK whose number is the end of a data segment seen at `r0`, the time from that segment
  to the ACK. ACKs sent within 200 us are the ones the segment triggered (every second segment, a quick
  ACK); the rest waited for the delayed-ACK timer and are counted apart.
- sender: per flow, for each ACK seen at `s0`, the time to the first new data after it, if any came before
  the next ACK: the ACK's receive path, TCP and the transmit path. Unpaced flows answer at once; a paced
  flow's data waits for its pacing timer, so its numbers are the pacing, not the host.
- ACK sizes: segments newly acknowledged per ACK, counted only between ACKs that carry no SACK block (a
  cumulative ACK that fills a hole covers everything SACKed behind it, which is recovery, not stretching).
- the variable part of each latency as an exponential's mean, (p90 - p10) / ln 9, the host model's
  `noise_scale` that would spread the same way (its fixed part only adds to the path's delay).
"""

from __future__ import annotations

import argparse
import math
import shutil
import struct
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ccfair.units import parse_duration_ns

IMMEDIATE_ACK_NS = 200_000
PCAP_NS_MAGIC = 0xA1B23C4D
PCAP_US_MAGIC = 0xA1B2C3D4
ETH_IPV4 = 0x0800
TCP_OPT_END, TCP_OPT_NOP, TCP_OPT_SACK = 0, 1, 5
SEQ_MOD = 1 << 32


class Segment(NamedTuple):
    """One captured TCP segment (IPv4)."""

    t_ns: int
    sport: int
    dport: int
    seq: int
    ack: int
    payload: int
    sack: bool


def _has_sack(options: bytes) -> bool:
    i = 0
    while i < len(options):
        kind = options[i]
        if kind == TCP_OPT_END:
            return False
        if kind == TCP_OPT_NOP:
            i += 1
            continue
        if kind == TCP_OPT_SACK:
            return True
        if i + 1 >= len(options):
            return False
        i += max(2, options[i + 1])
    return False


def read_pcap(path: Path) -> Iterator[Segment]:
    """The IPv4 TCP segments of a classic pcap file (micro- or nanosecond timestamps). A capture cut short
    (tcpdump stopped mid-record) ends at its last whole record."""
    with path.open("rb") as f:
        header = f.read(24)
        if len(header) < 24:
            return
        magic = struct.unpack("<I", header[:4])[0]
        if magic not in (PCAP_NS_MAGIC, PCAP_US_MAGIC):
            raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
        frac_ns = 1 if magic == PCAP_NS_MAGIC else 1000
        while True:
            record = f.read(16)
            if len(record) < 16:
                return
            sec, frac, captured, _ = struct.unpack("<IIII", record)
            frame = f.read(captured)
            if len(frame) < captured or len(frame) < 54:
                return
            if struct.unpack("!H", frame[12:14])[0] != ETH_IPV4 or frame[23] != 6:
                continue
            ip = frame[14:]
            ihl = (ip[0] & 15) * 4
            total = struct.unpack("!H", ip[2:4])[0]
            tcp = ip[ihl:]
            sport, dport, seq, ack = struct.unpack("!HHII", tcp[:12])
            doff = (tcp[12] >> 4) * 4
            yield Segment(
                sec * 1_000_000_000 + frac * frac_ns,
                sport,
                dport,
                seq,
                ack,
                total - ihl - doff,
                _has_sack(tcp[20:doff]),
            )


def _after(a: int, b: int) -> bool:
    """Sequence number ``a`` is after ``b`` (modulo 2^32)."""
    return a != b and (a - b) % SEQ_MOD < SEQ_MOD // 2


def receiver_latencies(segments: list[Segment], from_ns: int) -> list[int]:
    """At the receiver's veth: for each ACK whose number ends a data segment seen there, the time from that
    segment to the ACK (ns). Data flows from the sender's port to the receiver's; ACKs the other way."""
    seen: dict[tuple[int, int], dict[int, int]] = defaultdict(dict)  # (sender, receiver port) -> end -> t
    out: list[int] = []
    for s in segments:
        if s.payload > 0:
            seen[(s.sport, s.dport)][(s.seq + s.payload) % SEQ_MOD] = s.t_ns
            continue
        sent = seen.get((s.dport, s.sport))
        if sent is not None and s.t_ns >= from_ns and s.ack in sent:
            out.append(s.t_ns - sent[s.ack])
    return out


def sender_latencies(segments: list[Segment], from_ns: int) -> dict[int, list[int]]:
    """At the sender's veth, per flow (its port): for each ACK, the time to the first new data after it when
    that came before the flow's next ACK (ns)."""
    last_ack: dict[int, int] = {}
    highest: dict[int, int] = {}
    out: dict[int, list[int]] = defaultdict(list)
    for s in segments:
        if s.payload == 0:
            last_ack[s.dport] = s.t_ns
            continue
        end = (s.seq + s.payload) % SEQ_MOD
        if s.sport in highest and not _after(end, highest[s.sport]):
            continue  # a retransmission
        highest[s.sport] = end
        t_ack = last_ack.pop(s.sport, None)
        if t_ack is not None and s.t_ns >= from_ns:
            out[s.sport].append(s.t_ns - t_ack)
    return dict(out)


def ack_sizes(segments: list[Segment], from_ns: int, mss: int) -> dict[int, Counter[int]]:
    """Per flow (the sender's port): how many segments each ACK newly acknowledged, counted only when
    neither it nor the ACK before it carried a SACK block."""
    prev: dict[int, tuple[int, bool]] = {}
    out: dict[int, Counter[int]] = defaultdict(Counter)
    for s in segments:
        if s.payload > 0:
            continue
        before = prev.get(s.dport)
        prev[s.dport] = (s.ack, s.sack)
        if before is None or s.sack or before[1] or s.t_ns < from_ns:
            continue
        if _after(s.ack, before[0]):
            out[s.dport][round((s.ack - before[0]) % SEQ_MOD / mss)] += 1
    return dict(out)


def quantile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def describe(values: list[int]) -> str:
    """p10/p50/p90/p99 in us and the exponential mean that spreads like p10..p90."""
    if not values:
        return "no samples"
    p10, p50, p90, p99 = (quantile(values, q) / 1e3 for q in (0.1, 0.5, 0.9, 0.99))
    return (
        f"n {len(values)}, p10 {p10:.1f} us, p50 {p50:.1f}, p90 {p90:.1f}, p99 {p99:.1f}; "
        f"variable part as an exponential: mean {(p90 - p10) / math.log(9):.1f} us"
    )


def analyze(out: Path, skip_ns: int, mss: int) -> str:
    sender = list(read_pcap(out / "s0.pcap"))
    receiver = list(read_pcap(out / "r0.pcap"))
    if not sender or not receiver:
        raise SystemExit(f"{out}: no segments in s0.pcap or r0.pcap")
    from_ns = sender[0].t_ns + skip_ns
    lines = []
    rx = receiver_latencies(receiver, from_ns)
    immediate = [x for x in rx if x < IMMEDIATE_ACK_NS]
    lines.append(f"receiver, data to the ACK it triggered: {describe(immediate)}")
    lines.append(f"receiver, ACKs sent later (delayed-ACK timer): {len(rx) - len(immediate)} of {len(rx)}")
    for port, values in sorted(sender_latencies(sender, from_ns).items()):
        lines.append(f"sender flow {port}, ACK to the new data it released: {describe(values)}")
    for port, sizes in sorted(ack_sizes(receiver, from_ns, mss).items()):
        acks = sum(sizes.values())
        segs = sum(k * v for k, v in sizes.items())
        stretched = sum(k * v for k, v in sizes.items() if k > 2)
        lines.append(
            f"ACKs of flow {port} outside recovery: {acks}, {segs / acks:.2f} segments each, "
            f"{stretched / max(segs, 1):.3f} of the segments in ACKs of more than 2, largest {max(sizes)}"
        )
    return "\n".join(lines)


def _router_namespace() -> str | None:
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        if name.startswith("ccfair-") and name.endswith("-rtr"):
            return name
    return None


# ------------------------------------------------------------- what this tool and pacing_latency share


def grid_cell_scenario(cell_name: str) -> dict[str, Any]:
    """The scenario of the validation grid's cell ``cell_name`` (an exit naming the cell if there is none)."""
    from ccfair.studies.validate.grid import CELLS

    cells = {c.name: c for c in CELLS}
    if cell_name not in cells:
        raise SystemExit(f"cell: no cell {cell_name!r} in the grid (see ccfair validate --list)")
    return cells[cell_name].scenario(None)


def write_scenario(scenario: dict[str, Any], out: Path) -> Path:
    """``scenario`` as ``scenario.toml`` in the capture directory ``out``, which must not exist yet."""
    from ccfair.toml_text import dumps

    out.mkdir(parents=True, exist_ok=False)
    path = out / "scenario.toml"
    path.write_text(dumps(scenario))
    return path


def run_on_kernel(scenario: Path, out: Path) -> int:
    """``ccfair run SCENARIO`` on the kernel backend, its JSON in ``out/result.json``; the exit code."""
    argv = [sys.executable, "-m", "ccfair", "run", str(scenario), "--backend", "kernel", "--json", "--quiet"]
    with (out / "result.json").open("wb") as result:
        return subprocess.run(argv, stdout=result, check=False).returncode


def capture_parser(
    prog: str, description: str | None, capture_help: str, analyze_help: str
) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command line of a capture tool: ``capture CELL OUT`` and ``analyze OUT``; the parser and the
    ``analyze`` subparser, for the tool's own options."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("capture", help=capture_help)
    c.add_argument("cell")
    c.add_argument("out", type=Path)
    a = sub.add_parser("analyze", help=analyze_help)
    a.add_argument("out", type=Path)
    return parser, a


# ------------------------------------------------------------------------------------------- the capture


def capture(cell_name: str, out: Path) -> None:
    cell = grid_cell_scenario(cell_name)
    if shutil.which("tcpdump") is None:
        raise SystemExit("tcpdump: not found (apt install tcpdump)")
    if _router_namespace() is not None:
        raise SystemExit("another kernel run is in progress (a ccfair-*-rtr namespace exists)")
    scenario = write_scenario(cell, out)
    dumps_started: list[subprocess.Popen[bytes]] = []

    def attach() -> None:
        for _ in range(2000):
            router = _router_namespace()
            if router is not None:
                base = router.removesuffix("-rtr")
                time.sleep(0.05)  # the veths are made right after the namespaces
                for ns, dev in ((f"{base}-snd", "s0"), (f"{base}-rcv", "r0")):
                    argv = ["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-s", "96"]
                    argv += ["--time-stamp-precision=nano", "-w", str(out / f"{dev}.pcap"), "tcp"]
                    err = (out / f"{dev}.tcpdump.log").open("wb")
                    dumps_started.append(subprocess.Popen(argv, stderr=err))
                return
            time.sleep(0.01)

    watcher = threading.Thread(target=attach, daemon=True)
    watcher.start()
    code = run_on_kernel(scenario, out)
    watcher.join(timeout=1)
    for p in dumps_started:
        p.terminate()
        p.wait(timeout=10)
    if code != 0 or len(dumps_started) != 2:
        raise SystemExit(f"the kernel run exited {code}; captures attached: {len(dumps_started)} of 2")


def main(argv: list[str] | None = None) -> None:
    parser, a = capture_parser(
        "python -m ccfair.devtools.host_latency",
        __doc__,
        "run a grid cell on the kernel backend with captures (root)",
        "the latencies and ACK sizes of a capture",
    )
    a.add_argument("--skip", default="5s", help="leave out the run's first part (default 5s)")
    a.add_argument("--mss", type=int, default=1448, help="payload bytes per segment (default 1448)")
    args = parser.parse_args(argv)
    if args.command == "capture":
        capture(args.cell, args.out)
        print(analyze(args.out, parse_duration_ns("5s", "skip"), 1448))
    else:
        print(analyze(args.out, parse_duration_ns(args.skip, "--skip", allow_zero=True), args.mss))


if __name__ == "__main__":
    main()
