"""``ccfair advise``: the Pareto front and the recommendation on a small search space recover the known answer
that per-flow fair queuing (FQ-CoDel, RFC 8290: each flow its own queue, served round robin) gives the
fairest sharing between BBR and Cubic, where a shared queue (tail drop or CoDel) lets BBR take most of the
link; an impossible constraint yields "no configuration meets" and the closest one."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ccfair
from ccfair.studies.advise import Config, advise, pareto_front
from conftest import assert_option_refused, run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

SEARCH = [
    "--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1,bbr:1", "--aqms", "fifo,codel,fq_codel",
    "--buffers", "1bdp,4bdp", "--duration", "10s", "--figure", "-", "--json", "--quiet",
]  # fmt: skip
SEARCH_RUNS = 10  # fifo 1 + codel 2 + fq_codel 2 variants, x 2 buffers, x 1 RTT


def advise_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("advise", *args, timeout=600, cwd=cwd)


def report_html(results: Path, path: Path) -> str:
    """The text of ``ccfair report RESULTS -o PATH``."""
    done = run_cli("report", str(results), "-o", str(path), "--quiet", timeout=600)
    assert done.returncode == 0, done.stderr
    return path.read_text()


def _config(name: str, jain: float, rel: float, delay: float, util: float) -> Config:
    return Config(name, {"name": name}, "1bdp", jain, rel, delay, util, 1)


def test_pareto_front_and_choice_on_hand_made_configurations():
    a = _config("a", 0.99, 0.9, 20.0, 0.95)
    b = _config("b", 0.80, 0.5, 5.0, 0.99)
    c = _config("c", 0.79, 0.5, 6.0, 0.98)  # worse than b in every respect
    assert {x.name for x in pareto_front([a, b, c])} == {"a", "b"}
    chosen = advise([a, b, c], min_jain=0.75, max_delay_ms=10.0, min_util=None)
    assert chosen.recommended is b and chosen.margins["delay_p99_ms"] == pytest.approx(5.0)
    assert chosen.margins["jain"] == pytest.approx(0.05)
    none = advise([a, b, c], min_jain=0.95, max_delay_ms=10.0, min_util=None)
    assert none.recommended is None and none.closest is not None


def test_fq_codel_is_the_fairest_for_bbr_and_cubic(tmp_path):
    out = tmp_path / "results"
    done = advise_cli(*SEARCH, "--min-jain", "0.9", "--out", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["meets"] and result["recommended"]["aqm"]["name"] == "fq_codel"
    by_name = {c["name"]: c for c in result["configurations"]}
    assert len(by_name) == SEARCH_RUNS
    fairest_other = max(c["jain"] for c in by_name.values() if c["aqm"]["name"] != "fq_codel")
    for c in by_name.values():
        if c["aqm"]["name"] == "fq_codel":
            assert c["jain"] > 0.95 and c["jain"] > fairest_other
    # An impossible constraint: nothing meets it, the closest is named; every run is reused.
    done = advise_cli(*SEARCH, "--max-delay", "1us", "--out", str(out))
    assert done.returncode == 0, done.stderr
    impossible = json.loads(done.stdout)
    assert not impossible["meets"] and impossible["recommended"] is None
    assert impossible["closest"] is not None and impossible["shortfalls"]["delay_p99"] > 0
    assert len(ccfair.load(out).runs) == SEARCH_RUNS
    text = advise_cli(*[a for a in SEARCH if a != "--json"], "--max-delay", "1us", "--out", str(out))
    assert "no configuration meets the constraints; closest:" in text.stdout
    html = report_html(out, tmp_path / "r.html")
    assert 'id="advise-front-' in html
    # The report advises under the constraints of the last search, kept in the plan's definition.
    assert "--max-delay 0.001ms" in html and "no configuration meets the constraints; closest:" in html
    assert advise_cli(*SEARCH, "--min-jain", "0.9", "--out", str(out)).returncode == 0
    html = report_html(out, tmp_path / "r.html")
    assert "--min-jain 0.9" in html and "--max-delay" not in html
    assert "recommended: fq_codel" in html


@pytest.mark.parametrize("name", ["advise-mine", "harm-x-vs-y"])
def test_a_plain_plan_named_like_a_study_gets_the_plain_report(tmp_path, name):
    """Plan names are the user's (and a results directory may come from anyone): a plan called like a study
    whose definition lacks a study's axes is reported as a plain plan, not a traceback."""
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'name = "{name}"\nrepetitions = 1\n[scenario]\nduration = "2s"\n'
        '[scenario.link]\nrate = "10Mbps"\nbuffer = "1bdp"\n'
        '[[scenario.flows]]\ncc = "cubic"\nrtt = "20ms"\n'
        '[grid]\n"link.buffer" = ["1bdp", "2bdp"]\n'
    )
    out = tmp_path / "res"
    cli = [sys.executable, "-m", "ccfair"]
    sweep = subprocess.run(
        [*cli, "sweep", str(plan), "--out", str(out), "--quiet"], capture_output=True, text=True
    )
    assert sweep.returncode == 0, sweep.stderr
    page = report_html(out, tmp_path / "r.html")
    assert name in page and 'id="advise-front-' not in page and 'id="harm-table-' not in page


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:x"], "--mix"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "nosuchcc:1"], "--mix"),
        (["--rate", "fast", "--rtt", "20ms", "--mix", "cubic:1"], "--rate"),
        (["--rate", "10Mbps", "--rtt", "20ms,20ms", "--mix", "cubic:1"], "--rtt"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1", "--aqms", "wfq"], "--aqms"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1", "--min-jain", "1.5"], "--min-jain"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1", "--max-delay", "soon"], "--max-delay"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1", "--buffers", "lots"], "--buffers"),
        # Digits other than ASCII ones: superscript two (not decimal), Arabic-Indic one (decimal to Python).
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:\u00b2"], "--mix"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:\u0661"], "--mix"),
        (["--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1_0"], "--mix"),
    ],
)
def test_bad_input_names_the_option(tmp_path, args, field):
    assert_option_refused(["advise", *args], field, tmp_path)


def test_dry_run_counts_the_search(tmp_path):
    done = advise_cli(*[a for a in SEARCH if a != "--json"], "--out", str(tmp_path / "r"), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"total: {SEARCH_RUNS} distinct runs, 0 done, {SEARCH_RUNS} to run" in done.stdout
    assert not (tmp_path / "r").exists()


def test_the_default_search_fits_a_small_bandwidth_delay_product(tmp_path):
    """At 10 Mbit/s and 20 ms a 0.5 BDP buffer is 8 packets, too small for tc's default RED thresholds: the
    default search still validates every cell (RED takes the smallest thresholds tc's rules admit)."""
    done = advise_cli(
        "--rate", "10Mbps", "--rtt", "20ms", "--mix", "cubic:1", "--out", str(tmp_path / "a1"), "--dry-run"
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "to run" in done.stdout
