"""Refusing up front what cannot finish: the estimate of a run's memory and events, the limits, the refusal
on the command line and in sweeps, and how the estimate compares with the memory runs really take."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ccfair
from ccfair.errors import InputError
from ccfair.resources import Limits, available_memory_bytes, limits, parse_events_limit
from ccfair.scenario import Scenario
from ccfair.sweep.task import RunTask, run_task
from conftest import CUBIC_20MS, plan_toml, run_cli, small

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

GIB = 2**30


def scenario_toml(
    rate: str = "10Mbps",
    duration: str = "10s",
    interval: str | None = None,
    count: int = 1,
    initial_window: int | None = None,
    host: str | None = None,
) -> str:
    lines = [f'duration = "{duration}"']
    if interval is not None:
        lines.append(f'interval = "{interval}"')
    lines += ["[link]", f'rate = "{rate}"', 'buffer = "1bdp"', "[[flows]]", 'cc = "cubic"', 'rtt = "50ms"']
    lines.append(f"count = {count}")
    if initial_window is not None:
        lines.append(f"initial_window = {initial_window}")
    if host is not None:
        lines += ["[host]", f'preset = "{host}"']
    return "\n".join(lines) + "\n"


# Each of these was accepted and then aborted the process ("memory allocation failed") or would have
# taken the machine. The memory limit is explicit so that the outcome does not depend on this machine.
REFUSED = [
    (
        "initial window of 2^32 - 1",
        scenario_toml(initial_window=2**32 - 1),
        "flows[0].initial_window",
        "741523",
    ),
    ("initial window of 3e7", scenario_toml(initial_window=30_000_000), "flows[0].initial_window", "Linux"),
    ("a million flows", scenario_toml(count=1_000_000), "flows[0].count", "estimated"),
    # On ideal hosts nothing but the link bounds the window (the default hosts' receive window holds one
    # flow to tcp_rmem[2], about 20 MiB in flight, which fits).
    (
        "10 Tbps",
        scenario_toml(rate="10Tbps", duration="60s", host="ideal"),
        "link.rate",
        "segments in flight",
    ),
    ("1 us interval", scenario_toml(duration="60s", interval="1us", count=10), "interval", "time series"),
    ("2^64 - 1 ns", scenario_toml(duration="18446744073709551615ns"), "duration", "estimated"),
]


@pytest.mark.parametrize("toml", [c[1] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_absurd_scenarios_are_refused_naming_the_field(tmp_path, toml):
    field, words = next((c[2], c[3]) for c in REFUSED if c[1] == toml)
    path = tmp_path / "s.toml"
    path.write_text(toml)
    out = tmp_path / "out"
    started = time.monotonic()
    result = run_cli("run", str(path), "--out", str(out), "--max-memory", "8GiB")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {field}: "), result.stderr
    assert words in result.stderr
    if "estimated" in result.stderr:
        assert "limit of 8.0 GiB (--max-memory)" in result.stderr or "limit of 1e+11" in result.stderr
    assert result.stdout == "" and not out.exists()
    assert time.monotonic() - started < 30  # refused before anything big was allocated


def test_memory_limit_from_the_environment_and_lifted(tmp_path, monkeypatch):
    path = tmp_path / "s.toml"
    path.write_text(scenario_toml(duration="2s"))
    monkeypatch.setenv("CCFAIR_MAX_MEMORY", "1MB")
    result = run_cli("run", str(path), "--quiet")
    assert result.returncode == 2
    assert "limit of 976.6 KiB (CCFAIR_MAX_MEMORY)" in result.stderr, result.stderr
    # The option wins over the environment; "none" lifts the limit.
    assert run_cli("run", str(path), "--quiet", "--max-memory", "none").returncode == 0


def test_events_limit(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(scenario_toml(duration="10s"))
    result = run_cli("run", str(path), "--quiet", "--max-events", "1e4")
    assert result.returncode == 2
    assert result.stderr.startswith("error: duration: the run needs an estimated "), result.stderr
    assert "simulator events" in result.stderr and "limit of 10000 (--max-events)" in result.stderr


@pytest.mark.parametrize(
    ("option", "value"), [("--max-memory", "lots"), ("--max-events", "-3"), ("--max-events", "many")]
)
def test_bad_limit_values_are_usage_errors(small_toml, option, value):
    result = run_cli("run", str(small_toml), option, value)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {option}: "), result.stderr


def test_limits_from_the_machine():
    available = available_memory_bytes()
    assert available is not None and available > 0  # Linux: /proc/meminfo
    one = limits(environ={})
    two = limits(workers=2, environ={})
    assert one.max_memory_bytes is not None and two.max_memory_bytes is not None
    assert one.max_memory_bytes <= available
    assert two.max_memory_bytes == pytest.approx(one.max_memory_bytes / 2, rel=0.2)
    assert limits(machine_memory=False, environ={}).max_memory_bytes is None
    assert one.max_events == 10**11
    assert parse_events_limit("none", "--max-events") is None
    assert limits("none", "none", environ={}) == Limits(None, None, "--max-memory", "--max-events")


def test_python_api_refuses_before_running():
    with pytest.raises(InputError) as err:
        ccfair.run(small(), limits=Limits(max_memory_bytes=1000, max_events=None))
    assert err.value.field in {"duration", "link.rate", "flows[0].count", "link.buffer"}
    assert "1000 B" in err.value.message
    with pytest.raises(InputError) as err:
        ccfair.run(small(), limits=Limits(max_memory_bytes=None, max_events=10))
    assert err.value.field == "duration"
    assert ccfair.run(small(), limits=Limits(None, None)).summary["events"] > 0


# --------------------------------------------------------------------------------- the estimate, measured

# The peak RSS of this process image (VmHWM; getrusage's maximum would carry over the parent's, as it
# survives fork and exec), from after the imports a run needs (the limit is checked after them too).
MEASURE = """
import json, re, sys
import ccfair, ccfair.runner
from ccfair.scenario import Scenario

def peak_rss_bytes():
    with open("/proc/self/status") as f:
        return int(re.search(r"^VmHWM:\\s+(\\d+) kB", f.read(), re.MULTILINE).group(1)) * 1024

sc = Scenario.from_dict(json.loads(sys.argv[1]))
_, estimate = sc.resolve_estimated()
base = peak_rss_bytes()
result = ccfair.run(sc)
print(json.dumps({"estimate": estimate.peak_memory_bytes, "measured": peak_rss_bytes() - base,
                  "events": result.summary["events"], "estimated_events": estimate.events}))
"""

MEASURED = {
    "20,000 flows": {
        "duration": "2s",
        "link": {"rate": "1Gbps", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "20ms", "count": 20000}],
    },
    "a million rows": {
        "duration": "100s",
        "interval": "1ms",
        "link": {"rate": "1Mbps", "buffer": "10pkt"},
        "flows": [{"cc": "reno", "rtt": "50ms", "count": 10}],
    },
    "a deep window in flight": {
        "duration": "3s",
        "link": {"rate": "10Gbps", "buffer": "2bdp"},
        "flows": [{"cc": "reno", "rtt": "100ms", "count": 2}],
    },
    "a deep window in flight, no receive window": {
        "duration": "3s",
        "link": {"rate": "10Gbps", "buffer": "2bdp"},
        "flows": [{"cc": "reno", "rtt": "100ms", "count": 2}],
        "host": {"preset": "ideal"},
    },
    "a large first flight": {
        "duration": "1s",
        "link": {"rate": "1Gbps", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "50ms", "count": 10, "initial_window": 100000}],
    },
}


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
@pytest.mark.parametrize("name", list(MEASURED))
def test_estimated_memory_is_within_the_measured_peak_and_three_times_it(name):
    """Peak RSS of a fresh process (after its imports) against the estimate: never much below (a refusal
    must not let through what aborts), and not so far above that it refuses what fits."""
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(MEASURED[name])],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    m = json.loads(result.stdout)
    ratio = m["estimate"] / m["measured"]
    assert 0.8 <= ratio <= 3.0, m
    assert 0.5 <= m["estimated_events"] / m["events"] <= 2.0, m


# ------------------------------------------------------------------------------------------------- sweeps

PLAN = plan_toml({"link.rate": ["10Mbps", "10Tbps"]}, [CUBIC_20MS], host={"preset": "ideal"}, repetitions=2)


def test_sweep_dry_run_shows_estimates_and_refuses_cells_that_cannot_fit(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    out = tmp_path / "results"
    refused = run_cli("sweep", str(plan), "--out", str(out), "--dry-run", "--max-memory", "1GB")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: link.rate: the run needs an estimated "), refused.stderr
    assert '(in cell 1: link.rate = "10Tbps")' in refused.stderr
    skipped = run_cli(
        "sweep", str(plan), "--out", str(out), "--dry-run", "--max-memory", "1GB", "--skip-invalid"
    )
    assert skipped.returncode == 0, skipped.stderr
    lines = skipped.stdout.splitlines()
    assert lines[0].startswith("plan plan: 2 cells, 4 runs (1 invalid cells, recorded as failed)")
    assert lines[1].startswith("limits per run: memory 953.7 MiB (--max-memory), events 1e+11 (the default)")
    assert lines[2].startswith("estimates per run: peak memory up to ")
    assert 'cell 0: link.rate = "10Mbps"' in lines[2]
    assert lines[3].startswith("estimates of the 2 runs to do: ")
    assert not out.exists()
    fits = run_cli("sweep", str(plan), "--out", str(out), "--dry-run", "--max-memory", "none")
    assert fits.returncode == 0
    assert "estimates of the 4 runs to do" in fits.stdout


def test_a_sweeps_time_limit_stops_a_long_run_promptly():
    scenario = Scenario.from_dict(
        {
            "duration": "600s",
            "link": {"rate": "100Gbps", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "rtt": "10ms"}],
        }
    ).to_dict()
    started = time.monotonic()
    outcome = run_task(RunTask("x", {**scenario, "seed": 1}, 1, time_limit_s=1.0))
    took = time.monotonic() - started
    assert outcome.status == "failed" and outcome.error_kind == "timeout", outcome.error
    assert took < 1.0 + 0.5, took  # the limit, plus at most one chunk and the time to set up


def test_run_task_keeps_to_the_limits_it_is_given():
    scenario = {**small(), "seed": 1}
    outcome = run_task(RunTask("y", scenario, 1, limits=Limits(max_memory_bytes=1000, max_events=None)))
    assert outcome.status == "failed" and outcome.error_kind == "invalid"
    assert "estimated" in (outcome.error or "")


def test_flow_count_above_the_event_codes_names_the_group(tmp_path):
    path = tmp_path / "s.toml"
    text = scenario_toml(count=2**19) + '[[flows]]\ncc = "reno"\nrtt = "50ms"\ncount = 524289\n'
    path.write_text(text)
    result = run_cli("run", str(path))
    assert result.returncode == 2
    assert result.stderr.startswith("error: flows[1].count: at most 1048576 flows"), result.stderr


def test_estimate_of_the_default_scenario_is_small():
    _, estimate = Scenario.from_toml(
        Path(__file__).parents[1] / "scenarios" / "default.toml"
    ).resolve_estimated()
    assert estimate.peak_memory_bytes < GIB
    assert estimate.events < 10**9
    assert [p.field for p in estimate.memory] and estimate.memory == tuple(
        sorted(estimate.memory, key=lambda p: -p.amount)
    )


# A million flows for 100 ms at 10 Mbit/s: an estimated 4.5 GiB. Under `ulimit -v 4194304` it aborted with
# SIGABRT ("memory allocation of 1280 bytes failed") after 22 s: the estimate passed the default limit, which
# did not read RLIMIT_AS.
MILLION = scenario_toml(rate="10Mbps", duration="100ms", count=1_000_000)
ADDRESS_SPACE = 4 * GIB


def run_under_address_space_limit(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, resource.RLIM_INFINITY))

    return subprocess.run(
        [sys.executable, "-m", "ccfair", "run", str(path), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=limit,
    )


def test_the_default_memory_limit_reads_the_address_space_limit(tmp_path):
    path = tmp_path / "million.toml"
    path.write_text(MILLION)
    started = time.monotonic()
    done = run_under_address_space_limit(path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: flows[0].count: the run needs an estimated"), done.stderr
    assert "RLIMIT_AS (ulimit -v)" in done.stderr
    assert time.monotonic() - started < 60


def test_a_run_the_address_space_cannot_hold_is_an_error_not_an_abort(tmp_path):
    """With the limits lifted, the simulator itself finds the address space too small, before the flows are
    built: an error naming the field that drives the size, exit code 2."""
    path = tmp_path / "million.toml"
    path.write_text(MILLION)
    done = run_under_address_space_limit(path, "--max-memory", "none")
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith("error: flows[0].count: the memory for"), done.stderr
    assert "allocator refused" in done.stderr


def test_process_limits_bound_the_default_memory_limit(monkeypatch):
    """An address-space limit tighter than the machine's memory is the default limit (80 % of the room left
    under it), and is not shared among workers: each worker process has it whole."""
    import ccfair.resources as res

    real = resource.getrlimit
    soft = res._status_bytes("VmSize") + GIB  # 1 GiB of room: less than this machine's memory

    def fake(which: int) -> tuple[int, int]:
        return (soft, resource.RLIM_INFINITY) if which == resource.RLIMIT_AS else real(which)

    monkeypatch.setattr(res.resource, "getrlimit", fake)
    one, eight = limits(environ={}, workers=1), limits(environ={}, workers=8)
    assert one.max_memory_bytes == pytest.approx(0.8 * GIB, rel=0.05)
    assert eight.max_memory_bytes == pytest.approx(one.max_memory_bytes, rel=0.05)
    assert one.memory_source == "80% of the room left under RLIMIT_AS (ulimit -v)"
