"""Ctrl-C ends a run promptly at any link rate and with any queue discipline: the simulation advances in
chunks sized in work done (events, and the runs of the queue discipline's own timer, which no event carries;
about 20 ms of wall time each), not in simulated time, whose cost grows with the rate and the timer.

A process started from a non-interactive shell may inherit SIGINT as ignored (job control leaves background
jobs so), and Python then never raises KeyboardInterrupt: each child here restores the default disposition
first, so that the test measures the program and not its parent."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import default_sigint, interrupt, read_pty_until

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

FAST_TOML = """\
duration = "3600s"
[link]
rate = "100Gbps"
buffer = "1bdp"
[[flows]]
cc = "cubic"
rtt = "10ms"
"""

# DualPI2 updating every microsecond (the kernel's floor) on a link so slow that a packet takes 600 ms: the
# timer's million updates per simulated second are nearly all the work, and a chunk of 16,384 events (what
# the first chunk was, sized in events alone) carried 5.6 s of it.
TIMER_TOML = """\
duration = "3600s"
[link]
rate = "20kbps"
buffer = "100pkt"
aqm = { name = "dualpi2", tupdate_ns = 1000 }
[[flows]]
cc = "cubic"
rtt = "20ms"
"""


def interrupt_after_progress(path: Path, settle_s: float) -> tuple[int, float]:
    """Runs ``ccfair run PATH`` with its progress bar on a pseudo-terminal, sends SIGINT ``settle_s`` after
    the bar appears, and returns the exit code and the seconds from the signal to the exit."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccfair", "run", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=slave,
        preexec_fn=default_sigint,
    )
    os.close(slave)
    try:
        read_pty_until(master, b"ETA")  # the progress bar: the run is going
        time.sleep(settle_s)
        took = interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return proc.returncode, took


@pytest.mark.skipif(sys.platform != "linux", reason="needs a pseudo-terminal")
def test_ctrl_c_ends_a_100_gbps_run_within_half_a_second(tmp_path):
    path = tmp_path / "fast.toml"
    path.write_text(FAST_TOML)
    # Out of slow start after 1.5 s: the link is full, millions of events per simulated second.
    code, took = interrupt_after_progress(path, settle_s=1.5)
    assert code == 130
    # The target is 100 ms; the bound leaves room for a loaded CI machine.
    assert took < 0.5, f"Ctrl-C took {took:.3f} s"


# The command line in a child that says when it is about to run it (its imports done), so that the signal
# can come at a fixed time into the run, as a user's would, before any progress has been drawn.
CHILD = """
import sys
import ccfair.cli, ccfair.runner, pandas
print("ready", flush=True)
sys.exit(ccfair.cli.main(["run", sys.argv[1], "--quiet"]))
"""


def interrupt_at(path: Path, after_s: float) -> tuple[int, float]:
    """Runs ``ccfair run PATH`` in a child, sends SIGINT ``after_s`` into the run, and returns the exit code
    and the seconds from the signal to the exit."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=default_sigint,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(after_s)
        assert proc.poll() is None, "the run ended before the signal"
        took = interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, took


def test_ctrl_c_ends_a_run_whose_work_is_the_queue_disciplines_timer_within_a_second(tmp_path):
    path = tmp_path / "timer.toml"
    path.write_text(TIMER_TOML)
    code, took = interrupt_at(path, after_s=0.5)  # within what was the first chunk
    assert code == 130
    assert took < 1.0, f"Ctrl-C took {took:.3f} s"


def test_a_child_here_receives_sigint_even_if_this_process_ignores_it():
    """The premise of the tests above: with SIGINT ignored in the parent (as a background job inherits it),
    the child still gets the default disposition back."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
        inherited = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        reset = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=default_sigint,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert inherited.stdout.strip() == "False"
    assert reset.stdout.strip() == "True"
