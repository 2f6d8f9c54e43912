"""Who owns a leftover: a process named by its pid and its start time.

Things a process leaves behind when it is killed with SIGKILL (temporary output directories, the kernel
backend's namespaces and working directories) carry their owner's token ``<pid>-<start ticks>`` in their
names. A later process removes them only once that owner is gone. The start time (field 22 of
``/proc/PID/stat``, clock ticks since boot) makes the token unique over time: a new process that reuses
the pid has another start time, so pid reuse cannot make a dead owner look alive.

Without ``/proc`` (not Linux) a process's start time is unknown: every owner then counts as alive, so
nothing is ever removed by mistake.
"""

from __future__ import annotations

import os
from pathlib import Path


def start_ticks(pid: int) -> int | None:
    """The start time (clock ticks since boot) of process ``pid``, or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
    return int(stat.rsplit(")", 1)[1].split()[19])


def token() -> str:
    """This process's token, ``<pid>-<start ticks>`` (ticks 0 where they are unknown)."""
    pid = os.getpid()
    return f"{pid}-{start_ticks(pid) or 0}"


def alive(pid: int, ticks: int) -> bool:
    """Whether the process that wrote the token ``<pid>-<ticks>`` still runs. True when it cannot be told
    (no ``/proc``), so that a caller never removes what a live process owns."""
    if not Path("/proc/self/stat").exists():
        return True
    return start_ticks(pid) == ticks
