"""Repetitions that vary and repetitions that do not: a Cubic-against-Reno drop-tail plan with ideal hosts
(``[host] preset = "ideal"``) is deterministic, so its three repetitions per cell are one run three times
over, and the sweep, ``status``, and the report say so; the same plan with the default hosts varies and
nothing is said. The test of identical repetitions is exact, not a tolerance."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from ccfair.analysis.stats import IDENTICAL_NOTE, identical, interval_note
from ccfair.store.repetitions import identical_note
from ccfair.store.status import store_status
from ccfair.store.writer import StoreWriter
from ccfair.sweep.driver import plan_runs
from ccfair.sweep.plan import load_plan
from conftest import CUBIC_20MS, RENO_20MS, plan_toml, run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def variance_plan(name: str, host: dict[str, str] | None) -> str:
    """Cubic and Reno over two buffers, three repetitions, on ``host`` (None: the default hosts)."""
    return plan_toml(
        {"link.buffer": ["0.5bdp", "1bdp"]},
        [CUBIC_20MS, RENO_20MS],
        duration="3s",
        name=name,
        repetitions=3,
        link={"rate": "10Mbps", "buffer": "1bdp", "aqm": "fifo"},
        host=host,
    )


IDEAL = {"preset": "ideal"}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Both plans swept into one results directory; the sweeps' stderr per plan."""
    root = tmp_path_factory.mktemp("variance")
    out = root / "results"
    notes = {}
    for name, host in (("ideal", IDEAL), ("testbed", None)):
        plan = root / f"{name}.toml"
        plan.write_text(variance_plan(name, host))
        done = run_cli("sweep", str(plan), "--out", str(out), "--jobs", "2")
        assert done.returncode == 0, done.stderr
        notes[name] = done.stderr
    return out, notes


def test_identical_is_exact_and_needs_two_runs() -> None:
    assert identical([(5, 7), (5, 7), (5, 7)])
    assert not identical([(5, 7), (5, 7), (5, 8)])
    assert not identical([(5, 7)])  # one run is no repetition
    assert not identical([0.3, 0.3 + 1e-15])  # no tolerance
    assert identical([0.3, 0.3])


def test_the_note_on_identical_cells_claims_nothing_of_the_plan() -> None:
    # A plan may set a random loss too small to drop a packet in a run (buffer-sizing's 0.00001): the note
    # must not tell its reader the plan has no random loss.
    note = identical_note("p", 3, [(0, False)])
    assert note is not None and "no random loss" not in note
    assert "a small loss probability may drop no packet in a run" in note


def test_a_deterministic_plan_is_reported_identical_and_a_testbed_plan_is_not(swept) -> None:
    out, notes = swept
    assert "note: plan ideal: 2 of 2 repeated cells gave identical repetitions" in notes["ideal"]
    assert 'the default hosts (no preset = "ideal" in [host])' in notes["ideal"]
    assert "identical repetitions" not in notes["testbed"]
    status = run_cli("status", str(out), "--json")
    assert status.returncode == 0, status.stderr
    plans = {p["plan"]: p for p in json.loads(status.stdout)["plans"]}
    assert plans["ideal"]["cells_repeated"] == 2
    assert plans["ideal"]["cells_identical"] == [
        {"cell": 0, "flipped": False},
        {"cell": 1, "flipped": False},
    ]
    assert plans["testbed"]["cells_repeated"] == 2 and plans["testbed"]["cells_identical"] == []
    text = run_cli("status", str(out))
    assert "note: plan ideal: 2 of 2" in text.stdout and "plan testbed:" not in text.stdout


def test_the_testbed_runs_differ_in_their_delivered_bytes(swept) -> None:
    out, _ = swept
    done = run_cli(
        "query",
        str(out),
        "select r.plan, r.cell, count(distinct f.total_delivered_bytes) as outcomes from runs r "
        "join flows f using (run_id) where f.flow_id = 0 group by 1, 2 order by 1, 2",
        "--json",
    )
    rows = {(r["plan"], r["cell"]): r["outcomes"] for r in json.loads(done.stdout)}
    assert rows == {("ideal", 0): 1, ("ideal", 1): 1, ("testbed", 0): 3, ("testbed", 1): 3}


def _cells_table(page: str, plan: str) -> list[dict[str, str]]:
    table = re.search(rf'<table id="cells-{plan}".*?</table>', page, re.S)
    assert table is not None
    cells = [
        [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<t[hd][^>]*>.*?</t[hd]>", r, re.S)
        ]
        for r in re.findall(r"<tr>.*?</tr>", table.group(0), re.S)
    ]
    return [dict(zip(cells[0], row, strict=True)) for row in cells[1:]]


def test_the_report_marks_the_identical_cells(swept, tmp_path: Path) -> None:
    out, _ = swept
    target = tmp_path / "report.html"
    done = run_cli("report", str(out), "-o", str(target), "--quiet")
    assert done.returncode == 0, done.stderr
    page = target.read_text()
    assert [r["repetitions"] for r in _cells_table(page, "ideal")] == ["identical", "identical"]
    assert [r["repetitions"] for r in _cells_table(page, "testbed")] == ["vary", "vary"]
    assert "2 of 2 cells with several done runs gave identical repetitions" in html.unescape(page)


def test_figure_notes_name_identical_points() -> None:
    assert IDENTICAL_NOTE in interval_note(["identical", "range"])
    assert IDENTICAL_NOTE not in interval_note(["range", "ci95"])


def test_compare_keeps_each_runs_delivered_bytes_and_says_when_the_simulator_repeated_itself() -> None:
    import ccfair
    from ccfair.emu import compare

    scenario = ccfair.Scenario.from_dict(
        {
            "duration": "2s",
            "link": {"rate": "10Mbps", "buffer": "1bdp"},
            "host": {"preset": "ideal"},
            "flows": [{"cc": "reno", "rtt": "20ms"}, {"cc": "cubic", "rtt": "20ms"}],
        }
    )
    outcomes = [compare.outcome_of(ccfair.run(scenario, seed=s)) for s in (1, 2)]
    assert len(outcomes[0]) == 2 and all(b > 0 for b in outcomes[0])
    assert identical(outcomes)
    assert "repetitions are identical" in compare.identical_line(2, identical(outcomes))
    assert "differ" in compare.identical_line(2, False)
    assert "one run" in compare.identical_line(1, False)


def test_compare_says_how_much_longer_the_kernels_loop_was_than_the_configured_path() -> None:
    from ccfair.emu import compare

    summary = {
        "emulator_lateness_p50_ns": 20e3,
        "host_receiver_turnaround_p50_ns": 30e3,
        "host_sender_turnaround_p50_ns": 25e3,
    }
    assert compare.kernel_loop_ns(summary) == 95e3
    # Every flow paces: the receiver's turnaround stands in for the sender's.
    assert compare.kernel_loop_ns({**summary, "host_sender_turnaround_p50_ns": None}) == 100e3
    # A run from before the emulator timed the hosts: not known, and not said.
    old = {"emulator_lateness_p50_ns": 20e3}
    assert compare.loop_line([compare.kernel_loop_ns(old)]) is None
    line = compare.loop_line([95e3, 105e3, float("nan")])
    assert line is not None and "100 us longer than the configured RTT" in line


def test_status_of_a_plan_with_no_finished_run_yet(tmp_path: Path) -> None:
    """A sweep's plan is stored before its first run finishes; until then the catalog has no flows table,
    and ``status`` (which a user runs while a sweep starts, or after it was killed early) must still work."""
    path = tmp_path / "early.toml"
    path.write_text(variance_plan("early", None))
    plan, runs = plan_runs(load_plan(path))
    out = tmp_path / "results"
    with StoreWriter(out) as writer:
        writer.register_plan(plan, runs)
    (entry,) = store_status(out)["plans"]
    assert (entry["plan"], entry["done"]) == ("early", 0)
    assert (entry["cells_repeated"], entry["cells_identical"]) == (0, [])
    done = run_cli("status", str(out))
    assert done.returncode == 0, done.stderr
