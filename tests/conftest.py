"""Shared helpers: small scenarios and a way to run the command line in a subprocess."""

from __future__ import annotations

import atexit
import copy
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"

# The tests never read or write the user's saved `ccfair doctor` measurement: what `doctor --no-measure` and
# the kernel runs' rate check see would otherwise depend on whatever this host last measured. Tests that need
# a measurement (the kernel tests) point the variable at their own file and restore it afterwards.
if "CCFAIR_DOCTOR_FILE" not in os.environ:
    _doctor_dir = tempfile.mkdtemp(prefix="ccfair-tests-")
    atexit.register(shutil.rmtree, _doctor_dir, ignore_errors=True)
    os.environ["CCFAIR_DOCTOR_FILE"] = str(Path(_doctor_dir) / "doctor.json")

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
