"""``ccfair harm``: harm from its definition (Ware et al., HotNets 2019), the verdicts, and end to end on the
quick suite: Reno against Reno passes the bar, an aggressive Cubic (initial window 100, beta 0.95, C 4)
fails it against Reno; baselines are shared across newcomers; a SIGKILLed study resumes."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ccfair
from ccfair.analysis.fairness import harm
from ccfair.studies.harm import FAIL, PASS, UNSURE, harm_from_frame, metric_verdict
from ccfair.studies.harm_plan import group_from_cc, harm_plans
from ccfair.studies.suites import load_suite
from conftest import assert_option_refused, run_cli, suite_toml
from test_sweep_crash import wait_for_done

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

AGGRESSIVE = """duration = "12s"
[link]
rate = "10Mbps"
buffer = "1bdp"
[[flows]]
cc = "reno"
rtt = "20ms"
[[flows]]
cc = "cubic"
rtt = "20ms"
initial_window = 100
cc_params = { beta = 0.95, c = 4.0 }
"""
QUICK_RUNS = {"solo": 6, "self": 12, "vs": 12}  # 2 scenarios x 3 jitters (x 2 start orders)


def ccfair_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, timeout=600, cwd=cwd)


def test_harm_definition_on_hand_made_numbers():
    assert harm(10e6, 4e6) == pytest.approx(0.6)  # throughput: 10 Mbit/s alone, 4 with the competitor
    assert harm(40.0, 100.0, more_is_better=False) == pytest.approx(0.6)  # latency 40 ms -> 100 ms


def _frame(solo: float, self_: list[float], vs: list[float]) -> pd.DataFrame:
    """Hand-made results of one scenario: throughput only (the other metrics undefined)."""
    rows = [{"role": "solo", "cell": r, "flipped": False, "throughput": solo} for r in range(len(self_))]
    for role, values in (("self", self_), ("vs", vs)):
        rows += [{"role": role, "cell": r, "flipped": False, "throughput": v} for r, v in enumerate(values)]
    frame = pd.DataFrame(rows)
    for metric in ("delay_p50", "delay_p99", "loss"):
        frame[metric] = math.nan
    return frame


def test_harm_per_scenario_from_hand_made_results():
    # Alone 10 Mbit/s; against itself 5; against the newcomer 4 (three repetitions, slightly noisy).
    frame = _frame(10e6, [5.0e6, 5.1e6, 4.9e6], [4.0e6, 4.1e6, 3.9e6])
    result = harm_from_frame(frame, [{"case": 0}], repetitions=3, tolerance=0.05)
    m = result.scenarios[0].metrics["throughput"]
    assert m.solo == 10e6
    assert m.new_harm == pytest.approx(0.6) and m.self_harm == pytest.approx(0.5)
    assert m.diff == pytest.approx(0.1) and m.diff_ci95 == pytest.approx(0.0, abs=1e-9)
    assert m.identical  # every paired difference is 0.1: the 0 width says so
    assert m.verdict == FAIL and result.verdict() == FAIL
    assert result.scenarios[0].metrics["loss"].verdict == "undefined"
    # The same harm as the incumbent's own passes; more than the tolerance with a wide spread cannot tell.
    same = harm_from_frame(_frame(10e6, [5e6, 6e6, 4e6], [5e6, 6e6, 4e6]), [{}], 3)
    assert same.verdict() == PASS
    spread = harm_from_frame(_frame(10e6, [5e6, 5e6, 5e6], [5.5e6, 3.5e6, 4.7e6]), [{}], 3)
    assert spread.scenarios[0].metrics["throughput"].verdict == UNSURE


def test_metric_verdict_needs_two_samples_to_decide():
    assert metric_verdict([0.3], 0.05)[2] == UNSURE  # one sample: no interval
    assert metric_verdict([0.3, 0.3], 0.05)[2] == FAIL
    assert metric_verdict([0.0, 0.01], 0.05)[2] == UNSURE  # t(1) makes the interval wide
    assert metric_verdict([0.0, 0.01, 0.0, 0.01], 0.05)[2] == PASS


def test_the_harm_figure_numbers_each_scenario_and_its_key_names_them():
    """Two hand-made scenarios: each point carries its scenario's number, and the key under the panels says
    which scenario (as the table names it) and verdict each number is."""
    import matplotlib

    matplotlib.use("Agg")
    from ccfair.studies.figures import harm_figure
    from ccfair.studies.harm import scenario_label

    first = _frame(10e6, [5.0e6, 5.1e6, 4.9e6], [4.0e6, 4.1e6, 3.9e6])
    second = _frame(10e6, [5e6, 6e6, 4e6], [5e6, 6e6, 4e6]).assign(cell=lambda f: f["cell"] + 3)
    coordinates = [
        {"aqm": "fifo", "buffer": "1bdp", "rtt": "20ms", "flows": 1},
        {"aqm": "fq_codel", "buffer": "4bdp", "rtt": "40ms", "flows": 4},
    ]
    result = harm_from_frame(pd.concat([first, second]), coordinates, repetitions=3)
    fig = harm_figure(result, "harm of x to y")
    throughput = fig.axes[0]
    numbers = {t.get_gid(): t for t in throughput.texts}
    for s in result.scenarios:
        m = s.metrics["throughput"]
        label = numbers[f"scenario:throughput:{s.scenario + 1}"]
        assert label.get_text() == str(s.scenario + 1)
        assert label.xy == (m.self_harm, m.new_harm)  # beside its own point
    key = "\n".join(t.get_text() for t in fig.texts if str(t.get_gid()).startswith("scenario-key"))
    assert key.splitlines() == [
        f"1: {scenario_label(coordinates[0])} ({FAIL})",
        f"2: {scenario_label(coordinates[1])} ({PASS})",
    ]
    assert "fq_codel 4bdp 40ms x4" in key


def test_reno_passes_against_reno_and_aggressive_cubic_fails(tmp_path):
    out = tmp_path / "results"
    quick = ["--suite", "quick", "--out", str(out), "--json"]
    done = ccfair_cli("harm", "reno", "--against", "reno", *quick, "--figure", str(tmp_path / "reno.png"))
    assert done.returncode == 0, done.stderr
    reno = json.loads(done.stdout)
    assert reno["verdict"] == PASS and reno["counts"][PASS] == 2
    for s in reno["scenarios"]:
        tput = s["metrics"]["throughput"]
        assert 0.4 < tput["self_harm"] < 0.6  # two equal flows: each gets about half of what one got
        # The newcomer's runs are the incumbent-against-itself runs under another label: the same numbers.
        assert tput["diff"] == 0.0 and tput["identical"]
    assert (tmp_path / "reno.png").stat().st_size > 10_000
    # The same incumbent, an aggressive newcomer: only the newcomer's 12 runs are new.
    scenario = tmp_path / "aggressive.toml"
    scenario.write_text(AGGRESSIVE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    new = ["--new", "flows[1]", "--against", "flows[0]"]
    done = ccfair_cli("harm", str(scenario), *new, *quick, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    # Without --figure the figure goes into the results directory, named after the study's vs plan, and
    # nothing into the current directory.
    assert not list(elsewhere.iterdir())
    (figure,) = out.glob("harm-quick-reno-*-vs-cubic-*.png")
    assert figure.stat().st_size > 10_000 and f"figure: {figure}" in done.stderr
    aggressive = json.loads(done.stdout)
    assert aggressive["verdict"] == FAIL and aggressive["counts"][FAIL] == 2
    for s in aggressive["scenarios"]:
        tput = s["metrics"]["throughput"]
        assert tput["new_harm"] > tput["self_harm"] + 0.2 and tput["verdict"] == FAIL
    assert "12 run now" in done.stderr and "6 runs, 6 done before, 0 run now" in done.stderr
    runs = ccfair.load(out).runs
    # Two newcomers, one baseline: solo and self once, each newcomer's own runs.
    assert len(runs) == QUICK_RUNS["solo"] + QUICK_RUNS["self"] + 2 * QUICK_RUNS["vs"]
    assert (runs["status"] == "done").all()
    # The dry run now finds everything stored.
    dry = ccfair_cli("harm", "reno", "--against", "reno", "--suite", "quick", "--out", str(out), "--dry-run")
    assert dry.returncode == 0 and "total: 30 distinct runs, 30 done, 0 to run" in dry.stdout
    report = ccfair_cli("report", str(out), "-o", str(tmp_path / "r.html"), "--quiet")
    assert report.returncode == 0, report.stderr
    assert 'id="harm-table-' in (tmp_path / "r.html").read_text()


def test_plans_share_baselines_across_newcomers():
    suite = load_suite("quick")
    reno = group_from_cc("reno", "--against")
    a = harm_plans(suite, reno, group_from_cc("bbr", "NEWCOMER"))
    b = harm_plans(suite, reno, group_from_cc("cubic", "NEWCOMER"))
    assert a.solo == b.solo and a.self_ == b.self_ and a.vs.name != b.vs.name


# The quick suite at 1 Gbit/s and 30 s: the same 30 runs, each long enough (about a second) that the study
# is still running when the kill comes, however fast the machine (the 10 Mbit/s suite ends in seconds, and a
# sweep's status file is written at most every half second).
SLOW_QUICK = suite_toml(
    name="slow-quick",
    duration="30s",
    measure_start="3s",
    rate="1Gbps",
    buffers=["1bdp", "4bdp"],
    repetitions=3,
    stagger="1s",
    start_jitter="15ms",
    seed=1,
)


def test_harm_resumes_after_sigkill(tmp_path):
    out = tmp_path / "results"
    suite = tmp_path / "slow-quick.toml"
    suite.write_text(SLOW_QUICK)
    args = [
        sys.executable,
        "-m",
        "ccfair",
        "harm",
        "cubic",
        "--against",
        "reno",
        "--suite",
        str(suite),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--quiet",
        "--figure",
        "-",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_done(out, 3)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    time.sleep(0.5)  # orphaned workers notice their sweep is gone
    before = ccfair.load(out).runs
    kept = set(before.loc[before["status"] == "done", "run_id"])
    assert 3 <= len(kept) < sum(QUICK_RUNS.values())
    done = subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    after = ccfair.load(out).runs
    assert len(after) == sum(QUICK_RUNS.values()) and after["run_id"].is_unique
    assert (after["status"] == "done").all()
    # Runs finished before the kill were kept, not run again.
    assert set(after.loc[after["run_id"].isin(kept), "committed_at"]) == set(
        before.loc[before["run_id"].isin(kept), "committed_at"]
    )
    assert json.loads(done.stdout)["verdict"] in (PASS, FAIL, UNSURE)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["harm", "nosuchcc", "--against", "reno"], "NEWCOMER"),
        (["harm", "reno", "--against", "nosuchcc"], "--against"),
        (["harm", "reno", "--against", "cubic", "--suite", "nosuchsuite"], "--suite"),
        (["harm", "reno", "--against", "cubic", "--new", "flows[1]"], "--new"),
        (["harm", "reno", "--against", "cubic", "--figure", "x.txt"], "--figure"),
    ],
)
def test_bad_input_names_the_option(tmp_path, args, field):
    assert_option_refused(args, field, tmp_path)


def test_a_directory_ccfair_did_not_write_is_refused(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    done = ccfair_cli(
        "harm", "reno", "--against", "cubic", "--suite", "quick", "--out", str(tmp_path / "mine")
    )
    assert done.returncode == 2 and "error: --out" in done.stderr
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_suite_errors_name_the_suite_field(tmp_path):
    bad = tmp_path / "s.toml"
    bad.write_text('duration = "10s"\nmeasure_start = "1s"\nrate = "10Mbps"\nbuffers = []\n')
    done = ccfair_cli("harm", "reno", "--against", "cubic", "--suite", str(bad), "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and "error: suite.buffers" in done.stderr, done.stderr
