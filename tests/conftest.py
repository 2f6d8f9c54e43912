"""Shared helpers: small scenarios and a way to run the command line in a subprocess."""

from __future__ import annotations

import atexit
import copy
import os
import shutil
import signal
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


def default_sigint() -> None:
    """``preexec_fn`` of a child a test interrupts with SIGINT: the default disposition back. A test run
    from a non-interactive shell (a background job) inherits SIGINT ignored, and an ignored SIGINT stays
    ignored across exec, so without this the child would never see the Ctrl-C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(
    *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m ccfair ARGS`` with captured text output; ``env`` adds to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "ccfair", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )


@pytest.fixture
def small_toml(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path
