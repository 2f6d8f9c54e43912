"""Shared helpers: small scenarios and a way to run the command line in a subprocess."""

from __future__ import annotations

import atexit
import copy
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from ccfair.errors import InputError
from ccfair.scenario import Scenario
from ccfair.toml_text import dumps as toml_dumps

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


RENO_20MS = {"cc": "reno", "rtt": "20ms"}
CUBIC_20MS = {"cc": "cubic", "rtt": "20ms"}


def plan_toml(
    grid: dict[str, list[Any]], flows: list[dict[str, Any]], *, duration: str = "2s", **top: Any
) -> str:
    """A sweep plan file's text: ``flows`` for ``duration`` through a 10 Mbit/s link of one BDP (the
    scenario's other keys, such as ``link`` or ``host``, and the plan's own keys in ``top``), and ``grid``."""
    scenario = {"duration": duration, "link": {"rate": "10Mbps", "buffer": "1bdp"}, "flows": flows}
    plan = {k: v for k, v in top.items() if k not in ("link", "host")}
    scenario.update({k: v for k, v in top.items() if k in ("link", "host")})
    return toml_dumps({**plan, "scenario": scenario, "grid": grid})


def suite_toml(**fields: Any) -> str:
    """A harm suite file's text: one cell (one flow, 20 ms, a 1-BDP FIFO at 10 Mbit/s), one repetition, with
    ``fields`` added or replaced."""
    cell = {"rate": "10Mbps", "buffers": ["1bdp"], "rtts": ["20ms"], "flow_counts": [1], "aqms": ["fifo"]}
    return toml_dumps({**cell, "repetitions": 1, **fields})


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
    *args: str, timeout: float = 120, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m ccfair ARGS`` (in ``cwd``) with captured text output; ``env`` adds to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "ccfair", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
    )


def assert_refused(done: subprocess.CompletedProcess[str], option: str, out: Path) -> None:
    """Bad input to the command line: exit code 2, an error naming ``option``, and nothing at ``out``."""
    assert done.returncode == 2 and f"error: {option}" in done.stderr, done.stderr
    assert not out.exists()


def assert_option_refused(args: list[str], option: str, tmp_path: Path) -> None:
    """``ccfair ARGS --out DIR`` in ``tmp_path`` is refused as :func:`assert_refused` says."""
    out = tmp_path / "r"
    assert_refused(run_cli(*args, "--out", str(out), timeout=600, cwd=tmp_path), option, out)


def assert_input_error(document: dict[str, Any], field: str, needle: str) -> InputError:
    """Reading ``document`` as a scenario fails: the error names ``field`` and its message says ``needle``."""
    with pytest.raises(InputError) as info:
        Scenario.from_dict(document)
    assert info.value.field == field
    assert needle in info.value.message, info.value.message
    return info.value


def read_pty_until(master: int, marker: bytes, timeout_s: float = 60) -> bytes:
    """What the ``master`` end of a pseudo-terminal shows until ``marker`` (which must come within
    ``timeout_s``: a progress bar's ``ETA``, say)."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    while marker not in seen and time.monotonic() < deadline:
        if select.select([master], [], [], 1.0)[0]:
            seen += os.read(master, 4096)
    assert marker in seen, seen
    return seen


def interrupt(proc: subprocess.Popen[Any]) -> float:
    """Sends SIGINT to ``proc`` and waits for it: the seconds from the signal to its exit."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    return time.monotonic() - sent


def read_pty(master: int, quiet_s: float) -> bytes:
    """What the ``master`` end of a pseudo-terminal has to read, until silent for ``quiet_s`` or closed."""
    text = b""
    while select.select([master], [], [], quiet_s)[0]:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other end closed: Linux reports EIO
            break
        if not chunk:
            break
        text += chunk
    return text


@pytest.fixture
def small_toml(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path
