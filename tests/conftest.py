"""Shared helpers: small scenarios and a way to run the command line in a subprocess."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"

SMALL_TOML = """\
duration = "10s"
seed = 3

[link]
rate = "10Mbps"
buffer = "1bdp"

[[flows]]
cc = "reno"
rtt = "50ms"

[[flows]]
cc = "cubic"
rtt = "50ms"
"""

SMALL: dict[str, Any] = {
    "duration": "10s",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "reno", "rtt": "50ms"}, {"cc": "cubic", "rtt": "50ms"}],
}


def small(**top: Any) -> dict[str, Any]:
    """A deep copy of the small two-flow scenario with top-level keys replaced."""
    d = copy.deepcopy(SMALL)
    d.update(top)
    return d


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m ccfair ARGS`` with captured text output."""
    return subprocess.run(
        [sys.executable, "-m", "ccfair", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
def small_toml(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path
