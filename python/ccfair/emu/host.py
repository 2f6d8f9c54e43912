"""What the kernel backend's resolution needs to know of this machine (the scenario crate's kernel rules,
``crates/ccfair-scenario/src/kernel.rs``, take it as an argument): the congestion controls its kernel
offers."""

from __future__ import annotations

from pathlib import Path

AVAILABLE_CC_FILE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def kernel_ccs() -> list[str]:
    """The congestion controls the running kernel offers (nothing is loaded)."""
    try:
        return AVAILABLE_CC_FILE.read_text().split()
    except OSError:
        return []
