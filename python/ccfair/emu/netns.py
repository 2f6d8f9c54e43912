"""The kernel run's network: three namespaces joined by two veth pairs, built with iproute2, and the guard
that removes them.

::

    [ccfair-<run>-snd] s0 ==veth== rs [ccfair-<run>-rtr: ccfair-emu forward] rr ==veth== r0 [ccfair-<run>-rcv]
     10.77.0.1/16                     (no addresses: the emulator bridges)              10.77.1.<g+1>/16

Every flow runs in the sender namespace; flow group g talks to its own receiver address 10.77.1.<g+1>, so
per-group settings are per-route settings on the sender side: ``initcwnd`` (the scenario's
``initial_window``) and ``features ecn`` (ECN per group, with ``tcp_ecn = 2`` in both namespaces so only
those routes ask for it). The receiver's route back carries ``initrwnd``, the largest initial window of the
groups and at least 10: a receiver's first window is that many segments (measured with ``ss`` before any
data: rcv_ssthresh 14480 at 10), where Linux's own default is the whole initial buffer (since 4.19); the
validation grid's simulated hosts set the same (``rcv_initial_window``). Neighbour entries are static (no
ARP during a run). The veths have the scenario's MTU and every offload off (see ``ccfair-emu prepare``),
except what the scenario's hosts ask for: segmentation offload (``tso``) on the senders' veth ``s0``,
receive coalescing (``gro``) on the receiver's ``r0``, with its interrupt moderation (``gro_flush``:
``gro_flush_timeout``); the router's veths keep everything off. Sysctls are set per namespace only;
nothing host-wide changes.

Teardown guard: names carry the ``ccfair-`` prefix and a run id made of the owning process's pid and start
time. :meth:`Topology.close` (called on normal exit, errors and Ctrl-C, and on SIGTERM through the runner)
kills every process in the namespaces and deletes them; :func:`sweep_stale` (run before every build)
removes the namespaces and working directories of runs whose owner is gone (a SIGKILLed run). Processes
started in the namespaces also die with their parent (PR_SET_PDEATHSIG) and exit when their standard input
closes.

One at a time: :func:`host_lock` (an exclusive ``flock`` on :func:`lock_path`, held while a run's network
exists) makes every kernel run and ``doctor`` probe on this host wait for the one in progress, whichever
process started it: two at once share the CPUs and the network stack and spoil each other's timing. The
kernel drops the lock when its holder exits, however it dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ccfair import owner
from ccfair.errors import InputError

PREFIX = "ccfair-"
ROLES = ("snd", "rtr", "rcv")
SENDER_IP = "10.77.0.1"
PREFIX_LEN = 16
SENDER_MAC = "02:cc:fa:00:00:01"
RECEIVER_MAC = "02:cc:fa:00:00:02"
ROUTER_SENDER_IF = "rs"
ROUTER_RECEIVER_IF = "rr"
SENDER_IF = "s0"
RECEIVER_IF = "r0"
_NAME = re.compile(r"^ccfair-(\d+)-(\d+)-(snd|rtr|rcv)$")
# A run's working directory (configs, the programs' outputs and stderr), in the system's temporary directory.
WORKDIR_PREFIX = "ccfair-kernel-"
_WORKDIR = re.compile(r"^ccfair-kernel-(\d+)-(\d+)-")


LOCK_ENV_VAR = "CCFAIR_KERNEL_LOCK"
DEFAULT_LOCK = Path("/run/lock/ccfair-kernel.lock")
LOCK_POLL_S = 0.2


def receiver_initrwnd(initial_windows: Iterable[int]) -> int:
    """The ``initrwnd`` of the receiver's route back: the largest initial window of the groups, at least 10
    segments (see the module docs)."""
    return max([10, *initial_windows])


def lock_path() -> Path:
    """The host-wide lock file: ``$CCFAIR_KERNEL_LOCK``, else ``/run/lock/ccfair-kernel.lock``."""
    return Path(os.environ.get(LOCK_ENV_VAR) or DEFAULT_LOCK)


@contextlib.contextmanager
def host_lock(waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """Holds this host's kernel-run lock for the block, waiting while another process holds it;
    ``waiting()`` is called every :data:`LOCK_POLL_S` meanwhile (an exception it raises, a wall-time limit,
    ends the wait). The file holds the holder's pid, for the note a waiting run prints."""
    path = lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        # The lock file is rewritten with the holder's pid: a path that names anything else (a user's file,
        # through $CCFAIR_KERNEL_LOCK) is refused, never truncated.
        held = os.pread(fd, 64, 0)
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not re.fullmatch(rb"(\d+\n)?", held):
            raise InputError(
                "CCFAIR_KERNEL_LOCK",
                f"{path} is not a ccfair lock file (it holds something else); name a new file",
            )
        noted = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not noted:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                    print(
                        f"note: waiting for the kernel run of pid {holder} to finish (one at a time here)",
                        file=sys.stderr,
                    )
                    noted = True
                if waiting is not None:
                    waiting()
                time.sleep(LOCK_POLL_S)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def receiver_ip(group: int) -> str:
    return f"10.77.1.{group + 1}"


class NetError(RuntimeError):
    """A command that builds or inspects the network failed."""


def ip(*args: str, check: bool = True) -> str:
    """Runs ``ip ARGS``; returns stdout, raises :class:`NetError` with stderr on failure."""
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    except FileNotFoundError:
        raise NetError("iproute2 (`ip`) is not installed") from None
    if check and done.returncode != 0:
        raise NetError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def veth(name: str, netns: str, mac: str, peer: str, peer_netns: str, mtu: int) -> None:
    """A veth pair of ``mtu``: ``name`` with address ``mac`` in namespace ``netns``, ``peer`` in
    ``peer_netns``."""
    this_end = ("netns", netns, "address", mac, "mtu", str(mtu))
    peer_end = ("name", peer, "netns", peer_netns, "mtu", str(mtu))
    ip("link", "add", name, *this_end, "type", "veth", "peer", *peer_end)


def new_run_id() -> str:
    """This process's owner token (:func:`ccfair.owner.token`): pid and start time."""
    return owner.token()


def list_namespaces() -> list[str]:
    out = ip("netns", "list", check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def remove_namespace(name: str) -> None:
    """Kills every process in namespace ``name`` and deletes it."""
    pids = ip("netns", "pids", name, check=False).split()
    for p in pids:
        try:
            os.kill(int(p), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    deadline = time.monotonic() + 5
    while pids and time.monotonic() < deadline:
        pids = ip("netns", "pids", name, check=False).split()
        if pids:
            time.sleep(0.02)
    ip("netns", "delete", name, check=False)


def workdir_prefix(run_id: str) -> str:
    """The prefix of run ``run_id``'s working directory, which names its owner as the namespaces do."""
    return f"{WORKDIR_PREFIX}{run_id}-"


def sweep_stale() -> list[str]:
    """Removes the namespaces and working directories of ccfair runs whose owning process is gone (a
    SIGKILLed run cannot clean up after itself); returns their names."""
    removed = []
    for name in list_namespaces():
        m = _NAME.match(name)
        if m and not owner.alive(int(m.group(1)), int(m.group(2))):
            remove_namespace(name)
            removed.append(name)
    tmp = Path(tempfile.gettempdir())
    for path in tmp.glob(f"{WORKDIR_PREFIX}*"):
        m = _WORKDIR.match(path.name)
        if m and path.is_dir() and not owner.alive(int(m.group(1)), int(m.group(2))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed


def owned_by(run_id: str) -> list[str]:
    return [n for n in list_namespaces() if n.startswith(f"{PREFIX}{run_id}-")]


@dataclass
class Topology:
    """The namespaces of one run. Use as a context manager: :meth:`close` always runs."""

    run_id: str = field(default_factory=new_run_id)
    created: list[str] = field(default_factory=list)

    def ns(self, role: str) -> str:
        return f"{PREFIX}{self.run_id}-{role}"

    def build(
        self,
        mtu: int,
        groups: list[tuple[int, bool]],
        sysctls: dict[str, dict[str, str]],
        helper: str,
        endpoint_cpus: list[int] | None = None,
        offloads: HostOffloads | None = None,
    ) -> dict[str, object]:
        """Creates the namespaces, veths, addresses, routes and neighbours; applies ``sysctls[role]`` and
        sets the veths' offloads with ``helper`` (the ccfair-emu binary): all off but what ``offloads``
        asks for. ``groups`` is (initial window, ECN) per flow group. With ``endpoint_cpus``, the senders'
        and receiver's receive processing is steered to those CPUs (RPS), away from the emulator's. Returns
        what ``prepare`` read back, per role."""
        snd, rtr, rcv = (self.ns(r) for r in ROLES)
        for name in (snd, rtr, rcv):
            ip("netns", "add", name)
            self.created.append(name)
        # Both ends of each veth are created inside their namespaces: nothing ever sits in the host's.
        veth(SENDER_IF, snd, SENDER_MAC, ROUTER_SENDER_IF, rtr, mtu)
        veth(RECEIVER_IF, rcv, RECEIVER_MAC, ROUTER_RECEIVER_IF, rtr, mtu)
        readback: dict[str, object] = {}
        interfaces = {"snd": [SENDER_IF], "rtr": [ROUTER_SENDER_IF, ROUTER_RECEIVER_IF], "rcv": [RECEIVER_IF]}
        on = veth_offloads(offloads or HostOffloads())
        for role, name in zip(ROLES, (snd, rtr, rcv), strict=True):
            args = [helper, "prepare"]
            for key, value in sysctls.get(role, {}).items():
                args += ["--sysctl", f"{key}={value}"]
            for dev in interfaces[role]:
                args += ["--offloads", f"{dev}={on.get(dev, 'none')}"]
                if dev == RECEIVER_IF and offloads is not None and offloads.gro:
                    args += ["--gro-flush", f"{dev}={offloads.gro_flush_ns}"]
                if endpoint_cpus and role != "rtr":
                    args += ["--rps", f"{dev}={sum(1 << c for c in endpoint_cpus):x}"]
            readback[role] = _json_out(["ip", "netns", "exec", name, *args])
            ip("-n", name, "link", "set", "lo", "up")
            for dev in interfaces[role]:
                ip("-n", name, "link", "set", dev, "up")
        ip("-n", snd, "addr", "add", f"{SENDER_IP}/{PREFIX_LEN}", "dev", SENDER_IF)
        max_iw = receiver_initrwnd(iw for iw, _ in groups)
        for g, (iw, ecn) in enumerate(groups):
            ip("-n", rcv, "addr", "add", f"{receiver_ip(g)}/{PREFIX_LEN}", "dev", RECEIVER_IF)
            route = ["-n", snd, "route", "add", f"{receiver_ip(g)}/32", "dev", SENDER_IF, "initcwnd", str(iw)]
            if ecn:
                route += ["features", "ecn"]
            ip(*route)
            ip(
                "-n",
                snd,
                "neigh",
                "replace",
                receiver_ip(g),
                "lladdr",
                RECEIVER_MAC,
                "dev",
                SENDER_IF,
                "nud",
                "permanent",
            )
        ip("-n", rcv, "route", "add", f"{SENDER_IP}/32", "dev", RECEIVER_IF, "initrwnd", str(max_iw))
        ip(
            "-n",
            rcv,
            "neigh",
            "replace",
            SENDER_IP,
            "lladdr",
            SENDER_MAC,
            "dev",
            RECEIVER_IF,
            "nud",
            "permanent",
        )
        return readback

    def close(self) -> None:
        """Removes everything this run created (idempotent)."""
        for name in reversed(self.created):
            remove_namespace(name)
        self.created.clear()
        for name in owned_by(self.run_id):  # anything a failed build left half-made
            remove_namespace(name)

    def __enter__(self) -> Topology:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class HostOffloads:
    """The offloads of the run's hosts: segmentation offload at the senders, coalescing at the receiver."""

    tso: bool = False
    gro: bool = False
    # The receiver's interrupt moderation: GRO merges what arrives within this of a poll (0: none).
    gro_flush_ns: int = 0


def veth_offloads(offloads: HostOffloads) -> dict[str, str]:
    """``ccfair-emu prepare --offloads`` lists per veth that has any on: TSO at the senders' veth, GRO at
    the receiver's (the veth whose NAPI poll runs the receiver's receive path)."""
    on = {}
    if offloads.tso:
        on[SENDER_IF] = "tso"
    if offloads.gro:
        on[RECEIVER_IF] = "gro"
    return on


def _json_out(args: list[str]) -> object:
    done = subprocess.run(args, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise NetError(f"{' '.join(args[4:6])} in {args[3]}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def require_root(field_name: str = "backend") -> None:
    """Raises :class:`InputError` unless running as root (namespaces, AF_PACKET and sysctls need it)."""
    if os.geteuid() != 0:
        raise InputError(
            field_name, "the kernel backend needs root (network namespaces, AF_PACKET); run it with sudo"
        )
